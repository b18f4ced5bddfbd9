//! The spawner's side: system calls only, from the fork to `_exit`, on memory allocated
//! before the fork (see the module docs).

use super::birth::Arena;
use super::{Stage, EXITED, READY, REFUSED, STARTED, WORDS};
use nix::libc;
use std::ffi::CString;
use std::os::fd::RawFd;

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
pub(super) unsafe fn serve(sock: RawFd, parent: libc::pid_t, a: &mut Arena) -> ! {
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
