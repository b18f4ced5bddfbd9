//! The seed posts' data reshaped into the layouts of a bundle's tables, keyed like the
//! seed experiments' points, so that the same statistics and charts apply to both:
//! - [`runs`]: a post's published timings in the layout of a `runs` table;
//! - [`extents`]: seed 001's published directory block listings in the layout of an
//!   `extents` table.

use super::PublishedError;
use crate::extent::{extents_frame, Extent};
use crate::frames::{f64_values, i64_values, str_values, ColumnError, FrameError};
use indexmap::IndexMap;
use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;

/// Why published data cannot be reshaped.
#[derive(Debug, thiserror::Error)]
pub enum ReshapeError {
    #[error("published data: {0}")]
    Dataset(#[from] PublishedError),
    #[error("published data: a time in an unknown unit `{0}`")]
    Unit(String),
    #[error("published data: seed {0} publishes no timed runs")]
    NoRuns(String),
    #[error("published data: seed {0}: no timings in the data")]
    NoTimings(String),
    #[error("published data: no block ranges in the listing")]
    NoBlockRanges,
    #[error("invalid option: block size 0")]
    BlockSizeZero,
    #[error("invalid option: extents frame: {0}")]
    ExtentsFrame(FrameError),
    #[error(transparent)]
    Column(#[from] ColumnError),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

/// One published timing in the runs layout.
#[derive(Serialize)]
struct PubRun {
    experiment: String,
    point_id: String,
    point_index: i64,
    #[serde(flatten)]
    vars: IndexMap<String, Value>,
    iteration: i64,
    wall_s: Option<f64>,
    user_s: Option<f64>,
    sys_s: Option<f64>,
    status: &'static str,
    /// The text of the post the wall time comes from.
    printed: Option<String>,
}

fn seconds(value: f64, unit: &str) -> Result<f64, ReshapeError> {
    let factor = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "min" => 60.0,
        "h" => 3600.0,
        other => return Err(ReshapeError::Unit(other.to_string())),
    };
    Ok(value * factor)
}

/// [`runs_from`] on the dataset as [`super::load`] reads it.
pub fn runs(seed: &str) -> Result<DataFrame, ReshapeError> {
    let d = super::find(seed)?;
    let df = super::load(d.name)?;
    runs_from(d.seed, &df)
}

/// A seed's published timings as a runs frame (`experiment`, `point_id`,
/// `point_index`, the point's variables, `iteration`, `wall_s`, `user_s`, `sys_s`,
/// `status` = `ok`, `printed`), times in seconds, point ids as in the seed's experiment
/// file:
/// - `000`: the fsstress runs, `parent=P,link=L` (`link=0`: the run without `link=1`),
///   iteration = the run's number, real/user/sys → wall_s/user_s/sys_s;
/// - `001`: the fsck times, `fs=ext3`, `fs=ext4` (with uninit_bg) and
///   `fs=ext4-no-uninit_bg`, one iteration, wall time only;
/// - `003`: the truncate table, `method=zero_out|convert_unwritten,rtextsize=R`, one
///   iteration, wall time only.
pub fn runs_from(seed: &str, df: &DataFrame) -> Result<DataFrame, ReshapeError> {
    const F: &str = "published";
    let seed = super::find(seed)?.seed;
    let group = str_values(df, F, "group")?;
    let value = f64_values(df, F, "value")?;
    let unit = str_values(df, F, "unit")?;
    let printed = str_values(df, F, "printed")?;
    let mut runs: IndexMap<(String, i64), PubRun> = IndexMap::new();
    let mut points: IndexMap<String, i64> = IndexMap::new();
    let mut add = |experiment: &str,
                   vars: Vec<(&str, Value)>,
                   iteration: i64,
                   quantity: &str,
                   v: f64,
                   text: Option<String>|
     -> Result<(), ReshapeError> {
        let id = vars
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(",");
        let next = points.len() as i64;
        let point_index = *points.entry(id.clone()).or_insert(next);
        let run = runs
            .entry((id.clone(), iteration))
            .or_insert_with(|| PubRun {
                experiment: experiment.to_string(),
                point_id: id,
                point_index,
                vars: vars
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
                iteration,
                wall_s: None,
                user_s: None,
                sys_s: None,
                status: "ok",
                printed: None,
            });
        match quantity {
            "user" => run.user_s = Some(v),
            "sys" => run.sys_s = Some(v),
            _ => {
                run.wall_s = Some(v);
                run.printed = text;
            }
        }
        Ok(())
    };
    match seed {
        "000" => {
            let quantity = str_values(df, F, "quantity")?;
            let parent = i64_values(df, F, "parent")?;
            let link = str_values(df, F, "link_op")?;
            let run = i64_values(df, F, "run")?;
            for r in 0..df.height() {
                if group[r].as_deref() != Some("fsstress_time") {
                    continue;
                }
                let (Some(p), Some(l), Some(i), Some(v), Some(u)) = (
                    parent[r],
                    link[r].as_deref(),
                    run[r],
                    value[r],
                    unit[r].as_deref(),
                ) else {
                    continue;
                };
                let q = match quantity[r].as_deref() {
                    Some("real_time") => "wall",
                    Some("user_time") => "user",
                    Some("sys_time") => "sys",
                    _ => continue,
                };
                let link = i64::from(l == "true");
                add(
                    "xfs-parent-pointers",
                    vec![("parent", Value::from(p)), ("link", Value::from(link))],
                    i,
                    q,
                    seconds(v, u)?,
                    printed[r].clone(),
                )?;
            }
        }
        "001" => {
            let fs = str_values(df, F, "fs")?;
            let uninit = str_values(df, F, "uninit_bg")?;
            for r in 0..df.height() {
                if group[r].as_deref() != Some("fsck_time") {
                    continue;
                }
                let (Some(f), Some(v), Some(u)) = (fs[r].as_deref(), value[r], unit[r].as_deref())
                else {
                    continue;
                };
                let name = match (f, uninit[r].as_deref()) {
                    ("ext4", Some("false")) => "ext4-no-uninit_bg".to_string(),
                    (f, _) => f.to_string(),
                };
                add(
                    "ext-fsck-small-files",
                    vec![("fs", Value::from(name))],
                    1,
                    "wall",
                    seconds(v, u)?,
                    printed[r].clone(),
                )?;
            }
        }
        "003" => {
            let method = str_values(df, F, "method")?;
            let size = str_values(df, F, "rtextsize")?;
            for r in 0..df.height() {
                if group[r].as_deref() != Some("truncate_time") {
                    continue;
                }
                let (Some(m), Some(s), Some(v), Some(u)) = (
                    method[r].as_deref(),
                    size[r].as_deref(),
                    value[r],
                    unit[r].as_deref(),
                ) else {
                    continue;
                };
                add(
                    "xfs-rt-truncate",
                    vec![("method", Value::from(m)), ("rtextsize", Value::from(s))],
                    1,
                    "wall",
                    seconds(v, u)?,
                    printed[r].clone(),
                )?;
            }
        }
        other => return Err(ReshapeError::NoRuns(other.to_string())),
    }
    let rows: Vec<PubRun> = runs.into_values().collect();
    if rows.is_empty() {
        return Err(ReshapeError::NoTimings(seed.to_string()));
    }
    let mut out = crate::frames::from_records(&rows)?;
    // Keep the time columns Float64 when a seed has no user/sys times.
    for name in ["wall_s", "user_s", "sys_s"] {
        let cast = out.column(name)?.cast(&DataType::Float64)?;
        out.with_column(cast)?;
    }
    Ok(out)
}

/// Seed 001's published block listings of the largest directory
/// (`data/published/001_dir_blocks.csv`) as extents rows (`point_id` `fs=ext3` /
/// `fs=ext4`, `path` `published: fs=…`, `segment`, `index`, `logical_bytes`,
/// `physical_bytes`, `length_bytes`, `flags`), blocks converted with `block_bytes`
/// (the post does not print the block size). Data ranges only: the `(IND)` rows have
/// no logical position. On ext3 the post elides the middle of the listing (`segment`
/// `head` / `tail`).
pub fn extents(block_bytes: u64) -> Result<DataFrame, ReshapeError> {
    let df = super::load("001-dir-blocks")?;
    extents_from(&df, block_bytes)
}

/// [`extents`] over a frame read with [`super::load`].
pub fn extents_from(df: &DataFrame, block_bytes: u64) -> Result<DataFrame, ReshapeError> {
    const F: &str = "published";
    if block_bytes == 0 {
        return Err(ReshapeError::BlockSizeZero);
    }
    let fs = str_values(df, F, "fs")?;
    let segment = str_values(df, F, "segment")?;
    let kind = str_values(df, F, "kind")?;
    let entry = i64_values(df, F, "entry")?;
    let logical = i64_values(df, F, "logical_start")?;
    let physical = i64_values(df, F, "physical_start")?;
    let length = i64_values(df, F, "length")?;
    let u = |v: i64| u64::try_from(v).unwrap_or(0).saturating_mul(block_bytes);
    let mut pid = Vec::new();
    let mut seg = Vec::new();
    let mut rows = Vec::new();
    for r in 0..df.height() {
        if kind[r].as_deref() != Some("data") {
            continue;
        }
        let (Some(f), Some(l), Some(p), Some(n)) =
            (fs[r].as_deref(), logical[r], physical[r], length[r])
        else {
            continue;
        };
        let id = format!("fs={f}");
        rows.push(Extent {
            path: format!("published: {id}").into(),
            inode: None,
            index: entry[r].and_then(|e| u64::try_from(e).ok()).unwrap_or(0),
            logical_bytes: u(l),
            physical_bytes: Some(u(p)),
            length_bytes: u(n),
            flags: "".into(),
        });
        pid.push(id);
        seg.push(segment[r].clone());
    }
    if rows.is_empty() {
        return Err(ReshapeError::NoBlockRanges);
    }
    let body = extents_frame(&rows).map_err(ReshapeError::ExtentsFrame)?;
    let mut cols = vec![
        Column::new("point_id".into(), pid),
        Column::new("segment".into(), seg),
    ];
    cols.extend(body.columns().iter().cloned());
    Ok(DataFrame::new_infer_height(cols)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_pointer_runs() {
        let runs = runs("000").unwrap();
        // 10 runs × 2 settings with link=1, plus the first run of each without.
        assert_eq!(runs.height(), 22);
        let ids = str_values(&runs, "t", "point_id").unwrap();
        assert_eq!(ids[0].as_deref(), Some("parent=0,link=1"));
        let p1 = filter_rows(&runs, "parent=1,link=1");
        let wall = f64_values(&p1, "t", "wall_s").unwrap();
        let it = i64_values(&p1, "t", "iteration").unwrap();
        assert_eq!(wall.len(), 10);
        assert_eq!(it, (1..=10).map(Some).collect::<Vec<_>>());
        // Runs without link=1: one each; the post's first parent=0 run took 18.920 s.
        let nolink = filter_rows(&runs, "parent=0,link=0");
        assert_eq!(f64_values(&nolink, "t", "wall_s").unwrap(), [Some(18.92)]);
        assert!(f64_values(&runs, "t", "sys_s")
            .unwrap()
            .iter()
            .all(Option::is_some));
        assert_eq!(variable_names(&runs), ["parent", "link"]);
    }

    #[test]
    fn fsck_and_truncate_runs() {
        let fsck = runs("001").unwrap();
        let ids = str_values(&fsck, "t", "point_id").unwrap();
        assert_eq!(
            ids,
            ["fs=ext3", "fs=ext4", "fs=ext4-no-uninit_bg"].map(|s| Some(s.to_string()))
        );
        // about one hour, 5 and 10 minutes, in seconds.
        let wall = f64_values(&fsck, "t", "wall_s").unwrap();
        assert_eq!(wall, [Some(3600.0), Some(300.0), Some(600.0)]);
        assert_eq!(fsck.column("user_s").unwrap().dtype(), &DataType::Float64);
        let trunc = runs("xfs-rt-truncate").unwrap();
        assert_eq!(trunc.height(), 12);
        let conv = filter_rows(&trunc, "method=convert_unwritten,rtextsize=1024k");
        assert_eq!(f64_values(&conv, "t", "wall_s").unwrap(), [Some(10.526)]);
        assert!(runs_from("000", &df!("group" => ["x"]).unwrap()).is_err());
    }

    #[test]
    fn units_are_converted_or_refused() {
        let df = df!(
            "group" => ["fsck_time", "fsck_time"],
            "fs" => ["ext3", "ext4"],
            "uninit_bg" => [None, Some("true")],
            "value" => [1.5, 90.0],
            "unit" => ["h", "s"],
            "printed" => ["1.5 hours", "90s"],
        )
        .unwrap();
        let runs = runs_from("001", &df).unwrap();
        assert_eq!(
            f64_values(&runs, "t", "wall_s").unwrap(),
            [Some(5400.0), Some(90.0)]
        );
        let bad = df!(
            "group" => ["fsck_time"], "fs" => ["ext3"], "uninit_bg" => [None::<&str>],
            "value" => [1.0], "unit" => ["fortnight"], "printed" => ["1"],
        )
        .unwrap();
        assert!(runs_from("001", &bad).is_err());
    }

    #[test]
    fn directory_listings_as_extents() {
        let ext = extents(4096).unwrap();
        let ext4 = filter_rows(&ext, "fs=ext4");
        // ext4: (0):1900544, (1-5070):1900546-1905615.
        assert_eq!(ext4.height(), 2);
        let phys = i64_values(&ext4, "t", "physical_bytes").unwrap();
        let len = i64_values(&ext4, "t", "length_bytes").unwrap();
        assert_eq!(phys, [Some(1900544 * 4096), Some(1900546 * 4096)]);
        assert_eq!(len, [Some(4096), Some(5070 * 4096)]);
        let ext3 = filter_rows(&ext, "fs=ext3");
        // Every listed data range of the head and tail, the (IND) entries left out.
        let blocks: i64 = i64_values(&ext3, "t", "length_bytes")
            .unwrap()
            .into_iter()
            .flatten()
            .sum::<i64>()
            / 4096;
        assert_eq!(blocks, 58 + 21);
        let paths = str_values(&ext3, "t", "path").unwrap();
        assert_eq!(paths[0].as_deref(), Some("published: fs=ext3"));
        // The same frame draws as an extents chart.
        assert!(crate::plot::Chart::extents(&ext).is_ok());
        assert!(extents(0).is_err());
    }

    fn filter_rows(df: &DataFrame, id: &str) -> DataFrame {
        crate::analysis::filter_eq(df, &[("point_id", id)]).unwrap()
    }

    fn variable_names(df: &DataFrame) -> Vec<String> {
        crate::analysis::variable_columns(df)
    }
}
