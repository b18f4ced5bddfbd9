//! Block maps of a path or a whole tree of a mounted filesystem, streamed: a directory
//! walk that hands every regular file and directory to FIEMAP worker threads as soon as
//! its directory has been read, and yields the mapped files in walk order, never leaving
//! the root's filesystem.
//!
//! One walker thread reads the directories depth first (`getdents`, with the file type the
//! directory records, so no `stat` per entry; entries sorted by name) and sends the files
//! and directories to map in numbered chunks of [`CHUNK`]; worker threads open them
//! (relative to their directory) and map them; [`Walk`], an iterator, puts the chunks back
//! in order. At most [`IN_FLIGHT_PER_THREAD`] chunks per thread exist at any time (the
//! walker waits for the consumer), so memory stays bounded whatever the number of files:
//! the open directories of the current path, their sorted names, and the chunks in
//! flight. Nothing recurses on the stack, and below [`KEEP_OPEN`] levels the walker
//! closes ancestors and reopens them through `..` (checking their inode), so a tree
//! thousands of levels deep is walked like a flat one.
//!
//! Order: depth first, siblings by name, which is [`path_order`]; each file's extents in
//! FIEMAP order. Symlinks, devices, FIFOs and sockets are not mapped. A file that cannot
//! be opened or mapped (vanished, permission, FIEMAP unsupported) becomes a [`PathError`]
//! and the walk goes on. A directory on a filesystem without FIEMAP for directories (XFS)
//! becomes one too, marked [`Unmapped::DirectoryWithoutFiemap`]: a known limit, not an
//! error.

use super::fiemap::{map_file_at, map_open_file, open_nofollow, Fiemap, FileMap};
use super::{BlockmapError, Extent, FileEntry, MappedFile};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// How to walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Ask FIEMAP to sync each file first (FIEMAP_FLAG_SYNC): no `delalloc` extents.
    pub sync: bool,
    /// Map directories too (their blocks matter: seed 001).
    pub include_dirs: bool,
    /// Descend into subdirectories (false: only the paths given).
    pub recursive: bool,
    /// Threads for the FIEMAP calls; None = one per core.
    pub threads: Option<usize>,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            sync: false,
            include_dirs: true,
            recursive: true,
            threads: None,
        }
    }
}

/// A path the walk could not map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathError {
    pub path: String,
    pub error: String,
    /// An error, or a known limit of the filesystem.
    pub why: Unmapped,
}

/// Why a path is not in a map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Unmapped {
    /// It could not be opened, read or mapped: an error.
    Failed,
    /// A directory on a filesystem that has no FIEMAP for directories (XFS): a known
    /// limit, not an error. Counted apart (`directories_unmapped` of the filesystem
    /// summary) and said once; the files in it are mapped.
    DirectoryWithoutFiemap,
}

impl PathError {
    /// Whether this is an error (not a known limit of the filesystem).
    pub fn is_error(&self) -> bool {
        self.why == Unmapped::Failed
    }
}

/// The block map of a tree, collected in memory (use [`stream`] for large trees).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockMap {
    /// One row per file or directory mapped, in walk order.
    pub files: Vec<FileEntry>,
    /// Their extents, in the same order.
    pub extents: Vec<Extent>,
    /// The paths that could not be mapped: errors.
    pub errors: Vec<PathError>,
    /// Directories the filesystem cannot map ([`Unmapped::DirectoryWithoutFiemap`]), in
    /// walk order: not errors.
    pub unmapped_directories: Vec<String>,
}

impl BlockMap {
    /// The extents as a DataFrame (the `extents` table).
    pub fn extents_frame(&self) -> Result<polars::prelude::DataFrame, BlockmapError> {
        Ok(super::extents_frame(&self.extents)?)
    }

    /// Append one mapped file (or why it could not be mapped).
    fn add(&mut self, item: super::Item) {
        match item {
            Ok(m) => {
                self.files.push(m.entry);
                self.extents.extend(m.extents);
            }
            Err(e) => match e.why {
                Unmapped::DirectoryWithoutFiemap => self.unmapped_directories.push(e.path),
                Unmapped::Failed => self.errors.push(e),
            },
        }
    }
}

/// Map `root` (a file, or a directory and everything under it on the same filesystem).
pub fn map_tree(root: &Path, opts: &WalkOptions) -> Result<BlockMap, BlockmapError> {
    map_paths(std::slice::from_ref(&root.to_path_buf()), opts)
}

/// Map several roots into memory; each keeps to its own filesystem. A root that does not
/// exist is an error; anything below a root that cannot be mapped is listed in
/// [`BlockMap::errors`].
pub fn map_paths(roots: &[PathBuf], opts: &WalkOptions) -> Result<BlockMap, BlockmapError> {
    let mut out = BlockMap::default();
    for item in stream(roots, opts)? {
        out.add(item);
    }
    Ok(out)
}

/// Files (or directories) mapped per chunk handed to a worker.
pub const CHUNK: usize = 64;
/// Chunks that may exist at once (queued, being mapped, or waiting to be yielded in
/// order), per worker thread.
pub const IN_FLIGHT_PER_THREAD: usize = 4;
/// Ancestors kept open by the walker; deeper ones are closed and reopened through `..`.
pub const KEEP_OPEN: usize = 64;

pub(super) fn path_error(path: &Path, error: impl std::fmt::Display) -> PathError {
    PathError {
        path: path.to_string_lossy().into_owned(),
        error: error.to_string(),
        why: Unmapped::Failed,
    }
}

pub(super) fn item_error(e: BlockmapError) -> PathError {
    match e {
        BlockmapError::Io { path, source } => path_error(&path, source),
        BlockmapError::Fiemap { path, source } => path_error(&path, format!("FIEMAP: {source}")),
        BlockmapError::DirectoryWithoutFiemap { path } => PathError {
            path: path.to_string_lossy().into_owned(),
            error: "this filesystem has no FIEMAP for directories".into(),
            why: Unmapped::DirectoryWithoutFiemap,
        },
        other => PathError {
            path: String::new(),
            error: other.to_string(),
            why: Unmapped::Failed,
        },
    }
}

fn mapped(m: FileMap) -> MappedFile {
    MappedFile {
        entry: FileEntry {
            path: m.path,
            inode: Some(m.inode),
            size_bytes: Some(m.size_bytes),
            is_dir: m.is_dir,
        },
        extents: m.extents,
    }
}

/// One thing to map, in walk order.
pub(super) enum Job {
    /// A root or a directory, already open.
    Open { file: Arc<File>, path: PathBuf },
    /// The regular file `name` of the open directory `dir`, inode `ino` by its entry
    /// (`d_ino`).
    At {
        dir: Arc<File>,
        name: OsString,
        ino: u64,
        path: PathBuf,
    },
    /// Already known (an error of the walker).
    Done(PathError),
}

/// How a worker thread maps the walk's jobs: made once per thread (it may keep buffers).
pub(super) type MapperFactory = Arc<dyn Fn() -> Box<dyn FnMut(Job) -> super::Item> + Send + Sync>;

/// FIEMAP on each file and directory, one request buffer per thread.
fn fiemap_mapper(sync: bool) -> MapperFactory {
    Arc::new(move || {
        let mut fm = Fiemap::new();
        Box::new(move |job| match job {
            Job::Open { file, path } => map_open_file(&mut fm, &file, &path, sync)
                .map(mapped)
                .map_err(item_error),
            Job::At {
                dir, name, path, ..
            } => map_file_at(&mut fm, dir.as_fd(), Path::new(&name), &path, sync)
                .map(mapped)
                .map_err(item_error),
            Job::Done(e) => Err(e),
        })
    })
}

/// The mapped files of a walk, in walk order (an iterator). Dropping it stops the walk
/// and joins its threads.
pub struct Walk {
    results: Option<Receiver<(u64, Vec<super::Item>)>>,
    permits: Option<Receiver<()>>,
    pending: BTreeMap<u64, Vec<super::Item>>,
    next: u64,
    current: std::vec::IntoIter<super::Item>,
    cancel: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// Start walking `roots` (each keeps to its own filesystem). A root that does not exist
/// is an error here; anything else that cannot be mapped is an `Err` item.
pub fn stream(roots: &[PathBuf], opts: &WalkOptions) -> Result<Walk, BlockmapError> {
    stream_with(roots, opts, fiemap_mapper(opts.sync))
}

/// [`stream`] with another way to map each entry (the walk and its order are the same).
pub(super) fn stream_with(
    roots: &[PathBuf],
    opts: &WalkOptions,
    mapper: MapperFactory,
) -> Result<Walk, BlockmapError> {
    let mut metas = Vec::with_capacity(roots.len());
    for root in roots {
        let meta = std::fs::metadata(root).map_err(|source| BlockmapError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        metas.push((root.clone(), meta));
    }
    let n = opts
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let (permit_tx, permit_rx) = sync_channel::<()>(IN_FLIGHT_PER_THREAD * n);
    let (job_tx, job_rx) = channel::<(u64, Vec<Job>)>();
    let (result_tx, result_rx) = channel::<(u64, Vec<super::Item>)>();
    let cancel = Arc::new(AtomicBool::new(false));
    let job_rx = Arc::new(Mutex::new(job_rx));
    let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name)
            .spawn(f)
            .map_err(|e| BlockmapError::Threads(e.to_string()))
    };
    let mut threads = Vec::with_capacity(n + 1);
    for i in 0..n {
        let (rx, tx, cancel, mapper) = (
            Arc::clone(&job_rx),
            result_tx.clone(),
            Arc::clone(&cancel),
            Arc::clone(&mapper),
        );
        threads.push(spawn(
            format!("blockmap-{i}"),
            Box::new(move || worker(&rx, &tx, &cancel, &*mapper)),
        )?);
    }
    drop(result_tx);
    let walker = Walker {
        opts: opts.clone(),
        jobs: job_tx,
        permits: permit_tx,
        seq: 0,
        chunk: Vec::with_capacity(CHUNK),
        cancel: Arc::clone(&cancel),
    };
    threads.push(spawn("walker".into(), Box::new(move || walker.run(metas)))?);
    Ok(Walk {
        results: Some(result_rx),
        permits: Some(permit_rx),
        pending: BTreeMap::new(),
        next: 0,
        current: Vec::new().into_iter(),
        cancel,
        threads,
    })
}

fn worker(
    jobs: &Mutex<Receiver<(u64, Vec<Job>)>>,
    results: &Sender<(u64, Vec<super::Item>)>,
    cancel: &AtomicBool,
    mapper: &(dyn Fn() -> Box<dyn FnMut(Job) -> super::Item> + Send + Sync),
) {
    let mut map = mapper();
    loop {
        let next = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((seq, chunk)) = next else { return };
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        let items = chunk.into_iter().map(&mut map).collect();
        if results.send((seq, items)).is_err() {
            return;
        }
    }
}

impl Iterator for Walk {
    type Item = super::Item;

    fn next(&mut self) -> Option<super::Item> {
        loop {
            if let Some(item) = self.current.next() {
                return Some(item);
            }
            if let Some(chunk) = self.pending.remove(&self.next) {
                self.next += 1;
                // The chunk leaves the pipeline: the walker may send another.
                if let Some(p) = &self.permits {
                    let _ = p.try_recv();
                }
                self.current = chunk.into_iter();
                continue;
            }
            match self.results.as_ref()?.recv() {
                Ok((seq, items)) => {
                    self.pending.insert(seq, items);
                }
                Err(_) => {
                    // Every worker is done: what is left is in order.
                    let (&seq, _) = self.pending.iter().next()?;
                    self.next = seq;
                }
            }
        }
    }
}

impl Drop for Walk {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.results = None;
        self.permits = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A directory on the walker's stack.
struct Frame {
    /// None when closed to save descriptors (reopened through `..` when needed).
    dir: Option<Arc<File>>,
    path: PathBuf,
    ino: u64,
    entries: std::vec::IntoIter<(OsString, Kind, u64)>,
}

struct Walker {
    opts: WalkOptions,
    jobs: Sender<(u64, Vec<Job>)>,
    permits: SyncSender<()>,
    seq: u64,
    chunk: Vec<Job>,
    cancel: Arc<AtomicBool>,
}

/// The consumer is gone: stop walking.
struct Stopped;

impl Walker {
    fn run(mut self, roots: Vec<(PathBuf, std::fs::Metadata)>) {
        for (root, meta) in roots {
            if self.root(&root, &meta).is_err() {
                return;
            }
        }
        let _ = self.flush();
    }

    fn push(&mut self, job: Job) -> Result<(), Stopped> {
        self.chunk.push(job);
        if self.chunk.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Stopped> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        if self.cancel.load(Ordering::Relaxed) || self.permits.send(()).is_err() {
            return Err(Stopped);
        }
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK));
        self.jobs.send((self.seq, chunk)).map_err(|_| Stopped)?;
        self.seq += 1;
        Ok(())
    }

    /// A root: a file is mapped; a directory is mapped and walked. A symlink given as a
    /// root is followed (below the roots, symlinks are not).
    fn root(&mut self, root: &Path, meta: &std::fs::Metadata) -> Result<(), Stopped> {
        if !(meta.is_file() || meta.is_dir()) {
            return Ok(());
        }
        let file = match open_root(root) {
            Ok(f) => Arc::new(f),
            Err(e) => return self.push(Job::Done(path_error(root, e))),
        };
        if meta.is_file() {
            return self.push(Job::Open {
                file,
                path: root.to_path_buf(),
            });
        }
        self.tree(root.to_path_buf(), file, meta.dev())
    }

    /// Queue the open directory `dir` (if directories are wanted), then its entries,
    /// depth first. Everything stays on the filesystem `dev`.
    fn tree(&mut self, path: PathBuf, dir: Arc<File>, dev: u64) -> Result<(), Stopped> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut next = Some((path, dir));
        loop {
            if let Some((path, dir)) = next.take() {
                if let Some(frame) = self.enter(path, dir, dev)? {
                    if stack.len() >= KEEP_OPEN {
                        let i = stack.len() - KEEP_OPEN;
                        stack[i].dir = None;
                    }
                    stack.push(frame);
                }
            }
            let Some(top) = stack.last_mut() else {
                return Ok(());
            };
            let Some((name, kind, ino)) = top.entries.next() else {
                let done = stack.pop().expect("a frame");
                if let Some(parent) = stack.last_mut() {
                    if parent.dir.is_none() {
                        self.reopen(parent, &done)?;
                    }
                }
                continue;
            };
            let dir = Arc::clone(top.dir.as_ref().expect("the top directory is open"));
            let kind = match kind {
                Kind::Unknown => stat_kind(&dir, Path::new(&name)),
                k => k,
            };
            let child = top.path.join(&name);
            match kind {
                Kind::File => self.push(Job::At {
                    dir,
                    name,
                    ino,
                    path: child,
                })?,
                Kind::Dir => match open_dir_at(&dir, Path::new(&name)) {
                    Ok(f) => next = Some((child, Arc::new(f))),
                    Err(e) => self.push(Job::Done(path_error(&child, e)))?,
                },
                Kind::Other | Kind::Unknown => {}
            }
        }
    }

    /// Queue a directory and read its entries: its frame, or None when it is not to be
    /// entered (another filesystem, an error, or no recursion).
    fn enter(&mut self, path: PathBuf, dir: Arc<File>, dev: u64) -> Result<Option<Frame>, Stopped> {
        let meta = match dir.metadata() {
            // A filesystem mounted below the root is neither mapped nor entered.
            Ok(m) if m.dev() != dev => return Ok(None),
            Ok(m) => m,
            Err(e) => {
                self.push(Job::Done(path_error(&path, e)))?;
                return Ok(None);
            }
        };
        if self.opts.include_dirs {
            self.push(Job::Open {
                file: Arc::clone(&dir),
                path: path.clone(),
            })?;
        }
        if !self.opts.recursive {
            return Ok(None);
        }
        match read_entries(&dir) {
            Ok(v) => Ok(Some(Frame {
                dir: Some(dir),
                path,
                ino: meta.ino(),
                entries: v.into_iter(),
            })),
            Err(e) => {
                self.push(Job::Done(path_error(&path, e)))?;
                Ok(None)
            }
        }
    }

    /// Reopen a closed ancestor through `..` of its child `done`; if it is no longer the
    /// same directory (moved during the walk), its remaining entries are skipped, said out
    /// loud as an error.
    fn reopen(&mut self, parent: &mut Frame, done: &Frame) -> Result<(), Stopped> {
        let child = done.dir.as_ref().expect("the popped directory was open");
        let reopened = open_dir_at(child, Path::new("..")).and_then(|f| {
            let ino = f.metadata()?.ino();
            Ok((f, ino))
        });
        match reopened {
            Ok((f, ino)) if ino == parent.ino => parent.dir = Some(Arc::new(f)),
            r => {
                let why = match r {
                    Err(e) => format!("reopening through `..`: {e}"),
                    Ok(_) => "moved during the walk; the rest of it was not mapped".into(),
                };
                parent.entries = Vec::new().into_iter();
                self.push(Job::Done(path_error(&parent.path, why)))?;
            }
        }
        Ok(())
    }
}

/// Open a root read-only, following a symlink, without blocking on FIFOs.
fn open_root(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
}

/// What a directory entry is, from the type the directory records (`d_type`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Other,
    /// The filesystem does not record types (DT_UNKNOWN): ask `fstatat`.
    Unknown,
}

/// The entries of an open directory (without `.` and `..`) with their inode numbers,
/// sorted by name.
fn read_entries(dir: &File) -> nix::Result<Vec<(OsString, Kind, u64)>> {
    use nix::dir::{Dir, Type};
    let fd = dir
        .try_clone()
        .map_err(|e| nix::Error::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO)))?;
    let mut d = Dir::from_fd(fd.into())?;
    let mut v = Vec::new();
    for entry in d.iter() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            Some(Type::File) => Kind::File,
            Some(Type::Directory) => Kind::Dir,
            Some(_) => Kind::Other,
            None => Kind::Unknown,
        };
        v.push((OsString::from_vec(name.to_vec()), kind, entry.ino()));
    }
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(v)
}

/// The kind of `name` in `dir` by `fstatat` (for filesystems without `d_type`).
fn stat_kind(dir: &File, name: &Path) -> Kind {
    use nix::sys::stat::{fstatat, SFlag};
    match fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => match SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT {
            SFlag::S_IFREG => Kind::File,
            SFlag::S_IFDIR => Kind::Dir,
            _ => Kind::Other,
        },
        Err(_) => Kind::File, // let the open report the error
    }
}

/// Open the subdirectory `name` of `dir` read-only, without following a symlink.
fn open_dir_at(dir: &File, name: &Path) -> std::io::Result<File> {
    open_nofollow(Some(dir.as_fd()), name, nix::fcntl::OFlag::O_DIRECTORY)
}

/// Order of a depth-first walk with siblings sorted by name: byte order with `/` lowest.
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    use std::os::unix::ffi::OsStrExt;
    let key = |c: u8| if c == b'/' { 0u8 } else { c };
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    a.iter().map(|&c| key(c)).cmp(b.iter().map(|&c| key(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walker never gets more than its in-flight chunks ahead of a slow consumer
    /// (what keeps the memory bounded), and the order is the walk order.
    #[test]
    fn the_walk_stays_a_bounded_distance_ahead_of_its_consumer() {
        use std::sync::atomic::AtomicUsize;
        let dir = std::env::temp_dir().join(format!("fslab-walk-bound-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in 0..3 {
            std::fs::create_dir_all(dir.join(format!("d{d}"))).unwrap();
            for i in 0..1500 {
                std::fs::write(dir.join(format!("d{d}/f{i:04}")), b"").unwrap();
            }
        }
        let mapped = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&mapped);
        let mapper: MapperFactory = Arc::new(move || {
            let counter = Arc::clone(&counter);
            Box::new(move |job| {
                counter.fetch_add(1, Ordering::SeqCst);
                match job {
                    Job::Open { path, .. } | Job::At { path, .. } => Ok(MappedFile {
                        entry: FileEntry {
                            path: path.to_string_lossy().into_owned(),
                            ..Default::default()
                        },
                        extents: Vec::new(),
                    }),
                    Job::Done(e) => Err(e),
                }
            })
        });
        let opts = WalkOptions {
            threads: Some(2),
            ..Default::default()
        };
        let bound = (IN_FLIGHT_PER_THREAD * 2 + 1) * CHUNK;
        let mut paths = Vec::new();
        for (consumed, item) in stream_with(std::slice::from_ref(&dir), &opts, mapper)
            .unwrap()
            .enumerate()
        {
            for _ in 0..200 {
                std::thread::yield_now();
            }
            let ahead = mapped.load(Ordering::SeqCst) - consumed;
            assert!(ahead <= bound, "{ahead} items mapped ahead of the consumer");
            paths.push(PathBuf::from(item.unwrap().entry.path));
        }
        assert_eq!(paths.len(), 1 + 3 + 3 * 1500);
        let mut sorted = paths.clone();
        sorted.sort_by(|a, b| path_order(a, b));
        assert_eq!(paths, sorted);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn path_order_is_depth_first_by_name() {
        let mut v: Vec<PathBuf> = ["/m/a-c", "/m/a/b", "/m", "/m/a", "/m/b", "/m/a/a"]
            .iter()
            .map(PathBuf::from)
            .collect();
        v.sort_by(|a, b| path_order(a, b));
        let mut by_components = v.clone();
        by_components.sort();
        assert_eq!(v, by_components);
        assert_eq!(
            v[..3],
            [PathBuf::from("/m"), "/m/a".into(), "/m/a/a".into()]
        );
    }
}
