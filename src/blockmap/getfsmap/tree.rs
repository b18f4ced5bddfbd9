//! The walk that names the reverse map's extents: [`stream`] reads each filesystem's map
//! and sizes once, then the walk of [`walk`] finds each file's by its inode number.

use super::fsmap::{read_fsmap, Rec};
use super::sizes::{Sizes, SizesRead};
use super::sizes_for;
use crate::blockmap::fiemap::{self, RawExtent};
use crate::blockmap::walk::{self, item_error, path_error, Job, WalkOptions};
use crate::blockmap::{BlockmapError, FileEntry, MappedFile};
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The reverse map and sizes of one filesystem, shared by the walk's threads.
struct Maps {
    extents: Vec<(u64, Rec)>,
    sizes: Vec<(u64, u64)>,
}

impl Maps {
    /// The extents of inode `ino`, in file-offset order.
    fn extents_of(&self, ino: u64) -> &[(u64, Rec)] {
        let from = self.extents.partition_point(|(i, _)| *i < ino);
        let n = self.extents[from..].partition_point(|(i, _)| *i == ino);
        &self.extents[from..from + n]
    }

    /// The size read for inode `ino` (BULKSTAT or the device).
    fn size_of(&self, ino: u64) -> Option<u64> {
        let at = self.sizes.binary_search_by_key(&ino, |&(i, _)| i).ok()?;
        Some(self.sizes[at].1)
    }

    fn item(&self, path: &Path, ino: u64, size: u64, is_dir: bool) -> MappedFile {
        let v = self.extents_of(ino);
        let n = v.len();
        let raw: Vec<RawExtent> = v
            .iter()
            .enumerate()
            .map(|(i, (_, r))| {
                let mut e = RawExtent::default();
                e.fe_logical = r.logical;
                e.fe_physical = r.physical;
                e.fe_length = r.length;
                e.fe_flags = r.flags;
                if i + 1 == n {
                    e.fe_flags |= fiemap::FIEMAP_EXTENT_LAST;
                }
                e
            })
            .collect();
        let name = path.to_string_lossy();
        MappedFile {
            extents: fiemap::to_extents(&name, Some(ino), size, &raw),
            entry: FileEntry {
                path: name.into_owned(),
                inode: Some(ino),
                size_bytes: Some(size),
                is_dir,
            },
        }
    }
}

/// Stream the block map of `roots` (each on an XFS with rmapbt, see [`super::probe`]) through
/// GETFSMAP, with inode sizes read as `sizes` says: the same items, in the same order,
/// as [`walk::stream`]; and, per filesystem (the first root on it), where its sizes came
/// from.
pub fn stream(
    roots: &[PathBuf],
    opts: &WalkOptions,
    sizes: Sizes,
) -> Result<(walk::Walk, Vec<(PathBuf, SizesRead)>), BlockmapError> {
    let mut by_dev: HashMap<u64, Arc<Maps>> = HashMap::new();
    let mut read = Vec::new();
    for root in roots {
        let f = File::open(root).map_err(|source| BlockmapError::Io {
            path: root.clone(),
            source,
        })?;
        let dev = f
            .metadata()
            .map_err(|source| BlockmapError::Io {
                path: root.clone(),
                source,
            })?
            .dev();
        if by_dev.contains_key(&dev) {
            continue;
        }
        let err = |what: &str, source: nix::Error| BlockmapError::Fsmap {
            path: root.clone(),
            what: what.to_string(),
            source,
        };
        // Delayed allocations get their blocks (FIEMAP would show them as `delalloc`).
        nix::unistd::syncfs(&f).map_err(|e| err("syncfs", e))?;
        // The reverse map and the inode sizes, read at the same time, while a third
        // thread reads the tree's directories so that the walk after them finds them
        // in the cache (with cold caches the walk's reads cost as much as GETFSMAP's).
        let on_dev: Vec<&PathBuf> = roots
            .iter()
            .filter(|r| std::fs::metadata(r).is_ok_and(|m| m.dev() == dev))
            .collect();
        let done = AtomicBool::new(false);
        let (extents, got) = std::thread::scope(|s| {
            s.spawn(|| warm_directories(&on_dev, dev, &done));
            let got = s.spawn(|| sizes_for(&f, root, sizes));
            let extents = read_fsmap(&f);
            let got = got.join();
            done.store(true, Ordering::Relaxed);
            (extents, got)
        });
        let extents = extents.map_err(|e| err("FS_IOC_GETFSMAP", e))?;
        let (inode_sizes, how) =
            got.unwrap_or_else(|_| Err(err("reading inode sizes", nix::Error::EIO)))?;
        read.push((root.clone(), how));
        by_dev.insert(
            dev,
            Arc::new(Maps {
                extents,
                sizes: inode_sizes,
            }),
        );
    }
    let by_dev = Arc::new(by_dev);
    let mapper: walk::MapperFactory = Arc::new(move || {
        let by_dev = Arc::clone(&by_dev);
        // The device of the last directory seen (files come a directory at a time; the
        // directory is held, so its address cannot be reused by another meanwhile).
        let mut last_dir: Option<(Arc<File>, u64)> = None;
        Box::new(move |job| match job {
            Job::Open { file, path } => {
                let meta = file.metadata().map_err(|e| path_error(&path, e))?;
                let maps = by_dev
                    .get(&meta.dev())
                    .ok_or_else(|| path_error(&path, "not on a filesystem read by GETFSMAP"))?;
                Ok(maps.item(&path, meta.ino(), meta.size(), meta.is_dir()))
            }
            Job::At {
                dir,
                name,
                ino,
                path,
            } => {
                let dev = match &last_dir {
                    Some((d, dev)) if Arc::ptr_eq(d, &dir) => *dev,
                    _ => {
                        let dev = dir.metadata().map_err(|e| path_error(&path, e))?.dev();
                        last_dir = Some((Arc::clone(&dir), dev));
                        dev
                    }
                };
                let maps = by_dev
                    .get(&dev)
                    .ok_or_else(|| path_error(&path, "not on a filesystem read by GETFSMAP"))?;
                let size = match maps.size_of(ino) {
                    Some(s) => s,
                    // Created after the sizes were read, or its core read from the device
                    // was not believed: ask the file itself.
                    None => stat_size(dir.as_fd(), Path::new(&name)).map_err(|e| {
                        item_error(BlockmapError::Io {
                            path: path.clone(),
                            source: e,
                        })
                    })?,
                };
                Ok(maps.item(&path, ino, size, false))
            }
            Job::Done(e) => Err(e),
        })
    });
    let opts = WalkOptions {
        // The work per file is a hash lookup: one thread.
        threads: Some(1),
        ..opts.clone()
    };
    Ok((walk::stream_with(roots, &opts, mapper)?, read))
}

/// Most directories [`warm_directories`] keeps waiting to be read.
const WARM_PENDING: usize = 100_000;

/// Read the directories below `roots` (on device `dev`, symlinks not followed) with
/// `getdents` only, until `done` is set: a cache warmer, whose errors do not matter (the
/// walk reports its own). Memory: the paths of at most [`WARM_PENDING`] directories.
fn warm_directories(roots: &[&PathBuf], dev: u64, done: &AtomicBool) {
    use nix::dir::{Dir, Type};
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    let mut pending: Vec<PathBuf> = roots.iter().map(|r| r.to_path_buf()).collect();
    while let Some(path) = pending.pop() {
        if done.load(Ordering::Relaxed) {
            return;
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let Ok(mut d) = Dir::open(&path, flags, Mode::empty()) else {
            continue;
        };
        if !nix::sys::stat::fstat(&d).is_ok_and(|st| st.st_dev == dev) {
            continue;
        }
        for entry in d.iter() {
            let Ok(entry) = entry else { break };
            let name = entry.file_name().to_bytes();
            if entry.file_type() == Some(Type::Directory)
                && name != b"."
                && name != b".."
                && pending.len() < WARM_PENDING
            {
                pending.push(path.join(std::ffi::OsStr::from_bytes(name)));
            }
        }
    }
}

fn stat_size(dir: std::os::fd::BorrowedFd<'_>, name: &Path) -> std::io::Result<u64> {
    use nix::fcntl::AtFlags;
    let st = nix::sys::stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)?;
    Ok(st.st_size as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(logical: u64) -> Rec {
        Rec {
            logical,
            physical: logical + 1_000_000,
            length: 4096,
            flags: 0,
        }
    }

    #[test]
    fn an_inodes_extents_and_size_are_found_among_its_neighbours() {
        let maps = Maps {
            extents: vec![
                (5, rec(0)),
                (7, rec(0)),
                (7, rec(4096)),
                (7, rec(12288)),
                (9, rec(0)),
            ],
            sizes: vec![(5, 10), (7, 16384), (8, 0), (9, 1)],
        };
        let offsets: Vec<u64> = maps.extents_of(7).iter().map(|(_, r)| r.logical).collect();
        assert_eq!(offsets, [0, 4096, 12288]);
        assert!(maps.extents_of(6).is_empty() && maps.extents_of(10).is_empty());
        assert_eq!(maps.extents_of(9).len(), 1);
        assert_eq!(
            (maps.size_of(7), maps.size_of(8), maps.size_of(6)),
            (Some(16384), Some(0), None)
        );
        // The last extent of the file carries FIEMAP's LAST flag, the others not.
        let item = maps.item(Path::new("/m/f"), 7, 16384, false);
        let last: Vec<bool> = item
            .extents
            .iter()
            .map(|e| e.flags.split(',').any(|f| f == "last"))
            .collect();
        assert_eq!(last, [false, false, true]);
    }
}
