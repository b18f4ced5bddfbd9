//! Block maps: where each file's data lives on disk.
//!
//! - [`fiemap`]: the FS_IOC_FIEMAP ioctl on one open file (no `filefrag` spawned);
//! - [`walk`]: a parallel walk of a path or a tree of a mounted filesystem → [`walk::BlockMap`];
//! - [`debugfs`]: the same rows for an unmounted ext2/3/4 image, through one `debugfs`
//!   process → [`debugfs::ImageMap`];
//! - [`summary`]: per-file and per-filesystem fragmentation derived from the rows.
//!
//! Every source yields [`Extent`] rows (the `extents` table); see [`Extent`] for the flags.

pub mod debugfs;
mod extent;
pub mod fiemap;
pub mod summary;
pub mod walk;

pub use extent::Extent;

use serde::Serialize;
use std::path::PathBuf;

/// A file or directory that was mapped (it may have no extents: empty files).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct FileEntry {
    pub path: String,
    pub inode: Option<u64>,
    pub size_bytes: Option<u64>,
    pub is_dir: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum BlockmapError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: FIEMAP: {source}")]
    Fiemap {
        path: PathBuf,
        #[source]
        source: nix::Error,
    },
    #[error("{image}: not an ext2/3/4 image: {reason}")]
    NotExt { image: PathBuf, reason: String },
    #[error("debugfs on {image}: {message}")]
    Debugfs { image: PathBuf, message: String },
    #[error("thread pool: {0}")]
    Threads(String),
    #[error(transparent)]
    Parse(#[from] crate::parse::ParseError),
    #[error(transparent)]
    Frame(#[from] crate::frames::FrameError),
}

/// Extent rows as a DataFrame: columns `path, inode, index, logical_bytes, physical_bytes,
/// length_bytes, flags` (see [`crate::frames::from_records`] for the typing).
pub fn extents_frame(extents: &[Extent]) -> Result<polars::prelude::DataFrame, BlockmapError> {
    Ok(crate::frames::from_records(extents)?)
}
