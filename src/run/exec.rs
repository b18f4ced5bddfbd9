//! Running one command: its own process group (and the point's cgroup), stdout/stderr
//! to files, wall clock and the CPU time of its whole process tree from the kernel's
//! RUSAGE_CHILDREN accounting, a timeout, and cancellation (SIGINT/SIGTERM to fslab).
//!
//! fslab is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process that a command
//! started and left behind (a `setsid` daemon) becomes fslab's child when its parent
//! exits. When the command ends, whatever it left in the point's cgroup is killed and
//! reaped, so its CPU time is counted with the command's and nothing outlives the step.

use crate::devices::PointCgroup;
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::fs::OpenOptions;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How a command ended, and what it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecOutcome {
    /// Exit code; None when killed by a signal or never started.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Set when the program could not be started (not found, not executable).
    pub spawn_error: Option<String>,
    /// How long the child took to join the point's cgroups before `exec`, measured in
    /// the child (part of `spawn`).
    pub cgroup_join: Duration,
    /// From fslab's fork to the child's `exec`: copying fslab's page tables (a large
    /// process), joining the cgroups (a cgroup migration waits for an RCU grace period,
    /// 0.3–2 ms on a busy host). Not part of `wall`, which runs from the child's `exec`
    /// to its exit being reaped: a short command measures the command, not fslab.
    pub spawn: Duration,
}

impl ExecOutcome {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled
    }

    /// Exit code for tables: the code, 128+signal, or 127 when it never started.
    pub fn code_for_table(&self) -> i64 {
        match (self.exit_code, self.signal, &self.spawn_error) {
            (Some(c), _, _) => i64::from(c),
            (None, Some(s), _) => 128 + i64::from(s),
            _ => 127,
        }
    }

    /// Add another execution's cost (a step with `times:`).
    pub fn accumulate(&mut self, other: &ExecOutcome) {
        self.wall += other.wall;
        self.cgroup_join += other.cgroup_join;
        self.spawn += other.spawn;
        self.user += other.user;
        self.sys += other.sys;
        self.exit_code = other.exit_code;
        self.signal = other.signal;
        self.timed_out |= other.timed_out;
        self.cancelled |= other.cancelled;
        if other.spawn_error.is_some() {
            self.spawn_error = other.spawn_error.clone();
        }
    }
}

/// The monotonic clock (the one `Instant` reads on Linux, and the child reads before
/// `exec`).
fn mono_now() -> Option<Duration> {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .ok()
        .map(Duration::from)
}

fn tv(t: nix::sys::time::TimeVal) -> Duration {
    Duration::from_secs(t.tv_sec().max(0) as u64) + Duration::from_micros(t.tv_usec().max(0) as u64)
}

fn children_cpu() -> (Duration, Duration) {
    match getrusage(UsageWho::RUSAGE_CHILDREN) {
        Ok(u) => (tv(u.user_time()), tv(u.system_time())),
        Err(_) => (Duration::ZERO, Duration::ZERO),
    }
}

/// Become a child subreaper, once per process.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument.
        let _ = unsafe { nix::libc::prctl(nix::libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    });
}

/// Kill what a finished command left in `cg`, then reap every child of fslab that
/// has exited: as a subreaper, fslab inherits what the command orphaned, and reaping
/// puts their CPU time into RUSAGE_CHILDREN (and leaves no zombie). fslab runs one
/// command at a time, so no other child's exit status is taken from its waiter.
fn kill_leftovers(cg: &PointCgroup) {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    if !cg.pids().is_empty() {
        let _ = cg.kill_all();
    }
    while let Ok(st) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
        if st == WaitStatus::StillAlive {
            break;
        }
    }
}

/// How often a running command's timeout and cancellation are looked at.
const TICK: Duration = Duration::from_millis(25);
/// How long a command has between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// Why [`wait_or_kill`] signalled a command's process group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Stopped {
    /// Its timeout (from `t0`) passed.
    pub timed_out: bool,
    /// fslab was asked to stop (`cancel` set).
    pub cancelled: bool,
}

/// Wait for a command to end, ending it when its timeout passes or `cancel` is set:
/// SIGTERM to its process group `pgid`, SIGKILL every tick from [`TERM_GRACE`] later on.
/// `wait` waits up to the tick it is given and returns the command's end, or None when
/// it has not ended yet. The one kill loop of both ways of running a command
/// ([`exec`] and the spawner).
pub(super) fn wait_or_kill<T>(
    pgid: Option<Pid>,
    t0: Instant,
    timeout: Option<Duration>,
    cancel: &AtomicBool,
    mut wait: impl FnMut(Duration) -> Option<T>,
) -> (T, Stopped) {
    let mut stopped = Stopped::default();
    let mut term_sent: Option<Instant> = None;
    loop {
        if let Some(end) = wait(TICK) {
            return (end, stopped);
        }
        if !stopped.cancelled && cancel.load(Ordering::SeqCst) {
            stopped.cancelled = true;
        }
        if !stopped.timed_out && timeout.is_some_and(|t| t0.elapsed() >= t) {
            stopped.timed_out = true;
        }
        if (stopped.cancelled || stopped.timed_out) && term_sent.is_none() {
            if let Some(g) = pgid {
                let _ = killpg(g, Signal::SIGTERM);
            }
            term_sent = Some(Instant::now());
        }
        if term_sent.is_some_and(|t| t.elapsed() > TERM_GRACE) {
            if let Some(g) = pgid {
                let _ = killpg(g, Signal::SIGKILL);
            }
        }
    }
}

/// Run `argv`, appending its stdout and stderr to the given files. With `cgroup`, the
/// command (and everything it starts) runs in it, and whatever is left there when the
/// command ends is killed.
///
/// Only one command runs at a time per fslab process, so the RUSAGE_CHILDREN delta
/// around it is exactly its process tree's CPU time (every descendant that was waited
/// for is included, as with bash's `time`).
pub fn exec(
    argv: &[String],
    cwd: &Path,
    stdout: &Path,
    stderr: &Path,
    timeout: Option<Duration>,
    cancel: &AtomicBool,
    cgroup: Option<&PointCgroup>,
) -> std::io::Result<ExecOutcome> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(ExecOutcome {
            spawn_error: Some("empty command".into()),
            ..Default::default()
        });
    };
    let out = OpenOptions::new().create(true).append(true).open(stdout)?;
    let err = OpenOptions::new().create(true).append(true).open(stderr)?;
    become_subreaper();
    let procs = cgroup.map(PointCgroup::procs_paths).unwrap_or_default();
    // Just before `exec` the child writes to this pipe how long joining the cgroups took
    // and the monotonic clock's time (two u64 of nanoseconds); the write end closes at
    // `exec` (O_CLOEXEC).
    let (join_r, join_w) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
    let join_w_raw = {
        use std::os::fd::AsRawFd;
        join_w.as_raw_fd()
    };
    // A bare name that a provisioned tool provides runs from there (see `crate::tools`).
    let resolved: std::ffi::OsString =
        crate::tools::provided(program).map_or_else(|| program.into(), |(p, _)| p.into_os_string());
    let expr = duct::cmd(resolved, args)
        .dir(cwd)
        .stdin_null()
        .stdout_file(out)
        .stderr_file(err)
        .unchecked()
        .before_spawn(move |c| {
            c.process_group(0);
            let procs = procs.clone();
            // SAFETY: the closure only opens and writes files (async-signal-safe).
            unsafe {
                c.pre_exec(move || {
                    use nix::time::{clock_gettime, ClockId};
                    let a = clock_gettime(ClockId::CLOCK_MONOTONIC).ok();
                    crate::devices::cgroup::join_procs(&procs)?;
                    let b = clock_gettime(ClockId::CLOCK_MONOTONIC).ok();
                    if let (Some(a), Some(b)) = (a, b) {
                        let (b, a) = (Duration::from(b), Duration::from(a));
                        // No cgroup to join: nothing to count.
                        let a = if procs.is_empty() { b } else { a };
                        let mut msg = [0u8; 16];
                        msg[..8].copy_from_slice(
                            &(b.saturating_sub(a).as_nanos() as u64).to_ne_bytes(),
                        );
                        msg[8..].copy_from_slice(&(b.as_nanos() as u64).to_ne_bytes());
                        // SAFETY: write(2) on an open descriptor, async-signal-safe.
                        nix::libc::write(join_w_raw, msg.as_ptr().cast(), msg.len());
                    }
                    Ok(())
                });
            }
            Ok(())
        });
    let (user0, sys0) = children_cpu();
    let t0 = Instant::now();
    let t0_mono = mono_now();
    let handle = match expr.start() {
        Ok(h) => Arc::new(h),
        Err(e) => {
            return Ok(ExecOutcome {
                spawn_error: Some(format!("cannot start `{program}`: {e}")),
                wall: t0.elapsed(),
                ..Default::default()
            })
        }
    };
    // `start` returns once the child has exec'd: its report is in the pipe.
    drop(join_w);
    let mut buf = [0u8; 16];
    let (cgroup_join, spawn) = match nix::unistd::read(&join_r, &mut buf) {
        Ok(16) => {
            let word = |i: usize| u64::from_ne_bytes(buf[i..i + 8].try_into().unwrap_or([0; 8]));
            let exec_at = Duration::from_nanos(word(8));
            (
                Duration::from_nanos(word(0)),
                t0_mono.map_or(Duration::ZERO, |t| exec_at.saturating_sub(t)),
            )
        }
        _ => (Duration::ZERO, Duration::ZERO),
    };
    drop(join_r);
    let pgid = handle.pids().first().map(|p| Pid::from_raw(*p as i32));
    let (tx, rx) = mpsc::channel();
    let waiter = {
        let handle = Arc::clone(&handle);
        std::thread::spawn(move || {
            let status = handle.wait().map(|o| o.status);
            let _ = tx.send((status, Instant::now()));
        })
    };
    let ((status, end), stopped) = wait_or_kill(pgid, t0, timeout, cancel, |tick| {
        match rx.recv_timeout(tick) {
            Ok(done) => Some(done),
            Err(mpsc::RecvTimeoutError::Disconnected) => Some((
                Err(std::io::Error::other("waiter thread died")),
                Instant::now(),
            )),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
        }
    });
    let _ = waiter.join();
    // Whatever the command left running in its group goes too, and in its cgroup
    // (where a `setsid` escapee still is).
    if let Some(g) = pgid {
        let _ = killpg(g, Signal::SIGKILL);
    }
    if let Some(cg) = cgroup {
        kill_leftovers(cg);
    }
    let (user1, sys1) = children_cpu();
    let status = status?;
    Ok(ExecOutcome {
        exit_code: status.code(),
        signal: status.signal(),
        wall: end.duration_since(t0).saturating_sub(spawn),
        cgroup_join,
        spawn,
        user: user1.saturating_sub(user0),
        sys: sys1.saturating_sub(sys0),
        timed_out: stopped.timed_out,
        cancelled: stopped.cancelled,
        spawn_error: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn measures_cpu_of_the_whole_tree_and_keeps_output() {
        let d = tempfile::tempdir().unwrap();
        let (o, e) = (d.path().join("o"), d.path().join("e"));
        let no = AtomicBool::new(false);
        // A child shell that burns CPU in a grandchild process.
        let argv = words(&[
            "sh",
            "-c",
            "sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; echo out; echo err >&2",
        ]);
        let r = exec(&argv, d.path(), &o, &e, None, &no, None).unwrap();
        assert_eq!(r.exit_code, Some(0));
        assert!(r.user + r.sys > Duration::from_millis(50), "{r:?}");
        assert!(r.wall >= r.user.min(r.wall));
        assert_eq!(std::fs::read_to_string(&o).unwrap(), "out\n");
        assert_eq!(std::fs::read_to_string(&e).unwrap(), "err\n");
    }

    /// The child's fork-to-exec time (with its cgroup join) is measured and kept out of
    /// `wall`.
    #[test]
    fn joining_the_point_cgroups_is_measured_apart_from_wall() {
        let d = tempfile::tempdir().unwrap();
        let (o, e) = (d.path().join("o"), d.path().join("e"));
        let no = AtomicBool::new(false);
        let name = format!("exec-unit-{}", std::process::id());
        let mut cg = PointCgroup::create(&crate::devices::cgroup::planned_dirs(&name)).unwrap();
        assert!(!cg.dirs().is_empty(), "no cgroup hierarchy: run as root");
        let run = |cg: Option<&PointCgroup>| {
            exec(&words(&["true"]), d.path(), &o, &e, None, &no, cg).unwrap()
        };
        let joined = run(Some(&cg));
        let plain = run(None);
        cg.remove().unwrap();
        assert!(joined.success() && plain.success());
        assert!(joined.cgroup_join > Duration::ZERO, "{joined:?}");
        assert!(joined.spawn >= joined.cgroup_join, "{joined:?}");
        assert_eq!(plain.cgroup_join, Duration::ZERO);
        assert!(plain.spawn > Duration::ZERO, "{plain:?}");
        let mut both = joined.clone();
        both.accumulate(&joined);
        assert_eq!(both.cgroup_join, joined.cgroup_join * 2);
    }

    #[test]
    fn exit_codes_timeouts_and_missing_programs() {
        let d = tempfile::tempdir().unwrap();
        let (o, e) = (d.path().join("o"), d.path().join("e"));
        let no = AtomicBool::new(false);
        let r = exec(
            &words(&["sh", "-c", "exit 3"]),
            d.path(),
            &o,
            &e,
            None,
            &no,
            None,
        )
        .unwrap();
        assert_eq!(r.exit_code, Some(3));
        let r = exec(
            &words(&["sleep", "30"]),
            d.path(),
            &o,
            &e,
            Some(Duration::from_millis(200)),
            &no,
            None,
        )
        .unwrap();
        assert!(r.timed_out && r.signal == Some(15), "{r:?}");
        assert!(r.wall < Duration::from_secs(10));
        let r = exec(
            &words(&["/nonexistent/prog"]),
            d.path(),
            &o,
            &e,
            None,
            &no,
            None,
        )
        .unwrap();
        assert!(r.spawn_error.is_some());
        assert_eq!(r.code_for_table(), 127);
    }

    #[test]
    fn an_argument_with_shell_syntax_is_not_interpreted() {
        let d = tempfile::tempdir().unwrap();
        let (o, e) = (d.path().join("o"), d.path().join("e"));
        let marker = d.path().join("pwned");
        let evil = format!("1; touch {}", marker.display());
        let r = exec(
            &words(&["echo", &evil]),
            d.path(),
            &o,
            &e,
            None,
            &AtomicBool::new(false),
            None,
        )
        .unwrap();
        assert!(r.success());
        assert!(!marker.exists());
        assert_eq!(std::fs::read_to_string(&o).unwrap(), format!("{evil}\n"));
    }
}
