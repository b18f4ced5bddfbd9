//! The FUSE filesystem that serves one image file and charges each request the disk
//! model's time.
//!
//! The filesystem has one directory (the root) holding one regular file, `image`. Every
//! open of it is answered with `FOPEN_DIRECT_IO`, so the kernel keeps no page cache of it:
//! each read or write the loop device issues reaches [`ServedFs::read`] /
//! [`ServedFs::write`]. One session thread serves requests one at a time, like one head.
//! The request is done on the image at once, then the thread sleeps until the model's
//! completion time on the model's own clock (started with the server); a wake-up that
//! overruns its deadline is taken off the next request's arrival instead of
//! accumulating (see `charge`).

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
    /// The model's charged service time, in nanoseconds (not counting queueing).
    pub charged_ns: AtomicU64,
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
        let deadline = self.epoch + Duration::from_secs_f64(done);
        let now = Instant::now();
        if deadline > now {
            std::thread::sleep(deadline - now);
        }
        let woke = self.epoch.elapsed().as_secs_f64();
        let mut p = pacer.lock().unwrap_or_else(|p| p.into_inner());
        p.woke(done, woke);
    }
}

/// The disk model paced on the host's clock: which deadline each request sleeps until.
/// Pure (the host's time is passed in), so that a test can replay a trace with chosen
/// host gaps between the requests.
///
/// The model keeps its own clock. A reply sent late (the thread woke after its
/// deadline: a loaded host) makes the next request arrive late by as much; that
/// lateness is the host's, not the disk's, so it is taken off the next arrival. A
/// run's total time then tracks the model plus the host's own per-request cost,
/// instead of adding every wake-up's lateness.
pub(super) struct Pacer {
    model: DiskModel,
    /// How late the last wake-up was after its deadline, in seconds.
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
        let arrival = (now - self.late).max(0.0);
        self.model.request(access, offset, len, arrival)
    }

    /// The server woke at `woke` for `deadline`.
    pub(super) fn woke(&mut self, deadline: f64, woke: f64) {
        self.late = (woke - deadline).max(0.0);
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
