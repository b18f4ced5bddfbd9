//! The kinds of check, each measured on the bundle and on the published data, with the
//! replicate as the unit (`units`).

use super::error::MeasureError;
use super::evidence::{Evidence, Measure};
use super::select::{
    explain_empty, incomplete_points, published_selected, published_values, sel_label, select,
    selected_rows, table,
};
use super::units::{mean, side, student_t, Replication, SampleUnit, Side};
use super::words::{num, stat_name};
use crate::analysis::interval::{bootstrap, bootstrap_groups, fieller_welch, Interval, NoInterval};
use crate::analysis::tiers::{DEFAULT_MIN_FLAT_REPLICATES, DEFAULT_MIN_REPLICATES};
use crate::analysis::{f64_values, str_values};
use crate::blockmap::summary::file_summary;
use crate::extent::Extent;
use crate::spec::claim::{
    Expect, FirstVsRestCheck, FlatCheck, FlatStatistic, LayoutCheck, PublishedFirstVsRest,
    PublishedFlat, PublishedLayout, PublishedRatio, RatioCheck, Selection, Stat,
};
use indexmap::IndexMap;
use polars::prelude::{BooleanChunked, Column, DataFrame};
use std::collections::BTreeMap;

pub(super) fn measure_ratio(c: &RatioCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let what = format!("the `{}` table", c.table);
    let num_rows = selected_rows(ev, &c.table, &c.numerator)?;
    let den_rows = selected_rows(ev, &c.table, &c.denominator)?;
    let n = side(&num_rows, &c.metric, c.stat, &what)?;
    let d = side(&den_rows, &c.metric, c.stat, &what)?;
    if n.rows.is_empty() {
        return Err(explain_empty(ev, &c.table, &c.numerator));
    }
    if d.rows.is_empty() {
        return Err(explain_empty(ev, &c.table, &c.denominator));
    }
    let r = ratio_of_sides(&n, &d, c.stat, &sel_label(&c.denominator))?;
    let mut incomplete = incomplete_points(ev, &c.table, &c.numerator);
    for p in incomplete_points(ev, &c.table, &c.denominator) {
        if !incomplete.contains(&p) {
            incomplete.push(p);
        }
    }
    let line = |sel: &Selection, s: &Side, x: f64| {
        format!(
            "{} of {} over {}: {} ({} replicates, {} rows)",
            stat_name(c.stat),
            c.metric,
            sel_label(sel),
            num(x),
            s.replicates(),
            s.rows.len()
        )
    };
    let recipe = format!(
        "`{}` rows {} ÷ rows {}; {}",
        c.table,
        sel_label(&c.numerator),
        sel_label(&c.denominator),
        r.recipe(c.stat, &c.metric)
    );
    Ok(Measure {
        value: r.value,
        recipe,
        interval: r.interval,
        replication: r.replication,
        min_replicates: c.min_replicates.unwrap_or(DEFAULT_MIN_REPLICATES),
        incomplete,
        details: vec![
            line(&c.numerator, &n, r.sides.0),
            line(&c.denominator, &d, r.sides.1),
        ],
    })
}

/// A ratio of two sides and how it was computed.
pub(super) struct SidesRatio {
    pub(super) value: f64,
    /// Each side's number (the mean over replicates, or the statistic over the rows).
    pub(super) sides: (f64, f64),
    pub(super) interval: Result<Interval, NoInterval>,
    pub(super) replication: Replication,
}

impl SidesRatio {
    /// How the number and its interval were computed, for a reader who recomputes it.
    pub(super) fn recipe(&self, stat: Stat, metric: &str) -> String {
        match self.replication.unit {
            SampleUnit::Replicate => format!(
                "{} of `{metric}` per (point, replicate), then the mean over the replicates; 95 % Fieller–Welch interval over the replicates",
                stat_name(stat)
            ),
            _ => format!(
                "{} of `{metric}` over the pooled rows; interval over the rows ({})",
                stat_name(stat),
                self.replication.unit.label()
            ),
        }
    }
}

/// numerator ÷ denominator with replicates as the unit when both sides have two or
/// more; else the statistic over the pooled rows, labelled as the iteration unit.
pub(super) fn ratio_of_sides(
    n: &Side,
    d: &Side,
    stat: Stat,
    den_label: &str,
) -> Result<SidesRatio, MeasureError> {
    let reps = (n.replicates(), d.replicates());
    if reps.0 >= 2 && reps.1 >= 2 {
        let (Some(a), Some(b)) = (mean(&n.per_replicate), mean(&d.per_replicate)) else {
            return Err(MeasureError::MissingData("nothing to summarise".into()));
        };
        if b == 0.0 {
            return Err(MeasureError::NoNumber(format!(
                "the denominator ({den_label}) is 0"
            )));
        }
        return Ok(SidesRatio {
            value: a / b,
            sides: (a, b),
            interval: fieller_welch(&n.per_replicate, &d.per_replicate, 0.95),
            replication: Replication {
                unit: SampleUnit::Replicate,
                replicates: reps,
                samples: reps,
            },
        });
    }
    let (Some(a), Some(b)) = (stat.apply(&n.rows), stat.apply(&d.rows)) else {
        return Err(MeasureError::MissingData("nothing to summarise".into()));
    };
    if b == 0.0 {
        return Err(MeasureError::NoNumber(format!(
            "the denominator ({den_label}) is 0"
        )));
    }
    let interval = match stat {
        Stat::Mean => fieller_welch(&n.rows, &d.rows, 0.95),
        s => bootstrap(
            &n.rows,
            &d.rows,
            &|x, y| Some(s.apply(x)? / s.apply(y)?),
            0.95,
            2000,
            0x5eed,
        ),
    };
    Ok(SidesRatio {
        value: a / b,
        sides: (a, b),
        interval,
        replication: Replication {
            unit: SampleUnit::Iteration,
            replicates: reps,
            samples: (n.rows.len(), d.rows.len()),
        },
    })
}

pub(super) fn published_ratio(p: &PublishedRatio, ev: &Evidence) -> Result<f64, MeasureError> {
    let n = published_selected(ev, &p.dataset, &p.metric, &p.numerator)?;
    let d = published_selected(ev, &p.dataset, &p.metric, &p.denominator)?;
    match (p.stat.apply(&n), p.stat.apply(&d)) {
        (Some(n), Some(d)) if d != 0.0 => Ok(n / d),
        _ => Err(MeasureError::NoNumber(
            "the published denominator is 0 or empty".into(),
        )),
    }
}

/// Series of (iteration, value) per group key.
pub(super) fn series(
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

pub(super) fn values_opt(
    df: &DataFrame,
    col: &str,
    what: &str,
) -> Result<Vec<Option<f64>>, MeasureError> {
    f64_values(df, "claims", col).map_err(|e| MeasureError::column(e, what, col))
}

/// First ÷ mean of the rest, per series.
pub(super) fn first_vs_rest(
    series: &BTreeMap<String, Vec<(f64, f64)>>,
) -> Vec<(String, f64, usize)> {
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

pub(super) fn measure_first_vs_rest(
    c: &FirstVsRestCheck,
    ev: &Evidence,
) -> Result<Measure, MeasureError> {
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
    let interval = student_t(&reps);
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
            "`{}` rows {}; per (point, replicate): `{}` of iteration 1 ÷ the mean of its later iterations; per point the mean over its replicates, the point furthest from `expect` decides; 95 % Student-t interval over that point's replicates",
            c.table,
            sel_label(&c.select),
            c.metric
        ),
        incomplete,
        details,
    })
}

pub(super) fn published_first_vs_rest(
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

pub(super) fn flat_groups(
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

pub(super) fn max_over_min(groups: &[(String, f64)]) -> Option<f64> {
    let max = groups.iter().map(|g| g.1).fold(f64::NEG_INFINITY, f64::max);
    let min = groups.iter().map(|g| g.1).fold(f64::INFINITY, f64::min);
    (groups.len() >= 2 && min > 0.0).then(|| max / min)
}

pub(super) fn measure_flat(c: &FlatCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
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
        0.95,
        2000,
        0x5eed,
    );
    Ok(Measure {
        value,
        interval,
        replication,
        min_replicates: c.min_replicates.unwrap_or(DEFAULT_MIN_FLAT_REPLICATES),
        recipe: format!(
            "`{}` rows {}, grouped by `{}`; {}; the largest group ÷ the smallest; 95 % percentile bootstrap (2000 resamples, seed 0x5eed) within each group",
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
            }
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

pub(super) fn published_flat(
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
        FlatStatistic::LogSlope => super::slope::published_log_slope(&groups),
    }
    .ok_or_else(|| MeasureError::NoNumber("fewer than two published groups".into()))
}

/// One block run of a file: logical start, physical start, length (all in blocks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub logical: f64,
    pub physical: f64,
    pub length: f64,
}

/// Blocks, the share of consecutive block pairs (in logical order) that are not
/// physically adjacent, and the contiguous pieces, over one listing. Several segments
/// (a listing with its middle left out) are measured each on its own and summed.
///
/// The pieces are blockmap's fragments ([`file_summary`], filefrag's rule) of the runs
/// taken as extents in block units; each fragment boundary is one discontiguous pair
/// among the `blocks - 1` pairs of a segment.
pub fn discontiguity(segments: &[Vec<Run>]) -> Option<(f64, f64, usize)> {
    let mut pairs = 0.0;
    let mut breaks = 0.0;
    let mut blocks = 0.0;
    let mut fragments = 0usize;
    for seg in segments {
        if seg.is_empty() {
            continue;
        }
        let rows: Vec<Extent> = seg
            .iter()
            .enumerate()
            .map(|(i, r)| Extent {
                index: i as u64,
                logical_bytes: r.logical.round() as u64,
                physical_bytes: Some(r.physical.round() as u64),
                length_bytes: r.length.round() as u64,
                ..Extent::default()
            })
            .collect();
        let refs: Vec<&Extent> = rows.iter().collect();
        let summary = file_summary("", &refs);
        let n: f64 = seg.iter().map(|r| r.length).sum();
        blocks += n;
        pairs += n - 1.0;
        fragments += summary.fragments as usize;
        breaks += summary.fragments.saturating_sub(1) as f64;
    }
    (pairs > 0.0).then(|| (breaks / pairs, blocks, fragments))
}

pub(super) fn measure_layout(c: &LayoutCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let df = table(ev, &c.table)?;
    let rows = select(&df, &c.select, &format!("the `{}` table", c.table))?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    let what = format!("the `{}` table", c.table);
    let pidx = values_opt(&rows, "point_index", &what)?;
    let pid = str_values(&rows, "claims", "point_id")?;
    let capture =
        str_values(&rows, "claims", "capture").unwrap_or_else(|_| vec![None; rows.height()]);
    let inode = str_values(&rows, "claims", "inode").unwrap_or_else(|_| vec![None; rows.height()]);
    let path = str_values(&rows, "claims", "path").unwrap_or_else(|_| vec![None; rows.height()]);
    let flags = str_values(&rows, "claims", "flags").unwrap_or_else(|_| vec![None; rows.height()]);
    let logical = values_opt(&rows, "logical_bytes", &what)?;
    let physical = values_opt(&rows, "physical_bytes", &what)?;
    let length = values_opt(&rows, "length_bytes", &what)?;
    let bs = c.block_bytes.max(1) as f64;
    // point → file → runs
    let mut files: BTreeMap<(i64, String), BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for r in 0..rows.height() {
        if flags[r]
            .as_deref()
            .is_some_and(|f| f.split(',').any(|x| x.trim() == "metadata"))
        {
            continue;
        }
        let (Some(l), Some(p), Some(n)) = (logical[r], physical[r], length[r]) else {
            continue;
        };
        let point = (
            pidx[r].unwrap_or(-1.0) as i64,
            pid[r].clone().unwrap_or_default(),
        );
        let file = format!(
            "{}:{}:{}",
            capture[r].clone().unwrap_or_default(),
            inode[r].clone().unwrap_or_default(),
            path[r].clone().unwrap_or_default()
        );
        files
            .entry(point)
            .or_default()
            .entry(file)
            .or_default()
            .push(Run {
                logical: l / bs,
                physical: p / bs,
                length: n / bs,
            });
    }
    if files.is_empty() {
        return Err(MeasureError::MissingData(
            "no data extents in the selection".into(),
        ));
    }
    let mut vals = Vec::new();
    let mut details = Vec::new();
    let mut too_small = Vec::new();
    for ((_, id), fs) in &files {
        let Some((name, runs)) = fs.iter().max_by(|a, b| {
            let sa: f64 = a.1.iter().map(|r| r.length).sum();
            let sb: f64 = b.1.iter().map(|r| r.length).sum();
            sa.total_cmp(&sb)
        }) else {
            continue;
        };
        let blocks: f64 = runs.iter().map(|r| r.length).sum();
        let label = name
            .split(':')
            .nth(2)
            .filter(|s| !s.is_empty())
            .map_or_else(
                || format!("inode {}", name.split(':').nth(1).unwrap_or("?")),
                str::to_string,
            );
        if blocks < c.min_blocks as f64 || blocks < 2.0 {
            too_small.push(format!(
                "{id}: largest file ({label}) has {} blocks",
                num(blocks)
            ));
            continue;
        }
        if let Some((d, b, frags)) = discontiguity(std::slice::from_ref(runs)) {
            vals.push(d);
            details.push(format!(
                "{id}: largest file {label}: {} blocks in {frags} contiguous runs, discontiguity {}",
                num(b),
                num(d)
            ));
        }
    }
    if vals.is_empty() {
        return Err(MeasureError::NoNumber(format!(
            "the files are too small to show a layout (need ≥ {} blocks): {}",
            c.min_blocks.max(2),
            too_small.join("; ")
        )));
    }
    details.extend(too_small);
    let value = c
        .expect
        .decisive(&vals)
        .ok_or_else(|| MeasureError::NoNumber("no finite values".into()))?;
    // The block map is read once per point: no samples to resample. The number decides
    // by itself, and the verdict says that it has no interval and why.
    Ok(Measure {
        value,
        details,
        interval: Err(NoInterval::DeterministicLayout),
        replication: Replication {
            unit: SampleUnit::Reading,
            replicates: (1, 1),
            samples: (1, 1),
        },
        min_replicates: 1,
        recipe: format!(
            "`{}` rows {} without `metadata` extents; per point the largest file by blocks ({} bytes a block); its discontiguous block pairs ÷ its block pairs (filefrag's fragment rule); the point furthest from `expect` decides",
            c.table,
            sel_label(&c.select),
            c.block_bytes
        ),
        incomplete: incomplete_points(ev, &c.table, &c.select),
    })
}

pub(super) fn published_layout(
    p: &PublishedLayout,
    expect: &Expect,
    ev: &Evidence,
) -> Result<f64, MeasureError> {
    let df = (ev.published)(&p.dataset)?;
    let rows = select(&df, &p.select, &format!("published dataset {}", p.dataset))?;
    let what = format!("published dataset {}", p.dataset);
    let column = |source| MeasureError::Column {
        what: what.clone(),
        source,
    };
    let kind = str_values(&rows, "claims", "kind").map_err(column)?;
    let seg = str_values(&rows, "claims", "segment").map_err(column)?;
    let fs = str_values(&rows, "claims", "fs").unwrap_or_else(|_| vec![None; rows.height()]);
    let l = values_opt(&rows, "logical_start", &what)?;
    let ph = values_opt(&rows, "physical_start", &what)?;
    let n = values_opt(&rows, "length", &what)?;
    let mut by_fs: BTreeMap<String, BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for r in 0..rows.height() {
        if kind[r].as_deref() != Some("data") {
            continue;
        }
        let (Some(l), Some(p), Some(n)) = (l[r], ph[r], n[r]) else {
            continue;
        };
        by_fs
            .entry(fs[r].clone().unwrap_or_default())
            .or_default()
            .entry(seg[r].clone().unwrap_or_default())
            .or_default()
            .push(Run {
                logical: l,
                physical: p,
                length: n,
            });
    }
    let vals: Vec<f64> = by_fs
        .values()
        .filter_map(|segs| {
            let v: Vec<Vec<Run>> = segs.values().cloned().collect();
            discontiguity(&v).map(|d| d.0)
        })
        .collect();
    expect
        .decisive(&vals)
        .ok_or_else(|| MeasureError::NoNumber("no published block listing in the selection".into()))
}
