//! `debugfs -R "stat PATH"` and `debugfs -R "ex PATH"` output (e2fsprogs 1.47) → [`Extent`]
//! rows, plus one typed [`InodeStat`] row per `stat` header.
//!
//! # `stat`
//! The inode header (`Inode:`, `Type:`, `Mode:`, `Flags:`, `Generation:`, `Version:`,
//! `User:`, `Group:`, `Project:`, `Size:`, `File ACL:`, `Links:`, `Blockcount:`, times,
//! `Size of extra inode fields:`, `Inode checksum:`, `Size of inline data:`, `Fast link
//! dest:`) becomes an [`InodeStat`]. The block map follows as either
//! - `BLOCKS:` (block-mapped ext2/ext3 files): `(5):1234` single blocks, `(0-11):1234-1245`
//!   ranges, `(IND):n`, `(DIND):n`, `(TIND):n` indirect blocks, then `TOTAL: N` (all blocks,
//!   indirect ones included); or
//! - `EXTENTS:` (ext4 extent-mapped): `(0-9):100-109`, `(10-19[u]):…` uninitialised
//!   (unwritten) extents and `(ETBn):n` extent tree blocks (index/leaf blocks of tree level n).
//!
//! Lists may be wrapped over several lines (as when pasted in mail, seed 001); a line that is
//! not part of the list (`..... ad nauseam ...`) becomes a warning and the list goes on.
//!
//! # `ex` (`dump_extents`)
//! The table `Level Entries Logical Physical Length Flags` becomes [`ExRow`]s: leaf rows
//! (`0/ 0 1/ 2 0 - 255 34816 - 35071 256 [Uninit]`) and index rows (no physical end; their
//! `Length` is the logical span covered).
//!
//! # Rows
//! Both formats give [`Extent`] rows in the order debugfs lists them:
//! - data extents have `index` 0, 1, 2 … in order (as FIEMAP numbers them); flags are
//!   `unwritten` for `[u]`/`Uninit`, `last` on the last data extent of the file and `eof` when
//!   the extent reaches the inode's size (as filefrag prints them; `eof` needs a `stat` header);
//! - metadata blocks are rows of one block with flags `metadata,ind`, `metadata,dind`,
//!   `metadata,tind` or `metadata,etbN` (N = tree level). Their `index` and `logical_bytes`
//!   are those of the next data extent listed (the first one they map, or the extent count
//!   and the end of the last extent when none follows). Filter on `metadata` to count only
//!   data extents; count all rows to get what `TOTAL:` counts;
//! - an inline-data inode gives one row with flags `inline`, no physical location and the
//!   inline size as length. Fast symlinks and device inodes give no rows.
//!
//! # Block size
//! debugfs prints block numbers, never the block size, and it is never assumed: it is
//! given ([`parse_stat_map`] / [`parse_ex_map`] with
//! [`MapOptions`](super::map::MapOptions), from `--block-size` or an experiment's geometry
//! table), or the byte columns of the rows are null and a warning says so.
//! `Blockcount:` (512-byte sectors) / blocks listed is kept as
//! [`InodeStat::blockcount_block_size`] and named in that warning as a hint only (bigalloc
//! and huge_file make it wrong); with a block size, `Blockcount:` is checked against it.
//!
//! # Several inodes in one text
//! A batched run (`debugfs -f cmdfile IMAGE`) echoes each command as `debugfs: stat "PATH"`:
//! those lines start a new inode and give the rows their `path` (without them `path` is
//! empty). Comment lines `# …` (which debugfs echoes from the command file) are skipped.

use super::map::{BlockSizeSource, MapRow};
use super::Warning;
use crate::extent::Extent;
use serde::Serialize;

mod entries;
mod ex;
mod stat;

pub use ex::{parse_ex_map, parse_ex_rows, parse_ex_with_block_size};
pub use stat::{parse_stat_inodes, parse_stat_map, parse_stat_report, parse_stat_with_block_size};

const STAT: &str = "debugfs-stat";
const EX: &str = "debugfs-ex";

/// The header of one `stat` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct InodeStat {
    /// 0-based number of the inode in the text: the join key with its rows.
    pub file: u64,
    /// From the `debugfs: stat PATH` echo of a batched run; empty otherwise.
    pub path: String,
    pub inode: Option<u64>,
    /// `regular`, `directory`, `symlink`, `block special`, `character special`, `FIFO`,
    /// `socket`, `bad type`.
    pub file_type: Option<String>,
    /// Permission bits (the octal `Mode:` value).
    pub mode: Option<u32>,
    /// The inode flags (`Flags: 0x80000`; 0x80000 = extents, 0x10000000 = inline data).
    pub flags: Option<u64>,
    pub generation: Option<u64>,
    /// As printed, e.g. `0x00000000:00000002`.
    pub version: Option<String>,
    pub user: Option<u64>,
    pub group: Option<u64>,
    pub project: Option<u64>,
    pub size_bytes: Option<u64>,
    pub file_acl: Option<u64>,
    pub links: Option<u64>,
    /// `Blockcount:` in 512-byte sectors (fs blocks when the huge_file flag 0x40000 is set).
    pub blockcount: Option<u64>,
    /// Seconds since the epoch, with the extra epoch bits of large inodes.
    pub ctime: Option<i64>,
    pub atime: Option<i64>,
    pub mtime: Option<i64>,
    pub crtime: Option<i64>,
    pub dtime: Option<i64>,
    /// Nanoseconds of the times (the extra field of large inodes, `:2b904bc8`, >> 2).
    pub ctime_ns: Option<u32>,
    pub atime_ns: Option<u32>,
    pub mtime_ns: Option<u32>,
    pub crtime_ns: Option<u32>,
    /// `Fragment:  Address: N    Number: N    Size: N` (always 0 on Linux).
    pub fragment_address: Option<u64>,
    pub fragment_number: Option<u64>,
    pub fragment_size: Option<u64>,
    pub extra_isize: Option<u64>,
    pub checksum: Option<u64>,
    /// `extents`, `blocks`, `inline`, `fast_symlink`, `device` or `none`.
    pub map: String,
    /// `TOTAL:` of a `BLOCKS:` list: data and indirect blocks.
    pub total_blocks: Option<u64>,
    /// Data extents (ranges) listed.
    pub data_extents: u64,
    /// Data blocks listed.
    pub data_blocks: u64,
    /// IND/DIND/TIND or ETB blocks listed.
    pub metadata_blocks: u64,
    /// `Size of inline data:`.
    pub inline_size: Option<u64>,
    pub fast_link_dest: Option<String>,
    /// Extended attribute lines as printed (`user.x (5) = "hello"`, `system.data (0)`).
    pub xattrs: Vec<String>,
    /// The block size used to turn block numbers into bytes; null when unknown.
    pub block_size: Option<u64>,
    /// `given` (`--block-size`), `geometry` (an experiment's geometry table) or
    /// `unknown` (then the byte columns of the rows are null).
    pub block_size_source: BlockSizeSource,
    /// Blockcount × 512 / blocks listed, when that is a power of two in 1 KiB ..= 64 KiB:
    /// a hint in the warning when the block size is unknown, never used for bytes (it is
    /// wrong with bigalloc and with the huge_file flag).
    pub blockcount_block_size: Option<u64>,
    /// Rows of the block map (data, metadata).
    pub rows: u64,
}

/// The integer fields of [`InodeStat`] (for a typed `files` frame).
pub const STAT_INTS: [&str; 31] = [
    "file",
    "inode",
    "mode",
    "flags",
    "generation",
    "user",
    "group",
    "project",
    "size_bytes",
    "file_acl",
    "links",
    "blockcount",
    "ctime",
    "atime",
    "mtime",
    "crtime",
    "dtime",
    "ctime_ns",
    "atime_ns",
    "mtime_ns",
    "crtime_ns",
    "fragment_address",
    "fragment_number",
    "fragment_size",
    "extra_isize",
    "checksum",
    "total_blocks",
    "inline_size",
    "block_size",
    "blockcount_block_size",
    "rows",
];

/// One file of a `debugfs ex` text (a batched run has several).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ExFile {
    /// 0-based number of the file in the text: the join key with its rows.
    pub file: u64,
    /// The `debugfs: ex PATH` echo of a batched run; empty otherwise.
    pub path: String,
    pub block_size: Option<u64>,
    pub block_size_source: BlockSizeSource,
    /// Table rows (index and leaf).
    pub rows: u64,
    /// The tree's depth (`Level` `n/DEPTH`): 0 when the extents fit in the inode.
    pub depth: Option<u32>,
    /// Leaf rows (data extents) and index rows (pointers to tree blocks).
    pub leaves: u64,
    pub index_rows: u64,
    /// Blocks mapped by the leaves.
    pub data_blocks: u64,
}

/// The integer fields of [`ExFile`].
pub const EX_INTS: [&str; 7] = [
    "file",
    "block_size",
    "rows",
    "depth",
    "leaves",
    "index_rows",
    "data_blocks",
];

/// One row of the `ex` (`dump_extents`) table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ExRow {
    /// The `debugfs: ex PATH` echo of a batched run; empty otherwise.
    pub path: String,
    pub level: u32,
    pub max_depth: u32,
    pub entry: u32,
    pub entries: u32,
    /// Index rows point to a tree block; leaf rows map data.
    pub leaf: bool,
    pub logical_first: u64,
    pub logical_last: u64,
    /// Leaf: first data block. Index row: the tree block it points to.
    pub physical_first: u64,
    /// Leaf only.
    pub physical_last: Option<u64>,
    /// Leaf: blocks mapped. Index row: the logical span it covers.
    pub length: u64,
    /// `Uninit` (unwritten) leaf.
    pub uninit: bool,
}

/// Everything read from a `stat` text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatReport {
    pub inodes: Vec<InodeStat>,
    /// Every block-map entry as a row (block numbers, and bytes when the block size is known).
    pub rows: Vec<MapRow>,
    /// The rows as [`Extent`]s; empty when the block size is unknown.
    pub extents: Vec<Extent>,
    pub warnings: Vec<Warning>,
    pub partial: bool,
}

fn warn(warnings: &mut Vec<Warning>, line: usize, text: &str, reason: impl Into<String>) {
    warnings.push(Warning {
        line,
        text: text.to_string(),
        reason: reason.into(),
    });
}

fn valid_block_size(bs: u64) -> bool {
    bs.is_power_of_two() && (1024..=65536).contains(&bs)
}

/// The argument of a `debugfs: CMD ARG` echo, unquoted.
fn echo_arg<'a>(t: &'a str, cmd: &str) -> Option<&'a str> {
    let rest = t.strip_prefix("debugfs:")?.trim_start();
    let rest = rest.strip_prefix(cmd)?;
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    let arg = rest.trim();
    Some(
        arg.strip_prefix('"')
            .and_then(|a| a.strip_suffix('"'))
            .unwrap_or(arg),
    )
}
