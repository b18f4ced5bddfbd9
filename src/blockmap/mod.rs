//! Block maps: where each file's data lives on disk.
//!
//! - [`fiemap`]: the FS_IOC_FIEMAP ioctl on one open file (no `filefrag` spawned);
//! - [`walk`]: a parallel walk of a path or a tree of a mounted filesystem → [`walk::BlockMap`];
//! - [`debugfs`]: the same rows for an unmounted ext2/3/4 image, through one `debugfs`
//!   process → [`debugfs::ImageMap`];
//! - [`summary`]: per-file and per-filesystem fragmentation derived from the rows.
//!
//! Every source yields [`Extent`] rows (the `extents` table); see [`Extent`] for the flags.

pub mod debugfs;
mod extent;
pub mod fiemap;
pub mod summary;
pub mod walk;

pub use extent::{flags, Extent};

use serde::Serialize;
use std::path::PathBuf;

/// A file or directory that was mapped (it may have no extents: empty files).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct FileEntry {
    pub path: String,
    pub inode: Option<u64>,
    pub size_bytes: Option<u64>,
    pub is_dir: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum BlockmapError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: FIEMAP: {source}")]
    Fiemap {
        path: PathBuf,
        #[source]
        source: nix::Error,
    },
    #[error("{image}: not an ext2/3/4 image: {reason}")]
    NotExt { image: PathBuf, reason: String },
    #[error("debugfs on {image}: {message}")]
    Debugfs { image: PathBuf, message: String },
    #[error("thread pool: {0}")]
    Threads(String),
    #[error(transparent)]
    Parse(#[from] crate::parse::ParseError),
    #[error(transparent)]
    Frame(#[from] crate::frames::FrameError),
}

/// Extent rows as a DataFrame with a fixed schema: `path` (str), `inode` (i64, null when
/// unknown), `index`, `logical_bytes` (i64), `physical_bytes` (i64, null without a
/// location), `length_bytes` (i64), `flags` (str). Built column by column (the same
/// columns and types [`crate::frames::from_records`] infers, without its per-row JSON
/// detour, which matters for trees of many files; an all-null column stays i64 here).
pub fn extents_frame(extents: &[Extent]) -> Result<polars::prelude::DataFrame, BlockmapError> {
    use polars::prelude::{Column, DataFrame};
    let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let n = extents.len();
    let mut path = Vec::with_capacity(n);
    let mut inode = Vec::with_capacity(n);
    let mut index = Vec::with_capacity(n);
    let mut logical = Vec::with_capacity(n);
    let mut physical = Vec::with_capacity(n);
    let mut length = Vec::with_capacity(n);
    let mut flags = Vec::with_capacity(n);
    for e in extents {
        path.push(&*e.path);
        inode.push(e.inode.map(i));
        index.push(i(e.index));
        logical.push(i(e.logical_bytes));
        physical.push(e.physical_bytes.map(i));
        length.push(i(e.length_bytes));
        flags.push(&*e.flags);
    }
    let columns = vec![
        Column::new("path".into(), path),
        Column::new("inode".into(), inode),
        Column::new("index".into(), index),
        Column::new("logical_bytes".into(), logical),
        Column::new("physical_bytes".into(), physical),
        Column::new("length_bytes".into(), length),
        Column::new("flags".into(), flags),
    ];
    DataFrame::new(n, columns).map_err(|e| BlockmapError::Frame(e.into()))
}

/// The frames of one block-map capture, ready for a bundle (`extents.parquet` …).
#[derive(Debug, Clone)]
pub struct Capture {
    /// One row per extent ([`extents_frame`]).
    pub extents: polars::prelude::DataFrame,
    /// One row per file or directory ([`summary::FileSummary`]).
    pub per_file: polars::prelude::DataFrame,
    /// One row for the whole tree ([`summary::FsSummary`]).
    pub filesystem: polars::prelude::DataFrame,
    /// Paths that could not be mapped (they are not in the frames).
    pub errors: Vec<walk::PathError>,
}

fn capture_of(
    files: &[FileEntry],
    extents: &[Extent],
    errors: Vec<walk::PathError>,
) -> Result<Capture, BlockmapError> {
    let per_file = summary::per_file_with(files, extents);
    let fs = summary::filesystem(&per_file);
    Ok(Capture {
        extents: extents_frame(extents)?,
        per_file: summary::per_file_frame(&per_file)?,
        filesystem: summary::filesystem_frame(&fs)?,
        errors,
    })
}

/// Capture the block map of a path or tree of a mounted filesystem (FIEMAP).
pub fn capture_mounted(
    root: &std::path::Path,
    opts: &walk::WalkOptions,
) -> Result<Capture, BlockmapError> {
    let m = walk::map_tree(root, opts)?;
    capture_of(&m.files, &m.extents, m.errors)
}

/// Capture the block map of trees (`["/"]` for everything) inside an unmounted ext2/3/4
/// image, through one debugfs process.
pub fn capture_image(image: &std::path::Path, roots: &[&str]) -> Result<Capture, BlockmapError> {
    let m = debugfs::map_image_tree(image, roots)?;
    capture_of(&m.files, &m.extents, m.errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_frame_matches_from_records() {
        let rows = vec![
            Extent {
                path: "a".into(),
                inode: Some(12),
                index: 0,
                logical_bytes: 0,
                physical_bytes: Some(4096),
                length_bytes: 8192,
                flags: "".into(),
            },
            Extent {
                path: "a".into(),
                inode: Some(12),
                index: 1,
                logical_bytes: 8192,
                physical_bytes: None,
                length_bytes: 4096,
                flags: "last,unknown_loc,delalloc,eof".into(),
            },
        ];
        let direct = extents_frame(&rows).unwrap();
        let generic = crate::frames::from_records(&rows).unwrap();
        assert_eq!(direct.schema(), generic.schema());
        assert!(direct == generic);
        assert_eq!(extents_frame(&[]).unwrap().width(), 7);
    }
}
