//! Capture rows on disk before they reach their table: the bundle's `.parts/` directory.
//!
//! ```text
//! .parts/<seq>/<table>/<batch>.parquet   rows of one capture, committed
//! .parts/.staging-<seq>/…                a capture being written (not yet committed)
//! ```
//!
//! Every capture's rows are written as parts as soon as they are parsed (a batch of a
//! streamed block map, or the whole frame of a small capture), so the writer keeps
//! nothing but their file names in memory. A capture's parts are written under
//! `.staging-<seq>` and committed by one rename to `<seq>`: a capture is either wholly
//! in `.parts/` or not at all. `<seq>` numbers captures in the order they were made,
//! `<batch>` the batches of one capture.
//!
//! [`merge`] streams a table's parquet file and its pending parts, one row group at a
//! time, into a new `<table>.parquet` (atomically), records the last merged `<seq>` in
//! the file's key-value metadata ([`THROUGH`]) and only then deletes the parts: a part
//! whose `<seq>` is at most that number is already in the table and is ignored (a
//! crash between the rename and the deletions duplicates nothing).

use super::{io, StoreError};
use crate::frames;
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// The directory of pending parts inside a bundle.
pub const DIR: &str = ".parts";
/// Key-value metadata of `<table>.parquet`: the last capture `<seq>` merged into it.
pub const THROUGH: &str = "fslab.parts_through";
const STAGING: &str = ".staging-";

/// One part file: the capture it belongs to and its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub seq: u64,
    pub path: PathBuf,
}

fn polars_err(path: &Path) -> impl FnOnce(PolarsError) -> StoreError + '_ {
    move |source| StoreError::Polars {
        path: path.to_path_buf(),
        source,
    }
}

fn numbered(dir: &Path) -> Result<Vec<(u64, PathBuf)>, StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(io(dir))?;
        let name = e.file_name().to_string_lossy().to_string();
        let stem = name.strip_suffix(".parquet").unwrap_or(&name);
        if let Ok(n) = stem.parse::<u64>() {
            out.push((n, e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Committed capture directories, by `<seq>`.
pub fn captures(bundle: &Path) -> Result<Vec<(u64, PathBuf)>, StoreError> {
    numbered(&bundle.join(DIR))
}

/// The parquet file's [`THROUGH`] value (None: no such file, or no parts merged yet).
pub fn through(table_file: &Path) -> Result<Option<u64>, StoreError> {
    if !table_file.exists() {
        return Ok(None);
    }
    let f = std::fs::File::open(table_file).map_err(io(table_file))?;
    let mut r = ParquetReader::new(f);
    let md = r.get_metadata().map_err(polars_err(table_file))?;
    Ok(md
        .key_value_metadata()
        .as_ref()
        .and_then(|kvs| kvs.iter().find(|kv| kv.key == THROUGH))
        .and_then(|kv| kv.value.as_deref())
        .and_then(|v| v.parse().ok()))
}

/// The parts of `table` not yet in `<table>.parquet` (`<seq>` after `through`), in
/// capture then batch order.
pub fn pending(bundle: &Path, table: &str, through: Option<u64>) -> Result<Vec<Part>, StoreError> {
    let mut out = Vec::new();
    for (seq, dir) in captures(bundle)? {
        if through.is_some_and(|t| seq <= t) {
            continue;
        }
        for (_, path) in numbered(&dir.join(table))? {
            out.push(Part { seq, path });
        }
    }
    Ok(out)
}

/// Delete the parts of `table` already merged into it (`<seq>` at most `through`: left
/// by a crash between a merge and its deletions).
pub fn remove_merged(bundle: &Path, table: &str, through: Option<u64>) -> Result<(), StoreError> {
    let Some(t) = through else {
        return Ok(());
    };
    for (seq, dir) in captures(bundle)? {
        if seq > t {
            continue;
        }
        let d = dir.join(table);
        if d.exists() {
            std::fs::remove_dir_all(&d).map_err(io(&d))?;
        }
        let _ = std::fs::remove_dir(&dir);
    }
    Ok(())
}

/// Names of the tables with parts in committed captures (merged or not).
pub fn tables(bundle: &Path) -> Result<Vec<String>, StoreError> {
    let mut out = std::collections::BTreeSet::new();
    for (_, dir) in captures(bundle)? {
        for e in std::fs::read_dir(&dir).map_err(io(&dir))?.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if !name.starts_with('.') && e.path().is_dir() {
                out.insert(name);
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// The staging directory of capture `seq`.
pub fn staging(bundle: &Path, seq: u64) -> PathBuf {
    bundle.join(DIR).join(format!("{STAGING}{seq:06}"))
}

/// The committed directory of capture `seq`.
pub fn committed(bundle: &Path, seq: u64) -> PathBuf {
    bundle.join(DIR).join(format!("{seq:06}"))
}

/// Remove captures that were never committed (a run killed mid-capture); returns the
/// highest `<seq>` seen among them.
pub fn remove_staging(bundle: &Path) -> Result<Option<u64>, StoreError> {
    let dir = bundle.join(DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&dir)(e)),
    };
    let mut max = None;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(seq) = name.strip_prefix(STAGING) {
            if let Ok(n) = seq.parse::<u64>() {
                max = max.max(Some(n));
            }
            std::fs::remove_dir_all(e.path()).map_err(io(&e.path()))?;
        }
    }
    Ok(max)
}

/// Read one parquet file whole.
pub fn read(path: &Path) -> Result<DataFrame, StoreError> {
    super::read_parquet(path)
}

/// The columns (names, dtypes) of a parquet file, as a DataFrame of it would have them.
fn columns_of(path: &Path) -> Result<Vec<(PlSmallStr, DataType)>, StoreError> {
    let f = std::fs::File::open(path).map_err(io(path))?;
    let df = ParquetReader::new(f)
        .with_slice(Some((0, 0)))
        .finish()
        .map_err(polars_err(path))?;
    Ok(df
        .columns()
        .iter()
        .map(|c| (c.name().clone(), c.dtype().clone()))
        .collect())
}

/// Visit a parquet file one row group at a time (each read through its own mapping,
/// released before the next, so that memory stays bounded by a row group).
fn for_each_row_group(
    path: &Path,
    mut f: impl FnMut(DataFrame) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let file = std::fs::File::open(path).map_err(io(path))?;
    let mut r = ParquetReader::new(file);
    let md = r.get_metadata().map_err(polars_err(path))?.clone();
    let mut offset = 0usize;
    for rg in &md.row_groups {
        let n = rg.num_rows();
        if n == 0 {
            continue;
        }
        let file = std::fs::File::open(path).map_err(io(path))?;
        let mut r = ParquetReader::new(file).with_slice(Some((offset, n)));
        r.set_metadata(md.clone());
        let df = r.finish().map_err(polars_err(path))?;
        offset += n;
        f(df)?;
    }
    Ok(())
}

/// Merge `<table>.parquet` (if any) and `parts` into a new `<table>.parquet`, streamed:
/// the union of the columns in order of first appearance, each with the type it first
/// had, missing columns null, other types cast as [`frames::concat_diagonal`] does; then
/// delete the parts. `keep`, when given, filters each batch (rows kept in order).
pub fn merge(
    bundle: &Path,
    table: &str,
    parts: &[Part],
    keep: Option<&dyn Fn(DataFrame) -> Result<DataFrame, StoreError>>,
) -> Result<(), StoreError> {
    let target = bundle.join(format!("{table}.parquet"));
    let old = target.exists().then(|| target.clone());
    let sources: Vec<&Path> = old
        .iter()
        .map(PathBuf::as_path)
        .chain(parts.iter().map(|p| p.path.as_path()))
        .collect();
    if sources.is_empty() {
        return Ok(());
    }
    let through = match parts.iter().map(|p| p.seq).max() {
        Some(s) => Some(s),
        None => through(&target)?,
    };
    let mut names: Vec<PlSmallStr> = Vec::new();
    let mut dtypes: Vec<DataType> = Vec::new();
    for s in &sources {
        for (n, dt) in columns_of(s)? {
            if !names.contains(&n) {
                names.push(n);
                dtypes.push(dt);
            }
        }
    }
    let schema: Schema = names
        .iter()
        .zip(&dtypes)
        .map(|(n, dt)| (n.clone(), dt.clone()))
        .collect();
    let tmp = bundle.join(format!(".{table}.parquet.tmp-{}", std::process::id()));
    let result = (|| {
        let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        let kv = through.map(|t| {
            polars::io::parquet::write::KeyValueMetadata::from_static(vec![(
                THROUGH.to_string(),
                t.to_string(),
            )])
        });
        let mut w = ParquetWriter::new(std::io::BufWriter::with_capacity(1 << 20, file))
            .with_key_value_metadata(kv)
            .batched(&schema)
            .map_err(polars_err(&tmp))?;
        for s in &sources {
            for_each_row_group(s, |df| {
                let df = frames::align(&df, &names, &dtypes)
                    .map_err(|e| StoreError::from(frames::FrameError::from(e)))?;
                let mut df = match keep {
                    Some(k) => k(df)?,
                    None => df,
                };
                if df.height() > 0 {
                    df.rechunk_mut();
                    w.write_batch(&df).map_err(polars_err(&tmp))?;
                }
                Ok(())
            })?;
        }
        let size = w.finish().map_err(polars_err(&tmp))?;
        drop(w);
        let f = std::fs::File::open(&tmp).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        let written = f.metadata().map_err(io(&tmp))?.len();
        if written != size {
            return Err(io(&tmp)(std::io::Error::other(format!(
                "wrote {written} of {size} bytes"
            ))));
        }
        std::fs::rename(&tmp, &target).map_err(io(&target))?;
        std::fs::File::open(bundle)
            .and_then(|d| d.sync_all())
            .map_err(io(bundle))
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // The parts are in the table now (and ignored by readers, being at most THROUGH).
    for p in parts {
        let _ = std::fs::remove_file(&p.path);
        if let Some(table_dir) = p.path.parent() {
            let _ = std::fs::remove_dir(table_dir);
            if let Some(capture) = table_dir.parent() {
                let _ = std::fs::remove_dir(capture);
            }
        }
    }
    Ok(())
}
