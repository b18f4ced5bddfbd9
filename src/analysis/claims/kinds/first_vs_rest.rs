//! `kind: first_vs_rest`: per (point, replicate), the first iteration's metric ÷ the
//! mean of the later ones; per point the mean over its replicates, and the point
//! furthest from `expect` decides.

use super::{ClaimKind, Stated};
use crate::analysis::claims::error::MeasureError;
use crate::analysis::claims::evidence::{Evidence, Measure};
use crate::analysis::claims::measure::values_opt;
use crate::analysis::claims::select::{
    explain_empty, incomplete_points, published_values, sel_label, select, table,
};
use crate::analysis::claims::units::{mean, student_t, Replication, SampleUnit};
use crate::analysis::claims::words::{level_words, num};
use crate::analysis::str_values;
use crate::analysis::tiers::DEFAULT_MIN_REPLICATES;
use crate::spec::claim::{Check, Expect, FirstVsRestCheck, PublishedFirstVsRest, Selection};
use indexmap::IndexMap;
use polars::prelude::{Column, DataFrame};
use std::collections::BTreeMap;

impl ClaimKind for FirstVsRestCheck {
    fn stated(&self) -> Stated<'_> {
        Stated {
            expect: &self.expect,
            at_scale: &self.at_scale,
            unit: &self.unit,
            note: self.note.as_deref(),
        }
    }

    fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError> {
        measure_first_vs_rest(self, ev)
    }

    fn published(&self, ev: &Evidence) -> Option<Result<f64, MeasureError>> {
        self.published
            .as_ref()
            .map(|p| published_first_vs_rest(p, &self.expect, ev))
    }

    fn with_select(&self, sel: Selection) -> Option<Check> {
        let mut c = self.clone();
        c.select = sel;
        Some(Check::FirstVsRest(c))
    }
}

/// Series of (iteration, value) per group key.
fn series(
    df: &DataFrame,
    keys: &[String],
    iteration: &str,
    metric: &str,
    what: &str,
) -> Result<BTreeMap<String, Vec<(f64, f64)>>, MeasureError> {
    let it = values_opt(df, iteration, what)?;
    let v = values_opt(df, metric, what)?;
    let key_cols: Vec<Vec<Option<String>>> = keys
        .iter()
        .map(|k| {
            str_values(df, "claims", k).map_err(|source| MeasureError::Column {
                what: what.to_string(),
                source,
            })
        })
        .collect::<Result<_, _>>()?;
    let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in 0..df.height() {
        let (Some(i), Some(x)) = (it[row], v[row]) else {
            continue;
        };
        let key = keys
            .iter()
            .zip(&key_cols)
            .map(|(k, col)| {
                let v = col[row].clone().unwrap_or_default();
                // A point id already reads `axis=value,…`.
                if k == "point_id" {
                    v
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        out.entry(key).or_default().push((i, x));
    }
    for s in out.values_mut() {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(out)
}

/// First ÷ mean of the rest, per series.
fn first_vs_rest(series: &BTreeMap<String, Vec<(f64, f64)>>) -> Vec<(String, f64, usize)> {
    series
        .iter()
        .filter(|(_, s)| s.len() >= 2)
        .filter_map(|(k, s)| {
            let first = s[0].1;
            let rest: Vec<f64> = s[1..].iter().map(|x| x.1).collect();
            let mean = rest.iter().sum::<f64>() / rest.len() as f64;
            (mean != 0.0).then(|| (k.clone(), first / mean, s.len()))
        })
        .collect()
}

fn measure_first_vs_rest(c: &FirstVsRestCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let df = table(ev, &c.table)?;
    let rows = select(&df, &c.select, &format!("the `{}` table", c.table))?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    // Each replicate has its own first run (iteration 1 by the warm-up rule of
    // `analysis::stats`): one series per point and replicate, one ratio each.
    let mut rows = rows;
    if rows.column("replicate").is_err() {
        rows.with_column(Column::new("replicate".into(), vec![1i64; rows.height()]))?;
    }
    let s = series(
        &rows,
        &["point_id".to_string(), "replicate".to_string()],
        "iteration",
        &c.metric,
        &format!("the `{}` table", c.table),
    )?;
    // "The first run" is iteration 1: a replicate whose iteration 1 failed has none.
    let mut incomplete = incomplete_points(ev, &c.table, &c.select);
    let mut s = s;
    s.retain(|k, series| {
        let first_is_1 = series.first().is_some_and(|(i, _)| *i == 1.0);
        if !first_is_1 {
            incomplete.push(format!(
                "{k}: iteration 1 has no ok row, so its first run is unknown"
            ));
        }
        first_is_1
    });
    let ratios = first_vs_rest(&s);
    if ratios.is_empty() {
        return Err(MeasureError::MissingData(if incomplete.is_empty() {
            "no point has two or more iterations to compare".into()
        } else {
            incomplete.join("; ")
        }));
    }
    // point → its replicates' ratios.
    let mut by_point: IndexMap<String, Vec<f64>> = IndexMap::new();
    for (k, r, _) in &ratios {
        let point = k.rsplit_once(",replicate=").map_or(k.as_str(), |(p, _)| p);
        by_point.entry(point.to_string()).or_default().push(*r);
    }
    let means: Vec<f64> = by_point.values().filter_map(|v| mean(v)).collect();
    let value = c
        .expect
        .decisive(&means)
        .ok_or_else(|| MeasureError::NoNumber("no finite values".into()))?;
    let (point, reps) = by_point
        .iter()
        .find(|(_, v)| mean(v) == Some(value))
        .map(|(p, v)| (p.clone(), v.clone()))
        .unwrap_or_default();
    let n = reps.len();
    let interval = student_t(&reps, ev.level());
    let mut details: Vec<String> = by_point
        .iter()
        .map(|(p, v)| {
            format!(
                "{p}: first ÷ mean of the later iterations, per replicate: {} (mean {})",
                v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", "),
                mean(v).map_or_else(|| "—".into(), num)
            )
        })
        .collect();
    details.push(format!("the point that decides: {point}"));
    Ok(Measure {
        value,
        interval,
        replication: Replication {
            unit: SampleUnit::Replicate,
            replicates: (n, n),
            samples: (n, n),
        },
        min_replicates: c.min_replicates.unwrap_or(DEFAULT_MIN_REPLICATES),
        recipe: format!(
            "`{}` rows {}; per (point, replicate): `{}` of iteration 1 ÷ the mean of its later iterations; per point the mean over its replicates, the point furthest from `expect` decides; {} Student-t interval over that point's replicates",
            c.table,
            sel_label(&c.select),
            c.metric,
            level_words(ev.level())
        ),
        incomplete,
        details,
    })
}

fn published_first_vs_rest(
    p: &PublishedFirstVsRest,
    expect: &Expect,
    ev: &Evidence,
) -> Result<f64, MeasureError> {
    let df = (ev.published)(&p.dataset)?;
    let rows = select(&df, &p.select, &format!("published dataset {}", p.dataset))?;
    // Convert to seconds first so that mixed units compare.
    let secs = published_values(&rows, &p.metric)?;
    if secs.len() != rows.height() {
        return Err(MeasureError::NoNumber(
            "published rows without a value".into(),
        ));
    }
    let mut rows = rows;
    rows.with_column(Column::new("__v".into(), secs))?;
    let s = series(
        &rows,
        &p.by,
        &p.iteration,
        "__v",
        &format!("published dataset {}", p.dataset),
    )?;
    let vals: Vec<f64> = first_vs_rest(&s).iter().map(|r| r.1).collect();
    expect
        .decisive(&vals)
        .ok_or_else(|| MeasureError::NoNumber("no published series with two or more runs".into()))
}
