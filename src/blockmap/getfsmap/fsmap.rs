//! `FS_IOC_GETFSMAP`: every data-fork extent of the filesystem with its owner inode and
//! file offset, queried on several threads (a run of allocation groups each).

use super::{geometry, zeroed_box};
use crate::blockmap::fiemap;
use std::fs::File;
use std::os::fd::AsRawFd;

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
pub(super) struct Rec {
    pub(super) logical: u64,
    pub(super) physical: u64,
    pub(super) length: u64,
    pub(super) flags: u32,
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
pub(super) fn read_fsmap(fd: &File) -> Result<Vec<(u64, Rec)>, nix::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_match_the_kernel() {
        assert_eq!(std::mem::size_of::<Fsmap>(), 64);
        assert_eq!(std::mem::size_of::<FsmapHead>(), 64 + 2 * 64);
    }
}
