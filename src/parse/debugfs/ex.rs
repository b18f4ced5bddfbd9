//! `debugfs -R "ex PATH"` (`dump_extents`): the extent tree's table, one file after
//! another (see the module docs).

use super::entries::{digits, push_rows, Entry, Meta};
use super::{echo_arg, valid_block_size, warn, ExFile, ExRow, EX};
use crate::extent::Extent;
use crate::parse::map::{BlockSizeSource, MapOptions, MapReport};
use crate::parse::{Output, ParseError};

/// `ex` → extents with the filesystem block size given.
pub fn parse_ex_with_block_size(text: &str, block_size: u64) -> Result<Output<Extent>, ParseError> {
    let r = parse_ex_map(text, MapOptions::given(block_size))?;
    Ok(Output {
        rows: r.extents(),
        warnings: r.warnings,
        partial: r.partial,
    })
}
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
