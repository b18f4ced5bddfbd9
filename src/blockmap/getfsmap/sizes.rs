//! Inode sizes, in words: where the GETFSMAP walk is to read them ([`Sizes`]), where they
//! came from ([`SizesRead`]) and why not from the device ([`NoDevice`]).

use crate::blockmap::xfs_disk;
use std::path::PathBuf;

/// Where the GETFSMAP walk reads each inode's size (the frame's `size_bytes` and `eof`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sizes {
    /// `XFS_IOC_BULKSTAT`: the kernel instantiates every inode (CPU-bound: `xfs_iget`
    /// and an inode-btree lookup per inode).
    Bulkstat,
    /// The inode cores read from the filesystem's block device (`O_DIRECT`) and checked
    /// (CRC32C, inode number, UUID), after a freeze-and-thaw barrier that writes every
    /// logged inode back in place ([`crate::devices::freeze`]): no `xfs_iget`, I/O-bound.
    /// An inode whose core fails a check gets its size from `stat` instead, counted.
    Device,
    /// `device` on an XFS on a loop device (a test filesystem, where the barrier's short
    /// stall of writers troubles nobody else), else `bulkstat`; the choice and why are
    /// said.
    Auto,
}

/// A `--sizes-from` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a source of inode sizes: bulkstat, device or auto")]
pub struct UnknownSizes(pub Box<str>);

impl std::str::FromStr for Sizes {
    type Err = UnknownSizes;

    fn from_str(s: &str) -> Result<Self, UnknownSizes> {
        match s {
            "bulkstat" => Ok(Sizes::Bulkstat),
            "device" => Ok(Sizes::Device),
            "auto" => Ok(Sizes::Auto),
            _ => Err(UnknownSizes(s.into())),
        }
    }
}

/// Why inode sizes were not (or could not be) read from the device.
#[derive(Debug, thiserror::Error)]
pub enum NoDevice {
    #[error("{0} is not a loop device (`--sizes-from device` reads any block device)")]
    NotLoop(String),
    #[error("no device node for block device {major}:{minor}: {why}")]
    Node { major: u64, minor: u64, why: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Superblock {
        path: PathBuf,
        #[source]
        source: xfs_disk::SuperblockError,
    },
    #[error("{path} is not the mounted filesystem's data device: its {what} differs")]
    Mismatch { path: PathBuf, what: &'static str },
    #[error("XFS_IOC_INUMBERS: {0}")]
    Inumbers(nix::Error),
    #[error(transparent)]
    Freeze(#[from] crate::devices::freeze::FreezeError),
}

/// Where one filesystem's inode sizes came from, to be said out loud.
#[derive(Debug)]
pub enum SizesRead {
    Device {
        device: PathBuf,
        barrier: crate::devices::freeze::Barrier,
        /// Inodes in use whose cores were read and believed.
        inodes: usize,
        /// Inodes whose cores failed a check (their sizes come from `stat`): how many,
        /// and the first few with why.
        rejected: usize,
        first_rejected: Vec<(u64, xfs_disk::DinodeError)>,
    },
    /// BULKSTAT; `why`: why not the device (None: asked for).
    Bulkstat { why: Option<NoDevice> },
}

impl std::fmt::Display for SizesRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::devices::freeze::Barrier;
        match self {
            SizesRead::Device {
                device,
                barrier,
                inodes,
                rejected,
                first_rejected,
            } => {
                write!(f, "inode sizes from {}", device.display())?;
                match barrier {
                    Barrier::Made { took } => write!(
                        f,
                        " after a freeze-and-thaw barrier of {:.1} ms",
                        took.as_secs_f64() * 1e3
                    )?,
                    Barrier::AlreadyFrozen => write!(f, " (the filesystem was frozen already)")?,
                    Barrier::Unchanged => write!(
                        f,
                        " (no barrier: nothing logged since the last one, by the log's head)"
                    )?,
                }
                write!(f, ": {inodes} inodes")?;
                if *rejected > 0 {
                    write!(f, "; {rejected} not believed, their sizes from stat (")?;
                    for (i, (ino, why)) in first_rejected.iter().enumerate() {
                        let sep = if i > 0 { ", " } else { "" };
                        write!(f, "{sep}inode {ino}: {why}")?;
                    }
                    write!(f, ")")?;
                }
                Ok(())
            }
            SizesRead::Bulkstat { why: None } => write!(f, "inode sizes from BULKSTAT"),
            SizesRead::Bulkstat { why: Some(w) } => {
                write!(f, "inode sizes from BULKSTAT (not from the device: {w})")
            }
        }
    }
}
