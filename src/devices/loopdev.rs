//! Loop devices, through util-linux `losetup`.

use super::{run_tool, DeviceError};
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

/// Detach `device`, but only while it is still backed by `image` (a loop device number
/// can be reused by someone else once it is free).
pub fn detach(device: &Path, image: &Path) -> Result<(), DeviceError> {
    match loop_backing_file(device) {
        Some(b) if b == image => {}
        _ => return Ok(()),
    }
    let mut last = None;
    for attempt in 0..20 {
        match run_tool("losetup", &["-d".into(), device.display().to_string()]) {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
        if loop_backing_file(device).is_none_or(|b| b != image) {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50 * (attempt + 1)));
    }
    Err(last.unwrap_or(DeviceError::Release {
        what: device.display().to_string(),
        message: "busy".into(),
    }))
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
