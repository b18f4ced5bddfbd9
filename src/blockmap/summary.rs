//! Fragmentation derived from extents: per file and per filesystem.
//!
//! Definitions (data extents only: rows flagged `metadata` are counted apart, see
//! [`crate::parse::debugfs`]), taken in logical order:
//! - a *break* between two consecutive data extents is where the second does not start
//!   where the first ends on disk (`physical + length`) nor where the first would have put
//!   it across a hole (`physical + logical gap`), or where either has no physical location.
//!   This is filefrag's rule: `fragments` (1 + breaks) equals filefrag's `N extents found`;
//! - `contiguous_fraction` = (extents − fragments) / (extents − 1): the share of extent
//!   boundaries that need no seek; 1.0 for a single extent, None without extents;
//! - `seek_bytes` = Σ |next.physical − (prev.physical + prev.length)| over consecutive data
//!   extents with known locations: how far a sequential reader moves the head between them.

use super::{BlockmapError, Extent, FileEntry};
use indexmap::IndexMap;
use serde::Serialize;

/// Fragmentation of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FileSummary {
    pub path: String,
    pub inode: Option<u64>,
    pub is_dir: Option<bool>,
    pub size_bytes: Option<u64>,
    /// Data extents (rows without `metadata`).
    pub extents: u64,
    /// Physically discontiguous pieces (filefrag's `N extents found`).
    pub fragments: u64,
    /// IND/DIND/TIND/ETB blocks (debugfs sources only).
    pub metadata_blocks: u64,
    /// Bytes covered by data extents.
    pub mapped_bytes: u64,
    /// Bytes in `unwritten` extents.
    pub unwritten_bytes: u64,
    /// Bytes in extents without a location yet (`unknown_loc`, `delalloc`, inline).
    pub unlocated_bytes: u64,
    pub contiguous_fraction: Option<f64>,
    pub seek_bytes: u64,
    /// Largest data extent.
    pub largest_extent_bytes: u64,
    pub first_physical_bytes: Option<u64>,
}

/// Fragmentation of a whole filesystem (or tree): one row.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FsSummary {
    pub files: u64,
    pub directories: u64,
    /// Directories whose blocks the filesystem does not report (XFS has no FIEMAP for
    /// directories): not in `directories` nor in any other count.
    pub directories_unmapped: u64,
    /// Files and directories with at least one data extent.
    pub with_data: u64,
    /// Files and directories in more than one fragment.
    pub fragmented: u64,
    /// `fragmented / files+directories`, in percent (as e2fsck's "non-contiguous").
    pub noncontiguous_percent: f64,
    pub extents: u64,
    pub fragments: u64,
    pub metadata_blocks: u64,
    pub mapped_bytes: u64,
    pub unwritten_bytes: u64,
    /// Data extents per file with data.
    pub mean_extents: f64,
    /// Fragments per file with data.
    pub mean_fragments: f64,
    pub max_extents: u64,
    pub max_extents_path: Option<String>,
    /// Mean of the files' contiguous fractions (files with data).
    pub mean_contiguous_fraction: Option<f64>,
    /// Bytes-weighted share of data in files of a single fragment.
    pub unfragmented_bytes_fraction: Option<f64>,
    pub seek_bytes: u64,
    pub mean_extent_bytes: Option<f64>,
}

fn is_meta(e: &Extent) -> bool {
    e.flags.split(',').any(|f| f == "metadata")
}

fn has_flag(e: &Extent, flag: &str) -> bool {
    e.flags.split(',').any(|f| f == flag)
}

/// Summary of one file's rows (any order; data extents are sorted by logical offset).
pub fn file_summary(path: &str, rows: &[&Extent]) -> FileSummary {
    let mut s = FileSummary {
        path: path.to_string(),
        inode: rows.iter().find_map(|e| e.inode),
        ..Default::default()
    };
    let mut data: Vec<&Extent> = Vec::with_capacity(rows.len());
    for e in rows {
        if is_meta(e) {
            s.metadata_blocks += 1;
        } else {
            data.push(e);
        }
    }
    data.sort_by_key(|e| e.logical_bytes);
    s.extents = data.len() as u64;
    let mut prev: Option<&Extent> = None;
    for e in &data {
        s.mapped_bytes = s.mapped_bytes.saturating_add(e.length_bytes);
        s.largest_extent_bytes = s.largest_extent_bytes.max(e.length_bytes);
        if has_flag(e, "unwritten") {
            s.unwritten_bytes = s.unwritten_bytes.saturating_add(e.length_bytes);
        }
        if e.physical_bytes.is_none() || has_flag(e, "inline") {
            s.unlocated_bytes = s.unlocated_bytes.saturating_add(e.length_bytes);
        }
        if s.first_physical_bytes.is_none() {
            s.first_physical_bytes = e.physical_bytes;
        }
        match prev {
            None => s.fragments = 1,
            Some(p) => match (p.physical_bytes, e.physical_bytes) {
                (Some(pp), Some(ep)) => {
                    let dense = pp.saturating_add(p.length_bytes);
                    let aligned =
                        pp.saturating_add(e.logical_bytes.saturating_sub(p.logical_bytes));
                    if ep != dense && ep != aligned {
                        s.fragments += 1;
                    }
                    s.seek_bytes = s.seek_bytes.saturating_add(ep.abs_diff(dense));
                }
                _ => s.fragments += 1,
            },
        }
        prev = Some(e);
    }
    s.contiguous_fraction = match s.extents {
        0 => None,
        1 => Some(1.0),
        n => Some((n - s.fragments) as f64 / (n - 1) as f64),
    };
    s
}

/// Per-file summaries of extents grouped by path, in first-seen order.
pub fn per_file(extents: &[Extent]) -> Vec<FileSummary> {
    let mut groups: IndexMap<&str, Vec<&Extent>> = IndexMap::new();
    for e in extents {
        groups.entry(&*e.path).or_default().push(e);
    }
    groups
        .into_iter()
        .map(|(path, rows)| file_summary(path, &rows))
        .collect()
}

/// Per-file summaries for every file of a walk, files without extents included.
pub fn per_file_with(files: &[FileEntry], extents: &[Extent]) -> Vec<FileSummary> {
    let mut groups: IndexMap<&str, Vec<&Extent>> = IndexMap::new();
    for f in files {
        groups.entry(f.path.as_str()).or_default();
    }
    for e in extents {
        groups.entry(&*e.path).or_default().push(e);
    }
    let info: IndexMap<&str, &FileEntry> = files.iter().map(|f| (f.path.as_str(), f)).collect();
    groups
        .into_iter()
        .map(|(path, rows)| {
            let mut s = file_summary(path, &rows);
            if let Some(f) = info.get(path) {
                s.inode = s.inode.or(f.inode);
                s.size_bytes = f.size_bytes;
                s.is_dir = Some(f.is_dir);
            }
            s
        })
        .collect()
}

/// The filesystem-wide summary of per-file summaries.
pub fn filesystem(files: &[FileSummary]) -> FsSummary {
    let mut acc = FsAccumulator::default();
    for f in files {
        acc.add(f);
    }
    acc.finish()
}

/// [`filesystem`] one file at a time (a streaming pass): constant memory, the same
/// result in the same order of additions.
#[derive(Debug, Clone, Default)]
pub struct FsAccumulator {
    s: FsSummary,
    fraction_sum: f64,
    fraction_count: u64,
    unfragmented_bytes: u64,
}

impl FsAccumulator {
    /// A directory the filesystem cannot map ([`FsSummary::directories_unmapped`]).
    pub fn add_unmapped_directory(&mut self) {
        self.s.directories_unmapped += 1;
    }

    pub fn add(&mut self, f: &FileSummary) {
        let s = &mut self.s;
        if f.is_dir == Some(true) {
            s.directories += 1;
        } else {
            s.files += 1;
        }
        if f.extents > 0 {
            s.with_data += 1;
        }
        if f.fragments > 1 {
            s.fragmented += 1;
        } else {
            self.unfragmented_bytes = self.unfragmented_bytes.saturating_add(f.mapped_bytes);
        }
        s.extents += f.extents;
        s.fragments += f.fragments;
        s.metadata_blocks += f.metadata_blocks;
        s.mapped_bytes = s.mapped_bytes.saturating_add(f.mapped_bytes);
        s.unwritten_bytes = s.unwritten_bytes.saturating_add(f.unwritten_bytes);
        s.seek_bytes = s.seek_bytes.saturating_add(f.seek_bytes);
        if f.extents > s.max_extents {
            s.max_extents = f.extents;
            s.max_extents_path = Some(f.path.clone());
        }
        if let Some(c) = f.contiguous_fraction {
            self.fraction_sum += c;
            self.fraction_count += 1;
        }
    }

    pub fn finish(self) -> FsSummary {
        let mut s = self.s;
        let all = (s.files + s.directories) as f64;
        if all > 0.0 {
            s.noncontiguous_percent = 100.0 * s.fragmented as f64 / all;
        }
        if s.with_data > 0 {
            s.mean_extents = s.extents as f64 / s.with_data as f64;
            s.mean_fragments = s.fragments as f64 / s.with_data as f64;
        }
        if self.fraction_count > 0 {
            s.mean_contiguous_fraction = Some(self.fraction_sum / self.fraction_count as f64);
        }
        if s.mapped_bytes > 0 {
            s.unfragmented_bytes_fraction =
                Some(self.unfragmented_bytes as f64 / s.mapped_bytes as f64);
        }
        if s.extents > 0 {
            s.mean_extent_bytes = Some(s.mapped_bytes as f64 / s.extents as f64);
        }
        s
    }
}

/// The summary of one mapped file of a walk (its extents and what the walk knows of it).
pub fn mapped_summary(m: &super::MappedFile) -> FileSummary {
    let refs: Vec<&Extent> = m.extents.iter().collect();
    let mut s = file_summary(&m.entry.path, &refs);
    s.inode = s.inode.or(m.entry.inode);
    s.size_bytes = m.entry.size_bytes;
    s.is_dir = Some(m.entry.is_dir);
    s
}

/// Per-file summaries as a DataFrame with a fixed schema, whatever the rows (so that
/// batches of a streamed map concatenate): `path` (str), `inode` (i64), `is_dir` (bool),
/// `size_bytes`, `extents`, `fragments`, `metadata_blocks`, `mapped_bytes`,
/// `unwritten_bytes`, `unlocated_bytes` (i64), `contiguous_fraction` (f64), `seek_bytes`,
/// `largest_extent_bytes`, `first_physical_bytes` (i64): the columns and types
/// [`crate::frames::from_records`] infers from rows with values.
pub fn per_file_frame(files: &[FileSummary]) -> Result<polars::prelude::DataFrame, BlockmapError> {
    use polars::prelude::{Column, DataFrame};
    let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let int = |name: &str, f: &dyn Fn(&FileSummary) -> u64| {
        Column::new(
            name.into(),
            files.iter().map(|s| i(f(s))).collect::<Vec<i64>>(),
        )
    };
    let columns = vec![
        Column::new(
            "path".into(),
            files.iter().map(|s| s.path.as_str()).collect::<Vec<&str>>(),
        ),
        Column::new(
            "inode".into(),
            files.iter().map(|s| s.inode.map(i)).collect::<Vec<_>>(),
        ),
        Column::new(
            "is_dir".into(),
            files.iter().map(|s| s.is_dir).collect::<Vec<_>>(),
        ),
        Column::new(
            "size_bytes".into(),
            files
                .iter()
                .map(|s| s.size_bytes.map(i))
                .collect::<Vec<_>>(),
        ),
        int("extents", &|s| s.extents),
        int("fragments", &|s| s.fragments),
        int("metadata_blocks", &|s| s.metadata_blocks),
        int("mapped_bytes", &|s| s.mapped_bytes),
        int("unwritten_bytes", &|s| s.unwritten_bytes),
        int("unlocated_bytes", &|s| s.unlocated_bytes),
        Column::new(
            "contiguous_fraction".into(),
            files
                .iter()
                .map(|s| s.contiguous_fraction)
                .collect::<Vec<_>>(),
        ),
        int("seek_bytes", &|s| s.seek_bytes),
        int("largest_extent_bytes", &|s| s.largest_extent_bytes),
        Column::new(
            "first_physical_bytes".into(),
            files
                .iter()
                .map(|s| s.first_physical_bytes.map(i))
                .collect::<Vec<_>>(),
        ),
    ];
    Ok(DataFrame::new(files.len(), columns).map_err(crate::frames::FrameError::from)?)
}

/// The filesystem summary as a one-row DataFrame.
pub fn filesystem_frame(fs: &FsSummary) -> Result<polars::prelude::DataFrame, BlockmapError> {
    Ok(crate::frames::from_records(std::slice::from_ref(fs))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(l: u64, p: Option<u64>, len: u64, flags: &str) -> Extent {
        Extent {
            path: "f".into(),
            logical_bytes: l,
            physical_bytes: p,
            length_bytes: len,
            flags: flags.to_string().into(),
            ..Default::default()
        }
    }

    #[test]
    fn fragments_follow_filefrag() {
        // sparse.bin of the fixtures: an aligned hole is not a break, a jump is.
        let rows = [
            e(0, Some(38912 * 4096), 3 * 4096, ""),
            e(100 * 4096, Some(39012 * 4096), 2 * 4096, ""),
            e(5000 * 4096, Some(32833 * 4096), 4096, "last,eof"),
        ];
        let refs: Vec<&Extent> = rows.iter().collect();
        let s = file_summary("f", &refs);
        assert_eq!((s.extents, s.fragments), (3, 2));
        assert_eq!(s.contiguous_fraction, Some(0.5));
        let seek = (39012 - 38915) * 4096 + (39014 - 32833) * 4096;
        assert_eq!(s.seek_bytes, seek);
    }

    #[test]
    fn metadata_rows_are_counted_apart() {
        let rows = [
            e(0, Some(100), 12, ""),
            e(12, Some(500), 1, "metadata,ind"),
            e(12, Some(112), 4, "last"),
        ];
        let refs: Vec<&Extent> = rows.iter().collect();
        let s = file_summary("f", &refs);
        assert_eq!(
            (s.extents, s.fragments, s.metadata_blocks, s.seek_bytes),
            (2, 1, 1, 0)
        );
        assert_eq!(s.contiguous_fraction, Some(1.0));
    }

    #[test]
    fn filesystem_totals() {
        let a = FileSummary {
            extents: 3,
            fragments: 3,
            mapped_bytes: 30,
            contiguous_fraction: Some(0.0),
            path: "a".into(),
            ..Default::default()
        };
        let b = FileSummary {
            extents: 1,
            fragments: 1,
            mapped_bytes: 10,
            contiguous_fraction: Some(1.0),
            path: "b".into(),
            is_dir: Some(true),
            ..Default::default()
        };
        let c = FileSummary {
            path: "c".into(),
            ..Default::default()
        };
        let fs = filesystem(&[a, b, c]);
        assert_eq!(
            (fs.files, fs.directories, fs.with_data, fs.fragmented),
            (2, 1, 2, 1)
        );
        assert!((fs.noncontiguous_percent - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(fs.max_extents_path.as_deref(), Some("a"));
        assert_eq!(fs.mean_contiguous_fraction, Some(0.5));
        assert_eq!(fs.unfragmented_bytes_fraction, Some(0.25));
        assert_eq!(fs.mean_extents, 2.0);
    }

    #[test]
    fn per_file_frame_matches_from_records() {
        let a = FileSummary {
            path: "a".into(),
            inode: Some(12),
            is_dir: Some(false),
            size_bytes: Some(4096),
            extents: 2,
            fragments: 2,
            mapped_bytes: 8192,
            contiguous_fraction: Some(0.0),
            seek_bytes: 4096,
            largest_extent_bytes: 4096,
            first_physical_bytes: Some(1 << 20),
            ..Default::default()
        };
        let b = FileSummary {
            path: "b".into(),
            is_dir: Some(true),
            ..Default::default()
        };
        let rows = [a, b];
        let direct = per_file_frame(&rows).unwrap();
        let generic = crate::frames::from_records(&rows).unwrap();
        assert_eq!(direct.schema(), generic.schema());
        assert!(direct == generic);
        // Batches without values keep the schema.
        let empty = per_file_frame(&rows[1..]).unwrap();
        assert_eq!(empty.schema(), direct.schema());
        assert_eq!(per_file_frame(&[]).unwrap().schema(), direct.schema());
    }
}
