//! The rows every block-map text parser returns (`filefrag`, `debugfs-stat`, `debugfs-ex`,
//! `xfs_bmap`, `xfs_io-fiemap`, `blockmap`): one [`MapRow`] per line of the tool's table
//! (data extents, holes, metadata blocks) and one file record per file, joined by `file`.
//!
//! A row keeps the tool's own numbers in the tool's own unit ([`Unit`]: filesystem or
//! `-b` blocks, 512-byte basic blocks, bytes) next to the byte columns of
//! [`crate::extent::Extent`]. The byte columns are null when the unit's size in bytes is
//! not known: a parser never assumes a block size. Where the size comes from is
//! [`BlockSizeSource`].

use crate::extent::Extent;
use serde::Serialize;
use std::borrow::Cow;
use std::sync::Arc;

/// Where the block size that turns a tool's block numbers into bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BlockSizeSource {
    /// The tool printed it (filefrag's `blocks of S bytes`; xfs tools' fixed 512).
    Stated,
    /// The caller gave it (`fslab parse … --block-size N`).
    Given,
    /// An experiment took it from the point's `geometry` table (dumpe2fs, xfs_info …).
    Geometry,
    /// Nobody knows it: byte columns are null and a warning says so.
    #[default]
    Unknown,
}

impl BlockSizeSource {
    pub fn name(self) -> &'static str {
        match self {
            BlockSizeSource::Stated => "stated",
            BlockSizeSource::Given => "given",
            BlockSizeSource::Geometry => "geometry",
            BlockSizeSource::Unknown => "unknown",
        }
    }
}

/// Options of the block-map parsers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MapOptions {
    /// The filesystem block size, for tools that print block numbers without it
    /// (debugfs). Tools that state their unit ignore it.
    pub block_size: Option<u64>,
    /// Where `block_size` comes from: [`BlockSizeSource::Given`] or
    /// [`BlockSizeSource::Geometry`].
    pub source: BlockSizeSource,
}

impl MapOptions {
    /// A block size given by the user (`--block-size`).
    pub fn given(block_size: u64) -> Self {
        MapOptions {
            block_size: Some(block_size),
            source: BlockSizeSource::Given,
        }
    }

    /// A block size read from the experiment's `geometry` table.
    pub fn geometry(block_size: u64) -> Self {
        MapOptions {
            block_size: Some(block_size),
            source: BlockSizeSource::Geometry,
        }
    }

    /// The block size and its source, or `(None, Unknown)`.
    pub fn block_size(&self) -> (Option<u64>, BlockSizeSource) {
        match self.block_size {
            Some(bs) => (Some(bs), self.source),
            None => (None, BlockSizeSource::Unknown),
        }
    }
}

/// The unit of a row's tool columns (`logical_start` … `length`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Filesystem blocks (debugfs), or filefrag's block (the filesystem block, or the
    /// `-b N` / `-k` size it prints in `blocks of S bytes`).
    #[default]
    Block,
    /// 512-byte basic blocks (xfs_bmap, xfs_io fiemap), whatever the block size.
    BasicBlock,
    /// Bytes (filefrag's `inline` rows, fslab's own FIEMAP walk).
    Byte,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Block => "block",
            Unit::BasicBlock => "basic_block",
            Unit::Byte => "byte",
        }
    }
}

/// One row of a block-map listing: a data extent, a hole (flag `hole`) or a metadata block
/// (flag `metadata`), with the tool's numbers in the tool's unit next to bytes.
///
/// The first eight columns are those of [`Extent`] (the `extents` table's long-standing
/// columns) with the byte columns nullable; the others are the tool's own columns, null
/// where the tool has no such column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct MapRow {
    /// 0-based number of the file in the text: the join key with the file records.
    pub file: u64,
    #[serde(serialize_with = "arc_str")]
    pub path: Arc<str>,
    pub inode: Option<u64>,
    /// 0-based index of the data extent within its file. Holes and metadata rows carry
    /// the index of the next data extent (the extent count when none follows).
    pub index: u64,
    pub logical_bytes: Option<u64>,
    /// Null for holes, for extents without a location (delalloc, `unknown_loc`, inline
    /// data) and when the block size is unknown.
    pub physical_bytes: Option<u64>,
    pub length_bytes: Option<u64>,
    /// Flags, comma-separated, lower case: FIEMAP names as filefrag prints them, `eof`,
    /// `hole`, `delalloc`, `metadata` with `ind`/`dind`/`tind`/`etbN`/`index`, xfs_bmap's
    /// `shared`, `unwritten`, `unaligned_*` (see docs/parse-formats.md).
    pub flags: Cow<'static, str>,
    /// The unit of the tool columns below.
    pub unit: Unit,
    /// Bytes per unit; null when not known (then the byte columns are null too).
    pub unit_bytes: Option<u64>,
    /// The row number the tool printed (filefrag `ext`, xfs `EXT`); null for debugfs.
    pub ext: Option<u64>,
    /// First and last logical unit, inclusive, as printed.
    pub logical_start: Option<u64>,
    pub logical_end: Option<u64>,
    /// First and last physical unit, inclusive, as printed (a metadata block: its number;
    /// a `debugfs ex` index row: the tree block it points to).
    pub physical_start: Option<u64>,
    pub physical_end: Option<u64>,
    /// The length column as printed (filefrag `length`, xfs `TOTAL` or `N blocks`,
    /// debugfs `ex` `Length`); for `debugfs stat` the range's length.
    pub length: Option<u64>,
    /// filefrag's `expected` column: where the extent would be if the file were contiguous.
    pub expected: Option<u64>,
    /// xfs_bmap -v: allocation group and offset range in it (basic blocks).
    pub ag: Option<u64>,
    pub ag_offset_start: Option<u64>,
    pub ag_offset_end: Option<u64>,
    /// debugfs: extent tree level of the row (`ex` `Level`, stat `ETBn`).
    pub level: Option<u32>,
    /// debugfs ex: the tree's depth (`Level`'s second number).
    pub max_depth: Option<u32>,
    /// debugfs ex: `Entries` as `entry/entries` (1-based position in its node, node's
    /// entry count).
    pub entry: Option<u32>,
    pub entries: Option<u32>,
    /// The flag column exactly as printed (filefrag's list, fiemap's hex word, xfs_bmap's
    /// octal bits, debugfs `Uninit` / `[u]`); null when the tool printed none.
    pub tool_flags: Option<String>,
}

fn arc_str<S: serde::Serializer>(v: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v)
}

impl MapRow {
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.split(',').any(|f| f == flag)
    }

    /// The row as an [`Extent`]: None for holes and when a byte column is unknown.
    pub fn to_extent(&self) -> Option<Extent> {
        if self.has_flag("hole") {
            return None;
        }
        let located = self.physical_start.is_some() && !self.no_location();
        if located && self.physical_bytes.is_none() {
            return None;
        }
        Some(Extent {
            path: Arc::clone(&self.path),
            inode: self.inode,
            index: self.index,
            logical_bytes: self.logical_bytes?,
            physical_bytes: self.physical_bytes,
            length_bytes: self.length_bytes?,
            flags: self.flags.clone(),
        })
    }

    fn no_location(&self) -> bool {
        self.flags.split(',').any(|f| {
            matches!(
                f,
                "unknown_loc" | "unknown" | "delalloc" | "inline" | "hole"
            )
        })
    }

    /// Fill the byte columns from the tool columns and `unit_bytes` (left null when
    /// `unit_bytes` is unknown or a product overflows). `located`: the row has a place on
    /// the device.
    pub fn fill_bytes(&mut self, located: bool) {
        let Some(u) = self.unit_bytes else {
            return;
        };
        let blocks = self.length_units();
        self.logical_bytes = self.logical_start.and_then(|v| v.checked_mul(u));
        self.length_bytes = blocks.and_then(|v| v.checked_mul(u));
        self.physical_bytes = if located {
            self.physical_start.and_then(|v| v.checked_mul(u))
        } else {
            None
        };
    }

    /// The row's length in units: the printed length, or the logical range when the tool
    /// prints none, or 0 for a row without a location (filefrag's delalloc rows).
    fn length_units(&self) -> Option<u64> {
        let range = match (self.logical_start, self.logical_end) {
            (Some(a), Some(b)) if b >= a => (b - a).checked_add(1),
            _ => None,
        };
        match self.length {
            Some(0) if self.no_location() => range.or(Some(0)),
            Some(n) => Some(n),
            None => range,
        }
    }
}

/// What a block-map parser read: file records, their rows, warnings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MapReport<F> {
    pub files: Vec<F>,
    pub rows: Vec<MapRow>,
    pub warnings: Vec<super::Warning>,
    /// True when the input ended early (see each parser).
    pub partial: bool,
}

impl<F> MapReport<F> {
    /// The data rows as [`Extent`]s (the old single-table view).
    pub fn extents(&self) -> Vec<Extent> {
        to_extents(&self.rows)
    }
}

/// Rows → extents, for the consumers of [`Extent`]: holes and rows without known byte
/// columns are left out.
pub fn to_extents(rows: &[MapRow]) -> Vec<Extent> {
    rows.iter().filter_map(MapRow::to_extent).collect()
}

/// Map rows as a DataFrame with a fixed schema, built column by column (the columns of
/// [`crate::extent::extents_frame`] first, then the tool columns; every integer column is
/// i64 even when all null, so that captures concatenate).
pub fn map_frame(rows: &[MapRow]) -> polars::prelude::PolarsResult<polars::prelude::DataFrame> {
    use polars::prelude::{Column, DataFrame};
    let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let n = rows.len();
    let u64s = |f: &dyn Fn(&MapRow) -> Option<u64>| -> Vec<Option<i64>> {
        rows.iter().map(|r| f(r).map(i)).collect()
    };
    let u32s = |f: &dyn Fn(&MapRow) -> Option<u32>| -> Vec<Option<i64>> {
        rows.iter().map(|r| f(r).map(i64::from)).collect()
    };
    let columns = vec![
        Column::new("file".into(), u64s(&|r| Some(r.file))),
        Column::new(
            "path".into(),
            rows.iter().map(|r| &*r.path).collect::<Vec<_>>(),
        ),
        Column::new("inode".into(), u64s(&|r| r.inode)),
        Column::new("index".into(), u64s(&|r| Some(r.index))),
        Column::new("logical_bytes".into(), u64s(&|r| r.logical_bytes)),
        Column::new("physical_bytes".into(), u64s(&|r| r.physical_bytes)),
        Column::new("length_bytes".into(), u64s(&|r| r.length_bytes)),
        Column::new(
            "flags".into(),
            rows.iter().map(|r| &*r.flags).collect::<Vec<_>>(),
        ),
        Column::new(
            "unit".into(),
            rows.iter().map(|r| r.unit.name()).collect::<Vec<_>>(),
        ),
        Column::new("unit_bytes".into(), u64s(&|r| r.unit_bytes)),
        Column::new("ext".into(), u64s(&|r| r.ext)),
        Column::new("logical_start".into(), u64s(&|r| r.logical_start)),
        Column::new("logical_end".into(), u64s(&|r| r.logical_end)),
        Column::new("physical_start".into(), u64s(&|r| r.physical_start)),
        Column::new("physical_end".into(), u64s(&|r| r.physical_end)),
        Column::new("length".into(), u64s(&|r| r.length)),
        Column::new("expected".into(), u64s(&|r| r.expected)),
        Column::new("ag".into(), u64s(&|r| r.ag)),
        Column::new("ag_offset_start".into(), u64s(&|r| r.ag_offset_start)),
        Column::new("ag_offset_end".into(), u64s(&|r| r.ag_offset_end)),
        Column::new("level".into(), u32s(&|r| r.level)),
        Column::new("max_depth".into(), u32s(&|r| r.max_depth)),
        Column::new("entry".into(), u32s(&|r| r.entry)),
        Column::new("entries".into(), u32s(&|r| r.entries)),
        Column::new(
            "tool_flags".into(),
            rows.iter()
                .map(|r| r.tool_flags.as_deref())
                .collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(n, columns)
}

/// File records → a DataFrame; `ints` names the integer fields, so that a column that is
/// null in every row is i64 (not the generic all-null string) and captures concatenate.
pub fn files_frame<T: Serialize>(
    rows: &[T],
    ints: &[&str],
) -> Result<polars::prelude::DataFrame, crate::frames::FrameError> {
    use polars::prelude::DataType;
    let mut df = crate::frames::from_records(rows)?;
    for name in ints {
        if let Ok(c) = df.column(name) {
            if c.dtype() != &DataType::Int64 && c.null_count() == c.len() {
                let cast = c.cast(&DataType::Int64)?;
                df.with_column(cast)?;
            }
        }
    }
    Ok(df)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_only_with_a_unit_size() {
        let mut r = MapRow {
            logical_start: Some(2),
            logical_end: Some(5),
            physical_start: Some(100),
            physical_end: Some(103),
            length: Some(4),
            ..Default::default()
        };
        r.fill_bytes(true);
        assert_eq!(r.length_bytes, None);
        assert_eq!(r.to_extent(), None);
        r.unit_bytes = Some(1024);
        r.fill_bytes(true);
        assert_eq!(
            (r.logical_bytes, r.physical_bytes, r.length_bytes),
            (Some(2048), Some(102_400), Some(4096))
        );
        assert_eq!(r.to_extent().unwrap().length_bytes, 4096);
    }

    #[test]
    fn frame_has_fixed_types() {
        let df = map_frame(&[MapRow::default()]).unwrap();
        assert_eq!(
            df.column("ag").unwrap().dtype(),
            &polars::prelude::DataType::Int64
        );
        assert_eq!(df.width(), 25);
    }
}
