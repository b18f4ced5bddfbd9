//! The frames the charts draw. Each is computed here, from a runs frame and the
//! statistics' own rules (which iterations are warm-up, which are outliers, the
//! quartiles), so that `plot` only draws what it is given:
//! - [`iteration_frame`]: every ok iteration's value, point by point in plan order
//!   (`plot::Chart::iteration_lines`);
//! - [`distribution_frame`]: every iteration with its role (steady state, warm-up,
//!   outlier) and each point's box (`plot::Chart::distribution_of`);
//! - [`super::io_trace::trace_frames`] does the same for block traces.
//!
//! A point with nothing to draw keeps one row with a null value, so that a chart labels
//! the points the same whether or not each has values (labels drop what every point
//! shares).

use super::stats::{quantile, samples_by_point, with_outliers, StatsOptions};
use super::{f64_values, AnalysisError};
use polars::prelude::{Column, DataFrame};

/// Every ok iteration of `metric`, one row per iteration, the points in plan order
/// ([`samples_by_point`]), their rows in the frame's order. Columns: `point_id`,
/// `iteration`, `<metric>` (rows with a null or non-finite value are left out; a point
/// without any keeps one row with a null iteration and value).
pub fn iteration_frame(runs: &DataFrame, metric: &str) -> Result<DataFrame, AnalysisError> {
    let points = samples_by_point(runs, metric)?;
    let mut ids: Vec<String> = Vec::new();
    let mut iterations: Vec<Option<i64>> = Vec::new();
    let mut values: Vec<Option<f64>> = Vec::new();
    for p in &points {
        let before = ids.len();
        for s in p.samples.iter().filter(|s| s.ok) {
            let Some(v) = s.value else { continue };
            ids.push(p.point_id.clone());
            iterations.push(Some(s.iteration));
            values.push(Some(v));
        }
        if ids.len() == before {
            ids.push(p.point_id.clone());
            iterations.push(None);
            values.push(None);
        }
    }
    Ok(DataFrame::new_infer_height(vec![
        Column::new("point_id".into(), ids),
        Column::new("iteration".into(), iterations),
        Column::new(metric.into(), values),
    ])?)
}

/// What a role of an iteration in [`distribution_frame`] is called.
pub const ROLE_STEADY: &str = "steady";
pub const ROLE_WARMUP: &str = "warm-up";
pub const ROLE_OUTLIER: &str = "outlier";

/// Every ok iteration of `opts.metric` with its role, and each point's box of the steady
/// state. One row per iteration, the points in plan order. Columns: `point_id`,
/// `value`, `role` ([`ROLE_STEADY`], [`ROLE_WARMUP`], [`ROLE_OUTLIER`]: warm-up and
/// outliers by the rules of [`with_outliers`]), the point's box on each of its rows
/// (`q1`, `median`, `q3` of its steady state, outliers included, and the whiskers
/// `whisker_low`, `whisker_high`: the furthest values within 1.5 IQR of the box; null
/// without a steady state), `metric` and `outlier_threshold`. A point without any value
/// keeps one row with a null value and role.
pub fn distribution_frame(
    runs: &DataFrame,
    opts: &StatsOptions,
) -> Result<DataFrame, AnalysisError> {
    let flagged = with_outliers(runs, opts)?;
    let points = samples_by_point(&flagged, &opts.metric)?;
    let warm = f64_values(&flagged, "runs", "warmup")?;
    let out = f64_values(&flagged, "runs", "outlier")?;
    let mut ids: Vec<String> = Vec::new();
    let mut values: Vec<Option<f64>> = Vec::new();
    let mut roles: Vec<Option<&str>> = Vec::new();
    let mut boxes: Vec<Option<[f64; 5]>> = Vec::new();
    for p in &points {
        let before = ids.len();
        let mut steady = Vec::new();
        for s in p.samples.iter().filter(|s| s.ok) {
            let Some(v) = s.value else { continue };
            let role = if warm[s.row] == Some(1.0) {
                ROLE_WARMUP
            } else {
                steady.push(v);
                if out[s.row] == Some(1.0) {
                    ROLE_OUTLIER
                } else {
                    ROLE_STEADY
                }
            };
            ids.push(p.point_id.clone());
            values.push(Some(v));
            roles.push(Some(role));
        }
        if ids.len() == before {
            ids.push(p.point_id.clone());
            values.push(None);
            roles.push(None);
        }
        let b = box_stats(&steady);
        boxes.extend(std::iter::repeat_n(b, ids.len() - before));
    }
    let part = |i: usize| -> Vec<Option<f64>> { boxes.iter().map(|b| b.map(|b| b[i])).collect() };
    let n = ids.len();
    Ok(DataFrame::new_infer_height(vec![
        Column::new("point_id".into(), ids),
        Column::new("value".into(), values),
        Column::new("role".into(), roles),
        Column::new("q1".into(), part(0)),
        Column::new("median".into(), part(1)),
        Column::new("q3".into(), part(2)),
        Column::new("whisker_low".into(), part(3)),
        Column::new("whisker_high".into(), part(4)),
        Column::new("metric".into(), vec![opts.metric.as_str(); n]),
        Column::new("outlier_threshold".into(), vec![opts.outlier_threshold; n]),
    ])?)
}

/// Box-plot figures of a sample: quartiles (R type 7), and whiskers at the furthest
/// values within 1.5 IQR of the box: `[q1, median, q3, whisker_low, whisker_high]`.
pub fn box_stats(xs: &[f64]) -> Option<[f64; 5]> {
    let q1 = quantile(xs, 0.25)?;
    let med = quantile(xs, 0.5)?;
    let q3 = quantile(xs, 0.75)?;
    let iqr = q3 - q1;
    let lo = xs
        .iter()
        .copied()
        .filter(|x| *x >= q1 - 1.5 * iqr)
        .fold(f64::INFINITY, f64::min);
    let hi = xs
        .iter()
        .copied()
        .filter(|x| *x <= q3 + 1.5 * iqr)
        .fold(f64::NEG_INFINITY, f64::max);
    Some([q1, med, q3, lo, hi])
}

#[cfg(test)]
mod tests {
    use super::{box_stats, distribution_frame, iteration_frame, StatsOptions};
    use crate::analysis::{f64_values, str_values};
    use polars::prelude::df;

    #[test]
    fn box_whiskers_stop_within_one_and_a_half_iqr() {
        // with 20: q1 = 2.25, q3 = 4.75, IQR 2.5, upper fence 8.5 → whisker at 5.
        let b = box_stats(&[1.0, 2.0, 3.0, 4.0, 5.0, 20.0]).unwrap();
        assert_eq!(b, [2.25, 3.5, 4.75, 1.0, 5.0]);
        assert_eq!(box_stats(&[]), None);
    }

    fn runs() -> polars::prelude::DataFrame {
        df!(
            "point_id" => ["b", "a", "a", "a", "a", "a", "a", "b", "c"],
            "point_index" => [1i64, 0, 0, 0, 0, 0, 0, 1, 2],
            "iteration" => [1i64, 1, 2, 3, 4, 5, 6, 2, 1],
            "wall_s" => [Some(5.0), Some(9.0), Some(1.0), Some(1.1), Some(0.9), Some(1.0), Some(50.0), Some(6.0), None],
            "status" => ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "failed", "ok"],
        )
        .unwrap()
    }

    /// Points in plan order, ok rows only, and a point without a value kept as one
    /// null row.
    #[test]
    fn the_iteration_frame_keeps_plan_order_and_ok_rows() {
        let f = iteration_frame(&runs(), "wall_s").unwrap();
        let ids: Vec<String> = str_values(&f, "f", "point_id")
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(ids, ["a", "a", "a", "a", "a", "a", "b", "c"]);
        let v = f64_values(&f, "f", "wall_s").unwrap();
        assert_eq!(v[6], Some(5.0));
        assert_eq!(v[7], None);
    }

    /// The first iteration is warm-up, 50 s is an outlier, and the box is that of the
    /// steady state (outliers included).
    #[test]
    fn the_distribution_frame_names_each_iterations_role() {
        let f = distribution_frame(&runs(), &StatsOptions::default()).unwrap();
        let roles: Vec<Option<String>> = str_values(&f, "f", "role").unwrap();
        let roles: Vec<&str> = roles.iter().map(|r| r.as_deref().unwrap_or("-")).collect();
        assert_eq!(
            roles,
            ["warm-up", "steady", "steady", "steady", "steady", "outlier", "warm-up", "-"]
        );
        let q1 = f64_values(&f, "f", "q1").unwrap();
        let expected = box_stats(&[1.0, 1.1, 0.9, 1.0, 50.0]).unwrap();
        assert_eq!(q1[0], Some(expected[0]));
        // b has only its warm-up iteration ok: no box.
        assert_eq!(q1[6], None);
        assert_eq!(
            str_values(&f, "f", "metric").unwrap()[0].as_deref(),
            Some("wall_s")
        );
    }
}
