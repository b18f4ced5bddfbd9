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
}

fn cg_err(path: &Path, message: impl Into<String>) -> DeviceError {
    DeviceError::Release {
        what: format!("cgroup {}", path.display()),
        message: message.into(),
    }
}

/// The directories `fslab/<name>` would have, one per usable hierarchy.
pub fn planned_dirs(name: &str) -> Vec<PathBuf> {
    hierarchies()
        .iter()
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
        kill_dirs(&self.dirs)?;
        remove_dirs(&self.dirs)?;
        self.dirs.clear();
        self.procs.clear();
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

/// Kill every member of the cgroups at `dirs` and wait until none is left. After a
/// SIGKILL a process leaves its cgroup when it exits, even before it is reaped.
pub fn kill_dirs(dirs: &[PathBuf]) -> Result<(), DeviceError> {
    let live: Vec<&PathBuf> = dirs.iter().filter(|d| d.is_dir()).collect();
    if live.is_empty() {
        return Ok(());
    }
    let owned: Vec<PathBuf> = live.iter().map(|d| (*d).clone()).collect();
    let t0 = Instant::now();
    let v2_kill = live
        .iter()
        .map(|d| d.join("cgroup.kill"))
        .find(|k| k.exists());
    let freezer = live
        .iter()
        .map(|d| d.join("freezer.state"))
        .find(|k| k.exists());
    loop {
        let pids = pids_in(&owned);
        if pids.is_empty() {
            if let Some(f) = &freezer {
                let _ = std::fs::write(f, "THAWED\n");
            }
            return Ok(());
        }
        if t0.elapsed() > Duration::from_secs(10) {
            return Err(cg_err(
                live[0],
                format!(
                    "processes {pids:?} are still in it 10 s after SIGKILL (stuck in the kernel, for example on a dead FUSE mount)"
                ),
            ));
        }
        match &v2_kill {
            Some(k) => {
                let _ = std::fs::write(k, "1\n");
            }
            None => {
                // Freeze first so that nothing forks between reading and killing;
                // SIGKILL reaches a frozen task once it is thawed.
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
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Remove the (empty) cgroups at `dirs`; a missing one is fine.
pub fn remove_dirs(dirs: &[PathBuf]) -> Result<(), DeviceError> {
    for d in dirs {
        let mut tries = 0;
        loop {
            match std::fs::remove_dir(d) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                // EBUSY for a moment after the last member exits.
                Err(e) if tries < 50 => {
                    let _ = e;
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(cg_err(d, e.to_string())),
            }
        }
    }
    Ok(())
}
