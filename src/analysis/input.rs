//! Reading a result bundle directory for analysis: `manifest.json` and `runs.parquet`
//! (and any other `<table>.parquet`).
//!
//! This is deliberately tiny: once `crate::store::Bundle::open` exists, [`read_bundle`]
//! can become a thin wrapper over it without changing its callers (`fslab compare`,
//! `fslab report`, notebooks).

use super::AnalysisError;
use polars::prelude::*;
use serde_json::Value;
use std::fs::File;
use std::path::{Path, PathBuf};

/// What analysis needs from a bundle.
#[derive(Debug, Clone)]
pub struct BundleData {
    pub dir: PathBuf,
    /// `manifest.json`, kept untyped so that analysis tolerates schema additions.
    pub manifest: Value,
    /// `runs.parquet`: one row per iteration of each point.
    pub runs: DataFrame,
}

impl BundleData {
    /// Another table of the bundle (`extents`, `claims`, …) if the bundle has it.
    pub fn table(&self, name: &str) -> Result<Option<DataFrame>, AnalysisError> {
        read_table(&self.dir, name)
    }

    /// A short name for the bundle: its directory name, with the experiment id when
    /// the directory name does not already contain it.
    pub fn label(&self) -> String {
        let dir = self
            .dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.dir.display().to_string());
        match self
            .manifest
            .pointer("/experiment/id")
            .and_then(Value::as_str)
        {
            Some(id) if !dir.contains(id) => format!("{dir} ({id})"),
            _ => dir,
        }
    }

    /// The directory, experiment and start time, for headings.
    pub fn describe(&self) -> String {
        let mut s = self.dir.display().to_string();
        if let Some(id) = self
            .manifest
            .pointer("/experiment/id")
            .and_then(Value::as_str)
        {
            s.push_str(&format!(", experiment {id}"));
        }
        if let Some(t) = self.manifest.pointer("/started_at").and_then(Value::as_str) {
            s.push_str(&format!(", started {t}"));
        }
        s
    }
}

/// Read `manifest.json` and `runs.parquet` from a bundle directory.
pub fn read_bundle(dir: &Path) -> Result<BundleData, AnalysisError> {
    let manifest_path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest_path).map_err(|source| AnalysisError::Io {
        path: manifest_path.clone(),
        source,
    })?;
    let manifest: Value = serde_json::from_str(&text).map_err(|source| AnalysisError::Json {
        path: manifest_path,
        source,
    })?;
    let runs = read_parquet(&dir.join("runs.parquet"))?;
    Ok(BundleData {
        dir: dir.to_path_buf(),
        manifest,
        runs,
    })
}

/// Read `<dir>/<name>.parquet` when it exists.
pub fn read_table(dir: &Path, name: &str) -> Result<Option<DataFrame>, AnalysisError> {
    let path = dir.join(format!("{name}.parquet"));
    if !path.exists() {
        return Ok(None);
    }
    read_parquet(&path).map(Some)
}

fn read_parquet(path: &Path) -> Result<DataFrame, AnalysisError> {
    let file = File::open(path).map_err(|source| AnalysisError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    ParquetReader::new(file)
        .finish()
        .map_err(|source| AnalysisError::Parquet {
            path: path.to_path_buf(),
            source,
        })
}
