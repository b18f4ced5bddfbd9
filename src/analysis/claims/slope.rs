//! `flat` with `statistic: log_slope`: the slope of ln(metric) on ln(across), a
//! statistic whose bias does not grow with noise or with the number of groups (the
//! largest ÷ the smallest of group means does both).
//!
//! With replicates, block r holds the r-th replicate of every point (the runner's
//! randomised blocks): one slope per block, and a Student-t interval over the blocks.
//! With one replicate the slope is fitted over every row, with its ordinary
//! least-squares interval, and labelled as the iteration unit (never decisive).

use super::evidence::{Evidence, Measure};
use super::select::{explain_empty, incomplete_points, sel_label, select, table};
use super::units::{replicate_keys, student_t, Replication, SampleUnit};
use super::words::num;
use super::words::{level_words, stat_name};
use super::MeasureError;
use crate::analysis::interval::{Interval, Method, NoInterval};
use crate::analysis::stats::t_quantile;
use crate::analysis::tiers::DEFAULT_MIN_FLAT_REPLICATES;
use crate::analysis::{f64_values, str_values};
use crate::spec::claim::FlatCheck;
use polars::prelude::DataFrame;
use std::collections::BTreeMap;

/// A value of the `across` column as a number: `8k` = 8192, `1m` = 1048576 (binary
/// suffixes, as mkfs and xfs_io read them), a plain number, or a size bytesize reads.
pub(super) fn across_number(s: &str) -> Option<f64> {
    let t = s.trim();
    if let Ok(x) = t.parse::<f64>() {
        return Some(x);
    }
    let lower = t.to_ascii_lowercase();
    let (digits, mult) = match lower.chars().last()? {
        'k' => (&lower[..lower.len() - 1], 1024.0),
        'm' => (&lower[..lower.len() - 1], 1024.0 * 1024.0),
        'g' => (&lower[..lower.len() - 1], 1024.0 * 1024.0 * 1024.0),
        _ => return crate::spec::parse_size(t).ok().map(|b| b as f64),
    };
    digits.trim().parse::<f64>().ok().map(|x| x * mult)
}

/// Ordinary least squares of y on x: slope and its standard error (None below three
/// points or without spread in x).
pub(super) fn ols(points: &[(f64, f64)]) -> Option<(f64, Option<f64>)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = sxy / sxx;
    let se = (points.len() > 2).then(|| {
        let a = my - b * mx;
        let sse: f64 = points.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
        (sse / (n - 2.0) / sxx).sqrt()
    });
    Some((b, se))
}

pub(super) fn measure_log_slope(c: &FlatCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let what = format!("the `{}` table", c.table);
    let df = table(ev, &c.table)?;
    let rows: DataFrame = select(&df, &c.select, &what)?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    let across = str_values(&rows, "claims", &c.across).map_err(|source| MeasureError::Column {
        what: what.clone(),
        source,
    })?;
    let values = f64_values(&rows, "claims", &c.metric)
        .map_err(|e| MeasureError::column(e, &what, &c.metric))?;
    let keys = replicate_keys(&rows);
    // (point, replicate) → (ln x, the values of that replicate's rows)
    let mut groups: BTreeMap<(i64, i64), (f64, Vec<f64>)> = BTreeMap::new();
    let mut unreadable = Vec::new();
    for ((k, a), v) in keys.into_iter().zip(across).zip(values) {
        let (Some(a), Some(v)) = (a, v) else { continue };
        if !(v.is_finite() && v > 0.0) {
            continue;
        }
        let Some(x) = across_number(&a).filter(|x| *x > 0.0) else {
            if !unreadable.contains(&a) {
                unreadable.push(a);
            }
            continue;
        };
        groups.entry(k).or_insert((x.ln(), Vec::new())).1.push(v);
    }
    if !unreadable.is_empty() {
        return Err(MeasureError::NoNumber(format!(
            "`{}` has values that are not sizes or numbers: {}; a log slope needs a number for each",
            c.across,
            unreadable.join(", ")
        )));
    }
    // Block (replicate number) → its points' (ln x, ln stat).
    let mut blocks: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
    let mut all_rows: Vec<(f64, f64)> = Vec::new();
    for ((_, r), (lx, vs)) in &groups {
        if let Some(s) = c.stat.apply(vs) {
            blocks.entry(*r).or_default().push((*lx, s.ln()));
        }
        all_rows.extend(vs.iter().map(|v| (*lx, v.ln())));
    }
    let distinct_x = |pts: &[(f64, f64)]| {
        let mut xs: Vec<i64> = pts.iter().map(|p| (p.0 * 1e9) as i64).collect();
        xs.sort_unstable();
        xs.dedup();
        xs.len()
    };
    let slopes: Vec<f64> = blocks
        .values()
        .filter(|pts| distinct_x(pts) >= 2)
        .filter_map(|pts| ols(pts).map(|s| s.0))
        .collect();
    let min = c.min_replicates.unwrap_or(DEFAULT_MIN_FLAT_REPLICATES);
    let n = slopes.len();
    let (value, interval, replication) = if n >= 2 {
        let mean = slopes.iter().sum::<f64>() / n as f64;
        let interval = student_t(&slopes, ev.level());
        let r = Replication {
            unit: SampleUnit::Replicate,
            replicates: (n, n),
            samples: (n, n),
        };
        (mean, interval, r)
    } else {
        if distinct_x(&all_rows) < 2 {
            return Err(MeasureError::NoNumber(format!(
                "needs two or more values of `{}` with data",
                c.across
            )));
        }
        let (b, se) = ols(&all_rows).ok_or_else(|| {
            MeasureError::NoNumber("no spread in the sizes to fit a slope".into())
        })?;
        let interval = match se {
            Some(se) => t_quantile(0.975, all_rows.len() as f64 - 2.0)
                .map(|t| Interval {
                    lo: b - t * se,
                    hi: b + t * se,
                    level: 0.95,
                    method: Method::StudentT,
                })
                .ok_or(NoInterval::Unbounded),
            None => Err(NoInterval::TooFewSamples {
                numerator: all_rows.len(),
                denominator: all_rows.len(),
            }),
        };
        let rows_n = all_rows.len();
        let r = Replication {
            unit: SampleUnit::Iteration,
            replicates: (n.max(1), n.max(1)),
            samples: (rows_n, rows_n),
        };
        (b, interval, r)
    };
    let mut details: Vec<String> = blocks
        .iter()
        .filter(|(_, pts)| distinct_x(pts) >= 2)
        .filter_map(|(r, pts)| {
            ols(pts)
                .map(|(b, _)| format!("replicate {r}: slope {} over {} points", num(b), pts.len()))
        })
        .collect();
    if n < 2 {
        details.push(format!(
            "one replicate: the slope over all {} rows",
            all_rows.len()
        ));
    }
    Ok(Measure {
        value,
        interval,
        replication,
        min_replicates: min,
        recipe: format!(
            "`{}` rows {}; per (point, replicate) the {} of `{}`; per replicate the least-squares slope of ln({}) on ln(`{}`); the mean over the replicates with a {} Student-t interval",
            c.table,
            sel_label(&c.select),
            stat_name(c.stat),
            c.metric,
            c.metric,
            c.across,
            level_words(ev.level())
        ),
        incomplete: incomplete_points(ev, &c.table, &c.select),
        details,
    })
}

/// The published slope: ln(stat of each group) on ln(across).
pub(super) fn published_log_slope(groups: &[(String, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = groups
        .iter()
        .filter_map(|(k, v)| {
            let x = across_number(k)?;
            (x > 0.0 && *v > 0.0).then(|| (x.ln(), v.ln()))
        })
        .collect();
    (pts.len() == groups.len())
        .then(|| ols(&pts).map(|s| s.0))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_binary_suffixes() {
        assert_eq!(across_number("8k"), Some(8192.0));
        assert_eq!(across_number("1024k"), Some(1048576.0));
        assert_eq!(across_number("1m"), Some(1048576.0));
        assert_eq!(across_number("12"), Some(12.0));
        assert_eq!(across_number("rt"), None);
    }

    #[test]
    fn the_slope_of_a_power_law_is_its_exponent() {
        // y = 3 x^0.5: ln y = ln 3 + 0.5 ln x.
        let pts: Vec<(f64, f64)> = [1.0f64, 2.0, 4.0, 8.0]
            .iter()
            .map(|x| (x.ln(), (3.0 * x.sqrt()).ln()))
            .collect();
        let (b, se) = ols(&pts).unwrap();
        assert!((b - 0.5).abs() < 1e-12);
        assert!(se.unwrap() < 1e-9);
        // The post's convert-unwritten times, 8k … 1024k: a shallow slope.
        let groups: Vec<(String, f64)> = [
            ("8k", 9.710),
            ("16k", 9.642),
            ("32k", 9.958),
            ("64k", 9.441),
            ("256k", 10.021),
            ("1024k", 10.526),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        let s = published_log_slope(&groups).unwrap();
        assert!(s > 0.0 && s < 0.0376, "{s}");
    }
}
