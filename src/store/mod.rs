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

//!
//! The rooms, one concern each:
//!
//! | file | owns |
//! |---|---|
//! | `format` | the on-disk format: [`FORMAT_VERSION`] and its history, the manifest's types, a run row and the runs table's columns, the file names inside a bundle |
//! | `files` | file primitives: atomic writes, parquet read and write, the writer's lock |
//! | `journal` | `runs.jsonl`, grown ahead in zero bytes while a run appends, and reading it back |
//! | `writer` | [`BundleWriter`]: creating, reopening (`--resume`) and filling a bundle |
//! | `reader` | [`Bundle`], the one reader of a bundle |
//! | `hash` | [`content_hash`]: one sha256 over a bundle's manifest, experiment, journal and tables |
//! | [`parts`] | capture rows on disk before they reach their table (`.parts/`) |
//! | `status`, `order` | the typed statuses of a bundle, a point and a run; the run order |
//! | `calibration` | what `fslab calibrate` records: its design, the injected effect, the rates |
//! | `sequential` | what `fslab run --until-decided` records: its design, each look, why it stopped |
//! | [`merge`] | merging shard bundles |

use crate::frames;
use polars::prelude::PolarsError;
use std::path::{Path, PathBuf};

mod calibration;
mod files;
mod format;
mod hash;
mod journal;
pub mod merge;
mod order;
pub mod parts;
mod reader;
mod sequential;
mod status;
mod writer;

pub use calibration::{
    CalibrationDesign, CalibrationRecord, Expected, Injection, InjectionSpecError, RateEvent,
    RateRecord,
};
pub use files::{atomic_copy, atomic_write, read_parquet, write_parquet};
pub use format::{
    point_dir_name, runs_frame, short_id, stamped_id, DeviceInfo, Environment, ExecutableRecord,
    ExperimentInfo, GuestInfo, Manifest, MediumRecord, PointRecord, RepeatStop, RunRow, StopReason,
    StoredNotebook, ToolRecord, CAPTURES_DIR, EXPERIMENT_FILE, FORMAT_VERSION, JOURNAL_FILE,
    LOGS_DIR, MANIFEST_FILE, NOTEBOOK_DIR, RUNS_FILE, RUN_COLUMNS,
};
pub use hash::{content_hash, ContentHash, HashedFile, CONTENT_HASH_COMMAND, HASHED_FILES};
pub use order::{OrderEntry, RunOrder, RunOrderRecord, UnknownOrder};
pub use reader::{value_label, with_axes, Bundle};
pub use sequential::{
    ClaimAtLook, ClaimState, LookRecord, SequentialRecord, SequentialStop, Spending,
};
pub use status::{BundleStatus, PointStatus, RunStatus, UnknownStatus};
pub use writer::{BundleWriter, PartsTx, GATHER_BYTES, GATHER_ROWS};

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

#[cfg(test)]
mod tests;
