//! The FS_IOC_FIEMAP ioctl, in process (no `filefrag` spawned).
//!
//! [`fiemap`] asks the kernel for a file's extents in batches of [`BATCH`] until an extent
//! carries `FIEMAP_EXTENT_LAST` (the loop `filefrag` runs). [`map_file`] opens a path and
//! turns the raw extents into [`Extent`] rows exactly as `filefrag -v` prints them, so that
//! the two can be compared row by row: byte offsets, `physical_bytes = None` for
//! `unknown_loc`/`hole` extents, flags in filefrag's order and spelling, then `eof` when the
//! extent reaches the file size.

use super::{BlockmapError, Extent};
use nix::fcntl::OFlag;
use std::borrow::Cow;
use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

/// Extents asked for per ioctl call.
pub const BATCH: usize = 512;

/// `fm_flags`: sync the file before mapping it (flushes delayed allocation).
pub const FIEMAP_FLAG_SYNC: u32 = 0x0000_0001;
/// `fm_flags`: map the extended attribute tree instead of the data.
pub const FIEMAP_FLAG_XATTR: u32 = 0x0000_0002;

pub const FIEMAP_EXTENT_LAST: u32 = 0x0000_0001;
pub const FIEMAP_EXTENT_UNKNOWN: u32 = 0x0000_0002;
pub const FIEMAP_EXTENT_DELALLOC: u32 = 0x0000_0004;
pub const FIEMAP_EXTENT_ENCODED: u32 = 0x0000_0008;
pub const FIEMAP_EXTENT_DATA_ENCRYPTED: u32 = 0x0000_0080;
pub const FIEMAP_EXTENT_NOT_ALIGNED: u32 = 0x0000_0100;
pub const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x0000_0200;
pub const FIEMAP_EXTENT_DATA_TAIL: u32 = 0x0000_0400;
pub const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x0000_0800;
pub const FIEMAP_EXTENT_MERGED: u32 = 0x0000_1000;
pub const FIEMAP_EXTENT_SHARED: u32 = 0x0000_2000;
/// ext4's extent-status-cache hole flag (only from EXT4_IOC_GET_ES_CACHE).
pub const EXT4_FIEMAP_EXTENT_HOLE: u32 = 0x0800_0000;

/// Flag names in the order filefrag prints them.
const NAMES: [(u32, &str); 12] = [
    (FIEMAP_EXTENT_LAST, "last"),
    (FIEMAP_EXTENT_UNKNOWN, "unknown_loc"),
    (FIEMAP_EXTENT_DELALLOC, "delalloc"),
    (FIEMAP_EXTENT_ENCODED, "encoded"),
    (FIEMAP_EXTENT_DATA_ENCRYPTED, "encrypted"),
    (FIEMAP_EXTENT_NOT_ALIGNED, "not_aligned"),
    (FIEMAP_EXTENT_DATA_INLINE, "inline"),
    (FIEMAP_EXTENT_DATA_TAIL, "tail_packed"),
    (FIEMAP_EXTENT_UNWRITTEN, "unwritten"),
    (FIEMAP_EXTENT_MERGED, "merged"),
    (FIEMAP_EXTENT_SHARED, "shared"),
    (EXT4_FIEMAP_EXTENT_HOLE, "hole"),
];

/// One extent as the kernel returns it (`struct fiemap_extent`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawExtent {
    pub fe_logical: u64,
    pub fe_physical: u64,
    pub fe_length: u64,
    fe_reserved64: [u64; 2],
    pub fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// `struct fiemap` without its flexible array; its size is what the ioctl number encodes.
#[repr(C)]
#[derive(Debug, Default)]
struct Header {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

#[repr(C)]
struct Request {
    header: Header,
    extents: [RawExtent; BATCH],
}

nix::ioctl_readwrite!(fs_ioc_fiemap, b'f', 11, Header);

/// A reusable FIEMAP request buffer (about 28 KiB): allocate one per thread, not per file.
pub struct Fiemap {
    req: Box<Request>,
}

impl Default for Fiemap {
    fn default() -> Self {
        Fiemap::new()
    }
}

impl Fiemap {
    pub fn new() -> Fiemap {
        Fiemap {
            req: Box::new(Request {
                header: Header::default(),
                extents: [RawExtent::default(); BATCH],
            }),
        }
    }

    /// All extents of an open file, with `fm_flags` (0 or [`FIEMAP_FLAG_SYNC`] …).
    pub fn extents(&mut self, file: &File, fm_flags: u32) -> Result<Vec<RawExtent>, nix::Error> {
        let req = &mut *self.req;
        let mut out = Vec::new();
        let mut start = 0u64;
        loop {
            req.header = Header {
                fm_start: start,
                fm_length: u64::MAX,
                fm_flags,
                fm_mapped_extents: 0,
                fm_extent_count: BATCH as u32,
                fm_reserved: 0,
            };
            // SAFETY: `req` is a live, properly aligned `struct fiemap` followed by room for
            // `fm_extent_count` extents, which is all the kernel writes.
            unsafe {
                fs_ioc_fiemap(file.as_raw_fd(), std::ptr::addr_of_mut!(req.header))?;
            }
            let n = (req.header.fm_mapped_extents as usize).min(BATCH);
            if n == 0 {
                break;
            }
            let batch = &req.extents[..n];
            out.extend_from_slice(batch);
            let last = batch[n - 1];
            if batch.iter().any(|e| e.fe_flags & FIEMAP_EXTENT_LAST != 0) {
                break;
            }
            let next = last.fe_logical.saturating_add(last.fe_length);
            if next <= start || next == u64::MAX {
                break;
            }
            start = next;
        }
        Ok(out)
    }
}

/// All extents of an open file, with `fm_flags` (0 or [`FIEMAP_FLAG_SYNC`] …). Allocates a
/// request buffer per call: use [`Fiemap`] for many files.
pub fn fiemap(file: &File, fm_flags: u32) -> Result<Vec<RawExtent>, nix::Error> {
    Fiemap::new().extents(file, fm_flags)
}

/// Flags as filefrag prints them (unknown bits as `0x…`), then `eof` if `eof`.
pub fn flag_names(fe_flags: u32, eof: bool) -> Cow<'static, str> {
    // The common cases without building a string.
    match (fe_flags, eof) {
        (0, false) => return Cow::Borrowed(""),
        (0, true) => return Cow::Borrowed("eof"),
        (FIEMAP_EXTENT_LAST, false) => return Cow::Borrowed("last"),
        (FIEMAP_EXTENT_LAST, true) => return Cow::Borrowed("last,eof"),
        _ => {}
    }
    let mut s = String::new();
    let mut rest = fe_flags;
    for (mask, name) in NAMES {
        if rest & mask != 0 {
            if !s.is_empty() {
                s.push(',');
            }
            s.push_str(name);
            rest &= !mask;
        }
    }
    let mut bit = 1u32;
    while rest != 0 && bit != 0 {
        if rest & bit != 0 {
            if !s.is_empty() {
                s.push(',');
            }
            s.push_str(&format!("{bit:#04x}"));
            rest &= !bit;
        }
        bit = bit.wrapping_shl(1);
    }
    if eof {
        if !s.is_empty() {
            s.push(',');
        }
        s.push_str("eof");
    }
    Cow::Owned(s)
}

/// Raw extents of a file of `size` bytes → rows.
pub fn to_extents(path: &str, inode: Option<u64>, size: u64, raw: &[RawExtent]) -> Vec<Extent> {
    let path: Arc<str> = Arc::from(path);
    raw.iter()
        .enumerate()
        .map(|(i, e)| {
            let no_location = e.fe_flags & (FIEMAP_EXTENT_UNKNOWN | EXT4_FIEMAP_EXTENT_HOLE) != 0;
            Extent {
                path: Arc::clone(&path),
                inode,
                index: i as u64,
                logical_bytes: e.fe_logical,
                physical_bytes: (!no_location).then_some(e.fe_physical),
                length_bytes: e.fe_length,
                flags: flag_names(e.fe_flags, e.fe_logical.saturating_add(e.fe_length) >= size),
            }
        })
        .collect()
}

/// What [`map_file`] learns about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMap {
    pub path: String,
    pub inode: u64,
    pub dev: u64,
    pub size_bytes: u64,
    pub is_dir: bool,
    pub extents: Vec<Extent>,
}

/// Open `path` (without following a final symlink) and map it. `sync` sets
/// [`FIEMAP_FLAG_SYNC`].
pub fn map_file(path: &Path, sync: bool) -> Result<FileMap, BlockmapError> {
    let file = open_nofollow(None, path, OFlag::empty()).map_err(|source| BlockmapError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    map_open_file(&mut Fiemap::new(), &file, path, sync)
}

/// [`map_file`] with a reusable request buffer, for the entry `name` of the open directory `dir` (saves the kernel the
/// path walk from `/`); `path` is how the file is named in the rows.
pub fn map_file_at(
    fm: &mut Fiemap,
    dir: BorrowedFd<'_>,
    name: &Path,
    path: &Path,
    sync: bool,
) -> Result<FileMap, BlockmapError> {
    let file =
        open_nofollow(Some(dir), name, OFlag::empty()).map_err(|source| BlockmapError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    map_open_file(fm, &file, path, sync)
}

/// Open read-only without following a final symlink, without blocking on FIFOs, and with
/// O_NOATIME when allowed (it needs ownership or CAP_FOWNER) so the walk dirties no inode;
/// `extra` adds flags (`O_DIRECTORY` for the walk's directories).
pub(super) fn open_nofollow(
    dir: Option<BorrowedFd<'_>>,
    name: &Path,
    extra: OFlag,
) -> std::io::Result<File> {
    use nix::sys::stat::Mode;
    let base = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC | extra;
    let open = |flags: OFlag| match dir {
        Some(d) => nix::fcntl::openat(d, name, flags, Mode::empty()),
        None => nix::fcntl::open(name, flags, Mode::empty()),
    };
    let fd = match open(base | OFlag::O_NOATIME) {
        Err(nix::Error::EPERM) => open(base),
        r => r,
    }
    .map_err(std::io::Error::from)?;
    Ok(File::from(fd))
}

pub(super) fn map_open_file(
    fm: &mut Fiemap,
    file: &File,
    path: &Path,
    sync: bool,
) -> Result<FileMap, BlockmapError> {
    let meta = file.metadata().map_err(|source| BlockmapError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let raw = match fm.extents(file, if sync { FIEMAP_FLAG_SYNC } else { 0 }) {
        Ok(raw) => raw,
        // XFS maps regular files only.
        Err(nix::Error::EOPNOTSUPP) if meta.is_dir() => {
            return Err(BlockmapError::DirectoryWithoutFiemap {
                path: path.to_path_buf(),
            })
        }
        Err(source) => {
            return Err(BlockmapError::Fiemap {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let name = path.to_string_lossy();
    Ok(FileMap {
        extents: to_extents(&name, Some(meta.ino()), meta.size(), &raw),
        path: name.into_owned(),
        inode: meta.ino(),
        dev: meta.dev(),
        size_bytes: meta.size(),
        is_dir: meta.is_dir(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_in_filefrag_order() {
        assert_eq!(
            flag_names(
                FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_LAST,
                true
            ),
            "last,unknown_loc,delalloc,eof"
        );
        assert_eq!(
            flag_names(
                FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED,
                true
            ),
            "last,not_aligned,inline,eof"
        );
        assert_eq!(flag_names(0, false), "");
        assert_eq!(flag_names(0, true), "eof");
        assert_eq!(
            flag_names(0x10 | FIEMAP_EXTENT_MERGED, false),
            "merged,0x10"
        );
    }

    #[test]
    fn request_layout_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<Header>(), 32);
        assert_eq!(std::mem::size_of::<RawExtent>(), 56);
        assert_eq!(std::mem::size_of::<Request>(), 32 + 56 * BATCH);
    }

    #[test]
    fn maps_a_file_of_this_filesystem_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("fslab-fiemap-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, vec![7u8; 3 * 4096]).unwrap();
        match map_file(&p, true) {
            Ok(m) => {
                assert_eq!(m.size_bytes, 3 * 4096);
                let total: u64 = m.extents.iter().map(|e| e.length_bytes).sum();
                assert!(total >= 3 * 4096, "{:?}", m.extents);
                assert!(m.extents.last().unwrap().flags.contains("last"));
            }
            // tmpfs and some overlay setups do not implement FIEMAP.
            Err(BlockmapError::Fiemap { source, .. }) => {
                assert!(matches!(
                    source,
                    nix::Error::EOPNOTSUPP | nix::Error::ENOTTY
                ))
            }
            Err(e) => panic!("{e}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
