//! Small reshapes of result frames for tables and charts: select rows, re-key points,
//! average groups, put several result sets side by side, express a metric relative to a
//! baseline. Each is one step the notebooks and reports take; none computes anything
//! beyond what its doc says.
//!
//! ```no_run
//! use fslab::analysis::reshape::{filter_eq, with_point_id, overlay, relative_to};
//! # fn demo(runs: &polars::prelude::DataFrame, published: &polars::prelude::DataFrame)
//! #     -> Result<(), fslab::analysis::AnalysisError> {
//! // The data-device points, keyed by rtextsize alone (`rtextsize=8k`).
//! let hint = with_point_id(&filter_eq(runs, &[("layout", "data-extsize-hint")])?, &["rtextsize"])?;
//! // Each set relative to its own baseline point, then both in one frame.
//! let a = relative_to(runs, "wall_s", "parent=0,link=1")?;
//! let b = relative_to(published, "wall_s", "parent=0,link=1")?;
//! let both = overlay(&[("published", &b), ("here", &a)])?;
//! # Ok(()) }
//! ```

use super::{f64_values, str_values, AnalysisError};
use indexmap::IndexMap;
use polars::prelude::*;

const FRAME: &str = "input";

/// The rows where every `(column, value)` holds: the cell, read as text (`1`, `true`,
/// `ext4`), equals `value`. Null cells match nothing. No conditions: every row.
pub fn filter_eq(df: &DataFrame, conds: &[(&str, &str)]) -> Result<DataFrame, AnalysisError> {
    let mut keep = vec![true; df.height()];
    for (col, want) in conds {
        let values = str_values(df, FRAME, col)?;
        for (k, v) in keep.iter_mut().zip(values) {
            *k = *k && v.as_deref() == Some(*want);
        }
    }
    let mask = BooleanChunked::from_slice("keep".into(), &keep);
    Ok(df.filter(&mask)?)
}

/// The frame with `point_id` rebuilt from `keys` as `key=value,key=value` (cells read as
/// text, null as empty), so that rows of different result sets meet on the same ids
/// (`rtextsize=8k` in a rerun and in the published table). Added when missing.
pub fn with_point_id(df: &DataFrame, keys: &[&str]) -> Result<DataFrame, AnalysisError> {
    if keys.is_empty() {
        return Err(AnalysisError::InvalidOption(
            "with_point_id needs at least one key column".into(),
        ));
    }
    let cols = keys
        .iter()
        .map(|k| str_values(df, FRAME, k))
        .collect::<Result<Vec<_>, _>>()?;
    let ids: Vec<String> = (0..df.height())
        .map(|r| {
            keys.iter()
                .zip(&cols)
                .map(|(k, c)| format!("{k}={}", c[r].as_deref().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let mut out = df.clone();
    out.with_column(Column::new("point_id".into(), ids))?;
    Ok(out)
}

/// The mean of `value` per distinct combination of `keys` (cells read as text), in order
/// of first appearance: the key columns (String), `value` (Float64, mean of the non-null
/// finite values; null when there are none) and `n` (Int64, how many values).
pub fn group_mean(df: &DataFrame, keys: &[&str], value: &str) -> Result<DataFrame, AnalysisError> {
    let key_cols = keys
        .iter()
        .map(|k| str_values(df, FRAME, k))
        .collect::<Result<Vec<_>, _>>()?;
    let values = f64_values(df, FRAME, value)?;
    let mut groups: IndexMap<Vec<Option<String>>, (f64, i64)> = IndexMap::new();
    for (r, v) in values.iter().enumerate() {
        let key: Vec<Option<String>> = key_cols.iter().map(|c| c[r].clone()).collect();
        let slot = groups.entry(key).or_insert((0.0, 0));
        if let Some(v) = v.filter(|v| v.is_finite()) {
            slot.0 += v;
            slot.1 += 1;
        }
    }
    let mut cols: Vec<Column> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let vals: Vec<Option<&str>> = groups.keys().map(|g| g[i].as_deref()).collect();
            Column::new((*k).into(), vals)
        })
        .collect();
    let means: Vec<Option<f64>> = groups
        .values()
        .map(|(s, n)| (*n > 0).then(|| s / *n as f64))
        .collect();
    cols.push(Column::new(value.into(), means));
    cols.push(Column::new(
        "n".into(),
        groups.values().map(|(_, n)| *n).collect::<Vec<_>>(),
    ));
    Ok(DataFrame::new_infer_height(cols)?)
}

/// Several runs frames in one, each point renamed `NAME: point_id` and tagged with a
/// `set` column, `point_index` renumbered in order of appearance so that charts keep
/// the sets in the order given. Columns one set lacks are null in its rows.
pub fn overlay(sets: &[(&str, &DataFrame)]) -> Result<DataFrame, AnalysisError> {
    let mut frames = Vec::with_capacity(sets.len());
    let mut index: IndexMap<String, i64> = IndexMap::new();
    for (name, df) in sets {
        let ids = str_values(df, FRAME, "point_id")?;
        let renamed: Vec<String> = ids
            .iter()
            .map(|id| format!("{name}: {}", id.as_deref().unwrap_or("")))
            .collect();
        let idx: Vec<i64> = renamed
            .iter()
            .map(|id| {
                let next = index.len() as i64;
                *index.entry(id.clone()).or_insert(next)
            })
            .collect();
        let mut out = (*df).clone();
        out.with_column(Column::new("point_id".into(), renamed))?;
        out.with_column(Column::new("point_index".into(), idx))?;
        out.with_column(Column::new("set".into(), vec![*name; df.height()]))?;
        frames.push(out);
    }
    Ok(crate::frames::concat_diagonal(&frames)?)
}

/// One row per labelled runs frame (e.g. one bundle per image size): the mean `metric`
/// of the `numerator` point's ok rows, of the `denominator` point's, and their ratio
/// (columns `label`, `numerator`, `denominator`, `ratio`, `n_numerator`,
/// `n_denominator`). A point a frame lacks gives nulls in its row, never a made-up
/// number. Every ok row counts, the first iteration too: it shows what drives a ratio
/// across runs, it is not a verdict (claims take replicates as their unit).
pub fn ratio_across(
    sets: &[(&str, &DataFrame)],
    metric: &str,
    numerator: &str,
    denominator: &str,
) -> Result<DataFrame, AnalysisError> {
    let mut labels = Vec::new();
    let (mut num, mut den, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let (mut n_num, mut n_den) = (Vec::new(), Vec::new());
    for (label, df) in sets {
        let ids = str_values(df, FRAME, "point_id")?;
        let values = f64_values(df, FRAME, metric)?;
        let ok: Vec<bool> = match str_values(df, FRAME, "status") {
            Ok(st) => st
                .iter()
                .map(|s| crate::store::RunStatus::is_ok_str(s.as_deref()))
                .collect(),
            Err(_) => vec![true; df.height()],
        };
        let mean_of = |point: &str| -> (Option<f64>, i64) {
            let v: Vec<f64> = (0..df.height())
                .filter(|&i| ok[i] && ids[i].as_deref() == Some(point))
                .filter_map(|i| values[i].filter(|x| x.is_finite()))
                .collect();
            let n = v.len() as i64;
            ((n > 0).then(|| v.iter().sum::<f64>() / n as f64), n)
        };
        let (a, na) = mean_of(numerator);
        let (b, nb) = mean_of(denominator);
        labels.push(label.to_string());
        num.push(a);
        den.push(b);
        ratio.push(a.zip(b).filter(|(_, b)| *b != 0.0).map(|(a, b)| a / b));
        n_num.push(na);
        n_den.push(nb);
    }
    Ok(DataFrame::new_infer_height(vec![
        Column::new("label".into(), labels),
        Column::new("numerator".into(), num),
        Column::new("denominator".into(), den),
        Column::new("ratio".into(), ratio),
        Column::new("n_numerator".into(), n_num),
        Column::new("n_denominator".into(), n_den),
    ])?)
}

/// The runs frame with a column `<metric>_rel`: `metric` divided by the baseline point's
/// steady-state mean (the warm-up rule of [`super::stats`]: iterations after the first,
/// by number, that are ok). A baseline without a steady state (one iteration) is scaled
/// by its cold run instead: this is a scale for drawing, not a statistic. Sets measured
/// on different machines then share a scale: 1.0 is the baseline's usual time, and a
/// first run at 1.35 took 35 % longer.
pub fn relative_to(
    runs: &DataFrame,
    metric: &str,
    baseline: &str,
) -> Result<DataFrame, AnalysisError> {
    let values = f64_values(runs, FRAME, metric)?;
    let points = super::stats::samples_by_point(runs, metric)?;
    let (warm, steady) = points
        .iter()
        .find(|p| p.point_id == baseline)
        .map(|p| p.split(super::stats::Warmup::default()))
        .unwrap_or_default();
    let steady = if steady.is_empty() { warm } else { steady };
    let mean = steady.iter().sum::<f64>() / steady.len().max(1) as f64;
    if steady.is_empty() || mean == 0.0 {
        return Err(AnalysisError::InvalidOption(format!(
            "the baseline point `{baseline}` has no usable {metric} value"
        )));
    }
    let rel: Vec<Option<f64>> = values.iter().map(|v| v.map(|v| v / mean)).collect();
    let mut out = runs.clone();
    out.with_column(Column::new(format!("{metric}_rel").into(), rel))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::i64_values;

    fn runs() -> DataFrame {
        df!(
            "point_id" => ["a=1", "a=1", "a=1", "a=2", "a=2", "a=2"],
            "point_index" => [0i64, 0, 0, 1, 1, 1],
            "a" => [1i64, 1, 1, 2, 2, 2],
            "iteration" => [1i64, 2, 3, 1, 2, 3],
            "wall_s" => [15.0, 10.0, 12.0, 30.0, 22.0, 20.0],
            "status" => ["ok", "ok", "ok", "ok", "ok", "failed"],
        )
        .unwrap()
    }

    #[test]
    fn filter_matches_cells_as_text() {
        let df = runs();
        let two = filter_eq(&df, &[("a", "2")]).unwrap();
        assert_eq!(two.height(), 3);
        let one_ok = filter_eq(&df, &[("a", "2"), ("status", "ok")]).unwrap();
        assert_eq!(one_ok.height(), 2);
        assert_eq!(filter_eq(&df, &[("a", "3")]).unwrap().height(), 0);
        assert_eq!(filter_eq(&df, &[]).unwrap().height(), 6);
        assert!(filter_eq(&df, &[("nope", "1")]).is_err());
    }

    #[test]
    fn point_ids_are_rebuilt_from_the_keys() {
        let df = df!("rtextsize" => ["8k", "16k"], "method" => ["x", "y"]).unwrap();
        let out = with_point_id(&df, &["rtextsize"]).unwrap();
        let ids = str_values(&out, "t", "point_id").unwrap();
        assert_eq!(
            ids,
            [Some("rtextsize=8k".into()), Some("rtextsize=16k".into())]
        );
        let out = with_point_id(&df, &["method", "rtextsize"]).unwrap();
        let ids = str_values(&out, "t", "point_id").unwrap();
        assert_eq!(ids[1].as_deref(), Some("method=y,rtextsize=16k"));
        assert!(with_point_id(&df, &[]).is_err());
    }

    #[test]
    fn group_means_in_order_of_appearance() {
        let df = df!(
            "fs" => ["ext3", "ext3", "ext4", "ext3", "ext4"],
            "pass" => ["1", "2", "1", "1", "1"],
            "real_s" => [Some(1.0), Some(2.0), Some(0.5), Some(3.0), None],
        )
        .unwrap();
        let g = group_mean(&df, &["pass", "fs"], "real_s").unwrap();
        assert_eq!(g.height(), 3);
        let pass = str_values(&g, "t", "pass").unwrap();
        let fs = str_values(&g, "t", "fs").unwrap();
        let mean = f64_values(&g, "t", "real_s").unwrap();
        let n = i64_values(&g, "t", "n").unwrap();
        assert_eq!(
            (pass[0].as_deref(), fs[0].as_deref(), mean[0], n[0]),
            (Some("1"), Some("ext3"), Some(2.0), Some(2))
        );
        assert_eq!(
            (fs[1].as_deref(), pass[1].as_deref()),
            (Some("ext3"), Some("2"))
        );
        // ext4 pass 1: one value and one null.
        assert_eq!((mean[2], n[2]), (Some(0.5), Some(1)));
    }

    #[test]
    fn overlay_renames_points_and_keeps_sets_apart() {
        let a = runs();
        let b = df!("point_id" => ["a=1"], "iteration" => [1i64], "wall_s" => [9.0]).unwrap();
        let both = overlay(&[("here", &a), ("published", &b)]).unwrap();
        assert_eq!(both.height(), 7);
        let ids = str_values(&both, "t", "point_id").unwrap();
        assert_eq!(ids[0].as_deref(), Some("here: a=1"));
        assert_eq!(ids[6].as_deref(), Some("published: a=1"));
        let idx = i64_values(&both, "t", "point_index").unwrap();
        assert_eq!(idx, [0, 0, 0, 1, 1, 1, 2].map(Some));
        let set = str_values(&both, "t", "set").unwrap();
        assert_eq!(set[6].as_deref(), Some("published"));
        // b has no status: null there, and its `a` column is null too.
        assert_eq!(str_values(&both, "t", "status").unwrap()[6], None);
    }

    #[test]
    fn relative_to_the_baselines_later_iterations() {
        let out = relative_to(&runs(), "wall_s", "a=1").unwrap();
        let rel = f64_values(&out, "t", "wall_s_rel").unwrap();
        // Baseline a=1: iterations 2 and 3 → mean 11.
        assert!((rel[0].unwrap() - 15.0 / 11.0).abs() < 1e-12);
        assert!((rel[3].unwrap() - 30.0 / 11.0).abs() < 1e-12);
        // A baseline whose later iterations failed uses its ok ones only.
        let out = relative_to(&runs(), "wall_s", "a=2").unwrap();
        let rel = f64_values(&out, "t", "wall_s_rel").unwrap();
        assert!((rel[4].unwrap() - 1.0).abs() < 1e-12);
        // One iteration: that one.
        let one = df!("point_id" => ["x"], "wall_s" => [4.0]).unwrap();
        let rel = relative_to(&one, "wall_s", "x").unwrap();
        assert_eq!(f64_values(&rel, "t", "wall_s_rel").unwrap(), [Some(1.0)]);
        assert!(relative_to(&runs(), "wall_s", "a=9").is_err());
    }

    #[test]
    fn ratio_across_sets_is_the_mean_of_ok_rows_and_says_what_is_missing() {
        let a = df!(
            "point_id" => ["fs=ext3", "fs=ext3", "fs=ext4", "fs=ext4"],
            "status" => ["ok", "ok", "ok", "failed"],
            "wall_s" => [4.0, 6.0, 2.0, 100.0],
        )
        .unwrap();
        let b = df!(
            "point_id" => ["fs=ext3"],
            "status" => ["ok"],
            "wall_s" => [8.0],
        )
        .unwrap();
        let r = ratio_across(
            &[("2GiB", &a), ("4GiB", &b)],
            "wall_s",
            "fs=ext3",
            "fs=ext4",
        )
        .unwrap();
        let ratio = r.column("ratio").unwrap().f64().unwrap().clone();
        assert_eq!(ratio.get(0), Some(2.5));
        assert_eq!(ratio.get(1), None);
        let n = r.column("n_denominator").unwrap().i64().unwrap().clone();
        assert_eq!((n.get(0), n.get(1)), (Some(1), Some(0)));
    }
}
