//! The bundle's on-disk format: [`FORMAT_VERSION`] and its history, the manifest's
//! types (`manifest.json`), a run row and the columns of the runs table
//! (`runs.jsonl`, `runs.parquet`), and the names of the files and directories inside a
//! bundle. A change here is a change of the format: old bundles must still open.

use super::merge::{MergeInfo, ShardInfo};
use super::{BundleStatus, CalibrationRecord, PointStatus, RunOrderRecord, RunStatus, StoreError};
use crate::frames;
use polars::prelude::{DataFrame, DataType};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The manifest: what ran, where, with which tools; per-point status ([`Manifest`]).
pub const MANIFEST_FILE: &str = "manifest.json";
/// The experiment file exactly as run.
pub const EXPERIMENT_FILE: &str = "experiment.yaml";
/// The runs journal: one JSON line per timed iteration ([`RunRow`]).
pub const JOURNAL_FILE: &str = "runs.jsonl";
/// The runs table (the journal's rows as of the last flush).
pub const RUNS_FILE: &str = "runs.parquet";
/// The stdout and stderr of every command, one directory per point ([`point_dir_name`]).
pub const LOGS_DIR: &str = "logs";
/// The raw text of every capture, one directory per point ([`point_dir_name`]).
pub const CAPTURES_DIR: &str = "captures";
/// The bundle's directory of executed notebooks (`notebook/NAME.ipynb`, `NAME.html`).
pub const NOTEBOOK_DIR: &str = "notebook";

/// A notebook executed on a bundle and stored in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredNotebook {
    /// The notebook's name (its file stem).
    pub name: String,
    pub ipynb: PathBuf,
    /// Its HTML export, when there is one.
    pub html: Option<PathBuf>,
}

/// The environment a bundle was measured in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub kernel: String,
    pub distribution: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
    pub hostname: String,
    /// `sysconf(_SC_CLK_TCK)`: the tick rate CPU times (`user_s`, `sys_s`) are
    /// accounted in; absent in bundles written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ticks_per_s: Option<u64>,
    /// Program → the version it reports (or its Debian package version).
    pub tools: BTreeMap<String, String>,
    pub devices: Vec<DeviceInfo>,
    /// The guest kernels points ran in; empty when every point ran on the host. With
    /// `fslab run --kernel` every point ran in the one guest (and `kernel` is its); with a
    /// `kernel` matrix axis each point ran where its `kernel` value says (`host` or a
    /// guest's name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guests: Vec<GuestInfo>,
}

/// The guest kernel the points ran in.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GuestInfo {
    /// How the kernel ran: `User-Mode Linux`.
    pub kind: String,
    /// fslab's name for the kernel (`uml-bookworm`).
    pub name: String,
    /// What the guest said its kernel is (`uname -r` inside it).
    pub release: String,
    /// The guest's memory (`mem=`).
    pub memory_bytes: u64,
    /// How long the run's first guest took from starting its kernel to its agent's
    /// first word (each replicate boots its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_s: Option<f64>,
    /// Where the kernel came from (its `kernel.json`: package, version, sha256).
    pub provenance: serde_json::Value,
    /// What a measurement in this guest does not show (said with every verdict).
    pub caveats: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    pub name: String,
    pub size_bytes: u64,
    pub backing: String,
    /// The disk model the device was served through, with its parameters (a modelled
    /// medium is a substitution for the post's disk: docs/media.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub medium: Option<MediumRecord>,
    /// The throttle's limits, interface and what it catches here (docs/media.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ExperimentInfo {
    pub id: String,
    pub title: String,
    pub file: Option<String>,
    pub sha256: String,
    pub yaml: String,
}

/// The status of one matrix point.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PointRecord {
    pub id: String,
    pub index: usize,
    pub vars: serde_json::Map<String, serde_json::Value>,
    /// Where the point stands; `unsupported` and `other-shard` come with a `reason`.
    pub status: PointStatus,
    pub reason: Option<String>,
    pub iterations: u32,
    /// Why the runner stopped repeating (fixed count, target CV reached, maximum reached),
    /// as text (one clause per replicate when there are several).
    #[serde(default)]
    pub repeat_stop: Option<String>,
    /// The same, typed: one entry per replicate (absent in bundles before format 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeat_stops: Vec<RepeatStop>,
    /// What is worth knowing about how the point ran (e.g. which program stood in for a
    /// tool), from the preflight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Why the runner stopped repeating one replicate of a point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StopReason {
    /// No target CV: the fixed count was run.
    Fixed { n: usize },
    /// The steady-state CV reached the target, with at least the minimum number of
    /// steady-state samples (`steady_n`).
    TargetReached {
        n: usize,
        #[serde(default)]
        steady_n: usize,
        cv_pct: f64,
    },
    /// The maximum was reached before the target (cv_pct is the last CV, if any).
    MaxReached { n: usize, cv_pct: Option<f64> },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Fixed { n } => write!(f, "fixed count of {n} iterations"),
            StopReason::TargetReached {
                n,
                steady_n,
                cv_pct,
            } => write!(
                f,
                "CV {cv_pct:.2}% reached the target after {n} iterations ({steady_n} steady)"
            ),
            StopReason::MaxReached {
                n,
                cv_pct: Some(cv),
            } => write!(f, "maximum of {n} iterations reached with CV {cv:.2}%"),
            StopReason::MaxReached { n, cv_pct: None } => {
                write!(f, "maximum of {n} iterations reached")
            }
        }
    }
}

/// The stop reason of one replicate, with the warm-up its CV left out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RepeatStop {
    pub replicate: u32,
    /// Leading iterations left out of the CV (the stopping rule's warm-up).
    pub warmup: usize,
    #[serde(flatten)]
    pub reason: StopReason,
}

/// The alternative taken for one of the experiment's `tools:`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ToolRecord {
    /// The command as written in the experiment (before substitution).
    pub command: String,
    /// The program that ran (resolved path).
    pub program: String,
    /// The version that program reports.
    pub version: String,
    /// When this is not the program the source used: what it is instead.
    pub stand_in: Option<String>,
    /// Index into the tool's `choices` (None: given with `--set`).
    pub choice: Option<usize>,
    pub notes: Vec<String>,
}

/// The bundle format this fslab writes, recorded as `format_version` in
/// `manifest.json`. Version 2 adds the `replicate` column to `runs` (and to the key
/// columns of parsed tables); version 1 has no such column, and its rows read as
/// replicate 1 (every reader treats a missing `replicate` column so). Bundles written
/// before the field existed have the version-1 layout and read as version 1. A bundle
/// of a higher version (from a newer fslab) is refused rather than misread. A field
/// added to the manifest with a default (`run_order`) keeps the version: older bundles
/// read with the default, and older readers ignore the field.
pub const FORMAT_VERSION: u32 = 2;

fn format_version_1() -> u32 {
    1
}

/// A program the run started, as it resolved (see `plan::executes`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ExecutableRecord {
    /// The executable (`/root/.cache/fslab/tools/xfsprogs-6.13.0/sbin/mkfs.xfs`).
    pub path: String,
    /// What it reports as its version.
    pub version: String,
    /// `given with --set mkfs_xfs`, `chosen for mkfs_xfs`, `provisioned by fslab`, `PATH`.
    pub via: String,
    /// Where it came from, when fslab built it (`fslab tools install`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::tools::Provenance>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// The bundle format ([`FORMAT_VERSION`]); absent in bundles written before it was
    /// recorded, which are version 1.
    #[serde(default = "format_version_1")]
    pub format_version: u32,
    pub fslab_version: String,
    pub experiment: ExperimentInfo,
    pub profile: Option<String>,
    pub overrides: serde_json::Map<String, serde_json::Value>,
    pub matrix_axes: Vec<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// How the run ended (`running` while it runs).
    pub status: BundleStatus,
    pub environment: Environment,
    pub points: Vec<PointRecord>,
    /// Tool name → the alternative the run used (see the experiment's `tools:`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolRecord>,
    /// Set when the bundle ran one shard of the plan (`fslab run --shard K/N`); the
    /// other shards' points have status `other-shard`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Set on a bundle that `fslab merge` made from shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeInfo>,
    /// Every program the steps start (as written: `mkfs.xfs`, `/path/to/build`) → the
    /// executable that ran, its version, and its provenance when fslab provisioned it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub executables: BTreeMap<String, ExecutableRecord>,
    /// The order the (point, replicate) pairs ran in, how it was drawn (the seed), and
    /// each pair's status and times. Absent in bundles written before the order was
    /// recorded (they ran point by point) and in merged bundles (each shard's bundle
    /// keeps its own). An optional field: the format version stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_order: Option<RunOrderRecord>,
    /// Set on a bundle `fslab calibrate` made: its design, the effect injected into side
    /// B if any, and the rates so far (the rows are the `calibration` table). An
    /// optional field: the format version stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationRecord>,
    /// Set on a bundle `fslab run --until-decided` made: the sequential design, each
    /// look and why it stopped; its verdicts use the last look's interval level. An
    /// optional field: the format version stays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<super::SequentialRecord>,
}

/// A device's disk model as the manifest records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediumRecord {
    /// `hdd-2008`, `laptop-5400`, `none` or `custom`.
    pub model: String,
    /// The parameters in force (`seek_avg_ms`, `seek_full_ms`, `rpm`, `mb_per_s`,
    /// `cache_mb`); None for `none`.
    pub params: Option<serde_json::Value>,
    /// True for a disk model: the device's timings are the model's, not the post's
    /// disk's. False for `none` (the image as it is).
    pub substitution: bool,
}

/// One timed iteration: a row of `runs.parquet`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRow {
    pub experiment: String,
    pub point_id: String,
    pub point_index: usize,
    /// Matrix values, one column each.
    pub vars: serde_json::Map<String, serde_json::Value>,
    pub iteration: u32,
    /// Which replicate (fresh setup, fresh filesystem) of the point, from 1; rows of
    /// format-1 bundles have none and read as 1.
    #[serde(default = "replicate_1")]
    pub replicate: u32,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub exit_code: i64,
    pub status: RunStatus,
    pub started_at: String,
}

fn replicate_1() -> u32 {
    1
}

impl RunRow {
    fn to_object(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("experiment".into(), self.experiment.clone().into());
        m.insert("point_id".into(), self.point_id.clone().into());
        m.insert("point_index".into(), (self.point_index as u64).into());
        for (k, v) in &self.vars {
            m.insert(k.clone(), v.clone());
        }
        m.insert("iteration".into(), self.iteration.into());
        m.insert("replicate".into(), self.replicate.into());
        m.insert("wall_s".into(), f64_json(self.wall_s));
        m.insert("user_s".into(), f64_json(self.user_s));
        m.insert("sys_s".into(), f64_json(self.sys_s));
        m.insert("exit_code".into(), self.exit_code.into());
        m.insert("status".into(), self.status.as_str().into());
        m.insert("started_at".into(), self.started_at.clone().into());
        m
    }
}

fn f64_json(x: f64) -> serde_json::Value {
    // Keep floats floats (1.0 must not become the integer 1).
    serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// Column names fslab itself puts in `runs.parquet`, in their order; the matrix
/// variables stand between `point_index` and `iteration`. A matrix axis may not use
/// them. The one list of them (a test holds [`runs_frame`] to it).
pub const RUN_COLUMNS: &[&str] = &[
    "experiment",
    "point_id",
    "point_index",
    "iteration",
    "replicate",
    "wall_s",
    "user_s",
    "sys_s",
    "exit_code",
    "status",
    "started_at",
];

/// Build the runs frame from rows.
pub fn runs_frame(rows: &[RunRow]) -> Result<DataFrame, StoreError> {
    let objects: Vec<_> = rows.iter().map(RunRow::to_object).collect();
    let mut df = frames::from_objects(&objects)?;
    // Timings are always Float64 even if every value happened to be whole.
    for c in ["wall_s", "user_s", "sys_s"] {
        if let Ok(col) = df.column(c) {
            if col.dtype() != &DataType::Float64 {
                let cast = col
                    .cast(&DataType::Float64)
                    .map_err(|source| StoreError::Polars {
                        path: PathBuf::from("runs"),
                        source,
                    })?;
                df.with_column(cast).map_err(|source| StoreError::Polars {
                    path: PathBuf::from("runs"),
                    source,
                })?;
            }
        }
    }
    Ok(df)
}

/// Six random hexadecimal digits (`3fa9c0`): the `<short id>` of a bundle's directory
/// name ([`stamped_id`]), and of a replicate's work directory and a Slurm job's tag.
pub fn short_id() -> String {
    (0..6)
        .map(|_| char::from_digit(rand::random_range(0..16u32), 16).unwrap_or('0'))
        .collect()
}

/// `<UTC timestamp>-<short id>` (`20260101T120000Z-3fa9c0`): a bundle's directory name
/// under `<results>/<experiment id>/`, sorting by time.
pub fn stamped_id() -> String {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    format!("{stamp}-{}", short_id())
}

/// `03-fs=ext4,bs=4096` with anything but `[A-Za-z0-9=,._-]` replaced by `_`.
pub fn point_dir_name(index: usize, id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "=,._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{index:02}-{safe}")
}
