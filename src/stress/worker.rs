//! One fsstress process: `ops_per_proc` operations in `DIR/p<id>` with its own generator.

use super::names::{Ft, NameList, ANY, DIRS, NOT_DIR, REGS};
use super::{Config, Delay, Op, OpStats, StressError};
use nix::errno::Errno;
use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::{fstat, mkdirat, mknodat, Mode, SFlag};
use nix::unistd::{linkat, symlinkat, unlinkat, UnlinkatFlags};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// fsstress's PATH_MAX bound on symlink targets.
const SYMLINK_MAX: u64 = 4096;
/// fsstress write sizes: up to 32 pages.
const WRITE_MAX: u64 = 4096 * 32;
/// Offsets of writes and truncates: within the file size + 1 MiB.
const OFFSET_SLACK: u64 = 1 << 20;

enum Outcome {
    Ok,
    Err(Errno),
    /// No entry of the kind the op needs (fsstress: "no filename"): nothing was done.
    Skipped,
}

/// The directory of process `id`: `DIR/p<id in hex>`, as fsstress.
pub(crate) fn proc_dir(cfg: &Config, id: u32) -> PathBuf {
    cfg.dir.join(format!("p{id:x}"))
}

/// The injected delay of one process (see [`Delay`]): the time it worked and waited.
struct Owed {
    fraction: f64,
    start: Instant,
    waited: Duration,
}

impl Owed {
    fn new(delay: Delay) -> Owed {
        Owed {
            fraction: delay.fraction(),
            start: Instant::now(),
            waited: Duration::ZERO,
        }
    }

    /// Busy-wait until the time waited is `fraction` of the time worked. A wait that
    /// overshoots counts as waited, so the next one is shorter by as much.
    fn pay(&mut self) {
        let now = Instant::now();
        let worked = now.duration_since(self.start).saturating_sub(self.waited);
        let owed = worked.mul_f64(self.fraction);
        if owed <= self.waited {
            return;
        }
        let until = now + (owed - self.waited);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        self.waited += Instant::now().duration_since(now);
    }
}

/// Run process `id` with `seed + id`; verbose lines go to `log`. Returns the counts and
/// the seconds it busy-waited for an injected delay (0 without one).
pub(crate) fn run_proc(
    cfg: &Config,
    seed: u64,
    id: u32,
    log: &mut dyn Write,
) -> Result<(Vec<OpStats>, f64), StressError> {
    let mut owed = cfg.delay.map(Owed::new);
    let io = |path: &PathBuf| {
        let path = path.clone();
        move |source| StressError::Io { path, source }
    };
    std::fs::create_dir_all(&cfg.dir).map_err(io(&cfg.dir))?;
    let dir = proc_dir(cfg, id);
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(&dir)(e)),
    }
    let root: OwnedFd = File::open(&dir).map_err(io(&dir))?.into();

    let ops: Vec<Op> = Op::ALL
        .iter()
        .flat_map(|&op| std::iter::repeat_n(op, cfg.freq(op) as usize))
        .collect();
    if ops.is_empty() {
        return Err(StressError::Config(super::ConfigError::NoOps));
    }
    let mut p = Proc {
        rng: ChaCha8Rng::seed_from_u64(seed.wrapping_add(u64::from(id))),
        root,
        names: NameList::default(),
        path: String::new(),
        path2: String::new(),
        buf: Vec::new(),
        stats: BTreeMap::new(),
    };
    for opno in 0..cfg.ops_per_proc {
        if opno % Delay::EVERY == 0 && opno > 0 {
            if let Some(o) = owed.as_mut() {
                o.pay();
            }
        }
        let op = ops[(p.rng.next_u32() as usize) % ops.len()];
        let r = p.rng.next_u64();
        let outcome = p.step(op, r);
        let s = p.stats.entry(op).or_default();
        s.attempted += 1;
        let errno = match outcome {
            Outcome::Ok => {
                s.succeeded += 1;
                0
            }
            Outcome::Err(e) => {
                s.failed += 1;
                *s.errors.entry(e as i32).or_insert(0) += 1;
                e as i32
            }
            Outcome::Skipped => {
                s.skipped += 1;
                -1
            }
        };
        if cfg.verbose {
            let _ = if errno < 0 {
                writeln!(log, "{id}/{opno}: {} - no target", op.name())
            } else if p.path2.is_empty() {
                writeln!(log, "{id}/{opno}: {} {} {errno}", op.name(), p.path)
            } else {
                writeln!(
                    log,
                    "{id}/{opno}: {} {} {} {errno}",
                    op.name(),
                    p.path,
                    p.path2
                )
            };
        }
    }
    let Proc {
        root, mut stats, ..
    } = p;
    drop(root);
    if cfg.cleanup {
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
    }
    let waited = owed.as_mut().map_or(0.0, |o| {
        o.pay();
        o.waited.as_secs_f64()
    });
    let counts = Op::ALL
        .iter()
        .filter(|&&op| cfg.freq(op) > 0 || stats.contains_key(&op))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|&op| {
            let s = stats.remove(&op).unwrap_or_default();
            OpStats {
                op,
                attempted: s.attempted,
                succeeded: s.succeeded,
                failed: s.failed,
                skipped: s.skipped,
                errors: s
                    .errors
                    .into_iter()
                    .map(|(e, n)| (errno_name(e), n))
                    .collect(),
            }
        })
        .collect();
    Ok((counts, waited))
}

fn errno_name(e: i32) -> String {
    let errno = Errno::from_raw(e);
    if errno == Errno::UnknownErrno {
        format!("errno{e}")
    } else {
        format!("{errno:?}")
    }
}

#[derive(Default)]
struct Stat {
    attempted: u64,
    succeeded: u64,
    failed: u64,
    skipped: u64,
    errors: BTreeMap<i32, u64>,
}

struct Proc {
    rng: ChaCha8Rng,
    root: OwnedFd,
    names: NameList,
    /// The op's (first) path, and the second one for link/rename; reused buffers.
    path: String,
    path2: String,
    buf: Vec<u8>,
    stats: BTreeMap<Op, Stat>,
}

impl Proc {
    fn step(&mut self, op: Op, r: u64) -> Outcome {
        self.path.clear();
        self.path2.clear();
        match op {
            Op::Creat => self.create(Ft::Reg, r),
            Op::Mkdir => self.create(Ft::Dir, r),
            Op::Mknod => self.create(Ft::Dev, r),
            Op::Symlink => self.create(Ft::Sym, r),
            Op::Link => self.link(r),
            Op::Rename => self.rename(r),
            Op::Rmdir => self.remove(DIRS, r),
            Op::Unlink => self.remove(NOT_DIR, r),
            Op::Write => self.write(r),
            Op::Truncate => self.truncate(r),
            Op::Fsync => self.fsync(r),
        }
    }

    /// creat/mkdir/mknod/symlink: a new name in a random directory (the process
    /// directory while there is none), as fsstress.
    fn create(&mut self, ft: Ft, r: u64) -> Outcome {
        let parent = self.names.pick(DIRS, r);
        let name = self.names.new_name();
        self.names.child_path(parent, ft, name, &mut self.path);
        let path = self.path.as_str();
        let res = match ft {
            Ft::Reg => openat(
                &self.root,
                path,
                OFlag::O_CREAT | OFlag::O_WRONLY | OFlag::O_TRUNC | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o666),
            )
            .map(drop),
            Ft::Dir => mkdirat(&self.root, path, Mode::from_bits_truncate(0o777)),
            Ft::Dev => mknodat(
                &self.root,
                path,
                SFlag::S_IFCHR,
                Mode::from_bits_truncate(0o444),
                0,
            ),
            Ft::Sym => {
                // fsstress: a target of random length < PATH_MAX, 'x's with a '/' every 10.
                let len = (self.rng.next_u64() % SYMLINK_MAX) as usize;
                let mut target = vec![b'x'; len];
                let mut i = 10;
                while i + 1 < len {
                    target[i] = b'/';
                    i += 10;
                }
                match String::from_utf8(target) {
                    Ok(t) => symlinkat(t.as_str(), &self.root, path),
                    Err(_) => Err(Errno::EINVAL),
                }
            }
        };
        self.finish(res, |t| {
            t.add(ft, name, parent);
        })
    }

    fn link(&mut self, r: u64) -> Outcome {
        let Some(src) = self.names.pick(NOT_DIR, r) else {
            return Outcome::Skipped;
        };
        let parent = self.names.pick(DIRS, self.rng.next_u64());
        let ft = self.names.ft(src);
        let name = self.names.new_name();
        self.names.path(src, &mut self.path);
        self.names.child_path(parent, ft, name, &mut self.path2);
        let res = linkat(
            &self.root,
            self.path.as_str(),
            &self.root,
            self.path2.as_str(),
            nix::fcntl::AtFlags::empty(),
        );
        self.finish(res, |t| {
            t.add(ft, name, parent);
        })
    }

    fn rename(&mut self, r: u64) -> Outcome {
        let Some(src) = self.names.pick(ANY, r) else {
            return Outcome::Skipped;
        };
        let parent = self.names.pick(DIRS, self.rng.next_u64());
        let ft = self.names.ft(src);
        let name = self.names.new_name();
        self.names.path(src, &mut self.path);
        self.names.child_path(parent, ft, name, &mut self.path2);
        let res = renameat(
            &self.root,
            self.path.as_str(),
            &self.root,
            self.path2.as_str(),
        );
        self.finish(res, |t| t.renamed(src, name, parent))
    }

    /// rmdir (`DIRS`) or unlink (`NOT_DIR`) of a random entry.
    fn remove(&mut self, mask: u8, r: u64) -> Outcome {
        let Some(key) = self.names.pick(mask, r) else {
            return Outcome::Skipped;
        };
        self.names.path(key, &mut self.path);
        let how = if mask == DIRS {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        let res = unlinkat(&self.root, self.path.as_str(), how);
        self.finish(res, |t| t.remove(key))
    }

    fn open_file(&mut self, r: u64) -> Result<Option<File>, Errno> {
        let Some(key) = self.names.pick(REGS, r) else {
            return Ok(None);
        };
        self.names.path(key, &mut self.path);
        let fd = openat(
            &self.root,
            self.path.as_str(),
            OFlag::O_WRONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Some(File::from(fd)))
    }

    fn write(&mut self, r: u64) -> Outcome {
        let file = match self.open_file(r) {
            Ok(Some(f)) => f,
            Ok(None) => return Outcome::Skipped,
            Err(e) => return Outcome::Err(e),
        };
        let size = match fstat(&file) {
            Ok(st) => st.st_size.max(0) as u64,
            Err(e) => return Outcome::Err(e),
        };
        let off = (self.rng.next_u64() >> 1) % (size + OFFSET_SLACK);
        let len = (self.rng.next_u64() % WRITE_MAX + 1) as usize;
        // fsstress fills with the low byte of its name counter.
        let fill = (self.names.name_seq() & 0xff) as u8;
        self.buf.clear();
        self.buf.resize(len, fill);
        match file.write_at(&self.buf, off) {
            Ok(_) => Outcome::Ok,
            Err(e) => Outcome::Err(io_errno(&e)),
        }
    }

    fn truncate(&mut self, r: u64) -> Outcome {
        let file = match self.open_file(r) {
            Ok(Some(f)) => f,
            Ok(None) => return Outcome::Skipped,
            Err(e) => return Outcome::Err(e),
        };
        let size = match fstat(&file) {
            Ok(st) => st.st_size.max(0) as u64,
            Err(e) => return Outcome::Err(e),
        };
        let off = (self.rng.next_u64() >> 1) % (size + OFFSET_SLACK);
        match file.set_len(off) {
            Ok(()) => Outcome::Ok,
            Err(e) => Outcome::Err(io_errno(&e)),
        }
    }

    fn fsync(&mut self, r: u64) -> Outcome {
        let file = match self.open_file(r) {
            Ok(Some(f)) => f,
            Ok(None) => return Outcome::Skipped,
            Err(e) => return Outcome::Err(e),
        };
        match file.sync_all() {
            Ok(()) => Outcome::Ok,
            Err(e) => Outcome::Err(io_errno(&e)),
        }
    }

    fn finish(&mut self, res: nix::Result<()>, on_ok: impl FnOnce(&mut NameList)) -> Outcome {
        match res {
            Ok(()) => {
                on_ok(&mut self.names);
                Outcome::Ok
            }
            Err(e) => Outcome::Err(e),
        }
    }
}

fn io_errno(e: &std::io::Error) -> Errno {
    e.raw_os_error().map_or(Errno::EIO, Errno::from_raw)
}
