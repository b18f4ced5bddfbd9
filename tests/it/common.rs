//! Helpers for tests that run fslab on real loop devices (as root).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A private work and results directory; everything under it is released on drop.
/// Paths are kept short because fs_mark refuses directory names of 40 bytes or more.
pub struct Scratch {
    pub root: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let short: String = format!("{:x}", rand::random::<u32>() & 0xffff);
        let root = PathBuf::from(format!("/var/tmp/fslab-{tag}{short}"));
        std::fs::create_dir_all(&root).unwrap();
        Scratch { root }
    }
    pub fn work(&self) -> PathBuf {
        self.root.join("w")
    }
    pub fn results(&self) -> PathBuf {
        self.root.join("r")
    }
    /// Loop devices backed by images under this scratch dir.
    pub fn loops(&self) -> Vec<String> {
        fslab::devices::loops_backed_under(&self.root)
            .into_iter()
            .map(|l| l.device.display().to_string())
            .collect()
    }
    /// Mounts under this scratch dir.
    pub fn mounts(&self) -> Vec<String> {
        fslab::devices::mounts()
            .into_iter()
            .filter(|m| m.mount_point.starts_with(&self.root))
            .map(|m| m.mount_point.display().to_string())
            .collect()
    }
    pub fn fslab(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fslab"));
        c.env("FSLAB_WORK_DIR", self.work())
            .env("FSLAB_RESULTS_DIR", self.results())
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        c
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.fslab().args(args).output().unwrap()
    }
    /// `fslab run tests/experiments/NAME --quiet`, which must succeed: the bundle it
    /// printed.
    pub fn run_fixture(&self, name: &str) -> String {
        let o = self.run(&["run", fixture(name).to_str().unwrap(), "--quiet"]);
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }
    /// The one bundle directory under results/<id>/.
    pub fn bundles(&self, id: &str) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.results().join(id))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Whatever a failing test left: release it the way `fslab cleanup` would.
        if let Ok(w) = fslab::devices::WorkDir::open(&self.work()) {
            let _ = fslab::devices::reclaim(&w);
        }
        for m in self.mounts().into_iter().rev() {
            let _ = fslab::devices::unmount(Path::new(&m));
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/experiments")
        .join(name)
}

/// Every file below `dir`, depth first (none where a directory cannot be read).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A frame's column as text, whatever its type (a null is empty).
pub fn strings(df: &polars::prelude::DataFrame, name: &str) -> Vec<String> {
    df.column(name)
        .unwrap()
        .cast(&polars::prelude::DataType::String)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect()
}
