//! Block maps of a path or a whole tree of a mounted filesystem: a directory walk
//! (walkdir, sorted by name, never leaving the root's filesystem) and FIEMAP on every
//! regular file and directory in parallel (rayon).
//!
//! Rows come out in walk order (depth first, siblings by name), each file's extents in
//! FIEMAP order. Symlinks, devices, FIFOs and sockets are not mapped. A file that cannot be
//! opened or mapped (vanished, permission, FIEMAP unsupported) becomes a [`PathError`]
//! and the walk goes on.

use super::fiemap::{map_file_at, map_file_with, Fiemap, FileMap};
use super::{BlockmapError, Extent, FileEntry};
use rayon::prelude::*;
use serde::Serialize;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How to walk.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Ask FIEMAP to sync each file first (FIEMAP_FLAG_SYNC): no `delalloc` extents.
    pub sync: bool,
    /// Map directories too (their blocks matter: seed 001).
    pub include_dirs: bool,
    /// Descend into subdirectories (false: only the paths given).
    pub recursive: bool,
    /// Threads for the FIEMAP calls; None = rayon's global pool.
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
        super::extents_frame(&self.extents)
    }
}

/// Map `root` (a file, or a directory and everything under it on the same filesystem).
pub fn map_tree(root: &Path, opts: &WalkOptions) -> Result<BlockMap, BlockmapError> {
    map_paths(std::slice::from_ref(&root.to_path_buf()), opts)
}

/// Map several roots; each keeps to its own filesystem.
pub fn map_paths(roots: &[PathBuf], opts: &WalkOptions) -> Result<BlockMap, BlockmapError> {
    let mut todo: Vec<PathBuf> = Vec::new();
    let mut errors = Vec::new();
    for root in roots {
        let root_meta = std::fs::symlink_metadata(root).map_err(|source| BlockmapError::Io {
            path: root.clone(),
            source,
        })?;
        let dev = root_meta.dev();
        let first = todo.len();
        let walker = walkdir::WalkDir::new(root)
            .same_file_system(true)
            .max_depth(if opts.recursive { usize::MAX } else { 0 });
        for entry in walker {
            match entry {
                Ok(e) => {
                    let ft = e.file_type();
                    let wanted = ft.is_file() || (opts.include_dirs && ft.is_dir());
                    if !wanted {
                        continue;
                    }
                    // Mount points below the root are listed by walkdir but not entered.
                    if e.depth() > 0 && ft.is_dir() {
                        match e.metadata() {
                            Ok(m) if m.dev() != dev => continue,
                            Ok(_) => {}
                            Err(err) => {
                                errors.push(PathError {
                                    path: e.path().to_string_lossy().into_owned(),
                                    error: err.to_string(),
                                });
                                continue;
                            }
                        }
                    }
                    todo.push(e.into_path());
                }
                Err(err) => errors.push(PathError {
                    path: err
                        .path()
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    error: err.to_string(),
                }),
            }
        }
        // Depth first, siblings by name: compare bytes with `/` below every other byte
        // (cheaper than walkdir's per-directory sort, which splits paths into components).
        todo[first..].sort_by_cached_key(|p| order_key(p));
    }

    // Runs of siblings (at most RUN long): each run opens its directory once and its
    // entries relative to it.
    const RUN: usize = 256;
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    for i in 1..=todo.len() {
        if i == todo.len() || i - start >= RUN || todo[i].parent() != todo[start].parent() {
            runs.push(start..i);
            start = i;
        }
    }
    let sync = opts.sync;
    let work = || -> Vec<Vec<Result<FileMap, BlockmapError>>> {
        runs.par_iter()
            .map_init(Fiemap::new, |fm, run| map_run(fm, &todo[run.clone()], sync))
            .collect()
    };
    let results = match opts.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| BlockmapError::Threads(e.to_string()))?
            .install(work),
        None => work(),
    };

    let mut out = BlockMap {
        errors,
        ..Default::default()
    };
    out.extents.reserve(results.len());
    for r in results.into_iter().flatten() {
        match r {
            Ok(m) => {
                out.files.push(FileEntry {
                    path: m.path,
                    inode: Some(m.inode),
                    size_bytes: Some(m.size_bytes),
                    is_dir: m.is_dir,
                });
                out.extents.extend(m.extents);
            }
            Err(BlockmapError::Io { path, source }) => out.errors.push(PathError {
                path: path.to_string_lossy().into_owned(),
                error: source.to_string(),
            }),
            Err(BlockmapError::Fiemap { path, source }) => out.errors.push(PathError {
                path: path.to_string_lossy().into_owned(),
                error: format!("FIEMAP: {source}"),
            }),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Map sibling paths through one open handle on their directory.
fn map_run(fm: &mut Fiemap, paths: &[PathBuf], sync: bool) -> Vec<Result<FileMap, BlockmapError>> {
    use nix::fcntl::OFlag;
    let dir = paths[0]
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .and_then(|d| {
            let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
            nix::fcntl::open(d, flags, nix::sys::stat::Mode::empty()).ok()
        });
    paths
        .iter()
        .map(|p| match (&dir, p.file_name()) {
            (Some(d), Some(name)) => map_file_at(fm, d.as_fd(), Path::new(name), p, sync),
            _ => map_file_with(fm, p, sync),
        })
        .collect()
}

/// Sort key of [`path_order`]: the path's bytes with `/` turned into 0.
fn order_key(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str()
        .as_bytes()
        .iter()
        .map(|&c| if c == b'/' { 0 } else { c })
        .collect()
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
