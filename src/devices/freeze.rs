//! A write barrier on a mounted filesystem: `FIFREEZE` and, at once, `FITHAW`.
//!
//! Freezing makes the filesystem write back everything it has logged (on XFS: the log is
//! forced and every logged inode and buffer is written in place, `xfs_log_quiesce`), so
//! that what the device holds after the thaw is at least as new as what the filesystem
//! held when the freeze began. The GETFSMAP block map uses it before it reads inode cores
//! from the device (`fslab blockmap --sizes-from device`). The filesystem is frozen only for the
//! time the write-back takes (writers wait that long), never while anything is read.
//!
//! A filesystem left frozen stops every writer on it, so the freeze is guarded three ways:
//! - `SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT` and `SIGTSTP` are held back from
//!   `FIFREEZE` until after `FITHAW` (process-wide dispositions, restored after; a signal
//!   that came meanwhile is raised again then);
//! - a record `/run/fslab-freeze/<pid>-<start ticks>-<n>` holding the device's
//!   `major:minor` exists from before `FIFREEZE` until after `FITHAW`; a process killed
//!   in between (SIGKILL) leaves it, and [`reclaim_dead`] (run by `fslab cleanup`, at the
//!   start of every `fslab run`, and before each barrier) thaws that filesystem;
//! - a filesystem whose record could not outlive it (the record directory is on it) is
//!   not frozen.
//!
//! A filesystem that is frozen already (by someone else: `FIFREEZE` says EBUSY) is left
//! frozen; its device is as current as it gets ([`Barrier::AlreadyFrozen`]).

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Where the records of freezes in progress live (tmpfs on most systems: a reboot thaws
/// everything, and forgets the records with it).
pub const RECORD_DIR: &str = "/run/fslab-freeze";

/// The record directory: [`RECORD_DIR`], or `$FSLAB_FREEZE_RECORDS` (for tests: a
/// private directory whose records no other fslab process reclaims; it must pass the
/// same checks).
pub fn record_dir() -> PathBuf {
    std::env::var_os("FSLAB_FREEZE_RECORDS")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(RECORD_DIR), PathBuf::from)
}

#[derive(Debug, thiserror::Error)]
pub enum FreezeError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the freeze record directory {path} is not trusted: {reason}")]
    Untrusted { path: PathBuf, reason: &'static str },
    #[error(
        "{records} is on the filesystem of {path}: a record of its freeze would be frozen \
         with it, so it is not frozen"
    )]
    RecordOnSameFilesystem { records: PathBuf, path: PathBuf },
    #[error("FIFREEZE {path}: {source}")]
    Freeze {
        path: PathBuf,
        #[source]
        source: nix::Error,
    },
    #[error(
        "FITHAW {path}: {source}; the filesystem may still be frozen: `fslab cleanup` or \
         `fsfreeze -u {path}` thaws it"
    )]
    Thaw {
        path: PathBuf,
        #[source]
        source: nix::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FreezeError + '_ {
    move |source| FreezeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What [`barrier_since`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Barrier {
    /// Frozen and thawed; `took` from `FIFREEZE` to the end of `FITHAW`.
    Made { took: Duration },
    /// Someone else holds the filesystem frozen; left so.
    AlreadyFrozen,
    /// Not needed: the filesystem has written nothing to its log since the last barrier
    /// on it ([`barrier_since`]).
    Unchanged,
}

// FIFREEZE and FITHAW are `_IOWR('X', 119, int)` and `_IOWR('X', 120, int)`.
nix::ioctl_readwrite!(fifreeze, b'X', 119, nix::libc::c_int);
nix::ioctl_readwrite!(fithaw, b'X', 120, nix::libc::c_int);

/// Freeze the filesystem holding `path` and thaw it at once (see the module's text),
/// unless it has logged nothing since the last such barrier.
///
/// `log_position` is a file whose text changes whenever the filesystem writes to its
/// log (XFS: `/sys/fs/xfs/<dev>/log/log_head_lsn`, a cycle and block that only grow).
/// It is read while the filesystem is frozen, when nothing can be logged, and kept with
/// the boot, the filesystem's `identity` and the mount's unique id in
/// `<record dir>/clean-<major>:<minor>`. The
/// caller has synced the filesystem (`syncfs` forces the log), so a change made since
/// that barrier has moved the position; when the position reads the same, every logged
/// change is still where the barrier wrote it and [`Barrier::Unchanged`] is returned.
pub fn barrier_since(
    path: &Path,
    log_position: &Path,
    identity: &str,
) -> Result<Barrier, FreezeError> {
    let records = &record_dir();
    // Nothing is read from or removed in a directory another user could have prepared.
    trusted_dir(records)?;
    let dev = std::fs::metadata(path).map_err(io(path))?.dev();
    let state = records.join(format!(
        "clean-{}:{}",
        nix::sys::stat::major(dev),
        nix::sys::stat::minor(dev)
    ));
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    // The mount, by the id no other mount gets in this boot: a filesystem made again on
    // the same device with the same UUID (a pinned one) could reach the same log head.
    // Without it (kernels before 6.8) the barrier is always made.
    let mount = unique_mount_id(path);
    let stamp = |pos: &str| {
        format!(
            "{} {identity} mount {} {}\n",
            boot.trim(),
            mount.unwrap_or(0),
            pos.trim()
        )
    };
    if let (Ok(pos), Some(_)) = (std::fs::read_to_string(log_position), mount) {
        let believed = std::fs::symlink_metadata(&state).is_ok_and(|m| m.is_file() && m.uid() == 0);
        if believed && std::fs::read_to_string(&state).is_ok_and(|s| s == stamp(&pos)) {
            return Ok(Barrier::Unchanged);
        }
    }
    let _ = std::fs::remove_file(&state);
    let (barrier, pos) =
        barrier_recorded_in(records, path, || std::fs::read_to_string(log_position).ok())?;
    if let (Barrier::Made { .. }, Some(Some(pos)), Some(_)) = (barrier, pos, mount) {
        // Written after the thaw, from what was read while frozen.
        let _ = std::fs::write(&state, stamp(&pos));
    }
    Ok(barrier)
}

/// The unique id of the mount `path` is on (`statx` `STATX_MNT_ID_UNIQUE`, never reused
/// within a boot), when the kernel has it.
fn unique_mount_id(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: all-zero is a valid `struct statx`; `c` is a NUL-terminated path.
    let mut stx: nix::libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        nix::libc::statx(
            nix::libc::AT_FDCWD,
            c.as_ptr(),
            0,
            nix::libc::STATX_MNT_ID_UNIQUE,
            &mut stx,
        )
    };
    (rc == 0 && stx.stx_mask & nix::libc::STATX_MNT_ID_UNIQUE != 0).then_some(stx.stx_mnt_id)
}

/// The barrier, with the records in `records`; `while_frozen` runs between `FIFREEZE`
/// and `FITHAW` (it must not touch the frozen filesystem) and its value comes back when
/// the barrier was made.
fn barrier_recorded_in<T>(
    records: &Path,
    path: &Path,
    while_frozen: impl FnOnce() -> T,
) -> Result<(Barrier, Option<T>), FreezeError> {
    let f = std::fs::File::open(path).map_err(io(path))?;
    let dev = f.metadata().map_err(io(path))?.dev();
    trusted_dir(records)?;
    let _ = reclaim_dead_in(records);
    if std::fs::metadata(records).map_err(io(records))?.dev() == dev {
        return Err(FreezeError::RecordOnSameFilesystem {
            records: records.to_path_buf(),
            path: path.to_path_buf(),
        });
    }
    // One barrier at a time in a process: the held signals are process-wide.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let record = records.join(super::trace::own_tag());
    let text = format!(
        "{}:{}\n",
        nix::sys::stat::major(dev),
        nix::sys::stat::minor(dev)
    );
    std::fs::write(&record, text).map_err(io(&record))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    let held = HeldSignals::hold();
    let t0 = Instant::now();
    // SAFETY: FIFREEZE and FITHAW take no argument the kernel reads; `fd` is open.
    let frozen = unsafe { fifreeze(fd, std::ptr::null_mut()) };
    let result = match frozen {
        Err(nix::Error::EBUSY) => Ok((Barrier::AlreadyFrozen, None)),
        Err(source) => Err(FreezeError::Freeze {
            path: path.to_path_buf(),
            source,
        }),
        Ok(_) => match (while_frozen(), unsafe { fithaw(fd, std::ptr::null_mut()) }) {
            (t, Ok(_)) => Ok((Barrier::Made { took: t0.elapsed() }, Some(t))),
            (_, Err(source)) => Err(FreezeError::Thaw {
                path: path.to_path_buf(),
                source,
            }),
        },
    };
    // Kept when the thaw failed: the next reclaim tries again once this process is gone.
    if !matches!(result, Err(FreezeError::Thaw { .. })) {
        let _ = std::fs::remove_file(&record);
    }
    drop(held);
    result
}

/// Make `dir` if needed (root's, mode 0700) and refuse one that another user could have
/// prepared: not a directory (a symlink is not followed), not root's, or writable by
/// group or others.
fn trusted_dir(dir: &Path) -> Result<(), FreezeError> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(dir)(e)),
    }
    let m = std::fs::symlink_metadata(dir).map_err(io(dir))?;
    let reason = if !m.is_dir() {
        Some("not a directory")
    } else if m.uid() != 0 {
        Some("not owned by root")
    } else if m.mode() & 0o022 != 0 {
        Some("writable by group or others")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(FreezeError::Untrusted {
            path: dir.to_path_buf(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Thaw the filesystems that fslab processes, now gone, left frozen (their records are
/// in [`record_dir`]); the mount points thawed. A record whose filesystem is no longer
/// mounted, or is no longer frozen, is removed without more.
pub fn reclaim_dead() -> Result<Vec<PathBuf>, FreezeError> {
    let dir = record_dir();
    if std::fs::symlink_metadata(&dir).is_err() {
        return Ok(Vec::new());
    }
    trusted_dir(&dir)?;
    reclaim_dead_in(&dir)
}

fn reclaim_dead_in(dir: &Path) -> Result<Vec<PathBuf>, FreezeError> {
    let mut thawed = Vec::new();
    let mut mounts: Option<Vec<super::MountEntry>> = None;
    for e in std::fs::read_dir(dir).map_err(io(dir))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if super::trace::tag_owner_dead(&name) != Some(true) {
            continue;
        }
        let path = e.path();
        // Only root's own regular files are believed (the directory is root's alone).
        let believed = std::fs::symlink_metadata(&path)
            .is_ok_and(|m| m.is_file() && m.uid() == 0 && m.len() < 64);
        let devno = believed
            .then(|| std::fs::read_to_string(&path).ok())
            .flatten()
            .and_then(|t| parse_devno(&t));
        if let Some((major, minor)) = devno {
            let mounts = mounts.get_or_insert_with(super::mounts);
            let want = nix::sys::stat::makedev(major, minor);
            for m in mounts.iter().filter(|m| m.devno == Some((major, minor))) {
                let Ok(f) = std::fs::File::open(&m.mount_point) else {
                    continue;
                };
                if !f.metadata().is_ok_and(|md| md.dev() == want) {
                    continue;
                }
                let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
                // SAFETY: as in `barrier_recorded_in`. EINVAL: not frozen (any more).
                if unsafe { fithaw(fd, std::ptr::null_mut()) }.is_ok() {
                    thawed.push(m.mount_point.clone());
                }
                break;
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    Ok(thawed)
}

/// `major:minor` as a record holds it.
fn parse_devno(text: &str) -> Option<(u64, u64)> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The signal that came while [`HeldSignals`] held them back (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn note_signal(sig: nix::libc::c_int) {
    PENDING.store(sig, Ordering::SeqCst);
}

const HELD: [nix::sys::signal::Signal; 5] = {
    use nix::sys::signal::Signal::*;
    [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]
};

/// The signals that would kill or stop the process, noted instead of acted on until
/// dropped; then the old dispositions come back and a noted signal is raised again.
struct HeldSignals {
    old: Vec<(nix::sys::signal::Signal, nix::sys::signal::SigAction)>,
}

impl HeldSignals {
    fn hold() -> HeldSignals {
        use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet};
        PENDING.store(0, Ordering::SeqCst);
        let act = SigAction::new(
            SigHandler::Handler(note_signal),
            SaFlags::SA_RESTART,
            SigSet::all(),
        );
        let old = HELD
            .iter()
            // SAFETY: the handler only stores to an atomic (async-signal-safe).
            .filter_map(|&s| unsafe { sigaction(s, &act) }.ok().map(|o| (s, o)))
            .collect();
        HeldSignals { old }
    }
}

impl Drop for HeldSignals {
    fn drop(&mut self) {
        for (s, old) in &self.old {
            // SAFETY: restores the disposition that was there before.
            let _ = unsafe { nix::sys::signal::sigaction(*s, old) };
        }
        let sig = PENDING.swap(0, Ordering::SeqCst);
        if let Ok(s) = nix::sys::signal::Signal::try_from(sig) {
            let _ = nix::sys::signal::raise(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mount_has_its_own_unique_id() {
        let (root, proc_) = (
            unique_mount_id(Path::new("/")),
            unique_mount_id(Path::new("/proc")),
        );
        if root.is_none() {
            eprintln!("SKIPPED: this kernel has no STATX_MNT_ID_UNIQUE (before 6.8)");
            return;
        }
        assert_eq!(root, unique_mount_id(Path::new("/")));
        assert!(proc_.is_some() && proc_ != root, "{root:?} {proc_:?}");
        assert_eq!(unique_mount_id(Path::new("/no/such/path")), None);
    }

    #[test]
    fn records_hold_a_device_number() {
        assert_eq!(parse_devno("7:3\n"), Some((7, 3)));
        assert_eq!(parse_devno("259:12"), Some((259, 12)));
        assert_eq!(parse_devno("7"), None);
        assert_eq!(parse_devno("a:b"), None);
    }

    #[test]
    fn a_record_directory_another_user_could_prepare_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let reason = |p: &Path| match trusted_dir(p) {
            Err(FreezeError::Untrusted { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        // Made when missing, mode 0700.
        let fresh = t.path().join("fresh");
        let root = crate::devices::test_needs_root(
            "a_record_directory_another_user_could_prepare_is_refused",
        );
        if root {
            trusted_dir(&fresh).unwrap();
            let m = std::fs::metadata(&fresh).unwrap();
            assert_eq!(m.mode() & 0o777, 0o700);
        }
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        if root {
            assert_eq!(reason(&open), "writable by group or others");
            let theirs = t.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            assert_eq!(reason(&theirs), "not owned by root");
        }
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&fresh, &link).unwrap();
        assert_eq!(reason(&link), "not a directory");
    }

    #[test]
    fn a_signal_that_comes_while_held_is_raised_after() {
        use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
        static SEEN: AtomicI32 = AtomicI32::new(0);
        extern "C" fn seen(sig: nix::libc::c_int) {
            SEEN.store(sig, Ordering::SeqCst);
        }
        let act = SigAction::new(SigHandler::Handler(seen), SaFlags::empty(), SigSet::empty());
        // SAFETY: the handler only stores to an atomic.
        let before = unsafe { sigaction(Signal::SIGHUP, &act) }.unwrap();
        {
            let _held = HeldSignals::hold();
            nix::sys::signal::raise(Signal::SIGHUP).unwrap();
            assert_eq!(SEEN.load(Ordering::SeqCst), 0, "held back");
        }
        assert_eq!(
            SEEN.load(Ordering::SeqCst),
            Signal::SIGHUP as i32,
            "raised after"
        );
        // SAFETY: puts back what the test found.
        unsafe { sigaction(Signal::SIGHUP, &before) }.unwrap();
    }
}
