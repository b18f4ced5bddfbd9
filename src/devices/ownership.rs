//! The ownership record: what one fslab process attached, mounted and created, written
//! before it is used, so that a later process can release it if this one dies.

use super::loopdev::{detach, loops_backed_under};
use super::mounts::{mounts, unmount, unmount_all_under};
use super::DeviceError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static SEQ: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
struct RecordData {
    pid: u32,
    /// Process start time in clock ticks since boot (guards against pid reuse).
    start_ticks: u64,
    dir: PathBuf,
    images: Vec<PathBuf>,
    loops: Vec<(PathBuf, PathBuf)>,
    tmpfs: Vec<PathBuf>,
    /// Real devices mapped with `--device`: never detached; their mounts are under `dir`.
    #[serde(default)]
    mapped: Vec<PathBuf>,
}

#[derive(Debug)]
pub struct OwnershipRecord {
    path: PathBuf,
    data: RecordData,
}

fn owned_dir(work_root: &Path) -> PathBuf {
    work_root.join("owned")
}

fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22, counted after the parenthesised command name (which may hold spaces).
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(19)?.parse().ok()
}

impl OwnershipRecord {
    pub fn create(work_root: &Path, dir: &Path) -> Result<OwnershipRecord, DeviceError> {
        let owned = owned_dir(work_root);
        std::fs::create_dir_all(&owned).map_err(super::io_err("create", &owned))?;
        let pid = std::process::id();
        let path = owned.join(format!("{pid}-{}.json", SEQ.fetch_add(1, Ordering::SeqCst)));
        let rec = OwnershipRecord {
            path,
            data: RecordData {
                pid,
                start_ticks: start_ticks(pid).unwrap_or(0),
                dir: dir.to_path_buf(),
                ..Default::default()
            },
        };
        rec.save()?;
        Ok(rec)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn save(&self) -> Result<(), DeviceError> {
        let text = serde_json::to_vec_pretty(&self.data).unwrap_or_default();
        crate::store::atomic_write(&self.path, &text).map_err(super::io_err("write", &self.path))
    }

    pub fn add_image(&mut self, p: &Path) -> Result<(), DeviceError> {
        self.data.images.push(p.to_path_buf());
        self.save()
    }
    pub fn add_loop(&mut self, dev: &Path, image: &Path) -> Result<(), DeviceError> {
        self.data
            .loops
            .push((dev.to_path_buf(), image.to_path_buf()));
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
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What [`reclaim`] released.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Reclaimed {
    pub records: usize,
    pub mounts: usize,
    pub loops: usize,
    pub dirs: usize,
}

impl Reclaimed {
    pub fn is_empty(&self) -> bool {
        self.records + self.mounts + self.loops + self.dirs == 0
    }
}

fn alive(data: &RecordData) -> bool {
    match start_ticks(data.pid) {
        Some(t) => data.start_ticks == 0 || t == data.start_ticks,
        None => false,
    }
}

/// Release everything recorded by fslab processes that no longer run, and any loop
/// device backed by an image under `work_root` that no live process records.
pub fn reclaim(work_root: &Path) -> Result<Reclaimed, DeviceError> {
    let mut done = Reclaimed::default();
    let mut live_dirs = Vec::new();
    let owned = owned_dir(work_root);
    let mut records: Vec<(PathBuf, RecordData)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&owned) {
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "json") {
                match std::fs::read(&path)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<RecordData>(&b).ok())
                {
                    Some(d) => records.push((path, d)),
                    None => {
                        let _ = std::fs::remove_file(&path);
                    }
                }
            }
        }
    }
    let mut first_err = None;
    for (path, data) in records {
        if alive(&data) {
            live_dirs.push(data.dir.clone());
            continue;
        }
        // Only loop devices still backed by the recorded image: a free number may have
        // been reused by someone else since. Mapped devices are not listed: their
        // mounts are under `dir`, and a mount made later by their owner is not ours.
        let devs: Vec<PathBuf> = data
            .loops
            .iter()
            .filter(|(d, image)| super::loop_backing_file(d).is_some_and(|b| &b == image))
            .map(|(d, _)| d.clone())
            .collect();
        let before = count_mounts(&data.dir, &devs);
        let mut ok = true;
        if let Err(e) = unmount_all_under(&data.dir, &devs) {
            ok = false;
            first_err.get_or_insert(e);
        }
        done.mounts += before;
        for (dev, image) in data.loops.iter().rev() {
            let attached = super::loop_backing_file(dev).is_some_and(|b| &b == image);
            match detach(dev, image) {
                Ok(()) => done.loops += usize::from(attached),
                Err(e) => {
                    ok = false;
                    first_err.get_or_insert(e);
                }
            }
        }
        for t in data.tmpfs.iter().rev() {
            if let Err(e) = unmount(t) {
                ok = false;
                first_err.get_or_insert(e);
            }
        }
        if ok {
            if data.dir.exists() {
                let _ = std::fs::remove_dir_all(&data.dir);
                done.dirs += 1;
            }
            let _ = std::fs::remove_file(&path);
            done.records += 1;
        }
    }
    // Loops attached under the work root that no live record covers (a crash between
    // attaching and recording).
    for lo in loops_backed_under(work_root) {
        if live_dirs.iter().any(|d| lo.image.starts_with(d)) {
            continue;
        }
        let _ = unmount_all_under(
            Path::new("/nonexistent-fslab"),
            std::slice::from_ref(&lo.device),
        );
        match detach(&lo.device, &lo.image) {
            Ok(()) => done.loops += 1,
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) if done.is_empty() => Err(e),
        _ => Ok(done),
    }
}

fn count_mounts(dir: &Path, loops: &[PathBuf]) -> usize {
    mounts()
        .iter()
        .filter(|m| {
            (m.mount_point.starts_with(dir) && m.fstype != "tmpfs")
                || loops.iter().any(|d| Path::new(&m.source) == d)
        })
        .count()
}
