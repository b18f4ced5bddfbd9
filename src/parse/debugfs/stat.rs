//! `debugfs -R "stat PATH"`: the inode header and its `BLOCKS:`/`EXTENTS:` list, one
//! inode after another (see the module docs).

use super::entries::{parse_entry_prefix, push_rows, Entry};
use super::{echo_arg, valid_block_size, warn, InodeStat, StatReport, STAT};
use crate::extent::Extent;
use crate::parse::map::{BlockSizeSource, MapOptions, MapReport, MapRow, Unit};
use crate::parse::{Output, ParseError, Warning};

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
fn num(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
