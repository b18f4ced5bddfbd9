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

use super::{cell_json, f64_values, i64_values, str_values, variable_columns, AnalysisError};
use crate::frames::from_records;
use crate::store::RunStatus;
use indexmap::IndexMap;
use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};

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

// ---------------------------------------------------------------------------------------
// Pure statistics on samples.

/// Arithmetic mean; `None` for no samples.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// Median (mean of the two middle values for an even count); `None` for no samples.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Quantile `q` in [0, 1] by linear interpolation between order statistics (R's default,
/// type 7; Hyndman and Fan 1996). `None` for no samples or `q` out of range.
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    if xs.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(v[lo] + (h - lo as f64) * (v[hi] - v[lo]))
}

/// Sample standard deviation (divisor n − 1); `None` below two samples.
pub fn std_dev(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Quantile `p` of Student's t distribution with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
    let valid = p > 0.0 && p < 1.0 && df > 0.0;
    if !valid {
        return None;
    }
    StudentsT::new(0.0, 1.0, df).ok().map(|t| t.inverse_cdf(p))
}

/// Two-sided Student-t confidence interval of the mean at `level` (e.g. 0.95):
/// `mean ± t(1 − (1 − level)/2, n − 1) · s/√n`. `None` below two samples.
pub fn t_interval(xs: &[f64], level: f64) -> Option<(f64, f64)> {
    let n = xs.len();
    let m = mean(xs)?;
    let s = std_dev(xs)?;
    let t = t_quantile(1.0 - (1.0 - level) / 2.0, (n - 1) as f64)?;
    let half = t * s / (n as f64).sqrt();
    Some((m - half, m + half))
}

/// Harmonic mean, the right average for rates (ops/s over equal amounts of work);
/// `None` unless every sample is positive.
pub fn harmonic_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan() || *x <= 0.0) {
        return None;
    }
    Some(xs.len() as f64 / xs.iter().map(|x| 1.0 / x).sum::<f64>())
}

/// Geometric mean, the right average for ratios (speed-ups, normalised results);
/// `None` unless every sample is positive.
pub fn geometric_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan() || *x <= 0.0) {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// Modified z-scores of `xs` against the median and median absolute deviation of
/// `reference` (Iglewicz and Hoaglin 1993): `M = 0.6745 (x − median) / MAD`. When the
/// MAD is zero the mean absolute deviation stands in (`M = (x − median) / (1.253314 ·
/// MeanAD)`); when that is zero too every score is 0 for values equal to the median and
/// ±∞ otherwise. Empty `reference` gives an empty vector.
pub fn modified_z_scores_against(reference: &[f64], xs: &[f64]) -> Vec<f64> {
    let Some(med) = median(reference) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = reference.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253314 * mean(&deviations).unwrap_or(0.0)
    };
    xs.iter()
        .map(|x| {
            let d = x - med;
            if scale > 0.0 {
                d / scale
            } else if d == 0.0 {
                0.0
            } else {
                d.signum() * f64::INFINITY
            }
        })
        .collect()
}

/// Modified z-scores of `xs` against the median and MAD of `reference`, with the MAD
/// taken as at least one `resolution` step: under MAD = 0 a difference of one step
/// scores 0.6745 and is not an outlier (a step of 0.01 s: 0.004 among five 0.008 scores
/// 0.27). Without a resolution this is [`modified_z_scores_against`].
pub fn modified_z_scores_resolved(
    reference: &[f64],
    xs: &[f64],
    resolution: Option<f64>,
) -> Vec<f64> {
    let Some(step) = resolution.filter(|r| *r > 0.0 && r.is_finite()) else {
        return modified_z_scores_against(reference, xs);
    };
    let Some(med) = median(reference) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = reference.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0).max(step);
    xs.iter().map(|x| 0.6745 * (x - med) / mad).collect()
}

/// Modified z-scores of `xs` against their own median and MAD.
pub fn modified_z_scores(xs: &[f64]) -> Vec<f64> {
    modified_z_scores_against(xs, xs)
}

/// Result of Welch's unequal-variance t-test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WelchTest {
    /// t statistic of `mean(a) − mean(b)`.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Why no t-test was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum NoTest {
    /// A side has fewer than two samples.
    TooFewSamples { a: usize, b: usize },
    /// Both sides have zero variance: the data are essentially constant (R's `t.test`
    /// refuses the same case), so there is no p-value, whatever the means.
    ConstantData,
}

impl std::fmt::Display for NoTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoTest::TooFewSamples { a, b } => {
                write!(f, "too few samples for a test ({a} against {b})")
            }
            NoTest::ConstantData => f.write_str("constant data: both sides have zero variance"),
        }
    }
}

/// Welch's two-sample t-test (two-sided), as R's `t.test(a, b)`. No test when either
/// sample has fewer than two values, or when both variances are zero (constant data:
/// no p-value rather than p = 0 or 1).
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Result<WelchTest, NoTest> {
    let too_few = NoTest::TooFewSamples {
        a: a.len(),
        b: b.len(),
    };
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (m1, m2) = (mean(a).ok_or(too_few)?, mean(b).ok_or(too_few)?);
    let (s1, s2) = (std_dev(a).ok_or(too_few)?, std_dev(b).ok_or(too_few)?);
    let (v1, v2) = (s1 * s1 / n1, s2 * s2 / n2);
    let se = (v1 + v2).sqrt();
    if se == 0.0 || !se.is_finite() {
        return Err(NoTest::ConstantData);
    }
    let t = (m1 - m2) / se;
    let df = (v1 + v2).powi(2) / (v1 * v1 / (n1 - 1.0) + v2 * v2 / (n2 - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|_| NoTest::ConstantData)?;
    let p_value = (2.0 * dist.cdf(-t.abs())).min(1.0);
    Ok(WelchTest { t, df, p_value })
}

/// Holm's step-down adjustment of p-values for multiple comparisons (R's
/// `p.adjust(p, "holm")`), over the p-values that are present; `None`s stay `None` and
/// do not count as tests.
pub fn holm_adjust(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut present: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .collect();
    present.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = present.len();
    let mut out = vec![None; p.len()];
    let mut running = 0.0f64;
    for (rank, (i, v)) in present.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * v).min(1.0));
        out[i] = Some(running);
    }
    out
}

/// Descriptive statistics of one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation; `None` below two samples.
    pub std: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation, σ / mean, in percent.
    pub cv_pct: Option<f64>,
    /// Confidence level of `ci`.
    pub ci_level: f64,
    /// Student-t confidence interval of the mean.
    pub ci: Option<(f64, f64)>,
    pub hmean: Option<f64>,
    pub gmean: Option<f64>,
}

/// Summarise a sample; `None` when it is empty. Non-finite values are ignored.
pub fn summarize(xs: &[f64], confidence: f64) -> Option<Summary> {
    let xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let m = mean(&xs)?;
    let std = std_dev(&xs);
    Some(Summary {
        n: xs.len(),
        mean: m,
        median: median(&xs)?,
        std,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        cv_pct: std.filter(|_| m != 0.0).map(|s| 100.0 * s / m.abs()),
        ci_level: confidence,
        ci: t_interval(&xs, confidence),
        hmean: harmonic_mean(&xs),
        gmean: geometric_mean(&xs),
    })
}

// ---------------------------------------------------------------------------------------
// Frames.

/// One iteration of one point, as read from a runs frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Row in the runs frame.
    pub row: usize,
    /// The replicate (fresh setup) it belongs to, from 1 (1 when the frame has no
    /// `replicate` column: bundles of format 1).
    pub replicate: i64,
    /// Iteration number within its replicate, from 1.
    pub iteration: i64,
    /// The metric; `None` when null or not finite.
    pub value: Option<f64>,
    /// `status == "ok"` (a missing status column counts as ok).
    pub ok: bool,
}

/// The iterations of one point, in (replicate, iteration) order.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSamples {
    pub experiment: String,
    pub point_id: String,
    pub point_index: i64,
    /// Matrix variables of the point (the columns between `point_index` and `iteration`).
    pub vars: IndexMap<String, Value>,
    pub samples: Vec<Sample>,
}

/// A point's samples in its unit (see [`PointSamples::units`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UnitSamples {
    pub unit: Unit,
    /// Steady-state values: iterations (unit iteration) or per-replicate means of the
    /// steady-state iterations (unit replicate).
    pub steady: Vec<f64>,
    /// Cold values: the usable warm-up iterations, or per-replicate means of them.
    pub cold: Vec<f64>,
    /// Replicates of the point.
    pub replicates: usize,
    /// Replicates without a steady-state iteration.
    pub replicates_without_steady: usize,
}

impl PointSamples {
    /// Usable values (ok and finite) split into (warm-up, steady state) by the warm-up
    /// rule ([`is_warmup`]), pooled over replicates. No value is ever moved from the
    /// warm-up to the steady state: a point whose iterations are all warm-up has an
    /// empty steady state.
    pub fn split(&self, warmup: Warmup) -> (Vec<f64>, Vec<f64>) {
        let mut warm = Vec::new();
        let mut steady = Vec::new();
        for s in &self.samples {
            if let (true, Some(v)) = (s.ok, s.value) {
                if is_warmup(s.iteration, warmup) {
                    warm.push(v);
                } else {
                    steady.push(v);
                }
            }
        }
        (warm, steady)
    }

    /// The replicate numbers, ascending.
    pub fn replicate_ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self.samples.iter().map(|s| s.replicate).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The unit: replicate when the point has more than one, else iteration.
    pub fn unit(&self) -> Unit {
        if self.replicate_ids().len() > 1 {
            Unit::Replicate
        } else {
            Unit::Iteration
        }
    }

    /// The samples in the point's unit.
    pub fn units(&self, warmup: Warmup) -> UnitSamples {
        let ids = self.replicate_ids();
        let unit = self.unit();
        let mut steady = Vec::new();
        let mut cold = Vec::new();
        let mut without = 0;
        for r in &ids {
            let mut rs = Vec::new();
            let mut rc = Vec::new();
            for s in self.samples.iter().filter(|s| s.replicate == *r) {
                if let (true, Some(v)) = (s.ok, s.value) {
                    if is_warmup(s.iteration, warmup) {
                        rc.push(v);
                    } else {
                        rs.push(v);
                    }
                }
            }
            if rs.is_empty() {
                without += 1;
            }
            match unit {
                Unit::Iteration => {
                    steady.extend(rs);
                    cold.extend(rc);
                }
                Unit::Replicate => {
                    steady.extend(mean(&rs));
                    cold.extend(mean(&rc));
                }
            }
        }
        UnitSamples {
            unit,
            steady,
            cold,
            replicates: ids.len(),
            replicates_without_steady: without,
        }
    }

    /// The first iteration's value (iteration 1; averaged over replicates when there
    /// are several); `None` when no iteration 1 is usable. A later iteration never
    /// stands in for it.
    pub fn first(&self) -> Option<f64> {
        let firsts: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.iteration == 1 && s.ok)
            .filter_map(|s| s.value)
            .collect();
        mean(&firsts)
    }

    /// Number of iterations whose status is not ok.
    pub fn failed(&self) -> usize {
        self.samples.iter().filter(|s| !s.ok).count()
    }

    /// Outlier scores by the one rule used for flags and counts alike: the steady-state
    /// iterations (pooled over replicates) are scored against their own median and MAD
    /// (MAD at least one resolution step); warm-up and unusable rows get no score.
    /// Returns (row, score) for the scored rows.
    pub fn outlier_scores(&self, warmup: Warmup, resolution: Resolution) -> Vec<(usize, f64)> {
        let steady: Vec<(usize, f64)> = self
            .samples
            .iter()
            .filter(|s| s.ok && !is_warmup(s.iteration, warmup))
            .filter_map(|s| s.value.map(|v| (s.row, v)))
            .collect();
        let values: Vec<f64> = steady.iter().map(|(_, v)| *v).collect();
        let scores = modified_z_scores_resolved(&values, &values, resolution.step);
        steady.iter().map(|(r, _)| *r).zip(scores).collect()
    }
}

/// Group a runs frame by `point_id`, in `point_index` order (then first appearance).
/// Needs `point_id` and the metric column; `experiment`, `point_index`, `replicate`,
/// `iteration` and `status` are used when present.
pub fn samples_by_point(
    runs: &DataFrame,
    metric: &str,
) -> Result<Vec<PointSamples>, AnalysisError> {
    const FRAME: &str = "runs";
    let ids = str_values(runs, FRAME, "point_id")?;
    let values = f64_values(runs, FRAME, metric)?;
    let height = runs.height();
    let has = |name: &str| runs.column(name).is_ok();
    let experiments = if has("experiment") {
        str_values(runs, FRAME, "experiment")?
    } else {
        vec![None; height]
    };
    let indexes = if has("point_index") {
        i64_values(runs, FRAME, "point_index")?
    } else {
        vec![None; height]
    };
    let iterations = if has("iteration") {
        i64_values(runs, FRAME, "iteration")?
    } else {
        vec![None; height]
    };
    let replicates = if has("replicate") {
        i64_values(runs, FRAME, "replicate")?
    } else {
        vec![None; height]
    };
    let statuses = if has("status") {
        str_values(runs, FRAME, "status")?
    } else {
        vec![Some(RunStatus::Ok.as_str().to_string()); height]
    };
    let var_names = variable_columns(runs);
    let var_cols: Vec<&Column> = var_names
        .iter()
        .filter_map(|n| runs.column(n).ok())
        .collect();

    let mut points: IndexMap<String, PointSamples> = IndexMap::new();
    for row in 0..height {
        let id = ids[row].clone().unwrap_or_default();
        let point = points.entry(id.clone()).or_insert_with(|| PointSamples {
            experiment: experiments[row].clone().unwrap_or_default(),
            point_id: id,
            point_index: indexes[row].unwrap_or(-1),
            vars: var_cols
                .iter()
                .map(|c| (c.name().to_string(), cell_json(c, row)))
                .collect(),
            samples: Vec::new(),
        });
        let replicate = replicates[row].unwrap_or(1);
        let seen = point
            .samples
            .iter()
            .filter(|s| s.replicate == replicate)
            .count() as i64;
        point.samples.push(Sample {
            row,
            replicate,
            iteration: iterations[row].unwrap_or(seen + 1),
            value: values[row].filter(|v| v.is_finite()),
            ok: RunStatus::is_ok_str(statuses[row].as_deref()),
        });
    }
    let mut out: Vec<PointSamples> = points.into_values().collect();
    // Points without an index keep their order of appearance after the indexed ones.
    let order: Vec<(i64, usize)> = out
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                if p.point_index < 0 {
                    i64::MAX
                } else {
                    p.point_index
                },
                i,
            )
        })
        .collect();
    let mut sorted: Vec<(i64, usize, PointSamples)> = order
        .into_iter()
        .zip(out.drain(..))
        .map(|((k, i), p)| (k, i, p))
        .collect();
    sorted.sort_by_key(|(k, i, _)| (*k, *i));
    let mut out: Vec<PointSamples> = sorted.into_iter().map(|(_, _, p)| p).collect();
    for p in &mut out {
        p.samples.sort_by_key(|s| (s.replicate, s.iteration));
    }
    Ok(out)
}

/// One row of the per-point statistics frame. See [`point_stats`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointStatsRow {
    pub experiment: String,
    pub point_id: String,
    pub point_index: i64,
    /// The point's matrix variables, one column each.
    #[serde(flatten)]
    pub vars: IndexMap<String, Value>,
    pub metric: String,
    /// What one sample of `n` is: an iteration, or a replicate's steady-state mean.
    pub unit: Unit,
    /// Replicates (fresh setups) of the point.
    pub replicates: usize,
    /// Steady-state samples (in `unit`) used for the statistics below; 0 when the
    /// point has no steady state.
    pub n: usize,
    /// True when every usable iteration is warm-up: no mean, no interval, and no
    /// "first vs mean" (the output says "no steady state").
    pub no_steady_state: bool,
    /// Usable warm-up iterations left out of the statistics.
    pub n_warmup: usize,
    /// Iterations whose status is not `ok`.
    pub n_failed: usize,
    /// The first iteration's value, reported apart.
    pub first: Option<f64>,
    /// (first − steady mean) / steady mean, in percent; only when the first iteration
    /// is warm-up and there is a steady state.
    pub first_vs_mean_pct: Option<f64>,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub std: Option<f64>,
    pub cv_pct: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub ci_level: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Harmonic mean (meaningful for rates).
    pub hmean: Option<f64>,
    /// Geometric mean (meaningful for ratios).
    pub gmean: Option<f64>,
    /// Steady-state iterations flagged as outliers (|modified z| > threshold): the rows
    /// [`with_outliers`] flags.
    pub outliers: usize,
}

/// Typed per-point statistics; [`point_stats`] is this as a DataFrame.
pub fn point_stats_rows(
    runs: &DataFrame,
    opts: &StatsOptions,
) -> Result<Vec<PointStatsRow>, AnalysisError> {
    opts.validate()?;
    let resolution = opts.resolution();
    let points = samples_by_point(runs, &opts.metric)?;
    Ok(points
        .iter()
        .map(|p| {
            let (warm, _) = p.split(opts.warmup);
            let u = p.units(opts.warmup);
            let summary = summarize(&u.steady, opts.confidence);
            let first = p.first();
            let mean = summary.as_ref().map(|s| s.mean);
            let outliers = p
                .outlier_scores(opts.warmup, resolution)
                .iter()
                .filter(|(_, z)| z.abs() > opts.outlier_threshold)
                .count();
            PointStatsRow {
                experiment: p.experiment.clone(),
                point_id: p.point_id.clone(),
                point_index: p.point_index,
                vars: p.vars.clone(),
                metric: opts.metric.clone(),
                unit: u.unit,
                replicates: u.replicates,
                n: u.steady.len(),
                no_steady_state: u.steady.is_empty(),
                n_warmup: warm.len(),
                n_failed: p.failed(),
                first,
                first_vs_mean_pct: match (first, mean) {
                    (Some(f), Some(m)) if m != 0.0 && is_warmup(1, opts.warmup) => {
                        Some(100.0 * (f - m) / m)
                    }
                    _ => None,
                },
                mean,
                median: summary.as_ref().map(|s| s.median),
                std: summary.as_ref().and_then(|s| s.std),
                cv_pct: summary.as_ref().and_then(|s| s.cv_pct),
                min: summary.as_ref().map(|s| s.min),
                max: summary.as_ref().map(|s| s.max),
                ci_level: opts.confidence,
                ci_low: summary.as_ref().and_then(|s| s.ci.map(|c| c.0)),
                ci_high: summary.as_ref().and_then(|s| s.ci.map(|c| c.1)),
                hmean: summary.as_ref().and_then(|s| s.hmean),
                gmean: summary.as_ref().and_then(|s| s.gmean),
                outliers,
            }
        })
        .collect())
}

/// Per-point statistics of `opts.metric` as a DataFrame, one row per point in
/// `point_index` order. Columns: `experiment, point_id, point_index, <matrix
/// variables…>, metric, unit, replicates, n, no_steady_state, n_warmup, n_failed,
/// first, first_vs_mean_pct, mean, median, std, cv_pct, min, max, ci_level, ci_low,
/// ci_high, hmean, gmean, outliers`.
pub fn point_stats(runs: &DataFrame, opts: &StatsOptions) -> Result<DataFrame, AnalysisError> {
    stats_frame(&point_stats_rows(runs, opts)?)
}

/// The frame of [`point_stats`] from rows already computed by [`point_stats_rows`] (a
/// report computes the rows once and draws the frame).
pub fn stats_frame(rows: &[PointStatsRow]) -> Result<DataFrame, AnalysisError> {
    let mut df = from_records(rows)?;
    // Keep the numeric columns Float64 even when every value is null (from_records
    // would otherwise make them String).
    for name in [
        "first",
        "first_vs_mean_pct",
        "mean",
        "median",
        "std",
        "cv_pct",
        "min",
        "max",
        "ci_low",
        "ci_high",
        "hmean",
        "gmean",
    ] {
        if let Ok(col) = df.column(name) {
            if col.dtype() != &DataType::Float64 {
                let cast = col.cast(&DataType::Float64)?;
                df.with_column(cast)?;
            }
        }
    }
    Ok(df)
}

/// The runs frame with three more columns, computed per point over `ok` rows:
/// `warmup` (bool: the row is warm-up by the warm-up rule), `mod_z` (f64: modified
/// z-score of a steady-state row against the point's steady-state median and MAD; null
/// for warm-up and unusable rows) and `outlier` (bool: |mod_z| > threshold). The
/// flagged rows are exactly those [`point_stats`] counts. Nothing is dropped.
pub fn with_outliers(runs: &DataFrame, opts: &StatsOptions) -> Result<DataFrame, AnalysisError> {
    opts.validate()?;
    let resolution = opts.resolution();
    let points = samples_by_point(runs, &opts.metric)?;
    let height = runs.height();
    let mut warmup = vec![false; height];
    let mut mod_z: Vec<Option<f64>> = vec![None; height];
    let mut outlier = vec![false; height];
    for p in &points {
        for s in &p.samples {
            warmup[s.row] = is_warmup(s.iteration, opts.warmup);
        }
        for (row, z) in p.outlier_scores(opts.warmup, resolution) {
            mod_z[row] = Some(z);
            outlier[row] = z.abs() > opts.outlier_threshold;
        }
    }
    let mut out = runs.clone();
    out.with_column(Column::new("warmup".into(), warmup))?;
    out.with_column(Column::new("mod_z".into(), mod_z))?;
    out.with_column(Column::new("outlier".into(), outlier))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs() -> DataFrame {
        // Two points, four iterations each; point b's iteration 2 failed and its
        // iteration 4 is far off.
        df!(
            "experiment" => ["e"; 8],
            "point_id" => ["fs=a", "fs=a", "fs=a", "fs=a", "fs=b", "fs=b", "fs=b", "fs=b"],
            "point_index" => [0i64, 0, 0, 0, 1, 1, 1, 1],
            "fs" => ["a", "a", "a", "a", "b", "b", "b", "b"],
            "iteration" => [1i64, 2, 3, 4, 1, 2, 3, 4],
            "wall_s" => [20.0, 10.0, 11.0, 12.0, 5.0, 99.0, 5.1, 50.0],
            "status" => ["ok", "ok", "ok", "ok", "ok", "failed", "ok", "ok"],
        )
        .unwrap()
    }

    #[test]
    fn warmup_split_and_first_are_by_iteration() {
        let pts = samples_by_point(&runs(), "wall_s").unwrap();
        assert_eq!(pts.len(), 2);
        let (w, s) = pts[0].split(Warmup::First(1));
        assert_eq!(w, [20.0]);
        assert_eq!(s, [10.0, 11.0, 12.0]);
        let (w, s) = pts[1].split(Warmup::First(2));
        assert_eq!(w, [5.0]); // iteration 2 failed: not usable, still warm-up
        assert_eq!(s, [5.1, 50.0]);
        // A warm-up longer than the point leaves no steady state: nothing is promoted.
        let (w, s) = pts[0].split(Warmup::First(9));
        assert_eq!(w.len(), 4);
        assert!(s.is_empty());
        assert_eq!(pts[1].first(), Some(5.0));
        assert_eq!(pts[1].failed(), 1);
        assert_eq!(pts[0].vars["fs"], Value::from("a"));
    }

    #[test]
    fn stats_frame_has_one_row_per_point_with_hand_checked_values() {
        let df = point_stats(&runs(), &StatsOptions::default()).unwrap();
        assert_eq!(df.height(), 2);
        let mean = df.column("mean").unwrap().f64().unwrap().get(0).unwrap();
        assert!((mean - 11.0).abs() < 1e-12);
        // first 20 against steady mean 11: +81.8 %
        let first = df
            .column("first_vs_mean_pct")
            .unwrap()
            .f64()
            .unwrap()
            .get(0)
            .unwrap();
        assert!((first - 900.0 / 11.0).abs() < 1e-9);
        assert_eq!(df.column("n").unwrap().i64().unwrap().get(1), Some(2));
        assert_eq!(
            df.column("n_failed").unwrap().i64().unwrap().get(1),
            Some(1)
        );
        assert_eq!(df.column("fs").unwrap().str().unwrap().get(1), Some("b"));
    }

    #[test]
    fn outlier_column_flags_without_dropping() {
        let df = with_outliers(&runs(), &StatsOptions::default()).unwrap();
        assert_eq!(df.height(), 8);
        let out: Vec<Option<bool>> = df
            .column("outlier")
            .unwrap()
            .bool()
            .unwrap()
            .iter()
            .collect();
        let warm: Vec<Option<bool>> = df
            .column("warmup")
            .unwrap()
            .bool()
            .unwrap()
            .iter()
            .collect();
        assert_eq!(warm[0], Some(true));
        assert_eq!(warm[1], Some(false));
        // Point a steady: 10, 11, 12 → median 11, MAD 1. The warm-up row (20) is neither
        // scored nor flagged: flags and counts cover the same (steady-state) rows.
        assert_eq!(out[0], Some(false));
        assert_eq!(df.column("mod_z").unwrap().f64().unwrap().get(0), None);
        assert_eq!(out[1], Some(false));
        // The failed row has no score.
        assert_eq!(df.column("mod_z").unwrap().f64().unwrap().get(5), None);
    }

    #[test]
    fn invalid_options_are_errors() {
        let opts = StatsOptions {
            confidence: 1.5,
            ..StatsOptions::default()
        };
        assert!(matches!(
            point_stats(&runs(), &opts),
            Err(AnalysisError::InvalidOption(_))
        ));
        let missing = StatsOptions::metric("nope");
        assert!(matches!(
            point_stats(&runs(), &missing),
            Err(AnalysisError::MissingColumn { .. })
        ));
        let text = StatsOptions::metric("fs");
        assert!(matches!(
            point_stats(&runs(), &text),
            Err(AnalysisError::ColumnType { .. })
        ));
    }
}
