//! The work directory: where images, mount points, ownership records and their lock
//! live. fslab runs as root and deletes what the records there name, so the directory
//! must be one that nobody else can write to:
//!
//! - it is created `0700` (its missing parents `0755`), and made canonical once: a
//!   symlinked or relative path is resolved before anything is recorded, so the paths
//!   in records are the paths the kernel reports for loop backing files;
//! - it, and each of its ancestors, is owned by root (or the effective user) and not
//!   writable by group or others, except a sticky ancestor such as `/var/tmp`, where
//!   others cannot rename or remove what root made;
//! - `owned/` (the records) and `p/` (the points' directories) are real directories
//!   with the same rules, never symlinks;
//! - an `flock` on `owned/` ([`WorkDir::lock`]) orders reclaim against the record →
//!   attach sequence of every run that shares the directory.

use super::DeviceError;
use nix::fcntl::{Flock, FlockArg};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

pub use crate::host::DEFAULT_WORK_DIR;

/// A file's identity: device and inode numbers (what `stat` reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    /// The identity of `path` itself (a symlink is not followed).
    pub fn of(path: &Path) -> std::io::Result<FileId> {
        let m = std::fs::symlink_metadata(path)?;
        Ok(FileId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }
}

/// A trusted, canonical work directory.
#[derive(Debug, Clone)]
pub struct WorkDir {
    root: PathBuf,
    id: FileId,
}

/// Held while records are read or written; released on drop.
#[derive(Debug)]
pub struct WorkLock {
    _lock: Flock<std::fs::File>,
}

fn untrusted(path: &Path, reason: impl Into<String>) -> DeviceError {
    DeviceError::UntrustedWorkDir {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Who may own a directory fslab trusts: root, or the user fslab runs as.
fn trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == nix::unistd::geteuid().as_raw()
}

/// Check one directory (not followed if a symlink): a real directory, owned by a
/// trusted user, not writable by group or others unless `sticky_ok` and sticky.
fn check_dir(path: &Path, sticky_ok: bool) -> Result<FileId, DeviceError> {
    let m = std::fs::symlink_metadata(path).map_err(|e| untrusted(path, e.to_string()))?;
    if m.file_type().is_symlink() {
        return Err(untrusted(path, "it is a symbolic link"));
    }
    if !m.is_dir() {
        return Err(untrusted(path, "it is not a directory"));
    }
    if !trusted_owner(m.uid()) {
        return Err(untrusted(
            path,
            format!(
                "it is owned by uid {}, not by root; another user could plant records that root would act on",
                m.uid()
            ),
        ));
    }
    let mode = m.permissions().mode();
    let sticky = mode & 0o1000 != 0;
    if mode & 0o022 != 0 && !(sticky_ok && sticky) {
        return Err(untrusted(
            path,
            format!(
                "it is writable by {} (mode {:04o}); `chmod go-w` it, or use another directory",
                if mode & 0o002 != 0 {
                    "others"
                } else {
                    "its group"
                },
                mode & 0o7777
            ),
        ));
    }
    Ok(FileId {
        dev: m.dev(),
        ino: m.ino(),
    })
}

/// Create `path` (mode `mode`) if it is missing; an existing one is left as it is.
fn make_dir(path: &Path, mode: u32) -> Result<(), DeviceError> {
    match std::fs::DirBuilder::new().mode(mode).create(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(super::io_err("create", path)(e)),
    }
}

impl WorkDir {
    /// Create (if needed), resolve and check `path`. Refuses, naming the reason, a
    /// directory that another user owns or can write to, along its whole path.
    pub fn open(path: &Path) -> Result<WorkDir, DeviceError> {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(super::io_err("resolve", path))?
                .join(path)
        };
        // Missing ancestors 0755, the directory itself 0700.
        let mut missing: Vec<PathBuf> = Vec::new();
        for a in abs.ancestors() {
            if std::fs::symlink_metadata(a).is_ok() {
                break;
            }
            missing.push(a.to_path_buf());
        }
        for (i, m) in missing.iter().rev().enumerate() {
            let last = i + 1 == missing.len();
            make_dir(m, if last { 0o700 } else { 0o755 })?;
        }
        let root = std::fs::canonicalize(&abs).map_err(super::io_err("resolve", &abs))?;
        // Ancestors first: a directory is only as safe as the path to it.
        let mut chain: Vec<&Path> = root.ancestors().skip(1).collect();
        chain.reverse();
        for a in chain {
            check_dir(a, true)?;
        }
        let id = check_dir(&root, false)?;
        let w = WorkDir { root, id };
        for sub in [w.owned(), w.points()] {
            make_dir(&sub, 0o700)?;
            check_dir(&sub, false)?;
        }
        Ok(w)
    }

    /// The canonical path.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The directory's identity, taken when it was checked.
    pub fn id(&self) -> FileId {
        self.id
    }

    /// Where ownership records live.
    pub fn owned(&self) -> PathBuf {
        self.root.join("owned")
    }

    /// Where the points' directories live (`p/<short id>/`).
    pub fn points(&self) -> PathBuf {
        self.root.join("p")
    }

    /// Is `p` a point directory of this work directory: `<work>/p/<one name>`, spelled
    /// without `.` or `..`?
    pub fn is_point_dir(&self, p: &Path) -> bool {
        match p.strip_prefix(self.points()) {
            Ok(rest) => {
                let mut c = rest.components();
                matches!((c.next(), c.next()), (Some(Component::Normal(_)), None))
            }
            Err(_) => false,
        }
    }

    /// Take the work directory's lock (blocking): reclaim holds it throughout, and a
    /// run holds it from writing a point's record until its devices are attached and
    /// recorded, so that reclaim never sees a live run half-way.
    pub fn lock(&self) -> Result<WorkLock, DeviceError> {
        let owned = self.owned();
        let f = std::fs::File::open(&owned).map_err(super::io_err("open", &owned))?;
        let lock = Flock::lock(f, FlockArg::LockExclusive).map_err(|(_, e)| DeviceError::Io {
            action: "lock",
            path: owned.clone(),
            source: e.into(),
        })?;
        Ok(WorkLock { _lock: lock })
    }
}

/// Is `p` (spelled without `.` or `..`) below `dir`?
pub(crate) fn strictly_under(p: &Path, dir: &Path) -> bool {
    p != dir
        && p.starts_with(dir)
        && p.components()
            .all(|c| !matches!(c, Component::ParentDir | Component::CurDir))
}

/// Remove the tree at `path` without following a symlink and without crossing into
/// another filesystem: only entries on device `dev` are removed. A mount point found
/// inside (something still mounted) is left, and reported. Returns what it could not
/// remove (empty: all of it is gone).
pub(crate) fn remove_tree(path: &Path, dev: u64) -> Vec<String> {
    use nix::dir::Dir;
    use nix::fcntl::{AtFlags, OFlag};
    use nix::sys::stat::{fstatat, Mode, SFlag};
    use nix::unistd::{unlinkat, UnlinkatFlags};
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    const OPEN: OFlag = OFlag::O_RDONLY
        .union(OFlag::O_DIRECTORY)
        .union(OFlag::O_NOFOLLOW)
        .union(OFlag::O_CLOEXEC);

    fn walk(mut dir: Dir, at: &Path, dev: u64, mounted: &[PathBuf], left: &mut Vec<String>) {
        let names: Vec<CString> = dir
            .iter()
            .flatten()
            .map(|e| e.file_name().to_owned())
            .filter(|n| n.as_bytes() != b"." && n.as_bytes() != b"..")
            .collect();
        for n in names {
            let child = at.join(std::ffi::OsStr::from_bytes(n.as_bytes()));
            let st = match fstatat(&dir, n.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(s) => s,
                Err(e) => {
                    left.push(format!("{}: {e}", child.display()));
                    continue;
                }
            };
            let is_dir = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
            if is_dir {
                // A bind mount of the same filesystem has the same device number: the
                // mount table says it is one.
                if st.st_dev != dev || mounted.contains(&child) {
                    left.push(format!(
                        "{}: on another filesystem (still mounted); left alone",
                        child.display()
                    ));
                    continue;
                }
                match Dir::openat(&dir, n.as_c_str(), OPEN, Mode::empty()) {
                    Ok(sub) => walk(sub, &child, dev, mounted, left),
                    Err(e) => {
                        left.push(format!("{}: {e}", child.display()));
                        continue;
                    }
                }
                if let Err(e) = unlinkat(&dir, n.as_c_str(), UnlinkatFlags::RemoveDir) {
                    left.push(format!("{}: {e}", child.display()));
                }
            } else if let Err(e) = unlinkat(&dir, n.as_c_str(), UnlinkatFlags::NoRemoveDir) {
                left.push(format!("{}: {e}", child.display()));
            }
        }
    }

    let mut left = Vec::new();
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return left;
    };
    if m.file_type().is_symlink() || !m.is_dir() {
        left.push(format!("{}: not a directory; left alone", path.display()));
        return left;
    }
    let mounted: Vec<PathBuf> = super::mounts::mounts()
        .into_iter()
        .map(|m| m.mount_point)
        .filter(|m| m.starts_with(path))
        .collect();
    if m.dev() != dev || mounted.iter().any(|m| m == path) {
        left.push(format!(
            "{}: on another filesystem (something is mounted there); left alone",
            path.display()
        ));
        return left;
    }
    match Dir::open(path, OPEN, Mode::empty()) {
        Ok(d) => {
            walk(d, path, dev, &mounted, &mut left);
            if left.is_empty() {
                if let Err(e) = std::fs::remove_dir(path) {
                    left.push(format!("{}: {e}", path.display()));
                }
            }
        }
        Err(e) => left.push(format!("{}: {e}", path.display())),
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_new_work_dir_is_private_and_canonical() {
        let t = tempfile::tempdir().unwrap();
        let w = WorkDir::open(&t.path().join("a/b")).unwrap();
        let m = std::fs::metadata(w.path()).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o700);
        for sub in [w.owned(), w.points()] {
            assert_eq!(
                std::fs::metadata(&sub).unwrap().permissions().mode() & 0o777,
                0o700
            );
        }
        // Through a symlink: the same canonical directory.
        symlink(t.path().join("a"), t.path().join("link")).unwrap();
        let via = WorkDir::open(&t.path().join("link/b")).unwrap();
        assert_eq!(via.path(), w.path());
        assert_eq!(via.id(), w.id());
        assert!(w.is_point_dir(&w.points().join("abc")));
        assert!(!w.is_point_dir(&w.points().join("abc/d")));
        assert!(!w.is_point_dir(&w.points().join("..")));
        assert!(!w.is_point_dir(&w.points()));
    }

    #[test]
    fn a_work_dir_others_could_write_is_refused() {
        if !crate::devices::test_needs_root("a_work_dir_others_could_write_is_refused") {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("w");
        std::fs::create_dir(&d).unwrap();
        chmod(&d, 0o777);
        let e = WorkDir::open(&d).unwrap_err().to_string();
        assert!(e.contains("writable by others"), "{e}");
        chmod(&d, 0o770);
        let e = WorkDir::open(&d).unwrap_err().to_string();
        assert!(e.contains("writable by its group"), "{e}");
        // Owned by another user (nobody), even when private.
        chmod(&d, 0o700);
        std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
        let e = WorkDir::open(&d).unwrap_err().to_string();
        assert!(e.contains("owned by uid 65534"), "{e}");
        // An ancestor that others can write to (and that is not sticky).
        std::os::unix::fs::chown(&d, Some(0), Some(0)).unwrap();
        let parent = t.path().join("open");
        std::fs::create_dir(&parent).unwrap();
        chmod(&parent, 0o777);
        let e = WorkDir::open(&parent.join("w")).unwrap_err().to_string();
        assert!(
            e.contains("open") && e.contains("writable by others"),
            "{e}"
        );
        // A sticky one, like /var/tmp, is fine.
        chmod(&parent, 0o1777);
        WorkDir::open(&parent.join("w")).unwrap();
        // `owned/` planted as a symlink is refused.
        let w2 = t.path().join("w2");
        std::fs::create_dir(&w2).unwrap();
        chmod(&w2, 0o700);
        symlink("/tmp", w2.join("owned")).unwrap();
        let e = WorkDir::open(&w2).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }

    #[test]
    fn remove_tree_follows_no_link_and_crosses_no_mount() {
        if !crate::devices::test_needs_root("remove_tree_follows_no_link_and_crosses_no_mount") {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("precious"), "x").unwrap();
        let tree = t.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/b/f"), "y").unwrap();
        symlink(&victim, tree.join("a/link")).unwrap();
        let dev = std::fs::metadata(t.path()).unwrap().dev();
        assert!(remove_tree(&tree, dev).is_empty());
        assert!(!tree.exists());
        assert!(victim.join("precious").exists());

        // A filesystem mounted inside (a tmpfs) is left whole, and reported.
        std::fs::create_dir_all(tree.join("m")).unwrap();
        super::super::mounts::mount_tmpfs(&tree.join("m"), 1 << 20).unwrap();
        std::fs::write(tree.join("m/inside"), "z").unwrap();
        std::fs::write(tree.join("outside"), "z").unwrap();
        let left = remove_tree(&tree, dev);
        let inside_survived = tree.join("m/inside").exists();
        super::super::mounts::unmount(&tree.join("m")).unwrap();
        assert!(inside_survived);
        assert!(!tree.join("outside").exists());
        assert!(
            left.iter().any(|l| l.contains("another filesystem")),
            "{left:?}"
        );
        // A bind mount of the same filesystem too (same device number).
        std::fs::create_dir_all(tree.join("bind")).unwrap();
        nix::mount::mount(
            Some(&victim),
            &tree.join("bind"),
            None::<&str>,
            nix::mount::MsFlags::MS_BIND,
            None::<&str>,
        )
        .unwrap();
        let left = remove_tree(&tree, dev);
        super::super::mounts::unmount(&tree.join("bind")).unwrap();
        assert!(victim.join("precious").exists(), "{left:?}");
        assert!(!left.is_empty());
    }
}
