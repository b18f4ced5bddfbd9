//! Scratch devices: image files, loop devices, tmpfs, mounts; the safety rules; the
//! ownership record that lets a later run reclaim what a killed run left behind.
//!
//! By default fslab formats or mounts only block devices that it attached itself to
//! image files under its own work directory; a real device only when the user maps one
//! with `--device` and lists it as a scratch device, and it passes the checks of
//! [`policy`]. Everything it attaches or mounts is listed in an ownership record
//! (`<work>/owned/<pid>.json`) *before* it is used, and released by [`PointResources`]'
//! `Drop` (success, error, panic) or by [`reclaim`] in the next run (SIGKILL, power
//! cut).

pub mod cgroup;
pub mod freeze;
mod loopdev;
pub mod medium;
mod mounts;
mod ownership;
pub mod policy;
pub mod throttle;
pub mod trace;
mod workdir;

/// For a unit test that needs root: true as root; otherwise it fails when
/// `FSLAB_REQUIRE_ROOT` is set (scripts/test.sh sets it), else says SKIPPED and the
/// caller returns. The integration tests' `require::root` says the same.
#[cfg(test)]
mod word_tests;

#[cfg(test)]
pub(crate) fn test_needs_root(test: &str) -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var_os("FSLAB_REQUIRE_ROOT").is_none(),
        "FSLAB_REQUIRE_ROOT is set but {test} cannot run here: needs root"
    );
    eprintln!("SKIPPED: {test}: needs root (set FSLAB_REQUIRE_ROOT=1 to fail instead)");
    false
}

pub use cgroup::PointCgroup;
pub use loopdev::{attach, backing_id, detach, loop_backing_file, loops_backed_under, LoopDevice};
pub use mounts::{mounts, unmount, MountEntry};
pub use ownership::{reclaim, OwnershipRecord, Reclaimed};
pub use workdir::{FileId, WorkDir, WorkLock, DEFAULT_WORK_DIR};

use crate::spec::{Backing, DevicePlan};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{command}` failed: {message}")]
    Command { command: String, message: String },
    #[error("refusing to use {device}: {reason}")]
    Refused {
        device: String,
        reason: Box<policy::Refusal>,
    },
    #[error("could not release {what}: {message}")]
    Release { what: String, message: String },
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("--device {given}: {message}")]
    Mapping { given: String, message: String },
    #[error("device {device}: {what} is not available in a guest (its devices are image files the guest kernel sees as block devices)")]
    NotInGuest { device: String, what: &'static str },
    #[error("refusing work directory {path}: {reason} (set another with --work-dir or $FSLAB_WORK_DIR; it must be owned by root and writable by root alone)")]
    UntrustedWorkDir { path: PathBuf, reason: String },
}

fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> DeviceError + 'a {
    move |source| DeviceError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

pub use crate::spec::HARMLESS_DEV_PATHS;

/// One provisioned device of a point.
#[derive(Debug, Clone)]
pub struct ProvisionedDevice {
    pub name: String,
    /// The image file (empty for a mapped device).
    pub image: PathBuf,
    /// The image file's identity (None for a mapped device, and for a guest's device:
    /// neither is attached to a loop device by fslab).
    pub image_id: Option<FileId>,
    pub device: PathBuf,
    pub size_bytes: u64,
    pub backing: Backing,
    /// For a real device mapped with `--device NAME=PATH`: the PATH the user gave.
    /// fslab formats and mounts it but never detaches or deletes it.
    pub mapped: Option<PathBuf>,
}

/// Everything one matrix point's replicate holds on the machine: its directory, devices
/// (image files, loop devices, tmpfs), mounts, its cgroup and the disk-model servers of
/// its images. Dropping it releases everything: the cgroup (every process killed), the
/// served images, mounts under its directory or of its devices (deepest first), loop
/// devices, tmpfs, image files.
#[derive(Debug)]
pub struct PointResources {
    dir: PathBuf,
    /// The work directory's filesystem: deletion never leaves it.
    work_dev: u64,
    devices: Vec<ProvisionedDevice>,
    tmpfs: Vec<PathBuf>,
    cgroup: PointCgroup,
    /// Images served through the disk model (released before the mounts and loops).
    served: Vec<medium::ServedImage>,
    record: OwnershipRecord,
    released: bool,
}

impl PointResources {
    /// Create `dir` (with `mnt/` and `work/`), and for each planned device a sparse image
    /// file (on a fresh tmpfs for `backing: tmpfs`) attached to a loop device.
    pub fn provision(
        work: &WorkDir,
        dir: PathBuf,
        plans: &[DevicePlan],
    ) -> Result<PointResources, DeviceError> {
        Self::provision_mapped(work, dir, plans, &[])
    }

    /// As [`provision`](Self::provision), but a planned device named in `mapped` is the
    /// user's real device instead of a loop device (checked again here, right before
    /// use, by [`policy::recheck`]).
    ///
    /// The work directory's lock is held from writing the record until every device is
    /// attached and recorded, so that a concurrent reclaim never sees this point
    /// half-way. The point's cgroup is recorded, then made.
    pub fn provision_mapped(
        work: &WorkDir,
        dir: PathBuf,
        plans: &[DevicePlan],
        mapped: &[policy::MappedDevice],
    ) -> Result<PointResources, DeviceError> {
        Self::provision_with(work, dir, plans, mapped, None)
    }

    /// For a point that runs in a guest kernel: the directory, cgroup and ownership
    /// record as [`provision`](Self::provision) makes them, and for each planned device
    /// an image file only, attached to no loop device. Device `n` is named
    /// `guest_device(n)` (the guest's name for its `n`th disk, `/dev/ubda`, …): fslab
    /// never opens that path on the host. Mapped devices, disk models and throttles are
    /// refused (they are host block devices).
    pub fn provision_images(
        work: &WorkDir,
        dir: PathBuf,
        plans: &[DevicePlan],
        guest_device: &dyn Fn(usize) -> PathBuf,
    ) -> Result<PointResources, DeviceError> {
        Self::provision_with(work, dir, plans, &[], Some(guest_device))
    }

    fn provision_with(
        work: &WorkDir,
        dir: PathBuf,
        plans: &[DevicePlan],
        mapped: &[policy::MappedDevice],
        guest_device: Option<&dyn Fn(usize) -> PathBuf>,
    ) -> Result<PointResources, DeviceError> {
        if guest_device.is_some() {
            for plan in plans {
                let refuse = |what| DeviceError::NotInGuest {
                    device: plan.name.clone(),
                    what,
                };
                if plan.medium.is_some_and(|m| m.params().is_some()) {
                    return Err(refuse("a disk model (`medium:`)"));
                }
                if plan.throttle.is_some_and(|t| !t.is_empty()) {
                    return Err(refuse("a throttle (`throttle:`)"));
                }
            }
        }
        let _lock = work.lock()?;
        let throttled = plans
            .iter()
            .any(|p| p.throttle.is_some_and(|t| !t.is_empty()));
        let record =
            OwnershipRecord::create(work, &dir, |name| cgroup::planned_dirs_for(name, throttled))?;
        let cg_dirs = record.cgroups().to_vec();
        let cgroup = match PointCgroup::create(&cg_dirs) {
            Ok(c) => c,
            Err(e) => {
                let _ = cgroup::kill_and_remove(&cg_dirs);
                record.remove();
                return Err(e);
            }
        };
        let mut this = PointResources {
            dir,
            work_dev: work.id().dev,
            devices: Vec::new(),
            tmpfs: Vec::new(),
            cgroup,
            served: Vec::new(),
            record,
            released: false,
        };
        // The point's directory is new and root's alone.
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&this.dir)
                .map_err(io_err("create", &this.dir))?;
        }
        for sub in ["mnt", "work", "images"] {
            let p = this.dir.join(sub);
            std::fs::create_dir_all(&p).map_err(io_err("create", &p))?;
        }
        for plan in plans {
            if let Some(m) = mapped.iter().find(|m| m.name == plan.name) {
                policy::recheck(m)?;
                policy::check_size(m, plan.size_bytes).map_err(|reason| DeviceError::Refused {
                    device: m.given.display().to_string(),
                    reason: Box::new(reason),
                })?;
                this.record.add_mapped(&m.device)?;
                this.devices.push(ProvisionedDevice {
                    name: plan.name.clone(),
                    image: PathBuf::new(),
                    image_id: None,
                    device: m.device.clone(),
                    size_bytes: m.size_bytes,
                    backing: plan.backing,
                    mapped: Some(m.given.clone()),
                });
                continue;
            }
            let image_dir = match plan.backing {
                Backing::File => this.dir.join("images"),
                Backing::Tmpfs => {
                    let at = this.dir.join(format!("tmpfs-{}", plan.name));
                    std::fs::create_dir_all(&at).map_err(io_err("create", &at))?;
                    this.record.add_tmpfs(&at)?;
                    mounts::mount_tmpfs(&at, plan.size_bytes + (16 << 20))?;
                    this.tmpfs.push(at.clone());
                    at
                }
            };
            let image = image_dir.join(format!("{}.img", plan.name));
            let f = std::fs::File::create(&image).map_err(io_err("create", &image))?;
            f.set_len(plan.size_bytes).map_err(io_err("size", &image))?;
            drop(f);
            this.record.add_image(&image)?;
            if let Some(name) = guest_device {
                let device = name(this.devices.len());
                this.devices.push(ProvisionedDevice {
                    name: plan.name.clone(),
                    image,
                    image_id: None,
                    device,
                    size_bytes: plan.size_bytes,
                    backing: plan.backing,
                    mapped: None,
                });
                continue;
            }
            // With a medium, the loop device sits on the served file, not the image.
            // `medium: none` is no model: the loop device sits on the image, as without.
            let backing = match plan.medium.filter(|m| m.params().is_some()) {
                Some(m) => {
                    let at = this.dir.join(format!("medium-{}", plan.name));
                    this.served
                        .push(medium::ServedImage::start(&image, &m, &at)?);
                    this.served[this.served.len() - 1].path().to_path_buf()
                }
                None => image.clone(),
            };
            let image_id = FileId::of(&backing).map_err(io_err("stat", &backing))?;
            let lo = attach(&backing)?;
            if let Err(e) = this.record.add_loop(&lo.device, &backing, image_id) {
                // Unrecorded, it would outlive a crash: release it now.
                let _ = detach(&lo.device, image_id);
                return Err(e);
            }
            this.devices.push(ProvisionedDevice {
                name: plan.name.clone(),
                image,
                image_id: Some(image_id),
                device: lo.device,
                size_bytes: plan.size_bytes,
                backing: plan.backing,
                mapped: None,
            });
            if let Some(t) = plan.throttle.filter(|t| !t.is_empty()) {
                let dev = &this.devices[this.devices.len() - 1].device;
                throttle::apply_to_cgroup(this.cgroup.dirs(), dev, &t)?;
            }
        }
        Ok(this)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn mnt(&self) -> PathBuf {
        self.dir.join("mnt")
    }
    pub fn work(&self) -> PathBuf {
        self.dir.join("work")
    }
    /// The point's cgroup: every command of the point runs in it.
    pub fn cgroup(&self) -> &PointCgroup {
        &self.cgroup
    }
    pub fn devices(&self) -> &[ProvisionedDevice] {
        &self.devices
    }
    pub fn device(&self, name: &str) -> Option<&ProvisionedDevice> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// Flush this point's own data: `syncfs` on every filesystem mounted under the
    /// point's directory, then `fdatasync` of its image files (so that what the loop
    /// devices wrote is on disk too). Not `sync()`: a global sync waits for every other
    /// filesystem on the machine, among them other runs' devices, and a modelled slow
    /// disk can hold it for minutes. Returns how many filesystems were flushed.
    pub fn sync_own(&self) -> Result<usize, DeviceError> {
        use std::os::fd::AsRawFd;
        let mut n = 0;
        for m in mounts()
            .into_iter()
            .filter(|m| m.mount_point.starts_with(&self.dir))
        {
            let f = std::fs::File::open(&m.mount_point).map_err(io_err("open", &m.mount_point))?;
            // SAFETY: syncfs takes a valid open descriptor, held by `f` for the call.
            if unsafe { nix::libc::syncfs(f.as_raw_fd()) } != 0 {
                return Err(io_err("syncfs", &m.mount_point)(
                    std::io::Error::last_os_error(),
                ));
            }
            n += 1;
        }
        for d in self.devices.iter().filter(|d| d.mapped.is_none()) {
            if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&d.image) {
                f.sync_data().map_err(io_err("fdatasync", &d.image))?;
            }
        }
        Ok(n)
    }

    /// Is `path` one of this point's devices?
    pub fn owns_device(&self, path: &Path) -> bool {
        self.devices.iter().any(|d| d.device == path)
    }

    /// Refuse a command word that names a device path other than this point's devices
    /// (the loop devices fslab created and the real devices the user mapped).
    pub fn check_word(&self, word: &str) -> Result<(), DeviceError> {
        // Also catch `rtdev=/dev/x`, `-llogdev=/dev/x`, `of=/dev/x` and similar, and a
        // path anywhere that is a block device (a symbolic link to one, a node made
        // outside /dev).
        use crate::spec::devpath::{absolute_paths, dev_paths, is_harmless};
        let refuse = |path: &str| DeviceError::Refused {
            device: path.to_string(),
            reason: Box::new(policy::Refusal::NotThisPointsDevice),
        };
        for path in dev_paths(word) {
            if !is_harmless(path) && !self.owns_device(Path::new(path)) {
                return Err(refuse(path));
            }
        }
        for path in absolute_paths(word) {
            let p = Path::new(path);
            if crate::host::path_kind(p) == crate::host::PathKind::BlockDevice
                && !self.owns_device(p)
                && !std::fs::canonicalize(p).is_ok_and(|c| self.owns_device(&c))
            {
                return Err(refuse(path));
            }
        }
        Ok(())
    }

    /// Mount one of this point's devices.
    pub fn mount(
        &self,
        device: &Path,
        at: &Path,
        fstype: Option<&str>,
        options: Option<&str>,
    ) -> Result<(), DeviceError> {
        if !self.owns_device(device) {
            return Err(DeviceError::Refused {
                device: device.display().to_string(),
                reason: Box::new(policy::Refusal::NotThisPointsDevice),
            });
        }
        std::fs::create_dir_all(at).map_err(io_err("create", at))?;
        let mut args: Vec<String> = Vec::new();
        if let Some(t) = fstype {
            args.extend(["-t".into(), t.into()]);
        }
        if let Some(o) = options {
            args.extend(["-o".into(), o.into()]);
        }
        args.push(device.display().to_string());
        args.push(at.display().to_string());
        run_tool("mount", &args)
    }

    /// Release everything; safe to call more than once. In order: every process left
    /// in the point's cgroup, mounts (deepest first; a busy one is an error, never
    /// detached lazily), loop devices (checked detached), the tmpfs that backed
    /// images, the point's directory (never across a filesystem boundary), and the
    /// ownership record last. On error the record stays for `fslab cleanup`.
    pub fn release(&mut self) -> Result<(), DeviceError> {
        if self.released {
            return Ok(());
        }
        let mut first_err = None;
        if let Err(e) = self.cgroup.remove() {
            first_err.get_or_insert(e);
        }
        // Served images next: each unmounts what is mounted from its loop device,
        // detaches it, then stops its FUSE server.
        for s in std::mem::take(&mut self.served).into_iter().rev() {
            if let Err(e) = s.release() {
                first_err.get_or_insert(e);
            }
        }
        let loops: Vec<PathBuf> = self.devices.iter().map(|d| d.device.clone()).collect();
        if let Err(e) = mounts::unmount_all_under(&self.dir, &loops, &self.tmpfs) {
            first_err.get_or_insert(e);
        }
        // Mapped devices are the user's: unmounted above, never detached.
        for d in self.devices.iter().rev() {
            if let Some(id) = d.image_id {
                if let Err(e) = detach(&d.device, id) {
                    first_err.get_or_insert(e);
                }
            }
        }
        for t in self.tmpfs.iter().rev() {
            if let Err(e) = unmount(t) {
                first_err.get_or_insert(e);
            }
        }
        if first_err.is_none() {
            // Images and scratch data go; the ownership record last.
            let left = workdir::remove_tree(&self.dir, self.work_dev);
            if !left.is_empty() {
                first_err.get_or_insert(DeviceError::Release {
                    what: self.dir.display().to_string(),
                    message: left.join("; "),
                });
            }
        }
        match first_err {
            None => {
                self.record.remove();
                self.released = true;
                Ok(())
            }
            Some(e) => Err(e),
        }
    }
}

impl Drop for PointResources {
    fn drop(&mut self) {
        if !self.released {
            if let Err(e) = self.release() {
                eprintln!(
                    "fslab: warning: {e}; the next `fslab run` or `fslab cleanup` will retry (record {})",
                    self.record.path().display()
                );
            }
        }
    }
}

/// Tools run in their own process group, so that a terminal's Ctrl-C reaches fslab alone
/// (it then finishes the tool, e.g. a half-done `losetup`, and releases everything).
pub(crate) use crate::host::tools::own_group;

/// Run a system tool, failing with its stderr.
pub(crate) fn run_tool(program: &str, args: &[String]) -> Result<(), DeviceError> {
    let out = own_group(duct::cmd(program, args))
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .map_err(|e| DeviceError::Command {
            command: format!("{program} {}", args.join(" ")),
            message: e.to_string(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(DeviceError::Command {
            command: format!("{program} {}", args.join(" ")),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
