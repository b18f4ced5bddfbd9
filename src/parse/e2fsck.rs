//! `e2fsck` statistics (`-t`, `-tt`) and its summary line, one [`E2fsckRow`] per
//! pass, peak, summary and total:
//!
//! ```text
//! Pass 1: Checking inodes, blocks, and sizes
//! Pass 1: Memory used: 224k/0k (88k/137k), time:  0.00/ 0.00/ 0.00
//! Pass 1: I/O read: 2MB, write: 0MB, rate: 944.29MB/s
//! …
//! Peak memory: Memory used: 224k/0k (109k/116k), time:  0.01/ 0.00/ 0.00
//! /dev/loop0: 213/131072 files (0.5% non-contiguous), 31477/524288 blocks
//! Memory used: 224k/0k (68k/157k), time:  0.01/ 0.01/ 0.00
//! I/O read: 2MB, write: 0MB, rate: 177.68MB/s
//! ```
//!
//! * `kind` `pass`: the `Pass N: <name>` line and that pass's `Memory used` / `I/O`
//!   lines (`-tt`) merged into one row. Passes are `1`…`5` plus e2fsck's sub-passes
//!   (`1B`…`1E`, `3A`); a sub-pass that only prints statistics has no `name`. e2fsck
//!   prints the statistics of 1B–1D as `Pass 1b:` … `Pass 1d:`: they join `1B` … `1D`.
//!   After `Restarting e2fsck from the beginning...` the passes start new rows.
//! * `kind` `peak`: `Peak memory: Memory used: …`.
//! * `kind` `summary`: `DEV: USED/TOTAL files (P% non-contiguous), USED/TOTAL blocks`,
//!   or `DEV: clean, USED/TOTAL files, USED/TOTAL blocks` (then `clean` is true and the
//!   non-contiguous share is unknown). Status banners printed before it
//!   (`***** FILE SYSTEM WAS MODIFIED *****`, `WARNING: Filesystem still has errors`)
//!   go into its `status`.
//!   With `-v` e2fsck prints its statistics block instead of that line; the block is the
//!   `summary` row (no `device`, since the block does not name it):
//!   `352 inodes used (29.53%, out of 1192)` gives `files_used` / `files_total`,
//!   `778 blocks used (65.38%, out of 1190)` `blocks_used` / `blocks_total` (e2fsck
//!   before 1.42 prints no `out of N`: the totals stay None), and the
//!   `non-contiguous files` / `directories` counts `noncontiguous_files` /
//!   `noncontiguous_dirs`. The block's other lines (indirect-block and extent-depth
//!   histograms, bad blocks, large files, counts by file type, the `----` rule and the
//!   `N files` total) are inventory, not check statistics: they are recognised and
//!   kept out of the warnings, and give no column.
//! * `kind` `total`: the `Memory used` and `I/O` lines without a prefix (`-t`).
//!
//! Memory is in KiB as e2fsck prints it: `224k/0k (88k/137k)` is malloc arena / mmap
//! (in use / free); builds without mallinfo (and e2fsck ≥ 1.45.6 past 2 GiB) print one
//! figure, `1234k`, kept in `memory_kib`. Before 1.45.6 such builds printed that figure
//! in bytes without a unit (`Memory used: 1263616, time: …`, e2fsck/util.c): it is kept
//! in `memory_bytes`, never converted. Times are real/user/sys seconds (`elapsed
//! time:` builds give only `real_s`). I/O is in MiB and MiB/s.
//!
//! The problems e2fsck reports (`Entry 'f7' in /d (12) has deleted/unused inode…`,
//! `Fix? no`) are not statistics: each is a warning with its line number. Output that
//! started passes but has no summary line, or has per-pass statistics but no total, is
//! returned with `partial = true`. Text with none of these lines is an error quoting
//! what e2fsck printed (`e2fsck: No such file or directory while trying to open …`).

use super::text::{numbered, parse_f64, parse_u64, warning};
use super::{Output, ParseError};
use serde::Serialize;

/// One pass, peak, summary or total of an e2fsck run.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct E2fsckRow {
    /// `pass`, `peak`, `summary` or `total`.
    pub kind: String,
    /// The pass as printed: `1` … `5`, `1B`, `3A` …
    pub pass: Option<String>,
    /// The pass's leading number (`3` for `3A`).
    pub pass_number: Option<u64>,
    /// `Checking inodes, blocks, and sizes` …
    pub name: Option<String>,
    pub memory_kib: Option<u64>,
    /// Old builds without mallinfo: `Memory used: N,` in bytes (no `k`).
    pub memory_bytes: Option<u64>,
    pub memory_mmap_kib: Option<u64>,
    pub memory_in_use_kib: Option<u64>,
    pub memory_free_kib: Option<u64>,
    pub real_s: Option<f64>,
    pub user_s: Option<f64>,
    pub sys_s: Option<f64>,
    pub read_mib: Option<u64>,
    pub write_mib: Option<u64>,
    pub rate_mib_s: Option<f64>,
    /// Summary: the device (or image) e2fsck names.
    pub device: Option<String>,
    pub files_used: Option<u64>,
    pub files_total: Option<u64>,
    pub noncontiguous_pct: Option<f64>,
    pub blocks_used: Option<u64>,
    pub blocks_total: Option<u64>,
    /// Summary of `-v`: `N non-contiguous files (P%)`.
    pub noncontiguous_files: Option<u64>,
    /// Summary of `-v`: `N non-contiguous directories (P%)`.
    pub noncontiguous_dirs: Option<u64>,
    /// Summary: true for the `clean, …` line of a check that was skipped.
    pub clean: Option<bool>,
    /// Summary: status banners printed just before it, `; `-separated.
    pub status: Option<String>,
}

const KIND: &str = "e2fsck";
/// e2fsck/unix.c's message when a problem makes it start over from pass 1.
const RESTART: &str = "Restarting e2fsck from the beginning...";

/// Parse e2fsck output.
pub fn parse(text: &str) -> Result<Output<E2fsckRow>, ParseError> {
    let mut out: Output<E2fsckRow> = Output::default();
    // Rows of the current run start here (a summary or total ends a run's passes).
    let mut run_start = 0usize;
    let mut status: Vec<String> = Vec::new();
    let mut first_text: Option<(usize, &str)> = None;
    let mut passes_seen = false;
    let mut pass_stats_seen = false;
    let mut summary_seen = false;
    let mut total_seen = false;
    // Inside e2fsck -v's statistics block (after its `inodes used` line).
    let mut in_verbose = false;

    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if first_text.is_none() && !is_version(t) {
            first_text = Some((n, t));
        }
        if is_version(t) {
            continue;
        }
        if let Some((pass, rest)) = pass_prefix(t) {
            let pass = pass.as_str();
            passes_seen = true;
            let i = find_or_add_pass(&mut out.rows, run_start, pass);
            let Some(row) = out.rows.get_mut(i) else {
                continue;
            };
            let ok = if let Some(m) = rest.strip_prefix("Memory used:") {
                pass_stats_seen = true;
                memory(row, m)
            } else if let Some(io) = rest.strip_prefix("I/O read:") {
                pass_stats_seen = true;
                io_line(row, io)
            } else {
                if row.name.is_some() {
                    out.warnings
                        .push(warning(n, line, format!("pass {pass} named twice")));
                }
                row.name = Some(rest.to_string());
                true
            };
            if !ok {
                out.warnings
                    .push(warning(n, line, "unreadable pass statistics"));
            }
            continue;
        }
        if let Some(m) = t.strip_prefix("Peak memory: Memory used:") {
            let mut row = E2fsckRow {
                kind: "peak".into(),
                ..Default::default()
            };
            if memory(&mut row, m) {
                out.rows.push(row);
            } else {
                out.warnings
                    .push(warning(n, line, "unreadable peak memory"));
            }
            continue;
        }
        if let Some(m) = t.strip_prefix("Memory used:") {
            let mut row = E2fsckRow {
                kind: "total".into(),
                ..Default::default()
            };
            if memory(&mut row, m) {
                out.rows.push(row);
                total_seen = true;
                run_start = out.rows.len();
            } else {
                out.warnings
                    .push(warning(n, line, "unreadable total memory"));
            }
            continue;
        }
        if let Some(io) = t.strip_prefix("I/O read:") {
            // Belongs to the total row just before it, else starts one.
            let attach = out
                .rows
                .last()
                .is_some_and(|r| r.kind == "total" && r.read_mib.is_none());
            if !attach {
                out.rows.push(E2fsckRow {
                    kind: "total".into(),
                    ..Default::default()
                });
                total_seen = true;
                run_start = out.rows.len();
            }
            if let Some(row) = out.rows.last_mut() {
                if !io_line(row, io) {
                    out.warnings.push(warning(n, line, "unreadable total I/O"));
                }
            }
            continue;
        }
        if let Some(stat) = verbose_stat(t) {
            match stat {
                Verbose::Inodes { used, total } => {
                    out.rows.push(E2fsckRow {
                        kind: "summary".into(),
                        files_used: Some(used),
                        files_total: total,
                        status: (!status.is_empty()).then(|| status.join("; ")),
                        ..Default::default()
                    });
                    status.clear();
                    summary_seen = true;
                    in_verbose = true;
                    run_start = out.rows.len();
                }
                other if in_verbose => {
                    if let Some(row) = out.rows.last_mut() {
                        match other {
                            Verbose::NoncontiguousFiles(n) => row.noncontiguous_files = Some(n),
                            Verbose::NoncontiguousDirs(n) => row.noncontiguous_dirs = Some(n),
                            Verbose::Blocks { used, total } => {
                                row.blocks_used = Some(used);
                                row.blocks_total = total;
                            }
                            Verbose::Inventory | Verbose::Inodes { .. } => {}
                        }
                    }
                }
                _ => out.warnings.push(warning(
                    n,
                    line,
                    "a line of e2fsck's -v statistics outside its block",
                )),
            }
            continue;
        }
        in_verbose = false;
        if let Some(row) = summary(t) {
            out.rows.push(E2fsckRow {
                status: (!status.is_empty()).then(|| status.join("; ")),
                ..row
            });
            status.clear();
            summary_seen = true;
            run_start = out.rows.len();
            continue;
        }
        if let Some(banner) = banner(t) {
            status.push(banner.to_string());
            continue;
        }
        if t == RESTART {
            // The passes run again from pass 1: their rows are new ones, the rows of the
            // abandoned start stay as they were printed.
            run_start = out.rows.len();
            out.warnings.push(warning(
                n,
                line,
                "e2fsck restarted: the passes that follow are new rows",
            ));
            continue;
        }
        out.warnings.push(warning(
            n,
            line,
            "e2fsck message, not a statistics or summary line",
        ));
    }
    if out.rows.is_empty() {
        return Err(match first_text {
            None => ParseError::NothingRecognised {
                kind: KIND,
                expected: "`Pass N:` lines, the `DEV: used/total files …` summary, `Memory used:`",
            },
            Some((line, text)) => ParseError::Malformed {
                kind: KIND,
                line,
                message: format!("no passes, summary or statistics; e2fsck printed: {text}"),
            },
        });
    }
    out.partial = (passes_seen && !summary_seen) || (pass_stats_seen && !total_seen);
    Ok(out)
}

fn is_version(t: &str) -> bool {
    t.starts_with("e2fsck ") && t.ends_with(')') && t.split_whitespace().count() == 3
}

/// `Pass 3A: rest` → (`3A`, `rest`). e2fsck names the sub-passes of pass 1 in capitals
/// on their heading (`Pass 1B: Rescanning …`) and in lower case on their statistics
/// (`Pass 1b: Memory used: …`, e2fsck/pass1b.c): the letter is returned in capitals, so
/// both lines are one pass.
fn pass_prefix(t: &str) -> Option<(String, &str)> {
    let rest = t.strip_prefix("Pass ")?;
    let (pass, rest) = rest.split_once(": ")?;
    let digits = pass.bytes().take_while(u8::is_ascii_digit).count();
    let suffix = pass.get(digits..)?;
    if digits == 0 || suffix.len() > 1 || !suffix.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    Some((pass.to_ascii_uppercase(), rest.trim()))
}

fn find_or_add_pass(rows: &mut Vec<E2fsckRow>, run_start: usize, pass: &str) -> usize {
    let found = rows
        .iter()
        .enumerate()
        .skip(run_start)
        .find(|(_, r)| r.kind == "pass" && r.pass.as_deref() == Some(pass));
    if let Some((i, _)) = found {
        return i;
    }
    let number = pass
        .bytes()
        .take_while(u8::is_ascii_digit)
        .map(|b| b as char)
        .collect::<String>();
    rows.push(E2fsckRow {
        kind: "pass".into(),
        pass: Some(pass.to_string()),
        pass_number: parse_u64(&number),
        ..Default::default()
    });
    rows.len() - 1
}

fn kib(s: &str) -> Option<u64> {
    parse_u64(s.trim().strip_suffix('k')?)
}

/// ` 224k/0k (88k/137k), time:  0.00/ 0.00/ 0.00` or ` 1234k, time: …` or
/// ` 1263616, time: …` (bytes) or `…, elapsed time: 0.003`.
fn memory(row: &mut E2fsckRow, s: &str) -> bool {
    let (mem, time) = match s.split_once(", ") {
        Some((m, t)) => (m.trim(), Some(t.trim())),
        None => (s.trim(), None),
    };
    if let Some((outer, inner)) = mem.split_once(" (") {
        let Some((arena, mmap)) = outer.split_once('/') else {
            return false;
        };
        let Some((used, free)) = inner.strip_suffix(')').and_then(|i| i.split_once('/')) else {
            return false;
        };
        row.memory_kib = kib(arena);
        row.memory_mmap_kib = kib(mmap);
        row.memory_in_use_kib = kib(used);
        row.memory_free_kib = kib(free);
        if row.memory_kib.is_none()
            || row.memory_mmap_kib.is_none()
            || row.memory_in_use_kib.is_none()
            || row.memory_free_kib.is_none()
        {
            return false;
        }
    } else if mem.ends_with('k') {
        row.memory_kib = kib(mem);
        if row.memory_kib.is_none() {
            return false;
        }
    } else {
        // e2fsck/util.c before 1.45.6 without mallinfo: `Memory used: %lu, ` (bytes).
        row.memory_bytes = parse_u64(mem);
        if row.memory_bytes.is_none() {
            return false;
        }
    }
    match time {
        None => true,
        Some(t) => {
            if let Some(e) = t.strip_prefix("elapsed time:") {
                row.real_s = parse_f64(e.trim());
                return row.real_s.is_some();
            }
            let Some(t) = t.strip_prefix("time:") else {
                return false;
            };
            let parts: Vec<Option<f64>> = t.split('/').map(|p| parse_f64(p.trim())).collect();
            if let [Some(r), Some(u), Some(s)] = parts.as_slice() {
                row.real_s = Some(*r);
                row.user_s = Some(*u);
                row.sys_s = Some(*s);
                true
            } else {
                false
            }
        }
    }
}

/// ` 2MB, write: 0MB, rate: 944.29MB/s`
fn io_line(row: &mut E2fsckRow, s: &str) -> bool {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [read, write, rate] = parts.as_slice() else {
        return false;
    };
    let read = read.strip_suffix("MB").and_then(parse_u64);
    let write = write
        .strip_prefix("write:")
        .and_then(|w| w.trim().strip_suffix("MB"))
        .and_then(parse_u64);
    let rate = rate
        .strip_prefix("rate:")
        .and_then(|r| r.trim().strip_suffix("MB/s"))
        .and_then(parse_f64);
    row.read_mib = read;
    row.write_mib = write;
    row.rate_mib_s = rate;
    read.is_some() && write.is_some() && rate.is_some()
}

/// A line of e2fsck -v's statistics block (e2fsck/unix.c `show_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verbose {
    /// `352 inodes used (29.53%, out of 1192)`, or `302885 inodes used (12.93%)`.
    Inodes {
        used: u64,
        total: Option<u64>,
    },
    NoncontiguousFiles(u64),
    NoncontiguousDirs(u64),
    /// `778 blocks used (65.38%, out of 1190)`.
    Blocks {
        used: u64,
        total: Option<u64>,
    },
    /// A line of the block that gives no column.
    Inventory,
}

/// `(29.53%, out of 1192)` → Some(Some(1192)); `(12.93%)` → Some(None).
fn used_share(s: &str) -> Option<Option<u64>> {
    let inner = s.strip_prefix('(')?.strip_suffix(')')?;
    let (pct, total) = match inner.split_once(", out of ") {
        Some((p, t)) => (p, Some(parse_u64(t)?)),
        None => (inner, None),
    };
    parse_f64(pct.strip_suffix('%')?)?;
    Some(total)
}

fn verbose_stat(t: &str) -> Option<Verbose> {
    if t.starts_with("# of inodes with ind/dind/tind blocks: ")
        || t.starts_with("Extent depth histogram: ")
    {
        return Some(Verbose::Inventory);
    }
    if t.len() >= 8 && t.bytes().all(|b| b == b'-') {
        return Some(Verbose::Inventory);
    }
    let (count, rest) = t.split_once(' ')?;
    let count = parse_u64(count)?;
    let rest = rest.trim_start();
    let pct = |rest: &str, what: &[&str]| -> Option<Option<u64>> {
        let r = what.iter().find_map(|w| rest.strip_prefix(w))?;
        used_share(r.trim())
    };
    if let Some(total) = pct(rest, &["inodes used ", "inode used "]) {
        return Some(Verbose::Inodes { used: count, total });
    }
    if let Some(total) = pct(rest, &["blocks used ", "block used "]) {
        return Some(Verbose::Blocks { used: count, total });
    }
    if pct(rest, &["non-contiguous files ", "non-contiguous file "]).is_some() {
        return Some(Verbose::NoncontiguousFiles(count));
    }
    if pct(
        rest,
        &["non-contiguous directories ", "non-contiguous directory "],
    )
    .is_some()
    {
        return Some(Verbose::NoncontiguousDirs(count));
    }
    const INVENTORY: [&str; 18] = [
        "bad block",
        "bad blocks",
        "large file",
        "large files",
        "regular file",
        "regular files",
        "directory",
        "directories",
        "character device file",
        "character device files",
        "block device file",
        "block device files",
        "fifo",
        "fifos",
        "link",
        "links",
        "socket",
        "sockets",
    ];
    if INVENTORY.contains(&rest) || rest == "file" || rest == "files" {
        return Some(Verbose::Inventory);
    }
    // `35619 symbolic links (29086 fast symbolic links)`
    let symlinks = ["symbolic links (", "symbolic link ("]
        .iter()
        .find_map(|p| rest.strip_prefix(p))
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|r| r.split_once(' '))
        .is_some_and(|(n, what)| {
            parse_u64(n).is_some() && matches!(what, "fast symbolic links" | "fast symbolic link")
        });
    symlinks.then_some(Verbose::Inventory)
}

fn fraction(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once('/')?;
    Some((parse_u64(a)?, parse_u64(b)?))
}

/// `/dev/x: 213/131072 files (0.5% non-contiguous), 31477/524288 blocks` or
/// `/dev/x: clean, 354/131072 files, 33622/524288 blocks` (maybe followed by a note in
/// parentheses such as `(check in 5 mounts)`).
fn summary(t: &str) -> Option<E2fsckRow> {
    let (device, rest) = t.rsplit_once(": ")?;
    let (clean, rest) = match rest.strip_prefix("clean, ") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let tok: Vec<&str> = rest.split_whitespace().collect();
    let (files, pct, blocks) = match (clean, tok.as_slice()) {
        (false, [f, "files", p, "non-contiguous),", b, "blocks"]) => {
            let p = p.strip_prefix('(')?.strip_suffix('%')?;
            (*f, Some(parse_f64(p)?), *b)
        }
        (true, [f, "files,", b, "blocks", ..]) => (*f, None, *b),
        _ => return None,
    };
    let (files_used, files_total) = fraction(files)?;
    let (blocks_used, blocks_total) = fraction(blocks)?;
    Some(E2fsckRow {
        kind: "summary".into(),
        device: Some(device.to_string()),
        files_used: Some(files_used),
        files_total: Some(files_total),
        noncontiguous_pct: pct,
        blocks_used: Some(blocks_used),
        blocks_total: Some(blocks_total),
        clean: Some(clean),
        ..Default::default()
    })
}

/// `/dev/x: ***** FILE SYSTEM WAS MODIFIED *****` → `FILE SYSTEM WAS MODIFIED`.
fn banner(t: &str) -> Option<&str> {
    let body = if t.starts_with('*') {
        t
    } else {
        t.split_once(": ").map_or(t, |(_, b)| b)
    };
    let inner = body.trim_matches('*').trim();
    (body.starts_with("*****") && body.ends_with("*****") && !inner.is_empty()).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_single_figure_memory() {
        // One figure in KiB: builds without mallinfo since 1.45.6, and any build past
        // 2 GiB (e2fsck/util.c, `Memory used: %lluk, `).
        let out = parse(
            "Pass 1: Checking inodes, blocks, and sizes\nPass 1: Memory used: 4080k, time: 170.66/ 51.16/  2.90\nPass 1: I/O read: 4196MB, write: 0MB, rate: 24.59MB/s\n/dev/sdb1: 45600011/61054976 files (0.0% non-contiguous), 236328453/244190000 blocks\nMemory used: 5000k, time: 300.00/ 60.00/ 5.00\nI/O read: 5000MB, write: 0MB, rate: 16.67MB/s\n",
        )
        .unwrap();
        assert!(out.warnings.is_empty() && !out.partial, "{out:?}");
        let p = &out.rows[0];
        assert_eq!(
            (p.memory_kib, p.memory_mmap_kib, p.real_s),
            (Some(4080), None, Some(170.66))
        );
        assert_eq!((p.read_mib, p.rate_mib_s), (Some(4196), Some(24.59)));
        assert_eq!(out.rows[1].files_used, Some(45_600_011));
        assert_eq!(out.rows[2].kind, "total");
        assert_eq!(out.rows[2].read_mib, Some(5000));
    }

    /// Before 1.45.6 a build without mallinfo printed sbrk's growth in bytes, with no
    /// unit: `Memory used: %lu, ` (e2fsck/util.c at 70eabde9). It is kept as bytes, and a
    /// figure that is neither form is a warning.
    #[test]
    fn memory_in_bytes_of_builds_without_mallinfo() {
        let out = parse("Pass 1: Checking inodes, blocks, and sizes\nPass 1: Memory used: 1263616, time:  0.11/ 0.02/ 0.00\n/dev/x: 11/64 files (0.0% non-contiguous), 20/256 blocks\nMemory used: 1271808, elapsed time:  0.140\nPass 9: Memory used: 12x4, time: 1.00/ 1.00/ 1.00\n").unwrap();
        let p = &out.rows[0];
        assert_eq!((p.memory_bytes, p.memory_kib), (Some(1_263_616), None));
        assert_eq!((p.real_s, p.user_s), (Some(0.11), Some(0.02)));
        let t = out.rows.iter().find(|r| r.kind == "total").unwrap();
        assert_eq!((t.memory_bytes, t.real_s), (Some(1_271_808), Some(0.14)));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].line, 5);
    }

    #[test]
    fn banners_go_to_the_summary() {
        let out = parse("\n/dev/x: ***** FILE SYSTEM WAS MODIFIED *****\n/dev/x: ********** WARNING: Filesystem still has errors **********\n/dev/x: 11/64 files (0.0% non-contiguous), 20/256 blocks\n").unwrap();
        assert_eq!(
            out.rows[0].status.as_deref(),
            Some("FILE SYSTEM WAS MODIFIED; WARNING: Filesystem still has errors")
        );
        assert!(!out.partial);
    }

    #[test]
    fn truncated_is_partial() {
        let out = parse(
            "Pass 1: Checking inodes, blocks, and sizes\nPass 2: Checking directory structure\n",
        )
        .unwrap();
        assert!(out.partial);
        assert_eq!(out.rows.len(), 2);
    }
}
