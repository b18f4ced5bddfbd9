//! Block maps: where each file's data lives on disk.
//!
//! - [`fiemap`]: the FS_IOC_FIEMAP ioctl on one open file (no `filefrag` spawned);
//! - [`getfsmap`]: the same rows on XFS with rmapbt from one GETFSMAP stream;
//! - [`walk`]: a parallel walk of a path or a tree of a mounted filesystem → [`walk::BlockMap`];
//! - [`debugfs`]: the same rows for an unmounted ext2/3/4 image, through one `debugfs`
//!   process → [`debugfs::ImageMap`];
//! - [`summary`]: per-file and per-filesystem fragmentation derived from the rows;
//! - [`stream`]: rows and summaries out to parquet/CSV/memory in batches, in one pass.
//!
//! Every source yields [`Extent`] rows (the `extents` table, defined in [`crate::extent`]
//! because the text parsers make them too); see [`Extent`] for the flags.

pub mod debugfs;
pub mod fiemap;
pub mod getfsmap;
pub mod stream;
pub mod summary;
pub mod walk;
pub mod xfs_disk;

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

/// One mapped file or directory with its extents, as a walk yields them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MappedFile {
    pub entry: FileEntry,
    pub extents: Vec<Extent>,
}

/// A mapped file, or why it could not be mapped.
pub type Item = Result<MappedFile, walk::PathError>;

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
    /// A directory on a filesystem that has no FIEMAP for directories (XFS answers
    /// EOPNOTSUPP): its blocks cannot be mapped this way. A walk counts these apart
    /// ([`walk::Unmapped::DirectoryWithoutFiemap`]); they are not errors there.
    #[error("{path}: this filesystem has no FIEMAP for directories")]
    DirectoryWithoutFiemap { path: PathBuf },
    #[error("{path}: {what}: {source}")]
    Fsmap {
        path: PathBuf,
        what: String,
        #[source]
        source: nix::Error,
    },
    #[error("{path}: cannot use GETFSMAP: {reason}")]
    NoFsmap {
        path: PathBuf,
        #[source]
        reason: getfsmap::Unusable,
    },
    #[error("{path}: cannot read inode sizes from the device: {reason}")]
    NoDevice {
        path: PathBuf,
        #[source]
        reason: Box<getfsmap::NoDevice>,
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
    /// Paths that could not be mapped (they are not in the frames). Directories the
    /// filesystem cannot map are counted in the `filesystem` frame
    /// (`directories_unmapped`) instead.
    pub errors: Vec<walk::PathError>,
}

/// Capture mapped files in one streaming pass into in-memory frames.
pub fn capture_items(items: impl IntoIterator<Item = Item>) -> Result<Capture, BlockmapError> {
    let (mut ext, mut per) = (stream::MemSink::default(), stream::MemSink::default());
    let mut s = stream::Streamer::new(Some(&mut ext), Some(&mut per));
    for item in items {
        s.add(item)?;
    }
    let out = s.finish()?;
    Ok(Capture {
        extents: ext.finish(extents_frame(&[])?)?,
        per_file: per.finish(summary::per_file_frame(&[])?)?,
        filesystem: summary::filesystem_frame(&out.filesystem)?,
        errors: out.errors,
    })
}

/// Files and their extents (grouped by path, in first-seen order, files without extents
/// included, extents of paths not in `files` after them) as items.
pub fn items_of(files: Vec<FileEntry>, extents: Vec<Extent>) -> Vec<MappedFile> {
    let mut groups: indexmap::IndexMap<std::sync::Arc<str>, MappedFile> = files
        .into_iter()
        .map(|f| {
            (
                std::sync::Arc::from(f.path.as_str()),
                MappedFile {
                    entry: f,
                    extents: Vec::new(),
                },
            )
        })
        .collect();
    for e in extents {
        groups
            .entry(std::sync::Arc::clone(&e.path))
            .or_insert_with(|| MappedFile {
                entry: FileEntry {
                    path: e.path.to_string(),
                    inode: e.inode,
                    ..Default::default()
                },
                extents: Vec::new(),
            })
            .extents
            .push(e);
    }
    groups.into_values().collect()
}

/// Capture the block map of a path or tree of a mounted filesystem (FIEMAP), in one
/// streaming pass (the frames themselves are in memory).
pub fn capture_mounted(
    root: &std::path::Path,
    opts: &walk::WalkOptions,
) -> Result<Capture, BlockmapError> {
    capture_items(walk::stream(
        std::slice::from_ref(&root.to_path_buf()),
        opts,
    )?)
}

/// Capture the block map of trees (`["/"]` for everything) inside an unmounted ext2/3/4
/// image, through one debugfs process.
pub fn capture_image(image: &std::path::Path, roots: &[&str]) -> Result<Capture, BlockmapError> {
    let m = debugfs::map_image_tree(image, roots)?;
    let errors = m.errors.into_iter().map(Err);
    capture_items(
        items_of(m.files, m.extents)
            .into_iter()
            .map(Ok)
            .chain(errors),
    )
}
