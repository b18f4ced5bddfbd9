//! Per-point statistics of a runs frame.
//!
//! [`point_stats`] gives one row per point: n, mean, median, sample standard deviation,
//! min, max, coefficient of variation, Student-t confidence interval of the mean,
//! harmonic mean (for rates) and geometric mean (for ratios), over the *steady state*.
//!
//! **The warm-up rule** (one rule for statistics, comparisons, adaptive repetitions,
//! claims and reports; [`is_warmup`]): within each replicate, the iterations numbered
//! 1..=k are warm-up ([`Warmup`], default k = 1), whatever their status; the steady
//! state is every later iteration whose status is `ok` and whose value is finite. A
//! point whose iterations are all warm-up has **no steady state**: its cold value is
//! never promoted to a steady state (and then compared with itself).
//!
//! **The unit** ([`Unit`]): with one replicate per point the unit is the iteration; with
//! several (`replicates: N`, a fresh setup and filesystem each), each replicate's
//! steady-state iterations are averaged and the replicate is the unit of n, σ, the
//! interval and the tests.
//!
//! The first iteration is reported apart (`first`, `first_vs_mean_pct`), since the
//! first-run effect is often the finding. Outliers are flagged by the modified z-score
//! of Iglewicz and Hoaglin, `M = 0.6745 (x − median) / MAD`, `|M| > 3.5`, among the
//! steady-state iterations only (the same rows are flagged by [`with_outliers`] and
//! counted by [`point_stats`]); they are counted, never dropped. When the MAD is zero
//! (common for `user_s`/`sys_s`, which move in clock ticks), the MAD is taken as one
//! step of the metric's [`Resolution`], so that a one-tick difference is not an
//! outlier. Only rows whose `status` is `ok` are used; the others are counted in
//! `n_failed`.
//!
//! The pure functions on `&[f64]` ([`summarize`], [`t_interval`], [`welch_t_test`], …)
//! are public so that notebooks and the runner can use them on plain samples.

use super::AnalysisError;
use serde::Serialize;

mod frame;
mod plain;
mod points;
#[cfg(test)]
mod tests;

pub use frame::{point_stats, point_stats_rows, stats_frame, with_outliers, PointStatsRow};
pub use plain::{
    geometric_mean, harmonic_mean, holm_adjust, mean, median, modified_z_scores,
    modified_z_scores_against, modified_z_scores_resolved, quantile, std_dev, summarize,
    t_interval, t_quantile, welch_t_test, NoTest, Summary, WelchTest,
};
pub use points::{samples_by_point, PointSamples, Sample, UnitSamples};

/// Which iterations are warm-up, reported apart from the steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Warmup {
    /// Every iteration is steady state.
    None,
    /// The first `n` iterations (by iteration number) are warm-up.
    First(usize),
}

impl Default for Warmup {
    fn default() -> Self {
        Warmup::First(1)
    }
}

impl Warmup {
    /// Number of leading iterations that are warm-up.
    pub fn count(&self) -> usize {
        match self {
            Warmup::None => 0,
            Warmup::First(n) => *n,
        }
    }

    /// `--warmup N` as a rule (0: none).
    pub fn from_count(n: usize) -> Warmup {
        if n == 0 {
            Warmup::None
        } else {
            Warmup::First(n)
        }
    }

    /// The rule in words, for the output that uses it.
    pub fn describe(&self) -> String {
        match self {
            Warmup::None => "no warm-up: every ok iteration is steady state".to_string(),
            Warmup::First(n) => format!(
                "warm-up: iteration{} 1{} of each replicate (by number, whatever their status), reported as \"first\" and left out; steady state: the later ok iterations",
                if *n == 1 { "" } else { "s" },
                if *n == 1 { String::new() } else { format!("–{n}") }
            ),
        }
    }
}

/// The warm-up rule: iteration number `iteration` (from 1, within its replicate) is
/// warm-up under `warmup`. Used by every statistic, comparison, claim and the adaptive
/// stopping rule.
pub fn is_warmup(iteration: i64, warmup: Warmup) -> bool {
    iteration <= warmup.count() as i64
}

/// The unit the statistics are computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One replicate: the steady-state iterations are the samples.
    Iteration,
    /// Several replicates: each replicate's steady-state mean is one sample.
    Replicate,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Iteration => "iteration",
            Unit::Replicate => "replicate",
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a metric's resolution comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionSource {
    /// Given by the caller.
    Given,
    /// Recorded in the bundle's manifest (`environment.clock_ticks_per_s`).
    Manifest,
    /// Not recorded: Linux's USER_HZ of 100 ticks per second is assumed.
    AssumedUserHz,
    /// The clock the runner reads (`wall_s`: the monotonic clock, in nanoseconds).
    Clock,
    /// Unknown (a metric fslab does not measure itself).
    Unknown,
}

/// The smallest step a metric moves in, used when the MAD is zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Resolution {
    /// In the metric's unit; `None` when unknown.
    pub step: Option<f64>,
    pub source: ResolutionSource,
}

impl Resolution {
    /// The resolution of a runs metric: `user_s`/`sys_s` one clock tick (from the
    /// manifest, else an assumed 1/100 s, said so), `wall_s` 1 ns, others unknown.
    pub fn for_metric(metric: &str, manifest: Option<&crate::store::Manifest>) -> Resolution {
        match metric {
            "user_s" | "sys_s" => match manifest.and_then(|m| m.environment.clock_ticks_per_s) {
                Some(hz) if hz > 0 => Resolution {
                    step: Some(1.0 / hz as f64),
                    source: ResolutionSource::Manifest,
                },
                _ => Resolution {
                    step: Some(0.01),
                    source: ResolutionSource::AssumedUserHz,
                },
            },
            "wall_s" => Resolution {
                step: Some(1e-9),
                source: ResolutionSource::Clock,
            },
            _ => Resolution {
                step: None,
                source: ResolutionSource::Unknown,
            },
        }
    }

    /// A resolution the caller knows.
    pub fn given(step: f64) -> Resolution {
        Resolution {
            step: Some(step),
            source: ResolutionSource::Given,
        }
    }

    /// The rule under MAD = 0 in words.
    pub fn describe(&self) -> String {
        let step = |s: f64| super::fmt_sig(s, 3);
        match (self.step, self.source) {
            (Some(s), ResolutionSource::Manifest) => format!(
                "resolution {} (one clock tick, recorded in the bundle)",
                step(s)
            ),
            (Some(s), ResolutionSource::AssumedUserHz) => format!(
                "resolution {} (one clock tick at USER_HZ 100: assumed, the bundle does not record it)",
                step(s)
            ),
            (Some(s), ResolutionSource::Clock) => {
                format!("resolution {} (the monotonic clock)", step(s))
            }
            (Some(s), _) => format!("resolution {} (given)", step(s)),
            (None, _) => "resolution unknown: under MAD = 0 the mean absolute deviation stands in".to_string(),
        }
    }
}

/// Options for [`point_stats`] and [`with_outliers`].
#[derive(Debug, Clone, PartialEq)]
pub struct StatsOptions {
    /// The runs column to summarise (`wall_s`, `user_s`, `sys_s`, …).
    pub metric: String,
    pub warmup: Warmup,
    /// Confidence level of the interval of the mean, in (0, 1).
    pub confidence: f64,
    /// |modified z-score| above which a sample is flagged as an outlier.
    pub outlier_threshold: f64,
    /// The metric's resolution for the MAD = 0 rule; `None`:
    /// [`Resolution::for_metric`] without a manifest.
    pub resolution: Option<Resolution>,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions {
            metric: "wall_s".to_string(),
            warmup: Warmup::default(),
            confidence: 0.95,
            outlier_threshold: 3.5,
            resolution: None,
        }
    }
}

impl StatsOptions {
    /// Default options for another metric column.
    pub fn metric(metric: impl Into<String>) -> Self {
        StatsOptions {
            metric: metric.into(),
            ..StatsOptions::default()
        }
    }

    /// The resolution in force.
    pub fn resolution(&self) -> Resolution {
        self.resolution
            .unwrap_or_else(|| Resolution::for_metric(&self.metric, None))
    }

    fn validate(&self) -> Result<(), AnalysisError> {
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(AnalysisError::InvalidOption(format!(
                "confidence level must be in (0, 1), got {}",
                self.confidence
            )));
        }
        if self.outlier_threshold.is_nan() || self.outlier_threshold <= 0.0 {
            return Err(AnalysisError::InvalidOption(format!(
                "outlier threshold must be positive, got {}",
                self.outlier_threshold
            )));
        }
        Ok(())
    }
}
