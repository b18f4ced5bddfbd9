//! `kind: gap_share`: one part's share of the gap between two sides, e.g. e2fsck's
//! pass 2 (directories) in the ext3–ext4 gap, the quantity a post's "directory
//! fragmentation might be a pretty big part of it" is about. A ratio of the part's times
//! says nothing about that: a part can be 3× slower and still carry none of the gap.

use super::{ClaimKind, Stated};
use crate::analysis::claims::evidence::{Evidence, Measure};
use crate::analysis::claims::select::{explain_empty, incomplete_points, sel_label, select, table};
use crate::analysis::claims::units::{key_column, replicate_keys, Replication, SampleUnit};
use crate::analysis::claims::words::num;
use crate::analysis::claims::words::{level_words, stat_name};
use crate::analysis::claims::MeasureError;
use crate::analysis::f64_values;
use crate::analysis::interval::{bootstrap_groups, NoInterval};
use crate::analysis::tiers::DEFAULT_MIN_REPLICATES;
use crate::spec::claim::{GapShareCheck, Selection, Stat};
use polars::prelude::DataFrame;
use std::collections::BTreeMap;

/// (point, replicate) → iteration → the metric summed over that iteration's rows.
type IterationSums = BTreeMap<(i64, i64), BTreeMap<i64, f64>>;

/// Per (point, replicate): (part, whole), each the metric summed over an iteration's
/// rows and averaged over the replicate's iterations.
fn per_replicate(
    side: &DataFrame,
    part: &DataFrame,
    metric: &str,
    what: &str,
) -> Result<Vec<(f64, f64)>, MeasureError> {
    let sums = |df: &DataFrame| -> Result<IterationSums, MeasureError> {
        let v =
            f64_values(df, "claims", metric).map_err(|e| MeasureError::column(e, what, metric))?;
        let keys = replicate_keys(df);
        let iterations = key_column(df, "iteration", 0);
        let mut out = IterationSums::new();
        for row in 0..df.height() {
            if let Some(x) = v[row].filter(|x| x.is_finite()) {
                *out.entry(keys[row])
                    .or_default()
                    .entry(iterations[row])
                    .or_default() += x;
            }
        }
        Ok(out)
    };
    let (whole, part) = (sums(side)?, sums(part)?);
    let mean = |m: &BTreeMap<i64, f64>| Stat::Mean.apply(&m.values().copied().collect::<Vec<_>>());
    Ok(whole
        .iter()
        .filter_map(|(k, w)| {
            let p = part.get(k).and_then(mean).unwrap_or(0.0);
            mean(w).map(|w| (p, w))
        })
        .collect())
}

fn and(a: &Selection, b: &Selection) -> Selection {
    let mut s = a.clone();
    s.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
    s
}

/// (mean part on a − mean part on b) ÷ (mean whole on a − mean whole on b).
fn share(a: &[(f64, f64)], b: &[(f64, f64)]) -> Option<f64> {
    let m = |v: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| {
        (!v.is_empty()).then(|| v.iter().map(f).sum::<f64>() / v.len() as f64)
    };
    let gap = m(a, |x| x.1)? - m(b, |x| x.1)?;
    let part = m(a, |x| x.0)? - m(b, |x| x.0)?;
    (gap != 0.0).then_some(part / gap)
}

fn measure_gap_share(c: &GapShareCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let what = format!("the `{}` table", c.table);
    let df = table(ev, &c.table)?;
    let mut sides = Vec::new();
    for sel in [&c.a, &c.b] {
        let whole = select(&df, &and(sel, &c.whole), &what)?;
        if whole.height() == 0 {
            return Err(explain_empty(ev, &c.table, sel));
        }
        let part = select(&df, &and(sel, &and(&c.whole, &c.part)), &what)?;
        sides.push(per_replicate(&whole, &part, &c.metric, &what)?);
    }
    let (a, b) = (&sides[0], &sides[1]);
    let value = share(a, b).ok_or_else(|| {
        MeasureError::NoNumber("the two sides take the same time: there is no gap to share".into())
    })?;
    let reps = (a.len(), b.len());
    // Resample whole replicates (their part and whole together) within each side.
    let idx = |v: &[(f64, f64)]| (0..v.len()).map(|i| i as f64).collect::<Vec<f64>>();
    let interval = if reps.0 >= 2 && reps.1 >= 2 {
        bootstrap_groups(
            &[idx(a), idx(b)],
            &|g: &[Vec<f64>]| {
                let pick = |v: &[(f64, f64)], ix: &[f64]| {
                    ix.iter().map(|i| v[*i as usize]).collect::<Vec<_>>()
                };
                share(&pick(a, &g[0]), &pick(b, &g[1]))
            },
            ev.level(),
            2000,
            0x5eed,
        )
    } else {
        Err(NoInterval::TooFewSamples {
            numerator: reps.0,
            denominator: reps.1,
        })
    };
    let unit = if reps.0 >= 2 && reps.1 >= 2 {
        SampleUnit::Replicate
    } else {
        SampleUnit::Iteration
    };
    let side_line = |name: &str, sel: &Selection, v: &[(f64, f64)]| {
        let n = v.len().max(1) as f64;
        format!(
            "{name} ({}): part {} of whole {} ({} replicates)",
            sel_label(sel),
            num(v.iter().map(|x| x.0).sum::<f64>() / n),
            num(v.iter().map(|x| x.1).sum::<f64>() / n),
            v.len()
        )
    };
    let mut incomplete = incomplete_points(ev, &c.table, &c.a);
    for p in incomplete_points(ev, &c.table, &c.b) {
        if !incomplete.contains(&p) {
            incomplete.push(p);
        }
    }
    Ok(Measure {
        value,
        interval,
        replication: Replication {
            unit,
            replicates: reps,
            samples: reps,
        },
        min_replicates: c.min_replicates.unwrap_or(DEFAULT_MIN_REPLICATES),
        recipe: format!(
            "`{}`: per iteration the sum of `{}` over the rows {} (part) and {} (whole), the {} over a replicate's iterations, the mean over replicates; (part on {} − part on {}) ÷ (whole on {} − whole on {}); {} percentile bootstrap over replicates (2000 resamples, seed 0x5eed)",
            c.table,
            c.metric,
            sel_label(&c.part),
            sel_label(&c.whole),
            stat_name(Stat::Mean),
            sel_label(&c.a),
            sel_label(&c.b),
            sel_label(&c.a),
            sel_label(&c.b),
            level_words(ev.level())
        ),
        incomplete,
        details: vec![side_line("a", &c.a, a), side_line("b", &c.b, b)],
    })
}

impl ClaimKind for GapShareCheck {
    fn stated(&self) -> Stated<'_> {
        Stated {
            expect: &self.expect,
            at_scale: &self.at_scale,
            unit: &self.unit,
            note: self.note.as_deref(),
        }
    }

    fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError> {
        measure_gap_share(self, ev)
    }

    /// No post gives per-part times of both sides.
    fn published(&self, _ev: &Evidence) -> Option<Result<f64, MeasureError>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_slower_by_a_ratio_can_carry_none_of_the_gap() {
        // ext3: pass 2 takes 3 s of 60; ext4: 1 s of 6. Pass 2 is 3× slower on ext3, yet
        // carries (3 − 1) ÷ (60 − 6) = 3.7 % of the gap.
        let a = [(3.0, 60.0), (3.0, 60.0)];
        let b = [(1.0, 6.0), (1.0, 6.0)];
        assert!((share(&a, &b).unwrap() - 2.0 / 54.0).abs() < 1e-12);
        assert_eq!(share(&[(1.0, 5.0)], &[(1.0, 5.0)]), None);
    }
}
