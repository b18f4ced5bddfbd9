//! `kind: flat`: `stat(metric)` per value of the `across` column, and the largest ÷ the
//! smallest (`max_over_min`), or the slope of ln(metric) on ln(across) (`log_slope`,
//! measured in `slope`).

use super::{ClaimKind, Stated};
use crate::analysis::claims::error::MeasureError;
use crate::analysis::claims::evidence::{Evidence, Measure};
use crate::analysis::claims::measure::values_opt;
use crate::analysis::claims::select::{
    explain_empty, incomplete_points, published_values, sel_label, select, table,
};
use crate::analysis::claims::slope::measure_log_slope;
use crate::analysis::claims::units::{mean, side, Replication, SampleUnit, Side};
use crate::analysis::claims::words::{level_words, num, stat_name};
use crate::analysis::interval::bootstrap_groups;
use crate::analysis::str_values;
use crate::analysis::tiers::DEFAULT_MIN_FLAT_REPLICATES;
use crate::spec::claim::{Check, FlatCheck, FlatStatistic, PublishedFlat, Selection, Stat};
use indexmap::IndexMap;
use polars::prelude::{BooleanChunked, Column, DataFrame};

impl ClaimKind for FlatCheck {
    fn stated(&self) -> Stated<'_> {
        Stated {
            expect: &self.expect,
            at_scale: &self.at_scale,
            unit: &self.unit,
            note: self.note.as_deref(),
        }
    }

    fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError> {
        match self.statistic {
            FlatStatistic::LogSlope => measure_log_slope(self, ev),
            FlatStatistic::MaxOverMin => measure_flat(self, ev),
        }
    }

    fn published(&self, ev: &Evidence) -> Option<Result<f64, MeasureError>> {
        self.published
            .as_ref()
            .map(|p| published_flat(p, self.statistic, ev))
    }

    fn with_select(&self, sel: Selection) -> Option<Check> {
        let mut c = self.clone();
        c.select = sel;
        Some(Check::Flat(c))
    }
}

fn flat_groups(
    df: &DataFrame,
    across: &str,
    metric: &str,
    stat: Stat,
    what: &str,
) -> Result<Vec<(String, f64)>, MeasureError> {
    Ok(flat_samples(df, across, metric, what)?
        .into_iter()
        .filter_map(|(k, xs)| stat.apply(&xs).map(|s| (k, s)))
        .collect())
}

/// The metric's values by the `across` column's value, in order of appearance.
fn flat_samples(
    df: &DataFrame,
    across: &str,
    metric: &str,
    what: &str,
) -> Result<IndexMap<String, Vec<f64>>, MeasureError> {
    let keys = str_values(df, "claims", across).map_err(|source| MeasureError::Column {
        what: what.to_string(),
        source,
    })?;
    let v = values_opt(df, metric, what)?;
    let mut groups: IndexMap<String, Vec<f64>> = IndexMap::new();
    for (k, x) in keys.into_iter().zip(v) {
        if let (Some(k), Some(x)) = (k, x) {
            groups.entry(k).or_default().push(x);
        }
    }
    Ok(groups)
}

fn max_over_min(groups: &[(String, f64)]) -> Option<f64> {
    let max = groups.iter().map(|g| g.1).fold(f64::NEG_INFINITY, f64::max);
    let min = groups.iter().map(|g| g.1).fold(f64::INFINITY, f64::min);
    (groups.len() >= 2 && min > 0.0).then(|| max / min)
}

fn measure_flat(c: &FlatCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let what = format!("the `{}` table", c.table);
    let df = table(ev, &c.table)?;
    let rows = select(&df, &c.select, &what)?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    // Per value of `across`: its replicates' values (the statistic over each
    // (point, replicate)), and its rows pooled.
    let keys = str_values(&rows, "claims", &c.across).map_err(|source| MeasureError::Column {
        what: what.clone(),
        source,
    })?;
    let mut groups: IndexMap<String, Vec<usize>> = IndexMap::new();
    for (i, k) in keys.iter().enumerate() {
        if let Some(k) = k {
            groups.entry(k.clone()).or_default().push(i);
        }
    }
    let mut sides: Vec<(String, Side)> = Vec::new();
    for (k, idx) in &groups {
        let mask: BooleanChunked = (0..rows.height()).map(|i| Some(idx.contains(&i))).collect();
        let part = rows.filter(&mask)?;
        sides.push((k.clone(), side(&part, &c.metric, c.stat, &what)?));
    }
    sides.retain(|(_, s)| !s.rows.is_empty());
    let fewest = sides.iter().map(|(_, s)| s.replicates()).min().unwrap_or(0);
    let replicated = fewest >= 2;
    let per_group: Vec<(String, f64)> = sides
        .iter()
        .filter_map(|(k, s)| {
            let v = if replicated {
                mean(&s.per_replicate)
            } else {
                c.stat.apply(&s.rows)
            };
            v.map(|v| (k.clone(), v))
        })
        .collect();
    let value = max_over_min(&per_group).ok_or_else(|| {
        let ran: Vec<&str> = per_group.iter().map(|g| g.0.as_str()).collect();
        let why = explain_empty(ev, &c.table, &c.select);
        MeasureError::NoNumber(format!(
            "needs two or more values of `{}` with data; only {} ran ({why})",
            c.across,
            if ran.is_empty() {
                "none".to_string()
            } else {
                ran.join(", ")
            }
        ))
    })?;
    let stat = c.stat;
    // Replicated: each group's replicate values, summarised by their mean; else each
    // group's rows, summarised by the check's statistic (the iteration unit).
    let (samples, summary, replication): (Vec<Vec<f64>>, Stat, Replication) = if replicated {
        (
            sides.iter().map(|(_, s)| s.per_replicate.clone()).collect(),
            Stat::Mean,
            Replication {
                unit: SampleUnit::Replicate,
                replicates: (fewest, fewest),
                samples: (fewest, fewest),
            },
        )
    } else {
        let samples: Vec<Vec<f64>> = sides.iter().map(|(_, s)| s.rows.clone()).collect();
        let rows_fewest = samples.iter().map(Vec::len).min().unwrap_or(0);
        (
            samples,
            stat,
            Replication {
                unit: SampleUnit::Iteration,
                replicates: (fewest, fewest),
                samples: (rows_fewest, rows_fewest),
            },
        )
    };
    let interval = bootstrap_groups(
        &samples,
        &|g: &[Vec<f64>]| {
            let per: Vec<(String, f64)> = g
                .iter()
                .filter_map(|xs| summary.apply(xs).map(|s| (String::new(), s)))
                .collect();
            max_over_min(&per)
        },
        ev.level(),
        2000,
        0x5eed,
    );
    Ok(Measure {
        value,
        interval,
        replication,
        min_replicates: c.min_replicates.unwrap_or(DEFAULT_MIN_FLAT_REPLICATES),
        recipe: format!(
            "`{}` rows {}, grouped by `{}`; {}; the largest group ÷ the smallest; {} percentile bootstrap (2000 resamples, seed 0x5eed) within each group",
            c.table,
            sel_label(&c.select),
            c.across,
            if replicated {
                format!(
                    "{} of `{}` per (point, replicate), then the mean over the replicates",
                    stat_name(stat),
                    c.metric
                )
            } else {
                format!("{} of `{}` over the pooled rows", stat_name(stat), c.metric)
            },
            level_words(ev.level())
        ),
        incomplete: incomplete_points(ev, &c.table, &c.select),
        details: per_group
            .iter()
            .map(|(k, s)| {
                format!(
                    "{}={k}: {} {} = {}",
                    c.across,
                    stat_name(c.stat),
                    c.metric,
                    num(*s)
                )
            })
            .collect(),
    })
}

fn published_flat(
    p: &PublishedFlat,
    statistic: FlatStatistic,
    ev: &Evidence,
) -> Result<f64, MeasureError> {
    let df = (ev.published)(&p.dataset)?;
    let rows = select(&df, &p.select, &format!("published dataset {}", p.dataset))?;
    let secs = published_values(&rows, &p.metric)?;
    let mut rows = rows;
    rows.with_column(Column::new("__v".into(), secs))?;
    let groups = flat_groups(&rows, &p.across, "__v", p.stat, "published")?;
    match statistic {
        FlatStatistic::MaxOverMin => max_over_min(&groups),
        FlatStatistic::LogSlope => crate::analysis::claims::slope::published_log_slope(&groups),
    }
    .ok_or_else(|| MeasureError::NoNumber("fewer than two published groups".into()))
}
