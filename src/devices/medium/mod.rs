//! Modelled media: an image file served through fslab's own FUSE filesystem, which charges
//! every request the time a disk would take ([`model`]), with the loop device attached to
//! the served file instead of the image.
//!
//! ```text
//! /dev/loopN ──▶ <mount_dir>/image (FUSE, direct_io) ──▶ ServedFs: model sleep + pread/pwrite ──▶ <point>/<name>.img
//! ```
//!
//! **In-process server.** The FUSE session runs on a thread of the fslab process
//! (`fuser::spawn_mount2`, pure-Rust mount: as root, mount(2) on `/dev/fuse`, no libfuse and
//! no fusermount). Chosen over a child `fslab medium-serve` process because
//! - a SIGKILLed fslab takes its server with it: nothing is left running, only a dead mount
//!   ("Transport endpoint is not connected") that [`reclaim_dead`] detaches;
//! - the server's CPU time is not a child's, so it never leaks into a step's
//!   `RUSAGE_CHILDREN`, and it is outside the point's cgroup (never throttled);
//! - the library needs no path to the `fslab` binary (tests run as other executables).
//!
//! The cost: fslab itself must not block on the served device from the thread that would
//! have to serve it (it does not: steps run as child processes, and the server has its
//! own thread).
//!
//! **Order of release.** The loop device holds the served file open, so it goes first:
//! [`ServedImage::release`] detaches any loop device still backed by its served file, then
//! aborts the FUSE connection, unmounts (never lazily) and joins the server thread.
//!
//! **Names for reclaim.** The mount's source is `fslab-medium-<pid>-<start ticks>`, so a
//! later run can tell a dead server's mount from a live one without any record
//! ([`reclaim_dead`]).

pub mod model;
mod serve;

pub use model::{Access, Charge, DiskModel, DiskParams, Medium, ModelError, NamedMedium};
pub use serve::{ServeStats, SERVED_NAME};

use super::{loop_backing_file, loops_backed_under, DeviceError};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The prefix of a served image's FUSE mount source.
pub const SOURCE_PREFIX: &str = "fslab-medium-";

/// One image served through the model. Attach the loop device to [`ServedImage::path`].
/// Dropping it releases it (best effort); call [`ServedImage::release`] to see errors.
#[derive(Debug)]
pub struct ServedImage {
    mount_dir: PathBuf,
    served: PathBuf,
    image: PathBuf,
    medium: Medium,
    /// `/sys/fs/fuse/connections/<N>`: N is the minor number of the mount's st_dev.
    connection: Option<u64>,
    session: Option<fuser::BackgroundSession>,
    stats: Arc<ServeStats>,
}

fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields after ')' are plain.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn own_source() -> String {
    let pid = std::process::id();
    format!("{SOURCE_PREFIX}{pid}-{}", start_ticks(pid).unwrap_or(0))
}

/// Whether the process named in a mount source (`fslab-medium-<pid>-<ticks>`) still runs.
/// None when the source is not one of ours.
pub fn source_owner_alive(source: &str) -> Option<bool> {
    let rest = source.strip_prefix(SOURCE_PREFIX)?;
    let (pid, ticks) = rest.split_once('-')?;
    let pid: u32 = pid.parse().ok()?;
    let ticks: u64 = ticks.parse().ok()?;
    Some(match start_ticks(pid) {
        Some(t) => ticks == 0 || t == ticks,
        None => false,
    })
}

impl ServedImage {
    /// Serve `image` (an existing file; its length is the device's size) at
    /// `<mount_dir>/image`, charging each request `medium`'s time. `mount_dir` is created
    /// if missing and must be empty.
    pub fn start(
        image: &Path,
        medium: &Medium,
        mount_dir: &Path,
    ) -> Result<ServedImage, DeviceError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(image)
            .map_err(super::io_err("open image", image))?;
        let size = file
            .metadata()
            .map_err(super::io_err("stat image", image))?
            .len();
        let model = match medium.params() {
            Some(p) => Some(DiskModel::new(p, size).map_err(|e| DeviceError::Config {
                path: image.to_path_buf(),
                message: format!("medium {}: {e}", medium.label()),
            })?),
            None => None,
        };
        std::fs::create_dir_all(mount_dir).map_err(super::io_err("create", mount_dir))?;
        let stats = Arc::new(ServeStats::default());
        let fs = serve::ServedFs::new(file, size, model, stats.clone());
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName(own_source()),
            fuser::MountOption::Subtype("fslab".into()),
            fuser::MountOption::NoExec,
            fuser::MountOption::NoAtime,
        ];
        // One thread: one head, requests in arrival order.
        config.n_threads = Some(1);
        let session =
            fuser::spawn_mount2(fs, mount_dir, &config).map_err(|e| DeviceError::Command {
                command: format!("FUSE mount at {}", mount_dir.display()),
                message: format!("{e} (is /dev/fuse there and are we root?)"),
            })?;
        let connection = std::fs::metadata(mount_dir).ok().map(|m| {
            let dev = m.dev();
            nix::sys::stat::minor(dev)
        });
        let served = mount_dir.join(SERVED_NAME);
        Ok(ServedImage {
            mount_dir: mount_dir.to_path_buf(),
            served,
            image: image.to_path_buf(),
            medium: *medium,
            connection,
            session: Some(session),
            stats,
        })
    }

    /// The file to attach the loop device to.
    pub fn path(&self) -> &Path {
        &self.served
    }

    pub fn mount_dir(&self) -> &Path {
        &self.mount_dir
    }

    pub fn image(&self) -> &Path {
        &self.image
    }

    pub fn medium(&self) -> &Medium {
        &self.medium
    }

    pub fn stats(&self) -> &ServeStats {
        &self.stats
    }

    /// The model time charged so far, in seconds: the model's own clock (the host's time
    /// between requests is not in it).
    pub fn charged_s(&self) -> f64 {
        self.stats.charged_ns.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// Detach any loop device still on the served file, stop the server, unmount, remove
    /// the mount directory.
    pub fn release(mut self) -> Result<(), DeviceError> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<(), DeviceError> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        detach_loops_under(&self.mount_dir)?;
        if let Some(c) = self.connection {
            // Ends the session thread at once even if something still held the file.
            let _ = std::fs::write(format!("/sys/fs/fuse/connections/{c}/abort"), "1");
        }
        let res = session.umount_and_join();
        // The connection is aborted, so the thread is gone; a plain umount can still say
        // EBUSY for a moment (a closing opener): then retry a plain unmount.
        let still = super::mounts()
            .iter()
            .any(|m| m.mount_point == self.mount_dir);
        if still {
            umount_detach(&self.mount_dir)?;
        }
        let _ = std::fs::remove_dir(&self.mount_dir);
        // ENODEV from the aborted channel is the normal end of the session thread.
        match res {
            Ok(()) => Ok(()),
            Err(e)
                if [nix::errno::Errno::ENODEV, nix::errno::Errno::EBUSY]
                    .iter()
                    .any(|c| e.raw_os_error() == Some(*c as i32)) =>
            {
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => Ok(()),
            Err(e) => Err(DeviceError::Release {
                what: format!("FUSE server at {}", self.mount_dir.display()),
                message: e.to_string(),
            }),
        }
    }
}

impl Drop for ServedImage {
    fn drop(&mut self) {
        let _ = self.release_inner();
    }
}

fn umount_detach(path: &Path) -> Result<(), DeviceError> {
    // Never lazily: the connection is aborted and no loop device holds the file, so a
    // plain unmount succeeds once the last opener has closed (a moment at most).
    let mut last = None;
    for attempt in 0..20u64 {
        match nix::mount::umount(path) {
            Ok(()) => return Ok(()),
            Err(nix::errno::Errno::EINVAL) | Err(nix::errno::Errno::ENOENT) => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(25 * (attempt + 1)));
    }
    Err(DeviceError::Release {
        what: path.display().to_string(),
        message: format!(
            "umount: {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        ),
    })
}

/// Detach the loop devices whose backing file lies under `dir` (a served file of ours),
/// and wait until the kernel has let go of the file: `losetup -d` only marks a device
/// that is still open (udev probing it after a write) for release at its last close.
fn detach_loops_under(dir: &Path) -> Result<(), DeviceError> {
    for lo in loops_backed_under(dir) {
        // Our served file, so our device: unmount whatever is mounted from it first.
        super::mounts::unmount_all_under(
            Path::new("/nonexistent-fslab"),
            std::slice::from_ref(&lo.device),
            &[],
        )?;
        if let Some(id) = super::backing_id(&lo.device) {
            super::detach(&lo.device, id)?;
        }
    }
    for _ in 0..200 {
        if loops_backed_under(dir).is_empty() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    Err(DeviceError::Release {
        what: dir.display().to_string(),
        message: "a loop device is still attached to the served file after 5 s".into(),
    })
}

/// What [`reclaim_dead`] released.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReclaimedMedia {
    pub mounts: Vec<PathBuf>,
}

/// Release the FUSE mounts of served images whose fslab process is gone (SIGKILL, crash):
/// detach loop devices still backed by their served file, then unmount (never lazily).
/// Mounts of live fslab processes are left alone. Call it from reclaim before unmounting
/// the point's directory (a dead FUSE mount with a loop device on it is busy).
pub fn reclaim_dead() -> Result<ReclaimedMedia, DeviceError> {
    let mut done = ReclaimedMedia::default();
    let mut first_err = None;
    for m in super::mounts() {
        if !m.fstype.starts_with("fuse") || source_owner_alive(&m.source) != Some(false) {
            continue;
        }
        let r = detach_loops_under(&m.mount_point).and_then(|()| umount_detach(&m.mount_point));
        match r {
            Ok(()) => {
                let _ = std::fs::remove_dir(&m.mount_point);
                done.mounts.push(m.mount_point.clone());
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) if done.mounts.is_empty() => Err(e),
        _ => Ok(done),
    }
}

/// Whether `device` is a loop device attached to a served image (its backing file is a
/// file named `image` on one of our FUSE mounts).
pub fn is_served(device: &Path) -> bool {
    let Some(b) = loop_backing_file(device) else {
        return false;
    };
    super::mounts()
        .iter()
        .any(|m| m.source.starts_with(SOURCE_PREFIX) && b.parent() == Some(m.mount_point.as_path()))
}

nix::ioctl_none!(blkflsbuf, 0x12, 97);

/// Drop the page cache of a block device (`BLKFLSBUF`, like `blockdev --flushbufs`), so
/// that the next read reaches the model. The served file has no page cache (direct_io).
pub fn flush_device_cache(device: &Path) -> Result<(), DeviceError> {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(device).map_err(super::io_err("open", device))?;
    // SAFETY: BLKFLSBUF takes no argument; the fd is a valid open block device.
    unsafe { blkflsbuf(f.as_raw_fd()) }.map_err(|e| DeviceError::Io {
        action: "BLKFLSBUF",
        path: device.to_path_buf(),
        source: e.into(),
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_their_owner() {
        let own = own_source();
        assert!(own.starts_with(SOURCE_PREFIX));
        assert_eq!(source_owner_alive(&own), Some(true));
        // A pid that cannot exist (above pid_max's ceiling).
        assert_eq!(source_owner_alive("fslab-medium-4194305-12"), Some(false));
        // Our pid but another start time: a reused pid, not us.
        let pid = std::process::id();
        assert_eq!(
            source_owner_alive(&format!("fslab-medium-{pid}-1")),
            Some(false)
        );
        assert_eq!(source_owner_alive("/dev/fuse"), None);
        assert_eq!(source_owner_alive("fslab-medium-x-1"), None);
    }
}
