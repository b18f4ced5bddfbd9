//! The point's spawner: one small process per replicate that lives in the point's
//! cgroups and starts each of its commands, so that a command is born in them.
//!
//! Starting a command from fslab itself costs, per command, a fork of a large process
//! (its page tables are copied) and a cgroup migration in the child before `exec` (the
//! kernel's `cgroup_threadgroup_rwsem` waits for an RCU grace period: 0.3–15 ms here),
//! plus a waiter thread. A micro-benchmark repeated 10,000 times pays that 10,000
//! times. The spawner pays the fork once per replicate: it is created by `clone3` with
//! `CLONE_INTO_CGROUP`, born in the point's cgroup v2 directory (no migration at all:
//! 0.3 ms against ≈ 15 ms for writing `cgroup.procs`), joins the point's v1 cgroups if
//! it has any (the `blkio` one of a throttled point), and from then on starts commands
//! with `posix_spawn` (`CLONE_VM | CLONE_VFORK`: no page tables are copied) and waits
//! for them itself. A kernel without `clone3` or `CLONE_INTO_CGROUP` (before 5.7) gets
//! `fork` and a join of every hierarchy.
//!
//! What a command sees is what [`super::exec::exec`] gives it: its own process group,
//! stdin from `/dev/null`, stdout and stderr appended to the step's log files, the
//! working directory, fslab's environment, every signal at its default disposition and
//! none blocked. What fslab gets back is the same [`ExecOutcome`]: `wall` from the
//! command's `exec` (the return of `posix_spawn`) to its reaping, both read in the
//! spawner; the CPU time of its whole process tree (the spawner is a child subreaper,
//! so what the command orphaned is reaped and counted there); and what the command left
//! in the cgroups is killed before the answer comes back. Timeouts and cancellation stay
//! in fslab, which signals the command's process group.
//!
//! Between `fork` and its exit the spawner runs only system calls on memory it already
//! has (fslab is multithreaded, so nothing that may take a lock, such as the
//! allocator, is safe there): requests arrive as length-prefixed NUL-separated strings
//! into a buffer allocated before the fork, and answers are fixed-size words. It holds
//! no descriptor but its socket and `/dev/null` (nothing of fslab's: no mount is pinned
//! and no FUSE connection kept alive), its working directory is `/` between commands,
//! and it dies with fslab (`PR_SET_PDEATHSIG`) or when its socket closes.

use super::exec::{wait_or_kill, ExecOutcome};
use crate::devices::PointCgroup;
use birth::{clone_into, Arena, Mapped};
use nix::libc;
use serve::serve;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

mod birth;
mod serve;
#[cfg(test)]
mod tests;

/// The largest request: paths plus an argument vector. Linux accepts at most 6 MiB of
/// arguments and environment (3/4 of a 8 MiB stack limit), so any command it would run
/// fits.
const BUF_LEN: usize = 8 << 20;
/// The most arguments a request carries (each takes at least 2 bytes of the kernel's
/// 6 MiB, and a pointer).
const MAX_ARGS: usize = 1 << 20;

/// Answers are five native-endian 64-bit words; the first says which.
const WORDS: usize = 5;
const READY: u64 = 1;
const STARTED: u64 = 2;
const EXITED: u64 = 3;
/// The request was refused before anything was started (the word after it says where:
/// see [`Stage`]).
const REFUSED: u64 = 4;

/// Where a refused request failed, with the errno in the next word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Stdout = 1,
    Stderr = 2,
    Cwd = 3,
    Spawn = 4,
    Join = 5,
}

impl Stage {
    fn from_word(w: u64) -> Option<Stage> {
        [
            Stage::Stdout,
            Stage::Stderr,
            Stage::Cwd,
            Stage::Spawn,
            Stage::Join,
        ]
        .into_iter()
        .find(|s| *s as u64 == w)
    }
}

/// Why the spawner could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SpawnerError {
    #[error("cannot start the point's spawner: {0}")]
    Start(std::io::Error),
    #[error("the point's spawner could not join the point's cgroups: {0}")]
    Join(std::io::Error),
    #[error("the point's spawner went away: {0}")]
    Lost(std::io::Error),
}

/// A running spawner. Dropping it ends it (and reaps it).
#[derive(Debug)]
pub struct Spawner {
    pid: libc::pid_t,
    sock: UnixStream,
    /// Born in the v2 cgroup by `clone3` (else forked, and it joined every hierarchy).
    born: bool,
}

impl Spawner {
    /// Fork the spawner and have it join `cgroup` (every hierarchy the point uses).
    pub fn start(cgroup: &PointCgroup) -> Result<Spawner, SpawnerError> {
        let (ours, theirs) = UnixStream::pair().map_err(SpawnerError::Start)?;
        let mut arena = Arena {
            buf: Mapped::new(BUF_LEN).map_err(SpawnerError::Start)?,
            ptrs: Mapped::new(MAX_ARGS + 1).map_err(SpawnerError::Start)?,
            procs: cgroup.procs_paths(),
            born_in: None,
            dev_null: c"/dev/null".to_owned(),
            root: c"/".to_owned(),
        };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // Born in the v2 cgroup where the kernel can; else forked, joining every one.
        // SAFETY: in the child, `serve` only makes system calls on memory allocated
        // above and never returns (it ends with `_exit`); `clone_into` returns to the
        // child with nothing run in between.
        let born = cgroup.v2_index().and_then(|at| {
            let d = cgroup.dirs().get(at)?;
            unsafe { clone_into(d) }.ok().map(|pid| (pid, at))
        });
        let pid = match born {
            Some((pid, at)) => {
                arena.born_in = Some(at);
                pid
            }
            None => unsafe { libc::fork() },
        };
        match pid {
            -1 => Err(SpawnerError::Start(std::io::Error::last_os_error())),
            0 => unsafe { serve(theirs.as_raw_fd(), parent, &mut arena) },
            pid => {
                drop(theirs);
                let mut s = Spawner {
                    pid,
                    sock: ours,
                    born: arena.born_in.is_some(),
                };
                let w = s.answer().map_err(SpawnerError::Lost)?;
                match (w[0], Stage::from_word(w[1])) {
                    (READY, _) => Ok(s),
                    (REFUSED, Some(Stage::Join)) => Err(SpawnerError::Join(errno(w[2]))),
                    _ => Err(SpawnerError::Lost(std::io::Error::other(
                        "unexpected answer while starting",
                    ))),
                }
            }
        }
    }

    /// Was it born in the point's cgroup v2 directory (`clone3` with
    /// `CLONE_INTO_CGROUP`), rather than forked and moved there?
    pub fn born_in_cgroup(&self) -> bool {
        self.born
    }

    /// The spawner's process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    fn answer(&mut self) -> std::io::Result<[u64; WORDS]> {
        let mut b = [0u8; WORDS * 8];
        self.sock.read_exact(&mut b)?;
        let mut w = [0u64; WORDS];
        for (i, c) in b.chunks_exact(8).enumerate() {
            w[i] = u64::from_ne_bytes(c.try_into().unwrap_or([0; 8]));
        }
        Ok(w)
    }

    /// Run `argv` in `cwd`, appending its output to `stdout` and `stderr`: the same
    /// contract as [`super::exec::exec`] with the point's cgroup. An error means the
    /// spawner is gone (the caller should not use it again).
    pub fn run(
        &mut self,
        argv: &[String],
        cwd: &Path,
        stdout: &Path,
        stderr: &Path,
        timeout: Option<Duration>,
        cancel: &AtomicBool,
    ) -> Result<ExecOutcome, SpawnerError> {
        let Some(program) = argv.first() else {
            return Ok(refused("empty command"));
        };
        let resolved: std::ffi::OsString = crate::tools::provided(program)
            .map_or_else(|| program.into(), |(p, _)| p.into_os_string());
        // The spawner's working directory is `/`, not fslab's: relative paths (a
        // results directory given as `../results`) are made absolute against fslab's.
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let (cwd, stdout, stderr) = (absolute(cwd), absolute(stdout), absolute(stderr));
        let (cwd, stdout, stderr) = (cwd.as_path(), stdout.as_path(), stderr.as_path());
        let mut strings: Vec<&[u8]> = vec![
            cwd.as_os_str().as_bytes(),
            stdout.as_os_str().as_bytes(),
            stderr.as_os_str().as_bytes(),
            resolved.as_bytes(),
        ];
        strings.extend(argv[1..].iter().map(|a| a.as_bytes()));
        if strings.iter().any(|s| s.contains(&0)) {
            return Ok(refused(&format!(
                "cannot start `{program}`: an argument or path contains a NUL byte"
            )));
        }
        let len: usize = 4 + strings.iter().map(|s| s.len() + 1).sum::<usize>();
        if len > BUF_LEN || strings.len() - 3 > MAX_ARGS {
            return Ok(refused(&format!(
                "cannot start `{program}`: its arguments are longer than Linux accepts"
            )));
        }
        let mut req = Vec::with_capacity(4 + len);
        req.extend_from_slice(&(len as u32).to_ne_bytes());
        req.extend_from_slice(&(strings.len() as u32).to_ne_bytes());
        for s in &strings {
            req.extend_from_slice(s);
            req.push(0);
        }
        let t0 = Instant::now();
        self.sock.write_all(&req).map_err(SpawnerError::Lost)?;
        let w = self.answer().map_err(SpawnerError::Lost)?;
        let (pid, spawn) = match (w[0], Stage::from_word(w[1])) {
            (STARTED, _) => (w[1] as libc::pid_t, Duration::from_nanos(w[2])),
            (REFUSED, Some(stage)) => {
                let e = errno(w[2]);
                let m = match stage {
                    Stage::Stdout => format!("cannot open {}: {e}", stdout.display()),
                    Stage::Stderr => format!("cannot open {}: {e}", stderr.display()),
                    Stage::Cwd => format!("cannot enter {}: {e}", cwd.display()),
                    Stage::Spawn | Stage::Join => format!("cannot start `{program}`: {e}"),
                };
                return Ok(refused(&m));
            }
            _ => {
                return Err(SpawnerError::Lost(std::io::Error::other(
                    "unexpected answer to a request",
                )))
            }
        };
        let fd = self.sock.as_raw_fd();
        // The command leads its own process group (the spawner made it so).
        let pgid = Some(nix::unistd::Pid::from_raw(pid));
        let (w, stopped) = wait_or_kill(pgid, t0, timeout, cancel, |tick| {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = libc::c_int::try_from(tick.as_millis()).unwrap_or(libc::c_int::MAX);
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut p, 1, ms) };
            (n > 0).then(|| self.answer())
        });
        let w = w.map_err(SpawnerError::Lost)?;
        if w[0] != EXITED {
            return Err(SpawnerError::Lost(std::io::Error::other(
                "unexpected answer after a command",
            )));
        }
        let status = w[1] as i32;
        let (exit_code, signal) = if libc::WIFEXITED(status) {
            (Some(libc::WEXITSTATUS(status)), None)
        } else if libc::WIFSIGNALED(status) {
            (None, Some(libc::WTERMSIG(status)))
        } else {
            (None, None)
        };
        Ok(ExecOutcome {
            exit_code,
            signal,
            wall: Duration::from_nanos(w[2]),
            user: Duration::from_nanos(w[3]),
            sys: Duration::from_nanos(w[4]),
            timed_out: stopped.timed_out,
            cancelled: stopped.cancelled,
            spawn_error: None,
            cgroup_join: Duration::ZERO,
            spawn,
        })
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
        // SAFETY: the spawner is our child; it holds nothing that needs an orderly end.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            let mut st = 0;
            while libc::waitpid(self.pid, &mut st, 0) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
    }
}

fn errno(w: u64) -> std::io::Error {
    std::io::Error::from_raw_os_error(w as i32)
}

fn refused(why: &str) -> ExecOutcome {
    ExecOutcome {
        spawn_error: Some(why.to_string()),
        ..Default::default()
    }
}
