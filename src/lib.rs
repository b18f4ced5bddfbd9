//! fslab: reproducible filesystem experiments.
//!
//! Data flows one way (see `docs/architecture.md`, whose module graph
//! `tests/it/architecture.rs` checks against the code, with no cycles):
//! `spec` (YAML) → `plan` (points, argv) → `run` (`fslab::run(&plan, &opts)`) with
//! `devices` → `store` (result bundle on disk) → `parse` / `blockmap` / `frames` →
//! `analysis` → `plot` → `display` (evcxr display in notebooks, imported as
//! `fslab::notebook`) and the `fslab` CLI. `host` (probing the machine) and `extent`
//! (the extent row) are leaves that many of them use.
//! What touches the system: `devices`, `run`, `host`, `doctor`'s loop-device probe,
//! `blockmap` (FIEMAP ioctl, debugfs) and `stress`.

pub mod analysis;
pub mod blockmap;
pub mod cluster;
pub mod devices;
pub mod display;
pub mod doctor;
pub mod error;
pub mod extent;
pub mod frames;
pub mod host;
pub mod import;
pub mod ipynb;
pub mod kernels;
pub mod labels;
pub mod parse;
pub mod plan;
pub mod plot;
pub mod published;
pub mod report;
pub mod run;
pub mod shard;
pub mod spec;
pub mod store;
pub mod stress;
pub mod tools;

pub use error::{Error, Result};
pub use plan::{Plan, Point};
pub use run::run;
pub use spec::Experiment;
pub use store::Bundle;

/// What a notebook imports (`use fslab::notebook::*;`, as every notebook under
/// `notebooks/` does): the evcxr display, [`display`], under the name it had before
/// issue 31 named the module for its concern.
pub use display as notebook;

/// Re-exported so that a notebook needs a single `:dep fslab`.
pub use plotters;
pub use polars;
