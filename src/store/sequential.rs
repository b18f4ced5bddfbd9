//! What `fslab run --until-decided` records in `manifest.json` (`sequential`): the
//! group-sequential design its stopping rule follows (overall α, how α is spent, the
//! most replicates a point may get, the budget), every look it took (the replicates a
//! point had then, the α spent by then, the level of the repeated confidence intervals
//! there, each claim's tier), and why it stopped. The analysis computes the looks
//! (`analysis::sequential`); the store only keeps them. A claim verdict computed from a
//! bundle with this record uses the last look's level (`analysis::claims`), so a reader
//! knows the interval is corrected for the repeated looks.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How α is spent over the looks (Lan–DeMets spending functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Spending {
    /// Lan–DeMets O'Brien–Fleming type, each side spending 2 − 2Φ(z_{1−α/4} / √t) of
    /// its α/2.
    #[default]
    OBrienFleming,
    /// Lan–DeMets Pocock type: α(t) = α ln(1 + (e − 1) t).
    Pocock,
}

/// Why `--until-decided` stopped adding replicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SequentialStop {
    /// Every claim that more replicates could decide is decided.
    AllDecided,
    /// No claim can be decided by more replicates (all are decided, not applicable, or
    /// undecided for a reason replicates do not change).
    NothingOpen,
    /// The next block would not fit in `--budget`.
    Budget,
    /// The open claims' points have `--max-replicates` replicates.
    MaxReplicates,
}

impl SequentialStop {
    pub fn label(self) -> &'static str {
        match self {
            SequentialStop::AllDecided => "every claim is decided",
            SequentialStop::NothingOpen => "no undecided claim can be decided by more replicates",
            SequentialStop::Budget => "the next block would not fit in the budget",
            SequentialStop::MaxReplicates => "the most replicates a point may get was reached",
        }
    }
}

impl fmt::Display for SequentialStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Where one claim stood at a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimState {
    /// Its tier decides it (reproduced, with substitutes, or not reproduced).
    Decided,
    /// Undecided, and more replicates of its points could decide it.
    Open,
    /// Undecided for a reason more replicates do not change (not applicable, a failed
    /// point, no interval over replicates).
    Closed,
}

/// One claim verdict at one look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimAtLook {
    /// The verdict's name (`id`, or `id @ kernel=K`).
    pub claim: String,
    /// The tier as written (`reproduced`, `inconclusive`, …).
    pub tier: String,
    pub state: ClaimState,
    /// Replicates a side the verdict rested on (the fewer side), if over replicates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicates: Option<usize>,
    /// The replicates a side the power analysis said would decide it, if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub would_decide_at: Option<usize>,
}

/// One look: the claims checked after a block of replicates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookRecord {
    /// 1 for the look after the plan's own replicates.
    pub look: usize,
    /// Replicates each point of the claims still open had at this look.
    pub replicates: u32,
    /// Information fraction: `replicates` ÷ `max_replicates`.
    pub fraction: f64,
    /// α spent up to and including this look.
    pub spent: f64,
    /// The nominal level of this look: a claim is decided here when its repeated
    /// confidence interval at 1 − `nominal_alpha` lies on one side of `expect`.
    pub nominal_alpha: f64,
    /// 1 − `nominal_alpha`: the level of the intervals at this look.
    pub level: f64,
    pub at: String,
    /// Wall seconds since the run started, at this look.
    pub elapsed_s: f64,
    pub claims: Vec<ClaimAtLook>,
    /// Replicates added to each open point after this look (0 at the last).
    pub added: u32,
    /// The points the next block ran (the open claims' points).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_points: Vec<String>,
}

/// `sequential` in the manifest of a bundle `fslab run --until-decided` made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialRecord {
    /// The overall two-sided α the looks together keep (0.05).
    pub alpha: f64,
    pub spending: Spending,
    /// The power the next block is sized for (`--power`).
    pub power: f64,
    /// The most replicates a point may get (`--max-replicates`): the information
    /// fraction of a look is its replicates over this.
    pub max_replicates: u32,
    /// `--budget`, in seconds, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    pub looks: Vec<LookRecord>,
    /// Why it stopped; None while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<SequentialStop>,
    /// What every verdict of the bundle states about the stopping rule.
    pub stated: String,
}

impl SequentialRecord {
    /// The level of the last look's intervals (what the bundle's verdicts use).
    pub fn level(&self) -> Option<f64> {
        self.looks.last().map(|l| l.level)
    }
}
