//! Mounts: reading the mount table, unmounting, tmpfs.

use super::DeviceError;
use nix::mount::{umount2, MntFlags, MsFlags};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub mount_point: PathBuf,
    pub fstype: String,
    pub source: String,
    /// The `major:minor` of the mounted device as the kernel reports it (btrfs and
    /// some others report an anonymous `0:N`).
    pub devno: Option<(u64, u64)>,
}

/// The mount table of this process's namespace (`/proc/self/mountinfo`).
pub fn mounts() -> Vec<MountEntry> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    parse_mountinfo(&text)
}

pub(crate) fn unescape(s: &str) -> String {
    // mountinfo escapes space, tab, newline and backslash as \ooo (octal).
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Some(v) = std::str::from_utf8(&b[i + 1..i + 4])
                .ok()
                .and_then(|o| u8::from_str_radix(o, 8).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let mut l = left.split(' ');
            let devno = l.nth(2).and_then(|d| {
                let (a, b) = d.split_once(':')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            });
            let mount_point = l.nth(1)?;
            let mut r = right.split(' ');
            let fstype = r.next()?;
            let source = r.next().unwrap_or("");
            Some(MountEntry {
                mount_point: PathBuf::from(unescape(mount_point)),
                fstype: fstype.to_string(),
                source: unescape(source),
                devno,
            })
        })
        .collect()
}

/// Unmount `path`, retrying while busy. A mount that stays busy is an error: it is
/// never detached lazily, which would leave the filesystem (and its loop device) alive
/// behind a process that still uses it while reporting it released.
pub fn unmount(path: &Path) -> Result<(), DeviceError> {
    let mut last = nix::errno::Errno::EBUSY;
    for attempt in 0..16 {
        match umount2(path, MntFlags::empty()) {
            Ok(()) => return Ok(()),
            Err(nix::errno::Errno::EINVAL) | Err(nix::errno::Errno::ENOENT) => return Ok(()),
            Err(e @ nix::errno::Errno::EBUSY) => {
                last = e;
                std::thread::sleep(std::time::Duration::from_millis(25 * (attempt + 1)));
            }
            Err(e) => {
                return Err(DeviceError::Release {
                    what: path.display().to_string(),
                    message: e.to_string(),
                })
            }
        }
    }
    Err(DeviceError::Release {
        what: path.display().to_string(),
        message: format!("{last}: a process still uses it"),
    })
}

/// Unmount every mount under `dir` or whose source is one of `devices`, deepest first,
/// except the mount points in `keep` (the tmpfs that back images, unmounted after their
/// loop devices are detached). Mounts that steps made, tmpfs included, all go.
pub fn unmount_all_under(
    dir: &Path,
    devices: &[PathBuf],
    keep: &[PathBuf],
) -> Result<(), DeviceError> {
    let mut first_err = None;
    // The kernel's device numbers too: a mount's source may be another name of the node.
    let devnos: Vec<(u64, u64)> = devices
        .iter()
        .filter_map(|d| {
            use std::os::unix::fs::{FileTypeExt, MetadataExt};
            let m = std::fs::metadata(d).ok()?;
            m.file_type().is_block_device().then(|| {
                (
                    nix::sys::stat::major(m.rdev()),
                    nix::sys::stat::minor(m.rdev()),
                )
            })
        })
        .collect();
    // Mounts can stack; repeat until none is left.
    for _ in 0..8 {
        let mut mine: Vec<MountEntry> = mounts()
            .into_iter()
            .filter(|m| {
                (m.mount_point.starts_with(dir) && !keep.contains(&m.mount_point))
                    || devices.iter().any(|d| Path::new(&m.source) == d)
                    || m.devno.is_some_and(|d| devnos.contains(&d))
            })
            .collect();
        if mine.is_empty() {
            break;
        }
        mine.sort_by_key(|m| std::cmp::Reverse(m.mount_point.components().count()));
        for m in mine {
            if let Err(e) = unmount(&m.mount_point) {
                first_err.get_or_insert(e);
            }
        }
        // A busy mount stays busy: another round would only wait again.
        if first_err.is_some() {
            break;
        }
    }
    match first_err {
        None => Ok(()),
        Some(e) => Err(e),
    }
}

pub(crate) fn mount_tmpfs(at: &Path, size_bytes: u64) -> Result<(), DeviceError> {
    let opts = format!("size={size_bytes},mode=0700");
    nix::mount::mount(
        Some("fslab-tmpfs"),
        at,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(opts.as_str()),
    )
    .map_err(|e| DeviceError::Io {
        action: "mount tmpfs on",
        path: at.to_path_buf(),
        source: e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mountinfo_lines() {
        // Captured from /proc/self/mountinfo on this machine (one line shortened).
        let text = "36 35 98:0 / /var/tmp/fslab/p\\0401/mnt rw,relatime shared:1 - xfs /dev/loop3 rw,attr2\n\
                    22 1 0:21 / /proc rw,nosuid - proc proc rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].mount_point, PathBuf::from("/var/tmp/fslab/p 1/mnt"));
        assert_eq!(m[0].fstype, "xfs");
        assert_eq!(m[0].source, "/dev/loop3");
        assert_eq!(m[0].devno, Some((98, 0)));
        assert_eq!(m[1].fstype, "proc");
    }
}
