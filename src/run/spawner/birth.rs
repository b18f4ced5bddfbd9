//! What the spawner is born with: the memory it will use, allocated before the fork
//! ([`Arena`]), and its birth in the point's cgroup v2 directory ([`clone_into`]).

use nix::libc;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Memory of its own mapping, zero until touched: the spawner's request buffer and
/// argument vector are sized for the longest command Linux runs (16 MiB together), and
/// taking them from the allocator zeroed all of it (mimalloc clears fresh pages: 30 %
/// of a one-iteration run's CPU went there). Unmapped on drop.
pub(super) struct Mapped<T> {
    at: *mut T,
    len: usize,
}

impl<T: Copy> Mapped<T> {
    pub(super) fn new(len: usize) -> std::io::Result<Mapped<T>> {
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
    pub(super) fn slice(&self) -> &[T] {
        // SAFETY: `len` elements mapped at `at`, initialised (zero), ours.
        unsafe { std::slice::from_raw_parts(self.at, self.len) }
    }
    pub(super) fn slice_mut(&mut self) -> &mut [T] {
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
pub(super) struct Arena {
    pub(super) buf: Mapped<u8>,
    pub(super) ptrs: Mapped<*const libc::c_char>,
    pub(super) procs: Vec<CString>,
    /// The entry of `procs` the spawner was born in (not joined again).
    pub(super) born_in: Option<usize>,
    pub(super) dev_null: CString,
    pub(super) root: CString,
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
pub(super) unsafe fn clone_into(dir: &Path) -> std::io::Result<libc::pid_t> {
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
