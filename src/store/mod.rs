//! Result bundles on disk: layout, atomic writes, reading back.
//!
//! ```text
//! results/<experiment-id>/<UTC timestamp>-<short id>/
//!   manifest.json        what ran, where, with which tools; per-point status
//!   experiment.yaml      the experiment file exactly as run
//!   runs.parquet         one row per timed iteration (also runs.jsonl, the append-only
//!                        journal: JSON lines, grown ahead in zero bytes while a run writes)
//!   <table>.parquet      parsed captures: geometry, fsck, extents (+ files: one record per
//!                        mapped file, joined on the capture keys and `file`), fsmark, timing …
//!   .parts/<seq>/<table>/<batch>.parquet
//!                        capture rows not yet merged into <table>.parquet (see [`parts`])
//!   captures/<point>/…   raw text of every capture
//!   logs/<point>/…       stdout and stderr of every command (`<step label>.stdout`,
//!                        `.stderr`), each file only when the command wrote to it;
//!                        `running.stdout`/`.stderr`: the command a killed run was running
//!   notebook/NAME.ipynb  notebooks executed on the bundle, and their HTML (NAME.html)
//! ```
//! Every file is replaced atomically (temporary file, fsync, rename), and each timed
//! iteration is on disk before the next one starts.

use crate::frames;
use polars::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

pub mod merge;
mod order;
pub mod parts;

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
mod status;
pub use order::{OrderEntry, RunOrder, RunOrderRecord, UnknownOrder};
pub use status::{BundleStatus, PointStatus, RunStatus, UnknownStatus};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a result bundle ({reason})")]
    NotABundle { path: PathBuf, reason: String },
    #[error("{path}: {source}")]
    Polars {
        path: PathBuf,
        #[source]
        source: PolarsError,
    },
    #[error(transparent)]
    Frame(#[from] frames::FrameError),
    #[error("{path}: another fslab process is writing this bundle; wait for it to finish (or stop it) and try again")]
    Locked { path: PathBuf },
    #[error("{path}:{line}: not a run row ({message}); the journal is damaged, and fslab will not guess which rows it held")]
    Journal {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, fsync,
/// rename over the target, fsync the directory.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        // No half-written file stays behind (a full filesystem, say).
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::File::open(dir)?.sync_all()
}

/// Write a DataFrame as parquet, atomically.
pub fn write_parquet(path: &Path, df: &DataFrame) -> Result<(), StoreError> {
    let mut buf = Vec::new();
    let mut df = df.clone();
    ParquetWriter::new(&mut buf)
        .finish(&mut df)
        .map_err(|source| StoreError::Polars {
            path: path.to_path_buf(),
            source,
        })?;
    atomic_write(path, &buf).map_err(io(path))
}

/// Read a parquet file into a DataFrame.
pub fn read_parquet(path: &Path) -> Result<DataFrame, StoreError> {
    let f = std::fs::File::open(path).map_err(io(path))?;
    ParquetReader::new(f)
        .finish()
        .map_err(|source| StoreError::Polars {
            path: path.to_path_buf(),
            source,
        })
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
    pub shard: Option<merge::ShardInfo>,
    /// Set on a bundle that `fslab merge` made from shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<merge::MergeInfo>,
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

/// Column names fslab itself puts in `runs.parquet` (a matrix axis may not use them).
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

/// Writes a bundle as a run proceeds. It holds an exclusive lock on the bundle's
/// directory, so that two runs (or two `--resume`s) never write one bundle.
#[derive(Debug)]
pub struct BundleWriter {
    dir: PathBuf,
    manifest: Manifest,
    runs: Vec<RunRow>,
    /// `runs.parquet` is behind the journal.
    runs_dirty: bool,
    /// Per table, its parts on disk not yet merged into `<table>.parquet` (only their
    /// names are kept in memory).
    tables: BTreeMap<String, Vec<parts::Part>>,
    /// The `<seq>` of the next capture's parts.
    next_seq: u64,
    /// Small captures gathered in memory, in order, until they make one part (see
    /// [`append_table`](Self::append_table)).
    gathered: Vec<(String, DataFrame)>,
    gathered_rows: usize,
    gathered_bytes: usize,
    /// The journal, opened by the first row.
    journal: Option<Journal>,
    /// False only in tests that simulate a killed run.
    flush_on_drop: bool,
    _lock: nix::fcntl::Flock<std::fs::File>,
}

/// Rows of one capture, staged on disk by [`BundleWriter::stage_part`] and made part of
/// the bundle, all at once, by [`BundleWriter::commit_parts`]. Dropped uncommitted (a
/// parse error), its rows are deleted.
#[derive(Debug)]
pub struct PartsTx {
    seq: u64,
    dir: PathBuf,
    /// (table, batch file name) in the order staged.
    staged: Vec<(String, String)>,
    done: bool,
}

impl Drop for PartsTx {
    fn drop(&mut self) {
        if !self.done && !self.staged.is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Drop for BundleWriter {
    /// Whatever was not flushed yet is written now (an error, a panic): best effort,
    /// the journal and the captured text hold it anyway.
    fn drop(&mut self) {
        if self.flush_on_drop {
            let _ = self.flush();
        }
    }
}

/// Rows of small captures the writer gathers in memory before writing them as a part.
pub const GATHER_ROWS: usize = 65_536;
/// Bytes (polars' estimate) of small captures gathered in memory before they are written.
pub const GATHER_BYTES: usize = 32 << 20;

/// Lock a bundle directory for writing, or say who holds it.
fn lock_bundle(dir: &Path) -> Result<nix::fcntl::Flock<std::fs::File>, StoreError> {
    let f = std::fs::File::open(dir).map_err(io(dir))?;
    nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock).map_err(
        |(_, e)| match e {
            nix::errno::Errno::EWOULDBLOCK => StoreError::Locked {
                path: dir.to_path_buf(),
            },
            e => io(dir)(e.into()),
        },
    )
}

/// The journal (`runs.jsonl`), open while the writer appends to it.
///
/// Rows are written at the end of the last whole line into a file that is grown ahead of
/// them, in chunks of [`JOURNAL_CHUNK`] zero bytes: a row's `fdatasync` then changes no
/// metadata (no size change, so no filesystem journal commit; 0.4 ms of each iteration
/// on ext4 here when the file grew with every row). At the end of each point
/// ([`BundleWriter::flush`]) the file is cut back to its rows, so a finished bundle's
/// journal is plain JSON lines; a killed run's may end with zero bytes, which readers
/// stop at ([`parse_journal`]). A row never tears: a tail left by a crash or a failed
/// write (no newline yet, so never a committed row) is zeroed when the journal is
/// opened, and a write or sync that fails is zeroed again before the error returns.
#[derive(Debug)]
struct Journal {
    file: std::fs::File,
    path: PathBuf,
    /// Where the next row goes: just after the last whole line.
    end: u64,
    /// The file's size: zero bytes from `end` to here.
    allocated: u64,
    /// How much it grows at a time.
    chunk: u64,
}

/// How much the journal grows at a time (about 1,000 rows).
const JOURNAL_CHUNK: u64 = 256 << 10;

/// [`JOURNAL_CHUNK`], or `FSLAB_JOURNAL_CHUNK` bytes (internal: a test of a full disk
/// sets 1, so that every row needs room, as when the journal grew row by row).
fn journal_chunk() -> u64 {
    std::env::var("FSLAB_JOURNAL_CHUNK")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(JOURNAL_CHUNK)
}

impl Journal {
    fn open(path: &Path) -> Result<Journal, StoreError> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        // The content ends at the last byte that is not zero; the rows at the last
        // newline before it.
        let mut buf = vec![0u8; 64 << 10];
        let mut content_end = 0u64;
        let mut keep = 0u64;
        let mut at = len;
        while at > 0 {
            let start = at.saturating_sub(buf.len() as u64);
            let n = (at - start) as usize;
            file.read_exact_at(&mut buf[..n], start).map_err(io(path))?;
            if content_end == 0 {
                if let Some(i) = buf[..n].iter().rposition(|&b| b != 0) {
                    content_end = start + i as u64 + 1;
                }
            }
            if content_end > 0 {
                let upto = ((content_end - start) as usize).min(n);
                if let Some(i) = buf[..upto].iter().rposition(|&b| b == b'\n') {
                    keep = start + i as u64 + 1;
                    break;
                }
            }
            at = start;
        }
        let j = Journal {
            file,
            path: path.to_path_buf(),
            end: keep,
            allocated: len,
            chunk: journal_chunk(),
        };
        if content_end > keep {
            // A torn last row: never committed, and the next row would glue onto it.
            j.zero(keep, content_end - keep)?;
            j.file.sync_data().map_err(io(path))?;
        }
        Ok(j)
    }

    fn zero(&self, from: u64, len: u64) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let zeros = vec![0u8; (64 << 10).min(len as usize)];
        let mut at = from;
        while at < from + len {
            let n = zeros.len().min((from + len - at) as usize);
            self.file
                .write_all_at(&zeros[..n], at)
                .map_err(io(&self.path))?;
            at += n as u64;
        }
        Ok(())
    }

    /// Append one line and fdatasync it.
    fn append(&mut self, line: &[u8]) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let need = self.end + line.len() as u64;
        if need > self.allocated {
            // Grow by whole chunks of zeros (the row's sync below makes them durable).
            let to = need.div_ceil(self.chunk) * self.chunk;
            if self.zero(self.allocated, to - self.allocated).is_err() {
                // A nearly full disk: room for this row only.
                self.zero(self.allocated, need - self.allocated)?;
                self.allocated = need;
            } else {
                self.allocated = to;
            }
        }
        let written = self
            .file
            .write_all_at(line, self.end)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            // Nothing of this line may stay: the next append would glue onto it.
            let _ = self.zero(self.end, line.len() as u64);
            let _ = self.file.sync_data();
            return Err(io(&self.path)(e));
        }
        self.end = need;
        Ok(())
    }

    /// Cut the file back to its rows (a finished journal holds no zero bytes).
    fn trim(&mut self) -> Result<(), StoreError> {
        if self.allocated != self.end {
            self.file.set_len(self.end).map_err(io(&self.path))?;
            self.file.sync_data().map_err(io(&self.path))?;
            self.allocated = self.end;
        }
        Ok(())
    }
}

impl BundleWriter {
    /// Create `results_root/<experiment-id>/<UTC timestamp>-<short id>/`.
    /// A new bundle under `results_root/<experiment id>/`, in the current format
    /// ([`FORMAT_VERSION`], whatever `manifest` says).
    pub fn create(results_root: &Path, mut manifest: Manifest) -> Result<BundleWriter, StoreError> {
        manifest.format_version = FORMAT_VERSION;
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let short: String = (0..6)
            .map(|_| char::from_digit(rand::random_range(0..16u32), 16).unwrap_or('0'))
            .collect();
        let dir = results_root
            .join(&manifest.experiment.id)
            .join(format!("{stamp}-{short}"));
        std::fs::create_dir_all(dir.join("logs")).map_err(io(&dir))?;
        let yaml_path = dir.join("experiment.yaml");
        atomic_write(&yaml_path, manifest.experiment.yaml.as_bytes()).map_err(io(&yaml_path))?;
        let w = BundleWriter {
            _lock: lock_bundle(&dir)?,
            dir,
            manifest,
            runs: Vec::new(),
            runs_dirty: false,
            tables: BTreeMap::new(),
            next_seq: 1,
            gathered: Vec::new(),
            gathered_rows: 0,
            gathered_bytes: 0,
            journal: None,
            flush_on_drop: true,
        };
        w.save_manifest()?;
        Ok(w)
    }

    /// Reopen a partial bundle to finish it (`--resume`). Parts a killed run left
    /// unmerged are merged into their tables now (a capture it had not committed is
    /// deleted: its point did not finish).
    pub fn reopen(dir: &Path) -> Result<BundleWriter, StoreError> {
        let lock = lock_bundle(dir)?;
        let b = Bundle::open(dir)?;
        let runs = read_journal(&dir.join("runs.jsonl"))?;
        let mut last = parts::remove_staging(dir)?.unwrap_or(0);
        if let Some((seq, _)) = parts::captures(dir)?.last() {
            last = last.max(*seq);
        }
        let mut tables = BTreeMap::new();
        for name in b.tables()? {
            if name == "runs" {
                continue;
            }
            let through = parts::through(&dir.join(format!("{name}.parquet")))?;
            last = last.max(through.unwrap_or(0));
            parts::remove_merged(dir, &name, through)?;
            tables.insert(name.clone(), parts::pending(dir, &name, through)?);
        }
        let mut w = BundleWriter {
            dir: dir.to_path_buf(),
            manifest: b.manifest,
            runs,
            // The journal may be ahead of runs.parquet (a run killed mid-point).
            runs_dirty: true,
            tables,
            next_seq: last + 1,
            gathered: Vec::new(),
            gathered_rows: 0,
            gathered_bytes: 0,
            journal: None,
            flush_on_drop: true,
            _lock: lock,
        };
        w.flush()?;
        Ok(w)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Drop the writer as a killed run would leave the bundle (nothing flushed).
    #[cfg(test)]
    fn abandon(mut self) {
        self.flush_on_drop = false;
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
    pub fn manifest_mut(&mut self) -> &mut Manifest {
        &mut self.manifest
    }
    pub fn runs(&self) -> &[RunRow] {
        &self.runs
    }

    pub fn save_manifest(&self) -> Result<(), StoreError> {
        let path = self.dir.join("manifest.json");
        let bytes = serde_json::to_vec_pretty(&self.manifest).unwrap_or_default();
        atomic_write(&path, &bytes).map_err(io(&path))
    }

    /// Record a timed iteration: appended to the journal and fdatasynced before this
    /// returns, so the row survives anything that happens next. `runs.parquet` follows
    /// at the next [`flush`](Self::flush) (the end of the point): rewriting it after
    /// every iteration made the harness cost grow with the number of iterations.
    /// Readers never see less than the journal: [`Bundle::runs`] reads the journal
    /// when it is ahead of `runs.parquet`.
    pub fn append_run(&mut self, row: RunRow) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(&row).unwrap_or_default();
        line.push(b'\n');
        let journal = match &mut self.journal {
            Some(j) => j,
            None => self
                .journal
                .insert(Journal::open(&self.dir.join("runs.jsonl"))?),
        };
        journal.append(&line)?;
        self.runs.push(row);
        self.runs_dirty = true;
        Ok(())
    }

    /// Add rows to a table, merged into `<table>.parquet` at the next
    /// [`flush`](Self::flush). Small captures (a parsed `time`, an iteration's
    /// counters) are gathered in memory and written as one part (see [`parts`]) once
    /// they hold [`GATHER_ROWS`] rows or [`GATHER_BYTES`] bytes, or at the next flush
    /// or streamed capture: writing a part per capture cost more than a
    /// micro-benchmark's iteration. Memory stays bounded either way. The raw text the
    /// rows were parsed from is already on disk ([`save_capture`](Self::save_capture)).
    pub fn append_table(&mut self, table: &str, df: DataFrame) -> Result<(), StoreError> {
        self.gathered_rows += df.height();
        self.gathered_bytes += df.estimated_size();
        self.gathered.push((table.to_string(), df));
        if self.gathered_rows >= GATHER_ROWS || self.gathered_bytes >= GATHER_BYTES {
            self.write_gathered()?;
        }
        Ok(())
    }

    /// The gathered captures as one part per table, in one capture `<seq>` (each
    /// table's rows in the order they came).
    fn write_gathered(&mut self) -> Result<(), StoreError> {
        if self.gathered.is_empty() {
            return Ok(());
        }
        let mut by_table: BTreeMap<&str, Vec<DataFrame>> = BTreeMap::new();
        for (t, df) in &self.gathered {
            by_table.entry(t.as_str()).or_default().push(df.clone());
        }
        let mut frames = Vec::new();
        for (t, dfs) in by_table {
            let df = if dfs.len() == 1 {
                dfs.into_iter().next().unwrap_or_default()
            } else {
                frames::concat_diagonal(&dfs)?
            };
            frames.push((t.to_string(), df));
        }
        let mut tx = self.next_parts();
        for (t, df) in frames {
            self.stage_part(&mut tx, &t, df)?;
        }
        self.commit_parts(tx)?;
        self.gathered.clear();
        self.gathered_rows = 0;
        self.gathered_bytes = 0;
        Ok(())
    }

    /// Start a capture whose rows come in batches (a streamed block map). What was
    /// gathered before it is written first, so that rows keep the order of captures.
    pub fn begin_parts(&mut self) -> Result<PartsTx, StoreError> {
        self.write_gathered()?;
        Ok(self.next_parts())
    }

    fn next_parts(&mut self) -> PartsTx {
        let seq = self.next_seq;
        self.next_seq += 1;
        PartsTx {
            seq,
            dir: parts::staging(&self.dir, seq),
            staged: Vec::new(),
            done: false,
        }
    }

    /// Write a batch of rows of `table` to disk (uncommitted: readers do not see it).
    pub fn stage_part(
        &self,
        tx: &mut PartsTx,
        table: &str,
        df: DataFrame,
    ) -> Result<(), StoreError> {
        let d = tx.dir.join(table);
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        let name = format!("{:06}.parquet", tx.staged.len());
        write_parquet(&d.join(&name), &df)?;
        tx.staged.push((table.to_string(), name));
        Ok(())
    }

    /// Make a capture's staged rows part of the bundle, all at once (one rename).
    pub fn commit_parts(&mut self, mut tx: PartsTx) -> Result<(), StoreError> {
        tx.done = true;
        if tx.staged.is_empty() {
            return Ok(());
        }
        let target = parts::committed(&self.dir, tx.seq);
        if let Err(e) = std::fs::rename(&tx.dir, &target) {
            tx.done = false;
            return Err(io(&target)(e));
        }
        let pdir = self.dir.join(parts::DIR);
        std::fs::File::open(&pdir)
            .and_then(|d| d.sync_all())
            .map_err(io(&pdir))?;
        for (table, name) in std::mem::take(&mut tx.staged) {
            let path = target.join(&table).join(name);
            self.tables
                .entry(table)
                .or_default()
                .push(parts::Part { seq: tx.seq, path });
        }
        Ok(())
    }

    /// Write `runs.parquet` and merge every table's pending parts into its parquet
    /// file (streamed, atomically). The runner calls it at the end of each point and
    /// at exit.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        if let Some(j) = &mut self.journal {
            j.trim()?;
        }
        self.write_gathered()?;
        if self.runs_dirty {
            runs_frame(&self.runs)
                .and_then(|df| write_parquet(&self.dir.join("runs.parquet"), &df))?;
            self.runs_dirty = false;
        }
        let names: Vec<String> = self
            .tables
            .iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            let pending = self.tables.get(&name).cloned().unwrap_or_default();
            parts::merge(&self.dir, &name, &pending, None)?;
            self.tables.insert(name, Vec::new());
        }
        Ok(())
    }

    /// For `--resume`: keep only rows of points that finished (`ok` or `skipped`), so
    /// that points run again do not count their earlier iterations twice.
    pub fn retain_complete_points(&mut self) -> Result<(), StoreError> {
        let done: Vec<usize> = self
            .manifest
            .points
            .iter()
            .filter(|p| matches!(p.status, PointStatus::Ok | PointStatus::Skipped))
            .map(|p| p.index)
            .collect();
        self.retain_rows(&|point, _| done.contains(&point))?;
        for p in &mut self.manifest.points {
            if !done.contains(&p.index) && p.status != PointStatus::OtherShard {
                p.status = PointStatus::Pending;
                p.reason = None;
                p.iterations = 0;
            }
        }
        self.save_manifest()
    }

    /// For `--resume` of a run order: keep only the rows of the (point index,
    /// replicate) pairs in `done`, in `runs` and every table (a table without a
    /// `replicate` column, from a format-1 bundle, counts as replicate 1). The manifest
    /// is the caller's to update.
    pub fn retain_replicates(&mut self, done: &BTreeSet<(usize, u32)>) -> Result<(), StoreError> {
        self.retain_rows(&|point, replicate| done.contains(&(point, replicate)))
    }

    fn retain_rows(&mut self, keep_row: &dyn Fn(usize, u32) -> bool) -> Result<(), StoreError> {
        self.write_gathered()?;
        self.runs.retain(|r| keep_row(r.point_index, r.replicate));
        let journal = self.dir.join("runs.jsonl");
        let mut text = Vec::new();
        for r in &self.runs {
            text.extend(serde_json::to_vec(r).unwrap_or_default());
            text.push(b'\n');
        }
        // A new file: the next row opens it again.
        self.journal = None;
        atomic_write(&journal, &text).map_err(io(&journal))?;
        write_parquet(&self.dir.join("runs.parquet"), &runs_frame(&self.runs)?)?;
        self.runs_dirty = false;
        let mut names: Vec<String> = self.tables.keys().cloned().collect();
        for name in Bundle::parquet_tables(&self.dir)? {
            if name != "runs" && !names.contains(&name) {
                names.push(name);
            }
        }
        let keep = |df: DataFrame| -> Result<DataFrame, StoreError> {
            let Ok(idx) = df.column("point_index").and_then(|c| c.i64().cloned()) else {
                return Ok(df);
            };
            let reps = df
                .column("replicate")
                .ok()
                .and_then(|c| c.cast(&DataType::Int64).ok())
                .and_then(|c| c.i64().ok().cloned());
            let mask: BooleanChunked = idx
                .iter()
                .enumerate()
                .map(|(n, v)| {
                    let replicate = reps
                        .as_ref()
                        .and_then(|r| r.get(n))
                        .and_then(|r| u32::try_from(r).ok())
                        .unwrap_or(1);
                    Some(v.is_some_and(|i| keep_row(i as usize, replicate)))
                })
                .collect();
            df.filter(&mask).map_err(|source| StoreError::Polars {
                path: self.dir.clone(),
                source,
            })
        };
        for name in names {
            let pending = self.tables.get(&name).cloned().unwrap_or_default();
            parts::merge(&self.dir, &name, &pending, Some(&keep))?;
            self.tables.insert(name, Vec::new());
        }
        Ok(())
    }

    /// Move a point's logs and captures aside (`<dir>.interrupted-N`) before it runs
    /// again, so that the new run's files are not appended to the old ones.
    pub fn set_aside_logs(&self, point_index: usize, point_id: &str) -> Result<(), StoreError> {
        self.set_aside(point_index, point_id, None)
    }

    /// The same for some replicates of a point, whose files start with one of
    /// `prefixes` (their labels' `r02-`): only their files move, into one
    /// `<dir>.interrupted-N/`; the other replicates' files stay.
    pub fn set_aside_replicate_logs(
        &self,
        point_index: usize,
        point_id: &str,
        prefixes: &[String],
    ) -> Result<(), StoreError> {
        self.set_aside(point_index, point_id, Some(prefixes))
    }

    fn set_aside(
        &self,
        point_index: usize,
        point_id: &str,
        prefixes: Option<&[String]>,
    ) -> Result<(), StoreError> {
        let name = point_dir_name(point_index, point_id);
        for sub in ["logs", "captures"] {
            let d = self.dir.join(sub).join(&name);
            if !d.exists() {
                continue;
            }
            let files: Vec<PathBuf> = match prefixes {
                None => Vec::new(),
                Some(ps) => std::fs::read_dir(&d)
                    .map_err(io(&d))?
                    .flatten()
                    .filter(|e| {
                        let f = e.file_name();
                        let f = f.to_string_lossy();
                        ps.iter().any(|p| f.starts_with(p.as_str()))
                    })
                    .map(|e| e.path())
                    .collect(),
            };
            if prefixes.is_some() && files.is_empty() {
                continue;
            }
            let mut n = 1;
            let target = loop {
                let t = self.dir.join(sub).join(format!("{name}.interrupted-{n}"));
                if !t.exists() {
                    break t;
                }
                n += 1;
            };
            if prefixes.is_none() {
                std::fs::rename(&d, &target).map_err(io(&d))?;
                continue;
            }
            std::fs::create_dir_all(&target).map_err(io(&target))?;
            for f in files {
                let to = target.join(f.file_name().unwrap_or_default());
                std::fs::rename(&f, &to).map_err(io(&f))?;
            }
        }
        Ok(())
    }

    /// A directory for this point's logs, created on demand.
    pub fn log_dir(&self, point_index: usize, point_id: &str) -> Result<PathBuf, StoreError> {
        let d = self
            .dir
            .join("logs")
            .join(point_dir_name(point_index, point_id));
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        Ok(d)
    }

    /// Keep a capture's log file as it is (copied, never read into memory): the same
    /// place as [`save_capture`](Self::save_capture); a missing file is kept empty.
    pub fn save_capture_file(
        &self,
        point_index: usize,
        point_id: &str,
        name: &str,
        source: &Path,
    ) -> Result<PathBuf, StoreError> {
        let d = self.capture_dir(point_index, point_id)?;
        let p = d.join(format!("{name}.txt"));
        let tmp = d.join(format!(".{name}.txt.tmp-{}", std::process::id()));
        let copied = match std::fs::copy(source, &tmp) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::File::create(&tmp).map(|_| 0)
            }
            other => other,
        }
        .and_then(|_| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &p));
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(&p)(e));
        }
        std::fs::File::open(&d)
            .and_then(|f| f.sync_all())
            .map_err(io(&d))?;
        Ok(p)
    }

    /// Keep the raw text of a capture.
    pub fn save_capture(
        &self,
        point_index: usize,
        point_id: &str,
        name: &str,
        text: &str,
    ) -> Result<PathBuf, StoreError> {
        let d = self.capture_dir(point_index, point_id)?;
        let p = d.join(format!("{name}.txt"));
        atomic_write(&p, text.as_bytes()).map_err(io(&p))?;
        Ok(p)
    }

    /// `captures/<point>/`, created on demand.
    fn capture_dir(&self, point_index: usize, point_id: &str) -> Result<PathBuf, StoreError> {
        let d = self
            .dir
            .join("captures")
            .join(point_dir_name(point_index, point_id));
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        Ok(d)
    }
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

fn read_journal(path: &Path) -> Result<Vec<RunRow>, StoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(path)(e)),
    };
    parse_journal(&text).map_err(|(line, e)| StoreError::Journal {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    })
}

/// The rows of a journal. The rows end at the first zero byte (the room a running or
/// killed writer grew the file by; a row, being JSON, never holds one). A last line
/// without its newline is a write that never finished (a crash mid-write; its row was
/// never reported written) and is dropped; any other line that is not a row is an
/// error, with its 1-based number.
fn parse_journal(text: &str) -> Result<Vec<RunRow>, (usize, serde_json::Error)> {
    let text = text.split('\0').next().unwrap_or_default();
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut out = Vec::new();
    for (n, l) in complete.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str::<RunRow>(l).map_err(|e| (n + 1, e))?);
    }
    Ok(out)
}

/// A matrix value as text, as point ids write it (`ext4`, `16`).
pub fn value_label(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `df` with the manifest's matrix values added as text columns by `point_index`.
pub fn with_axes(mut df: DataFrame, manifest: &Manifest) -> PolarsResult<DataFrame> {
    let Ok(idx) = df
        .column("point_index")
        .and_then(|c| c.cast(&DataType::Int64))
    else {
        return Ok(df);
    };
    let idx = idx.i64()?.clone();
    for axis in &manifest.matrix_axes {
        if df.column(axis).is_ok() {
            continue;
        }
        let values: Vec<Option<String>> = idx
            .iter()
            .map(|i| {
                let i = usize::try_from(i?).ok()?;
                manifest
                    .points
                    .iter()
                    .find(|p| p.index == i)
                    .and_then(|p| p.vars.get(axis))
                    .map(value_label)
            })
            .collect();
        df.with_column(Column::new(axis.as_str().into(), values))?;
    }
    Ok(df)
}

/// A result bundle on disk, for reading.
#[derive(Debug, Clone)]
pub struct Bundle {
    dir: PathBuf,
    pub manifest: Manifest,
}

impl Bundle {
    pub fn open(dir: impl AsRef<Path>) -> Result<Bundle, StoreError> {
        let dir = dir.as_ref();
        let mpath = dir.join("manifest.json");
        let bytes = std::fs::read(&mpath).map_err(|e| StoreError::NotABundle {
            path: dir.to_path_buf(),
            reason: format!("cannot read manifest.json: {e}"),
        })?;
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| StoreError::NotABundle {
                path: dir.to_path_buf(),
                reason: format!("manifest.json: {e}"),
            })?;
        if manifest.format_version > FORMAT_VERSION {
            return Err(StoreError::NotABundle {
                path: dir.to_path_buf(),
                reason: format!(
                    "manifest.json has format_version {}; this fslab reads bundles up to version {FORMAT_VERSION}: use a newer fslab",
                    manifest.format_version
                ),
            });
        }
        Ok(Bundle {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// One row per timed iteration (empty when none finished).
    /// One row per timed iteration. `runs.parquet` is written at the end of each
    /// point; while a point runs (or after a crash mid-point) the journal is ahead of
    /// it, and then the rows come from the journal.
    pub fn runs(&self) -> Result<DataFrame, StoreError> {
        let p = self.dir.join("runs.parquet");
        let parquet = if p.exists() {
            Some(read_parquet(&p)?)
        } else {
            None
        };
        let journal = read_journal(&self.dir.join("runs.jsonl"))?;
        match parquet {
            Some(df) if df.height() >= journal.len() => Ok(df),
            _ => runs_frame(&journal),
        }
    }

    /// A parsed-capture table by name (`geometry`, `fsck`, `extents`, …): its parquet
    /// file and, after it, any capture rows not merged into it yet (a run in progress,
    /// or one that was killed: see [`parts`]), concatenated as the writer will.
    pub fn table(&self, name: &str) -> Result<DataFrame, StoreError> {
        let path = self.dir.join(format!("{name}.parquet"));
        let through = parts::through(&path)?;
        let pending = parts::pending(&self.dir, name, through)?;
        if pending.is_empty() {
            return read_parquet(&path);
        }
        let mut all = Vec::with_capacity(pending.len() + 1);
        if path.exists() {
            all.push(read_parquet(&path)?);
        }
        for p in &pending {
            all.push(read_parquet(&p.path)?);
        }
        Ok(frames::concat_diagonal(&all)?)
    }

    /// Stems of the `*.parquet` files in a bundle directory.
    fn parquet_tables(dir: &Path) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).map_err(io(dir))?.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(stem) = name.strip_suffix(".parquet") {
                if !stem.starts_with('.') {
                    out.push(stem.to_string());
                }
            }
        }
        Ok(out)
    }

    /// Names of the tables in the bundle (`runs` included; a table whose rows are all
    /// still in parts too).
    pub fn tables(&self) -> Result<Vec<String>, StoreError> {
        let mut out = Self::parquet_tables(&self.dir)?;
        for name in parts::tables(&self.dir)? {
            if out.contains(&name) {
                continue;
            }
            if !parts::pending(&self.dir, &name, None)?.is_empty() {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The notebooks executed on this bundle and stored in it, by name.
    pub fn notebooks(&self) -> Result<Vec<StoredNotebook>, StoreError> {
        let dir = self.dir.join(NOTEBOOK_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&dir)(e)),
        };
        let mut out: Vec<StoredNotebook> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ipynb"))
            .filter_map(|ipynb| {
                let name = ipynb.file_stem()?.to_string_lossy().to_string();
                if name.starts_with('.') {
                    return None;
                }
                let html = ipynb.with_extension("html");
                Some(StoredNotebook {
                    name,
                    html: html.is_file().then_some(html),
                    ipynb,
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The newest bundle of an experiment under `results_root`.
    pub fn latest(results_root: &Path, experiment_id: &str) -> Option<Bundle> {
        let dir = results_root.join(experiment_id);
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("manifest.json").exists())
            .collect();
        entries.sort();
        entries.last().and_then(|p| Bundle::open(p).ok())
    }

    /// A table by name when the bundle has it (`claims`, `extents`, …), else None.
    pub fn table_if_present(&self, name: &str) -> Result<Option<DataFrame>, StoreError> {
        let path = self.dir.join(format!("{name}.parquet"));
        if !path.exists() && parts::pending(&self.dir, name, None)?.is_empty() {
            return Ok(None);
        }
        self.table(name).map(Some)
    }

    /// A table with each row's matrix values added as columns (text, as in point ids),
    /// taken from the manifest by `point_index`, so that a parsed table (fio, counters,
    /// extents …) can be grouped by the experiment's axes. Columns the table already has
    /// are left as they are. None when the bundle has no such table.
    pub fn table_with_axes(&self, name: &str) -> Result<Option<DataFrame>, StoreError> {
        let Some(df) = self.table_if_present(name)? else {
            return Ok(None);
        };
        let path = self.dir.join(format!("{name}.parquet"));
        with_axes(df, &self.manifest)
            .map(Some)
            .map_err(|source| StoreError::Polars { path, source })
    }

    /// A short name for the bundle: its directory name, with the experiment id when
    /// the directory name does not already contain it.
    pub fn label(&self) -> String {
        let dir = self
            .dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.dir.display().to_string());
        let id = &self.manifest.experiment.id;
        if dir.contains(id.as_str()) {
            dir
        } else {
            format!("{dir} ({id})")
        }
    }

    /// The directory, experiment and start time, for headings.
    pub fn describe(&self) -> String {
        format!(
            "{}, experiment {}, started {}",
            self.dir.display(),
            self.manifest.experiment.id,
            self.manifest.started_at
        )
    }
}

#[cfg(test)]
mod tests;
