//! `filefrag -v` output (e2fsprogs 1.40 to 1.47) → [`MapRow`]s (and [`Extent`]s) and per-file
//! [`FilefragFile`] records.
//!
//! The text may hold any number of files (`filefrag -v a b c`, or `find … | xargs filefrag -v`):
//!
//! ```text
//! Filesystem type is: ef53
//! File size of seq.bin is 10485760 (2560 blocks of 4096 bytes)
//!  ext:     logical_offset:        physical_offset: length:   expected: flags:
//!    0:        0..    2047:      36864..     38911:   2048:
//!    1:     2048..    2559:      39424..     39935:    512:      38912: last,eof
//! seq.bin: 2 extents found
//! ```
//!
//! Units: filefrag prints offsets and lengths in the block size of the `File size of … (B
//! blocks of S bytes)` line (the filesystem block size, or the `-b`/`-k` size); rows become
//! bytes by multiplying by that `S`. Extents flagged `inline` are printed in bytes by
//! filefrag and are kept as printed. Extents flagged `unknown_loc` or `hole` have no
//! physical location (`physical_bytes = None`) and filefrag prints their length as 0: their
//! length is then taken from the logical range (`last - first + 1` blocks).
//!
//! Flags are kept exactly as filefrag prints them, comma-separated: the FIEMAP names
//! (`last`, `unknown_loc`, `delalloc`, `encoded`, `encrypted`, `not_aligned`, `inline`,
//! `tail_packed`, `unwritten`, `merged`, `shared`, `hole`, unknown bits as `0x…`) and
//! filefrag's own `eof` (the extent reaches the file size). Every printed column is kept in
//! the [`MapRow`]s ([`parse_map`]): `ext`, both offset ranges and `length` in filefrag's
//! unit, `expected:` (where filefrag expected the extent if the file were contiguous) and
//! the flags as printed.
//!
//! Older e2fsprogs are read too: 1.41 to 1.42.7 print `File size of X is N (B blocks,
//! blocksize S)` and a table ` ext logical physical expected length flags` of first
//! blocks and lengths (`   1      12  1580102  1580100      2 merged,eof`; the expected
//! column blank when there is none; `unknown` for `unknown_loc`); 1.40 prints `Checking
//! X`, `Blocksize of file X is S` before `File size of X is N (B blocks)`, then `First
//! block:`/`Last block:` and `Discontinuity:` lines but no table, and `Filesystem cylinder
//! groups is approximately N`.
//!
//! `N extents found` is filefrag's count of *discontiguous* pieces, which can be lower than
//! the number of rows: it is kept in [`FilefragFile::extents_found`]. Only decimal output is
//! understood (`-x` hex output gives warnings). FIBMAP fallback `Discontinuity:` lines and
//! error messages merged from stderr become warnings.

use super::map::{BlockSizeSource, MapRow, Unit};
use super::{Output, ParseError, Warning};
use crate::extent::Extent;
use serde::Serialize;

const KIND: &str = "filefrag";

/// One file of a `filefrag` run: the `File size of …` line and the `… extents found` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct FilefragFile {
    /// 0-based number of the file in the text: the join key with its rows.
    pub file: u64,
    /// The path as filefrag printed it (as it was given on its command line).
    pub path: String,
    /// The `Filesystem type is:` magic in effect for this file, lower-case hex (`ef53`).
    pub fs_type: Option<String>,
    /// File size in bytes (`File size of X is N`).
    pub size_bytes: Option<u64>,
    /// The block count printed in `(B blocks of S bytes)`.
    pub blocks: Option<u64>,
    /// The unit `S` of `(B blocks of S bytes)`: the unit of every offset in the table.
    pub block_size: Option<u64>,
    /// `stated` when the `File size of` line gave `block_size`, else `unknown`.
    pub block_size_source: BlockSizeSource,
    /// `N extents found`: filefrag's count of discontiguous pieces.
    pub extents_found: Option<u64>,
    /// `, perfection would be N extents` (FIBMAP on block-mapped files only).
    pub perfection: Option<u64>,
    /// Number of extent rows printed for the file.
    pub rows: u64,
    /// FIBMAP fallback (`-B`, or no FIEMAP): `Blocksize of file X is N`.
    pub fibmap_block_size: Option<u64>,
    /// FIBMAP fallback: `First block: N` and `Last block: N`.
    pub first_block: Option<u64>,
    pub last_block: Option<u64>,
    /// `Filesystem cylinder groups approximately N` (FIBMAP on ext2/3).
    pub cylinder_groups: Option<u64>,
}

/// The integer fields of [`FilefragFile`] (for a typed `files` frame).
pub const FILE_INTS: [&str; 10] = [
    "file",
    "size_bytes",
    "blocks",
    "block_size",
    "extents_found",
    "perfection",
    "rows",
    "fibmap_block_size",
    "first_block",
    "last_block",
];

/// Everything read from one `filefrag` text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// Every row as printed, in the tool's unit and in bytes.
    pub rows: Vec<MapRow>,
    /// The rows as [`Extent`]s (all of them: filefrag always states its unit).
    pub extents: Vec<Extent>,
    pub files: Vec<FilefragFile>,
    pub warnings: Vec<Warning>,
    pub partial: bool,
}

/// Extent rows of every file in the text (the `extents` table).
pub fn parse(text: &str) -> Result<Output<Extent>, ParseError> {
    let r = parse_report(text)?;
    Ok(Output {
        rows: r.extents,
        warnings: r.warnings,
        partial: r.partial,
    })
}

/// One row per file: sizes, block size, filefrag's extent count.
pub fn parse_files(text: &str) -> Result<Output<FilefragFile>, ParseError> {
    let r = parse_report(text)?;
    Ok(Output {
        rows: r.files,
        warnings: r.warnings,
        partial: r.partial,
    })
}

/// File records and every row (the `files` and `extents` tables).
pub fn parse_map(text: &str) -> Result<super::map::MapReport<FilefragFile>, ParseError> {
    let r = parse_report(text)?;
    Ok(super::map::MapReport {
        files: r.files,
        rows: r.rows,
        warnings: r.warnings,
        partial: r.partial,
    })
}

/// Extents and per-file rows in one pass.
pub fn parse_report(text: &str) -> Result<Report, ParseError> {
    let mut p = State::default();
    for (i, raw) in text.lines().enumerate() {
        p.line(i + 1, raw.trim_end_matches('\r'));
    }
    p.finish()
}

#[derive(Default)]
struct State {
    report: Report,
    fs_type: Option<String>,
    /// Index into `report.files` of the file whose table is being read.
    current: Option<usize>,
    /// The current file's path, shared by its rows.
    current_path: std::sync::Arc<str>,
    /// The current file's table is complete (its `extents found` line was seen).
    closed: bool,
    recognised: usize,
    cylinder_groups: Option<u64>,
    /// The current file's table is e2fsprogs 1.41's (` ext logical physical expected
    /// length flags`): its rows are read by [`parse_row_141`].
    table_141: bool,
    /// e2fsprogs 1.40's `Blocksize of file X is N`, printed before `File size of X`.
    pending_block_size: Option<(String, u64)>,
}

impl State {
    fn warn(&mut self, line: usize, text: &str, reason: impl Into<String>) {
        self.report.warnings.push(Warning {
            line,
            text: text.to_string(),
            reason: reason.into(),
        });
    }

    fn line(&mut self, n: usize, line: &str) {
        let t = line.trim_ascii();
        if t.is_empty() {
            return;
        }
        // Extent rows are by far the most common: try them first.
        if t.as_bytes()[0].is_ascii_digit() {
            let row = if self.table_141 {
                parse_row_141(t)
            } else {
                parse_row(t)
            };
            if let Some(row) = row {
                self.recognised += 1;
                self.add_row(n, line, row);
                return;
            }
        }
        if let Some(rest) = t.strip_prefix("Filesystem type is:") {
            self.recognised += 1;
            self.fs_type = Some(rest.trim().to_ascii_lowercase());
            return;
        }
        // `Filesystem cylinder groups approximately N` (1.42 on), `… is approximately N` before.
        if let Some(rest) = t
            .strip_prefix("Filesystem cylinder groups approximately")
            .or_else(|| t.strip_prefix("Filesystem cylinder groups is approximately"))
        {
            self.recognised += 1;
            self.cylinder_groups = rest.trim().parse().ok();
            return;
        }
        if let Some(rest) = t.strip_prefix("Blocksize of file ") {
            if let Some((path, n)) = rest.rsplit_once(" is ") {
                match (n.trim().parse::<u64>(), self.current) {
                    (Ok(v), Some(i)) if !self.closed => {
                        self.recognised += 1;
                        self.report.files[i].fibmap_block_size = Some(v);
                        return;
                    }
                    // e2fsprogs 1.40 prints it before the file's `File size of` line.
                    (Ok(v), _) if v > 0 => {
                        self.recognised += 1;
                        self.pending_block_size = Some((path.to_string(), v));
                        return;
                    }
                    _ => {}
                }
            }
        }
        for (key, first) in [("First block:", true), ("Last block:", false)] {
            if let Some(rest) = t.strip_prefix(key) {
                if let (Ok(v), Some(i)) = (rest.trim().parse::<u64>(), self.current) {
                    self.recognised += 1;
                    let f = &mut self.report.files[i];
                    if first {
                        f.first_block = Some(v);
                    } else {
                        f.last_block = Some(v);
                    }
                    return;
                }
            }
        }
        let v141 = is_header_141(t);
        if v141 || (t.starts_with("ext:") && t.contains("logical_offset")) {
            self.recognised += 1;
            self.table_141 = v141;
            if self.current.is_none() || self.closed {
                self.warn(n, line, "extent table header without a `File size of` line");
            }
            return;
        }
        if let Some(rest) = t.strip_prefix("File size of ") {
            if let Some(mut file) = parse_file_size(rest, self.fs_type.clone()) {
                file.cylinder_groups = self.cylinder_groups;
                if let Some((path, bs)) = self.pending_block_size.take() {
                    if path == file.path {
                        file.fibmap_block_size = Some(bs);
                        if file.block_size.is_none() {
                            // 1.40: `(B blocks)` counts blocks of this size.
                            file.block_size = Some(bs);
                            file.block_size_source = BlockSizeSource::Stated;
                        }
                    }
                }
                self.recognised += 1;
                self.open_file(n, file);
                return;
            }
        }
        if let Some((path, found, perfection)) = parse_found(t) {
            self.recognised += 1;
            self.close_file(n, line, path, found, perfection);
            return;
        }
        // e2fsprogs 1.40 -v names each file it is about to read.
        if t.strip_prefix("Checking ").is_some_and(|p| !p.is_empty())
            && self.current.is_none_or(|_| self.closed)
        {
            self.recognised += 1;
            return;
        }
        if t.starts_with("Discontinuity:") {
            self.warn(
                n,
                line,
                "FIBMAP `Discontinuity:` line (filefrag fell back from FIEMAP); it is not an extent row",
            );
            return;
        }
        self.warn(n, line, "unrecognised line");
    }

    fn open_file(&mut self, n: usize, file: FilefragFile) {
        if let (Some(i), false) = (self.current, self.closed) {
            let path = self.report.files[i].path.clone();
            self.report.warnings.push(Warning {
                line: n,
                text: String::new(),
                reason: format!("no `extents found` line for `{path}` before the next file"),
            });
        }
        self.current_path = file.path.as_str().into();
        let mut file = file;
        file.file = self.report.files.len() as u64;
        self.report.files.push(file);
        self.current = Some(self.report.files.len() - 1);
        self.closed = false;
        self.table_141 = false;
    }

    fn add_row(&mut self, n: usize, line: &str, row: Row<'_>) {
        let Some(i) = self.current.filter(|_| !self.closed) else {
            self.warn(n, line, "extent row outside a file's table");
            return;
        };
        let file = &mut self.report.files[i];
        let (inline, no_location) = flag_kinds(row.flags);
        let (unit, unit_bytes) = if inline {
            (Unit::Byte, Some(1))
        } else {
            (Unit::Block, file.block_size)
        };
        let mut r = MapRow {
            file: file.file,
            path: std::sync::Arc::clone(&self.current_path),
            index: row.index,
            flags: crate::extent::flags(row.flags),
            unit,
            unit_bytes,
            ext: Some(row.index),
            logical_start: Some(row.logical_first),
            logical_end: Some(row.logical_last),
            physical_start: Some(row.physical_first),
            physical_end: Some(row.physical_last),
            length: Some(row.length),
            expected: row.expected,
            tool_flags: (!row.flags.is_empty()).then(|| row.flags.to_string()),
            ..Default::default()
        };
        r.fill_bytes(!no_location);
        if unit_bytes.is_some() && (r.logical_bytes.is_none() || r.length_bytes.is_none()) {
            self.warn(n, line, "offsets overflow 64 bits in bytes");
            return;
        }
        file.rows += 1;
        self.report.rows.push(r);
    }

    fn close_file(
        &mut self,
        n: usize,
        line: &str,
        path: &str,
        found: u64,
        perfection: Option<u64>,
    ) {
        match self.current {
            Some(i) if !self.closed && self.report.files[i].path == path => {
                let f = &mut self.report.files[i];
                f.extents_found = Some(found);
                f.perfection = perfection;
                self.closed = true;
            }
            Some(i) if !self.closed => {
                let expected = self.report.files[i].path.clone();
                self.warn(
                    n,
                    line,
                    format!("`extents found` line for `{path}` while reading `{expected}`"),
                );
            }
            _ => {
                // Plain `filefrag` (without -v) prints only this line per file.
                self.report.files.push(FilefragFile {
                    file: self.report.files.len() as u64,
                    path: path.to_string(),
                    fs_type: self.fs_type.clone(),
                    extents_found: Some(found),
                    perfection,
                    ..Default::default()
                });
                self.current = Some(self.report.files.len() - 1);
                self.closed = true;
            }
        }
    }

    fn finish(mut self) -> Result<Report, ParseError> {
        if self.recognised == 0 {
            return Err(ParseError::NothingRecognised {
                kind: KIND,
                expected: "`File size of …` lines, extent rows, `… extents found`",
            });
        }
        self.report.extents = super::map::to_extents(&self.report.rows);
        if let (Some(i), false) = (self.current, self.closed) {
            let path = self.report.files[i].path.clone();
            self.report.partial = true;
            self.report.warnings.push(Warning {
                line: 0,
                text: String::new(),
                reason: format!(
                    "input ends inside the table of `{path}` (no `extents found` line): truncated"
                ),
            });
        }
        Ok(self.report)
    }
}

/// `X is N (B blocks of S bytes)` with an optional ` -- pre-cached` tail (1.42.8 on);
/// `X is N (B blocks, blocksize S)` (1.41 to 1.42.7); `X is N (B blocks)` (1.40, whose
/// block size is on the `Blocksize of file` line before it).
fn parse_file_size(rest: &str, fs_type: Option<String>) -> Option<FilefragFile> {
    let rest = rest.strip_suffix(" -- pre-cached").unwrap_or(rest);
    let (path, tail) = rest.rsplit_once(" is ")?;
    let (size, paren) = tail.split_once(" (")?;
    let inner = paren.strip_suffix(')')?;
    let (blocks, unit) = inner.split_once(' ')?;
    let unit = unit
        .strip_prefix("blocks")
        .or_else(|| unit.strip_prefix("block"))?;
    let block_size = if unit.is_empty() {
        None
    } else {
        let s = unit
            .strip_prefix(" of ")
            .and_then(|u| u.strip_suffix(" bytes"))
            .or_else(|| unit.strip_prefix(", blocksize "))?;
        let block_size: u64 = s.parse().ok()?;
        if block_size == 0 {
            return None;
        }
        Some(block_size)
    };
    Some(FilefragFile {
        path: path.to_string(),
        fs_type,
        size_bytes: Some(size.parse().ok()?),
        blocks: Some(blocks.parse().ok()?),
        block_size,
        block_size_source: if block_size.is_some() {
            BlockSizeSource::Stated
        } else {
            BlockSizeSource::Unknown
        },
        ..Default::default()
    })
}

/// e2fsprogs 1.41's table header: ` ext logical physical expected length flags`.
fn is_header_141(t: &str) -> bool {
    let w: Vec<&str> = t.split_whitespace().collect();
    w == ["ext", "logical", "physical", "expected", "length", "flags"]
}

/// A row of e2fsprogs 1.41's table: `%4d %*llu %*llu %*llu %6lu %s`, the expected column
/// blank (`%*s`) when filefrag expected nothing: `ext logical physical [expected] length
/// [flags]`. Flags are names, never numbers, so four numbers are without `expected` and
/// five are with it. The table prints first blocks and lengths only: the last block of
/// each range is `first + length - 1` (a length of 0 leaves the range at its first block).
fn parse_row_141(t: &str) -> Option<Row<'_>> {
    let base = t.as_ptr() as usize;
    let toks: Vec<&str> = t.split_ascii_whitespace().collect();
    let numbers = toks
        .iter()
        .take_while(|w| w.bytes().all(|b| b.is_ascii_digit()))
        .count();
    let num = |i: usize| toks.get(i).and_then(|w| w.parse::<u64>().ok());
    let (expected, length) = match numbers {
        4 => (None, num(3)?),
        5 => (Some(num(3)?), num(4)?),
        _ => return None,
    };
    let flags = match toks.get(numbers) {
        Some(first) => t.get(first.as_ptr() as usize - base..)?.trim_ascii(),
        None => "",
    };
    if flags.contains([':', ' ']) {
        return None;
    }
    let logical_first = num(1)?;
    let physical_first = num(2)?;
    let span = length.saturating_sub(1);
    Some(Row {
        index: num(0)?,
        logical_first,
        logical_last: logical_first.checked_add(span)?,
        physical_first,
        physical_last: physical_first.checked_add(span)?,
        length,
        expected,
        flags,
    })
}

/// `X: N extents found`, `X: 1 extent found`, optionally `, perfection would be M extents`.
fn parse_found(t: &str) -> Option<(&str, u64, Option<u64>)> {
    let (head, perfection) = match t.split_once(" found, perfection would be ") {
        Some((head, tail)) => {
            let m = tail
                .strip_suffix(" extents")
                .or_else(|| tail.strip_suffix(" extent"))?;
            (head, Some(m.parse().ok()?))
        }
        None => (t.strip_suffix(" found")?, None),
    };
    let head = head
        .strip_suffix(" extents")
        .or_else(|| head.strip_suffix(" extent"))?;
    let (path, n) = head.rsplit_once(": ")?;
    Some((path, n.parse().ok()?, perfection))
}

struct Row<'a> {
    index: u64,
    logical_first: u64,
    logical_last: u64,
    physical_first: u64,
    physical_last: u64,
    length: u64,
    expected: Option<u64>,
    flags: &'a str,
}

/// A byte cursor over one line (the row format is ASCII; flags are returned as `&str`).
struct Cur<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cur<'a> {
    fn spaces(&mut self) {
        let b = self.s.as_bytes();
        while self.i < b.len() && b[self.i] == b' ' {
            self.i += 1;
        }
    }

    /// Spaces, then a decimal number.
    fn num(&mut self) -> Option<u64> {
        self.spaces();
        let b = self.s.as_bytes();
        let start = self.i;
        let mut v: u64 = 0;
        while self.i < b.len() && b[self.i].is_ascii_digit() {
            v = v
                .checked_mul(10)?
                .checked_add(u64::from(b[self.i] - b'0'))?;
            self.i += 1;
        }
        (self.i > start).then_some(v)
    }

    fn lit(&mut self, c: u8) -> Option<()> {
        (self.s.as_bytes().get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn rest(&self) -> &'a str {
        self.s.get(self.i..).unwrap_or("").trim_ascii()
    }
}

/// `%4d: %*llu..%*llu: %*llu..%*llu: %6llu: [expected: ]flags`
fn parse_row(t: &str) -> Option<Row<'_>> {
    let mut c = Cur { s: t, i: 0 };
    let index = c.num()?;
    c.lit(b':')?;
    let logical_first = c.num()?;
    c.lit(b'.')?;
    c.lit(b'.')?;
    let logical_last = c.num()?;
    c.lit(b':')?;
    let physical_first = c.num()?;
    c.lit(b'.')?;
    c.lit(b'.')?;
    let physical_last = c.num()?;
    c.lit(b':')?;
    let length = c.num()?;
    c.lit(b':')?;
    // An `expected` column is a number followed by `:`; flags never contain `:`.
    let mut e = Cur { s: t, i: c.i };
    let (expected, flags) = match e.num().and_then(|v| e.lit(b':').map(|()| v)) {
        Some(v) => (Some(v), e.rest()),
        None => (None, c.rest()),
    };
    if flags.contains(':') {
        return None;
    }
    Some(Row {
        index,
        logical_first,
        logical_last,
        physical_first,
        physical_last,
        length,
        expected,
        flags,
    })
}

/// Scan a flag list once: (inline, no physical location).
fn flag_kinds(flags: &str) -> (bool, bool) {
    if flags.is_empty() {
        return (false, false);
    }
    let mut inline = false;
    let mut no_location = false;
    for f in flags.split(',') {
        match f {
            "inline" => inline = true,
            // `unknown` is 1.41's name for FIEMAP_EXTENT_UNKNOWN.
            "unknown_loc" | "unknown" | "hole" => no_location = true,
            _ => {}
        }
    }
    (inline, no_location)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "Filesystem type is: ef53
File size of seq.bin is 10485760 (2560 blocks of 4096 bytes)
 ext:     logical_offset:        physical_offset: length:   expected: flags:
   0:        0..    2047:      36864..     38911:   2048:            
   1:     2048..    2559:      39424..     39935:    512:      38912: last,eof
seq.bin: 2 extents found
File size of empty.txt is 0 (0 blocks of 4096 bytes)
empty.txt: 0 extents found
";

    #[test]
    fn rows_in_bytes_and_files() {
        let r = parse_report(TWO).unwrap();
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert!(!r.partial);
        assert_eq!(r.extents.len(), 2);
        let e = &r.extents[1];
        assert_eq!(&*e.path, "seq.bin");
        assert_eq!(e.index, 1);
        assert_eq!(e.logical_bytes, 2048 * 4096);
        assert_eq!(e.physical_bytes, Some(39424 * 4096));
        assert_eq!(e.length_bytes, 512 * 4096);
        assert_eq!(e.flags, "last,eof");
        assert_eq!(r.extents[0].flags, "");
        assert_eq!(r.files.len(), 2);
        assert_eq!(r.files[0].extents_found, Some(2));
        assert_eq!(r.files[0].fs_type.as_deref(), Some("ef53"));
        assert_eq!(r.files[1].size_bytes, Some(0));
        assert_eq!(r.files[1].rows, 0);
    }

    #[test]
    fn truncated_table_is_partial() {
        let cut = &TWO[..TWO.find("   1:").unwrap()];
        let r = parse_report(cut).unwrap();
        assert!(r.partial);
        assert_eq!(r.extents.len(), 1);
    }

    #[test]
    fn found_line_variants() {
        assert_eq!(parse_found("a b: 1 extent found"), Some(("a b", 1, None)));
        assert_eq!(
            parse_found("x: 5 extents found, perfection would be 2 extents"),
            Some(("x", 5, Some(2)))
        );
        assert_eq!(parse_found("x: y extents found"), None);
    }

    #[test]
    fn delalloc_length_from_logical_range() {
        let t = "File size of d is 262144 (64 blocks of 4096 bytes)
   0:        0..      63:          0..         0:      0:             last,unknown_loc,delalloc,eof
d: 1 extent found
";
        let r = parse_report(t).unwrap();
        assert_eq!(r.extents[0].physical_bytes, None);
        assert_eq!(r.extents[0].length_bytes, 64 * 4096);
    }

    #[test]
    fn garbage_is_an_error_and_stray_lines_warn() {
        assert!(parse("").is_err());
        assert!(parse("hello\nworld\n").is_err());
        let t = format!("{TWO}open: No such file or directory\n");
        let r = parse(&t).unwrap();
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].line, 9);
    }
}
