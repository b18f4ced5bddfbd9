//! Loop devices, through util-linux `losetup`.

use super::workdir::FileId;
use super::DeviceError;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct LoopDevice {
    pub device: PathBuf,
    pub image: PathBuf,
}

/// Attach `image` to a free loop device.
pub fn attach(image: &Path) -> Result<LoopDevice, DeviceError> {
    let out = super::own_group(duct::cmd!("losetup", "--find", "--show", image))
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .map_err(|e| DeviceError::Command {
            command: format!("losetup --find --show {}", image.display()),
            message: e.to_string(),
        })?;
    let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !device.starts_with("/dev/loop") {
        return Err(DeviceError::Command {
            command: format!("losetup --find --show {}", image.display()),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(LoopDevice {
        device: PathBuf::from(device),
        image: image.to_path_buf(),
    })
}

/// The backing file of a loop device, from sysfs (None when it is not attached).
pub fn loop_backing_file(device: &Path) -> Option<PathBuf> {
    let name = device.file_name()?.to_str()?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let t = text.trim().trim_end_matches(" (deleted)");
    Some(PathBuf::from(t))
}

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

nix::ioctl_read_bad!(loop_get_status64, 0x4C05, LoopInfo64);

/// The identity (device and inode numbers) of a loop device's backing file, from the
/// kernel (`LOOP_GET_STATUS64`); None when it is not attached. Unlike the backing
/// file's path, this does not depend on how the path was spelled.
pub fn backing_id(device: &Path) -> Option<FileId> {
    status_id(&std::fs::File::open(device).ok()?)
}

/// [`backing_id`] through a descriptor already open on the device.
fn status_id(f: &std::fs::File) -> Option<FileId> {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero loop_info64 is valid; the kernel fills it.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the call, and `info` has the kernel's layout.
    unsafe { loop_get_status64(f.as_raw_fd(), &mut info) }.ok()?;
    Some(FileId {
        dev: info.lo_device,
        ino: info.lo_inode,
    })
}

nix::ioctl_none_bad!(loop_clr_fd, 0x4C01);

/// Detach `device`, but only while it is still backed by the file `image`. A loop
/// device number is reused by the next `losetup --find` as soon as it is free, so the
/// check and the detach go through one open descriptor: while fslab holds it, the
/// device cannot be freed and handed to someone else between the two (with `losetup
/// -d` by path, a retry after a deferred detach could free another run's new device).
/// A device that stays attached (a busy device only detaches on its last close) is an
/// error.
pub fn detach(device: &Path, image: FileId) -> Result<(), DeviceError> {
    let mut last = None;
    for attempt in 0..10 {
        match clear_if_ours(device, image) {
            Clear::NotOurs => return Ok(()),
            Clear::Asked => {}
            Clear::Failed(e) => last = Some(e),
        }
        // The kernel detaches a busy device on its last close (ours is closed now).
        if backing_id(device) != Some(image) {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50 * (attempt + 1)));
    }
    Err(DeviceError::Release {
        what: device.display().to_string(),
        message: match last {
            Some(e) => format!("it stays attached: LOOP_CLR_FD: {e}"),
            None => "it stays attached (still in use: a mount or an open file holds it)".into(),
        },
    })
}

enum Clear {
    NotOurs,
    Asked,
    Failed(nix::Error),
}

/// Open `device`, and ask the kernel to detach it only if, through that descriptor, it
/// is backed by `image`.
fn clear_if_ours(device: &Path, image: FileId) -> Clear {
    use std::os::fd::AsRawFd;
    let Ok(f) = std::fs::File::open(device) else {
        return Clear::NotOurs;
    };
    if status_id(&f) != Some(image) {
        return Clear::NotOurs;
    }
    // SAFETY: LOOP_CLR_FD takes no argument; the descriptor is open for the call.
    match unsafe { loop_clr_fd(f.as_raw_fd()) } {
        Ok(_) => Clear::Asked,
        Err(e) => Clear::Failed(e),
    }
}

/// Every attached loop device whose backing file is under `dir`.
pub fn loops_backed_under(dir: &Path) -> Vec<LoopDevice> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with("loop") {
            continue;
        }
        let dev = PathBuf::from(format!("/dev/{name}"));
        if let Some(b) = loop_backing_file(&dev) {
            if b.starts_with(dir) {
                out.push(LoopDevice {
                    device: dev,
                    image: b,
                });
            }
        }
    }
    out
}
