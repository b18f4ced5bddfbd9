//! A runs frame read as samples: each point's iterations by replicate, the warm-up split,
//! the unit of n (iteration or replicate) and the outlier scores.

use super::plain::{mean, modified_z_scores_resolved};
use super::{is_warmup, Resolution, Unit, Warmup};
use crate::analysis::{
    cell_json, f64_values, i64_values, str_values, variable_columns, AnalysisError,
};
use crate::store::RunStatus;
use indexmap::IndexMap;
use polars::prelude::*;
use serde_json::Value;

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
