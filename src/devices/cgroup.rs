//! A cgroup per point: every command a point runs, and everything those commands
//! start (a `setsid` daemon included), is a member, so that all of it can be found and
//! killed: after each command, when the point is released, and by reclaim after fslab
//! itself was killed.
//!
//! fslab makes `fslab/<name>` in each hierarchy it can use: the cgroup v2 hierarchy
//! (`cgroup.kill` kills a whole cgroup at once), and the v1 `blkio` hierarchy where it
//! is mounted (block throttling). Without a v2 hierarchy, the v1 `freezer` (or `pids`)
//! hierarchy tracks membership and the members are frozen, then killed.

use super::DeviceError;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The directory fslab's cgroups live in, in each hierarchy.
const BASE: &str = "fslab";

/// One cgroup hierarchy fslab can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hierarchy {
    /// cgroup v2 (unified), mounted at the path.
    V2(PathBuf),
    /// A cgroup v1 hierarchy with the named controller.
    V1 { controller: String, mount: PathBuf },
}

impl Hierarchy {
    fn mount(&self) -> &Path {
        match self {
            Hierarchy::V2(p) => p,
            Hierarchy::V1 { mount, .. } => mount,
        }
    }
}

/// The hierarchies of this machine that fslab uses, in order: v2 first (tracking and
/// killing), then v1 `blkio` (throttling), then, without v2, v1 `freezer` or `pids`.
pub fn hierarchies() -> Vec<Hierarchy> {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut v2 = None;
    let mut v1: Vec<(String, PathBuf)> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() < 4 {
            continue;
        }
        let mount = PathBuf::from(super::mounts::unescape(f[1]));
        match f[2] {
            "cgroup2" if v2.is_none() => v2 = Some(mount),
            "cgroup" => {
                for opt in f[3].split(',') {
                    if matches!(opt, "blkio" | "freezer" | "pids") {
                        v1.push((opt.to_string(), mount.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let has_v2 = v2.is_some();
    if let Some(m) = v2 {
        out.push(Hierarchy::V2(m));
    }
    let want: &[&str] = if has_v2 {
        &["blkio"]
    } else {
        &["freezer", "pids", "blkio"]
    };
    for w in want {
        if let Some((c, m)) = v1.iter().find(|(c, _)| c == w) {
            out.push(Hierarchy::V1 {
                controller: c.clone(),
                mount: m.clone(),
            });
        }
    }
    out
}

/// A point's cgroup, one directory per hierarchy.
#[derive(Debug)]
pub struct PointCgroup {
    dirs: Vec<PathBuf>,
    /// `cgroup.procs` of each, ready for a child to join between fork and exec.
    procs: Vec<CString>,
    /// Which of `dirs` is in the cgroup v2 hierarchy (a child can be born there with
    /// `clone3(CLONE_INTO_CGROUP)` instead of joining it).
    v2: Option<usize>,
}

fn cg_err(path: &Path, message: impl Into<String>) -> DeviceError {
    DeviceError::Release {
        what: format!("cgroup {}", path.display()),
        message: message.into(),
    }
}

/// The directories `fslab/<name>` would have, one per usable hierarchy.
pub fn planned_dirs(name: &str) -> Vec<PathBuf> {
    planned_dirs_for(name, true)
}

/// As [`planned_dirs`], but without the v1 `blkio` hierarchy when the point throttles
/// no device and another hierarchy tracks its processes: joining a cgroup v1 hierarchy
/// costs its first process a migration (≈ 15 ms here, an RCU grace period), while the
/// v2 cgroup is entered at `clone3` time for free (see `run::spawner`).
pub fn planned_dirs_for(name: &str, throttled: bool) -> Vec<PathBuf> {
    let all = hierarchies();
    let tracked_elsewhere = all
        .iter()
        .any(|h| !matches!(h, Hierarchy::V1 { controller, .. } if controller == "blkio"));
    all.iter()
        .filter(|h| {
            throttled
                || !tracked_elsewhere
                || !matches!(h, Hierarchy::V1 { controller, .. } if controller == "blkio")
        })
        .map(|h| h.mount().join(BASE).join(name))
        .collect()
}

/// Is `p` one of fslab's cgroups (`<a cgroup mount>/fslab/<name>`)? Records naming any
/// other path are not believed.
pub fn is_fslab_cgroup(p: &Path) -> bool {
    let Some(parent) = p.parent() else {
        return false;
    };
    let name_ok = p
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    name_ok
        && parent.file_name().is_some_and(|n| n == BASE)
        && hierarchies()
            .iter()
            .any(|h| parent.parent() == Some(h.mount()))
}

impl PointCgroup {
    /// Make `fslab/<name>` in each usable hierarchy. `name` must be unique on the
    /// machine (pid, start time, sequence). With no hierarchy, there is no cgroup and
    /// commands are tracked by process group only; `dirs()` is then empty.
    pub fn create(dirs: &[PathBuf]) -> Result<PointCgroup, DeviceError> {
        let mut made = PointCgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
            v2: None,
        };
        for d in dirs {
            if let Some(base) = d.parent() {
                if let Err(e) = std::fs::create_dir(base) {
                    if e.kind() != std::io::ErrorKind::AlreadyExists {
                        return Err(super::io_err("create", base)(e));
                    }
                }
            }
            std::fs::create_dir(d).map_err(super::io_err("create", d))?;
            if made.v2.is_none() && d.join("cgroup.controllers").exists() {
                made.v2 = Some(made.dirs.len());
            }
            made.dirs.push(d.clone());
            let procs = d.join("cgroup.procs");
            made.procs.push(
                CString::new(procs.as_os_str().as_encoded_bytes())
                    .map_err(|_| cg_err(d, "path holds a NUL byte"))?,
            );
        }
        Ok(made)
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Paths of the `cgroup.procs` files, for a `pre_exec` closure that owns them.
    pub fn procs_paths(&self) -> Vec<CString> {
        self.procs.clone()
    }

    /// Which of [`dirs`](Self::dirs) is in the cgroup v2 hierarchy, if one is.
    pub fn v2_index(&self) -> Option<usize> {
        self.v2
    }

    /// The processes in it now.
    pub fn pids(&self) -> Vec<i32> {
        pids_in(&self.dirs)
    }

    /// Kill every process in it and wait (up to 10 s) until it is empty.
    pub fn kill_all(&self) -> Result<(), DeviceError> {
        kill_dirs(&self.dirs)
    }

    /// Kill everything in it and remove its directories.
    pub fn remove(&mut self) -> Result<(), DeviceError> {
        kill_and_remove(&self.dirs)?;
        self.dirs.clear();
        self.procs.clear();
        self.v2 = None;
        Ok(())
    }
}

/// Write "0" (the writer itself) to each `cgroup.procs`: async-signal-safe, for the
/// time between fork and exec.
pub fn join_procs(procs: &[CString]) -> std::io::Result<()> {
    use nix::fcntl::{open, OFlag};
    use nix::sys::stat::Mode;
    for p in procs {
        let fd = open(
            p.as_c_str(),
            OFlag::O_WRONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        nix::unistd::write(&fd, b"0\n")?;
    }
    Ok(())
}

fn pids_in(dirs: &[PathBuf]) -> Vec<i32> {
    let mut out: Vec<i32> = Vec::new();
    for d in dirs {
        if let Ok(t) = std::fs::read_to_string(d.join("cgroup.procs")) {
            for p in t.lines().filter_map(|l| l.trim().parse().ok()) {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Signal every member of the cgroups at `dirs` once: `cgroup.kill` where the kernel
/// has it (v2), else freeze, SIGKILL each member, thaw. Returns the members seen.
fn kill_once(dirs: &[PathBuf]) -> Vec<i32> {
    let pids = pids_in(dirs);
    if pids.is_empty() {
        return pids;
    }
    if let Some(k) = dirs
        .iter()
        .map(|d| d.join("cgroup.kill"))
        .find(|k| k.exists())
    {
        let _ = std::fs::write(k, "1\n");
        return pids;
    }
    // Freeze first so that nothing forks between reading and killing; SIGKILL reaches
    // a frozen task once it is thawed.
    let freezer = dirs
        .iter()
        .map(|d| d.join("freezer.state"))
        .find(|k| k.exists());
    if let Some(f) = &freezer {
        let _ = std::fs::write(f, "FROZEN\n");
    }
    for p in &pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    if let Some(f) = &freezer {
        let _ = std::fs::write(f, "THAWED\n");
    }
    pids
}

fn still_there(dirs: &[PathBuf], pids: &[i32]) -> DeviceError {
    cg_err(
        dirs.first().map_or(Path::new("?"), |d| d.as_path()),
        format!(
            "processes {pids:?} are still in it 10 s after SIGKILL (stuck in the kernel, for example on a dead FUSE mount)"
        ),
    )
}

/// Kill every member of the cgroups at `dirs` and wait (up to 10 s) until none is
/// left. After a SIGKILL a process leaves its cgroup when it exits, even before it is
/// reaped. Members' children are members from the moment they are forked.
pub fn kill_dirs(dirs: &[PathBuf]) -> Result<(), DeviceError> {
    let t0 = Instant::now();
    loop {
        let pids = kill_once(dirs);
        if pids.is_empty() {
            return Ok(());
        }
        if t0.elapsed() > Duration::from_secs(10) {
            return Err(still_there(dirs, &pids));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kill everything in the cgroups at `dirs` and remove them (a missing one is fine);
/// returns how many processes were killed. A process that fslab forked joins its
/// cgroup between fork and exec: when fslab died in that instant, it may join after a
/// first kill, so killing and removing repeat until the directories are gone (a
/// cgroup with a member cannot be removed; one removed first makes the join fail, and
/// the process ends before it runs anything). Up to 10 s.
pub fn kill_and_remove(dirs: &[PathBuf]) -> Result<usize, DeviceError> {
    let t0 = Instant::now();
    let mut seen: Vec<i32> = Vec::new();
    let mut left: Vec<PathBuf> = dirs.to_vec();
    loop {
        for p in kill_once(&left) {
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        let mut last_err = None;
        left.retain(|d| match std::fs::remove_dir(d) {
            Ok(()) => false,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                last_err = Some(e);
                true
            }
        });
        if left.is_empty() {
            return Ok(seen.len());
        }
        if t0.elapsed() > Duration::from_secs(10) {
            let pids = pids_in(&left);
            return Err(if pids.is_empty() {
                cg_err(
                    &left[0],
                    format!(
                        "{} 10 s after its last process was killed",
                        last_err.map_or("busy".to_string(), |e| e.to_string())
                    ),
                )
            } else {
                still_there(&left, &pids)
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_that_throttles_nothing_stays_out_of_the_blkio_hierarchy() {
        let all = hierarchies();
        let blkio = |d: &PathBuf| {
            all.iter().any(|h| {
                matches!(h, Hierarchy::V1 { controller, mount } if controller == "blkio" && d.starts_with(mount))
            })
        };
        let with = planned_dirs_for("x", true);
        let without = planned_dirs_for("x", false);
        assert_eq!(with.len(), all.len());
        assert_eq!(with, planned_dirs("x"));
        let others = all
            .iter()
            .any(|h| !matches!(h, Hierarchy::V1 { controller, .. } if controller == "blkio"));
        if others {
            // Tracked elsewhere: blkio only for throttling.
            assert!(!without.iter().any(blkio), "{without:?}");
            assert_eq!(
                without.len() + with.iter().filter(|d| blkio(d)).count(),
                with.len()
            );
        } else {
            // blkio is all there is: it tracks the point's processes.
            assert_eq!(without, with);
        }
    }
}
