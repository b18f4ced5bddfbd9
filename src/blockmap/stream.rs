//! A block map streamed out as it is made: extent rows and per-file summaries go to
//! [`FrameSink`]s in batches of [`BATCH_ROWS`] rows (a parquet row group each for
//! [`ParquetSink`]), and the filesystem summary is accumulated in the same pass, so that
//! memory stays bounded whatever the number of files.
//!
//! Rows keep the order of the items (for a walk: depth first, siblings by name; each
//! file's extents in FIEMAP order) and the frames have fixed schemas
//! ([`super::extents_frame`], [`summary::per_file_frame`]).

use super::summary::{self, FileSummary, FsAccumulator, FsSummary};
use super::walk::{PathError, Unmapped};
use super::{BlockmapError, Extent, Item};
use crate::frames::FrameError;
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// Rows per batch handed to a sink (and per parquet row group).
pub const BATCH_ROWS: usize = 65_536;

/// Where batches of rows go.
pub trait FrameSink {
    fn write(&mut self, df: &mut DataFrame) -> Result<(), BlockmapError>;
}

fn polars(e: PolarsError) -> BlockmapError {
    BlockmapError::Frame(FrameError::from(e))
}

/// Batches kept in memory, concatenated at the end.
#[derive(Default)]
pub struct MemSink {
    frames: Vec<DataFrame>,
}

impl FrameSink for MemSink {
    fn write(&mut self, df: &mut DataFrame) -> Result<(), BlockmapError> {
        self.frames.push(std::mem::take(df));
        Ok(())
    }
}

impl MemSink {
    /// All rows; `empty` when no batch came.
    pub fn finish(self, empty: DataFrame) -> Result<DataFrame, BlockmapError> {
        let mut it = self.frames.into_iter();
        let Some(mut df) = it.next() else {
            return Ok(empty);
        };
        for f in it {
            df.vstack_mut_owned(f).map_err(polars)?;
        }
        df.rechunk_mut();
        Ok(df)
    }
}

/// A parquet file written one row group per batch, through a temporary file in the same
/// directory renamed over `path` by [`ParquetSink::finish`] (readers never see half a
/// file; dropped unfinished, the temporary file is removed).
pub struct ParquetSink {
    writer: Option<polars::io::parquet::write::BatchedWriter<std::io::BufWriter<std::fs::File>>>,
    tmp: PathBuf,
    path: PathBuf,
}

impl ParquetSink {
    /// Start `path` with the columns of `schema` and key-value metadata `meta`.
    pub fn create(
        path: &Path,
        schema: &Schema,
        meta: &[(&str, &str)],
    ) -> Result<ParquetSink, BlockmapError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path.file_name().ok_or_else(|| BlockmapError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
        })?;
        let tmp = dir.join(format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = std::fs::File::create(&tmp).map_err(|source| BlockmapError::Io {
            path: tmp.clone(),
            source,
        })?;
        let kv = polars::io::parquet::write::KeyValueMetadata::from_static(
            meta.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        let mut sink = ParquetSink {
            writer: None,
            tmp,
            path: path.to_path_buf(),
        };
        sink.writer = Some(
            ParquetWriter::new(std::io::BufWriter::with_capacity(1 << 20, file))
                .with_key_value_metadata((!meta.is_empty()).then_some(kv))
                .batched(schema)
                .map_err(polars)?,
        );
        Ok(sink)
    }

    /// Write the footer and rename the file into place.
    pub fn finish(mut self) -> Result<(), BlockmapError> {
        let w = self.writer.take().expect("an open writer");
        let size = w.finish().map_err(polars)?;
        // Dropping the writer flushes its buffer; a short file is an error.
        drop(w);
        let written = std::fs::metadata(&self.tmp)
            .map_err(|source| BlockmapError::Io {
                path: self.tmp.clone(),
                source,
            })?
            .len();
        if written != size {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(BlockmapError::Io {
                path: self.tmp.clone(),
                source: std::io::Error::other(format!("wrote {written} of {size} bytes")),
            });
        }
        std::fs::rename(&self.tmp, &self.path).map_err(|source| BlockmapError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

impl FrameSink for ParquetSink {
    fn write(&mut self, df: &mut DataFrame) -> Result<(), BlockmapError> {
        let w = self.writer.as_mut().expect("an open writer");
        w.write_batch(df).map_err(polars)
    }
}

impl Drop for ParquetSink {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// CSV to a writer, the header once.
pub struct CsvSink<W: std::io::Write> {
    writer: polars::io::csv::write::BatchedWriter<W>,
}

impl<W: std::io::Write> CsvSink<W> {
    pub fn new(w: W, schema: &Schema) -> Result<Self, BlockmapError> {
        Ok(CsvSink {
            writer: CsvWriter::new(w).batched(schema).map_err(polars)?,
        })
    }

    /// The header if no row came.
    pub fn finish(mut self) -> Result<(), BlockmapError> {
        self.writer.finish().map_err(polars)
    }
}

impl<W: std::io::Write> FrameSink for CsvSink<W> {
    fn write(&mut self, df: &mut DataFrame) -> Result<(), BlockmapError> {
        self.writer.write_batch(df).map_err(polars)
    }
}

/// The schema of the `extents` frame.
pub fn extents_schema() -> Schema {
    super::extents_frame(&[])
        .expect("an empty frame")
        .schema()
        .as_ref()
        .clone()
}

/// The schema of the per-file frame.
pub fn per_file_schema() -> Schema {
    summary::per_file_frame(&[])
        .expect("an empty frame")
        .schema()
        .as_ref()
        .clone()
}

/// What a streamed map leaves once its rows are out.
#[derive(Debug, Clone, Default)]
pub struct Streamed {
    pub filesystem: FsSummary,
    /// Paths that could not be mapped (kept in memory: one per failure). Directories the
    /// filesystem cannot map are not errors: they are counted in
    /// [`FsSummary::directories_unmapped`].
    pub errors: Vec<PathError>,
    pub files: u64,
    pub extent_rows: u64,
}

/// One streaming pass over mapped files: extent rows to one sink, per-file summaries to
/// another (either may be absent), the filesystem summary accumulated.
pub struct Streamer<'a> {
    extents: Option<&'a mut dyn FrameSink>,
    per_file: Option<&'a mut dyn FrameSink>,
    ext_buf: Vec<Extent>,
    file_buf: Vec<FileSummary>,
    fs: FsAccumulator,
    out: Streamed,
    batch_rows: usize,
}

impl<'a> Streamer<'a> {
    /// Rows per batch (default [`BATCH_ROWS`]; at least 1).
    pub fn with_batch_rows(mut self, n: usize) -> Self {
        self.batch_rows = n.max(1);
        self
    }

    pub fn new(
        extents: Option<&'a mut dyn FrameSink>,
        per_file: Option<&'a mut dyn FrameSink>,
    ) -> Self {
        Streamer {
            extents,
            per_file,
            ext_buf: Vec::new(),
            file_buf: Vec::new(),
            fs: FsAccumulator::default(),
            out: Streamed::default(),
            batch_rows: BATCH_ROWS,
        }
    }

    /// Add one mapped file (or why it could not be mapped).
    pub fn add(&mut self, item: Item) -> Result<(), BlockmapError> {
        let m = match item {
            Ok(m) => m,
            Err(e) if e.why == Unmapped::DirectoryWithoutFiemap => {
                self.fs.add_unmapped_directory();
                return Ok(());
            }
            Err(e) => {
                self.out.errors.push(e);
                return Ok(());
            }
        };
        let s = summary::mapped_summary(&m);
        self.fs.add(&s);
        self.out.files += 1;
        self.out.extent_rows += m.extents.len() as u64;
        if self.per_file.is_some() {
            self.file_buf.push(s);
            if self.file_buf.len() >= self.batch_rows {
                self.flush_files()?;
            }
        }
        if self.extents.is_some() {
            self.ext_buf.extend(m.extents);
            if self.ext_buf.len() >= self.batch_rows {
                self.flush_extents()?;
            }
        }
        Ok(())
    }

    fn flush_files(&mut self) -> Result<(), BlockmapError> {
        if let Some(sink) = self.per_file.as_mut() {
            if !self.file_buf.is_empty() {
                let mut df = summary::per_file_frame(&self.file_buf)?;
                self.file_buf.clear();
                sink.write(&mut df)?;
            }
        }
        Ok(())
    }

    fn flush_extents(&mut self) -> Result<(), BlockmapError> {
        if let Some(sink) = self.extents.as_mut() {
            if !self.ext_buf.is_empty() {
                let mut df = super::extents_frame(&self.ext_buf)?;
                self.ext_buf.clear();
                sink.write(&mut df)?;
            }
        }
        Ok(())
    }

    /// Flush the last batches; the filesystem summary and the errors.
    pub fn finish(mut self) -> Result<Streamed, BlockmapError> {
        self.flush_files()?;
        self.flush_extents()?;
        self.out.filesystem = self.fs.finish();
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blockmap::{FileEntry, MappedFile};

    #[test]
    fn a_directory_without_fiemap_is_counted_not_an_error() {
        let file = MappedFile {
            entry: FileEntry {
                path: "/m/d/f".into(),
                is_dir: false,
                ..Default::default()
            },
            extents: Vec::new(),
        };
        let unmapped = |path: &str| PathError {
            path: path.into(),
            error: "this filesystem has no FIEMAP for directories".into(),
            why: Unmapped::DirectoryWithoutFiemap,
        };
        let failed = PathError {
            path: "/m/d/gone".into(),
            error: "No such file or directory".into(),
            why: Unmapped::Failed,
        };
        let mut s = Streamer::new(None, None);
        for item in [
            Err(unmapped("/m")),
            Err(unmapped("/m/d")),
            Ok(file),
            Err(failed.clone()),
        ] {
            s.add(item).unwrap();
        }
        let done = s.finish().unwrap();
        assert_eq!(done.errors, [failed]);
        assert_eq!(done.files, 1);
        let fs = &done.filesystem;
        assert_eq!(
            (fs.files, fs.directories, fs.directories_unmapped),
            (1, 0, 2)
        );
    }
}
