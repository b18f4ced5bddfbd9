//! Parsers for the text that filesystem tools print: pure functions from `&str` to typed
//! rows. No I/O happens here. Each tool format has its own file; [`parse`] dispatches by
//! [`Kind`] and returns the rows as a DataFrame and as JSON objects.
//!
//! Unrecognised lines are never dropped silently: they become [`Warning`]s. Truncated
//! input either fails with a [`ParseError`] that says what was missing or returns the
//! rows read so far with `partial = true`.

use polars::prelude::DataFrame;
use serde::Serialize;

pub mod block_trace;
pub mod blockmap;
pub mod counters;
pub mod debugfs;
pub mod e2fsck;
pub mod ext;
pub mod filefrag;
pub mod fio;
pub mod fsmark;
pub mod map;
pub mod perf_stat;
pub mod summary;
mod text;
pub mod time;
pub mod truncate_path;
pub mod xfs;
pub mod xfs_bmap;
pub mod xfs_fsmap;

/// Declares [`Kind`] with its [`Kind::ALL`] and [`Kind::name`] from one list, so that a
/// kind cannot be missing from `ALL` (or lack a name): adding a variant is adding a line
/// here, and there is no second list to forget.
macro_rules! kinds {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every kind, in declaration order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The name used on the command line and in experiment files.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

kinds! {
    /// One tool output format. The string names are what `fslab parse KIND` and an
    /// experiment's `parse:` key accept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    pub enum Kind {
        MkfsXfs => "mkfs.xfs",
        XfsInfo => "xfs_info",
        Mke2fs => "mke2fs",
        Dumpe2fs => "dumpe2fs",
        Time => "time",
        E2fsck => "e2fsck",
        DebugfsStat => "debugfs-stat",
        DebugfsEx => "debugfs-ex",
        Filefrag => "filefrag",
        XfsBmap => "xfs_bmap",
        XfsIoFiemap => "xfs_io-fiemap",
        FsMark => "fs_mark",
        /// `fslab blockmap --json` (FIEMAP or batched debugfs, done by fslab itself).
        Blockmap => "blockmap",
        /// `fio --output-format=json` (or `json+`).
        Fio => "fio",
        /// `fio --output-format=terse` (`--minimal`), terse versions 3, 4 and 5.
        FioTerse => "fio-terse",
        /// `perf stat -x,` (CSV).
        PerfStat => "perf-stat",
        /// perf stat's default, human-readable output (what mails quote).
        PerfStatHuman => "perf-stat-human",
        /// `xfs_io -c fsmap MNT`: the whole filesystem's space map (GETFSMAP).
        XfsIoFsmap => "xfs_io-fsmap",
        /// `fslab files path`: the truncate path a kernel took, from FIEMAP and diskstats.
        TruncatePath => "truncate-path",
    }
}

impl Kind {
    /// The bundle table that rows of this kind are stored in (`<table>.parquet`).
    pub fn table(self) -> &'static str {
        match self {
            Kind::MkfsXfs | Kind::XfsInfo | Kind::Mke2fs | Kind::Dumpe2fs => "geometry",
            Kind::Time => "timing",
            Kind::E2fsck => "fsck",
            Kind::DebugfsStat
            | Kind::DebugfsEx
            | Kind::Filefrag
            | Kind::XfsBmap
            | Kind::XfsIoFiemap
            | Kind::Blockmap => "extents",
            Kind::FsMark => "fsmark",
            Kind::Fio | Kind::FioTerse => "fio",
            Kind::PerfStat | Kind::PerfStatHuman => "perf_stat",
            Kind::XfsIoFsmap => "fsmap",
            Kind::TruncatePath => "truncate_path",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Kind {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| ParseError::UnknownKind {
                given: s.to_string(),
                known: Kind::ALL
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// A line the parser did not understand (1-based line number).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    pub line: usize,
    pub text: String,
    pub reason: String,
}

/// Typed rows from one parser, plus what it could not read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Output<T> {
    pub rows: Vec<T>,
    pub warnings: Vec<Warning>,
    /// True when the input ended early and `rows` holds what was read before that.
    pub partial: bool,
}

impl<T> Default for Output<T> {
    fn default() -> Self {
        Output {
            rows: Vec::new(),
            warnings: Vec::new(),
            partial: false,
        }
    }
}

/// Any parser's result in a uniform shape: a DataFrame and JSON objects of the same rows.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub kind: Kind,
    pub frame: DataFrame,
    /// One object per row; filled by [`parse_json`] only.
    pub json: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Block-map kinds: one record per file (the bundle's `files` table), joined with
    /// the rows of `frame` on `file`. None for other kinds.
    pub files: Option<DataFrame>,
    /// Block-map kinds: one object per file; filled by [`parse_json`] only.
    pub files_json: Vec<serde_json::Map<String, serde_json::Value>>,
    pub warnings: Vec<Warning>,
    pub partial: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("unknown output kind `{given}`; known kinds: {known}")]
    UnknownKind { given: String, known: String },
    #[error("{kind}: {message} (line {line})")]
    Malformed {
        kind: &'static str,
        line: usize,
        message: String,
    },
    #[error("{kind}: input is empty or has none of the expected lines ({expected})")]
    NothingRecognised {
        kind: &'static str,
        expected: &'static str,
    },
    #[error(transparent)]
    Frame(#[from] crate::frames::FrameError),
}

/// Turn typed rows into the uniform [`Parsed`] shape; `json` also fills [`Parsed::json`].
pub fn finish<T: Serialize>(kind: Kind, out: Output<T>, json: bool) -> Result<Parsed, ParseError> {
    let frame = crate::frames::from_records(&out.rows)?;
    Ok(assemble(kind, out, frame, json))
}

/// Block-map rows and file records: the rows' frame is built column by column
/// ([`map::map_frame`]), which is ~15× faster than the generic path on block maps of
/// many files.
fn finish_map<F: Serialize>(
    kind: Kind,
    r: map::MapReport<F>,
    ints: &[&str],
    json: bool,
) -> Result<Parsed, ParseError> {
    let malformed = |e: String| ParseError::Malformed {
        kind: kind.name(),
        line: 0,
        message: e,
    };
    let frame = map::map_frame(&r.rows).map_err(|e| malformed(e.to_string()))?;
    let files = map::files_frame(&r.files, ints)?;
    let files_json = if json { objects(&r.files) } else { Vec::new() };
    let out = Output {
        rows: r.rows,
        warnings: r.warnings,
        partial: r.partial,
    };
    let mut p = assemble(kind, out, frame, json);
    p.files = Some(files);
    p.files_json = files_json;
    Ok(p)
}

fn objects<T: Serialize>(rows: &[T]) -> Vec<serde_json::Map<String, serde_json::Value>> {
    rows.iter()
        .filter_map(|r| match serde_json::to_value(r) {
            Ok(serde_json::Value::Object(m)) => Some(m),
            _ => None,
        })
        .collect()
}

fn assemble<T: Serialize>(kind: Kind, out: Output<T>, frame: DataFrame, json: bool) -> Parsed {
    let json = if json { objects(&out.rows) } else { Vec::new() };
    Parsed {
        kind,
        frame,
        json,
        files: None,
        files_json: Vec::new(),
        warnings: out.warnings,
        partial: out.partial,
    }
}

impl Kind {
    /// Block-map kinds give map rows and file records (tables `extents` and `files`).
    pub fn is_block_map(self) -> bool {
        self.table() == "extents"
    }
}

impl Parsed {
    /// The `--json` document. Block-map kinds: an array of file objects, each with its
    /// fields and its rows under `extents` (joined on `file`); other kinds: the array of
    /// row objects. Needs [`parse_json`].
    pub fn json_document(&self) -> serde_json::Value {
        use serde_json::Value;
        if self.files.is_none() {
            return Value::Array(self.json.iter().cloned().map(Value::Object).collect());
        }
        let mut files: Vec<serde_json::Map<String, Value>> = self.files_json.clone();
        for f in &mut files {
            f.insert("extents".into(), Value::Array(Vec::new()));
        }
        for row in &self.json {
            let n = row.get("file").and_then(Value::as_u64);
            let Some(f) = files
                .iter_mut()
                .find(|f| f.get("file").and_then(Value::as_u64) == n)
            else {
                continue;
            };
            if let Some(Value::Array(a)) = f.get_mut("extents") {
                a.push(Value::Object(row.clone()));
            }
        }
        Value::Array(files.into_iter().map(Value::Object).collect())
    }
}

/// Parse `text` as output of the tool `kind` into a frame (`json` stays empty).
pub fn parse(kind: Kind, text: &str) -> Result<Parsed, ParseError> {
    parse_inner(kind, text, false, map::MapOptions::default())
}

/// [`parse`], also filling [`Parsed::json`] with one JSON object per row.
pub fn parse_json(kind: Kind, text: &str) -> Result<Parsed, ParseError> {
    parse_inner(kind, text, true, map::MapOptions::default())
}

/// [`parse`] with options for block-map kinds (the block size of debugfs output).
pub fn parse_with(kind: Kind, text: &str, opts: map::MapOptions) -> Result<Parsed, ParseError> {
    parse_inner(kind, text, false, opts)
}

/// [`parse_json`] with options for block-map kinds.
pub fn parse_json_with(
    kind: Kind,
    text: &str,
    opts: map::MapOptions,
) -> Result<Parsed, ParseError> {
    parse_inner(kind, text, true, opts)
}

fn parse_inner(
    kind: Kind,
    text: &str,
    j: bool,
    opts: map::MapOptions,
) -> Result<Parsed, ParseError> {
    match kind {
        Kind::MkfsXfs | Kind::XfsInfo => finish(kind, xfs::parse(text)?, j),
        Kind::Mke2fs | Kind::Dumpe2fs => finish(kind, ext::parse(kind, text)?, j),
        Kind::Time => finish(kind, time::parse(text)?, j),
        Kind::E2fsck => finish(kind, e2fsck::parse(text)?, j),
        Kind::DebugfsStat => finish_map(
            kind,
            debugfs::parse_stat_map(text, opts)?,
            &debugfs::STAT_INTS,
            j,
        ),
        Kind::DebugfsEx => finish_map(
            kind,
            debugfs::parse_ex_map(text, opts)?,
            &debugfs::EX_INTS,
            j,
        ),
        Kind::Filefrag => finish_map(kind, filefrag::parse_map(text)?, &filefrag::FILE_INTS, j),
        Kind::XfsBmap => finish_map(
            kind,
            xfs_bmap::parse_bmap_report(text)?,
            &xfs_bmap::FILE_INTS,
            j,
        ),
        Kind::XfsIoFiemap => finish_map(
            kind,
            xfs_bmap::parse_fiemap_report(text)?,
            &xfs_bmap::FILE_INTS,
            j,
        ),
        Kind::FsMark => finish(kind, fsmark::parse(text)?, j),
        Kind::XfsIoFsmap => finish(kind, xfs_fsmap::parse(text)?, j),
        Kind::Blockmap => finish_map(kind, blockmap::parse_map(text)?, &blockmap::FILE_INTS, j),
        Kind::Fio => finish(kind, fio::parse_json(text)?, j),
        Kind::FioTerse => finish(kind, fio::parse_terse(text)?, j),
        Kind::PerfStat => finish(kind, perf_stat::parse(text)?, j),
        Kind::PerfStatHuman => finish(kind, perf_stat::parse_human(text)?, j),
        Kind::TruncatePath => finish(kind, truncate_path::parse(text)?, j),
    }
}

/// The filesystem block size a geometry output states: `Block size:` of dumpe2fs,
/// mke2fs's `block_size`, the `data` section's `bsize` of xfs_info / mkfs.xfs. None for
/// other kinds, or when the text does not state it.
pub fn geometry_block_size(kind: Kind, text: &str) -> Option<u64> {
    let rows = match kind {
        Kind::MkfsXfs | Kind::XfsInfo => xfs::parse(text).ok()?.rows,
        Kind::Mke2fs | Kind::Dumpe2fs => ext::parse(kind, text).ok()?.rows,
        _ => return None,
    };
    rows.iter()
        .rev()
        .find(|r| match kind {
            Kind::MkfsXfs | Kind::XfsInfo => r.section == "data" && r.key == "bsize",
            _ => r.key == "block_size",
        })
        .and_then(|r| r.number)
        .filter(|n| *n >= 512.0 && n.fract() == 0.0)
        .map(|n| n as u64)
}

/// One `key=value` of a filesystem's geometry (mkfs.xfs, xfs_info, mke2fs, dumpe2fs): the
/// long format lets every filesystem share the `geometry` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeometryRow {
    /// e.g. `meta-data`, `data`, `naming`, `log`, `realtime` for XFS; `superblock` for ext.
    pub section: String,
    pub key: String,
    /// The value as printed.
    pub value: String,
    /// The value as a number, when it is one.
    pub number: Option<f64>,
    /// The unit printed with it (`blks`, `bytes`, …), if any.
    pub unit: Option<String>,
    /// The value in bytes, when it is a size whose unit is known.
    pub bytes: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::Kind;

    /// `Kind::ALL` comes from the same list as the enum (`kinds!`), so a kind cannot be
    /// missing from it; what the macro cannot stop is two kinds sharing a name, so that
    /// one of them could never be asked for.
    #[test]
    fn every_kind_is_found_by_its_own_name() {
        for k in Kind::ALL {
            assert_eq!(k.name().parse::<Kind>().ok(), Some(k), "{k:?}");
        }
        assert!(Kind::ALL.iter().enumerate().all(|(i, k)| *k as usize == i));
    }
}
