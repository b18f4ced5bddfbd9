//! Block maps of XFS trees through the reverse map: one `FS_IOC_GETFSMAP` stream gives
//! every extent of the filesystem with its owner inode and file offset (queried on
//! several threads, a run of allocation groups each), every inode's size comes from
//! `XFS_IOC_BULKSTAT` or from the inode cores read off the block device ([`Sizes`]), and
//! the walk of [`super::walk`] names them from `getdents` alone (inode numbers from
//! `d_ino`; one `fstat` per directory, none per file). Rows, order and frames are those of
//! the FIEMAP walk (see [`Method`] for where they can differ).
//!
//! Needs an XFS with the reverse-mapping btree (`mkfs.xfs -m rmapbt=1`) and
//! CAP_SYS_ADMIN (both ioctls). [`probe`] says whether a path qualifies, and why not.
//! Memory: the data-fork extents of every inode of the filesystem (40 bytes each) and
//! one size per inode (16 bytes), held while the tree is walked (unlike the FIEMAP walk,
//! whose memory does not grow with the number of files): `--method auto` therefore
//! keeps FIEMAP on a filesystem with more inodes in use than [`AUTO_MAX_INODES`].

use crate::blockmap::BlockmapError;
use bulkstat::read_sizes;
use device::read_sizes_from_device;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

mod bulkstat;
mod device;
mod fsmap;
mod sizes;
mod tree;

pub use sizes::{NoDevice, Sizes, SizesRead, UnknownSizes};
pub use tree::stream;

/// How a block map is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// FS_IOC_FIEMAP on every file (any filesystem that has it).
    Fiemap,
    /// FS_IOC_GETFSMAP + inode sizes ([`Sizes`]) + a getdents walk (XFS with rmapbt, as
    /// root).
    /// Differences from FIEMAP: no `delalloc` rows (the filesystem is synced first, as
    /// FIEMAP_FLAG_SYNC would); an extent the reverse map splits (at an allocation group
    /// or a record length limit) or merges differently from the data fork would be split
    /// or merged here too; `shared` is set from the reverse map's own flag.
    Getfsmap,
    /// GETFSMAP when [`probe`] allows it, else FIEMAP.
    Auto,
}

/// A `--method` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a method: fiemap, getfsmap or auto")]
pub struct UnknownMethod(pub Box<str>);

impl std::str::FromStr for Method {
    type Err = UnknownMethod;

    fn from_str(s: &str) -> Result<Self, UnknownMethod> {
        match s {
            "fiemap" => Ok(Method::Fiemap),
            "getfsmap" => Ok(Method::Getfsmap),
            "auto" => Ok(Method::Auto),
            _ => Err(UnknownMethod(s.into())),
        }
    }
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Fiemap => "fiemap",
            Method::Getfsmap => "getfsmap",
            Method::Auto => "auto",
        }
    }
}

/// statfs f_type of XFS.
const XFS_SUPER_MAGIC: i64 = 0x5846_5342;
/// `xfs_fsop_geom.flags`: the filesystem has a reverse-mapping btree.
const XFS_FSOP_GEOM_FLAGS_RMAPBT: u32 = 1 << 19;

/// `struct xfs_fsop_geom` (v5, 256 bytes): `head` is blocksize, rtextsize, agblocks,
/// agcount, logblocks, sectsize, inodesize, imaxpct.
#[repr(C)]
struct FsGeom {
    head: [u32; 8],
    blocks: [u64; 4],
    uuid: [u8; 16],
    sunit: u32,
    swidth: u32,
    version: i32,
    flags: u32,
    rest: [u8; 160],
}

nix::ioctl_read!(xfs_ioc_fsgeometry, b'X', 126, FsGeom);

/// `XFS_IOC_FSGEOMETRY` of the filesystem holding `fd`.
fn geometry(fd: &File) -> Result<FsGeom, nix::Error> {
    // SAFETY: FsGeom is plain data of the size the ioctl number encodes.
    let mut geom: FsGeom = unsafe { std::mem::zeroed() };
    unsafe { xfs_ioc_fsgeometry(fd.as_raw_fd(), &mut geom) }?;
    Ok(geom)
}

/// Why GETFSMAP cannot map a path (said out loud by `--method auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    #[error("statfs: {0}")]
    Statfs(nix::Error),
    #[error("not XFS")]
    NotXfs,
    #[error("open: {0}")]
    Open(nix::Error),
    #[error("XFS_IOC_FSGEOMETRY: {0}")]
    Geometry(nix::Error),
    #[error("XFS without the reverse-mapping btree (mkfs.xfs -m rmapbt=1)")]
    NoRmapbt,
    #[error("GETFSMAP and BULKSTAT need CAP_SYS_ADMIN")]
    NotRoot,
    #[error(
        "{inodes} inodes in use: GETFSMAP's maps (56 bytes an inode) would pass the memory \
         bound `--method auto` keeps ({limit} inodes); the FIEMAP walk's memory stays bounded \
         (`--method getfsmap` uses GETFSMAP anyway)"
    )]
    TooManyInodes { inodes: u64, limit: u64 },
}

/// The most inodes in use on a filesystem that `--method auto` maps with GETFSMAP:
/// about 224 MB of maps at one extent per inode.
pub const AUTO_MAX_INODES: u64 = 4_000_000;

/// [`probe`], and for `--method auto` also the memory bound: Ok(()) or why not.
pub fn probe_auto(path: &Path) -> Result<(), Unusable> {
    probe_within(path, AUTO_MAX_INODES)
}

/// [`probe`], and at most `max_inodes` inodes in use on the filesystem.
pub fn probe_within(path: &Path, max_inodes: u64) -> Result<(), Unusable> {
    probe(path)?;
    let st = nix::sys::statvfs::statvfs(path).map_err(Unusable::Statfs)?;
    let inodes = (st.files() as u64).saturating_sub(st.files_free() as u64);
    if inodes > max_inodes {
        return Err(Unusable::TooManyInodes {
            inodes,
            limit: max_inodes,
        });
    }
    Ok(())
}

/// Whether GETFSMAP can map `path`'s filesystem: Ok(()) or why not.
pub fn probe(path: &Path) -> Result<(), Unusable> {
    let st = nix::sys::statfs::statfs(path).map_err(Unusable::Statfs)?;
    if st.filesystem_type().0 as i64 != XFS_SUPER_MAGIC {
        return Err(Unusable::NotXfs);
    }
    let f = File::open(path).map_err(|e| {
        Unusable::Open(nix::Error::from_raw(
            e.raw_os_error().unwrap_or(nix::libc::EIO),
        ))
    })?;
    let geom = geometry(&f).map_err(Unusable::Geometry)?;
    if geom.flags & XFS_FSOP_GEOM_FLAGS_RMAPBT == 0 {
        return Err(Unusable::NoRmapbt);
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(Unusable::NotRoot);
    }
    Ok(())
}

/// A zeroed `T` on the heap, never on the stack (the requests are hundreds of KiB).
///
/// # Safety
/// All-zero bytes must be a valid `T`.
unsafe fn zeroed_box<T>() -> Box<T> {
    let layout = std::alloc::Layout::new::<T>();
    let p = std::alloc::alloc_zeroed(layout).cast::<T>();
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    Box::from_raw(p)
}

/// The sizes for the walk from the source `how` asks for; for `Auto`, BULKSTAT when the
/// device cannot be read, with why. The caller has synced the filesystem.
fn sizes_for(
    fd: &File,
    path: &Path,
    how: Sizes,
) -> Result<(Vec<(u64, u64)>, SizesRead), BlockmapError> {
    let fsmap_err = |what: &str, source: nix::Error| BlockmapError::Fsmap {
        path: path.to_path_buf(),
        what: what.to_string(),
        source,
    };
    let bulkstat = |why: Option<NoDevice>| {
        read_sizes(fd)
            .map(|s| (s, SizesRead::Bulkstat { why }))
            .map_err(|e| fsmap_err("XFS_IOC_BULKSTAT", e))
    };
    match how {
        Sizes::Bulkstat => bulkstat(None),
        Sizes::Device => {
            read_sizes_from_device(fd, path, false).map_err(|reason| BlockmapError::NoDevice {
                path: path.to_path_buf(),
                reason: Box::new(reason),
            })
        }
        Sizes::Auto => match read_sizes_from_device(fd, path, true) {
            Ok(r) => Ok(r),
            Err(why) => bulkstat(Some(why)),
        },
    }
}

/// Every inode in use on the XFS holding `path` with its size, sorted by inode number,
/// read as `how` says; and where the sizes came from.
pub fn inode_sizes_from(
    path: &Path,
    how: Sizes,
) -> Result<(Vec<(u64, u64)>, SizesRead), BlockmapError> {
    let f = File::open(path).map_err(|source| BlockmapError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    nix::unistd::syncfs(&f).map_err(|source| BlockmapError::Fsmap {
        path: path.to_path_buf(),
        what: "syncfs".into(),
        source,
    })?;
    sizes_for(&f, path, how)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_match_the_kernel() {
        assert_eq!(std::mem::size_of::<FsGeom>(), 256);
        assert_eq!(std::mem::offset_of!(FsGeom, flags), 92);
    }
}
