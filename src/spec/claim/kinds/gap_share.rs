//! `kind: gap_share`: one part's share of the gap between two sides.

use super::{default_runs, default_wall};
use crate::spec::claim::{CheckSchema, Expect, Selection};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// `kind: gap_share`: how much of the gap between two sides one part carries,
/// `(part on a − part on b) ÷ (whole on a − whole on b)`: e.g. pass 2's share of the
/// ext3–ext4 e2fsck gap. Within each side, `metric` is summed over the rows of one
/// iteration that `part` (or `whole`) selects, averaged over the replicate's
/// iterations, and the side's number is the mean over its replicates.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GapShareCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    /// The side the gap is measured from (e.g. `{ fs: ext3 }`) …
    pub a: Selection,
    /// … and the side it is measured to (e.g. `{ fs: ext4 }`).
    pub b: Selection,
    /// The rows of the part (e.g. `{ row_kind: pass, pass: "2" }`).
    pub part: Selection,
    /// The rows of the whole (default: every row of the side).
    #[serde(default)]
    pub whole: Selection,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_share")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    /// The fewest replicates a side for a decisive tier (default 3).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
}

fn default_share() -> String {
    "share of the gap".into()
}

impl CheckSchema for GapShareCheck {
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![
            ("a", &self.a),
            ("b", &self.b),
            ("part", &self.part),
            ("whole", &self.whole),
        ]
    }
}
