//! What the doctor asks of the machine, behind a trait so that the verdict logic can be
//! tested against a made-up host. [`SystemHost`] answers for the real one and caches
//! every answer (a plan asks about the same tool at every point).

use crate::devices::{self, PointDevices};
use crate::plan::DevicePlan;
use crate::spec::Backing;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A kernel configuration option as the running kernel was built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigValue {
    /// `=y`
    BuiltIn,
    /// `=m`
    Module,
    /// `# CONFIG_X is not set` (or absent from a readable config).
    NotSet,
    /// No kernel configuration could be read.
    Unknown,
}

/// The answer of a probe that tries the feature for real.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeResult {
    Works,
    /// It failed, and this is why (the error as the system reported it).
    Fails(String),
    /// The probe itself could not be made (not root, no mkfs.xfs …).
    Inconclusive(String),
}

/// When to try a kernel feature by using it (loop devices, mkfs, mount).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Probe {
    /// Never; rely on the kernel configuration.
    Never,
    /// Only when the kernel configuration cannot be read (default).
    #[default]
    IfUnknown,
    /// Always (and let the probe decide).
    Always,
}

/// The questions the doctor asks.
pub trait Host {
    /// Where `program` is installed (a path is checked as it is).
    fn which(&self, program: &str) -> Option<PathBuf>;
    /// The first line the program prints for its version flag.
    fn version_line(&self, path: &Path) -> Option<String>;
    /// `uname -r`.
    fn kernel_release(&self) -> String;
    /// A `CONFIG_…` option and where the answer comes from (`/proc/config.gz`, …).
    fn kernel_config(&self, key: &str) -> (ConfigValue, String);
    /// Filesystem types the kernel knows now (`/proc/filesystems`).
    fn filesystems(&self) -> Vec<String>;
    /// A loadable module for `fstype` exists under `/lib/modules/$(uname -r)`.
    fn fs_module(&self, fstype: &str) -> bool;
    /// How to probe kernel features.
    fn probe_mode(&self) -> Probe {
        Probe::Never
    }
    /// Try mounting XFS with a realtime device.
    fn probe_xfs_rt(&self) -> ProbeResult {
        ProbeResult::Inconclusive("probing is not enabled".into())
    }
}

/// The machine fslab runs on.
pub struct SystemHost {
    probe: Probe,
    work_dir: PathBuf,
    which: Mutex<HashMap<String, Option<PathBuf>>>,
    versions: Mutex<HashMap<PathBuf, Option<String>>>,
    config: Mutex<Option<(Option<String>, String)>>,
    rt_probe: Mutex<Option<ProbeResult>>,
}

impl std::fmt::Debug for SystemHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemHost")
            .field("probe", &self.probe)
            .field("work_dir", &self.work_dir)
            .finish_non_exhaustive()
    }
}

impl Default for SystemHost {
    fn default() -> Self {
        SystemHost::new(Probe::default(), crate::run::default_work_dir())
    }
}

impl SystemHost {
    /// `work_dir` is where a probe puts its image files (as `fslab run` does).
    pub fn new(probe: Probe, work_dir: PathBuf) -> SystemHost {
        SystemHost {
            probe,
            work_dir,
            which: Mutex::new(HashMap::new()),
            versions: Mutex::new(HashMap::new()),
            config: Mutex::new(None),
            rt_probe: Mutex::new(None),
        }
    }

    /// The kernel configuration text and where it was read from.
    fn config_text(&self) -> (Option<String>, String) {
        let mut guard = match self.config.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some(c) = guard.as_ref() {
            return c.clone();
        }
        let release = self.kernel_release();
        let found = read_kernel_config(&release);
        *guard = Some(found.clone());
        found
    }
}

fn read_kernel_config(release: &str) -> (Option<String>, String) {
    let boot = format!("/boot/config-{release}");
    if let Ok(text) = std::fs::read_to_string(&boot) {
        return (Some(text), boot);
    }
    if Path::new("/proc/config.gz").exists() {
        let out = duct::cmd("gzip", ["-dc", "/proc/config.gz"])
            .stdin_null()
            .stdout_capture()
            .stderr_null()
            .unchecked()
            .run();
        if let Ok(o) = out {
            if o.status.success() && !o.stdout.is_empty() {
                return (
                    Some(String::from_utf8_lossy(&o.stdout).to_string()),
                    "/proc/config.gz".into(),
                );
            }
        }
    }
    (
        None,
        format!("no kernel configuration found (/boot/config-{release}, /proc/config.gz)"),
    )
}

/// Look up `key` in kernel configuration text.
pub fn config_lookup(text: &str, key: &str) -> ConfigValue {
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
        {
            return match v {
                "y" => ConfigValue::BuiltIn,
                "m" => ConfigValue::Module,
                "n" => ConfigValue::NotSet,
                _ => ConfigValue::BuiltIn,
            };
        }
        if line == format!("# {key} is not set") {
            return ConfigValue::NotSet;
        }
    }
    ConfigValue::NotSet
}

impl Host for SystemHost {
    fn which(&self, program: &str) -> Option<PathBuf> {
        let mut m = match self.which.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        m.entry(program.to_string())
            .or_insert_with(|| crate::run::env::which(program))
            .clone()
    }

    fn version_line(&self, path: &Path) -> Option<String> {
        let mut m = match self.versions.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        m.entry(path.to_path_buf())
            .or_insert_with(|| crate::run::env::version_line(path))
            .clone()
    }

    fn kernel_release(&self) -> String {
        nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().to_string())
            .unwrap_or_default()
    }

    fn kernel_config(&self, key: &str) -> (ConfigValue, String) {
        match self.config_text() {
            (Some(text), source) => (config_lookup(&text, key), source),
            (None, why) => (ConfigValue::Unknown, why),
        }
    }

    fn filesystems(&self) -> Vec<String> {
        std::fs::read_to_string("/proc/filesystems")
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_whitespace().last())
            .map(str::to_string)
            .collect()
    }

    fn fs_module(&self, fstype: &str) -> bool {
        let dir = PathBuf::from("/lib/modules")
            .join(self.kernel_release())
            .join("kernel/fs");
        walkdir::WalkDir::new(dir)
            .max_depth(3)
            .into_iter()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.split('.').next() == Some(fstype) && n.contains(".ko"))
            })
    }

    fn probe_mode(&self) -> Probe {
        self.probe
    }

    fn probe_xfs_rt(&self) -> ProbeResult {
        let mut guard = match self.rt_probe.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some(r) = guard.as_ref() {
            return r.clone();
        }
        let r = probe_xfs_rt(&self.work_dir, self);
        *guard = Some(r.clone());
        r
    }
}

/// Make a small XFS with a realtime device on two loop devices and mount it.
fn probe_xfs_rt(work_dir: &Path, host: &dyn Host) -> ProbeResult {
    if !nix::unistd::Uid::effective().is_root() {
        return ProbeResult::Inconclusive(
            "probing needs root (loop devices and mount)".to_string(),
        );
    }
    let Some(mkfs) = host.which("mkfs.xfs") else {
        return ProbeResult::Inconclusive("mkfs.xfs is not installed (xfsprogs)".into());
    };
    let work = match devices::WorkDir::open(work_dir) {
        Ok(w) => w,
        Err(e) => return ProbeResult::Inconclusive(e.to_string()),
    };
    let dir = work
        .points()
        .join(format!("probe-rt-{}", std::process::id()));
    let plans = [
        DevicePlan {
            name: "data".into(),
            size_bytes: 512 << 20,
            backing: Backing::File,
        },
        DevicePlan {
            name: "rt".into(),
            size_bytes: 64 << 20,
            backing: Backing::File,
        },
    ];
    let mut devs = match PointDevices::provision(&work, dir, &plans) {
        Ok(d) => d,
        Err(e) => return ProbeResult::Inconclusive(format!("cannot attach loop devices: {e}")),
    };
    let (Some(data), Some(rt)) = (devs.device("data").cloned(), devs.device("rt").cloned()) else {
        return ProbeResult::Inconclusive("loop devices missing after provisioning".into());
    };
    let rtdev = rt.device.display().to_string();
    let made = duct::cmd(
        mkfs,
        [
            "-f".to_string(),
            "-r".to_string(),
            format!("rtdev={rtdev}"),
            data.device.display().to_string(),
        ],
    )
    .stdin_null()
    .stdout_null()
    .stderr_capture()
    .unchecked()
    .run();
    let result = match made {
        Ok(o) if o.status.success() => {
            match devs.mount(
                &data.device,
                &devs.mnt(),
                Some("xfs"),
                Some(&format!("rtdev={rtdev}")),
            ) {
                Ok(()) => {
                    let _ = devices::unmount(&devs.mnt());
                    ProbeResult::Works
                }
                Err(e) => {
                    let text = e.to_string();
                    ProbeResult::Fails(if text.contains("Function not implemented") {
                        "mount -o rtdev= failed with ENOSYS (Function not implemented)".into()
                    } else {
                        text.lines().next().unwrap_or_default().to_string()
                    })
                }
            }
        }
        Ok(o) => ProbeResult::Inconclusive(format!(
            "mkfs.xfs -r rtdev= failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => ProbeResult::Inconclusive(format!("cannot run mkfs.xfs: {e}")),
    };
    if let Err(e) = devs.release() {
        return ProbeResult::Inconclusive(format!(
            "{result:?}, but releasing the probe failed: {e}"
        ));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lookup_reads_set_unset_and_module() {
        let text = "CONFIG_XFS_FS=y\n# CONFIG_XFS_RT is not set\nCONFIG_BTRFS_FS=m\n";
        assert_eq!(config_lookup(text, "CONFIG_XFS_FS"), ConfigValue::BuiltIn);
        assert_eq!(config_lookup(text, "CONFIG_XFS_RT"), ConfigValue::NotSet);
        assert_eq!(config_lookup(text, "CONFIG_BTRFS_FS"), ConfigValue::Module);
        assert_eq!(config_lookup(text, "CONFIG_XFS"), ConfigValue::NotSet);
        assert_eq!(config_lookup(text, "CONFIG_NOPE"), ConfigValue::NotSet);
    }
}
