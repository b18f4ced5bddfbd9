//! The ownership record: what one fslab process attached, mounted, created and
//! started, written before it is used, so that a later process can release it if this
//! one dies.
//!
//! Records are only believed where they cannot have been planted: they live in the
//! trusted work directory ([`WorkDir`]), and a record whose directory, images, mounts
//! or cgroups lie outside `<work>/p/` (or outside fslab's cgroups) is ignored with a
//! warning. Reclaim holds the work directory's lock throughout.

use super::cgroup;
use super::loopdev::{backing_id, detach, loops_backed_under};
use super::mounts::{mounts, unmount, unmount_all_under};
use super::workdir::{remove_tree, strictly_under, FileId, WorkDir};
use super::DeviceError;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// A loop device fslab attached, and the image file behind it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
enum LoopEntry {
    Full {
        device: PathBuf,
        image: PathBuf,
        /// The image's identity: the loop is ours only while it is backed by this file
        /// (paths differ when a directory is reached through a symlink).
        file: FileId,
    },
    /// Records written by fslab before 0.1.1: `[device, image]`.
    Old(PathBuf, PathBuf),
}

impl LoopEntry {
    fn device(&self) -> &Path {
        match self {
            LoopEntry::Full { device, .. } | LoopEntry::Old(device, _) => device,
        }
    }
    fn image(&self) -> &Path {
        match self {
            LoopEntry::Full { image, .. } | LoopEntry::Old(_, image) => image,
        }
    }
    /// Is the loop device still backed by the recorded image?
    fn attached(&self) -> bool {
        match self {
            LoopEntry::Full { device, file, .. } => backing_id(device) == Some(*file),
            LoopEntry::Old(device, image) => {
                super::loop_backing_file(device).is_some_and(|b| &b == image)
            }
        }
    }
    fn detach(&self) -> Result<(), DeviceError> {
        match self {
            LoopEntry::Full { device, file, .. } => detach(device, *file),
            LoopEntry::Old(device, image) => match FileId::of(image) {
                Ok(id) => detach(device, id),
                Err(_) => Ok(()),
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
struct RecordData {
    pid: u32,
    /// Process start time in clock ticks since boot (guards against pid reuse).
    start_ticks: u64,
    dir: PathBuf,
    images: Vec<PathBuf>,
    loops: Vec<LoopEntry>,
    tmpfs: Vec<PathBuf>,
    /// Real devices mapped with `--device`: never detached; their mounts are under `dir`.
    #[serde(default)]
    mapped: Vec<PathBuf>,
    /// The point's cgroups (one directory per hierarchy), recorded before they are made.
    #[serde(default)]
    cgroups: Vec<PathBuf>,
}

#[derive(Debug)]
pub struct OwnershipRecord {
    path: PathBuf,
    data: RecordData,
}

pub(crate) fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22, counted after the parenthesised command name (which may hold spaces).
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(19)?.parse().ok()
}

impl OwnershipRecord {
    /// Write a new record for a point whose directory is `dir` (under `<work>/p/`).
    /// Write the record of the point at `dir`, naming the cgroup directories
    /// `cgroups(name)` gives for its [`cgroup_name`](Self::cgroup_name) (recorded
    /// before they are made: a crash in between leaves a record of nothing made, which
    /// reclaim removes). One write, one `fsync`.
    pub fn create(
        work: &WorkDir,
        dir: &Path,
        cgroups: impl FnOnce(&str) -> Vec<PathBuf>,
    ) -> Result<OwnershipRecord, DeviceError> {
        if !work.is_point_dir(dir) {
            return Err(DeviceError::Refused {
                device: dir.display().to_string(),
                reason: Box::new(super::policy::Refusal::PointDirOutsideWork(work.points())),
            });
        }
        let pid = std::process::id();
        let seq = SEQ.fetch_add(1, Ordering::SeqCst);
        let path = work.owned().join(format!("{pid}-{seq}.json"));
        let mut rec = OwnershipRecord {
            path,
            data: RecordData {
                pid,
                start_ticks: start_ticks(pid).unwrap_or(0),
                dir: dir.to_path_buf(),
                ..Default::default()
            },
        };
        rec.data.cgroups = cgroups(&rec.cgroup_name());
        rec.save()?;
        Ok(rec)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A name for this record's cgroups, unique on the machine.
    pub fn cgroup_name(&self) -> String {
        let stem = self
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("0");
        format!("{stem}-{}", self.data.start_ticks)
    }

    fn save(&self) -> Result<(), DeviceError> {
        let text = serde_json::to_vec_pretty(&self.data).unwrap_or_default();
        crate::store::atomic_write(&self.path, &text).map_err(super::io_err("write", &self.path))
    }

    pub fn add_image(&mut self, p: &Path) -> Result<(), DeviceError> {
        self.data.images.push(p.to_path_buf());
        self.save()
    }
    pub fn add_loop(&mut self, dev: &Path, image: &Path, file: FileId) -> Result<(), DeviceError> {
        self.data.loops.push(LoopEntry::Full {
            device: dev.to_path_buf(),
            image: image.to_path_buf(),
            file,
        });
        self.save()
    }
    pub fn add_mapped(&mut self, dev: &Path) -> Result<(), DeviceError> {
        self.data.mapped.push(dev.to_path_buf());
        self.save()
    }
    pub fn add_tmpfs(&mut self, p: &Path) -> Result<(), DeviceError> {
        self.data.tmpfs.push(p.to_path_buf());
        self.save()
    }
    /// The cgroup directories recorded at [`create`](Self::create).
    pub fn cgroups(&self) -> &[PathBuf] {
        &self.data.cgroups
    }
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What [`reclaim`] released, and what it could not.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Reclaimed {
    pub records: usize,
    pub mounts: usize,
    pub loops: usize,
    pub dirs: usize,
    /// Processes of dead runs that were still running, killed.
    pub processes: usize,
    pub cgroups: usize,
    /// Filesystems that dead fslab processes left frozen (`devices::freeze`), thawed.
    pub thawed: Vec<PathBuf>,
    /// What could not be released (a busy mount, a loop device that stays attached);
    /// their records are kept for the next try.
    pub kept: Vec<String>,
    /// Records that were not believed (they name paths outside the work directory).
    pub ignored: Vec<String>,
}

impl Reclaimed {
    /// One line for people: what a killed run left and this released.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "released {} mounts and {} loop devices left by a killed run",
            self.mounts, self.loops
        );
        for m in &self.thawed {
            s.push_str(&format!("; thawed {} (left frozen)", m.display()));
        }
        s
    }
    /// Nothing was released.
    pub fn is_empty(&self) -> bool {
        self.records + self.mounts + self.loops + self.dirs + self.processes + self.cgroups == 0
            && self.thawed.is_empty()
    }
    /// Everything found was released, and every record was believed.
    pub fn is_clean(&self) -> bool {
        self.kept.is_empty() && self.ignored.is_empty()
    }
}

fn alive(data: &RecordData) -> bool {
    match start_ticks(data.pid) {
        Some(t) => data.start_ticks == 0 || t == data.start_ticks,
        None => false,
    }
}

/// Why a dead run's record is not believed, if it is not: everything it names must lie
/// inside its own point directory, which must be directly under `<work>/p/`.
fn implausible(work: &WorkDir, d: &RecordData) -> Option<String> {
    if !work.is_point_dir(&d.dir) {
        return Some(format!(
            "its directory {} is not directly under {}",
            d.dir.display(),
            work.points().display()
        ));
    }
    let inside = |p: &Path| strictly_under(p, &d.dir);
    if let Some(p) = d.images.iter().find(|p| !inside(p)) {
        return Some(format!(
            "its image {} is outside {}",
            p.display(),
            d.dir.display()
        ));
    }
    if let Some(l) = d.loops.iter().find(|l| !inside(l.image())) {
        return Some(format!(
            "the image {} of {} is outside {}",
            l.image().display(),
            l.device().display(),
            d.dir.display()
        ));
    }
    if let Some(l) = d.loops.iter().find(|l| {
        !l.device()
            .to_str()
            .is_some_and(|s| s.starts_with("/dev/loop"))
    }) {
        return Some(format!("{} is not a loop device", l.device().display()));
    }
    if let Some(p) = d.tmpfs.iter().find(|p| !inside(p)) {
        return Some(format!(
            "its tmpfs {} is outside {}",
            p.display(),
            d.dir.display()
        ));
    }
    if let Some(c) = d.cgroups.iter().find(|c| !cgroup::is_fslab_cgroup(c)) {
        return Some(format!("{} is not one of fslab's cgroups", c.display()));
    }
    None
}

/// Why a record is not believed.
#[derive(Debug, thiserror::Error)]
enum BadRecord {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a regular file")]
    NotAFile,
    #[error("owned by uid {0}, not root")]
    NotRoots(u32),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// Read one record: a regular file owned by root (or us), not a symlink.
fn read_record(path: &Path) -> Result<RecordData, BadRecord> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(BadRecord::NotAFile);
    }
    if m.uid() != 0 && m.uid() != nix::unistd::geteuid().as_raw() {
        return Err(BadRecord::NotRoots(m.uid()));
    }
    Ok(serde_json::from_reader(std::io::BufReader::new(f))?)
}

/// Release everything recorded by fslab processes that no longer run, and any loop
/// device backed by an image under the work directory that no live process records.
/// Holds the work directory's lock throughout, so no run provisions meanwhile.
pub fn reclaim(work: &WorkDir) -> Result<Reclaimed, DeviceError> {
    let _lock = work.lock()?;
    let mut done = Reclaimed::default();
    // A dead FUSE server's mount, busy with its loop device, first (docs/media.md); then
    // the tracefs instances of dead runs. Neither depends on a record.
    if let Ok(m) = super::medium::reclaim_dead() {
        done.mounts += m.mounts.len();
    }
    let _ = super::trace::reclaim_dead_instances();
    // A filesystem left frozen stops its writers (and this run's, if it uses it).
    match super::freeze::reclaim_dead() {
        Ok(t) => done.thawed = t,
        Err(e) => done.kept.push(format!("frozen filesystems: {e}")),
    }
    let mut live_dirs = Vec::new();
    let owned = work.owned();
    let mut records: Vec<(PathBuf, RecordData)> = Vec::new();
    let entries = std::fs::read_dir(&owned).map_err(super::io_err("read", &owned))?;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        match read_record(&path) {
            Ok(d) => records.push((path, d)),
            Err(why) => done
                .ignored
                .push(format!("record {}: {why}; ignored", path.display())),
        }
    }
    for (path, data) in records {
        if alive(&data) {
            live_dirs.push(data.dir.clone());
            continue;
        }
        if let Some(why) = implausible(work, &data) {
            done.ignored
                .push(format!("record {}: {why}; ignored", path.display()));
            continue;
        }
        let mut kept: Vec<String> = Vec::new();
        // 1. Whatever the dead run left running goes first: it may hold the mounts.
        let cgs: Vec<PathBuf> = data
            .cgroups
            .iter()
            .filter(|c| c.is_dir())
            .cloned()
            .collect();
        match cgroup::kill_and_remove(&cgs) {
            Ok(killed) => {
                done.processes += killed;
                done.cgroups += cgs.len();
            }
            Err(e) => kept.push(e.to_string()),
        }
        // 2. Mounts under its directory or of its loop devices (not lazily: a busy
        // mount stays, and is reported).
        let devs: Vec<PathBuf> = data
            .loops
            .iter()
            .filter(|l| l.attached())
            .map(|l| l.device().to_path_buf())
            .collect();
        let before = count_mounts(&data.dir, &devs, &data.tmpfs);
        if let Err(e) = unmount_all_under(&data.dir, &devs, &data.tmpfs) {
            kept.push(e.to_string());
        }
        done.mounts += before.saturating_sub(count_mounts(&data.dir, &devs, &data.tmpfs));
        // 3. Loop devices, checked detached (not while a mount of theirs stays: that
        // would only mark them to go on last close).
        let unmounted = kept.is_empty();
        for l in data.loops.iter().rev().filter(|_| unmounted) {
            let was = l.attached();
            match l.detach() {
                Ok(()) => done.loops += usize::from(was),
                Err(e) => kept.push(e.to_string()),
            }
        }
        // 4. The tmpfs that backed images.
        for t in data.tmpfs.iter().rev() {
            if let Err(e) = unmount(t) {
                kept.push(e.to_string());
            }
        }
        // 5. Its directory: never across a filesystem boundary, never through a link.
        if kept.is_empty() && data.dir.exists() {
            let left = remove_tree(&data.dir, work.id().dev);
            if left.is_empty() {
                done.dirs += 1;
            } else {
                kept.extend(left);
            }
        }
        if kept.is_empty() {
            let _ = std::fs::remove_file(&path);
            done.records += 1;
        } else {
            done.kept.push(format!(
                "record {} (pid {}): {}; kept for the next `fslab cleanup`",
                path.display(),
                data.pid,
                kept.join("; ")
            ));
        }
    }
    // Loops attached under the work directory that no live record covers (a crash
    // between attaching and recording).
    for lo in loops_backed_under(work.path()) {
        if live_dirs.iter().any(|d| lo.image.starts_with(d)) {
            continue;
        }
        let Some(id) = backing_id(&lo.device) else {
            continue;
        };
        let _ = unmount_all_under(
            Path::new("/nonexistent-fslab"),
            std::slice::from_ref(&lo.device),
            &[],
        );
        match detach(&lo.device, id) {
            Ok(()) => done.loops += 1,
            Err(e) => done.kept.push(e.to_string()),
        }
    }
    Ok(done)
}

fn count_mounts(dir: &Path, loops: &[PathBuf], backing_tmpfs: &[PathBuf]) -> usize {
    mounts()
        .iter()
        .filter(|m| {
            (m.mount_point.starts_with(dir) && !backing_tmpfs.contains(&m.mount_point))
                || loops.iter().any(|d| Path::new(&m.source) == d)
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_records_still_read() {
        let old = r#"{"pid":1,"start_ticks":0,"dir":"/w/p/ab","images":["/w/p/ab/images/d.img"],
            "loops":[["/dev/loop3","/w/p/ab/images/d.img"]],"tmpfs":[]}"#;
        let d: RecordData = serde_json::from_str(old).unwrap();
        assert_eq!(d.loops[0].device(), Path::new("/dev/loop3"));
        assert!(d.cgroups.is_empty());
        let new = LoopEntry::Full {
            device: "/dev/loop4".into(),
            image: "/w/p/ab/images/d.img".into(),
            file: FileId { dev: 1, ino: 2 },
        };
        let back: LoopEntry = serde_json::from_str(&serde_json::to_string(&new).unwrap()).unwrap();
        assert_eq!(back, new);
    }
}
