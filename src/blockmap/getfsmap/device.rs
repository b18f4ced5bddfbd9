//! Inode sizes read off the filesystem's block device (`O_DIRECT`, after a
//! freeze-and-thaw barrier), each inode core checked by the pure
//! [`crate::blockmap::xfs_disk`] ([`super::Sizes::Device`]).

use super::bulkstat::read_chunks;
use super::geometry;
use super::sizes::{NoDevice, SizesRead};
use crate::blockmap::xfs_disk;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

nix::ioctl_read_bad!(blksszget, 0x1268, nix::libc::c_int);

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
) -> Result<(File, PathBuf, u64, xfs_disk::Superblock), NoDevice> {
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
    let sb = xfs_disk::parse_superblock(buf.get(32768)).map_err(|source| NoDevice::Superblock {
        path: node.clone(),
        source,
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
pub(super) fn read_sizes_from_device(
    fd: &File,
    path: &Path,
    loop_only: bool,
) -> Result<(Vec<(u64, u64)>, SizesRead), NoDevice> {
    use xfs_disk::parse_dinode;
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
