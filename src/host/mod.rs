//! Probing the host: which program is installed and its version, kernel features, the
//! default work directory, running a tool and capturing what it prints.
//!
//! Nearly a leaf: of fslab it uses only the leaf `tools` (a bare program name resolves
//! to a provisioned tool before `PATH`), so that `spec`, `plan`, `doctor`, `devices` and
//! `run` can all ask it. The questions are a trait, [`Host`], so that the
//! verdicts built on them ([`checks`], the doctor, tool choices) can be tested against a
//! made-up host; [`LocalHost`] answers for the real one and caches every answer (a plan
//! asks about the same tool at every point).

pub mod checks;
pub mod tools;
pub mod version;

pub use checks::{
    check_kernel, check_program, check_version, debian_package, Asked, Findings, Problem,
    ProblemKind, Wanted,
};
pub use tools::{tool_version, version_line, which};
pub use version::Version;

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

/// The questions fslab asks about a host: the machine it runs on ([`LocalHost`]), a
/// guest, or a made-up one in tests.
/// What a path is on this host (symbolic links followed), for the plan's device check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    Missing,
    BlockDevice,
    /// A regular file with an execute bit (a program).
    Program,
    Other,
}

/// Read what `path` is (following symbolic links).
pub fn path_kind(path: &Path) -> PathKind {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    match std::fs::metadata(path) {
        Err(_) => PathKind::Missing,
        Ok(m) if m.file_type().is_block_device() => PathKind::BlockDevice,
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => PathKind::Program,
        Ok(_) => PathKind::Other,
    }
}

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
    /// What a path is here. Every host answers from the real filesystem unless a test
    /// says otherwise: a fake host must never hide a real block device.
    fn path_kind(&self, path: &Path) -> PathKind {
        path_kind(path)
    }
    /// Try mounting XFS with a realtime device.
    fn probe_xfs_rt(&self) -> ProbeResult {
        ProbeResult::Inconclusive("probing is not enabled".into())
    }
}

/// The default work directory when neither `--work-dir` nor `$FSLAB_WORK_DIR` says
/// otherwise: root's state directory, not world-writable `/var/tmp`.
pub const DEFAULT_WORK_DIR: &str = "/var/lib/fslab";

/// The default work directory: `$FSLAB_WORK_DIR` or [`DEFAULT_WORK_DIR`]
/// (`/var/lib/fslab`). Whichever it is, `devices::WorkDir::open` refuses one that
/// another user owns or can write to.
pub fn default_work_dir() -> PathBuf {
    std::env::var_os("FSLAB_WORK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_WORK_DIR))
}

/// This host: the machine fslab runs on. It never tries a feature by using it (that needs loop
/// devices: see `doctor::ProbingHost`).
#[derive(Default)]
pub struct LocalHost {
    which: Mutex<HashMap<String, Option<PathBuf>>>,
    versions: Mutex<HashMap<PathBuf, Option<String>>>,
    config: Mutex<Option<(Option<String>, String)>>,
}

impl std::fmt::Debug for LocalHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHost").finish_non_exhaustive()
    }
}

impl LocalHost {
    pub fn new() -> LocalHost {
        LocalHost::default()
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

impl Host for LocalHost {
    fn which(&self, program: &str) -> Option<PathBuf> {
        let mut m = match self.which.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        m.entry(program.to_string())
            .or_insert_with(|| tools::which(program))
            .clone()
    }

    fn version_line(&self, path: &Path) -> Option<String> {
        let mut m = match self.versions.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        m.entry(path.to_path_buf())
            .or_insert_with(|| tools::version_line(path))
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
