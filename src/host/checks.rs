//! Verdicts on what a step or a `requires:` entry needs from this machine: a program
//! installed, a tool recent enough, a kernel feature. Each check asks a [`Host`], so a
//! made-up host can stand in for the real one.

use super::{ConfigValue, Host, Probe, ProbeResult, Version};
use serde::Serialize;
use std::fmt;

/// The Debian (12) package that installs a program, for the "install …" hint.
pub fn debian_package(program: &str) -> Option<&'static str> {
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    let pkg = match name {
        "mkfs.xfs" | "xfs_io" | "xfs_info" | "xfs_bmap" | "xfs_db" | "xfs_repair"
        | "xfs_growfs" | "xfs_admin" | "xfs_freeze" | "xfs_spaceman" => "xfsprogs",
        "mkfs.ext2" | "mkfs.ext3" | "mkfs.ext4" | "mke2fs" | "e2fsck" | "fsck.ext2"
        | "fsck.ext3" | "fsck.ext4" | "debugfs" | "dumpe2fs" | "tune2fs" | "filefrag"
        | "e2freefrag" | "resize2fs" | "e4defrag" => "e2fsprogs",
        "mkfs.btrfs" | "btrfs" | "btrfsck" => "btrfs-progs",
        "fs_mark" => "fsmark",
        "fio" => "fio",
        "time" => "time",
        "mount" | "umount" | "losetup" => "mount",
        "blkdiscard" | "blockdev" | "fallocate" | "findmnt" | "lsblk" | "wipefs" => "util-linux",
        "dd" | "sync" | "df" | "du" | "ls" | "cat" | "mkdir" | "rm" | "cp" | "mv" | "truncate"
        | "stat" | "sleep" | "echo" | "true" | "false" | "head" | "tail" | "sha256sum" => {
            "coreutils"
        }
        "find" | "xargs" => "findutils",
        "gzip" | "zcat" => "gzip",
        "python3" => "python3",
        "sh" => "dash",
        "bash" => "bash",
        _ => return None,
    };
    Some(pkg)
}

/// What keeps a point from running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    MissingTool,
    OldTool,
    MissingKernelFeature,
}

impl ProblemKind {
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::MissingTool => "missing tool",
            ProblemKind::OldTool => "tool too old",
            ProblemKind::MissingKernelFeature => "missing kernel feature",
        }
    }
}

/// One reason a point cannot run here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub kind: ProblemKind,
    /// The tool or feature (`mkfs.xfs`, `xfs_rt`).
    pub subject: String,
    /// What is wrong, in a sentence.
    pub message: String,
    /// How to fix it, when there is a way (`apt-get install xfsprogs`).
    pub fix: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)?;
        if let Some(fix) = &self.fix {
            write!(f, "; fix: {fix}")?;
        }
        Ok(())
    }
}

/// What the checks found: problems (the thing cannot run here) and notes (what could
/// not be decided, or is worth knowing). Neither list holds the same entry twice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    pub problems: Vec<Problem>,
    pub notes: Vec<String>,
}

impl Findings {
    pub fn add(&mut self, p: Problem) {
        if !self.problems.contains(&p) {
            self.problems.push(p);
        }
    }

    pub fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
}

/// `program` is installed; else a *missing tool* problem naming the package (`package`,
/// else the Debian package known for it).
pub fn check_program(program: &str, package: Option<&str>, host: &dyn Host, pc: &mut Findings) {
    if host.which(program).is_none() {
        let pkg = package.or_else(|| debian_package(program));
        let name = std::path::Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(program);
        let fix = match pkg {
            Some(p) => Some(format!("install it: apt-get install {p}")),
            None if name == "fsstress" => Some(
                "Debian has no fsstress package: build xfstests or LTP, or use `fslab stress`"
                    .to_string(),
            ),
            None => Some("install it or put it on PATH".to_string()),
        };
        pc.add(Problem {
            kind: ProblemKind::MissingTool,
            subject: program.to_string(),
            message: format!("`{program}` is not installed"),
            fix,
        });
    }
}

/// A requirement's program and the least version it needs.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// The program as the requirement names it (`mkfs.xfs`).
    pub program: &'a str,
    pub min: &'a Version,
    /// The package to name in a fix (else the Debian package known for `program`).
    pub package: Option<&'a str>,
    /// Appended to messages: ` (parent pointers)`, or empty.
    pub why: &'a str,
}

/// The executable a requirement is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub path: &'a std::path::Path,
    /// How the point comes to run it: `given with --set mkfs_xfs`, `chosen for
    /// mkfs_xfs`, `provisioned by fslab: xfsprogs 6.13.0`, `PATH`.
    pub via: &'a str,
    /// The `tools:` entry it was given for with `--set`, if it was.
    pub given_as: Option<&'a str>,
}

/// The executable `asked` is at least `wanted.min`: a note naming what was asked and
/// its version; a *too old* problem whose fix names `fslab tools install` when fslab can
/// build the tool (and `--set` when the executable was given that way); a note when its
/// version cannot be told.
pub fn check_version(wanted: Wanted<'_>, asked: Asked<'_>, host: &dyn Host, pc: &mut Findings) {
    let Wanted {
        program,
        min,
        package,
        why,
    } = wanted;
    let shown = format!("{} ({})", asked.path.display(), asked.via);
    let line = host.version_line(asked.path);
    let version = line.as_deref().and_then(Version::find_in);
    let seen = version
        .as_ref()
        .map_or("version unknown".to_string(), |v| format!("version {v}"));
    pc.note(format!(
        "requirement `{program}` ≥ {min}{why}: asked {shown}: {seen}"
    ));
    match version {
        Some(v) if &v < min => {
            let pkg = package
                .or_else(|| debian_package(program))
                .unwrap_or(program);
            let install = crate::tools::recipe::install_command(program, &min.to_string());
            let distro = format!(
                "install {pkg} ≥ {min} from a newer distribution, backports or a source build"
            );
            let fix = match (asked.given_as, install) {
                (Some(t), Some(cmd)) => format!(
                    "give a build ≥ {min} with --set {t}=…, or leave --set out and run `{cmd}`"
                ),
                (Some(t), None) => format!("give a build ≥ {min} with --set {t}=…, or {distro}"),
                (None, Some(cmd)) => format!("run `{cmd}`, or {distro}"),
                (None, None) => distro,
            };
            pc.add(Problem {
                kind: ProblemKind::OldTool,
                subject: program.to_string(),
                message: format!(
                    "`{program}` is version {v}; ≥ {min} is needed{why}; asked {shown}"
                ),
                fix: Some(fix),
            });
        }
        Some(_) => {}
        None => pc.note(format!(
            "cannot tell the version of `{program}` ({shown}; needs ≥ {min}); trying anyway"
        )),
    }
}

/// The kernel feature `feature` (`fs:TYPE`, `xfs_rt`, `loop`) is available (`why` is
/// appended to a problem's message).
pub fn check_kernel(feature: &str, why: &str, host: &dyn Host, pc: &mut Findings) {
    let release = host.kernel_release();
    if let Some(fstype) = feature.strip_prefix("fs:") {
        if fstype == "ext3" && ext4_driver_mounts_ext3(&release) {
            pc.note(format!(
                "ext3 is mounted by the ext4 driver here (kernel {release}; no kernel since 4.3 has a separate ext3 driver): the ext4 allocator runs, and claim verdicts name it as a substitution"
            ));
        }
        if host.filesystems().iter().any(|f| f == fstype) || host.fs_module(fstype) {
            return;
        }
        let key = format!("CONFIG_{}_FS", fstype.to_ascii_uppercase());
        let (v, source) = host.kernel_config(&key);
        match v {
            ConfigValue::BuiltIn | ConfigValue::Module => {}
            ConfigValue::NotSet => pc.add(Problem {
                kind: ProblemKind::MissingKernelFeature,
                subject: feature.to_string(),
                message: format!(
                    "kernel {release} has no {fstype} filesystem ({key} is not set in {source}; not in /proc/filesystems, no module){why}"
                ),
                fix: Some(format!("use a kernel built with {key}")),
            }),
            ConfigValue::Unknown => pc.note(format!(
                "cannot tell whether kernel {release} supports {fstype} ({source}); trying anyway"
            )),
        }
        return;
    }
    match feature {
        "xfs_rt" => {
            let (v, source) = host.kernel_config("CONFIG_XFS_RT");
            let probe = match (host.probe_mode(), &v) {
                (Probe::Always, _) | (Probe::IfUnknown, ConfigValue::Unknown) => {
                    Some(host.probe_xfs_rt())
                }
                _ => None,
            };
            let missing = |how: String| {
                Problem {
                kind: ProblemKind::MissingKernelFeature,
                subject: "xfs_rt".into(),
                message: format!(
                    "kernel {release} cannot mount XFS with a realtime device: {how}{why}"
                ),
                fix: Some(
                    "use a kernel built with CONFIG_XFS_RT=y; without it mounting fails with ENOSYS (\"Function not implemented\")"
                        .into(),
                ),
            }
            };
            match (probe, v) {
                (Some(ProbeResult::Works), _) => {}
                (Some(ProbeResult::Fails(e)), _) => {
                    pc.add(missing(format!("a probe mount failed: {e}")))
                }
                (Some(ProbeResult::Inconclusive(_)), ConfigValue::NotSet) | (None, ConfigValue::NotSet) => {
                    pc.add(missing(format!("CONFIG_XFS_RT is not set in {source}")))
                }
                (Some(ProbeResult::Inconclusive(m)), ConfigValue::Unknown) => pc.note(format!(
                    "cannot tell whether kernel {release} has CONFIG_XFS_RT ({source}; probe: {m}); trying anyway"
                )),
                (None, ConfigValue::Unknown) => pc.note(format!(
                    "cannot tell whether kernel {release} has CONFIG_XFS_RT ({source}); trying anyway"
                )),
                _ => {}
            }
        }
        "loop" => {
            if std::path::Path::new("/dev/loop-control").exists() {
                return;
            }
            let (v, source) = host.kernel_config("CONFIG_BLK_DEV_LOOP");
            if v == ConfigValue::NotSet {
                pc.add(Problem {
                    kind: ProblemKind::MissingKernelFeature,
                    subject: "loop".into(),
                    message: format!(
                        "kernel {release} has no loop devices (CONFIG_BLK_DEV_LOOP not set in {source}){why}"
                    ),
                    fix: Some("use a kernel with loop device support, or `modprobe loop`".into()),
                });
            }
        }
        other => pc.note(format!("unknown kernel feature `{other}` not checked")),
    }
}

/// Kernels from 4.3 on have no ext3 driver of their own; ext4's mounts ext3.
fn ext4_driver_mounts_ext3(release: &str) -> bool {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>().unwrap_or(0));
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => (a, b) >= (4, 3),
        _ => true,
    }
}
