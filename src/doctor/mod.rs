//! Preflight: can each point of a plan run on this machine, and if not, why?
//!
//! For every point the doctor looks at the steps that run there and checks
//! - every program a `run:` step starts is installed (else: *missing tool*, with the
//!   Debian package that provides it);
//! - every `requires:` entry that applies at the point (experiment-wide, the step's, and
//!   a `when:` of its own): `tool:` installed and at least `min_version` (else: *too old*),
//!   `kernel: xfs_rt` / `kernel: loop` / `kernel: fs:TYPE` available (else: *missing
//!   kernel feature*).
//!
//! Kernel features are read from the kernel configuration (`/boot/config-$(uname -r)` or
//! `/proc/config.gz`) and `/proc/filesystems`; when the configuration cannot be read (or
//! with [`Probe::Always`]) realtime XFS is tried for real on two small loop devices.
//! Anything the doctor cannot decide is a note, not a problem: the point runs.
//!
//! `fslab run` asks the doctor first and records unsupported points in the bundle with
//! status `unsupported` and the reason, then runs the others.

pub mod host;

pub use host::{ConfigValue, Host, Probe, ProbeResult, SystemHost};

use crate::plan::{Phase, Plan, Point};
use crate::spec::{Requirement, Template, Value};
use polars::prelude::*;
use serde::Serialize;
use std::fmt;

/// A dotted version number, compared numerically (`6.10` > `6.9`, `6.1` == `6.1.0`).
#[derive(Debug, Clone, Eq, Serialize)]
pub struct Version(pub Vec<u64>);

impl Version {
    /// Parse `6.10`, `6.1.0`, `1.47`; None for anything else.
    pub fn parse(s: &str) -> Option<Version> {
        let parts: Option<Vec<u64>> = s.trim().split('.').map(|p| p.parse().ok()).collect();
        parts.filter(|p| !p.is_empty()).map(Version)
    }

    /// The first `N.N[.N…]` in a tool's version output (`mkfs.xfs version 6.1.0` → 6.1.0,
    /// `mke2fs 1.47.0 (5-Feb-2023)` → 1.47.0).
    pub fn find_in(text: &str) -> Option<Version> {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let starts_word = |k: usize| k == 0 || !b[k - 1].is_ascii_alphanumeric();
            // `6.2` or `v6.2` at the start of a word.
            let boundary =
                starts_word(i) || (matches!(b[i - 1], b'v' | b'V') && starts_word(i - 1));
            if b[i].is_ascii_digit() && boundary {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                    j += 1;
                }
                let cand = text[i..j].trim_end_matches('.');
                if cand.contains('.') {
                    if let Some(v) = Version::parse(cand) {
                        return Some(v);
                    }
                }
                i = j.max(i + 1);
            } else {
                i += 1;
            }
        }
        None
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let n = self.0.len().max(other.0.len());
        for k in 0..n {
            let a = self.0.get(k).copied().unwrap_or(0);
            let b = other.0.get(k).copied().unwrap_or(0);
            match a.cmp(&b) {
                std::cmp::Ordering::Equal => continue,
                o => return o,
            }
        }
        std::cmp::Ordering::Equal
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&s.join("."))
    }
}

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

/// The verdict for one point.
#[derive(Debug, Clone, Serialize)]
pub struct PointCheck {
    pub index: usize,
    pub id: String,
    pub problems: Vec<Problem>,
    /// What the doctor could not decide or wants known (tool choices, unknown versions).
    pub notes: Vec<String>,
}

impl PointCheck {
    pub fn runnable(&self) -> bool {
        self.problems.is_empty()
    }

    /// All problems in one line (None when the point can run).
    pub fn reason(&self) -> Option<String> {
        if self.problems.is_empty() {
            None
        } else {
            Some(
                self.problems
                    .iter()
                    .map(Problem::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        }
    }

    fn add(&mut self, p: Problem) {
        if !self.problems.contains(&p) {
            self.problems.push(p);
        }
    }

    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
}

/// The doctor's verdict for a whole plan.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub experiment: String,
    pub profile: Option<String>,
    pub kernel: String,
    /// How each of the experiment's `tools:` was resolved, one line each.
    pub tools: Vec<String>,
    pub points: Vec<PointCheck>,
}

impl Report {
    pub fn runnable(&self) -> usize {
        self.points.iter().filter(|p| p.runnable()).count()
    }

    pub fn point(&self, index: usize) -> Option<&PointCheck> {
        self.points.iter().find(|p| p.index == index)
    }

    /// One row per point: `point_index`, `point_id`, `runnable`, `problems` (count),
    /// `reason`, `notes`.
    pub fn to_frame(&self) -> PolarsResult<DataFrame> {
        let idx: Vec<i64> = self.points.iter().map(|p| p.index as i64).collect();
        let ids: Vec<&str> = self.points.iter().map(|p| p.id.as_str()).collect();
        let ok: Vec<bool> = self.points.iter().map(PointCheck::runnable).collect();
        let n: Vec<i64> = self
            .points
            .iter()
            .map(|p| p.problems.len() as i64)
            .collect();
        let reason: Vec<Option<String>> = self.points.iter().map(PointCheck::reason).collect();
        let notes: Vec<String> = self.points.iter().map(|p| p.notes.join("; ")).collect();
        DataFrame::new_infer_height(vec![
            Column::new("point_index".into(), idx),
            Column::new("point_id".into(), ids),
            Column::new("runnable".into(), ok),
            Column::new("problems".into(), n),
            Column::new("reason".into(), reason),
            Column::new("notes".into(), notes),
        ])
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} (profile {}), kernel {}: {} of {} points can run here",
            self.experiment,
            self.profile.as_deref().unwrap_or("-"),
            self.kernel,
            self.runnable(),
            self.points.len()
        )?;
        for t in &self.tools {
            writeln!(f, "  tool {t}")?;
        }
        for p in &self.points {
            let mark = if p.runnable() {
                "ok         "
            } else {
                "unsupported"
            };
            writeln!(f, "  {mark} {} [{}]", p.index, p.id)?;
            for pr in &p.problems {
                writeln!(f, "      ✗ {pr}")?;
            }
            for n in &p.notes {
                writeln!(f, "      · {n}")?;
            }
        }
        Ok(())
    }
}

/// Check every point of `plan` against `host`.
pub fn check(plan: &Plan, host: &dyn Host) -> Report {
    let def = &plan.experiment.def;
    let mut points = Vec::new();
    for point in &plan.points {
        let mut pc = PointCheck {
            index: point.index,
            id: point.id.clone(),
            problems: Vec::new(),
            notes: Vec::new(),
        };
        for (name, t) in &plan.tools {
            pc.note(t.short(name));
        }
        for phase in Phase::ALL {
            for step in plan.steps(point, phase) {
                if let Some(program) = program_of(step, point) {
                    check_program(&program, None, host, &mut pc);
                }
                for r in step.requires.iter().filter(|r| r.applies(&point.vars)) {
                    check_requirement(r, point, host, &mut pc);
                }
            }
        }
        for r in def.requires.iter().filter(|r| r.applies(&point.vars)) {
            check_requirement(r, point, host, &mut pc);
        }
        points.push(pc);
    }
    Report {
        experiment: plan.experiment.id().to_string(),
        profile: plan.profile.clone(),
        kernel: host.kernel_release(),
        tools: plan.tools.iter().map(|(n, t)| t.describe(n)).collect(),
        points,
    }
}

/// The program a `run:` step starts at a point (None when it is not known before the
/// run, e.g. `{{dev.data}}`).
fn program_of(step: &crate::spec::Step, point: &Point) -> Option<String> {
    let argv = step.argv_templates().ok()?;
    let first = argv.first()?;
    let words = first.render_partial(&|n| point.vars.get(n).cloned());
    let w = words.into_iter().next()?;
    (!w.contains("{{") && !w.is_empty()).then_some(w)
}

fn check_program(program: &str, package: Option<&str>, host: &dyn Host, pc: &mut PointCheck) {
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

fn check_requirement(r: &Requirement, point: &Point, host: &dyn Host, pc: &mut PointCheck) {
    check_requirement_vars(r, &point.vars, host, pc);
}

/// The problems and notes of one requirement for these variables (used for tool choices,
/// which are resolved before there are points).
pub fn requirement_problems(
    r: &Requirement,
    vars: &indexmap::IndexMap<String, Value>,
    host: &dyn Host,
) -> (Vec<Problem>, Vec<String>) {
    let mut pc = PointCheck {
        index: 0,
        id: String::new(),
        problems: Vec::new(),
        notes: Vec::new(),
    };
    check_requirement_vars(r, vars, host, &mut pc);
    (pc.problems, pc.notes)
}

fn check_requirement_vars(
    r: &Requirement,
    vars: &indexmap::IndexMap<String, Value>,
    host: &dyn Host,
    pc: &mut PointCheck,
) {
    let why = r
        .reason
        .as_ref()
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    if let Some(tool) = &r.tool {
        let program = Template::parse(tool)
            .ok()
            .map(|t| t.render_partial(&|n| vars.get(n).cloned()))
            .and_then(|w| w.into_iter().next())
            .unwrap_or_else(|| tool.clone());
        let Some(path) = host.which(&program) else {
            check_program(&program, r.package.as_deref(), host, pc);
            return;
        };
        if let Some(min) = r.min_version.as_deref().and_then(Version::parse) {
            let line = host.version_line(&path);
            match line.as_deref().and_then(Version::find_in) {
                Some(v) if v < min => {
                    let pkg = r
                        .package
                        .as_deref()
                        .or_else(|| debian_package(&program))
                        .unwrap_or(program.as_str());
                    pc.add(Problem {
                        kind: ProblemKind::OldTool,
                        subject: program.clone(),
                        message: format!(
                            "`{program}` is version {v}; ≥ {min} is needed{why}"
                        ),
                        fix: Some(format!(
                            "install {pkg} ≥ {min} from a newer distribution, backports or a source build"
                        )),
                    });
                }
                Some(_) => {}
                None => pc.note(format!(
                    "cannot tell the version of `{program}` (needs ≥ {min}); trying anyway"
                )),
            }
        }
        return;
    }
    if let Some(feature) = &r.kernel {
        check_kernel(feature, &why, host, pc);
    }
}

fn check_kernel(feature: &str, why: &str, host: &dyn Host, pc: &mut PointCheck) {
    let release = host.kernel_release();
    if let Some(fstype) = feature.strip_prefix("fs:") {
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

/// The value a tool variable takes at a point, as words.
pub fn tool_words(point: &Point, name: &str) -> Vec<String> {
    match point.vars.get(name) {
        Some(Value::List(items)) => items.iter().map(Value::label).collect(),
        Some(v) => vec![v.label()],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
