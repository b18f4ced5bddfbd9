//! The numbers the seed posts published, as DataFrames.
//!
//! `data/published/` holds one tidy CSV per seed post (plus one for the directory block
//! listing of seed 001), transcribed number for number; `data/published/README.md`
//! describes every file and column. This module finds and reads them:
//!
//! ```no_run
//! let df = fslab::published::load("000")?; // or "xfs-parent-pointers"
//! for d in fslab::published::list() {
//!     println!("{} {} {}", d.seed, d.name, d.file);
//! }
//! # Ok::<(), fslab::published::PublishedError>(())
//! ```
//!
//! The data directory is `$FSLAB_DATA_DIR/published/` when the environment variable
//! [`DATA_DIR_ENV`] is set, otherwise `data/published/` inside the crate's source tree
//! (`env!("CARGO_MANIFEST_DIR")`).
//!
//! Every column is read as text, then the typed columns are converted: `value` → Float64;
//! `run`, `parent`, `rtextsize_kib`, `entry`, `logical_*`, `physical_*`, `length` → Int64;
//! `approx`, `link_op`, `uninit_bg` → Boolean. Everything else stays String, so `seed`
//! keeps its leading zeros and `printed` is exactly the text of the post.

mod views;

pub use views::{extents, extents_from, runs, runs_from, ReshapeError};

use polars::prelude::*;
use std::path::{Path, PathBuf};

/// Environment variable naming the data directory (the one that contains `published/`).
pub const DATA_DIR_ENV: &str = "FSLAB_DATA_DIR";

/// Columns every published CSV must carry: where each row comes from.
pub const SOURCE_COLUMNS: [&str; 5] = ["seed", "source_file", "message_id", "author", "date"];

/// One published dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataset {
    /// Seed number as in `data/published/posts/NNN_*.txt`, e.g. `"000"`.
    pub seed: &'static str,
    /// Short name, e.g. `"xfs-parent-pointers"` (matches `experiments/<name>.yaml`).
    pub name: &'static str,
    /// File name inside `data/published/`.
    pub file: &'static str,
    /// One line on what it holds.
    pub description: &'static str,
}

const DATASETS: &[Dataset] = &[
    Dataset {
        seed: "000",
        name: "xfs-parent-pointers",
        file: "000_xfs_parent_pointers.csv",
        description: "XFS parent=0 vs parent=1 under fsstress: real/user/sys of 10 runs each, \
                      the first runs without link=1, the workload, the mkfs.xfs geometry",
    },
    Dataset {
        seed: "001",
        name: "ext-fsck-small-files",
        file: "001_ext_fsck_small_files.csv",
        description: "ext3 vs ext4 fsck with 45.6 M small files: fsck times, setup, \
                      largest-directory block totals",
    },
    Dataset {
        seed: "001",
        name: "ext-dir-blocks",
        file: "001_dir_blocks.csv",
        description: "the largest directory's block listing on ext3 (head and tail, middle \
                      elided in the post) and on ext4, one row per listed range",
    },
    Dataset {
        seed: "003",
        name: "xfs-rt-truncate",
        file: "003_xfs_rt_truncate.csv",
        description: "XFS realtime truncate of 1000 files: zero out vs convert unwritten for \
                      rtextsize 8k..1024k",
    },
];

#[derive(Debug, thiserror::Error)]
pub enum PublishedError {
    #[error("no published dataset named {name:?}; known: {known}")]
    Unknown { name: String, known: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: cannot read CSV: {source}")]
    Csv {
        path: PathBuf,
        #[source]
        source: PolarsError,
    },
    #[error("{path}: column {column:?}: {message}")]
    Column {
        path: PathBuf,
        column: String,
        message: String,
    },
}

/// The catalogue of published datasets, in seed order.
pub fn list() -> &'static [Dataset] {
    DATASETS
}

/// The data directory: `$FSLAB_DATA_DIR` if set and non-empty, else the crate's `data/`.
pub fn data_dir() -> PathBuf {
    match std::env::var_os(DATA_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("data"),
    }
}

/// The directory holding the published CSVs (`data_dir()/published`).
pub fn published_dir() -> PathBuf {
    data_dir().join("published")
}

/// Find a dataset by seed (`"000"`, `"0"`, `"3"`), name (`"xfs-rt-truncate"`), or file name
/// with or without `.csv`; `_` and `-` are interchangeable, case is ignored. A bare seed
/// that has several datasets (001) means its main one; ask for `"001-dir-blocks"` or
/// `"ext-dir-blocks"` for the listing.
pub fn find(seed_or_name: &str) -> Result<&'static Dataset, PublishedError> {
    let key = normalize(seed_or_name);
    let as_seed = key
        .parse::<u32>()
        .ok()
        .map(|n| format!("{n:03}"))
        .unwrap_or_default();
    DATASETS
        .iter()
        .find(|d| {
            d.seed == as_seed
                || normalize(d.name) == key
                || normalize(d.file) == key
                || format!("{}-{}", d.seed, normalize(d.name)) == key
        })
        .ok_or_else(|| PublishedError::Unknown {
            name: seed_or_name.to_string(),
            known: DATASETS
                .iter()
                .map(|d| format!("{} ({})", d.name, d.seed))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn normalize(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase().replace('_', "-");
    s.strip_suffix(".csv").map(str::to_string).unwrap_or(s)
}

/// Load a published dataset by seed or name (see [`find`]) from [`published_dir`].
pub fn load(seed_or_name: &str) -> Result<DataFrame, PublishedError> {
    let d = find(seed_or_name)?;
    load_from(published_dir().join(d.file))
}

/// Load every dataset of [`list()`], in order, as `(dataset, frame)` pairs.
pub fn load_all() -> Result<Vec<(&'static Dataset, DataFrame)>, PublishedError> {
    let dir = published_dir();
    DATASETS
        .iter()
        .map(|d| Ok((d, load_from(dir.join(d.file))?)))
        .collect()
}

/// Columns the loader reads as integers.
pub(crate) const INT_COLUMNS: &[&str] = &[
    "run",
    "parent",
    "rtextsize_kib",
    "entry",
    "logical_start",
    "logical_end",
    "physical_start",
    "physical_end",
    "length",
];
const FLOAT_COLUMNS: &[&str] = &["value"];
/// Columns the loader reads as true/false.
pub(crate) const BOOL_COLUMNS: &[&str] = &["approx", "link_op", "uninit_bg"];

/// Load one published CSV from an explicit path, typed as described in the module docs.
/// The file must carry the [`SOURCE_COLUMNS`].
pub fn load_from(path: impl AsRef<Path>) -> Result<DataFrame, PublishedError> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|source| PublishedError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let csv_err = |source| PublishedError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut df = CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(Some(0)) // everything as String; typed below
        .into_reader_with_file_handle(file)
        .finish()
        .map_err(csv_err)?;
    for col in SOURCE_COLUMNS {
        if df.column(col).is_err() {
            return Err(PublishedError::Column {
                path: path.to_path_buf(),
                column: col.to_string(),
                message: "missing (every published CSV carries its source)".into(),
            });
        }
    }
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    for name in names {
        let typed = if INT_COLUMNS.contains(&name.as_str()) {
            Some(cast_strict(&df, &name, &DataType::Int64))
        } else if FLOAT_COLUMNS.contains(&name.as_str()) {
            Some(cast_strict(&df, &name, &DataType::Float64))
        } else if BOOL_COLUMNS.contains(&name.as_str()) {
            Some(to_bool(&df, &name))
        } else {
            None
        };
        if let Some(typed) = typed {
            let col = typed.map_err(|e| PublishedError::Column {
                path: path.to_path_buf(),
                column: name.clone(),
                message: e.to_string(),
            })?;
            df.replace(&name, col).map_err(csv_err)?;
        }
    }
    Ok(df)
}

/// A published column whose values are not of its declared type.
#[derive(Debug, thiserror::Error)]
enum ColumnError {
    #[error("{0}")]
    Polars(#[from] PolarsError),
    #[error("not all values are {dtype}: {source}")]
    NotOfType {
        dtype: DataType,
        source: PolarsError,
    },
    #[error("{0:?} is not true/false/empty")]
    NotBool(String),
}

fn cast_strict(df: &DataFrame, name: &str, dtype: &DataType) -> Result<Column, ColumnError> {
    let col = df.column(name)?;
    col.strict_cast(dtype)
        .map_err(|source| ColumnError::NotOfType {
            dtype: dtype.clone(),
            source,
        })
}

fn to_bool(df: &DataFrame, name: &str) -> Result<Column, ColumnError> {
    let col = df.column(name)?;
    let strings = col.str()?;
    let values = strings
        .iter()
        .map(|v| match v.map(str::trim) {
            None | Some("") => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(ColumnError::NotBool(other.to_string())),
        })
        .collect::<Result<Vec<Option<bool>>, ColumnError>>()?;
    Ok(Column::new(name.into(), values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_accepts_seed_name_and_file() {
        assert_eq!(find("000").unwrap().file, "000_xfs_parent_pointers.csv");
        assert_eq!(find("0").unwrap().file, "000_xfs_parent_pointers.csv");
        assert_eq!(find("3").unwrap().file, "003_xfs_rt_truncate.csv");
        assert_eq!(find("xfs-rt-truncate").unwrap().seed, "003");
        assert_eq!(find("XFS_RT_TRUNCATE").unwrap().seed, "003");
        assert_eq!(find("001").unwrap().file, "001_ext_fsck_small_files.csv");
        assert_eq!(find("001_dir_blocks.csv").unwrap().name, "ext-dir-blocks");
        assert_eq!(find("001-dir-blocks").unwrap().name, "ext-dir-blocks");
        assert_eq!(find("ext-dir-blocks").unwrap().name, "ext-dir-blocks");
        assert!(matches!(find("002"), Err(PublishedError::Unknown { .. })));
        assert!(matches!(find("nope"), Err(PublishedError::Unknown { .. })));
    }

    #[test]
    fn load_from_rejects_files_without_source_columns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.csv");
        std::fs::write(&p, "seed,quantity,value\n000,x,1\n").unwrap();
        let err = load_from(&p).unwrap_err();
        assert!(
            matches!(err, PublishedError::Column { ref column, .. } if column == "source_file")
        );
    }

    #[test]
    fn load_from_rejects_bad_typed_values() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.csv");
        std::fs::write(
            &p,
            "seed,value,approx,source_file,message_id,author,date\n000,abc,false,f,,a,\n",
        )
        .unwrap();
        let err = load_from(&p).unwrap_err();
        assert!(matches!(err, PublishedError::Column { ref column, .. } if column == "value"));
        std::fs::write(
            &p,
            "seed,value,approx,source_file,message_id,author,date\n000,1.5,maybe,f,,a,\n",
        )
        .unwrap();
        let err = load_from(&p).unwrap_err();
        assert!(matches!(err, PublishedError::Column { ref column, .. } if column == "approx"));
    }

    #[test]
    fn load_from_missing_file_is_io_error() {
        let err = load_from("/nonexistent/fslab/x.csv").unwrap_err();
        assert!(matches!(err, PublishedError::Io { .. }));
    }
}
