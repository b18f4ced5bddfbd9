//! `kind: io_summary`: claims over the block traces (`io_summary.parquet`, one row per
//! traced step and iteration), e.g. "a significant reduction in seeks/sec for ext4".

use super::{ClaimKind, Stated};
use crate::analysis::claims::error::MeasureError;
use crate::analysis::claims::evidence::{Evidence, Measure};
use crate::analysis::claims::measure::{ratio_of_sides, values_opt};
use crate::analysis::claims::select::{explain_empty, incomplete_points, sel_label, select, table};
use crate::analysis::claims::units::{mean, side, student_t, Replication, SampleUnit, Side};
use crate::analysis::claims::words::num;
use crate::analysis::claims::words::{level_words, stat_name};
use crate::analysis::interval::bootstrap;
use crate::analysis::io_trace::step_name;
use crate::analysis::str_values;
use crate::analysis::tiers::DEFAULT_MIN_REPLICATES;
use crate::spec::claim::Check;
use crate::spec::claim::{IoMetric, IoSummaryCheck, Selection};
use crate::store::{Manifest, RunStatus};
use polars::prelude::{BooleanChunked, Column, DataFrame};

const TABLE: &str = "io_summary";
/// The metric's values, added to the table under this name before selecting.
const VALUE: &str = "__io_metric";

fn measure_io_summary(c: &IoSummaryCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    if c.needs_medium && !on_a_disk_model(&ev.manifest) {
        return Err(MeasureError::Untestable(format!(
            "{} needs a disk model (`medium:`) under the traced devices, and this bundle's devices have none: on a loop device over an SSD or the page cache a seek costs next to nothing, so its count per second says nothing about a disk",
            c.metric.name()
        )));
    }
    let df = traced_rows(ev, c)?;
    let what = match &c.step {
        Some(s) => format!("{} of step {s}", c.metric.name()),
        None => c.metric.name().to_string(),
    };
    let side_of = |sel: &Selection| -> Result<Side, MeasureError> {
        let rows = select(&df, sel, "the `io_summary` table")?;
        let s = side(&rows, VALUE, c.stat, "the `io_summary` table")?;
        if s.rows.is_empty() {
            return Err(explain_empty(ev, TABLE, sel));
        }
        Ok(s)
    };
    let min = c.min_replicates.unwrap_or(DEFAULT_MIN_REPLICATES);
    let stat = c.stat;
    let line = |sel: &Selection, x: f64, s: &Side| {
        format!(
            "{} of {what} over {}: {} ({} replicates, {} traced iterations)",
            stat_name(stat),
            sel_label(sel),
            num(x),
            s.replicates(),
            s.rows.len()
        )
    };
    let step = c
        .step
        .as_deref()
        .map_or_else(|| "every traced step".to_string(), |s| format!("step {s}"));
    match (&c.select, &c.numerator, &c.denominator) {
        (Some(sel), None, None) => {
            let s = side_of(sel)?;
            let reps = s.replicates();
            let (x, interval, replication) = if reps >= 2 {
                let x = mean(&s.per_replicate)
                    .ok_or_else(|| MeasureError::MissingData("nothing to summarise".into()))?;
                let interval = student_t(&s.per_replicate, ev.level());
                let r = Replication {
                    unit: SampleUnit::Replicate,
                    replicates: (reps, reps),
                    samples: (reps, reps),
                };
                (x, interval, r)
            } else {
                let x = stat
                    .apply(&s.rows)
                    .ok_or_else(|| MeasureError::MissingData("nothing to summarise".into()))?;
                let interval =
                    bootstrap(&s.rows, &[], &|a, _| stat.apply(a), ev.level(), 2000, 0x5eed);
                let n = s.rows.len();
                let r = Replication {
                    unit: SampleUnit::Iteration,
                    replicates: (reps, reps),
                    samples: (n, n),
                };
                (x, interval, r)
            };
            Ok(Measure {
                value: x,
                details: vec![line(sel, x, &s)],
                interval,
                recipe: format!(
                    "`io_summary` rows {} of {step}; {} of `{}` {}",
                    sel_label(sel),
                    stat_name(stat),
                    c.metric.name(),
                    if replication.unit == SampleUnit::Replicate {
                        format!("per (point, replicate), then the mean over the replicates; {} Student-t interval over the replicates", level_words(ev.level()))
                    } else {
                        "over the pooled traced iterations; percentile bootstrap over them".to_string()
                    }
                ),
                replication,
                min_replicates: min,
                incomplete: incomplete_points(ev, TABLE, sel),
            })
        }
        (None, Some(num_sel), Some(den_sel)) => {
            let (nv, dv) = (side_of(num_sel)?, side_of(den_sel)?);
            let r = ratio_of_sides(
                &nv,
                &dv,
                stat,
                &format!("{what} over {}", sel_label(den_sel)),
                ev.level(),
            )?;
            let mut incomplete = incomplete_points(ev, TABLE, num_sel);
            for p in incomplete_points(ev, TABLE, den_sel) {
                if !incomplete.contains(&p) {
                    incomplete.push(p);
                }
            }
            Ok(Measure {
                value: r.value,
                details: vec![line(num_sel, r.sides.0, &nv), line(den_sel, r.sides.1, &dv)],
                recipe: format!(
                    "`io_summary` rows {} ÷ rows {} of {step}; {}",
                    sel_label(num_sel),
                    sel_label(den_sel),
                    r.recipe(stat, c.metric.name())
                ),
                interval: r.interval,
                replication: r.replication,
                min_replicates: min,
                incomplete,
            })
        }
        // Refused when the experiment is loaded (`validate`); a bundle's embedded copy
        // may predate that.
        _ => Err(c.shape().err().map_or_else(
            || MeasureError::NoNumber("the check is malformed".into()),
            MeasureError::Shape,
        )),
    }
}

/// Does any device of the bundle sit on a disk model?
fn on_a_disk_model(m: &Manifest) -> bool {
    m.environment
        .devices
        .iter()
        .any(|d| d.medium.as_ref().is_some_and(|md| md.substitution))
}

/// The `io_summary` rows the check counts, with the metric under [`VALUE`]: only the
/// chosen step, and not the iterations whose run failed.
fn traced_rows(ev: &Evidence, c: &IoSummaryCheck) -> Result<DataFrame, MeasureError> {
    let mut df = table(ev, TABLE).map_err(|e| MeasureError::Untraced(Box::new(e)))?;
    if let Some(step) = &c.step {
        let captures = str_values(&df, "claims", "capture")?;
        let mask: BooleanChunked = captures
            .iter()
            .map(|x| {
                Some(
                    x.as_deref()
                        .is_some_and(|l| l == step || step_name(l) == step),
                )
            })
            .collect();
        let kept = df.filter(&mask)?;
        if kept.height() == 0 {
            let mut have: Vec<&str> = captures.iter().flatten().map(|l| step_name(l)).collect();
            have.sort();
            have.dedup();
            return Err(MeasureError::MissingData(format!(
                "no step `{step}` was traced (traced: {})",
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.join(", ")
                }
            )));
        }
        df = kept;
    }
    df = without_failed_iterations(ev, df)?;
    let value = metric_values(&df, c.metric)?;
    df.with_column(Column::new(VALUE.into(), value))?;
    Ok(df)
}

/// Drop the rows of iterations whose `runs` row is not `ok` (a failed step's trace
/// counts requests of a run that did not do its work).
fn without_failed_iterations(ev: &Evidence, df: DataFrame) -> Result<DataFrame, MeasureError> {
    let Some(runs) = ev.tables.get("runs") else {
        return Ok(df);
    };
    let (Ok(pi), Ok(it), Ok(st)) = (
        crate::analysis::i64_values(runs, "claims", "point_index"),
        crate::analysis::i64_values(runs, "claims", "iteration"),
        str_values(runs, "claims", "status"),
    ) else {
        return Ok(df);
    };
    let failed: std::collections::BTreeSet<(i64, i64)> = (0..runs.height())
        .filter(|&r| !RunStatus::is_ok_str(st[r].as_deref()))
        .filter_map(|r| Some((pi[r]?, it[r]?)))
        .collect();
    if failed.is_empty() {
        return Ok(df);
    }
    let dpi = crate::analysis::i64_values(&df, "claims", "point_index")?;
    let dit = crate::analysis::i64_values(&df, "claims", "iteration")?;
    let mask: BooleanChunked = dpi
        .iter()
        .zip(&dit)
        .map(|(p, i)| match (p, i) {
            (Some(p), Some(i)) => Some(!failed.contains(&(*p, *i))),
            _ => Some(true),
        })
        .collect();
    Ok(df.filter(&mask)?)
}

/// The metric of every row (None where it is undefined, e.g. the mean seek of a step
/// without seeks).
fn metric_values(df: &DataFrame, m: IoMetric) -> Result<Vec<Option<f64>>, MeasureError> {
    let what = "the `io_summary` table";
    match m {
        IoMetric::MeanSeekBytes => {
            let dist = values_opt(df, "seek_distance_bytes", what)?;
            let seeks = values_opt(df, "seeks", what)?;
            Ok(dist
                .into_iter()
                .zip(seeks)
                .map(|(d, s)| match (d, s) {
                    (Some(d), Some(s)) if s > 0.0 => Some(d / s),
                    _ => None,
                })
                .collect())
        }
        other => values_opt(df, other.name(), what),
    }
}

impl ClaimKind for IoSummaryCheck {
    fn stated(&self) -> Stated<'_> {
        Stated {
            expect: &self.expect,
            at_scale: &self.at_scale,
            unit: self.unit(),
            note: self.note.as_deref(),
        }
    }

    fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError> {
        measure_io_summary(self, ev)
    }

    /// The posts give block traces as pictures, not numbers.
    fn published(&self, _ev: &Evidence) -> Option<Result<f64, MeasureError>> {
        None
    }

    fn with_select(&self, sel: Selection) -> Option<Check> {
        self.select.as_ref()?;
        let mut c = self.clone();
        c.select = Some(sel);
        Some(Check::IoSummary(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::claims::check_claim;
    use crate::analysis::tiers::Tier;
    use crate::spec::Claim;
    use crate::store::{DeviceInfo, MediumRecord, PointRecord};
    use indexmap::IndexMap;
    use polars::df;

    fn point(index: usize, fs: &str) -> PointRecord {
        PointRecord {
            id: format!("fs={fs}"),
            index,
            vars: [("fs".to_string(), serde_json::Value::from(fs))]
                .into_iter()
                .collect(),
            status: crate::store::PointStatus::Ok,
            ..Default::default()
        }
    }

    /// ext3 (point 0): e2fsck at 80, 82, 78 seeks/s; ext4 (point 1): 40, 41, 39, and a
    /// 4th iteration that failed (1000, must not count); a traced setup step (`fill`,
    /// no iteration) on each that the `step:` leaves out.
    fn evidence(medium: bool) -> Evidence {
        let io = df!(
            "point_id" => ["fs=ext3", "fs=ext3", "fs=ext3", "fs=ext3", "fs=ext4", "fs=ext4", "fs=ext4", "fs=ext4", "fs=ext4"],
            "point_index" => [0i64, 0, 0, 0, 1, 1, 1, 1, 1],
            "iteration" => [None, Some(1i64), Some(2), Some(3), None, Some(1), Some(2), Some(3), Some(4)],
            "capture" => ["setup-03-fill", "workload-01-e2fsck-it01", "workload-01-e2fsck-it02", "workload-01-e2fsck-it03", "setup-03-fill", "workload-01-e2fsck-it01", "workload-01-e2fsck-it02", "workload-01-e2fsck-it03", "workload-01-e2fsck-it04"],
            "seeks" => [5u64, 800, 820, 780, 5, 400, 410, 390, 10_000],
            "seek_distance_bytes" => [0u64, 800_000, 820_000, 780_000, 0, 4_000_000, 4_100_000, 3_900_000, 1],
            "seeks_per_s" => [9999.0, 80.0, 82.0, 78.0, 9999.0, 40.0, 41.0, 39.0, 1000.0],
        )
        .unwrap();
        let runs = df!(
            "point_id" => ["fs=ext3", "fs=ext3", "fs=ext3", "fs=ext4", "fs=ext4", "fs=ext4", "fs=ext4"],
            "point_index" => [0i64, 0, 0, 1, 1, 1, 1],
            "iteration" => [1i64, 2, 3, 1, 2, 3, 4],
            "fs" => ["ext3", "ext3", "ext3", "ext4", "ext4", "ext4", "ext4"],
            "wall_s" => [1.0; 7],
            "status" => ["ok", "ok", "ok", "ok", "ok", "ok", "failed"],
        )
        .unwrap();
        let mut m = Manifest::default();
        m.experiment.id = "e".into();
        m.matrix_axes = vec!["fs".into()];
        m.points = vec![point(0, "ext3"), point(1, "ext4")];
        m.environment.devices = vec![DeviceInfo {
            name: "data".into(),
            medium: medium.then(|| MediumRecord {
                model: "hdd-2008".into(),
                params: Some(serde_json::json!({ "seek_avg_ms": 8.5 })),
                substitution: true,
            }),
            ..Default::default()
        }];
        Evidence {
            manifest: m,
            tables: [("io_summary".to_string(), io), ("runs".to_string(), runs)]
                .into_iter()
                .collect(),
            vars: IndexMap::new(),
            published: std::rc::Rc::new(crate::published::load),
            scale: None,
        }
    }

    fn claim(yaml: &str) -> Claim {
        Claim {
            id: "seeks".into(),
            text: "fewer seeks/s on ext4".into(),
            quote: None,
            check: Some(serde_yaml::from_str(yaml).unwrap()),
            not_measured: None,
            needs: None,
            draft: false,
        }
    }

    const RATIO: &str = r#"
kind: io_summary
metric: seeks_per_s
step: e2fsck
numerator: { fs: ext4 }
denominator: { fs: ext3 }
expect: { max: 0.8 }
needs_medium: true
"#;

    #[test]
    fn a_ratio_of_seeks_per_second_counts_the_steps_ok_iterations() {
        let v = check_claim(&claim(RATIO), &evidence(true));
        // mean(40, 41, 39) / mean(80, 82, 78) = 40 / 80 (the failed 1000 and the fill
        // step's 9999 left out).
        assert!((v.measured.unwrap() - 0.5).abs() < 1e-12, "{v:?}");
        assert_eq!(v.kind, "io_summary");
        assert_eq!(v.unit, "x");
        assert!(
            v.details[0].contains("(1 replicates, 3 traced iterations)"),
            "{:?}",
            v.details
        );
        // Three iterations a side with a narrow spread: the interval over them lies below
        // 0.8, but they are iterations of one filesystem each: never decisive.
        let i = v.interval.expect("an interval");
        assert!(i.lo < 0.5 && i.hi > 0.5 && i.hi < 0.8, "{i:?}");
        assert_eq!(v.tier, Tier::Inconclusive, "{}", v.reason);
        assert!(
            v.reason.contains("unit: iteration of one filesystem"),
            "{}",
            v.reason
        );
        assert!(v.published.is_none());
    }

    #[test]
    fn without_a_disk_model_a_claim_that_needs_one_is_not_applicable() {
        let v = check_claim(&claim(RATIO), &evidence(false));
        assert_eq!(v.tier, Tier::NotApplicable, "{v:?}");
        assert!(v.reason.contains("needs a disk model"), "{}", v.reason);
        assert!(v.measured.is_none());
    }

    #[test]
    fn one_value_over_a_selection_with_its_metrics_unit() {
        let v = check_claim(
            &claim(
                "kind: io_summary\nmetric: mean_seek_bytes\nstat: median\nstep: e2fsck\nselect: { fs: ext4 }\nexpect: { min: 5000 }\n",
            ),
            &evidence(true),
        );
        // 4e6/400, 4.1e6/410, 3.9e6/390: 10,000 bytes each.
        assert!((v.measured.unwrap() - 10_000.0).abs() < 1e-9, "{v:?}");
        assert_eq!(v.unit, "bytes");
        assert_eq!(v.tier, Tier::Inconclusive);
        assert!(v.interval.is_some(), "{v:?}");
    }

    #[test]
    fn a_step_that_was_not_traced_is_named_with_those_that_were() {
        let v = check_claim(
            &claim("kind: io_summary\nmetric: seeks\nstep: fsck\nselect: { fs: ext3 }\n"),
            &evidence(true),
        );
        assert_eq!(v.tier, Tier::NotApplicable);
        assert!(
            v.reason
                .contains("no step `fsck` was traced (traced: e2fsck, fill)"),
            "{}",
            v.reason
        );
        let mut ev = evidence(true);
        ev.tables.remove("io_summary");
        let v = check_claim(&claim(RATIO), &ev);
        assert!(v.reason.contains("needs `trace: io`"), "{}", v.reason);
    }

    const EXP: &str = "id: e\ntitle: t\ndevices:\n  data: { size: 64MiB }\nworkload:\n  run: 'true'\nclaims:\n  - id: fine\n    text: a\n    check: { kind: ratio, numerator: { a: 1 }, denominator: { a: 2 } }\n  - id: seeks\n    text: b\n    check:\n      kind: io_summary\n      metric: seeks_per_s\n";

    #[test]
    fn a_malformed_check_is_refused_at_load_with_its_line() {
        let load = |tail: &str| {
            let text = format!("{EXP}{tail}");
            crate::spec::Experiment::from_str_named(&text, "x.yaml").map(|_| ())
        };
        load("      numerator: { fs: ext4 }\n      denominator: { fs: ext3 }\n").unwrap();
        // Half a ratio: pointed at the numerator's line (line 16).
        let e = load("      numerator: { fs: ext4 }\n").unwrap_err();
        assert_eq!((e.line, e.column), (16, 7), "{e}");
        assert!(
            e.message.contains("claim `seeks`") && e.message.contains("needs a `denominator`"),
            "{e}"
        );
        assert!(e.message.contains("write `select"), "{e}");
        // An unknown metric: at the word, with serde's list of the metrics.
        let e = crate::spec::Experiment::from_str_named(
            &EXP.replace("seeks_per_s", "seek_rate"),
            "x.yaml",
        )
        .unwrap_err();
        assert_eq!(e.line, 15, "{e}");
        assert!(e.message.contains("unknown variant `seek_rate`"), "{e}");
        assert!(e.message.contains("seeks_per_s"), "{e}");
        // An unknown kind.
        let e = crate::spec::Experiment::from_str_named(
            &EXP.replace("kind: ratio", "kind: ratios"),
            "x.yaml",
        )
        .unwrap_err();
        assert_eq!(e.line, 10, "{e}");
        assert!(e.message.contains("io_summary"), "{e}");
        assert!(e.help.unwrap().contains("`ratio`"));
    }
}
