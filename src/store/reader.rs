//! [`Bundle`]: a result bundle opened for reading, the one reader of a bundle
//! (notebooks, `fslab show`, compare, report, claims).

use super::journal::read_journal;
use super::{
    io, parts, read_parquet, runs_frame, Manifest, StoreError, StoredNotebook, FORMAT_VERSION,
    JOURNAL_FILE, MANIFEST_FILE, NOTEBOOK_DIR, RUNS_FILE,
};
use crate::frames;
use polars::prelude::{Column, DataFrame, DataType, PolarsResult};
use std::path::{Path, PathBuf};

/// A matrix value as text, as point ids write it (`ext4`, `16`).
pub fn value_label(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `df` with the manifest's matrix values added as text columns by `point_index`.
pub fn with_axes(mut df: DataFrame, manifest: &Manifest) -> PolarsResult<DataFrame> {
    let Ok(idx) = df
        .column("point_index")
        .and_then(|c| c.cast(&DataType::Int64))
    else {
        return Ok(df);
    };
    let idx = idx.i64()?.clone();
    for axis in &manifest.matrix_axes {
        if df.column(axis).is_ok() {
            continue;
        }
        let values: Vec<Option<String>> = idx
            .iter()
            .map(|i| {
                let i = usize::try_from(i?).ok()?;
                manifest
                    .points
                    .iter()
                    .find(|p| p.index == i)
                    .and_then(|p| p.vars.get(axis))
                    .map(value_label)
            })
            .collect();
        df.with_column(Column::new(axis.as_str().into(), values))?;
    }
    Ok(df)
}

/// A result bundle on disk, for reading.
#[derive(Debug, Clone)]
pub struct Bundle {
    dir: PathBuf,
    pub manifest: Manifest,
}

impl Bundle {
    pub fn open(dir: impl AsRef<Path>) -> Result<Bundle, StoreError> {
        let dir = dir.as_ref();
        let mpath = dir.join(MANIFEST_FILE);
        let bytes = std::fs::read(&mpath).map_err(|e| StoreError::NotABundle {
            path: dir.to_path_buf(),
            reason: format!("cannot read manifest.json: {e}"),
        })?;
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| StoreError::NotABundle {
                path: dir.to_path_buf(),
                reason: format!("manifest.json: {e}"),
            })?;
        if manifest.format_version > FORMAT_VERSION {
            return Err(StoreError::NotABundle {
                path: dir.to_path_buf(),
                reason: format!(
                    "manifest.json has format_version {}; this fslab reads bundles up to version {FORMAT_VERSION}: use a newer fslab",
                    manifest.format_version
                ),
            });
        }
        Ok(Bundle {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// One row per timed iteration (empty when none finished). `runs.parquet` is
    /// written at the end of each point; while a point runs (or after a crash
    /// mid-point) the journal is ahead of it, and then the rows come from the journal.
    pub fn runs(&self) -> Result<DataFrame, StoreError> {
        let p = self.dir.join(RUNS_FILE);
        let parquet = if p.exists() {
            Some(read_parquet(&p)?)
        } else {
            None
        };
        let journal = read_journal(&self.dir.join(JOURNAL_FILE))?;
        match parquet {
            Some(df) if df.height() >= journal.len() => Ok(df),
            _ => runs_frame(&journal),
        }
    }

    /// A parsed-capture table by name (`geometry`, `fsck`, `extents`, …): its parquet
    /// file and, after it, any capture rows not merged into it yet (a run in progress,
    /// or one that was killed: see [`parts`]), concatenated as the writer will.
    pub fn table(&self, name: &str) -> Result<DataFrame, StoreError> {
        let path = self.dir.join(format!("{name}.parquet"));
        let through = parts::through(&path)?;
        let pending = parts::pending(&self.dir, name, through)?;
        if pending.is_empty() {
            return read_parquet(&path);
        }
        let mut all = Vec::with_capacity(pending.len() + 1);
        if path.exists() {
            all.push(read_parquet(&path)?);
        }
        for p in &pending {
            all.push(read_parquet(&p.path)?);
        }
        Ok(frames::concat_diagonal(&all)?)
    }

    /// Stems of the `*.parquet` files in a bundle directory.
    pub(super) fn parquet_tables(dir: &Path) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).map_err(io(dir))?.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(stem) = name.strip_suffix(".parquet") {
                if !stem.starts_with('.') {
                    out.push(stem.to_string());
                }
            }
        }
        Ok(out)
    }

    /// Names of the tables in the bundle (`runs` included; a table whose rows are all
    /// still in parts too).
    pub fn tables(&self) -> Result<Vec<String>, StoreError> {
        let mut out = Self::parquet_tables(&self.dir)?;
        for name in parts::tables(&self.dir)? {
            if out.contains(&name) {
                continue;
            }
            if !parts::pending(&self.dir, &name, None)?.is_empty() {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The notebooks executed on this bundle and stored in it, by name.
    pub fn notebooks(&self) -> Result<Vec<StoredNotebook>, StoreError> {
        let dir = self.dir.join(NOTEBOOK_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&dir)(e)),
        };
        let mut out: Vec<StoredNotebook> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ipynb"))
            .filter_map(|ipynb| {
                let name = ipynb.file_stem()?.to_string_lossy().to_string();
                if name.starts_with('.') {
                    return None;
                }
                let html = ipynb.with_extension("html");
                Some(StoredNotebook {
                    name,
                    html: html.is_file().then_some(html),
                    ipynb,
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The newest bundle of an experiment under `results_root`.
    pub fn latest(results_root: &Path, experiment_id: &str) -> Option<Bundle> {
        let dir = results_root.join(experiment_id);
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join(MANIFEST_FILE).exists())
            .collect();
        entries.sort();
        entries.last().and_then(|p| Bundle::open(p).ok())
    }

    /// A table by name when the bundle has it (`claims`, `extents`, …), else None.
    pub fn table_if_present(&self, name: &str) -> Result<Option<DataFrame>, StoreError> {
        let path = self.dir.join(format!("{name}.parquet"));
        if !path.exists() && parts::pending(&self.dir, name, None)?.is_empty() {
            return Ok(None);
        }
        self.table(name).map(Some)
    }

    /// A table with each row's matrix values added as columns (text, as in point ids),
    /// taken from the manifest by `point_index`, so that a parsed table (fio, counters,
    /// extents …) can be grouped by the experiment's axes. Columns the table already has
    /// are left as they are. None when the bundle has no such table.
    pub fn table_with_axes(&self, name: &str) -> Result<Option<DataFrame>, StoreError> {
        let Some(df) = self.table_if_present(name)? else {
            return Ok(None);
        };
        let path = self.dir.join(format!("{name}.parquet"));
        with_axes(df, &self.manifest)
            .map(Some)
            .map_err(|source| StoreError::Polars { path, source })
    }

    /// A short name for the bundle: its directory name, with the experiment id when
    /// the directory name does not already contain it.
    pub fn label(&self) -> String {
        let dir = self
            .dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.dir.display().to_string());
        let id = &self.manifest.experiment.id;
        if dir.contains(id.as_str()) {
            dir
        } else {
            format!("{dir} ({id})")
        }
    }

    /// The directory, experiment and start time, for headings.
    pub fn describe(&self) -> String {
        format!(
            "{}, experiment {}, started {}",
            self.dir.display(),
            self.manifest.experiment.id,
            self.manifest.started_at
        )
    }
}
