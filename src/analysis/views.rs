//! Views of a bundle's parsed tables, ready for a table or a chart:
//! - [`fsck_passes`]: the per-pass rows of the `fsck` table (e2fsck `-tt`);
//! - [`largest_files`] / [`largest_file_summary`]: each point's largest file in the
//!   `extents` table (the largest directory of seed 001), its extents and how
//!   fragmented it is.
//!
//! The published data in the same layouts are [`crate::published::runs`] and
//! [`crate::published::extents`].

use super::{i64_values, str_values, AnalysisError};
use crate::blockmap::summary::{file_summary, FileSummary};
use crate::blockmap::Extent;
use indexmap::IndexMap;
use polars::prelude::*;
use serde::Serialize;

/// The rows of an `fsck` table that are e2fsck passes (`Pass 1` … `Pass 5`, sub-passes
/// such as `1B`), with their keys and timings: `point_id`, `point_index`, `iteration`,
/// `pass`, `pass_number`, `name`, `real_s`, `user_s`, `sys_s`, `read_mib`, `write_mib`
/// (those the table has). The row kind is `row_kind` in a bundle (`kind` in
/// `fslab parse e2fsck` output).
pub fn fsck_passes(fsck: &DataFrame) -> Result<DataFrame, AnalysisError> {
    let kind_col = if fsck.column("row_kind").is_ok() {
        "row_kind"
    } else {
        "kind"
    };
    let kinds = str_values(fsck, "fsck", kind_col)?;
    let keep: Vec<bool> = kinds.iter().map(|k| k.as_deref() == Some("pass")).collect();
    let rows = fsck.filter(&BooleanChunked::from_slice("keep".into(), &keep))?;
    let wanted = [
        "point_id",
        "point_index",
        "iteration",
        "pass",
        "pass_number",
        "name",
        "real_s",
        "user_s",
        "sys_s",
        "read_mib",
        "write_mib",
    ];
    let present: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|c| rows.column(c).is_ok())
        .collect();
    if !present.contains(&"pass") || !present.contains(&"real_s") {
        return Err(AnalysisError::MissingColumn {
            frame: "fsck",
            column: "pass / real_s".into(),
            available: fsck
                .get_column_names()
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(rows.select(present)?)
}

/// One file's rows of an extents table.
struct FileRows {
    point_id: String,
    point_index: i64,
    label: String,
    extents: Vec<Extent>,
}

impl FileRows {
    fn data_bytes(&self) -> u64 {
        self.extents
            .iter()
            .filter(|e| !is_metadata(e))
            .map(|e| e.length_bytes)
            .sum()
    }
}

fn is_metadata(e: &Extent) -> bool {
    e.flags.split(',').any(|f| f.trim() == "metadata")
}

/// Per point, its largest file by data bytes (rows flagged `metadata` not counted). A
/// file is one (capture, inode, path) within a point, as in the claims' layout check.
fn largest_per_point(extents: &DataFrame) -> Result<Vec<FileRows>, AnalysisError> {
    const F: &str = "extents";
    let h = extents.height();
    let opt_str = |name: &str| -> Result<Vec<Option<String>>, AnalysisError> {
        if extents.column(name).is_ok() {
            str_values(extents, F, name)
        } else {
            Ok(vec![None; h])
        }
    };
    let opt_i64 = |name: &str| -> Result<Vec<Option<i64>>, AnalysisError> {
        if extents.column(name).is_ok() {
            i64_values(extents, F, name)
        } else {
            Ok(vec![None; h])
        }
    };
    let pid = opt_str("point_id")?;
    let pidx = opt_i64("point_index")?;
    let capture = opt_str("capture")?;
    let path = opt_str("path")?;
    let flags = opt_str("flags")?;
    let inode = opt_i64("inode")?;
    let index = opt_i64("index")?;
    let logical = i64_values(extents, F, "logical_bytes")?;
    let physical = i64_values(extents, F, "physical_bytes")?;
    let length = i64_values(extents, F, "length_bytes")?;
    let u = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
    let mut files: IndexMap<(String, String, Option<i64>, String), FileRows> = IndexMap::new();
    for r in 0..h {
        // Holes (xfs_bmap, xfs_io fiemap rows flagged `hole`) map nothing, and rows whose
        // bytes are unknown (debugfs without a block size) cannot be placed.
        let hole = flags[r]
            .as_deref()
            .is_some_and(|f| f.split(',').any(|x| x.trim() == "hole"));
        if hole || length[r].is_none() || logical[r].is_none() {
            continue;
        }
        let point = pid[r].clone().unwrap_or_default();
        let p = path[r].clone().unwrap_or_default();
        let key = (
            point.clone(),
            capture[r].clone().unwrap_or_default(),
            inode[r],
            p.clone(),
        );
        let label = if !p.is_empty() {
            p.clone()
        } else {
            inode[r].map_or_else(|| "?".to_string(), |i| format!("inode {i}"))
        };
        let file = files.entry(key).or_insert_with(|| FileRows {
            point_id: point.clone(),
            point_index: pidx[r].unwrap_or(-1),
            label,
            extents: Vec::new(),
        });
        file.extents.push(Extent {
            path: p.into(),
            inode: u(inode[r]),
            index: u(index[r]).unwrap_or(0),
            logical_bytes: u(logical[r]).unwrap_or(0),
            physical_bytes: u(physical[r]),
            length_bytes: u(length[r]).unwrap_or(0),
            flags: crate::blockmap::flags(flags[r].as_deref().unwrap_or_default()),
        });
    }
    // Ties go to the greatest `capture:inode:path`, the file the claims' layout check
    // names, so that both talk about the same directory.
    let mut best: IndexMap<String, (String, FileRows)> = IndexMap::new();
    for ((_, capture, inode, path), f) in files {
        let key = format!(
            "{capture}:{}:{path}",
            inode.map(|i| i.to_string()).unwrap_or_default()
        );
        let better = match best.get(&f.point_id) {
            None => true,
            Some((k, b)) => (f.data_bytes(), &key) > (b.data_bytes(), k),
        };
        if better {
            best.insert(f.point_id.clone(), (key, f));
        }
    }
    let best: IndexMap<String, FileRows> = best.into_iter().map(|(id, (_, f))| (id, f)).collect();
    let mut out: Vec<FileRows> = best.into_values().collect();
    out.sort_by_key(|f| f.point_index);
    Ok(out)
}

/// The data extents of each point's largest file (by data bytes; in seed 001, the
/// largest directory), in logical order, with `path` set to `POINT: FILE` (`FILE` is
/// the path, or `inode N` when the block map came from `debugfs stat`) so that
/// `plot::Chart::extents` draws one series per point. Columns: `point_id`,
/// `point_index`, `path`, `inode`, `index`, `logical_bytes`, `physical_bytes`,
/// `length_bytes`, `flags`. Metadata rows (indirect and extent-tree blocks) are left
/// out here and counted in [`largest_file_summary`].
pub fn largest_files(extents: &DataFrame) -> Result<DataFrame, AnalysisError> {
    let files = largest_per_point(extents)?;
    let mut pid = Vec::new();
    let mut pidx = Vec::new();
    let mut rows: Vec<Extent> = Vec::new();
    for f in &files {
        let mut data: Vec<&Extent> = f.extents.iter().filter(|e| !is_metadata(e)).collect();
        data.sort_by_key(|e| e.logical_bytes);
        for e in data {
            pid.push(f.point_id.clone());
            pidx.push(f.point_index);
            rows.push(Extent {
                path: format!("{}: {}", f.point_id, f.label).into(),
                ..e.clone()
            });
        }
    }
    let body = crate::blockmap::extents_frame(&rows)
        .map_err(|e| AnalysisError::InvalidOption(format!("extents frame: {e}")))?;
    let mut cols = vec![
        Column::new("point_id".into(), pid),
        Column::new("point_index".into(), pidx),
    ];
    cols.extend(body.columns().iter().cloned());
    Ok(DataFrame::new_infer_height(cols)?)
}

#[derive(Serialize)]
struct LargestRow {
    point_id: String,
    point_index: i64,
    file: String,
    #[serde(flatten)]
    summary: FileSummary,
}

/// One row per point: its largest file ([`largest_files`]; `file` is its path or
/// `inode N`) and that file's fragmentation as
/// [`crate::blockmap::summary::file_summary`] computes it (`inode`, `extents`,
/// `fragments` — filefrag's count —, `metadata_blocks`, `mapped_bytes`,
/// `contiguous_fraction`, `seek_bytes`, …).
pub fn largest_file_summary(extents: &DataFrame) -> Result<DataFrame, AnalysisError> {
    let rows: Vec<LargestRow> = largest_per_point(extents)?
        .into_iter()
        .map(|f| {
            let refs: Vec<&Extent> = f.extents.iter().collect();
            LargestRow {
                summary: file_summary(&f.label, &refs),
                point_id: f.point_id,
                point_index: f.point_index,
                file: f.label,
            }
        })
        .collect();
    let mut df = crate::frames::from_records(&rows)?;
    // `path` repeats `file`.
    if df.column("path").is_ok() {
        df = df.drop("path")?;
    }
    Ok(df)
}

#[cfg(test)]
mod tests {
    use super::super::f64_values;
    use super::*;
    use crate::parse::{parse, Kind};

    fn fixture(rel: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// A parsed frame with the key columns the runner adds (`kind` → `row_kind`).
    fn as_table(kind: Kind, text: &str, point: &str, index: i64, iteration: i64) -> DataFrame {
        let opts = crate::parse::map::MapOptions::given(4096);
        let mut df = crate::parse::parse_with(kind, text, opts).unwrap().frame;
        if df.column("kind").is_ok() {
            df.rename("kind", "row_kind".into()).unwrap();
        }
        let h = df.height();
        let mut cols = vec![
            Column::new("point_id".into(), vec![point; h]),
            Column::new("point_index".into(), vec![index; h]),
            Column::new("iteration".into(), vec![iteration; h]),
            Column::new("capture".into(), vec!["capture-02-dir-blocks"; h]),
        ];
        cols.extend(df.columns().iter().cloned());
        DataFrame::new_infer_height(cols).unwrap()
    }

    #[test]
    fn fsck_pass_rows_of_real_e2fsck_output() {
        let text = fixture("e2fsck/ext3-f-n-tt.txt");
        let a = as_table(Kind::E2fsck, &text, "fs=ext3", 0, 1);
        let b = as_table(Kind::E2fsck, &text, "fs=ext3", 0, 2);
        let fsck = crate::frames::concat_diagonal(&[a, b]).unwrap();
        let passes = fsck_passes(&fsck).unwrap();
        // Five passes per run; peak, summary and total rows are dropped.
        assert_eq!(passes.height(), 10);
        let pass = str_values(&passes, "t", "pass").unwrap();
        assert_eq!(
            pass[..5],
            ["1", "2", "3", "4", "5"].map(|s| Some(s.to_string()))
        );
        let real = f64_values(&passes, "t", "real_s").unwrap();
        assert_eq!(real[0], Some(0.33));
        assert_eq!(real[1], Some(0.03));
        let it = i64_values(&passes, "t", "iteration").unwrap();
        assert_eq!((it[0], it[5]), (Some(1), Some(2)));
        assert!(passes.column("name").is_ok() && passes.column("row_kind").is_err());
        // Straight from the parser (no bundle keys) it works too.
        let raw = parse(Kind::E2fsck, &text).unwrap().frame;
        assert_eq!(fsck_passes(&raw).unwrap().height(), 5);
        assert!(fsck_passes(&df!("row_kind" => ["pass"]).unwrap()).is_err());
    }

    #[test]
    fn largest_directory_per_point_from_debugfs_stat() {
        // ext3 directory: 34 data blocks and one indirect block, mostly one apart.
        let ext3 = as_table(
            Kind::DebugfsStat,
            &fixture("debugfs/ext3-stat-dir.txt"),
            "fs=ext3",
            0,
            0,
        );
        let small = as_table(
            Kind::DebugfsStat,
            &fixture("debugfs/ext4-stat-small.txt"),
            "fs=ext4",
            1,
            0,
        );
        let big = as_table(
            Kind::DebugfsStat,
            &fixture("debugfs/ext4-stat-dir.txt"),
            "fs=ext4",
            1,
            0,
        );
        let ext = crate::frames::concat_diagonal(&[ext3, small, big]).unwrap();
        let largest = largest_files(&ext).unwrap();
        let paths = str_values(&largest, "t", "path").unwrap();
        assert_eq!(paths[0].as_deref(), Some("fs=ext3: inode 32769"));
        let ext3_rows = paths
            .iter()
            .filter(|p| p.as_deref() == Some("fs=ext3: inode 32769"));
        // 34 blocks in 33 ranges (1-2 is one), the (IND) block left out.
        assert_eq!(ext3_rows.count(), 33);
        let flags = str_values(&largest, "t", "flags").unwrap();
        assert!(flags
            .iter()
            .all(|f| !f.as_deref().unwrap_or("").contains("metadata")));
        let summary = largest_file_summary(&ext).unwrap();
        assert_eq!(summary.height(), 2);
        assert!(summary.column("path").is_err() && summary.column("file").is_ok());
        let ids = str_values(&summary, "t", "point_id").unwrap();
        assert_eq!(ids[0].as_deref(), Some("fs=ext3"));
        let meta = i64_values(&summary, "t", "metadata_blocks").unwrap();
        assert_eq!(meta[0], Some(1));
        let mapped = i64_values(&summary, "t", "mapped_bytes").unwrap();
        assert_eq!(mapped[0], Some(34 * 4096));
        let frags = i64_values(&summary, "t", "fragments").unwrap();
        assert!(frags[0].unwrap() > 20, "{frags:?}");
        // For ext4 the larger of the two files was taken.
        let files = str_values(&summary, "t", "file").unwrap();
        let ext4_big = parse(Kind::DebugfsStat, &fixture("debugfs/ext4-stat-dir.txt"))
            .unwrap()
            .frame;
        let inode = i64_values(&ext4_big, "t", "inode").unwrap()[0].unwrap();
        assert_eq!(files[1], Some(format!("inode {inode}")));
    }

    #[test]
    fn largest_file_ties_go_where_the_claims_look() {
        // Two directories of 5 blocks: the claims' layout check takes the greatest
        // `capture:inode:path` as text, inode 99 over inode 150; so does the view.
        let df = df!(
            "point_id" => ["fs=ext4", "fs=ext4"],
            "capture" => ["c", "c"],
            "inode" => [150i64, 99],
            "path" => ["", ""],
            "index" => [0i64, 0],
            "logical_bytes" => [0i64, 0],
            "physical_bytes" => [4096i64, 8192],
            "length_bytes" => [5 * 4096i64, 5 * 4096],
            "flags" => ["", ""],
        )
        .unwrap();
        let s = largest_file_summary(&df).unwrap();
        assert_eq!(
            str_values(&s, "t", "file").unwrap()[0].as_deref(),
            Some("inode 99")
        );
    }
}
