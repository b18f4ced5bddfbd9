//! Calibration: how often fslab's verdicts call a difference that is not there on this
//! host, and how often they find one that is (issue 43, parts 2 and 3).
//!
//! `fslab calibrate` runs one point of an experiment as two sides, A and B, in N pairs
//! (block r is replicate r of each side, the order within the block random; each
//! replicate a fresh filesystem on fresh loop devices). Comparison c sets the replicates
//! of pairs (c − 1)·k + 1 … c·k of A against the same pairs' replicates of B and judges
//! them exactly as fslab judges any two sides:
//! - **`fslab compare`'s verdict** ([`crate::analysis::compare`]): Welch's t-test on the
//!   replicate means, Holm-adjusted p below α, and a change of at least the noise
//!   threshold for `significant`;
//! - **the tier rule** ([`crate::analysis::tiers::decide`], the claims' rule) on two
//!   claims about B ÷ A with its 95 % Fieller–Welch interval over the replicates: "B is
//!   within ± threshold of A" (`not reproduced` calls a difference) and "B is slower than
//!   A" (B ÷ A ≥ 1; `reproduced` detects a slowdown).
//!
//! With nothing injected (A/A) every called difference is a false positive. With a known
//! slowdown injected into B (`store::Injection`) the same rates are power, and the
//! interval's coverage of the injected ratio is checked. [`rates`] counts them with a
//! Clopper–Pearson interval ([`Proportion`]); what a design could detect at a measured
//! spread is `analysis::power`, shared with `fslab claims`.
//!
//! Pure: the runner (`run::calibrate`) calls [`compare_block`] after each block of pairs
//! and stores the rows and the [`record`].

mod comparison;
mod proportion;
mod rates;

pub use comparison::{
    compare_block, rows_frame, stated, table_metric, with_metric, with_table_metric,
    CalibrationRow, CPU_METRIC,
};
pub use proportion::{Proportion, RateInterval};
pub use rates::{happened, rate_text, rates};

use super::stats::{samples_by_point, Warmup};
use super::AnalysisError;
use crate::store::{CalibrationDesign, CalibrationRecord, Expected};
use polars::prelude::DataFrame;

/// The true ratio B ÷ A for the coverage check, and how it was obtained: 1 for A/A; the
/// injection's ratio when it is known by construction; 1 + seconds ÷ mean(A) for a known
/// number of seconds added (the mean over every replicate of side A so far, which is far
/// more precise than any one comparison); None when not known.
pub fn truth(
    runs: &DataFrame,
    design: &CalibrationDesign,
) -> Result<(Option<f64>, Option<String>), AnalysisError> {
    let Some(inj) = &design.injection else {
        return Ok((Some(1.0), Some("A/A: the true ratio is 1".into())));
    };
    Ok(match inj.expected() {
        Expected::Ratio(r) => (
            Some(r),
            Some(match inj {
                crate::store::Injection::CpuDelay { .. } => format!(
                    "{r} by construction on `cpu_s` (of the command's CPU time inside `fslab delay --cpu`; the wrapper's own start, on both sides alike, is not counted in)"
                ),
                crate::store::Injection::Delay { .. } => format!(
                    "{r} by construction (of the time the command takes inside `fslab delay`; the runner's own spawn and wait around it, on both sides alike, are not delayed)"
                ),
                crate::store::Injection::Medium { .. } => format!(
                    "{r} by construction of the disk model's charge (every request's; the host's own time per request, on both sides alike, is not scaled, so the measured ratio is {r} less the share of that time)"
                ),
                _ => format!(
                    "{r} by construction (of the time the injected program works; its start and exit are not delayed)"
                ),
            }),
        ),
        Expected::AddedSeconds(s) => {
            let warmup = Warmup::from_count(design.warmup);
            let runs = &with_metric(runs, &design.metric)?;
            let a: Vec<f64> = samples_by_point(runs, &design.metric)?
                .into_iter()
                .filter(|p| p.point_id == design.side_a)
                .flat_map(|p| p.units(warmup).steady)
                .collect();
            match super::stats::mean(&a) {
                Some(m) if m > 0.0 => (
                    Some(1.0 + s / m),
                    Some(format!(
                        "1 + {s} s added ÷ {} s, the mean of side A's {} replicates",
                        crate::analysis::fmt_sig(m, 5),
                        a.len()
                    )),
                ),
                _ => (None, Some("side A has no steady state yet".into())),
            }
        }
        Expected::Unknown => (
            None,
            Some("the injected effect is not known in advance: no coverage".into()),
        ),
    })
}

/// A calibration's rows and record computed again from its runs with another design
/// (another metric, or another number of replicates a side per comparison): every
/// comparison whose pairs all have rows.
pub fn reanalyse(
    runs: &DataFrame,
    design: &CalibrationDesign,
) -> Result<(Vec<CalibrationRow>, CalibrationRecord), AnalysisError> {
    let runs = with_metric(runs, &design.metric)?;
    let reps = super::i64_values(&runs, "runs", "replicate")?;
    let ids = super::str_values(&runs, "runs", "point_id")?;
    let most = |side: &str| {
        ids.iter()
            .zip(&reps)
            .filter(|(i, _)| i.as_deref() == Some(side))
            .filter_map(|(_, r)| *r)
            .max()
            .unwrap_or(0)
    };
    let pairs = most(&design.side_a).min(most(&design.side_b)).max(0) as u32;
    let k = design.per_side.max(1);
    let truth = truth(&runs, design)?;
    let rows = (1..=pairs / k)
        .map(|c| compare_block(&runs, design, c, truth.0))
        .collect::<Result<Vec<_>, _>>()?;
    let rec = record(design, &rows, truth);
    Ok((rows, rec))
}

/// The record of a calibration with these comparison rows.
pub fn record(
    design: &CalibrationDesign,
    rows: &[CalibrationRow],
    truth: (Option<f64>, Option<String>),
) -> CalibrationRecord {
    let mut d: Vec<f64> = rows.iter().filter_map(|r| r.detectable).collect();
    d.sort_by(f64::total_cmp);
    let detectable_median = (!d.is_empty()).then(|| {
        let m = d.len() / 2;
        if d.len() % 2 == 1 {
            d[m]
        } else {
            0.5 * (d[m - 1] + d[m])
        }
    });
    CalibrationRecord {
        design: design.clone(),
        comparisons: rows.len() as u32,
        detectable_median,
        truth: truth.0,
        truth_note: truth.1,
        rates: rates(rows, design),
        stated: stated(design),
    }
}
