//! `fslab compare BUNDLE --by AXIS`: the values of one axis of a bundle set against each
//! other, point by point (issue 43, part 4: kernel A/B). Both sides come from the same
//! run, so their replicates were interleaved in its randomised blocks (the run order
//! says so, or the comparison says it was not); each row is judged as `fslab compare`
//! judges two bundles ([`compare_runs`]), and gets what it could have detected at 90 %
//! power ([`crate::analysis::power`]) from its own interval over replicates. A host's
//! measured false-positive rate of the rule (an A/A calibration) is the CLI's to add.
//!
//! Pure: frames in, [`AxisComparison`]s out.

use super::compare::{compare_runs, CompareOptions, Comparison};
use super::interval::{Interval, Method};
use super::power::{of_interval, Power};
use super::reshape::filter_eq;
use super::stats::Unit;
use super::{str_values, AnalysisError};
use crate::spec::claim::Expect;
use polars::prelude::{Column, DataFrame};
use serde::Serialize;

/// One value of the axis against the base value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AxisComparison {
    pub axis: String,
    pub base_value: String,
    pub new_value: String,
    /// Point ids without `AXIS=value`: the rows of both sides that share the rest.
    pub comparison: Comparison,
    /// Per row of `comparison`: what the row could have detected at 90 % power, two-sided
    /// at α = 5 % (from its 95 % interval of new ÷ base over replicates); None for a row
    /// whose samples are iterations of one replicate (they say nothing about the next
    /// filesystem) or without an interval.
    pub power: Vec<Option<Power>>,
}

/// `id` without its `axis=value` part (`kernel=a,size=8k` → `size=8k`; `kernel=a` → ``).
fn without_axis(id: &str, axis: &str) -> String {
    let prefix = format!("{axis}=");
    id.split(',')
        .filter(|part| !part.starts_with(&prefix))
        .collect::<Vec<_>>()
        .join(",")
}

/// The axis's values in the order the runs first show them.
pub fn axis_values(runs: &DataFrame, axis: &str) -> Result<Vec<String>, AnalysisError> {
    if runs.column(axis).is_err() {
        return Err(AnalysisError::InvalidOption(format!(
            "--by {axis}: the bundle's runs have no axis `{axis}`; its columns: {}",
            runs.get_column_names()
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    // In plan order (the smallest point index a value has), else as the runs show them.
    let index = super::i64_values(runs, "runs", "point_index")
        .unwrap_or_else(|_| vec![None; runs.height()]);
    let mut out: Vec<(i64, usize, String)> = Vec::new();
    for (n, (v, i)) in str_values(runs, "runs", axis)?
        .into_iter()
        .zip(index)
        .enumerate()
    {
        let Some(v) = v else { continue };
        let key = i.unwrap_or(i64::MAX);
        match out.iter_mut().find(|(_, _, x)| *x == v) {
            Some(e) => e.0 = e.0.min(key),
            None => out.push((key, n, v)),
        }
    }
    out.sort();
    Ok(out.into_iter().map(|(_, _, v)| v).collect())
}

/// The runs whose `axis` is `value`, their point ids without the axis.
fn side(runs: &DataFrame, axis: &str, value: &str) -> Result<DataFrame, AnalysisError> {
    let mut df = filter_eq(runs, &[(axis, value)])?;
    let ids: Vec<String> = str_values(&df, "runs", "point_id")?
        .into_iter()
        .map(|id| without_axis(&id.unwrap_or_default(), axis))
        .collect();
    df.with_column(Column::new("point_id".into(), ids))?;
    Ok(df)
}

/// Every other value of `axis` against `base` (default: the first value the runs show).
pub fn compare_by_axis(
    runs: &DataFrame,
    axis: &str,
    base: Option<&str>,
    opts: &CompareOptions,
) -> Result<Vec<AxisComparison>, AnalysisError> {
    let values = axis_values(runs, axis)?;
    let base = match base {
        Some(b) if values.iter().any(|v| v == b) => b.to_string(),
        Some(b) => {
            return Err(AnalysisError::InvalidOption(format!(
                "--against {b}: axis `{axis}` has no such value; its values: {}",
                values.join(", ")
            )))
        }
        None => values.first().cloned().ok_or_else(|| {
            AnalysisError::InvalidOption(format!("--by {axis}: the axis has no value"))
        })?,
    };
    if values.len() < 2 {
        return Err(AnalysisError::InvalidOption(format!(
            "--by {axis}: the axis has one value ({base}); nothing to compare it with"
        )));
    }
    let base_runs = side(runs, axis, &base)?;
    values
        .iter()
        .filter(|v| **v != base)
        .map(|v| {
            let comparison = compare_runs(&base_runs, &side(runs, axis, v)?, None, None, opts)?;
            let power = comparison.rows.iter().map(row_power).collect();
            Ok(AxisComparison {
                axis: axis.to_string(),
                base_value: base.clone(),
                new_value: v.clone(),
                comparison,
                power,
            })
        })
        .collect()
}

/// What a calibration of this host says about `fslab compare`'s verdict, for a
/// comparison made with `opts` on `replicates` a side: its measured false-positive rate
/// (A/A) or power (injected), and every way the calibrated design differs from this one
/// (a rate measured on another metric, level, threshold or number of replicates is
/// another rule's).
pub fn calibration_note(
    rec: &crate::store::CalibrationRecord,
    opts: &CompareOptions,
    replicates: Option<usize>,
) -> String {
    use crate::store::RateEvent;
    let d = &rec.design;
    let (event, what) = match &d.injection {
        None => (
            RateEvent::CompareSignificant,
            "false-positive rate".to_string(),
        ),
        Some(i) => (
            RateEvent::CompareSignificantSlower,
            format!("power for an injected {}", i.label()),
        ),
    };
    let rate = rec
        .rates
        .iter()
        .find(|r| r.event == event)
        .map(super::calibration::rate_text)
        .unwrap_or_else(|| "not recorded".into());
    let mut s = format!(
        "calibrated on this host: `fslab compare`'s {what}: {rate}, over {} comparisons of {} replicates a side ({}, α = {}, threshold {} %)",
        rec.comparisons, d.per_side, d.metric, d.alpha, d.threshold_pct
    );
    let mut differs = Vec::new();
    if d.metric != opts.metric {
        differs.push(format!("metric {} here", opts.metric));
    }
    if (d.alpha - opts.alpha).abs() > 1e-12 {
        differs.push(format!("α = {} here", opts.alpha));
    }
    if (d.threshold_pct - opts.threshold_pct).abs() > 1e-12 {
        differs.push(format!("threshold {} % here", opts.threshold_pct));
    }
    if let Some(n) = replicates.filter(|n| *n != d.per_side as usize) {
        differs.push(format!("{n} replicates a side here"));
    }
    if !differs.is_empty() {
        s.push_str(&format!(
            "; NOT this comparison's design ({}): the rate is the calibrated rule's, not this one's",
            differs.join(", ")
        ));
    }
    s
}

impl AxisComparison {
    /// The comparison's table, then what each row could have detected.
    pub fn render_text(&self) -> String {
        let mut out = self.comparison.render_text();
        let lines: Vec<String> = self
            .comparison
            .rows
            .iter()
            .zip(&self.power)
            .map(|(r, p)| {
                let id = if r.point_id.is_empty() { "(the point)" } else { &r.point_id };
                match p {
                    Some(p) => format!("  {id}: {}", p.label("")),
                    None => format!(
                        "  {id}: no power: {}",
                        if r.base_unit != Unit::Replicate || r.new_unit != Unit::Replicate {
                            "the samples are iterations of one replicate, which say nothing about the next filesystem"
                        } else {
                            "the interval of new ÷ base is unbounded or reaches 0 (the spread swamps the base)"
                        }
                    ),
                }
            })
            .collect();
        out.push_str(
            "
What each row could have detected (new ÷ base, two-sided, α = 5 %):\n",
        );
        out.push_str(&lines.join("\n"));
        out.push('\n');
        out
    }
}

/// What a row could have detected, from its 95 % interval over replicates.
fn row_power(r: &super::compare::ComparisonRow) -> Option<Power> {
    if r.base_unit != Unit::Replicate || r.new_unit != Unit::Replicate {
        return None;
    }
    let (lo, hi, change) = (r.change_ci_low?, r.change_ci_high?, r.change_pct?);
    // A ratio's interval reaching 0 says the spread swamps the base: no factor is read back.
    if 1.0 + lo / 100.0 <= 0.0 {
        return None;
    }
    let interval = Interval {
        lo: 1.0 + lo / 100.0,
        hi: 1.0 + hi / 100.0,
        level: 0.95,
        method: r.change_ci_method.unwrap_or(Method::FiellerWelch),
    };
    let none = Expect {
        min: None,
        max: None,
    };
    of_interval(
        1.0 + change / 100.0,
        &interval,
        (r.new_n, r.base_n),
        &none,
        true,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::Significance;
    use crate::analysis::Warmup;
    use polars::prelude::df;

    fn runs() -> DataFrame {
        // Two kernels × two sizes, 4 replicates each, one iteration: kernel b is 20 %
        // slower at 8k and the same at 1m.
        let mut id = Vec::new();
        let (mut kernel, mut size, mut rep, mut it, mut wall, mut status) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for k in ["a", "b"] {
            for s in ["8k", "1m"] {
                for r in 1..=4i64 {
                    id.push(format!("kernel={k},size={s}"));
                    kernel.push(k);
                    size.push(s);
                    rep.push(r);
                    it.push(1i64);
                    let noise = [0.99, 1.01, 1.0, 1.005][r as usize - 1];
                    let slow = if k == "b" && s == "8k" { 1.2 } else { 1.0 };
                    wall.push(10.0 * noise * slow);
                    status.push("ok");
                }
            }
        }
        df!(
            "point_id" => id,
            "kernel" => kernel,
            "size" => size,
            "replicate" => rep,
            "iteration" => it,
            "wall_s" => wall,
            "status" => status,
        )
        .unwrap()
    }

    fn opts() -> CompareOptions {
        CompareOptions {
            metric: "wall_s".into(),
            warmup: Warmup::from_count(0),
            alpha: 0.05,
            threshold_pct: 2.0,
        }
    }

    #[test]
    fn each_value_is_set_against_the_base_on_the_rest_of_the_point() {
        let c = compare_by_axis(&runs(), "kernel", None, &opts()).unwrap();
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!((c.base_value.as_str(), c.new_value.as_str()), ("a", "b"));
        let ids: Vec<&str> = c
            .comparison
            .rows
            .iter()
            .map(|r| r.point_id.as_str())
            .collect();
        assert_eq!(ids, ["size=8k", "size=1m"]);
        assert_eq!(c.comparison.rows[0].significance, Significance::Significant);
        assert_ne!(c.comparison.rows[1].significance, Significance::Significant);
        // Four replicates a side at about 0.8 % spread: the design sees a few percent.
        let p = c.power[1].expect("replicates a side: a power");
        assert!(p.detectable > 1.0 && p.detectable < 1.05, "{p:?}");
        assert_eq!(p.replicates, 4);
    }

    #[test]
    fn a_wrong_axis_or_base_says_what_is_there() {
        let e = compare_by_axis(&runs(), "fs", None, &opts())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no axis `fs`") && e.contains("kernel"), "{e}");
        let e = compare_by_axis(&runs(), "kernel", Some("c"), &opts())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such value; its values: a, b"), "{e}");
        let b = compare_by_axis(&runs(), "kernel", Some("b"), &opts()).unwrap();
        assert_eq!(b[0].new_value, "a");
    }

    #[test]
    fn the_axis_part_leaves_the_id_wherever_it_is() {
        assert_eq!(without_axis("fs=xfs,kernel=a,n=1", "kernel"), "fs=xfs,n=1");
        assert_eq!(without_axis("kernel=a", "kernel"), "");
        assert_eq!(without_axis("kernelx=a,kernel=b", "kernel"), "kernelx=a");
    }
}
