//! Block maps: where each file's data lives on disk.
//!
//! - [`fiemap`]: the FS_IOC_FIEMAP ioctl on one open file (no `filefrag` spawned);
//! - [`walk`]: a parallel walk of a path or a tree of a mounted filesystem → [`walk::BlockMap`];
//! - [`debugfs`]: the same rows for an unmounted ext2/3/4 image, through one `debugfs`
//!   process → [`debugfs::ImageMap`];
//! - [`summary`]: per-file and per-filesystem fragmentation derived from the rows.
//!
//! Every source yields [`Extent`] rows (the `extents` table, defined in [`crate::extent`]
//! because the text parsers make them too); see [`Extent`] for the flags.

pub mod debugfs;
pub mod fiemap;
pub mod summary;
pub mod walk;

pub use crate::extent::{extents_frame, flags, Extent};

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
