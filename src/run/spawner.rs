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
use nix::libc;
use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

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

/// Memory of its own mapping, zero until touched: the spawner's request buffer and
/// argument vector are sized for the longest command Linux runs (16 MiB together), and
/// taking them from the allocator zeroed all of it (mimalloc clears fresh pages: 30 %
/// of a one-iteration run's CPU went there). Unmapped on drop.
struct Mapped<T> {
    at: *mut T,
    len: usize,
}

impl<T: Copy> Mapped<T> {
    fn new(len: usize) -> std::io::Result<Mapped<T>> {
        let bytes = len * std::mem::size_of::<T>();
        // SAFETY: a fresh private anonymous mapping; its zero bytes are a valid T (the
        // callers' T are bytes and raw pointers, for which all-zero is null).
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // Small pages: a request touches a few of them, not 2 MiB of zeroed huge page.
        // SAFETY: advice on our own mapping.
        unsafe { libc::madvise(at, bytes, libc::MADV_NOHUGEPAGE) };
        Ok(Mapped { at: at.cast(), len })
    }
    fn slice(&self) -> &[T] {
        // SAFETY: `len` elements mapped at `at`, initialised (zero), ours.
        unsafe { std::slice::from_raw_parts(self.at, self.len) }
    }
    fn slice_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.at, self.len) }
    }
}

impl<T> Drop for Mapped<T> {
    fn drop(&mut self) {
        // SAFETY: our own mapping, unmapped once.
        unsafe { libc::munmap(self.at.cast(), self.len * std::mem::size_of::<T>()) };
    }
}

/// What the spawner needs, allocated before the fork.
struct Arena {
    buf: Mapped<u8>,
    ptrs: Mapped<*const libc::c_char>,
    procs: Vec<CString>,
    /// The entry of `procs` the spawner was born in (not joined again).
    born_in: Option<usize>,
    dev_null: CString,
    root: CString,
}

/// `struct clone_args` of `<linux/sched.h>` (version 2, with `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `clone3(CLONE_INTO_CGROUP)` into the cgroup v2 directory `dir`: like `fork`, but
/// the child is born in that cgroup. Err when the kernel or the directory refuses
/// (the caller then forks).
///
/// # Safety
/// As `fork`: in the child (0 returned) only async-signal-safe calls may follow.
unsafe fn clone_into(dir: &Path) -> std::io::Result<libc::pid_t> {
    let c = CString::new(dir.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let fd = libc::open(
        c.as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: fd as u64,
        ..Default::default()
    };
    let pid = libc::syscall(
        libc::SYS_clone3,
        &args as *const CloneArgs,
        std::mem::size_of::<CloneArgs>(),
    );
    if pid == 0 {
        return Ok(0);
    }
    let e = std::io::Error::last_os_error();
    libc::close(fd);
    if pid < 0 {
        Err(e)
    } else {
        Ok(pid as libc::pid_t)
    }
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

// ---- The spawner's side: system calls only, from here to `_exit`. ----

fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64).wrapping_mul(1_000_000_000) + t.tv_nsec as u64
}

fn last_errno() -> u64 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0) as u64
}

fn say(sock: RawFd, w: [u64; WORDS]) {
    let mut b = [0u8; WORDS * 8];
    for (i, v) in w.iter().enumerate() {
        b[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
    }
    if !write_all(sock, &b) {
        // fslab is gone.
        // SAFETY: _exit ends the process without running anything of fslab's.
        unsafe { libc::_exit(0) };
    }
}

fn write_all(fd: RawFd, mut b: &[u8]) -> bool {
    while !b.is_empty() {
        // SAFETY: writing from a valid slice.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if n < 0 && last_errno() == libc::EINTR as u64 {
            continue;
        }
        if n <= 0 {
            return false;
        }
        b = &b[n as usize..];
    }
    true
}

/// Fill `b` from `fd`; false at end of file or on an error.
fn read_exact(fd: RawFd, b: &mut [u8]) -> bool {
    let mut got = 0;
    while got < b.len() {
        // SAFETY: reading into the unfilled part of a valid slice.
        let n = unsafe { libc::read(fd, b[got..].as_mut_ptr().cast(), b.len() - got) };
        if n < 0 && last_errno() == libc::EINTR as u64 {
            continue;
        }
        if n <= 0 {
            return false;
        }
        got += n as usize;
    }
    true
}

fn timeval_ns(t: libc::timeval) -> u64 {
    (t.tv_sec.max(0) as u64) * 1_000_000_000 + (t.tv_usec.max(0) as u64) * 1000
}

fn children_cpu() -> (u64, u64) {
    // SAFETY: an all-zero rusage is valid, and getrusage fills it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rusage.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    (timeval_ns(u.ru_utime), timeval_ns(u.ru_stime))
}

/// Reap every exited child (the command's orphans, which the subreaper inherits).
fn reap_exited() {
    let mut st = 0;
    // SAFETY: waitpid with WNOHANG on our own children.
    while unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) } > 0 {}
}

/// Kill every process in the cgroups but the spawner, reaping what exits, until none is
/// left (or 10 s have passed: a process stuck in the kernel is then `fslab cleanup`'s).
fn kill_leftovers(procs: &[CString], me: libc::pid_t) {
    let deadline = now_ns() + 10_000_000_000;
    loop {
        let mut seen = false;
        for p in procs {
            for_each_pid(p, |pid| {
                if pid != me {
                    seen = true;
                    // SAFETY: kill(2).
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            });
        }
        reap_exited();
        if !seen || now_ns() > deadline {
            return;
        }
        let t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: a valid timespec.
        unsafe { libc::nanosleep(&t, std::ptr::null_mut()) };
    }
}

/// Call `f` with each process id listed in a `cgroup.procs` file.
fn for_each_pid(path: &CString, mut f: impl FnMut(libc::pid_t)) {
    // SAFETY: open(2) of a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return;
    }
    let mut chunk = [0u8; 4096];
    let mut cur: Option<libc::pid_t> = None;
    loop {
        // SAFETY: reading into a stack buffer.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n <= 0 {
            break;
        }
        for &c in &chunk[..n as usize] {
            if c.is_ascii_digit() {
                cur = Some(cur.unwrap_or(0).wrapping_mul(10) + libc::pid_t::from(c - b'0'));
            } else if let Some(p) = cur.take() {
                f(p);
            }
        }
    }
    if let Some(p) = cur {
        f(p);
    }
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(fd) };
}

/// The spawner's life: set up, then one command per request until the socket closes.
///
/// # Safety
/// Call only in the child of a `fork`, with `sock` its end of the socket pair.
unsafe fn serve(sock: RawFd, parent: libc::pid_t, a: &mut Arena) -> ! {
    // Nothing of fslab's but the socket: stdin/stdout/stderr are replaced below, and
    // every other descriptor is closed.
    if sock > 3 {
        libc::close_range(3, (sock - 1) as libc::c_uint, 0);
    }
    libc::close_range((sock + 1) as libc::c_uint, libc::c_uint::MAX, 0);
    // Ctrl-C at the terminal reaches fslab's process group, which this is in: fslab
    // decides what happens to the command. SIGPIPE: an error from write, not death.
    for s in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGPIPE,
    ] {
        libc::signal(s, libc::SIG_IGN);
    }
    libc::signal(libc::SIGCHLD, libc::SIG_DFL);
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    if libc::getppid() != parent {
        libc::_exit(0);
    }
    libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    let me = libc::getpid();
    let joined = match a.born_in {
        Some(i) => a.procs.get(..i).unwrap_or_default(),
        None => &a.procs[..],
    };
    let joined_after = match a.born_in {
        Some(i) => a.procs.get(i + 1..).unwrap_or_default(),
        None => &[][..],
    };
    if let Err(e) = crate::devices::cgroup::join_procs(joined)
        .and_then(|()| crate::devices::cgroup::join_procs(joined_after))
    {
        let code = e.raw_os_error().unwrap_or(0) as u64;
        say(sock, [REFUSED, Stage::Join as u64, code, 0, 0]);
        libc::_exit(1);
    }
    let null = libc::open(a.dev_null.as_ptr(), libc::O_RDWR);
    if null >= 0 {
        libc::dup2(null, 0);
        libc::dup2(null, 1);
        libc::dup2(null, 2);
        if null > 2 {
            libc::close(null);
        }
    }
    libc::chdir(a.root.as_ptr());
    // What every command gets: its own process group, no signal blocked, every signal
    // at its default (an ignored SIGPIPE would otherwise survive `exec`).
    let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
    libc::posix_spawnattr_init(&mut attr);
    let mut all: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    libc::posix_spawnattr_setsigdefault(&mut attr, &all);
    libc::posix_spawnattr_setsigmask(&mut attr, &none);
    libc::posix_spawnattr_setpgroup(&mut attr, 0);
    libc::posix_spawnattr_setflags(
        &mut attr,
        (libc::POSIX_SPAWN_SETPGROUP | libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF)
            as libc::c_short,
    );
    say(sock, [READY, 0, 0, 0, 0]);
    loop {
        let mut len = [0u8; 4];
        if !read_exact(sock, &mut len) {
            libc::_exit(0);
        }
        let len = u32::from_ne_bytes(len) as usize;
        let Some(req) = a.buf.slice_mut().get_mut(..len) else {
            libc::_exit(2);
        };
        if len < 4 || !read_exact(sock, req) {
            libc::_exit(2);
        }
        let count = u32::from_ne_bytes([req[0], req[1], req[2], req[3]]) as usize;
        // The strings: cwd, stdout, stderr, then argv (NUL-terminated in the buffer).
        let mut starts = [0usize; 3];
        let mut at = 4;
        let mut n = 0;
        while n < count && at < len {
            if n < 3 {
                starts[n] = at;
            } else if let Some(slot) = a.ptrs.slice_mut().get_mut(n - 3) {
                *slot = req.as_ptr().add(at).cast();
            } else {
                libc::_exit(2);
            }
            while at < len && req[at] != 0 {
                at += 1;
            }
            at += 1;
            n += 1;
        }
        if n != count || count < 4 {
            libc::_exit(2);
        }
        let argc = count - 3;
        if let Some(slot) = a.ptrs.slice_mut().get_mut(argc) {
            *slot = std::ptr::null();
        } else {
            libc::_exit(2);
        }
        let cstr = |i: usize| req.as_ptr().add(starts[i]).cast::<libc::c_char>();
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND | libc::O_CLOEXEC;
        let out = libc::open(cstr(1), flags, 0o644 as libc::c_uint);
        if out < 0 {
            say(sock, [REFUSED, Stage::Stdout as u64, last_errno(), 0, 0]);
            continue;
        }
        let err = libc::open(cstr(2), flags, 0o644 as libc::c_uint);
        if err < 0 {
            let e = last_errno();
            libc::close(out);
            say(sock, [REFUSED, Stage::Stderr as u64, e, 0, 0]);
            continue;
        }
        libc::dup2(out, 1);
        libc::dup2(err, 2);
        libc::close(out);
        libc::close(err);
        let release = || {
            // Back to `/` and /dev/null: the spawner pins no directory, mount or log.
            libc::chdir(a.root.as_ptr());
            libc::dup2(0, 1);
            libc::dup2(0, 2);
        };
        if libc::chdir(cstr(0)) != 0 {
            let e = last_errno();
            release();
            say(sock, [REFUSED, Stage::Cwd as u64, e, 0, 0]);
            continue;
        }
        let (user0, sys0) = children_cpu();
        let mut pid: libc::pid_t = 0;
        let t0 = now_ns();
        let rc = libc::posix_spawnp(
            &mut pid,
            a.ptrs.slice()[0],
            std::ptr::null(),
            &attr,
            a.ptrs.slice().as_ptr().cast(),
            libc::environ.cast_const().cast(),
        );
        // posix_spawn returns once the child has exec'd (CLONE_VFORK): the command's
        // time starts here.
        let t1 = now_ns();
        release();
        if rc != 0 {
            say(sock, [REFUSED, Stage::Spawn as u64, rc as u64, 0, 0]);
            continue;
        }
        say(sock, [STARTED, pid as u64, t1.saturating_sub(t0), 0, 0]);
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) == -1 && last_errno() == libc::EINTR as u64 {}
        let t2 = now_ns();
        // What the command left: its process group, then anything else in the cgroups.
        libc::kill(-pid, libc::SIGKILL);
        kill_leftovers(&a.procs, me);
        let (user1, sys1) = children_cpu();
        say(
            sock,
            [
                EXITED,
                status as u32 as u64,
                t2.saturating_sub(t1),
                user1.saturating_sub(user0),
                sys1.saturating_sub(sys0),
            ],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::cgroup::planned_dirs;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A point cgroup and a spawner in it, removed at the end.
    struct Fixture {
        dir: tempfile::TempDir,
        cg: PointCgroup,
        name: String,
        no: AtomicBool,
    }

    impl Fixture {
        fn new(tag: &str) -> Fixture {
            let name = format!("spawner-{tag}-{}", std::process::id());
            let cg = PointCgroup::create(&planned_dirs(&name)).unwrap();
            assert!(!cg.dirs().is_empty(), "no cgroup hierarchy: run as root");
            Fixture {
                dir: tempfile::tempdir().unwrap(),
                cg,
                name,
                no: AtomicBool::new(false),
            }
        }
        fn out(&self) -> std::path::PathBuf {
            self.dir.path().join("o")
        }
        fn err(&self) -> std::path::PathBuf {
            self.dir.path().join("e")
        }
        fn run(&self, s: &mut Spawner, argv: &[&str], timeout: Option<Duration>) -> ExecOutcome {
            s.run(
                &words(argv),
                self.dir.path(),
                &self.out(),
                &self.err(),
                timeout,
                &self.no,
            )
            .unwrap()
        }
        fn read(&self, p: &Path) -> String {
            std::fs::read_to_string(p).unwrap_or_default()
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = self.cg.remove();
        }
    }

    #[test]
    fn commands_are_born_in_the_point_cgroups_with_their_output_and_cpu() {
        let f = Fixture::new("born");
        let mut s = Spawner::start(&f.cg).unwrap();
        // Born there where the kernel can (5.7 and later, with a v2 hierarchy).
        assert_eq!(s.born_in_cgroup(), f.cg.v2_index().is_some());
        let r = f.run(&mut s, &["cat", "/proc/self/cgroup"], None);
        assert!(r.success(), "{r:?}");
        assert_eq!(r.cgroup_join, Duration::ZERO);
        let groups = f.read(&f.out());
        // Every hierarchy the point uses (unified, and v1 blkio where mounted).
        let lines: Vec<&str> = groups.lines().filter(|l| l.ends_with(&f.name)).collect();
        assert_eq!(lines.len(), f.cg.dirs().len(), "{groups}");
        // The CPU time of a grandchild counts; stdout and stderr are appended.
        let r = f.run(
            &mut s,
            &[
                "sh",
                "-c",
                "sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; echo out; echo err >&2",
            ],
            None,
        );
        assert_eq!(r.exit_code, Some(0), "{r:?}");
        assert!(r.user + r.sys > Duration::from_millis(50), "{r:?}");
        assert!(r.wall > Duration::ZERO && r.spawn > Duration::ZERO, "{r:?}");
        assert!(f.read(&f.out()).ends_with("\nout\n"));
        assert_eq!(f.read(&f.err()), "err\n");
    }

    #[test]
    fn what_a_command_leaves_is_killed_and_the_spawner_serves_on() {
        let f = Fixture::new("left");
        let mut s = Spawner::start(&f.cg).unwrap();
        let r = f.run(
            &mut s,
            &["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!"],
            None,
        );
        assert!(r.success(), "{r:?}");
        let pid: i32 = f.read(&f.out()).trim().parse().unwrap();
        // Killed and reaped before the answer came back.
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "sleep {pid} survived"
        );
        assert_eq!(f.cg.pids(), vec![s.pid()]);
        assert!(f.run(&mut s, &["true"], None).success());
    }

    #[test]
    fn commands_get_default_signals_their_own_group_and_no_descriptor_of_fslab() {
        let f = Fixture::new("sig");
        // A descriptor fslab holds (close-on-exec, as all of Rust's are) must not stay
        // open in the spawner, and its working directory is `/` between commands.
        let held = std::fs::File::open("/proc/self/status").unwrap();
        let mut s = Spawner::start(&f.cg).unwrap();
        let fds: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", s.pid()))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(fds.len(), 4, "stdin/out/err and the socket only: {fds:?}");
        drop(held);
        // With SIGPIPE ignored (as fslab's parent shells sometimes leave it), `yes`
        // would say "Broken pipe" on stderr; at its default it just dies.
        let r = f.run(&mut s, &["sh", "-c", "yes | head -c 1 >/dev/null"], None);
        assert!(r.success(), "{r:?}");
        assert_eq!(f.read(&f.err()), "");
        // Its own process group, not fslab's.
        let r = f.run(&mut s, &["sh", "-c", "ps -o pgid= -p $$"], None);
        assert!(r.success(), "{r:?}");
        let pgid: i32 = f.read(&f.out()).trim().parse().unwrap();
        assert_ne!(pgid, nix::unistd::getpgrp().as_raw());
        let cwd = std::fs::read_link(format!("/proc/{}/cwd", s.pid())).unwrap();
        assert_eq!(cwd, Path::new("/"));
    }

    #[test]
    fn exit_codes_timeouts_cancellation_and_what_cannot_start() {
        let f = Fixture::new("codes");
        let mut s = Spawner::start(&f.cg).unwrap();
        assert_eq!(
            f.run(&mut s, &["sh", "-c", "exit 3"], None).exit_code,
            Some(3)
        );
        let r = f.run(&mut s, &["sleep", "30"], Some(Duration::from_millis(200)));
        assert!(r.timed_out && r.signal == Some(15), "{r:?}");
        assert!(r.wall < Duration::from_secs(10), "{r:?}");
        let r = f.run(&mut s, &["/nonexistent/prog"], None);
        assert!(
            r.spawn_error.as_deref().unwrap().contains("No such file"),
            "{r:?}"
        );
        assert_eq!(r.code_for_table(), 127);
        let r = s
            .run(
                &words(&["true"]),
                &f.dir.path().join("missing"),
                &f.out(),
                &f.err(),
                None,
                &f.no,
            )
            .unwrap();
        assert!(
            r.spawn_error.as_deref().unwrap().contains("cannot enter"),
            "{r:?}"
        );
        let r = f.run(&mut s, &["echo", "a\0b"], None);
        assert!(r.spawn_error.as_deref().unwrap().contains("NUL"), "{r:?}");
        // No shell in between: an argument is one word.
        let marker = f.dir.path().join("pwned");
        let evil = format!("1; touch {}", marker.display());
        assert!(f.run(&mut s, &["echo", &evil], None).success());
        assert!(!marker.exists());
        let yes = AtomicBool::new(true);
        let r = s
            .run(
                &words(&["sleep", "30"]),
                f.dir.path(),
                &f.out(),
                &f.err(),
                None,
                &yes,
            )
            .unwrap();
        assert!(r.cancelled && r.signal == Some(15), "{r:?}");
        // Still serving after all of that.
        assert!(f.run(&mut s, &["true"], None).success());
    }

    #[test]
    fn relative_paths_are_fslabs_not_the_spawners() {
        let f = Fixture::new("rel");
        let mut s = Spawner::start(&f.cg).unwrap();
        // A directory below fslab's working directory, named relatively.
        let here = tempfile::tempdir_in(".").unwrap();
        let rel = Path::new(".").join(here.path().file_name().unwrap());
        let r = s
            .run(
                &words(&["sh", "-c", "pwd; echo e >&2"]),
                &rel,
                &rel.join("o"),
                &rel.join("e"),
                None,
                &f.no,
            )
            .unwrap();
        assert!(r.success(), "{r:?}");
        let out = std::fs::read_to_string(here.path().join("o")).unwrap();
        assert_eq!(Path::new(out.trim()), here.path().canonicalize().unwrap());
        assert_eq!(
            std::fs::read_to_string(here.path().join("e")).unwrap(),
            "e\n"
        );
    }

    #[test]
    fn dropping_the_spawner_ends_it() {
        let f = Fixture::new("drop");
        let s = Spawner::start(&f.cg).unwrap();
        let pid = s.pid();
        assert_eq!(f.cg.pids(), vec![pid]);
        drop(s);
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
        assert!(f.cg.pids().is_empty());
    }
}
