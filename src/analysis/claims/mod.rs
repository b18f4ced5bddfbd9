//! Claim verdicts: the statements a source makes, checked against a bundle's frames.
//!
//! Each claim of an experiment (`claims:` in its YAML) has a `check:` in one of five
//! kinds, checked when the experiment is loaded through [`load`] (the CLI's loader). Every kind computes one *measured* number from the bundle and, with the same
//! recipe over `data/published/`, the *published* number, and compares the measured one
//! with `expect: {min, max}`:
//!
//! | kind | measured number |
//! |---|---|
//! | `ratio` | `stat(metric)` over the rows matching `numerator` ÷ the same over `denominator` |
//! | `first_vs_rest` | per point: the first iteration's metric ÷ the mean of the later ones; the point furthest from `expect` counts |
//! | `flat` | `stat(metric)` per value of the `across` column; the largest ÷ the smallest |
//! | `layout` | per point: the largest file's *discontiguity*, the share of its consecutive block pairs that are not physically adjacent (0 = one contiguous run, 1 = every block elsewhere); the point furthest from `expect` counts |
//! | `io_summary` | from the block traces (`trace: io`): `stat(metric)` of `io_summary` (seeks, seeks_per_s, mean_seek_bytes, bytes, mb_per_s, …) over `select`, or over `numerator` ÷ over `denominator`; one sample per traced step and iteration |
//!
//! Selections (`numerator`, `select`, …) map a column to a value, a list of values (any
//! of), or a range `{min, max}`; matrix axes can be used on every table (the runs table
//! has them as columns, the others get them from the manifest). Runs rows count only
//! when their `status` is `ok`.
//!
//! The verdict is `reproduced`, `not reproduced` or `not applicable`, always with a
//! reason. *Not applicable* when: the selected points were unsupported here or failed,
//! a table is missing, the bundle ran at a smaller scale than the claim is about
//! (`at_scale: {var: value}`: every listed var must be at least that), or (layout) the
//! largest file is smaller than `min_blocks`. A tool that ran as a stand-in (the
//! manifest's `tools`, e.g. `fslab stress` for `fsstress`) is named in every reason.
//!
//! ```yaml
//! claims:
//!   - id: first-run-overhead
//!     text: parent=1 costs at most ~10 % on the first run
//!     check:
//!       kind: ratio
//!       metric: wall_s
//!       numerator: { parent: 1, link: 1, iteration: 1 }
//!       denominator: { parent: 0, link: 1, iteration: 1 }
//!       expect: { max: 1.10 }
//!       at_scale: { n: 400000 }
//!       published:
//!         dataset: "000"
//!         numerator: { quantity: real_time, parent: 1, link_op: true, run: 1 }
//!         denominator: { quantity: real_time, parent: 0, link_op: true, run: 1 }
//! ```

mod error;
mod io;
mod measure;
mod render;
mod reproduction;
mod schema;
mod select;
mod verdict;

pub use crate::spec::claim::*;
pub use error::{ClaimsError, MeasureError};
pub use measure::{discontiguity, Run};
pub use render::{render, tier_counts, tier_counts_frame, verdicts_frame, Report};
pub use reproduction::reproduction_md;
pub use verdict::*;

use measure::*;
use render::*;
use select::*;

use super::interval::{bootstrap, bootstrap_groups, fieller_welch, Interval, NoInterval};
use super::tiers::{
    decide, decide_point, scale_differences, substitutions, Tier, DEFAULT_MIN_SAMPLES,
};
use super::{f64_values, str_values, AnalysisError};
use crate::blockmap::summary::file_summary;
use crate::extent::Extent;
use crate::spec::{Claim, Value as SpecValue};
use crate::store::{Bundle, Manifest, PointStatus, RunStatus, StoreError};
use indexmap::IndexMap;
use polars::prelude::*;
use schema::Stated;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

#[cfg(test)]
mod tests;
