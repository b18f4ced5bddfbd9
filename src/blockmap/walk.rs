//! Block maps of a path or a whole tree of a mounted filesystem: a parallel directory
//! walk (rayon) that maps every regular file and directory with FIEMAP as soon as its
//! directory has been read, never leaving the root's filesystem.
//!
//! Each directory is a task: it is opened once (relative to its parent's descriptor), its
//! entries are read (`getdents`, with the file type the directory records, so no `stat`
//! per entry) and sorted by name; its files go to tasks in chunks, opened relative to the
//! directory and mapped, and its subdirectories become tasks of their own. No task waits
//! for another and nothing recurses on the stack, so a tree thousands of levels deep is
//! walked like a flat one. Rows come out in walk order (depth first, siblings by name,
//! which is [`path_order`]), each file's extents in FIEMAP order. Symlinks, devices, FIFOs
//! and sockets are not mapped. A file that cannot be opened or mapped (vanished,
//! permission, FIEMAP unsupported) becomes a [`PathError`] and the walk goes on.

use super::fiemap::{map_file_at, map_open_file, open_nofollow, Fiemap, FileMap};
use super::{BlockmapError, Extent, FileEntry};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// How to walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Ask FIEMAP to sync each file first (FIEMAP_FLAG_SYNC): no `delalloc` extents.
    pub sync: bool,
    /// Map directories too (their blocks matter: seed 001).
    pub include_dirs: bool,
    /// Descend into subdirectories (false: only the paths given).
    pub recursive: bool,
    /// Threads for the walk and the FIEMAP calls; None = rayon's global pool.
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
}

/// The block map of a tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockMap {
    /// One row per file or directory mapped, in walk order.
    pub files: Vec<FileEntry>,
    /// Their extents, in the same order.
    pub extents: Vec<Extent>,
    pub errors: Vec<PathError>,
}

impl BlockMap {
    /// The extents as a DataFrame (the `extents` table).
    pub fn extents_frame(&self) -> Result<polars::prelude::DataFrame, BlockmapError> {
        Ok(super::extents_frame(&self.extents)?)
    }
}

/// Map `root` (a file, or a directory and everything under it on the same filesystem).
pub fn map_tree(root: &Path, opts: &WalkOptions) -> Result<BlockMap, BlockmapError> {
    map_paths(std::slice::from_ref(&root.to_path_buf()), opts)
}

/// One mapped file or directory, or why it could not be mapped.
type Item = Result<FileMap, PathError>;

thread_local! {
    /// One FIEMAP request buffer (about 28 KiB) per thread, reused for every file.
    static FIEMAP: RefCell<Fiemap> = RefCell::new(Fiemap::new());
}

fn with_fiemap<R>(f: impl FnOnce(&mut Fiemap) -> R) -> R {
    FIEMAP.with(|fm| f(&mut fm.borrow_mut()))
}

fn path_error(path: &Path, error: impl std::fmt::Display) -> PathError {
    PathError {
        path: path.to_string_lossy().into_owned(),
        error: error.to_string(),
    }
}

fn item_error(e: BlockmapError) -> PathError {
    match e {
        BlockmapError::Io { path, source } => path_error(&path, source),
        BlockmapError::Fiemap { path, source } => path_error(&path, format!("FIEMAP: {source}")),
        other => PathError {
            path: String::new(),
            error: other.to_string(),
        },
    }
}

/// Map several roots; each keeps to its own filesystem. A root that does not exist is an
/// error; anything below a root that cannot be mapped is listed in [`BlockMap::errors`].
pub fn map_paths(roots: &[PathBuf], opts: &WalkOptions) -> Result<BlockMap, BlockmapError> {
    let mut out = BlockMap::default();
    let mut work = || -> Result<(), BlockmapError> {
        roots
            .iter()
            .try_for_each(|root| map_root(root, opts, &mut out))
    };
    match opts.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| BlockmapError::Threads(e.to_string()))?
            .install(work)?,
        None => work()?,
    }
    Ok(out)
}

impl BlockMap {
    /// Append one mapped file (or why it could not be mapped).
    fn add(&mut self, item: Item) {
        match item {
            Ok(m) => {
                self.files.push(FileEntry {
                    path: m.path,
                    inode: Some(m.inode),
                    size_bytes: Some(m.size_bytes),
                    is_dir: m.is_dir,
                });
                self.extents.extend(m.extents);
            }
            Err(e) => self.errors.push(e),
        }
    }
}

/// A root: a file is mapped; a directory is mapped and walked. A symlink given as a root
/// is followed (below the roots, symlinks are not).
fn map_root(root: &Path, opts: &WalkOptions, out: &mut BlockMap) -> Result<(), BlockmapError> {
    let meta = std::fs::metadata(root).map_err(|source| BlockmapError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let wanted = meta.is_file() || meta.is_dir();
    if !wanted {
        return Ok(());
    }
    let file = match open_root(root) {
        Ok(f) => f,
        Err(e) => {
            out.add(Err(path_error(root, e)));
            return Ok(());
        }
    };
    if meta.is_file() {
        let item = with_fiemap(|fm| map_open_file(fm, &file, root, opts.sync)).map_err(item_error);
        out.add(item);
        return Ok(());
    }
    let pieces = Pieces::default();
    let top = pieces.id();
    rayon::scope(|s| walk_dir(s, &pieces, top, root.to_path_buf(), file, meta.dev(), opts));
    let (files, extents) = pieces.counts();
    out.files.reserve_exact(files);
    out.extents.reserve_exact(extents);
    pieces.assemble(top, |item| out.add(item));
    Ok(())
}

/// Files mapped per task.
const CHUNK: usize = 64;

/// A piece of a walk's output, in walk order: a mapped item, or the place of another
/// piece (a subdirectory's listing, or a chunk of files mapped by another task).
enum Node {
    Item(Item),
    Piece(usize),
}

/// The pieces of one walk, by id, as its tasks finish them. Tasks never wait for each
/// other and nothing recurses on the stack, however deep the tree: each directory is a
/// task of its own, and [`Pieces::assemble`] puts the pieces in order with a loop.
#[derive(Default)]
struct Pieces {
    next: AtomicUsize,
    done: Mutex<HashMap<usize, Vec<Node>>>,
}

impl Pieces {
    fn id(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    fn put(&self, id: usize, nodes: Vec<Node>) {
        self.done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, nodes);
    }

    /// How many files and extents the pieces hold (to size the block map once).
    fn counts(&self) -> (usize, usize) {
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let mapped = done.values().flatten().filter_map(|n| match n {
            Node::Item(Ok(m)) => Some(m.extents.len()),
            _ => None,
        });
        mapped.fold((0, 0), |(f, e), n| (f + 1, e + n))
    }

    /// The items of piece `top` and of the pieces it refers to, depth first, each piece
    /// freed as soon as it is used up.
    fn assemble(self, top: usize, mut out: impl FnMut(Item)) {
        let mut done = self
            .done
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut stack = vec![done.remove(&top).unwrap_or_default().into_iter()];
        while let Some(nodes) = stack.last_mut() {
            match nodes.next() {
                Some(Node::Item(item)) => out(item),
                Some(Node::Piece(id)) => {
                    if let Some(p) = done.remove(&id) {
                        stack.push(p.into_iter());
                    }
                }
                None => {
                    stack.pop();
                }
            }
        }
    }
}

/// Map the open directory `dir` (named `path`) itself if directories are wanted, then,
/// when recursing, hand its files (in chunks) and its subdirectories to tasks of their own.
/// Everything stays on the filesystem `dev`.
fn walk_dir<'s>(
    s: &rayon::Scope<'s>,
    pieces: &'s Pieces,
    id: usize,
    path: PathBuf,
    dir: File,
    dev: u64,
    opts: &'s WalkOptions,
) {
    let mut nodes = Vec::new();
    if opts.include_dirs {
        match with_fiemap(|fm| map_open_file(fm, &dir, &path, opts.sync)) {
            // A filesystem mounted below the root is neither mapped nor entered.
            Ok(m) if m.dev != dev => return pieces.put(id, nodes),
            r => nodes.push(Node::Item(r.map_err(item_error))),
        }
    } else {
        match dir.metadata() {
            Ok(m) if m.dev() != dev => return pieces.put(id, nodes),
            Ok(_) => {}
            Err(e) => {
                nodes.push(Node::Item(Err(path_error(&path, e))));
                return pieces.put(id, nodes);
            }
        }
    }
    if !opts.recursive {
        return pieces.put(id, nodes);
    }
    let entries = match read_entries(&dir) {
        Ok(v) => v,
        Err(e) => {
            nodes.push(Node::Item(Err(path_error(&path, e))));
            return pieces.put(id, nodes);
        }
    };
    let dir = Arc::new(dir);
    let path = Arc::new(path);
    let mut chunk: Vec<OsString> = Vec::new();
    let flush = |chunk: &mut Vec<OsString>, nodes: &mut Vec<Node>| {
        if chunk.is_empty() {
            return;
        }
        let cid = pieces.id();
        nodes.push(Node::Piece(cid));
        let (names, dir, path) = (std::mem::take(chunk), Arc::clone(&dir), Arc::clone(&path));
        s.spawn(move |_| {
            let items = names
                .iter()
                .map(|name| {
                    let name = Path::new(name);
                    let child = path.join(name);
                    let item =
                        with_fiemap(|fm| map_file_at(fm, dir.as_fd(), name, &child, opts.sync));
                    Node::Item(item.map_err(item_error))
                })
                .collect();
            pieces.put(cid, items);
        });
    };
    for (name, kind) in entries {
        let kind = match kind {
            Kind::Unknown => stat_kind(&dir, Path::new(&name)),
            k => k,
        };
        match kind {
            Kind::File => {
                chunk.push(name);
                if chunk.len() == CHUNK {
                    flush(&mut chunk, &mut nodes);
                }
            }
            Kind::Dir => {
                flush(&mut chunk, &mut nodes);
                let did = pieces.id();
                nodes.push(Node::Piece(did));
                let (parent, child) = (Arc::clone(&dir), path.join(&name));
                s.spawn(move |s| match open_dir_at(&parent, Path::new(&name)) {
                    Ok(f) => {
                        drop(parent);
                        walk_dir(s, pieces, did, child, f, dev, opts);
                    }
                    Err(e) => pieces.put(did, vec![Node::Item(Err(path_error(&child, e)))]),
                });
            }
            Kind::Other | Kind::Unknown => {}
        }
    }
    flush(&mut chunk, &mut nodes);
    pieces.put(id, nodes);
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

/// The entries of an open directory (without `.` and `..`), sorted by name.
fn read_entries(dir: &File) -> nix::Result<Vec<(OsString, Kind)>> {
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
        v.push((OsString::from_vec(name.to_vec()), kind));
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
