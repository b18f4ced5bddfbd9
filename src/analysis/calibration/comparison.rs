//! One comparison of a calibration: k replicates of side A against the same k pairs'
//! replicates of side B, judged by `fslab compare` and by the tier rule exactly as they
//! judge any two sides.

use super::super::compare::{compare_runs, CompareOptions, Significance};
use super::super::interval::fieller_welch;
use super::super::stats::{mean, samples_by_point, std_dev, Warmup};
use super::super::tiers::{decide, Tier, DEFAULT_MIN_REPLICATES};
use super::super::{i64_values, str_values, AnalysisError};
use crate::analysis::claims::{Replication, SampleUnit};
use crate::spec::claim::Expect;
use crate::store::CalibrationDesign;
use polars::prelude::{BooleanChunked, Column, DataFrame, NewChunkedArray, PolarsResult};
use serde::Serialize;

/// The point id both sides get inside a comparison, so that `fslab compare` sets them
/// against each other.
const SAME_POINT: &str = "calibrated";

/// One row of the `calibration` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationRow {
    /// From 1.
    pub comparison: u32,
    /// The pairs (replicates a side) it takes: first … last.
    pub first_pair: u32,
    pub last_pair: u32,
    /// Replicates with a steady state, a side.
    pub a_n: usize,
    pub b_n: usize,
    pub a_mean: Option<f64>,
    pub b_mean: Option<f64>,
    /// σ of the replicate means ÷ their mean, percent.
    pub a_cv_pct: Option<f64>,
    pub b_cv_pct: Option<f64>,
    /// mean(B) ÷ mean(A), and its 95 % Fieller–Welch interval over the replicates.
    pub ratio: Option<f64>,
    pub ratio_lo: Option<f64>,
    pub ratio_hi: Option<f64>,
    /// `fslab compare` with A as base and B as new: % change, p-values, verdict.
    pub change_pct: Option<f64>,
    pub p_value: Option<f64>,
    pub p_adjusted: Option<f64>,
    pub compare: Significance,
    /// The tier rule on the claim "B within ± threshold of A" (expect
    /// [1 − t, 1 + t] on B ÷ A).
    pub tier_same: Tier,
    /// The tier rule on the claim "B slower than A" (expect B ÷ A ≥ 1).
    pub tier_slower: Tier,
    /// The smallest ratio B ÷ A this comparison could have detected with 90 % power at
    /// its own spread (`analysis::power`, from its interval); None without an interval.
    pub detectable: Option<f64>,
    /// The true ratio the interval is checked against, when known.
    pub truth: Option<f64>,
    /// Whether the interval covers it.
    pub covers: Option<bool>,
    /// `none`, or the injection's label (`stress-delay=2%`).
    pub injected: String,
    /// What every verdict of this row stands on: the unit, the sides, the injection.
    pub stated: String,
}

/// Rows of `runs` of point `id` whose replicate is in `first..=last`, with the point id
/// replaced by [`SAME_POINT`].
fn side_rows(
    runs: &DataFrame,
    id: &str,
    first: u32,
    last: u32,
) -> Result<DataFrame, AnalysisError> {
    let ids = str_values(runs, "runs", "point_id")?;
    let reps = i64_values(runs, "runs", "replicate")?;
    let keep: Vec<bool> = ids
        .iter()
        .zip(&reps)
        .map(|(i, r)| {
            i.as_deref() == Some(id)
                && r.is_some_and(|r| r >= i64::from(first) && r <= i64::from(last))
        })
        .collect();
    let mask = BooleanChunked::from_slice("keep".into(), &keep);
    let mut df = runs.filter(&mask)?;
    let h = df.height();
    df.with_column(Column::new("point_id".into(), vec![SAME_POINT; h]))?;
    Ok(df)
}

/// The derived metric `cpu_s`: a run's CPU time, `user_s + sys_s` (the process tree's
/// CPU time, which waiting for a CPU on a loaded host does not add to, unlike `wall_s`).
pub const CPU_METRIC: &str = "cpu_s";

/// `runs` with the column `metric` present: [`CPU_METRIC`] is added from `user_s` and
/// `sys_s` when the frame has no such column; any other metric is left as it is.
pub fn with_metric(runs: &DataFrame, metric: &str) -> Result<DataFrame, AnalysisError> {
    if metric != CPU_METRIC || runs.column(CPU_METRIC).is_ok() {
        return Ok(runs.clone());
    }
    let user = super::super::f64_values(runs, "runs", "user_s")?;
    let sys = super::super::f64_values(runs, "runs", "sys_s")?;
    let cpu: Vec<Option<f64>> = user
        .iter()
        .zip(&sys)
        .map(|(u, s)| u.zip(*s).map(|(u, s)| u + s))
        .collect();
    let mut df = runs.clone();
    df.with_column(Column::new(CPU_METRIC.into(), cpu))?;
    Ok(df)
}

/// A metric read from a parsed table instead of `runs`: `TABLE.COLUMN` (`fio.runtime_ms`,
/// fio's own time for the job, which leaves out its start and exit), as (table, column).
pub fn table_metric(metric: &str) -> Option<(&str, &str)> {
    metric
        .split_once('.')
        .filter(|(t, c)| !t.is_empty() && !c.is_empty() && *t != "runs")
}

/// `runs` with a column named `metric` (`TABLE.COLUMN`, see [`table_metric`]) taken from
/// `table`: for each run, the largest value of COLUMN over the table's rows of the same
/// point, replicate and iteration (a fio job's directions and jobs run at once, so their
/// longest runtime is the job's). A run with no such row gets none, and is left out
/// like a failed run.
pub fn with_table_metric(
    runs: &DataFrame,
    metric: &str,
    table: &DataFrame,
) -> Result<DataFrame, AnalysisError> {
    let Some((_, column)) = table_metric(metric) else {
        return Ok(runs.clone());
    };
    const FRAME: &str = "the metric's table";
    let values = super::super::f64_values(table, FRAME, column)?;
    let t_ids = str_values(table, FRAME, "point_id")?;
    let t_reps = i64_values(table, FRAME, "replicate")?;
    let t_its = i64_values(table, FRAME, "iteration")?;
    let mut most: std::collections::HashMap<(String, i64, i64), f64> = Default::default();
    for (((id, r), it), v) in t_ids.iter().zip(&t_reps).zip(&t_its).zip(&values) {
        if let (Some(id), Some(r), Some(it), Some(v)) = (id, r, it, v) {
            let e = most.entry((id.clone(), *r, *it)).or_insert(*v);
            *e = e.max(*v);
        }
    }
    let ids = str_values(runs, "runs", "point_id")?;
    let reps = i64_values(runs, "runs", "replicate")?;
    let its = i64_values(runs, "runs", "iteration")?;
    let col: Vec<Option<f64>> = ids
        .iter()
        .zip(&reps)
        .zip(&its)
        .map(|((id, r), it)| match (id, r, it) {
            (Some(id), Some(r), Some(it)) => most.get(&(id.clone(), *r, *it)).copied(),
            _ => None,
        })
        .collect();
    let mut df = runs.clone();
    df.with_column(Column::new(metric.into(), col))?;
    Ok(df)
}

/// What every verdict of a calibration stands on.
pub fn stated(design: &CalibrationDesign) -> String {
    let sides = match &design.injection {
        None => "side B runs exactly what side A runs (A/A: no difference is there)".to_string(),
        Some(i) => format!("injected into side B: {i}"),
    };
    format!(
        "unit: replicate (a fresh filesystem on fresh loop devices), {k} a side, pairs run in blocks of one replicate of each side in random order; `{metric}` averaged over each replicate's iterations after {w} warm-up; {sides}",
        k = design.per_side,
        metric = design.metric,
        w = design.warmup
    )
}

/// Comparison `c` (from 1) of a calibration whose runs are `runs`: pairs
/// (c − 1)·k + 1 … c·k. `truth` is the ratio the interval should cover, when known.
pub fn compare_block(
    runs: &DataFrame,
    design: &CalibrationDesign,
    c: u32,
    truth: Option<f64>,
) -> Result<CalibrationRow, AnalysisError> {
    let k = design.per_side.max(1);
    let (first, last) = ((c - 1) * k + 1, c * k);
    let runs = &with_metric(runs, &design.metric)?;
    let a = side_rows(runs, &design.side_a, first, last)?;
    let b = side_rows(runs, &design.side_b, first, last)?;
    let warmup = Warmup::from_count(design.warmup);
    let opts = CompareOptions {
        metric: design.metric.clone(),
        warmup,
        alpha: design.alpha,
        threshold_pct: design.threshold_pct,
    };
    let cmp = compare_runs(&a, &b, None, None, &opts)?;
    let row = cmp.rows.first();
    let means = |df: &DataFrame| -> Result<Vec<f64>, AnalysisError> {
        Ok(samples_by_point(df, &design.metric)?
            .first()
            .map(|p| p.units(warmup).steady)
            .unwrap_or_default())
    };
    let (am, bm) = (means(&a)?, means(&b)?);
    let cv = |xs: &[f64]| match (mean(xs), std_dev(xs)) {
        (Some(m), Some(s)) if m != 0.0 => Some(100.0 * s / m.abs()),
        _ => None,
    };
    // The interval at the design's level (0.95 at the default α = 0.05, the claims').
    let interval = fieller_welch(&bm, &am, 1.0 - design.alpha);
    let replication = Replication {
        unit: SampleUnit::Replicate,
        replicates: (bm.len(), am.len()),
        samples: (bm.len(), am.len()),
    };
    let t = design.threshold_pct / 100.0;
    let band = Expect {
        min: Some(1.0 - t),
        max: Some(1.0 + t),
    };
    let slower = Expect {
        min: Some(1.0),
        max: None,
    };
    let min_reps = DEFAULT_MIN_REPLICATES;
    let (tier_same, _) = decide(&band, &interval, &replication, min_reps, false);
    let (tier_slower, _) = decide(&slower, &interval, &replication, min_reps, false);
    let (ma, mb) = (mean(&am), mean(&bm));
    let iv = interval.as_ref().ok();
    let detectable = match (ma, mb, iv) {
        (Some(a), Some(b), Some(i)) if a != 0.0 => super::super::power::of_interval(
            b / a,
            i,
            (bm.len(), am.len()),
            &band,
            tier_same != Tier::Inconclusive,
            None,
        )
        .map(|p| p.detectable),
        _ => None,
    };
    Ok(CalibrationRow {
        comparison: c,
        first_pair: first,
        last_pair: last,
        a_n: am.len(),
        b_n: bm.len(),
        a_mean: ma,
        b_mean: mb,
        a_cv_pct: cv(&am),
        b_cv_pct: cv(&bm),
        ratio: match (ma, mb) {
            (Some(a), Some(b)) if a != 0.0 => Some(b / a),
            _ => None,
        },
        ratio_lo: iv.map(|i| i.lo),
        ratio_hi: iv.map(|i| i.hi),
        change_pct: row.and_then(|r| r.change_pct),
        p_value: row.and_then(|r| r.p_value),
        p_adjusted: row.and_then(|r| r.p_adjusted),
        compare: row.map_or(Significance::NotTested, |r| r.significance),
        tier_same,
        tier_slower,
        detectable,
        truth,
        covers: truth.zip(iv).map(|(t, i)| i.lo <= t && t <= i.hi),
        injected: design
            .injection
            .as_ref()
            .map_or_else(|| "none".to_string(), |i| i.label()),
        stated: stated(design),
    })
}

/// The rows as the bundle's `calibration` table, every column typed as it is (a
/// column that is empty in one batch keeps its type, so batches line up).
pub fn rows_frame(rows: &[CalibrationRow]) -> PolarsResult<DataFrame> {
    fn f(name: &str, v: Vec<Option<f64>>) -> Column {
        Column::new(name.into(), v)
    }
    fn u(name: &str, v: Vec<u32>) -> Column {
        Column::new(name.into(), v)
    }
    fn s(name: &str, v: Vec<String>) -> Column {
        Column::new(name.into(), v)
    }
    let cols = vec![
        u("comparison", rows.iter().map(|r| r.comparison).collect()),
        u("first_pair", rows.iter().map(|r| r.first_pair).collect()),
        u("last_pair", rows.iter().map(|r| r.last_pair).collect()),
        u("a_n", rows.iter().map(|r| r.a_n as u32).collect()),
        u("b_n", rows.iter().map(|r| r.b_n as u32).collect()),
        f("a_mean", rows.iter().map(|r| r.a_mean).collect()),
        f("b_mean", rows.iter().map(|r| r.b_mean).collect()),
        f("a_cv_pct", rows.iter().map(|r| r.a_cv_pct).collect()),
        f("b_cv_pct", rows.iter().map(|r| r.b_cv_pct).collect()),
        f("ratio", rows.iter().map(|r| r.ratio).collect()),
        f("ratio_lo", rows.iter().map(|r| r.ratio_lo).collect()),
        f("ratio_hi", rows.iter().map(|r| r.ratio_hi).collect()),
        f("change_pct", rows.iter().map(|r| r.change_pct).collect()),
        f("p_value", rows.iter().map(|r| r.p_value).collect()),
        f("p_adjusted", rows.iter().map(|r| r.p_adjusted).collect()),
        s(
            "compare",
            rows.iter().map(|r| significance_word(r.compare)).collect(),
        ),
        s(
            "tier_same",
            rows.iter().map(|r| tier_word(r.tier_same)).collect(),
        ),
        s(
            "tier_slower",
            rows.iter().map(|r| tier_word(r.tier_slower)).collect(),
        ),
        f("detectable", rows.iter().map(|r| r.detectable).collect()),
        f("truth", rows.iter().map(|r| r.truth).collect()),
        Column::new(
            "covers".into(),
            rows.iter().map(|r| r.covers).collect::<Vec<Option<bool>>>(),
        ),
        s(
            "injected",
            rows.iter().map(|r| r.injected.clone()).collect(),
        ),
        s("stated", rows.iter().map(|r| r.stated.clone()).collect()),
    ];
    DataFrame::new(rows.len(), cols)
}

/// The snake-case word serde gives a value (`not_significant`, `not_reproduced`).
fn word<T: Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|j| j.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn significance_word(s: Significance) -> String {
    word(s)
}

fn tier_word(t: Tier) -> String {
    word(t)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::store::{runs_frame, Injection, RunRow, RunStatus};

    /// Runs of two sides, `values[side][replicate]` the replicate's iterations.
    pub(crate) fn runs(a: &[&[f64]], b: &[&[f64]]) -> DataFrame {
        let mut rows = Vec::new();
        for (id, side) in [("side=A", a), ("side=B", b)] {
            for (r, its) in side.iter().enumerate() {
                for (i, v) in its.iter().enumerate() {
                    rows.push(RunRow {
                        experiment: "e".into(),
                        point_id: id.into(),
                        point_index: usize::from(id == "side=B"),
                        vars: Default::default(),
                        iteration: i as u32 + 1,
                        replicate: r as u32 + 1,
                        wall_s: *v,
                        user_s: 0.0,
                        sys_s: 0.0,
                        exit_code: 0,
                        status: RunStatus::Ok,
                        started_at: String::new(),
                    });
                }
            }
        }
        runs_frame(&rows).unwrap()
    }

    pub(crate) fn design(k: u32) -> CalibrationDesign {
        CalibrationDesign {
            point: "fs=ext4".into(),
            side_a: "side=A".into(),
            side_b: "side=B".into(),
            pairs: 6,
            per_side: k,
            metric: "wall_s".into(),
            warmup: 1,
            alpha: 0.05,
            threshold_pct: 2.0,
            injection: None,
        }
    }

    #[test]
    fn a_block_takes_its_pairs_and_the_steady_state_only() {
        // Three replicates a side per comparison; the first iteration (warm-up) is
        // wildly off and must not count.
        let a: Vec<&[f64]> = vec![
            &[9.0, 1.00, 1.02],
            &[9.0, 0.99, 1.01],
            &[9.0, 1.01, 0.99],
            &[9.0, 2.00, 2.00],
            &[9.0, 2.00, 2.02],
            &[9.0, 2.02, 2.00],
        ];
        let b = a.clone();
        let df = runs(&a, &b);
        let r1 = compare_block(&df, &design(3), 1, Some(1.0)).unwrap();
        assert_eq!((r1.first_pair, r1.last_pair, r1.a_n, r1.b_n), (1, 3, 3, 3));
        assert!((r1.a_mean.unwrap() - 1.00333).abs() < 1e-4, "{r1:?}");
        assert_eq!(r1.ratio, Some(1.0));
        assert_eq!(r1.covers, Some(true));
        // Identical sides: nothing called; the same within ± 2 % is shown.
        assert_eq!(r1.compare, Significance::NotSignificant);
        assert_eq!(r1.tier_same, Tier::Reproduced);
        assert_eq!(r1.tier_slower, Tier::Inconclusive);
        let r2 = compare_block(&df, &design(3), 2, None).unwrap();
        assert_eq!((r2.first_pair, r2.last_pair), (4, 6));
        assert!((r2.a_mean.unwrap() - 2.00667).abs() < 1e-4, "{r2:?}");
        assert_eq!(r2.covers, None);
        assert!(r2.stated.contains("A/A"), "{}", r2.stated);
    }

    #[test]
    fn a_slower_side_b_is_called_and_the_injection_is_stated() {
        let a: Vec<&[f64]> = vec![&[0.0, 1.00], &[0.0, 1.01], &[0.0, 0.99]];
        let b: Vec<&[f64]> = vec![&[0.0, 1.10], &[0.0, 1.11], &[0.0, 1.09]];
        let mut d = design(3);
        d.injection = Some(Injection::StressDelay { pct: 10.0 });
        let r = compare_block(&runs(&a, &b), &d, 1, Some(1.1)).unwrap();
        assert_eq!(r.compare, Significance::Significant);
        assert!(r.change_pct.unwrap() > 9.0);
        assert_eq!(r.tier_same, Tier::NotReproduced);
        assert_eq!(r.tier_slower, Tier::Reproduced);
        assert_eq!(r.covers, Some(true));
        assert_eq!(r.injected, "stress-delay=10%");
        assert!(r.stated.contains("injected into side B"), "{}", r.stated);
        assert!(r.stated.contains("--delay-pct 10"), "{}", r.stated);
    }

    #[test]
    fn two_replicates_a_side_never_decide_the_tier() {
        let a: Vec<&[f64]> = vec![&[0.0, 1.00], &[0.0, 1.01]];
        let b: Vec<&[f64]> = vec![&[0.0, 1.50], &[0.0, 1.51]];
        let r = compare_block(&runs(&a, &b), &design(2), 1, None).unwrap();
        assert_eq!(r.tier_same, Tier::Inconclusive);
        assert_eq!(r.tier_slower, Tier::Inconclusive);
    }
}
