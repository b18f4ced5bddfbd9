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

use super::fiemap::{self, RawExtent};
use super::walk::{self, item_error, path_error, Job, WalkOptions};
use super::{BlockmapError, FileEntry, MappedFile};
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
        source: super::xfs_disk::SuperblockError,
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
        first_rejected: Vec<(u64, super::xfs_disk::DinodeError)>,
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

/// `struct fsmap`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Fsmap {
    device: u32,
    flags: u32,
    physical: u64,
    owner: u64,
    offset: u64,
    length: u64,
    reserved: [u64; 3],
}

/// `struct fsmap_head` without its flexible array.
#[repr(C)]
#[derive(Debug, Default)]
struct FsmapHead {
    iflags: u32,
    oflags: u32,
    count: u32,
    entries: u32,
    reserved: [u64; 6],
    keys: [Fsmap; 2],
}

/// Records per GETFSMAP call.
const FSMAP_BATCH: usize = 8192;

#[repr(C)]
struct FsmapRequest {
    head: FsmapHead,
    recs: [Fsmap; FSMAP_BATCH],
}

nix::ioctl_readwrite!(fs_ioc_getfsmap, b'X', 59, FsmapHead);

const FMR_OF_PREALLOC: u32 = 0x1;
const FMR_OF_ATTR_FORK: u32 = 0x2;
const FMR_OF_EXTENT_MAP: u32 = 0x4;
const FMR_OF_SHARED: u32 = 0x8;
const FMR_OF_SPECIAL_OWNER: u32 = 0x10;
const FMR_OF_LAST: u32 = 0x20;

/// One data-fork extent of an inode (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rec {
    logical: u64,
    physical: u64,
    length: u64,
    flags: u32,
}

/// A key of the whole range: every device, every address.
const KEY_MIN: Fsmap = Fsmap {
    device: 0,
    flags: 0,
    physical: 0,
    owner: 0,
    offset: 0,
    length: 0,
    reserved: [0; 3],
};
const KEY_MAX: Fsmap = Fsmap {
    device: u32::MAX,
    flags: u32::MAX,
    physical: u64::MAX,
    owner: u64::MAX,
    offset: u64::MAX,
    length: 0,
    reserved: [0; 3],
};

/// Every data-fork extent of every inode, sorted by inode and then file offset (40
/// bytes an extent: no allocation per inode).
///
/// Cold, GETFSMAP waits on one reverse-map btree block after another, so the data
/// device's allocation groups are queried on several threads at once (contiguous runs
/// of groups, by physical address), and everything else (a realtime or log device) by
/// one more query.
fn read_fsmap(fd: &File) -> Result<Vec<(u64, Rec)>, nix::Error> {
    // SAFETY: all-zero is a valid request (plain integers).
    let mut req: Box<FsmapRequest> = unsafe { zeroed_box() };
    // The data device's number, as GETFSMAP reports it, from its first record.
    req.head.keys = [KEY_MIN, KEY_MAX];
    req.head.count = 1;
    // SAFETY: `req` is a live `struct fsmap_head` followed by room for `count` records.
    unsafe { fs_ioc_getfsmap(fd.as_raw_fd(), std::ptr::addr_of_mut!(req.head))? };
    let geom = geometry(fd)?;
    let (bs, agblocks, agcount) = (
        u64::from(geom.head[0]),
        u64::from(geom.head[2]),
        u64::from(geom.head[3]),
    );
    let threads = (FSMAP_THREADS as u64).min(agcount);
    if req.head.entries == 0 || threads < 2 {
        let mut map = Vec::new();
        read_fsmap_range(fd, &mut req, KEY_MIN, KEY_MAX, &mut map)?;
        map.sort_unstable_by_key(|(ino, r)| (*ino, r.logical));
        return Ok(map);
    }
    let dev = req.recs[0].device;
    let at = |device: u32, physical: u64| Fsmap {
        device,
        physical,
        ..KEY_MIN
    };
    let upto = |device: u32, physical: u64| Fsmap {
        device,
        physical,
        ..KEY_MAX
    };
    // Groups split into `threads` contiguous runs; the last run goes on to the devices
    // numbered above the data device, one more query takes those below (the kernel
    // accepts only its own devices' numbers, 0 and u32::MAX in keys).
    let mut ranges: Vec<(Fsmap, Fsmap)> = (0..threads)
        .map(|t| {
            let (a, b) = (agcount * t / threads, agcount * (t + 1) / threads);
            let hi = if t + 1 == threads {
                KEY_MAX
            } else {
                upto(dev, b * agblocks * bs - 1)
            };
            (at(dev, a * agblocks * bs), hi)
        })
        .collect();
    if dev > 0 {
        // Up to the data device's first address (its superblock: a special owner).
        ranges.push((KEY_MIN, at(dev, 0)));
    }
    let parts: Vec<Result<Vec<(u64, Rec)>, nix::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|&(lo, hi)| {
                s.spawn(move || {
                    // SAFETY: all-zero is a valid request (plain integers).
                    let mut req: Box<FsmapRequest> = unsafe { zeroed_box() };
                    let mut map = Vec::new();
                    read_fsmap_range(fd, &mut req, lo, hi, &mut map).map(|()| map)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(nix::Error::EIO)))
            .collect()
    });
    let mut map = Vec::new();
    for p in parts {
        map.extend(p?);
    }
    map.sort_unstable_by_key(|(ino, r)| (*ino, r.logical));
    Ok(map)
}

/// Threads for [`read_fsmap`]'s queries (waiting on the device, not on the CPU).
const FSMAP_THREADS: usize = 4;

/// The data-fork extents GETFSMAP reports between keys `lo` and `hi`, added to `map`.
fn read_fsmap_range(
    fd: &File,
    req: &mut FsmapRequest,
    lo: Fsmap,
    hi: Fsmap,
    map: &mut Vec<(u64, Rec)>,
) -> Result<(), nix::Error> {
    req.head.keys = [lo, hi];
    loop {
        req.head.count = FSMAP_BATCH as u32;
        req.head.entries = 0;
        // SAFETY: `req` is a live `struct fsmap_head` followed by room for `count` records.
        unsafe { fs_ioc_getfsmap(fd.as_raw_fd(), std::ptr::addr_of_mut!(req.head))? };
        let n = (req.head.entries as usize).min(FSMAP_BATCH);
        if n == 0 {
            return Ok(());
        }
        for r in &req.recs[..n] {
            if r.flags & (FMR_OF_SPECIAL_OWNER | FMR_OF_ATTR_FORK | FMR_OF_EXTENT_MAP) != 0 {
                continue;
            }
            let mut flags = 0;
            if r.flags & FMR_OF_PREALLOC != 0 {
                flags |= fiemap::FIEMAP_EXTENT_UNWRITTEN;
            }
            if r.flags & FMR_OF_SHARED != 0 {
                flags |= fiemap::FIEMAP_EXTENT_SHARED;
            }
            map.push((
                r.owner,
                Rec {
                    logical: r.offset,
                    physical: r.physical,
                    length: r.length,
                    flags,
                },
            ));
        }
        let last = req.recs[n - 1];
        if last.flags & FMR_OF_LAST != 0 {
            return Ok(());
        }
        req.head.keys[0] = last;
    }
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

/// `struct xfs_bulk_ireq`.
#[repr(C)]
#[derive(Debug, Default)]
struct BulkIreq {
    ino: u64,
    flags: u32,
    icount: u32,
    ocount: u32,
    agno: u32,
    reserved: [u64; 5],
}

/// `struct xfs_bulkstat` (192 bytes); the fields read here.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Bulkstat {
    ino: u64,
    size: u64,
    rest0: [u64; 6],
    rest1: [u32; 12],
    nlink: u32,
    extents: u32,
    aextents: u32,
    version: u16,
    forkoff: u16,
    sick: u16,
    checked: u16,
    mode: u16,
    pad2: u16,
    extents64: u64,
    pad: [u64; 6],
}

const BULK_BATCH: usize = 4096;

#[repr(C)]
struct BulkRequest {
    hdr: BulkIreq,
    stats: [Bulkstat; BULK_BATCH],
}

nix::ioctl_read!(xfs_ioc_bulkstat, b'X', 127, BulkIreq);

/// `xfs_bulk_ireq.flags`: only the inodes of allocation group `agno`.
const XFS_BULK_IREQ_AGNO: u32 = 1;

/// Every inode's size (bytes), sorted by inode number (16 bytes an inode).
///
/// BULKSTAT is CPU-bound in the kernel, even with cold caches (`perf`: two thirds of a
/// cold map's samples in `xfs_bulkstat_one_int`, mostly `xfs_iget` and its inode-btree
/// lookup per inode; reading the inode clusters ahead into the page cache changed
/// nothing), so the allocation groups are shared among one thread per CPU.
fn read_sizes(fd: &File) -> Result<Vec<(u64, u64)>, nix::Error> {
    let agcount = geometry(fd)?.head[3];
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(agcount as usize)
        .max(1);
    // One request buffer per thread, used for each of its groups (a filesystem may
    // have thousands).
    let one = |ags: Option<(usize, usize)>| -> Result<Vec<(u64, u64)>, nix::Error> {
        // SAFETY: all-zero is a valid request (plain integers).
        let mut req: Box<BulkRequest> = unsafe { zeroed_box() };
        let mut out = Vec::new();
        match ags {
            None => read_sizes_of(fd, None, &mut req, &mut out)?,
            Some((first, step)) => {
                for ag in (first as u32..agcount).step_by(step) {
                    read_sizes_of(fd, Some(ag), &mut req, &mut out)?;
                }
            }
        }
        Ok(out)
    };
    if threads == 1 {
        let mut sizes = one(None)?;
        // BULKSTAT returns inodes in increasing order; sorting keeps lookups right anyway.
        sizes.sort_unstable_by_key(|&(ino, _)| ino);
        return Ok(sizes);
    }
    let parts: Vec<Result<Vec<(u64, u64)>, nix::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || one(Some((t, threads)))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(nix::Error::EIO)))
            .collect()
    });
    let mut sizes = Vec::new();
    for p in parts {
        sizes.extend(p?);
    }
    sizes.sort_unstable_by_key(|&(ino, _)| ino);
    Ok(sizes)
}

/// The sizes of the inodes of allocation group `ag` (None: of all of them).
fn read_sizes_of(
    fd: &File,
    ag: Option<u32>,
    req: &mut BulkRequest,
    sizes: &mut Vec<(u64, u64)>,
) -> Result<(), nix::Error> {
    req.hdr = BulkIreq::default();
    if let Some(ag) = ag {
        req.hdr.flags = XFS_BULK_IREQ_AGNO;
        req.hdr.agno = ag;
    }
    loop {
        req.hdr.icount = BULK_BATCH as u32;
        req.hdr.ocount = 0;
        // SAFETY: `req` is a live `struct xfs_bulk_ireq` followed by room for `icount`
        // records.
        unsafe { xfs_ioc_bulkstat(fd.as_raw_fd(), std::ptr::addr_of_mut!(req.hdr))? };
        let n = (req.hdr.ocount as usize).min(BULK_BATCH);
        if n == 0 {
            return Ok(());
        }
        sizes.extend(req.stats[..n].iter().map(|b| (b.ino, b.size)));
        // The kernel has set `hdr.ino` to the next inode to look at.
    }
}

/// `struct xfs_inumbers`: one inode chunk (64 inodes) and which of them are in use.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Inumbers {
    startino: u64,
    allocmask: u64,
    alloccount: u8,
    version: u8,
    padding: [u8; 6],
}

const INUMBERS_BATCH: usize = 8192;

#[repr(C)]
struct InumbersRequest {
    hdr: BulkIreq,
    recs: [Inumbers; INUMBERS_BATCH],
}

nix::ioctl_read!(xfs_ioc_inumbers, b'X', 128, BulkIreq);
nix::ioctl_read_bad!(blksszget, 0x1268, nix::libc::c_int);

/// Every inode chunk with an inode in use (`XFS_IOC_INUMBERS`: no inode is read).
fn read_chunks(fd: &File) -> Result<Vec<Inumbers>, nix::Error> {
    // SAFETY: all-zero is a valid request (plain integers).
    let mut req: Box<InumbersRequest> = unsafe { zeroed_box() };
    let mut out = Vec::new();
    loop {
        req.hdr.icount = INUMBERS_BATCH as u32;
        req.hdr.ocount = 0;
        // SAFETY: `req` is a live `struct xfs_bulk_ireq` followed by room for `icount`
        // records.
        unsafe { xfs_ioc_inumbers(fd.as_raw_fd(), std::ptr::addr_of_mut!(req.hdr))? };
        let n = (req.hdr.ocount as usize).min(INUMBERS_BATCH);
        if n == 0 {
            return Ok(out);
        }
        out.extend(req.recs[..n].iter().filter(|r| r.allocmask != 0).copied());
    }
}

/// The block device of `dev` (a `dev_t`), from sysfs's `uevent`, checked to be that
/// device; `loop_only`: refuse any other than a loop device.
fn device_node(dev: u64, loop_only: bool) -> Result<PathBuf, NoDevice> {
    let (major, minor) = (nix::sys::stat::major(dev), nix::sys::stat::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let node_err = |why: String| NoDevice::Node { major, minor, why };
    let uevent = std::fs::read_to_string(sys.join("uevent"))
        .map_err(|e| node_err(format!("{}: {e}", sys.join("uevent").display())))?;
    let name = uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .ok_or_else(|| node_err(format!("{} names no DEVNAME", sys.display())))?;
    let node = Path::new("/dev").join(name);
    if loop_only && !sys.join("loop").is_dir() {
        return Err(NoDevice::NotLoop(node.display().to_string()));
    }
    let md = std::fs::metadata(&node).map_err(|e| node_err(format!("{}: {e}", node.display())))?;
    use std::os::unix::fs::FileTypeExt;
    if !md.file_type().is_block_device() || md.rdev() != dev {
        return Err(node_err(format!("{} is another device", node.display())));
    }
    Ok(node)
}

/// A buffer of `len` bytes aligned for `O_DIRECT` (to 4 KiB).
struct Aligned {
    buf: Vec<u8>,
    at: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let buf = vec![0u8; len + 4096];
        let at = buf.as_ptr().align_offset(4096);
        Aligned { buf, at, len }
    }
    fn get(&mut self, n: usize) -> &mut [u8] {
        &mut self.buf[self.at..self.at + n.min(self.len)]
    }
}

/// `pread` of exactly `buf.len()` bytes (a short read is an error: the ranges read are
/// inside the filesystem, which is inside the device).
fn pread_exact(dev: &File, buf: &mut [u8], at: u64, path: &Path) -> Result<(), NoDevice> {
    use std::os::unix::fs::FileExt;
    dev.read_exact_at(buf, at).map_err(|source| NoDevice::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The filesystem's data device opened for `O_DIRECT` reads, its logical block size and
/// its superblock, checked against what the mounted filesystem reports.
fn open_device(
    fd: &File,
    path: &Path,
    loop_only: bool,
) -> Result<(File, PathBuf, u64, super::xfs_disk::Superblock), NoDevice> {
    use std::os::unix::fs::OpenOptionsExt;
    let dev = fd
        .metadata()
        .map_err(|source| NoDevice::Io {
            path: path.to_path_buf(),
            source,
        })?
        .dev();
    let node = device_node(dev, loop_only)?;
    let io = |source| NoDevice::Io {
        path: node.clone(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_DIRECT)
        .open(&node)
        .map_err(io)?;
    let mut lbs: nix::libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int.
    unsafe { blksszget(file.as_raw_fd(), &mut lbs) }
        .map_err(|e| io(std::io::Error::from_raw_os_error(e as i32)))?;
    let align = (lbs.max(512) as u64).next_power_of_two();
    // The largest sector XFS allows is 32 KiB: the superblock's checksum covers its sector.
    let mut buf = Aligned::new(32768);
    pread_exact(&file, buf.get(32768), 0, &node)?;
    let sb = super::xfs_disk::parse_superblock(buf.get(32768)).map_err(|source| {
        NoDevice::Superblock {
            path: node.clone(),
            source,
        }
    })?;
    let geom = geometry(fd).map_err(|e| io(std::io::Error::from_raw_os_error(e as i32)))?;
    let mismatch = |what| NoDevice::Mismatch {
        path: node.clone(),
        what,
    };
    if geom.uuid != sb.uuid {
        return Err(mismatch("UUID"));
    }
    if (geom.head[0], geom.head[2], geom.head[3], geom.head[6])
        != (
            sb.blocksize,
            sb.agblocks,
            sb.agcount,
            u32::from(sb.inodesize),
        )
    {
        return Err(mismatch("geometry"));
    }
    Ok((file, node, align, sb))
}

/// Most bytes one device read covers.
const DEVICE_READ: u64 = 1 << 20;
/// Inodes not believed that are named one by one in [`SizesRead::Device`].
const REJECTED_NAMED: usize = 3;

/// Every inode's size read from the device (see [`Sizes::Device`]), sorted by inode
/// number; `loop_only` as [`Sizes::Auto`] asks. The chunks in use are listed before the
/// barrier, so every inode read was in use before it and is written back by it. The
/// caller has synced the filesystem (`syncfs`: data written, sizes logged), so that the
/// log's head says whether anything changed since the last barrier.
fn read_sizes_from_device(
    fd: &File,
    path: &Path,
    loop_only: bool,
) -> Result<(Vec<(u64, u64)>, SizesRead), NoDevice> {
    use super::xfs_disk::parse_dinode;
    let (dev, node, align, sb) = open_device(fd, path, loop_only)?;
    let chunks = read_chunks(fd).map_err(NoDevice::Inumbers)?;
    let head = Path::new("/sys/fs/xfs")
        .join(node.file_name().unwrap_or_default())
        .join("log/log_head_lsn");
    let identity: String = sb.uuid.iter().map(|b| format!("{b:02x}")).collect();
    let barrier = crate::devices::freeze::barrier_since(path, &head, &identity)?;
    let isz = u64::from(sb.inodesize);
    // Byte ranges to read, aligned for O_DIRECT, with the chunks each covers.
    let mut ranges: Vec<(u64, u64, std::ops::Range<usize>)> = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        let first = c.startino + u64::from(c.allocmask.trailing_zeros());
        let last = c.startino + 63 - u64::from(c.allocmask.leading_zeros());
        let (Some(a), Some(b)) = (sb.inode_offset(first), sb.inode_offset(last)) else {
            continue; // outside every group: its inodes fall back to stat
        };
        let (start, end) = (a / align * align, (b + isz).div_ceil(align) * align);
        match ranges.last_mut() {
            Some((s, e, r)) if start <= *e && end.max(*e) - *s <= DEVICE_READ => {
                *e = end.max(*e);
                r.end = i + 1;
            }
            _ => ranges.push((start, end, i..i + 1)),
        }
    }
    let mut buf = Aligned::new(DEVICE_READ as usize + 2 * 65536);
    let mut sizes = Vec::with_capacity(chunks.iter().map(|c| c.alloccount as usize).sum());
    let (mut rejected, mut first_rejected) = (0usize, Vec::new());
    for (start, end, which) in ranges {
        let bytes = buf.get((end - start) as usize);
        pread_exact(&dev, bytes, start, &node)?;
        for c in &chunks[which] {
            let mut mask = c.allocmask;
            while mask != 0 {
                let ino = c.startino + u64::from(mask.trailing_zeros());
                mask &= mask - 1;
                let Some(off) = sb.inode_offset(ino) else {
                    continue;
                };
                let at = (off - start) as usize;
                match parse_dinode(&sb, ino, &bytes[at..at + isz as usize]) {
                    Ok(d) => sizes.push((ino, d.size)),
                    Err(why) => {
                        rejected += 1;
                        if first_rejected.len() < REJECTED_NAMED {
                            first_rejected.push((ino, why));
                        }
                    }
                }
            }
        }
    }
    sizes.sort_unstable_by_key(|&(ino, _)| ino);
    let inodes = sizes.len();
    Ok((
        sizes,
        SizesRead::Device {
            device: node,
            barrier,
            inodes,
            rejected,
            first_rejected,
        },
    ))
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

/// The reverse map and sizes of one filesystem, shared by the walk's threads.
struct Maps {
    extents: Vec<(u64, Rec)>,
    sizes: Vec<(u64, u64)>,
}

impl Maps {
    /// The extents of inode `ino`, in file-offset order.
    fn extents_of(&self, ino: u64) -> &[(u64, Rec)] {
        let from = self.extents.partition_point(|(i, _)| *i < ino);
        let n = self.extents[from..].partition_point(|(i, _)| *i == ino);
        &self.extents[from..from + n]
    }

    /// The size read for inode `ino` (BULKSTAT or the device).
    fn size_of(&self, ino: u64) -> Option<u64> {
        let at = self.sizes.binary_search_by_key(&ino, |&(i, _)| i).ok()?;
        Some(self.sizes[at].1)
    }

    fn item(&self, path: &Path, ino: u64, size: u64, is_dir: bool) -> MappedFile {
        let v = self.extents_of(ino);
        let n = v.len();
        let raw: Vec<RawExtent> = v
            .iter()
            .enumerate()
            .map(|(i, (_, r))| {
                let mut e = RawExtent::default();
                e.fe_logical = r.logical;
                e.fe_physical = r.physical;
                e.fe_length = r.length;
                e.fe_flags = r.flags;
                if i + 1 == n {
                    e.fe_flags |= fiemap::FIEMAP_EXTENT_LAST;
                }
                e
            })
            .collect();
        let name = path.to_string_lossy();
        MappedFile {
            extents: fiemap::to_extents(&name, Some(ino), size, &raw),
            entry: FileEntry {
                path: name.into_owned(),
                inode: Some(ino),
                size_bytes: Some(size),
                is_dir,
            },
        }
    }
}

/// Stream the block map of `roots` (each on an XFS with rmapbt, see [`probe`]) through
/// GETFSMAP, with inode sizes read as `sizes` says: the same items, in the same order,
/// as [`walk::stream`]; and, per filesystem (the first root on it), where its sizes came
/// from.
pub fn stream(
    roots: &[PathBuf],
    opts: &WalkOptions,
    sizes: Sizes,
) -> Result<(walk::Walk, Vec<(PathBuf, SizesRead)>), BlockmapError> {
    let mut by_dev: HashMap<u64, Arc<Maps>> = HashMap::new();
    let mut read = Vec::new();
    for root in roots {
        let f = File::open(root).map_err(|source| BlockmapError::Io {
            path: root.clone(),
            source,
        })?;
        let dev = f
            .metadata()
            .map_err(|source| BlockmapError::Io {
                path: root.clone(),
                source,
            })?
            .dev();
        if by_dev.contains_key(&dev) {
            continue;
        }
        let err = |what: &str, source: nix::Error| BlockmapError::Fsmap {
            path: root.clone(),
            what: what.to_string(),
            source,
        };
        // Delayed allocations get their blocks (FIEMAP would show them as `delalloc`).
        nix::unistd::syncfs(&f).map_err(|e| err("syncfs", e))?;
        // The reverse map and the inode sizes, read at the same time, while a third
        // thread reads the tree's directories so that the walk after them finds them
        // in the cache (with cold caches the walk's reads cost as much as GETFSMAP's).
        let on_dev: Vec<&PathBuf> = roots
            .iter()
            .filter(|r| std::fs::metadata(r).is_ok_and(|m| m.dev() == dev))
            .collect();
        let done = AtomicBool::new(false);
        let (extents, got) = std::thread::scope(|s| {
            s.spawn(|| warm_directories(&on_dev, dev, &done));
            let got = s.spawn(|| sizes_for(&f, root, sizes));
            let extents = read_fsmap(&f);
            let got = got.join();
            done.store(true, Ordering::Relaxed);
            (extents, got)
        });
        let extents = extents.map_err(|e| err("FS_IOC_GETFSMAP", e))?;
        let (inode_sizes, how) =
            got.unwrap_or_else(|_| Err(err("reading inode sizes", nix::Error::EIO)))?;
        read.push((root.clone(), how));
        by_dev.insert(
            dev,
            Arc::new(Maps {
                extents,
                sizes: inode_sizes,
            }),
        );
    }
    let by_dev = Arc::new(by_dev);
    let mapper: walk::MapperFactory = Arc::new(move || {
        let by_dev = Arc::clone(&by_dev);
        // The device of the last directory seen (files come a directory at a time; the
        // directory is held, so its address cannot be reused by another meanwhile).
        let mut last_dir: Option<(Arc<File>, u64)> = None;
        Box::new(move |job| match job {
            Job::Open { file, path } => {
                let meta = file.metadata().map_err(|e| path_error(&path, e))?;
                let maps = by_dev
                    .get(&meta.dev())
                    .ok_or_else(|| path_error(&path, "not on a filesystem read by GETFSMAP"))?;
                Ok(maps.item(&path, meta.ino(), meta.size(), meta.is_dir()))
            }
            Job::At {
                dir,
                name,
                ino,
                path,
            } => {
                let dev = match &last_dir {
                    Some((d, dev)) if Arc::ptr_eq(d, &dir) => *dev,
                    _ => {
                        let dev = dir.metadata().map_err(|e| path_error(&path, e))?.dev();
                        last_dir = Some((Arc::clone(&dir), dev));
                        dev
                    }
                };
                let maps = by_dev
                    .get(&dev)
                    .ok_or_else(|| path_error(&path, "not on a filesystem read by GETFSMAP"))?;
                let size = match maps.size_of(ino) {
                    Some(s) => s,
                    // Created after the sizes were read, or its core read from the device
                    // was not believed: ask the file itself.
                    None => stat_size(dir.as_fd(), Path::new(&name)).map_err(|e| {
                        item_error(BlockmapError::Io {
                            path: path.clone(),
                            source: e,
                        })
                    })?,
                };
                Ok(maps.item(&path, ino, size, false))
            }
            Job::Done(e) => Err(e),
        })
    });
    let opts = WalkOptions {
        // The work per file is a hash lookup: one thread.
        threads: Some(1),
        ..opts.clone()
    };
    Ok((walk::stream_with(roots, &opts, mapper)?, read))
}

/// Most directories [`warm_directories`] keeps waiting to be read.
const WARM_PENDING: usize = 100_000;

/// Read the directories below `roots` (on device `dev`, symlinks not followed) with
/// `getdents` only, until `done` is set: a cache warmer, whose errors do not matter (the
/// walk reports its own). Memory: the paths of at most [`WARM_PENDING`] directories.
fn warm_directories(roots: &[&PathBuf], dev: u64, done: &AtomicBool) {
    use nix::dir::{Dir, Type};
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    let mut pending: Vec<PathBuf> = roots.iter().map(|r| r.to_path_buf()).collect();
    while let Some(path) = pending.pop() {
        if done.load(Ordering::Relaxed) {
            return;
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let Ok(mut d) = Dir::open(&path, flags, Mode::empty()) else {
            continue;
        };
        if !nix::sys::stat::fstat(&d).is_ok_and(|st| st.st_dev == dev) {
            continue;
        }
        for entry in d.iter() {
            let Ok(entry) = entry else { break };
            let name = entry.file_name().to_bytes();
            if entry.file_type() == Some(Type::Directory)
                && name != b"."
                && name != b".."
                && pending.len() < WARM_PENDING
            {
                pending.push(path.join(std::ffi::OsStr::from_bytes(name)));
            }
        }
    }
}

fn stat_size(dir: std::os::fd::BorrowedFd<'_>, name: &Path) -> std::io::Result<u64> {
    use nix::fcntl::AtFlags;
    let st = nix::sys::stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)?;
    Ok(st.st_size as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(logical: u64) -> Rec {
        Rec {
            logical,
            physical: logical + 1_000_000,
            length: 4096,
            flags: 0,
        }
    }

    #[test]
    fn an_inodes_extents_and_size_are_found_among_its_neighbours() {
        let maps = Maps {
            extents: vec![
                (5, rec(0)),
                (7, rec(0)),
                (7, rec(4096)),
                (7, rec(12288)),
                (9, rec(0)),
            ],
            sizes: vec![(5, 10), (7, 16384), (8, 0), (9, 1)],
        };
        let offsets: Vec<u64> = maps.extents_of(7).iter().map(|(_, r)| r.logical).collect();
        assert_eq!(offsets, [0, 4096, 12288]);
        assert!(maps.extents_of(6).is_empty() && maps.extents_of(10).is_empty());
        assert_eq!(maps.extents_of(9).len(), 1);
        assert_eq!(
            (maps.size_of(7), maps.size_of(8), maps.size_of(6)),
            (Some(16384), Some(0), None)
        );
        // The last extent of the file carries FIEMAP's LAST flag, the others not.
        let item = maps.item(Path::new("/m/f"), 7, 16384, false);
        let last: Vec<bool> = item
            .extents
            .iter()
            .map(|e| e.flags.split(',').any(|f| f == "last"))
            .collect();
        assert_eq!(last, [false, false, true]);
    }

    #[test]
    fn structs_match_the_kernel() {
        assert_eq!(std::mem::size_of::<Fsmap>(), 64);
        assert_eq!(std::mem::size_of::<FsmapHead>(), 64 + 2 * 64);
        assert_eq!(std::mem::size_of::<BulkIreq>(), 64);
        assert_eq!(std::mem::size_of::<Bulkstat>(), 192);
        assert_eq!(std::mem::offset_of!(Bulkstat, mode), 132);
        assert_eq!(std::mem::size_of::<FsGeom>(), 256);
        assert_eq!(std::mem::offset_of!(FsGeom, flags), 92);
    }
}
