//! Real result bundles for the analysis, chart and CLI tests, measured on this machine.
//!
//! A bundle here is written by the store itself (`fslab::store::BundleWriter`, with the
//! store's `Manifest` and `RunRow` types), as the runner writes one: `manifest.json`
//! with the real environment and `runs.parquet` with real timings of real commands,
//! `mkfs.ext4` and `mkfs.xfs` on sparse image files (no loop device, nothing mounted),
//! plus `extents.parquet` with the real block map of an ext3 image populated by
//! `debugfs -w` (a large directory grown between its files' data, as in seed 001) read
//! back with `debugfs -R "stat …"`.
//! Everything lives under /var/tmp/fslab-test-stats/<test binary>/.
#![allow(dead_code)]

use fslab::blockmap::Extent;
use fslab::frames::from_records;
use fslab::polars::prelude::*;
use fslab::store::{
    runs_frame, write_parquet, BundleWriter, DeviceInfo, Environment, ExperimentInfo, Manifest,
    PointRecord, RunRow,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// The per-binary scratch directory.
pub fn scratch() -> PathBuf {
    // One directory per process: nextest runs every test in a process of its own, and
    // the shared bundles below are built once per process.
    let dir = PathBuf::from("/var/tmp/fslab-test-stats").join(format!(
        "{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// A runs row of `experiment` at the point `point_id` whose one matrix variable is
/// `fs`.
#[allow(clippy::too_many_arguments)]
fn run_row(
    experiment: &str,
    point_id: &str,
    point_index: usize,
    fs: &str,
    iteration: u32,
    (wall_s, user_s, sys_s): (f64, f64, f64),
    exit_code: i64,
    started_at: String,
) -> RunRow {
    let mut vars = serde_json::Map::new();
    vars.insert("fs".into(), json!(fs));
    RunRow {
        experiment: experiment.into(),
        point_id: point_id.into(),
        point_index,
        vars,
        iteration,
        replicate: 1,
        wall_s,
        user_s,
        sys_s,
        exit_code,
        status: if exit_code == 0 { "ok" } else { "failed" }
            .parse()
            .unwrap(),
        started_at,
    }
}

fn children_cpu() -> (f64, f64) {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_CHILDREN) {
        Ok(u) => {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            (t(u.user_time()), t(u.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

fn tool_version(cmd: &str, arg: &str) -> String {
    Command::new(cmd)
        .arg(arg)
        .output()
        .map(|o| {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            text.lines().next().unwrap_or("").trim().to_string()
        })
        .unwrap_or_default()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The machine's environment, as the store records it.
pub fn environment(image: &Path, image_size: u64) -> Environment {
    let cpu_model = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let distribution = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default();
    Environment {
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        distribution,
        cpu_model,
        cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        memory_bytes,
        hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
        clock_ticks_per_s: None,
        tools: [
            ("mkfs.xfs", tool_version("mkfs.xfs", "-V")),
            ("mkfs.ext4", tool_version("mkfs.ext4", "-V")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        devices: vec![DeviceInfo {
            name: "image0".into(),
            size_bytes: image_size,
            backing: image.display().to_string(),
            medium: None,
            throttle: None,
        }],
        guests: Vec::new(),
    }
}

const POINTS: [(&str, &str); 2] = [("ext4", "mkfs.ext4"), ("xfs", "mkfs.xfs")];

/// Measure `iterations` runs of mkfs.ext4 and mkfs.xfs on a 512 MiB sparse image and
/// write a bundle with the store's writer under `root` (`root/mkfs-time/<stamp>`, whose
/// path is returned).
pub fn measure_bundle(root: &Path, iterations: u32) -> PathBuf {
    std::fs::create_dir_all(root).unwrap();
    let image = root.join("image0.img");
    let size: u64 = 512 << 20;
    let mut overrides = serde_json::Map::new();
    overrides.insert("iterations".into(), json!(iterations));
    let manifest = Manifest {
        fslab_version: env!("CARGO_PKG_VERSION").into(),
        experiment: ExperimentInfo {
            id: "mkfs-time".into(),
            title: "mkfs time per filesystem".into(),
            file: Some("tests/it/support.rs".into()),
            sha256: String::new(),
            yaml: String::new(),
        },
        profile: Some("test".into()),
        overrides,
        matrix_axes: vec!["fs".into()],
        started_at: chrono::Utc::now().to_rfc3339(),
        finished_at: None,
        status: "running".parse().unwrap(),
        environment: environment(&image, size),
        points: POINTS
            .iter()
            .enumerate()
            .map(|(i, (fs, _))| {
                let mut vars = serde_json::Map::new();
                vars.insert("fs".into(), json!(fs));
                PointRecord {
                    id: format!("fs={fs}"),
                    index: i,
                    vars,
                    status: "ok".parse().unwrap(),
                    iterations,
                    ..PointRecord::default()
                }
            })
            .collect(),
        ..Manifest::default()
    };
    let mut writer = BundleWriter::create(root, manifest).unwrap();
    let mut rows = Vec::new();
    for (index, (fs, mkfs)) in POINTS.iter().enumerate() {
        for iteration in 1..=iterations {
            let f = std::fs::File::create(&image).unwrap();
            f.set_len(size).unwrap();
            drop(f);
            let force = if *fs == "xfs" { "-f" } else { "-F" };
            let (u0, s0) = children_cpu();
            let at = chrono::Utc::now().to_rfc3339();
            let t0 = Instant::now();
            let status = Command::new(mkfs)
                .args([force, "-q"])
                .arg(&image)
                .status()
                .unwrap_or_else(|e| panic!("{mkfs}: {e}"));
            let wall = t0.elapsed().as_secs_f64();
            let (u1, s1) = children_cpu();
            rows.push(run_row(
                "mkfs-time",
                &format!("fs={fs}"),
                index,
                fs,
                iteration,
                (wall, u1 - u0, s1 - s0),
                status.code().unwrap_or(-1) as i64,
                at,
            ));
        }
    }
    let _ = std::fs::remove_file(&image);
    // Written once measured, so that the writer's fsyncs do not fall between timings.
    for row in rows {
        writer.append_run(row).unwrap();
    }
    let m = writer.manifest_mut();
    m.finished_at = Some(chrono::Utc::now().to_rfc3339());
    m.status = "complete".parse().unwrap();
    writer.save_manifest().unwrap();
    writer.dir().to_path_buf()
}

/// The data extents of `debugfs -R "stat PATH"` output, through fslab's debugfs parser
/// (index blocks such as `(IND)` and `(ETB0)` left out).
pub fn debugfs_extents(stat: &str, path: &str, block: u64) -> Vec<Extent> {
    fslab::parse::debugfs::parse_stat_with_block_size(stat, block)
        .expect("debugfs stat output parses")
        .rows
        .into_iter()
        .filter(|e| !e.flags.contains("metadata"))
        .map(|e| Extent {
            path: path.into(),
            ..e
        })
        .collect()
}

/// An ext3 image populated with `debugfs -w`: a directory of 1500 files with long names
/// (its blocks end up between the files' data) and two 3 MB files, and the block maps
/// of the directory and the large files.
pub fn ext3_extents(dir: &Path) -> DataFrame {
    std::fs::create_dir_all(dir).unwrap();
    let image = dir.join("ext3.img");
    let small = dir.join("small");
    let big = dir.join("big");
    std::fs::write(&small, vec![7u8; 4096]).unwrap();
    std::fs::write(&big, vec![9u8; 3_000_000]).unwrap();
    let f = std::fs::File::create(&image).unwrap();
    f.set_len(128 << 20).unwrap();
    drop(f);
    let ok = Command::new("mkfs.ext3")
        .args(["-F", "-q", "-b", "4096"])
        .arg(&image)
        .status()
        .expect("mkfs.ext3")
        .success();
    assert!(ok, "mkfs.ext3 failed");
    let mut cmds = String::from("mkdir d\n");
    cmds.push_str(&format!("write {} big1\n", big.display()));
    for i in 1..=1500 {
        cmds.push_str(&format!("write {} d/{:0200}\n", small.display(), i));
    }
    cmds.push_str(&format!("write {} big2\n", big.display()));
    let cmd_file = dir.join("debugfs.cmds");
    std::fs::write(&cmd_file, cmds).unwrap();
    let ok = Command::new("debugfs")
        .arg("-w")
        .arg("-f")
        .arg(&cmd_file)
        .arg(&image)
        .output()
        .expect("debugfs")
        .status
        .success();
    assert!(ok, "debugfs -w failed");
    let mut extents = Vec::new();
    for path in ["/d", "/big1", "/big2"] {
        let out = Command::new("debugfs")
            .arg("-R")
            .arg(format!("stat {path}"))
            .arg(&image)
            .output()
            .expect("debugfs stat");
        extents.extend(debugfs_extents(
            &String::from_utf8_lossy(&out.stdout),
            path,
            4096,
        ));
    }
    let _ = std::fs::remove_file(&image);
    from_records(&extents).unwrap()
}

/// (real, user, sys) seconds as `time` prints them.
pub type Time = (f64, f64, f64);

/// Seed 000 (Darrick J. Wong, "mkfs: enable new features by default", 2025): ten
/// `fsstress` runs on XFS with parent=0 and parent=1, real/user/sys as published.
pub const SEED_000: [(&str, [Time; 10]); 2] = [
    (
        "parent=0",
        [
            (18.807, 2.169, 54.013),
            (13.845, 2.005, 34.048),
            (14.019, 1.931, 36.086),
            (14.435, 2.105, 35.845),
            (14.823, 1.920, 35.528),
            (14.181, 2.013, 35.775),
            (14.281, 1.865, 36.240),
            (13.638, 1.933, 35.642),
            (13.553, 1.904, 35.084),
            (13.963, 1.979, 35.724),
        ],
    ),
    (
        "parent=1",
        [
            (20.654, 2.374, 64.441),
            (14.255, 1.990, 36.749),
            (14.553, 1.931, 36.606),
            (13.855, 1.767, 36.467),
            (14.606, 2.073, 37.255),
            (13.706, 1.942, 36.294),
            (14.177, 2.017, 36.528),
            (15.310, 2.164, 37.720),
            (14.099, 2.013, 37.062),
            (14.067, 2.068, 36.552),
        ],
    ),
];

/// Seed 000 as a runs frame (the store's `RunRow`s).
pub fn seed_000_runs() -> DataFrame {
    let mut rows = Vec::new();
    for (index, (id, iterations)) in SEED_000.iter().enumerate() {
        for (k, time) in iterations.iter().enumerate() {
            rows.push(run_row(
                "xfs-parent-pointers",
                id,
                index,
                "xfs",
                k as u32 + 1,
                *time,
                0,
                String::new(),
            ));
        }
    }
    runs_frame(&rows).unwrap()
}

/// Write `manifest` and `runs` as a bundle at `dir` (for runs frames made by hand).
pub fn write_bundle(dir: &Path, manifest: &Manifest, runs: &DataFrame) {
    std::fs::create_dir_all(dir).unwrap();
    write_parquet(&dir.join("runs.parquet"), runs).unwrap();
    let manifest = Manifest {
        format_version: fslab::store::FORMAT_VERSION,
        ..manifest.clone()
    };
    fslab::store::atomic_write(
        &dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap().as_bytes(),
    )
    .unwrap();
}

static BUNDLES: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
static LOCK: Mutex<()> = Mutex::new(());

/// Two real bundles of the same experiment measured one after the other (base and
/// rerun), the first with a real extents table; measured once per test binary.
pub fn real_bundles() -> (PathBuf, PathBuf) {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    BUNDLES
        .get_or_init(|| {
            let root = scratch();
            let a = measure_bundle(&root.join("bundle-a"), 6);
            let b = measure_bundle(&root.join("bundle-b"), 6);
            let extents = ext3_extents(&root.join("ext3"));
            write_parquet(&a.join("extents.parquet"), &extents).unwrap();
            (a, b)
        })
        .clone()
}
