//! The FUSE filesystem that serves one image file and charges each request the disk
//! model's time.
//!
//! The filesystem has one directory (the root) holding one regular file, `image`. Every
//! open of it is answered with `FOPEN_DIRECT_IO`, so the kernel keeps no page cache of it:
//! each read or write the loop device issues reaches [`ServedFs::read`] /
//! [`ServedFs::write`]. One session thread serves requests one at a time, like one head.
//! The request is done on the image at once, then the thread sleeps for what the model
//! charges it, counted from the request's arrival at the server. The charge is the
//! model's own (it keeps its own clock, [`DiskModel::clock_s`]): the host's time between
//! requests never enters it. A sleep that overruns is taken off the next sleeps (see
//! [`Pacer`]).

use super::model::{Access, Charge, DiskModel};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen,
    ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The served file's name inside the mount.
pub const SERVED_NAME: &str = "image";
const IMAGE_INO: u64 = 2;
const TTL: Duration = Duration::from_secs(3600);

/// What the server has done, readable while it runs.
#[derive(Debug, Default)]
pub struct ServeStats {
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
    /// The model's charged service time, in nanoseconds: the model's clock.
    pub charged_ns: AtomicU64,
    /// The time the server slept for the model, in nanoseconds (asked for).
    pub slept_ns: AtomicU64,
    /// How late the sleeps woke after their deadlines, in nanoseconds in all.
    pub overslept_ns: AtomicU64,
}

pub(super) struct ServedFs {
    image: File,
    size: u64,
    /// The model on the server's clock.
    pacer: Option<Mutex<Pacer>>,
    epoch: Instant,
    stats: Arc<ServeStats>,
    uid: u32,
    gid: u32,
}

impl ServedFs {
    pub(super) fn new(
        image: File,
        size: u64,
        model: Option<DiskModel>,
        stats: Arc<ServeStats>,
    ) -> ServedFs {
        ServedFs {
            image,
            size,
            pacer: model.map(|m| Mutex::new(Pacer::new(m))),
            epoch: Instant::now(),
            stats,
            uid: nix::unistd::getuid().as_raw(),
            gid: nix::unistd::getgid().as_raw(),
        }
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, perm, size, nlink) = match ino {
            1 => (FileType::Directory, 0o755, 0, 2),
            IMAGE_INO => (FileType::RegularFile, 0o600, self.size, 1),
            _ => return None,
        };
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        })
    }

    /// Charge one request: returns the deadline (seconds on the server's clock) to sleep
    /// until.
    fn charge(&self, access: Access, offset: u64, len: u64) -> Option<f64> {
        let pacer = self.pacer.as_ref()?;
        let now = self.epoch.elapsed().as_secs_f64();
        let mut p = pacer.lock().unwrap_or_else(|p| p.into_inner());
        let (deadline, charge) = p.arrive(access, offset, len, now);
        self.stats
            .charged_ns
            .fetch_add((charge.service_s() * 1e9) as u64, Ordering::Relaxed);
        Some(deadline)
    }

    /// Sleep until the deadline, and note how late the wake-up was.
    fn wait(&self, deadline: Option<f64>) {
        let (Some(done), Some(pacer)) = (deadline, self.pacer.as_ref()) else {
            return;
        };
        let until = self.epoch + Duration::from_secs_f64(done);
        let now = Instant::now();
        if until <= now {
            // The host's own work (the pread) took longer than the model: no sleep, and
            // nothing to take off later (that is the host's time, added on top).
            return;
        }
        self.stats
            .slept_ns
            .fetch_add((until - now).as_nanos() as u64, Ordering::Relaxed);
        std::thread::sleep(until - now);
        let woke = self.epoch.elapsed().as_secs_f64();
        self.stats
            .overslept_ns
            .fetch_add(((woke - done).max(0.0) * 1e9) as u64, Ordering::Relaxed);
        let mut p = pacer.lock().unwrap_or_else(|p| p.into_inner());
        p.woke(done, woke);
    }
}

/// The disk model paced on the host's clock: which deadline each request sleeps until.
/// Pure (the host's time is passed in), so that a test can replay a trace with chosen
/// host gaps between the requests.
///
/// The charge is the model's alone: it keeps its own clock, so the host's time between
/// requests (FUSE round trips, the loop worker, a loaded machine) is never counted as the
/// disk's, neither as idle time in which it read ahead nor as time it was busy. The
/// server sleeps each charge from the request's arrival, so that host time is added on
/// top of the model's. A sleep that wakes late (timer slack, a busy CPU) is owed: the
/// lateness is taken off the next sleeps, as far as they go, so that a run's wall time
/// is the model's plus the host's own per-request cost, without every wake-up's lateness
/// on top. Nothing is ever taken off beyond what was overslept, so a run never takes
/// less wall time than the model charges.
pub(super) struct Pacer {
    model: DiskModel,
    /// Oversleep not yet taken off a sleep, in seconds.
    late: f64,
}

impl Pacer {
    pub(super) fn new(model: DiskModel) -> Pacer {
        Pacer { model, late: 0.0 }
    }

    /// A request reaches the server at `now` (seconds on the server's clock): what the
    /// model charges it, and the deadline to reply at.
    pub(super) fn arrive(
        &mut self,
        access: Access,
        offset: u64,
        len: u64,
        now: f64,
    ) -> (f64, Charge) {
        let charge = self.model.request(access, offset, len);
        let service = charge.service_s();
        let owed = self.late.min(service);
        self.late -= owed;
        (now + service - owed, charge)
    }

    /// A sleep for `deadline` woke at `woke`.
    pub(super) fn woke(&mut self, deadline: f64, woke: f64) {
        self.late += (woke - deadline).max(0.0);
    }
}

impl Filesystem for ServedFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if u64::from(parent) == 1 && name == SERVED_NAME {
            if let Some(a) = self.attr(IMAGE_INO) {
                return reply.entry(&TTL, &a, Generation(0));
            }
        }
        reply.error(Errno::ENOENT);
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino.into()) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // The device's size is fixed: a disk does not grow.
        if size.is_some_and(|s| s != self.size) {
            return reply.error(Errno::EPERM);
        }
        match self.attr(ino.into()) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if u64::from(ino) != IMAGE_INO {
            return reply.error(Errno::EISDIR);
        }
        // No page cache of the served file: every request reaches the model.
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if u64::from(ino) != IMAGE_INO {
            return reply.error(Errno::EISDIR);
        }
        let len = u64::from(size).min(self.size.saturating_sub(offset));
        let mut buf = vec![0u8; len as usize];
        let deadline = self.charge(Access::Read, offset, len);
        let mut got = 0usize;
        while got < buf.len() {
            match self.image.read_at(&mut buf[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return reply.error(Errno::from_i32(e.raw_os_error().unwrap_or(libc_eio())))
                }
            }
        }
        // Past the image's written end (a sparse tail): zeroes, like a fresh disk.
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
        self.stats.bytes_read.fetch_add(len, Ordering::Relaxed);
        self.wait(deadline);
        reply.data(&buf);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if u64::from(ino) != IMAGE_INO {
            return reply.error(Errno::EISDIR);
        }
        if offset.saturating_add(data.len() as u64) > self.size {
            return reply.error(Errno::ENOSPC);
        }
        let deadline = self.charge(Access::Write, offset, data.len() as u64);
        if let Err(e) = self.image.write_all_at(data, offset) {
            return reply.error(Errno::from_i32(e.raw_os_error().unwrap_or(libc_eio())));
        }
        self.stats.writes.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_written
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        self.wait(deadline);
        reply.written(data.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // The model has no write-back cache, so there is nothing to flush: the image on
        // the host is the disk's platter, and the host's durability is not the experiment's.
        reply.ok();
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        // Discards from the loop device arrive as hole punches. A 2008 disk had no TRIM:
        // they cost no model time; they keep the image sparse.
        if u64::from(ino) != IMAGE_INO {
            return reply.error(Errno::EISDIR);
        }
        let flags = nix::fcntl::FallocateFlags::from_bits_truncate(mode);
        match nix::fcntl::fallocate(&self.image, flags, offset as i64, length as i64) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(Errno::from_i32(e as i32)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if u64::from(ino) != 1 {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (1u64, FileType::Directory, "."),
            (1, FileType::Directory, ".."),
            (IMAGE_INO, FileType::RegularFile, SERVED_NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let blocks = self.size / 4096;
        reply.statfs(blocks, 0, 0, 2, 0, 4096, 255, 4096);
    }
}

fn libc_eio() -> i32 {
    nix::errno::Errno::EIO as i32
}

#[cfg(test)]
mod tests {
    use super::{Access, DiskModel, Pacer};
    use crate::devices::medium::model::NamedMedium;
    use rand::{Rng, SeedableRng};

    const GIB: u64 = 1 << 30;
    const KIB: u64 = 1 << 10;

    /// One trace of the kinds of requests a served device sees: a sequential read in
    /// FUSE's 128 KiB pieces, reads that skip a little forward (read through), random
    /// 4 KiB reads, and writes.
    fn trace() -> Vec<(Access, u64, u64)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(28);
        let mut t = Vec::new();
        // 32 MiB sequential from 1 GiB on.
        t.extend((0..256).map(|i| (Access::Read, GIB + i * 128 * KIB, 128 * KIB)));
        // 4 KiB every 64 KiB (an inode table read in pieces).
        t.extend((0..200).map(|i| (Access::Read, 3 * GIB + i * 64 * KIB, 4 * KIB)));
        // Random 4 KiB reads and writes over the device.
        for i in 0..200 {
            let a = if i % 4 == 3 {
                Access::Write
            } else {
                Access::Read
            };
            t.push((a, rng.random_range(0..8 * GIB / 4096) * 4096, 4 * KIB));
        }
        // Another sequential run, in pieces of 128 KiB.
        t.extend((0..256).map(|i| (Access::Read, 5 * GIB + i * 128 * KIB, 128 * KIB)));
        t
    }

    /// Serve `trace` through the pacer with `gap` seconds of the host's own time between
    /// one reply and the next request (the thread wakes on time). Returns the model's
    /// total charge.
    fn charge_with_host_gap(trace: &[(Access, u64, u64)], gap: f64) -> f64 {
        let params = NamedMedium::Hdd2008.params().unwrap();
        let mut p = Pacer::new(DiskModel::new(params, 8 * GIB).unwrap());
        let mut now = 0.0;
        let mut total = 0.0;
        for &(a, off, len) in trace {
            let (deadline, c) = p.arrive(a, off, len, now);
            total += c.service_s();
            let woke = if deadline > now { deadline } else { now };
            p.woke(deadline, woke);
            now = woke + gap;
        }
        total
    }

    #[test]
    fn the_charge_of_a_stream_does_not_depend_on_the_hosts_gaps() {
        let t = trace();
        let params = NamedMedium::Hdd2008.params().unwrap();
        let replay = DiskModel::replay(params, 8 * GIB, t.iter().copied()).unwrap();
        let charges: Vec<f64> = [0.0, 0.25e-3, 0.5e-3]
            .iter()
            .map(|&gap| charge_with_host_gap(&t, gap))
            .collect();
        for (gap, c) in [0.0, 0.25, 0.5].iter().zip(&charges) {
            assert!(
                (c - replay).abs() <= 0.01 * replay,
                "host gap {gap} ms per request: charged {c:.4} s, the model's replay {replay:.4} s (all: {charges:?})"
            );
        }
    }

    /// A sleep that wakes late is taken off the next sleeps, never more than was
    /// overslept; the charge is untouched.
    #[test]
    fn oversleep_is_owed_to_the_next_sleeps_and_never_more() {
        let params = NamedMedium::Hdd2008.params().unwrap();
        let mut p = Pacer::new(DiskModel::new(params, 8 * GIB).unwrap());
        let (d1, c1) = p.arrive(Access::Read, 4 * GIB, 4096, 1.0);
        assert_eq!(d1, 1.0 + c1.service_s());
        // Woke 30 ms late: more than the next request's whole charge.
        p.woke(d1, d1 + 0.030);
        let now = d1 + 0.030;
        let (d2, c2) = p.arrive(Access::Read, 0, 4096, now);
        assert!(c2.service_s() < 0.030 && c2.service_s() > 0.0);
        assert_eq!(d2, now, "the whole charge is owed: no sleep");
        // The rest of the 30 ms is owed to the next one.
        let (d3, c3) = p.arrive(Access::Read, 6 * GIB, 4096, now);
        let owed = 0.030 - c2.service_s();
        assert!(c3.service_s() > owed);
        assert!((d3 - (now + c3.service_s() - owed)).abs() < 1e-12);
        // Paid off: the next sleep is the whole charge.
        let (d4, c4) = p.arrive(Access::Read, GIB, 4096, d3);
        assert!((d4 - (d3 + c4.service_s())).abs() < 1e-12);
        // The charges are the model's, whatever the lateness.
        let trace = [4 * GIB, 0, 6 * GIB, GIB].map(|o| (Access::Read, o, 4096));
        let replay = DiskModel::replay(params, 8 * GIB, trace).unwrap();
        let sum = c1.service_s() + c2.service_s() + c3.service_s() + c4.service_s();
        assert!((sum - replay).abs() < 1e-12, "{sum} {replay}");
    }
}
