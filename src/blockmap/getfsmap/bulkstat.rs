//! `XFS_IOC_BULKSTAT` (every inode's size, the kernel reading each inode) and
//! `XFS_IOC_INUMBERS` (the inode chunks in use, no inode read): the bulk requests and
//! their shared header.

use super::{geometry, zeroed_box};
use std::fs::File;
use std::os::fd::AsRawFd;

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
pub(super) fn read_sizes(fd: &File) -> Result<Vec<(u64, u64)>, nix::Error> {
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
pub(super) struct Inumbers {
    pub(super) startino: u64,
    pub(super) allocmask: u64,
    pub(super) alloccount: u8,
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

/// Every inode chunk with an inode in use (`XFS_IOC_INUMBERS`: no inode is read).
pub(super) fn read_chunks(fd: &File) -> Result<Vec<Inumbers>, nix::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_match_the_kernel() {
        assert_eq!(std::mem::size_of::<BulkIreq>(), 64);
        assert_eq!(std::mem::size_of::<Bulkstat>(), 192);
        assert_eq!(std::mem::offset_of!(Bulkstat, mode), 132);
    }
}
