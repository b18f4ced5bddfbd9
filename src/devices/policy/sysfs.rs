//! What the kernel says about a block device: sysfs, the mount tables of this namespace
//! and init's, `/proc/swaps`, holders, loop backing files, and an exclusive open.

use super::{DevNo, InUse, Refusal};
use crate::devices::mounts::{mounts, MountEntry};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A block device as sysfs sees it.
#[derive(Debug, Clone)]
pub(super) struct BlockDev {
    pub(super) path: PathBuf,
    pub(super) devno: DevNo,
    /// e.g. `sdb`, `loop3`, `sdb1`.
    pub(super) name: String,
    pub(super) sysfs: PathBuf,
    pub(super) size_bytes: u64,
    pub(super) diskseq: Option<u64>,
}

fn devno_of(rdev: u64) -> DevNo {
    (nix::sys::stat::major(rdev), nix::sys::stat::minor(rdev))
}

fn parse_devno(text: &str) -> Option<DevNo> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub(super) fn identify(path: &Path) -> Result<BlockDev, Refusal> {
    let meta = std::fs::metadata(path).map_err(|e| Refusal::CannotStat(e.to_string()))?;
    let ft = meta.file_type();
    if !ft.is_block_device() {
        let what = if ft.is_file() {
            "a regular file"
        } else if ft.is_dir() {
            "a directory"
        } else if ft.is_char_device() {
            "a character device"
        } else {
            "not a device"
        };
        return Err(Refusal::NotBlock(what));
    }
    let devno = devno_of(meta.rdev());
    let sysfs =
        std::fs::canonicalize(format!("/sys/dev/block/{}:{}", devno.0, devno.1)).map_err(|e| {
            Refusal::UnknownToKernel {
                devno,
                message: e.to_string(),
            }
        })?;
    let name = sysfs
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let sectors: u64 = std::fs::read_to_string(sysfs.join("size"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let diskseq = std::fs::read_to_string(sysfs.join("diskseq"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    Ok(BlockDev {
        path: path.to_path_buf(),
        devno,
        name,
        sysfs,
        size_bytes: sectors * 512,
        diskseq,
    })
}

/// The device and, for a whole disk, its partitions: `(name, devno, sysfs dir)`.
fn family(dev: &BlockDev) -> Vec<(String, DevNo, PathBuf)> {
    let mut out = vec![(dev.name.clone(), dev.devno, dev.sysfs.clone())];
    if dev.sysfs.join("partition").exists() {
        return out;
    }
    if let Ok(entries) = std::fs::read_dir(&dev.sysfs) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some(d) = std::fs::read_to_string(p.join("dev"))
                    .ok()
                    .and_then(|t| parse_devno(&t))
                {
                    out.push((e.file_name().to_string_lossy().to_string(), d, p));
                }
            }
        }
    }
    out
}

fn rdev_of(path: &str) -> Option<DevNo> {
    if !path.starts_with('/') {
        return None;
    }
    let m = std::fs::metadata(path).ok()?;
    m.file_type().is_block_device().then(|| devno_of(m.rdev()))
}

/// Mount table entries of this namespace and of init's (when readable).
fn all_mounts() -> Vec<MountEntry> {
    let mut v = mounts();
    if let Ok(text) = std::fs::read_to_string("/proc/1/mountinfo") {
        for m in crate::devices::mounts::parse_mountinfo(&text) {
            if !v.contains(&m) {
                v.push(m);
            }
        }
    }
    v
}

/// The devices under a device: itself and, recursively, its `slaves/`.
fn with_slaves(devno: DevNo, out: &mut Vec<DevNo>) {
    if out.contains(&devno) || out.len() > 64 {
        return;
    }
    out.push(devno);
    let dir = format!("/sys/dev/block/{}:{}/slaves", devno.0, devno.1);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if let Some(d) = std::fs::read_to_string(e.path().join("dev"))
                .ok()
                .and_then(|t| parse_devno(&t))
            {
                with_slaves(d, out);
            }
        }
    }
}

/// Every block device the root filesystem lives on.
fn root_devices(mount_table: &[MountEntry]) -> Vec<DevNo> {
    let mut out = Vec::new();
    if let Ok(m) = std::fs::metadata("/") {
        let d = devno_of(m.dev());
        if d.0 != 0 {
            with_slaves(d, &mut out);
        }
    }
    for m in mount_table
        .iter()
        .filter(|m| m.mount_point == Path::new("/"))
    {
        for d in m.devno.into_iter().chain(rdev_of(&m.source)) {
            if d.0 != 0 {
                with_slaves(d, &mut out);
            }
        }
    }
    out
}

fn mounted_where(devnos: &[DevNo], mount_table: &[MountEntry]) -> Option<(DevNo, PathBuf)> {
    mount_table.iter().find_map(|m| {
        let hit = m
            .devno
            .filter(|d| devnos.contains(d))
            .or_else(|| rdev_of(&m.source).filter(|d| devnos.contains(d)))?;
        Some((hit, m.mount_point.clone()))
    })
}

fn swap_users(devnos: &[DevNo]) -> Option<String> {
    let text = std::fs::read_to_string("/proc/swaps").ok()?;
    text.lines().skip(1).find_map(|l| {
        let name = crate::devices::mounts::unescape(l.split_whitespace().next()?);
        rdev_of(&name).filter(|d| devnos.contains(d)).map(|_| name)
    })
}

fn holders(sysfs: &Path) -> Vec<String> {
    std::fs::read_dir(sysfs.join("holders"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Why a family of devices is in use (mounted, swap, holders), or None.
fn in_use(fam: &[(String, DevNo, PathBuf)], mount_table: &[MountEntry]) -> Option<InUse> {
    let devnos: Vec<DevNo> = fam.iter().map(|f| f.1).collect();
    let own = fam.first().map(|f| f.1);
    let own_name = fam.first().map(|f| f.0.as_str());
    let name_of = |d: DevNo| {
        fam.iter()
            .find(|f| f.1 == d)
            .map_or_else(String::new, |f| f.0.clone())
    };
    if let Some((d, at)) = mounted_where(&devnos, mount_table) {
        let partition = (Some(d) != own).then(|| name_of(d));
        return Some(InUse::Mounted { partition, at });
    }
    if let Some(s) = swap_users(&devnos) {
        return Some(InUse::Swap(s));
    }
    for (name, _, sysfs) in fam {
        let h = holders(sysfs);
        if !h.is_empty() {
            // The names as sysfs lists them; InUse says what each kind is.
            let partition = (Some(name.as_str()) != own_name).then(|| name.clone());
            return Some(InUse::Holders {
                partition,
                holders: h,
            });
        }
    }
    None
}

/// For a loop device: the identity (st_dev, st_ino) and path of its backing file.
fn loop_backing(sysfs: &Path) -> Option<(PathBuf, Option<(u64, u64)>)> {
    let text = std::fs::read_to_string(sysfs.join("loop/backing_file")).ok()?;
    let path = PathBuf::from(text.trim().trim_end_matches(" (deleted)"));
    let id = std::fs::metadata(&path).ok().map(|m| (m.dev(), m.ino()));
    Some((path, id))
}

/// The checks for a device that is listed and a block device.
pub(super) fn check_unused(dev: &BlockDev) -> Result<(), Refusal> {
    let mount_table = all_mounts();
    let fam = family(dev);
    let devnos: Vec<DevNo> = fam.iter().map(|f| f.1).collect();
    let root = root_devices(&mount_table);
    if devnos.iter().any(|d| root.contains(d)) {
        return Err(Refusal::HoldsRoot);
    }
    if let Some(why) = in_use(&fam, &mount_table) {
        return Err(Refusal::InUse(why));
    }
    // A loop device: the same backing file may be attached (and mounted) elsewhere, and
    // the backing file may itself be a block device.
    if let Some((backing, id)) = loop_backing(&dev.sysfs) {
        if let Some(bdev) = rdev_of(&backing.display().to_string()) {
            if root.contains(&bdev) {
                return Err(Refusal::LoopOnRoot(backing));
            }
            if let Ok(b) = identify(&backing) {
                if let Some(why) = in_use(&family(&b), &mount_table) {
                    return Err(Refusal::LoopBackingInUse { backing, why });
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir("/sys/block") {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if !name.starts_with("loop") || name == dev.name {
                    continue;
                }
                let Ok(sysfs) = std::fs::canonicalize(e.path()) else {
                    continue;
                };
                let Some((other_path, other_id)) = loop_backing(&sysfs) else {
                    continue;
                };
                let same = match (id, other_id) {
                    (Some(a), Some(b)) => a == b,
                    _ => other_path == backing,
                };
                if !same {
                    continue;
                }
                let Some(d) = std::fs::read_to_string(sysfs.join("dev"))
                    .ok()
                    .and_then(|t| parse_devno(&t))
                else {
                    continue;
                };
                let other = BlockDev {
                    path: PathBuf::from(format!("/dev/{name}")),
                    devno: d,
                    name: name.clone(),
                    sysfs,
                    size_bytes: 0,
                    diskseq: None,
                };
                if let Some(why) = in_use(&family(&other), &mount_table) {
                    return Err(Refusal::LoopAlsoAttached { backing, name, why });
                }
            }
        }
    }
    // Last, ask the kernel: an exclusive open fails while anything claims the device
    // (a mount in another namespace, swap, md, dm, another exclusive opener).
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_EXCL.bits())
        .open(&dev.path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(nix::errno::Errno::EBUSY as i32) => Err(Refusal::Busy),
        Err(e) => Err(Refusal::CannotOpen(e.to_string())),
    }
}
