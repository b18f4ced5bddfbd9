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
//! given ([`parse_stat_map`] / [`parse_ex_map`] with [`MapOptions`], from `--block-size` or
//! an experiment's geometry table), or the byte columns of the rows are null and a warning
//! says so. `Blockcount:` (512-byte sectors) / blocks listed is kept as
//! [`InodeStat::blockcount_block_size`] and named in that warning as a hint only (bigalloc
//! and huge_file make it wrong); with a block size, `Blockcount:` is checked against it.
//!
//! # Several inodes in one text
//! A batched run (`debugfs -f cmdfile IMAGE`) echoes each command as `debugfs: stat "PATH"`:
//! those lines start a new inode and give the rows their `path` (without them `path` is
//! empty). Comment lines `# …` (which debugfs echoes from the command file) are skipped.

use super::map::{BlockSizeSource, MapOptions, MapReport, MapRow, Unit};
use super::{Output, ParseError, Warning};
use crate::extent::Extent;
use serde::Serialize;
use std::borrow::Cow;
use std::sync::Arc;

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

/// `stat` → extents with the filesystem block size given.
pub fn parse_stat_with_block_size(
    text: &str,
    block_size: u64,
) -> Result<Output<Extent>, ParseError> {
    into_extents(parse_stat_report(text, Some(block_size))?)
}

/// `stat` → one [`InodeStat`] per inode (block size unknown unless given).
pub fn parse_stat_inodes(
    text: &str,
    block_size: Option<u64>,
) -> Result<Output<InodeStat>, ParseError> {
    let r = parse_stat_report(text, block_size)?;
    Ok(Output {
        rows: r.inodes,
        warnings: r.warnings,
        partial: r.partial,
    })
}

/// `stat` → inode records and their rows; the block size comes from `opts` (without
/// one, the byte columns are null and a warning says so).
pub fn parse_stat_map(text: &str, opts: MapOptions) -> Result<MapReport<InodeStat>, ParseError> {
    let (bs, source) = opts.block_size();
    let r = stat_report(text, bs, source)?;
    Ok(MapReport {
        files: r.inodes,
        rows: r.rows,
        warnings: r.warnings,
        partial: r.partial,
    })
}

fn into_extents(r: StatReport) -> Result<Output<Extent>, ParseError> {
    Ok(Output {
        rows: r.extents,
        warnings: r.warnings,
        partial: r.partial,
    })
}

/// `ex` → extents with the filesystem block size given.
pub fn parse_ex_with_block_size(text: &str, block_size: u64) -> Result<Output<Extent>, ParseError> {
    let r = parse_ex_map(text, MapOptions::given(block_size))?;
    Ok(Output {
        rows: r.extents(),
        warnings: r.warnings,
        partial: r.partial,
    })
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

// ---------------------------------------------------------------- stat

/// A block-map entry as listed: data range, indirect block or extent tree block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Data {
        logical: u64,
        physical: u64,
        blocks: u64,
        uninit: bool,
    },
    Meta {
        kind: Meta,
        physical: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meta {
    Ind,
    Dind,
    Tind,
    Etb(u32),
}

impl Meta {
    fn flags(self) -> Cow<'static, str> {
        const ETB: [&str; 5] = [
            "metadata,etb0",
            "metadata,etb1",
            "metadata,etb2",
            "metadata,etb3",
            "metadata,etb4",
        ];
        match self {
            Meta::Ind => "metadata,ind".into(),
            Meta::Dind => "metadata,dind".into(),
            Meta::Tind => "metadata,tind".into(),
            Meta::Etb(n) => match ETB.get(n as usize) {
                Some(s) => Cow::Borrowed(s),
                None => format!("metadata,etb{n}").into(),
            },
        }
    }
}

fn num(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Decimal digits at the start of `b`: (value, bytes used); None without digits or on
/// overflow.
fn digits(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut i = 0;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        // 19 digits always fit in a u64; only longer numbers can overflow.
        v = if i < 19 {
            v * 10 + u64::from(d)
        } else {
            v.checked_mul(10)?.checked_add(u64::from(d))?
        };
        i += 1;
    }
    (i > 0).then_some((v, i))
}

/// `N` or `N-M` at the start of `b`: (first, last, bytes used).
fn range(b: &[u8]) -> Option<(u64, u64, usize)> {
    let (first, n) = digits(b)?;
    if b.get(n) == Some(&b'-') {
        let (last, m) = digits(&b[n + 1..])?;
        Some((first, last, n + 1 + m))
    } else {
        Some((first, first, n))
    }
}

/// `(0-11):1234-1245`, `(5):1234`, `(3[u]):9`, `(IND):77`, `(ETB0):12`: the whole token.
#[cfg(test)]
fn parse_entry(tok: &str) -> Option<Entry> {
    parse_entry_prefix(tok.as_bytes()).and_then(|(e, used)| (used == tok.len()).then_some(e))
}

/// An entry at the start of `b`: (entry, bytes used).
fn parse_entry_prefix(b: &[u8]) -> Option<(Entry, usize)> {
    if b.first() != Some(&b'(') {
        return None;
    }
    let b = &b[1..];
    if b.first().is_some_and(u8::is_ascii_digit) {
        let (l0, l1, mut i) = range(b)?;
        let uninit = b[i..].starts_with(b"[u]");
        if uninit {
            i += 3;
        }
        if b.get(i) != Some(&b')') || b.get(i + 1) != Some(&b':') {
            return None;
        }
        let (p0, p1, used) = range(&b[i + 2..])?;
        let blocks = l1.checked_sub(l0)?.checked_add(1)?;
        if p1.checked_sub(p0)?.checked_add(1)? != blocks {
            return None;
        }
        let entry = Entry::Data {
            logical: l0,
            physical: p0,
            blocks,
            uninit,
        };
        return Some((entry, 1 + i + 2 + used));
    }
    let close = b.iter().take(8).position(|&c| c == b')')?;
    let (name, rest) = (&b[..close], &b[close..]);
    let phys = rest.strip_prefix(b"):")?;
    let (physical, used) = digits(phys)?;
    let kind = match name {
        b"IND" => Meta::Ind,
        b"DIND" => Meta::Dind,
        b"TIND" => Meta::Tind,
        _ => {
            let level = name.strip_prefix(b"ETB")?;
            let (l, used) = digits(level)?;
            if used != level.len() {
                return None;
            }
            Meta::Etb(u32::try_from(l).ok()?)
        }
    };
    Some((Entry::Meta { kind, physical }, 1 + close + 2 + used))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ListMode {
    None,
    Blocks,
    Extents,
}

/// One inode being read.
#[derive(Default)]
struct Record {
    stat: InodeStat,
    entries: Vec<Entry>,
    /// Line number where the record started (for warnings).
    line: usize,
    seen_header: bool,
    /// Inside `Extended attributes:` (indented attribute lines follow).
    in_xattrs: bool,
    /// A list entry could not be read: the map is incomplete.
    broken: bool,
}

/// `stat` text → inodes and rows. `block_size`: the filesystem block size given by the
/// caller; None leaves the byte columns null (with a warning).
pub fn parse_stat_report(text: &str, block_size: Option<u64>) -> Result<StatReport, ParseError> {
    stat_report(text, block_size, BlockSizeSource::Given)
}

fn stat_report(
    text: &str,
    block_size: Option<u64>,
    source: BlockSizeSource,
) -> Result<StatReport, ParseError> {
    let given = block_size.map(|bs| (bs, source));
    if let Some(bs) = block_size {
        if !valid_block_size(bs) {
            return Err(ParseError::Malformed {
                kind: STAT,
                line: 0,
                message: format!("block size {bs} is not a power of two in 1024..=65536"),
            });
        }
    }
    let mut report = StatReport::default();
    let mut rec: Option<Record> = None;
    let mut pending_path: Option<(usize, String)> = None;
    let mut mode = ListMode::None;
    let mut recognised = 0usize;

    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\r');
        let t = line.trim_ascii();
        if t.is_empty() {
            mode = ListMode::None;
            continue;
        }
        if mode != ListMode::None {
            if t.starts_with('(') || t.starts_with(',') {
                recognised += 1;
                if let Some(r) = rec.as_mut() {
                    read_list(r, n, line, t, &mut report.warnings);
                }
                continue;
            }
            if let Some(total) = t.strip_prefix("TOTAL:") {
                recognised += 1;
                mode = ListMode::None;
                match (num(total.trim()), rec.as_mut()) {
                    (Some(v), Some(r)) => r.stat.total_blocks = Some(v),
                    _ => warn(&mut report.warnings, n, line, "unreadable TOTAL"),
                }
                continue;
            }
            if !(t.starts_with("Inode:") || t.starts_with("debugfs:") || t.starts_with('#')) {
                warn(
                    &mut report.warnings,
                    n,
                    line,
                    "unrecognised line inside a block list",
                );
                continue;
            }
            mode = ListMode::None;
        }
        if let Some(path) = echo_arg(t, "stat") {
            recognised += 1;
            if let Some(r) = rec.take() {
                finish_record(r, given, &mut report);
            }
            if let Some((l, p)) = pending_path.take() {
                no_output(&mut report.warnings, l, &p);
            }
            pending_path = Some((n, path.to_string()));
            continue;
        }
        if t.starts_with("debugfs") || t.starts_with('#') {
            // Other commands of a batched run, comments, the version banner.
            recognised += 1;
            continue;
        }
        if t.starts_with("Inode:") {
            recognised += 1;
            if let Some(r) = rec.take() {
                finish_record(r, given, &mut report);
            }
            let mut r = Record {
                line: n,
                seen_header: true,
                ..Default::default()
            };
            r.stat.path = pending_path.take().map(|(_, p)| p).unwrap_or_default();
            header_line(&mut r.stat, t);
            rec = Some(r);
            continue;
        }
        if t == "BLOCKS:" || t == "EXTENTS:" {
            recognised += 1;
            // A second list after a complete one (two bare lists pasted in one mail, as
            // in seed 001): a file of its own.
            if rec.as_ref().is_some_and(|r| !r.stat.map.is_empty()) {
                if let Some(r) = rec.take() {
                    finish_record(r, given, &mut report);
                }
            }
            let r = rec.get_or_insert_with(|| {
                // A bare list, as pasted in a mail (seed 001).
                let mut r = Record {
                    line: n,
                    ..Default::default()
                };
                r.stat.path = pending_path.take().map(|(_, p)| p).unwrap_or_default();
                r
            });
            r.in_xattrs = false;
            if t == "BLOCKS:" {
                mode = ListMode::Blocks;
                r.stat.map = "blocks".into();
            } else {
                mode = ListMode::Extents;
                r.stat.map = "extents".into();
            }
            continue;
        }
        match rec.as_mut() {
            Some(r) if r.seen_header => {
                if r.in_xattrs && raw.starts_with("  ") {
                    recognised += 1;
                    r.stat.xattrs.push(t.to_string());
                    continue;
                }
                r.in_xattrs = t == "Extended attributes:";
                if header_line(&mut r.stat, t) {
                    recognised += 1;
                } else {
                    warn(&mut report.warnings, n, line, "unrecognised line");
                }
            }
            _ => warn(&mut report.warnings, n, line, "unrecognised line"),
        }
    }
    let cut_in_list = mode != ListMode::None;
    if let Some(mut r) = rec.take() {
        // A regular file or directory whose output stops before its block map.
        let is_data = matches!(r.stat.file_type.as_deref(), Some("regular" | "directory"));
        if r.seen_header && r.stat.map.is_empty() && is_data && r.stat.blockcount != Some(0) {
            warn(
                &mut report.warnings,
                r.line,
                "",
                "input ends before the inode's block map: truncated",
            );
            r.broken = true;
        }
        // BLOCKS lists always end with TOTAL when they list anything.
        if cut_in_list
            && r.stat.map == "blocks"
            && !r.entries.is_empty()
            && r.stat.total_blocks.is_none()
        {
            warn(
                &mut report.warnings,
                r.line,
                "",
                "BLOCKS list without TOTAL: truncated",
            );
            r.broken = true;
        }
        finish_record(r, given, &mut report);
    }
    if let Some((l, p)) = pending_path {
        no_output(&mut report.warnings, l, &p);
    }
    if recognised == 0 {
        return Err(ParseError::NothingRecognised {
            kind: STAT,
            expected: "`Inode:` header, `BLOCKS:` or `EXTENTS:` list",
        });
    }
    Ok(report)
}

fn no_output(warnings: &mut Vec<Warning>, line: usize, path: &str) {
    warn(
        warnings,
        line,
        "",
        format!("no stat output for `{path}` (debugfs printed its error on stderr)"),
    );
}

fn read_list(r: &mut Record, n: usize, line: &str, t: &str, warnings: &mut Vec<Warning>) {
    let b = t.as_bytes();
    // An entry takes at least 10 bytes (`(1):2345, `): room for all without regrowing.
    r.entries.reserve(b.len() / 10 + 1);
    let mut i = 0;
    while i < b.len() {
        // Separators: `, ` between entries, and a `,` left at a wrapped line's end.
        if b[i] == b',' || b[i] == b' ' {
            i += 1;
            continue;
        }
        // One pass: an entry, then spaces, then a `,` or the end of the line.
        if let Some((e, used)) = parse_entry_prefix(&b[i..]) {
            let mut j = i + used;
            while b.get(j) == Some(&b' ') {
                j += 1;
            }
            if j == b.len() || b[j] == b',' {
                r.entries.push(e);
                i = j;
                continue;
            }
        }
        let end = b[i..]
            .iter()
            .position(|&c| c == b',')
            .map_or(b.len(), |p| i + p);
        let tok = t.get(i..end).unwrap_or("").trim_end();
        r.broken = true;
        warn(
            warnings,
            n,
            line,
            format!("unreadable block-map entry `{tok}` (cut or malformed)"),
        );
        i = end;
    }
}

/// Header fields; returns false if the line holds none.
fn header_line(s: &mut InodeStat, t: &str) -> bool {
    if let Some(rest) = t.strip_prefix("Fast link dest:") {
        let v = rest.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(v);
        s.fast_link_dest = Some(v.to_string());
        s.map = "fast_symlink".into();
        return true;
    }
    if let Some(rest) = t.strip_prefix("Size of inline data:") {
        s.inline_size = num(rest.trim());
        s.map = "inline".into();
        return s.inline_size.is_some();
    }
    if let Some(rest) = t.strip_prefix("Size of extra inode fields:") {
        s.extra_isize = num(rest.trim());
        return s.extra_isize.is_some();
    }
    if let Some(rest) = t.strip_prefix("Inode checksum:") {
        s.checksum = hex(rest.trim());
        return s.checksum.is_some();
    }
    if t.starts_with("Device major/minor number:") || t.starts_with("(New-style) Device major") {
        s.map = "device".into();
        return true;
    }
    if t == "Extended attributes:" {
        return true;
    }
    if let Some(rest) = t.strip_prefix("Fragment:") {
        // `Fragment:  Address: 0    Number: 0    Size: 0`
        let mut w = rest.split_whitespace();
        while let (Some(k), Some(v)) = (w.next(), w.next()) {
            let slot = match k {
                "Address:" => &mut s.fragment_address,
                "Number:" => &mut s.fragment_number,
                "Size:" => &mut s.fragment_size,
                _ => return false,
            };
            *slot = num(v);
        }
        return true;
    }
    for (name, slot, ns) in [
        ("ctime:", &mut s.ctime, Some(&mut s.ctime_ns)),
        ("atime:", &mut s.atime, Some(&mut s.atime_ns)),
        ("mtime:", &mut s.mtime, Some(&mut s.mtime_ns)),
        ("crtime:", &mut s.crtime, Some(&mut s.crtime_ns)),
        ("dtime:", &mut s.dtime, None),
    ] {
        if let Some(rest) = t.strip_prefix(name) {
            let v = time_value(rest);
            *slot = v.map(|v| v.0);
            if let Some(ns) = ns {
                *ns = v.and_then(|v| v.1);
            }
            return slot.is_some();
        }
    }
    // Extended attribute lines (`  system.data (0)`, `  user.x = "y" (1)`).
    if t.ends_with(')') && t.contains(" (") && !t.contains(':') {
        return true;
    }
    // `Key: value   Key: value` lines.
    let mut any = false;
    let mut rest = t;
    while let Some((key, after)) = rest.split_once(':') {
        let key = key.trim();
        let after = after.trim_start();
        // The value runs to the next run of two or more spaces.
        let (value, next) = match after.find("  ") {
            Some(p) => (&after[..p], after[p..].trim_start()),
            None => (after, ""),
        };
        let value = value.trim();
        let ok = match key {
            "Inode" => set(&mut s.inode, num(value)),
            "Type" => {
                s.file_type = Some(value.to_string());
                true
            }
            "Mode" => set(&mut s.mode, u32::from_str_radix(value, 8).ok()),
            "Flags" => set(&mut s.flags, hex(value)),
            "Generation" => set(&mut s.generation, num(value)),
            "Version" => {
                s.version = Some(value.to_string());
                true
            }
            "User" => set(&mut s.user, num(value)),
            "Group" => set(&mut s.group, num(value)),
            "Project" => set(&mut s.project, num(value)),
            "Size" => set(&mut s.size_bytes, num(value)),
            "File ACL" => set(&mut s.file_acl, num(value.split(' ').next().unwrap_or(""))),
            "Links" => set(&mut s.links, num(value)),
            "Blockcount" => set(&mut s.blockcount, num(value)),
            _ => false,
        };
        if !ok {
            return any;
        }
        any = true;
        rest = next;
    }
    any
}

fn set<T>(slot: &mut Option<T>, v: Option<T>) -> bool {
    let ok = v.is_some();
    if ok {
        *slot = v;
    }
    ok
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

/// ` 0x6b0cad1d:2b904bc8 -- Sun …` (large inode) or `0x6b0cad1d -- Sun …`: seconds
/// (with the epoch bits of the extra field) and nanoseconds (the extra field >> 2).
fn time_value(rest: &str) -> Option<(i64, Option<u32>)> {
    let v = rest.trim().split(" -- ").next()?.trim();
    let (secs, extra) = match v.split_once(':') {
        Some((s, e)) => (s, Some(e.trim_start_matches('(').trim_end_matches(')'))),
        None => (v, None),
    };
    let secs = i64::from(u32::try_from(hex(secs)?).ok()? as i32);
    let extra = match extra {
        Some(e) => Some(u32::from_str_radix(e, 16).ok()?),
        None => None,
    };
    let epoch = i64::from(extra.unwrap_or(0) & 3);
    Some((secs + (epoch << 32), extra.map(|e| e >> 2)))
}

fn finish_record(mut r: Record, given: Option<(u64, BlockSizeSource)>, report: &mut StatReport) {
    let s = &mut r.stat;
    s.file = report.inodes.len() as u64;
    if s.map.is_empty() {
        s.map = "none".into();
    }
    let mut data_blocks = 0u64;
    let mut meta = 0u64;
    for e in &r.entries {
        match e {
            Entry::Data { blocks, .. } => {
                s.data_extents += 1;
                data_blocks = data_blocks.saturating_add(*blocks);
            }
            Entry::Meta { .. } => meta += 1,
        }
    }
    s.data_blocks = data_blocks;
    s.metadata_blocks = meta;
    let listed = data_blocks.saturating_add(meta);
    if let Some(total) = s.total_blocks {
        if total != listed && !r.broken {
            warn(
                &mut report.warnings,
                r.line,
                "",
                format!("TOTAL: {total} but {listed} blocks listed (list incomplete?)"),
            );
        }
    }
    if r.broken {
        report.partial = true;
    }
    s.blockcount_block_size = blockcount_block_size(s, listed);
    // Block size: given, or unknown (never guessed).
    let bs = match given {
        Some((bs, source)) => {
            s.block_size = Some(bs);
            s.block_size_source = source;
            Some(bs)
        }
        None => {
            s.block_size_source = BlockSizeSource::Unknown;
            if listed > 0 {
                let hint = match s.blockcount_block_size {
                    Some(h) => format!("; Blockcount × 512 / blocks listed would give {h}, which is wrong with bigalloc or huge_file"),
                    None => String::new(),
                };
                warn(
                    &mut report.warnings,
                    r.line,
                    "",
                    format!(
                        "block size unknown (inode {}): debugfs does not print it, so the byte columns are null; pass --block-size N (dumpe2fs -h prints `Block size:`){hint}",
                        s.inode.map_or("?".to_string(), |i| i.to_string())
                    ),
                );
            }
            None
        }
    };
    if let Some(bs) = bs.filter(|_| !r.broken && s.flags.unwrap_or(0) & 0x40000 == 0) {
        let count = listed + u64::from(s.file_acl.unwrap_or(0) != 0);
        if let Some(sectors) = s.blockcount {
            if u128::from(sectors) * 512 != u128::from(count) * u128::from(bs) {
                warn(
                    &mut report.warnings,
                    r.line,
                    "",
                    format!(
                        "Blockcount {sectors} (512-byte sectors) does not match {count} blocks of {bs} bytes listed"
                    ),
                );
            }
        }
    }

    let before = report.rows.len();
    let stat = &mut r.stat;
    if stat.map == "inline" {
        report.rows.push(MapRow {
            file: stat.file,
            path: stat.path.as_str().into(),
            inode: stat.inode,
            logical_bytes: Some(0),
            length_bytes: stat.inline_size,
            flags: "last,not_aligned,inline,eof".into(),
            unit: Unit::Byte,
            unit_bytes: Some(1),
            length: stat.inline_size,
            ..Default::default()
        });
    } else {
        push_rows(
            &mut report.rows,
            stat.file,
            &stat.path,
            stat.inode,
            stat.size_bytes,
            bs,
            &r.entries,
        );
    }
    stat.rows = (report.rows.len() - before) as u64;
    report
        .extents
        .extend(report.rows[before..].iter().filter_map(MapRow::to_extent));
    report.inodes.push(r.stat);
}

/// Blockcount (512-byte sectors) / blocks listed, when that is a plausible block size.
fn blockcount_block_size(s: &InodeStat, listed: u64) -> Option<u64> {
    const HUGE_FILE_FL: u64 = 0x40000;
    if s.flags.unwrap_or(0) & HUGE_FILE_FL != 0 {
        return None;
    }
    let count = listed + u64::from(s.file_acl.unwrap_or(0) != 0);
    let bytes = s.blockcount?.checked_mul(512)?;
    if count == 0 || bytes % count != 0 {
        return None;
    }
    let bs = bytes / count;
    valid_block_size(bs).then_some(bs)
}

/// Entries in listed order → rows (see the module docs for numbering and flags).
fn push_rows(
    out: &mut Vec<MapRow>,
    file: u64,
    path: &str,
    inode: Option<u64>,
    size: Option<u64>,
    bs: Option<u64>,
    entries: &[Entry],
) {
    out.reserve(entries.len());
    let path: Arc<str> = Arc::from(path);
    let mut last_data = None;
    let mut n_data = 0u64;
    let mut end_of_data = 0u64;
    for (i, e) in entries.iter().enumerate() {
        if let Entry::Data {
            logical, blocks, ..
        } = e
        {
            last_data = Some(i);
            n_data += 1;
            end_of_data = end_of_data.max(logical.saturating_add(*blocks));
        }
    }
    let mul = |v: u64| bs.map(|b| v.saturating_mul(b));
    // Metadata rows get the index and offset of the next data extent: they are pushed with
    // "none follows" values and patched when that extent comes.
    let mut pending = 0usize;
    let mut data_index = 0u64;
    for (i, e) in entries.iter().enumerate() {
        let base = MapRow {
            file,
            path: Arc::clone(&path),
            inode,
            unit: Unit::Block,
            unit_bytes: bs,
            ..Default::default()
        };
        match *e {
            Entry::Data {
                logical,
                physical,
                blocks,
                uninit,
            } => {
                if pending > 0 {
                    let len = out.len();
                    for m in &mut out[len - pending..] {
                        m.index = data_index;
                        m.logical_bytes = mul(logical);
                    }
                    pending = 0;
                }
                let last = Some(i) == last_data;
                let eof = size.is_some_and(|sz| {
                    u128::from(logical.saturating_add(blocks)) * u128::from(bs.unwrap_or(0))
                        >= u128::from(sz)
                        && bs.is_some()
                });
                let flags = match (last, uninit, eof) {
                    (false, false, false) => "",
                    (true, false, false) => "last",
                    (false, true, false) => "unwritten",
                    (false, false, true) => "eof",
                    (true, true, false) => "last,unwritten",
                    (true, false, true) => "last,eof",
                    (false, true, true) => "unwritten,eof",
                    (true, true, true) => "last,unwritten,eof",
                };
                out.push(MapRow {
                    index: data_index,
                    logical_bytes: mul(logical),
                    physical_bytes: mul(physical),
                    length_bytes: mul(blocks),
                    flags: Cow::Borrowed(flags),
                    logical_start: Some(logical),
                    logical_end: Some(logical.saturating_add(blocks - 1)),
                    physical_start: Some(physical),
                    physical_end: Some(physical.saturating_add(blocks - 1)),
                    length: Some(blocks),
                    tool_flags: uninit.then(|| "[u]".to_string()),
                    ..base
                });
                data_index += 1;
            }
            Entry::Meta { kind, physical } => {
                out.push(MapRow {
                    index: n_data,
                    logical_bytes: mul(end_of_data),
                    physical_bytes: mul(physical),
                    length_bytes: bs,
                    flags: kind.flags(),
                    physical_start: Some(physical),
                    physical_end: Some(physical),
                    length: Some(1),
                    level: match kind {
                        Meta::Etb(l) => Some(l),
                        _ => None,
                    },
                    ..base
                });
                pending += 1;
            }
        }
    }
}

// ---------------------------------------------------------------- ex

/// `ex` text → table rows, with the path of each batched `debugfs: ex PATH` echo.
pub fn parse_ex_rows(text: &str) -> Result<Output<ExRow>, ParseError> {
    let mut out = Output::default();
    let mut recognised = 0usize;
    let mut path = String::new();
    let mut last_line = 0usize;
    let mut last_failed_row = 0usize;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\r');
        let t = line.trim_ascii();
        if t.is_empty() {
            continue;
        }
        last_line = n;
        let digit = t.as_bytes()[0].is_ascii_digit();
        if digit {
            if let Some(mut row) = parse_ex_row(t) {
                recognised += 1;
                row.path.clone_from(&path);
                out.rows.push(row);
                continue;
            }
        }
        if let Some(p) = echo_arg(t, "ex").or_else(|| echo_arg(t, "dump_extents")) {
            recognised += 1;
            path = p.to_string();
            continue;
        }
        if t.starts_with("debugfs:") || t.starts_with('#') {
            recognised += 1;
            continue;
        }
        if t.starts_with("debugfs ") && t.ends_with(')') {
            // The version banner, `debugfs 1.47.0 (5-Feb-2023)`.
            continue;
        }
        if t.starts_with("Level") && t.contains("Entries") && t.contains("Logical") {
            recognised += 1;
            continue;
        }
        if digit {
            last_failed_row = n;
        }
        warn(&mut out.warnings, n, line, "unrecognised line");
    }
    // A cut last line makes the output partial.
    if last_failed_row != 0 && last_failed_row == last_line {
        out.partial = true;
    }
    if recognised == 0 {
        // debugfs's own message, e.g. `/f: does not uses extent block maps` for a
        // block-mapped (ext2/ext3) file.
        let said = text
            .lines()
            .map(str::trim)
            .enumerate()
            .find(|(_, l)| !l.is_empty() && !l.starts_with("debugfs "));
        return Err(match said {
            Some((i, l)) => ParseError::Malformed {
                kind: EX,
                line: i + 1,
                message: format!("no extent table; debugfs printed: {l}"),
            },
            None => ParseError::NothingRecognised {
                kind: EX,
                expected: "`Level Entries Logical Physical Length Flags` table",
            },
        });
    }
    Ok(out)
}

/// A byte cursor over one line.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn spaces(&mut self) {
        while self.i < self.b.len() && self.b[self.i] == b' ' {
            self.i += 1;
        }
    }

    /// Spaces, then a decimal number.
    fn num(&mut self) -> Option<u64> {
        self.spaces();
        let (v, n) = digits(&self.b[self.i..])?;
        self.i += n;
        Some(v)
    }

    fn num32(&mut self) -> Option<u32> {
        u32::try_from(self.num()?).ok()
    }

    /// Spaces, then the byte `c`.
    fn lit(&mut self, c: u8) -> Option<()> {
        self.spaces();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn at_end(&mut self) -> bool {
        self.spaces();
        self.i == self.b.len()
    }
}

/// ` 2/ 2   1/340     0 -     0  4140 -  4140      1 [Uninit]` or an index row
/// ` 0/ 2   1/  1     0 - 27891 36903          27892`.
fn parse_ex_row(t: &str) -> Option<ExRow> {
    let mut c = Cur {
        b: t.as_bytes(),
        i: 0,
    };
    let level = c.num32()?;
    c.lit(b'/')?;
    let max_depth = c.num32()?;
    let entry = c.num32()?;
    c.lit(b'/')?;
    let entries = c.num32()?;
    let logical_first = c.num()?;
    c.lit(b'-')?;
    let logical_last = c.num()?;
    let physical_first = c.num()?;
    let mut row = ExRow {
        level,
        max_depth,
        entry,
        entries,
        logical_first,
        logical_last,
        physical_first,
        ..Default::default()
    };
    if c.lit(b'-').is_some() {
        row.leaf = true;
        let p1 = c.num()?;
        row.physical_last = Some(p1);
        row.length = c.num()?;
        c.spaces();
        if c.b[c.i..].starts_with(b"Uninit") {
            row.uninit = true;
            c.i += 6;
        }
        if p1.checked_sub(physical_first)?.checked_add(1)? != row.length {
            return None;
        }
    } else {
        row.length = c.num()?;
    }
    if !c.at_end() || row.logical_last < row.logical_first {
        return None;
    }
    Some(row)
}

/// `ex` → one [`ExFile`] per file and a row per table line; the block size comes from
/// `opts` (without one, the byte columns are null and a warning says so).
pub fn parse_ex_map(text: &str, opts: MapOptions) -> Result<MapReport<ExFile>, ParseError> {
    let (block_size, source) = opts.block_size();
    if let Some(bs) = block_size {
        if !valid_block_size(bs) {
            return Err(ParseError::Malformed {
                kind: EX,
                line: 0,
                message: format!("block size {bs} is not a power of two in 1024..=65536"),
            });
        }
    }
    let table = parse_ex_rows(text)?;
    let mut out = MapReport {
        warnings: table.warnings,
        partial: table.partial,
        ..MapReport::default()
    };
    if block_size.is_none() && !table.rows.is_empty() {
        warn(
            &mut out.warnings,
            0,
            "",
            "block size unknown: debugfs does not print it, so the byte columns are null; pass --block-size N (dumpe2fs -h prints `Block size:`)",
        );
    }
    // Group rows by path (consecutive runs): one file each.
    let mut start = 0;
    while start < table.rows.len() {
        let path = &table.rows[start].path;
        let end = table.rows[start..]
            .iter()
            .position(|r| &r.path != path)
            .map_or(table.rows.len(), |p| start + p);
        let rows = &table.rows[start..end];
        let file = out.files.len() as u64;
        let entries: Vec<Entry> = rows
            .iter()
            .map(|r| {
                if r.leaf {
                    Entry::Data {
                        logical: r.logical_first,
                        physical: r.physical_first,
                        blocks: r.length,
                        uninit: r.uninit,
                    }
                } else {
                    Entry::Meta {
                        kind: Meta::Etb(r.level),
                        physical: r.physical_first,
                    }
                }
            })
            .collect();
        let first = out.rows.len();
        push_rows(&mut out.rows, file, path, None, None, block_size, &entries);
        // The table's own columns, as printed.
        for (m, r) in out.rows[first..].iter_mut().zip(rows) {
            m.level = Some(r.level);
            m.max_depth = Some(r.max_depth);
            m.entry = Some(r.entry);
            m.entries = Some(r.entries);
            m.logical_start = Some(r.logical_first);
            m.logical_end = Some(r.logical_last);
            m.physical_start = Some(r.physical_first);
            m.physical_end = r.physical_last;
            m.length = Some(r.length);
            m.tool_flags = r.uninit.then(|| "Uninit".to_string());
        }
        out.files.push(ExFile {
            file,
            path: path.clone(),
            block_size,
            block_size_source: if block_size.is_some() {
                source
            } else {
                BlockSizeSource::Unknown
            },
            rows: rows.len() as u64,
            depth: rows.iter().map(|r| r.max_depth).max(),
            leaves: rows.iter().filter(|r| r.leaf).count() as u64,
            index_rows: rows.iter().filter(|r| !r.leaf).count() as u64,
            data_blocks: rows
                .iter()
                .filter(|r| r.leaf)
                .fold(0u64, |a, r| a.saturating_add(r.length)),
        });
        start = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_up_to_u64_max() {
        assert_eq!(digits(b"0"), Some((0, 1)));
        assert_eq!(digits(b"4140, "), Some((4140, 4)));
        assert_eq!(
            digits(b"9999999999999999999"),
            Some((9_999_999_999_999_999_999, 19))
        );
        assert_eq!(digits(b"18446744073709551615"), Some((u64::MAX, 20)));
        assert_eq!(digits(b"18446744073709551616"), None, "overflow");
        assert_eq!(digits(b"x1"), None);
        // A list entry with a junk tail after its number is not a whole entry.
        assert_eq!(parse_entry("(1):2x"), None);
        assert_eq!(parse_entry_prefix(b"(1):2x").map(|(_, n)| n), Some(5));
    }

    #[test]
    fn entries() {
        assert_eq!(
            parse_entry("(0-11):4899-4910"),
            Some(Entry::Data {
                logical: 0,
                physical: 4899,
                blocks: 12,
                uninit: false
            })
        );
        assert_eq!(
            parse_entry("(256-2047[u]):35072-36863"),
            Some(Entry::Data {
                logical: 256,
                physical: 35072,
                blocks: 1792,
                uninit: true
            })
        );
        assert_eq!(
            parse_entry("(DIND):5412"),
            Some(Entry::Meta {
                kind: Meta::Dind,
                physical: 5412
            })
        );
        assert_eq!(
            parse_entry("(ETB1):36901"),
            Some(Entry::Meta {
                kind: Meta::Etb(1),
                physical: 36901
            })
        );
        assert_eq!(parse_entry("(0-11):4899-4911"), None, "lengths differ");
        assert_eq!(parse_entry("(11-0):1-2"), None);
        assert_eq!(parse_entry("(12"), None);
    }

    #[test]
    fn times_with_epoch_bits() {
        assert_eq!(
            time_value(" 0x6b0cad1d:2b904bc8 -- Sun Nov 29 22:54:21 2026"),
            Some((0x6b0cad1d, Some(0x2b904bc8 >> 2)))
        );
        assert_eq!(
            time_value(" 0x00000001:00000005 -- x"),
            Some((1 + (1 << 32), Some(1)))
        );
        assert_eq!(time_value("0xffffffff -- x"), Some((-1, None)));
    }

    #[test]
    fn meta_rows_take_the_next_data_index() {
        let t = "BLOCKS:\n(0-11):100-111, (IND):112, (12):113\nTOTAL: 14\n";
        let r = parse_stat_report(t, Some(1024)).unwrap();
        let idx: Vec<(u64, &str)> = r.extents.iter().map(|e| (e.index, &*e.flags)).collect();
        assert_eq!(idx, [(0, ""), (1, "metadata,ind"), (1, "last")]);
        assert_eq!(r.extents[1].logical_bytes, 12 * 1024);
        assert_eq!(r.inodes[0].total_blocks, Some(14));
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn ex_rows() {
        let leaf = parse_ex_row(" 2/ 2   1/340     0 -     0  4140 -  4140      1 ").unwrap();
        assert!(leaf.leaf);
        assert_eq!(
            (leaf.level, leaf.max_depth, leaf.entry, leaf.entries),
            (2, 2, 1, 340)
        );
        let node = parse_ex_row(" 0/ 2   1/  1     0 - 27891 36903          27892").unwrap();
        assert!(!node.leaf);
        assert_eq!(
            (node.logical_last, node.physical_first, node.length),
            (27891, 36903, 27892)
        );
        let u = parse_ex_row(" 0/ 0   2/  2   256 -  2047  35072 -  36863   1792 Uninit").unwrap();
        assert!(u.uninit);
        assert!(parse_ex_row(" 0/ 0   2/  2   256 -  2047  35072 -  36863   1793").is_none());
    }
}
