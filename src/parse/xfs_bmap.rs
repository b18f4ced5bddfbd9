//! Block maps as `xfs_bmap` and `xfs_io -c "fiemap"` print them, into [`MapRow`]s and one
//! [`BmapFile`] per file:
//!
//! ```text
//! mnt/holes:
//!  EXT: FILE-OFFSET      BLOCK-RANGE      AG AG-OFFSET        TOTAL FLAGS
//!    0: [0..127]:        448..575          0 (448..575)         128 000000
//!    1: [128..2047]:     hole                                  1920
//!    4: [4096..4351]:    192..447          0 (192..447)         256 010000
//! ```
//!
//! Both tools count in 512-byte units whatever the filesystem block size: offsets,
//! block numbers and lengths are multiplied by 512, and ranges are inclusive
//! (`[0..127]` is 128 units, 65536 bytes). Every listing form is read: plain
//! (`0: [0..127]: 448..575`), `-l` (`… 128 blocks`), `-v` (AG columns for xfs_bmap,
//! a TOTAL column), `-vp` / `fiemap -v` (a FLAGS column), several files in one text (a
//! `path:` line starts each; `path: no extents` is a file without any).
//!
//! * Holes are rows flagged `hole` in the [`MapRow`]s ([`parse_bmap_report`],
//!   [`parse_fiemap_report`]), with the AG columns of `-v`, `EXT` as `ext` and the
//!   printed columns in basic blocks; [`parse_bmap`] / [`parse_fiemap`] give the data rows
//!   as [`Extent`]s (FIEMAP does not report holes either). `index` counts the data rows of
//!   a file from 0, so it can differ from the `EXT` number the tool prints.
//! * `delalloc` (xfs_bmap `-e`, data not yet allocated) gives a row with
//!   `physical_bytes` None and flag `delalloc`.
//! * Flags are FIEMAP names, lower case, comma-separated. `fiemap -v` prints the
//!   FIEMAP flag word in hex, named by [`fiemap_flag_names`]. `xfs_bmap -vp` prints its
//!   own octal flags: `0100000` → `shared`, `0010000` → `unwritten`, and the stripe
//!   alignment bits `0001000`, `0000100`, `0000010`, `0000001` → `unaligned_su_start`,
//!   `unaligned_su_end`, `unaligned_sw_start`, `unaligned_sw_end`.
//! * `inode` is None: neither tool prints it.
//! * The `FLAG Values:` legend of `xfs_bmap -vv` is skipped. A TOTAL that disagrees
//!   with the ranges, a jump in the printed extent numbers (lines cut out of a mail) and
//!   any other line are warnings. A last line that starts like an extent but cannot be
//!   read (a cut-off paste) makes the result partial. Text with no `path:` line and no
//!   extent (`foreign file active, bmap command is for XFS filesystems only`) is an error
//!   quoting the tool.

use super::map::{BlockSizeSource, MapReport, MapRow, Unit};
use super::text::{numbered, parse_hex, parse_u64, warning};
use super::{Output, ParseError};
use crate::extent::Extent;
use serde::Serialize;

/// One file of an `xfs_bmap` / `xfs_io fiemap` listing (its `path:` line and its rows).
/// The totals are sums over the rows (the tools print no file total), in 512-byte basic
/// blocks like the rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct BmapFile {
    /// 0-based number of the file in the text: the join key with its rows.
    pub file: u64,
    /// The path as printed on the `path:` line.
    pub path: String,
    /// Always 512: both tools count in basic blocks.
    pub block_size: Option<u64>,
    /// `stated` (the tools document their 512-byte unit).
    pub block_size_source: BlockSizeSource,
    /// `path: no extents` was printed.
    pub no_extents: bool,
    /// Rows printed (extents and holes).
    pub rows: u64,
    /// Rows that map data (not holes; delalloc rows included).
    pub data_rows: u64,
    /// Rows printed as `hole`.
    pub holes: u64,
    /// Sum of the data rows' lengths (TOTAL column or range), basic blocks.
    pub total: u64,
    /// The same in bytes.
    pub total_bytes: Option<u64>,
    /// Sum of the holes' lengths, basic blocks.
    pub hole_total: u64,
    /// One past the last logical basic block listed (the mapped range's end).
    pub end: Option<u64>,
    /// Number of distinct allocation groups the data rows are in (xfs_bmap -v only).
    pub ags: Option<u64>,
}

/// The integer fields of [`BmapFile`] (for a typed `files` frame).
pub const FILE_INTS: [&str; 10] = [
    "file",
    "block_size",
    "rows",
    "data_rows",
    "holes",
    "total",
    "total_bytes",
    "hole_total",
    "end",
    "ags",
];

/// Parse `xfs_bmap` output (any of `-v`, `-vp`, `-vv`, `-l`, `-e`) into extents (holes
/// left out).
pub fn parse_bmap(text: &str) -> Result<Output<Extent>, ParseError> {
    legacy(parse_map(text, Tool::Bmap)?)
}

/// Parse `xfs_io -c "fiemap [-v] [-l]"` output into extents (holes left out).
pub fn parse_fiemap(text: &str) -> Result<Output<Extent>, ParseError> {
    legacy(parse_map(text, Tool::Fiemap)?)
}

/// `xfs_bmap` output → file records and every row (holes included).
pub fn parse_bmap_report(text: &str) -> Result<MapReport<BmapFile>, ParseError> {
    parse_map(text, Tool::Bmap)
}

/// `xfs_io -c "fiemap"` output → file records and every row (holes included).
pub fn parse_fiemap_report(text: &str) -> Result<MapReport<BmapFile>, ParseError> {
    parse_map(text, Tool::Fiemap)
}

fn legacy(r: MapReport<BmapFile>) -> Result<Output<Extent>, ParseError> {
    Ok(Output {
        rows: r.extents(),
        warnings: r.warnings,
        partial: r.partial,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Bmap,
    Fiemap,
}

impl Tool {
    fn kind(self) -> &'static str {
        match self {
            Tool::Bmap => "xfs_bmap",
            Tool::Fiemap => "xfs_io-fiemap",
        }
    }
}

const SECTOR: u64 = 512;

/// FIEMAP extent flags (`linux/fiemap.h`) by bit, named without the
/// `FIEMAP_EXTENT_` prefix, in lower case.
pub const FIEMAP_FLAGS: [(u32, &str); 11] = [
    (0x0001, "last"),
    (0x0002, "unknown"),
    (0x0004, "delalloc"),
    (0x0008, "encoded"),
    (0x0080, "data_encrypted"),
    (0x0100, "not_aligned"),
    (0x0200, "data_inline"),
    (0x0400, "data_tail"),
    (0x0800, "unwritten"),
    (0x1000, "merged"),
    (0x2000, "shared"),
];

/// Names of the bits set in a FIEMAP flag word, comma-separated, in bit order. Bits
/// without a name come out as `0x4000`.
pub fn fiemap_flag_names(flags: u32) -> String {
    let mut names: Vec<String> = Vec::new();
    for bit in 0..32 {
        let b = 1u32 << bit;
        if flags & b == 0 {
            continue;
        }
        match FIEMAP_FLAGS.iter().find(|(v, _)| *v == b) {
            Some((_, name)) => names.push((*name).to_string()),
            None => names.push(format!("{b:#x}")),
        }
    }
    names.join(",")
}

const BMAP_FLAGS: [(u32, &str); 6] = [
    (0o100000, "shared"),
    (0o010000, "unwritten"),
    (0o001000, "unaligned_su_start"),
    (0o000100, "unaligned_su_end"),
    (0o000010, "unaligned_sw_start"),
    (0o000001, "unaligned_sw_end"),
];

fn bmap_flag_names(flags: u32) -> Option<String> {
    let known: u32 = BMAP_FLAGS.iter().map(|(b, _)| b).sum();
    if flags & !known != 0 {
        return None;
    }
    Some(
        BMAP_FLAGS
            .iter()
            .filter(|(b, _)| flags & b != 0)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(","),
    )
}

struct Line {
    number: u64,
    logical: (u64, u64),
    physical: Physical,
    /// AG and AG-OFFSET range (xfs_bmap -v).
    ag: Option<(u64, (u64, u64))>,
    total: Option<u64>,
    flags: String,
}

enum Physical {
    Range(u64, u64),
    Hole,
    Delalloc,
}

fn parse_map(text: &str, tool: Tool) -> Result<MapReport<BmapFile>, ParseError> {
    let mut out: MapReport<BmapFile> = MapReport::default();
    let mut path: Option<std::sync::Arc<str>> = None;
    let mut index = 0u64;
    let mut last_number: Option<u64> = None;
    let mut in_legend = false;
    let mut first_text: Option<(usize, &str)> = None;
    let mut last_failed_extent = false;

    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if first_text.is_none() {
            first_text = Some((n, t));
        }
        last_failed_extent = false;
        if in_legend {
            let mut w = t.split_whitespace();
            let is_legend = w
                .next()
                .is_some_and(|f| f.len() > 1 && f.bytes().all(|b| (b'0'..=b'7').contains(&b)));
            if is_legend {
                continue;
            }
            in_legend = false;
        }
        if t == "FLAG Values:" {
            in_legend = true;
            continue;
        }
        if t.starts_with("EXT:") {
            continue;
        }
        if let Some(ext) = extent_line(t) {
            let p = match ext {
                Ok(p) => p,
                Err(LineError::ShorterThanAUnit(number)) => {
                    // A whole line, not a cut one: the extent is only not in the rows.
                    out.warnings.push(warning(
                        n,
                        line,
                        LineError::ShorterThanAUnit(number).to_string(),
                    ));
                    last_number = Some(number);
                    continue;
                }
                Err(reason) => {
                    out.warnings.push(warning(n, line, reason.to_string()));
                    last_failed_extent = true;
                    continue;
                }
            };
            if let Some(prev) = last_number {
                if prev.checked_add(1) != Some(p.number) {
                    out.warnings.push(warning(
                        n,
                        line,
                        format!("extent numbers jump from {prev} to {}", p.number),
                    ));
                }
            } else if p.number != 0 {
                out.warnings.push(warning(
                    n,
                    line,
                    format!("first extent is number {}, not 0", p.number),
                ));
            }
            last_number = Some(p.number);
            let units = (p.logical.1 - p.logical.0).saturating_add(1);
            if p.total.is_some_and(|t| t != units) {
                out.warnings.push(warning(
                    n,
                    line,
                    format!("TOTAL disagrees with the file range ({units} units)"),
                ));
            }
            let flags = match (tool, p.flags.as_str()) {
                (_, "") => String::new(),
                (Tool::Fiemap, f) => match parse_hex(f).and_then(|v| u32::try_from(v).ok()) {
                    Some(v) => fiemap_flag_names(v),
                    None => {
                        out.warnings
                            .push(warning(n, line, format!("flags `{f}` are not hex")));
                        String::new()
                    }
                },
                (Tool::Bmap, f) => match u32::from_str_radix(f, 8).ok().and_then(bmap_flag_names) {
                    Some(names) => names,
                    None => {
                        out.warnings.push(warning(
                            n,
                            line,
                            format!("flags `{f}` are not xfs_bmap's octal flags"),
                        ));
                        String::new()
                    }
                },
            };
            if out.files.is_empty() {
                // Rows without a `path:` line (a listing pasted without its first line).
                out.files.push(BmapFile {
                    block_size: Some(SECTOR),
                    block_size_source: BlockSizeSource::Stated,
                    ..Default::default()
                });
            }
            let file_no = out.files.len() as u64 - 1;
            let mut row = MapRow {
                file: file_no,
                path: path.clone().unwrap_or_else(|| "".into()),
                index,
                unit: Unit::BasicBlock,
                unit_bytes: Some(SECTOR),
                ext: Some(p.number),
                logical_start: Some(p.logical.0),
                logical_end: Some(p.logical.1),
                length: Some(p.total.unwrap_or(units)),
                ag: p.ag.map(|a| a.0),
                ag_offset_start: p.ag.map(|a| a.1 .0),
                ag_offset_end: p.ag.map(|a| a.1 .1),
                tool_flags: (!p.flags.is_empty()).then(|| p.flags.clone()),
                ..Default::default()
            };
            let located = match p.physical {
                Physical::Hole => {
                    row.flags = crate::extent::flags(&join_flags("hole", &flags));
                    false
                }
                Physical::Delalloc => {
                    row.flags = crate::extent::flags(&join_flags("delalloc", &flags));
                    false
                }
                Physical::Range(a, b) => {
                    if b - a != p.logical.1 - p.logical.0 {
                        out.warnings.push(warning(
                            n,
                            line,
                            "block range and file range differ in length",
                        ));
                    }
                    row.physical_start = Some(a);
                    row.physical_end = Some(b);
                    row.flags = crate::extent::flags(&flags);
                    true
                }
            };
            row.fill_bytes(located);
            // Lengths as before: the range, even when a TOTAL disagrees (warned above).
            row.length_bytes = Some(units.saturating_mul(SECTOR));
            row.logical_bytes = Some(p.logical.0.saturating_mul(SECTOR));
            if located {
                row.physical_bytes = row.physical_start.and_then(|a| a.checked_mul(SECTOR));
            }
            let f = out.files.last_mut().expect("a file");
            f.rows += 1;
            f.end = Some(p.logical.1.saturating_add(1));
            if matches!(p.physical, Physical::Hole) {
                f.holes += 1;
                f.hole_total = f.hole_total.saturating_add(units);
            } else {
                f.data_rows += 1;
                f.total = f.total.saturating_add(units);
                index += 1;
            }
            out.rows.push(row);
            continue;
        }
        match path_line(line) {
            Some((p, none)) => {
                path = Some(p.into());
                index = 0;
                last_number = None;
                out.files.push(BmapFile {
                    file: out.files.len() as u64,
                    path: p.to_string(),
                    block_size: Some(SECTOR),
                    block_size_source: BlockSizeSource::Stated,
                    no_extents: none,
                    ..Default::default()
                });
            }
            None => out.warnings.push(warning(
                n,
                line,
                format!("not a line of {} output", tool.kind()),
            )),
        }
    }
    if out.rows.is_empty() && out.files.is_empty() {
        return Err(match first_text {
            None => ParseError::NothingRecognised {
                kind: tool.kind(),
                expected: "a `path:` line and `N: [a..b]: c..d` extent lines",
            },
            Some((line, text)) => ParseError::Malformed {
                kind: tool.kind(),
                line,
                message: format!("no file or extent lines; the tool printed: {text}"),
            },
        });
    }
    for f in &mut out.files {
        f.total_bytes = f.total.checked_mul(SECTOR);
    }
    // Allocation groups per file (xfs_bmap -v).
    for f in &mut out.files {
        let mut ags: Vec<u64> = out
            .rows
            .iter()
            .filter(|r| r.file == f.file)
            .filter_map(|r| r.ag)
            .collect();
        if !ags.is_empty() {
            ags.sort_unstable();
            ags.dedup();
            f.ags = Some(ags.len() as u64);
        }
    }
    out.partial = last_failed_extent;
    Ok(out)
}

fn join_flags(first: &str, rest: &str) -> String {
    if rest.is_empty() {
        first.to_string()
    } else {
        format!("{first},{rest}")
    }
}

/// `mnt/holes:` or `mnt/empty: no extents` (a path line starts in column 0): the path
/// and whether it has no extents.
fn path_line(line: &str) -> Option<(&str, bool)> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let t = line.trim_end();
    if let Some(p) = t.strip_suffix(": no extents") {
        return Some((p, true));
    }
    let p = t.strip_suffix(':')?;
    (!p.is_empty()).then_some((p, false))
}

fn range(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once("..")?;
    let (a, b) = (parse_u64(a)?, parse_u64(b)?);
    (a <= b).then_some((a, b))
}

/// `[a..b]: c..d` of an extent shorter than a basic block: xfs_io's ends
/// `(start + length) / 512 - 1` are one below the starts (wrapping to u64::MAX at 0), and
/// its TOTAL, when printed, is 0.
fn sub_unit(logical: &str, tokens: &[&str]) -> bool {
    let below = |s: &str| {
        s.split_once("..")
            .and_then(|(a, b)| Some((parse_u64(a)?, parse_u64(b)?)))
            .is_some_and(|(a, b)| b == a.wrapping_sub(1))
    };
    let Some((physical, mut rest)) = tokens.split_first() else {
        return false;
    };
    // xfs_bmap -v: AG and (AG-OFFSET) before TOTAL.
    if rest.get(1).is_some_and(|t| t.starts_with('(')) {
        rest = &rest[2..];
    }
    below(logical) && below(physical) && rest.first().is_none_or(|total| *total == "0")
}

/// What an extent line of xfs_bmap lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum LineError {
    #[error("no `[a..b]:` file range")]
    NoFileRange,
    #[error("bad file range `[{0}]`")]
    BadFileRange(String),
    #[error("bad block range `{0}`")]
    BadBlockRange(String),
    #[error("no block range")]
    NoBlockRange,
    #[error("bad AG columns")]
    BadAgColumns,
    #[error("bad TOTAL `{0}`")]
    BadTotal(String),
    #[error("extra columns")]
    ExtraColumns,
    /// xfs_io prints an extent's ends as `(offset + length) / 512 - 1`: an extent shorter
    /// than 512 bytes (ext4 inline data, FIEMAP flag 0x200) comes out as
    /// `[0..18446744073709551615]: 590..589 0`. Its length is not in the text.
    #[error(
        "extent {0} is shorter than one 512-byte unit (its ends wrapped below its starts); its length is not printed"
    )]
    ShorterThanAUnit(u64),
}

/// `N: [a..b]: REST`. None when the line does not start like an extent line;
/// Some(Err) when it does but the rest cannot be read.
fn extent_line(t: &str) -> Option<Result<Line, LineError>> {
    let (num, rest) = t.split_once(':')?;
    let number = parse_u64(num.trim())?;
    let rest = rest.trim_start();
    if !rest.starts_with('[') {
        return None;
    }
    Some(extent_rest(number, rest))
}

fn extent_rest(number: u64, rest: &str) -> Result<Line, LineError> {
    let (logical, rest) = rest
        .strip_prefix('[')
        .and_then(|r| r.split_once("]:"))
        .ok_or(LineError::NoFileRange)?;
    let mut tok = rest.split_whitespace();
    if sub_unit(logical, &tok.clone().collect::<Vec<_>>()) {
        return Err(LineError::ShorterThanAUnit(number));
    }
    let logical = range(logical).ok_or_else(|| LineError::BadFileRange(logical.to_string()))?;
    let physical = match tok.next() {
        Some("hole") => Physical::Hole,
        Some("delalloc") => Physical::Delalloc,
        Some(r) => {
            let (a, b) = range(r).ok_or_else(|| LineError::BadBlockRange(r.to_string()))?;
            Physical::Range(a, b)
        }
        None => return Err(LineError::NoBlockRange),
    };
    let mut rest: Vec<&str> = tok.collect();
    // xfs_bmap -v: AG and (AG-OFFSET) come before TOTAL.
    let mut ag = None;
    if rest.get(1).is_some_and(|t| t.starts_with('(')) {
        let n = rest.first().and_then(|a| parse_u64(a));
        let off = rest
            .get(1)
            .and_then(|o| o.strip_prefix('(')?.strip_suffix(')'))
            .and_then(range);
        match (n, off) {
            (Some(n), Some(off)) => ag = Some((n, off)),
            _ => return Err(LineError::BadAgColumns),
        }
        rest.drain(..2);
    }
    // `-l`: `128 blocks`
    if rest.last() == Some(&"blocks") {
        rest.pop();
    }
    let total = match rest.first() {
        Some(t) => Some(parse_u64(t).ok_or_else(|| LineError::BadTotal(t.to_string()))?),
        None => None,
    };
    let flags = match rest.as_slice() {
        [] | [_] => String::new(),
        [_, f] => (*f).to_string(),
        _ => return Err(LineError::ExtraColumns),
    };
    Ok(Line {
        number,
        logical,
        physical,
        ag,
        total,
        flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_names() {
        assert_eq!(fiemap_flag_names(0x801), "last,unwritten");
        assert_eq!(fiemap_flag_names(0x4000), "0x4000");
        assert_eq!(bmap_flag_names(0o010000).as_deref(), Some("unwritten"));
        assert_eq!(bmap_flag_names(0o200000), None);
    }

    #[test]
    fn cut_paste_is_partial_and_jumps_warn() {
        let out =
            parse_fiemap("f:\n 0: [0..7]: 8..15 8 0x0\n 5: [40..47]: 80..87 8 0x1\n 6: [48..5")
                .unwrap();
        assert_eq!(out.rows.len(), 2);
        assert!(out.partial);
        assert_eq!(out.warnings.len(), 2, "{:?}", out.warnings);
        assert_eq!(out.rows[1].flags, "last");
        assert_eq!(out.rows[1].physical_bytes, Some(80 * 512));
    }

    #[test]
    fn huge_numbers_do_not_overflow() {
        let max = u64::MAX;
        let out = parse_bmap(&format!("f:\n 0: [0..{max}]: 0..{max} {max}\n")).unwrap();
        assert_eq!(out.rows[0].length_bytes, u64::MAX);
        assert_eq!(out.rows[0].physical_bytes, Some(0));
    }

    #[test]
    fn not_xfs() {
        let e = parse_bmap("foreign file active, bmap command is for XFS filesystems only\n")
            .unwrap_err();
        assert!(e.to_string().contains("foreign file"), "{e}");
    }
}
