//! The `fs_mark` results table, one [`FsMarkRow`] per iteration (loop):
//!
//! ```text
//! #  fs_mark  -d  mnt/fsm  -n  1000  -s  20480  -L  3  -S  0
//! #    Version 3.3, 1 thread(s) starting at Sun Nov 29 22:53:44 2026
//! #    Sync method: NO SYNC: Test does not issue sync() or fsync() calls.
//! #    Files info: size 20480 bytes, written with an IO size of 16384 bytes per write
//!
//! FSUse%        Count         Size    Files/sec     App Overhead
//!      7         1000        20480      12346.3             8771
//! ```
//!
//! fs_mark 3.1 and older print no `App Overhead` column (`app_overhead_us` is None) and
//! `Version Version 3.1` (the version is `3.1`).
//!
//! With `-v` the header has six more groups, `CREAT (Min/Avg/Max)` … `UNLINK
//! (Min/Avg/Max)`, three microsecond columns each; they fill the `creat_*` … `unlink_*`
//! fields, which are None without `-v`. The columns are read from the header line, so
//! their order does not matter; an unknown group gives one warning and its columns are
//! skipped.
//!
//! The `#` lines above the table give `version`, `threads`, `sync_method` (the part
//! before the second `:`) and `io_size_bytes` to every row. The echoed command line gives
//! the number of loops (`-L`, 1 without it, unbounded with `-F`): fewer rows than that
//! means the run was cut short, and the rows come with `partial = true`. Other `#`
//! lines, and the `Average Files/sec:`, `pNN Files/sec:`, `start_time:`, `end_time:`,
//! `measurement time:` lines some fs_mark forks print after the table, are recognised
//! and skipped; any other line is a warning.

use super::text::{numbered, parse_f64, parse_u64, warning};
use super::{Output, ParseError};
use serde::Serialize;

/// One iteration of fs_mark.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FsMarkRow {
    /// 0-based iteration number.
    pub index: u64,
    /// `FSUse%`: how full the first test directory's filesystem is after the loop.
    pub fsuse_pct: u64,
    /// `Count`: files written so far (cumulative over loops).
    pub count: u64,
    /// `Size`: bytes per file.
    pub size_bytes: u64,
    pub files_per_sec: f64,
    /// `App Overhead`: microseconds spent outside file-writing system calls. None when
    /// the table has no such column (fs_mark 3.1 and older).
    pub app_overhead_us: Option<u64>,
    pub creat_min_us: Option<u64>,
    pub creat_avg_us: Option<u64>,
    pub creat_max_us: Option<u64>,
    pub write_min_us: Option<u64>,
    pub write_avg_us: Option<u64>,
    pub write_max_us: Option<u64>,
    pub fsync_min_us: Option<u64>,
    pub fsync_avg_us: Option<u64>,
    pub fsync_max_us: Option<u64>,
    pub sync_min_us: Option<u64>,
    pub sync_avg_us: Option<u64>,
    pub sync_max_us: Option<u64>,
    pub close_min_us: Option<u64>,
    pub close_avg_us: Option<u64>,
    pub close_max_us: Option<u64>,
    pub unlink_min_us: Option<u64>,
    pub unlink_avg_us: Option<u64>,
    pub unlink_max_us: Option<u64>,
    /// From the `#` header: `3.3`.
    pub version: Option<String>,
    pub threads: Option<u64>,
    /// `NO SYNC`, `INBAND FSYNC`, …
    pub sync_method: Option<String>,
    pub io_size_bytes: Option<u64>,
}

const KIND: &str = "fs_mark";
const OPS: [&str; 6] = ["CREAT", "WRITE", "FSYNC", "SYNC", "CLOSE", "UNLINK"];
const TRAILERS: [&str; 7] = [
    "Average Files/sec:",
    "p50 Files/sec:",
    "p90 Files/sec:",
    "p99 Files/sec:",
    "start_time:",
    "end_time:",
    "measurement time:",
];

#[derive(Default, Clone)]
struct Header {
    version: Option<String>,
    threads: Option<u64>,
    sync_method: Option<String>,
    io_size_bytes: Option<u64>,
    /// Loops the command line asked for; None when unknown or unbounded (`-F`).
    loops: Option<u64>,
}

/// Parse fs_mark output.
pub fn parse(text: &str) -> Result<Output<FsMarkRow>, ParseError> {
    let mut out: Output<FsMarkRow> = Output::default();
    let mut header = Header::default();
    // Op name per group of three extra columns; None for an unknown group.
    let mut ops: Option<Table> = None;
    let mut expected_loops: Option<u64> = None;
    let mut rows_since_table = 0u64;
    let mut first_text: Option<(usize, &str)> = None;

    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if first_text.is_none() {
            first_text = Some((n, t));
        }
        if let Some(c) = t.strip_prefix('#') {
            comment(c.trim(), &mut header);
            continue;
        }
        if t.starts_with("FSUse%") {
            ops = Some(table_header(t, n, line, &mut out));
            // A new table: check the previous one's loop count, then start counting.
            check_loops(&mut out, expected_loops, rows_since_table);
            expected_loops = header.loops;
            rows_since_table = 0;
            continue;
        }
        if TRAILERS.iter().any(|p| t.starts_with(p)) {
            continue;
        }
        let Some(groups) = ops.as_ref() else {
            out.warnings.push(warning(
                n,
                line,
                "not fs_mark output (no results table yet)",
            ));
            continue;
        };
        match data_row(t, groups, &header) {
            Ok(mut row) => {
                row.index = out.rows.len() as u64;
                out.rows.push(row);
                rows_since_table += 1;
            }
            Err(reason) => out.warnings.push(warning(n, line, reason.to_string())),
        }
    }
    if out.rows.is_empty() && ops.is_none() {
        return Err(match first_text {
            None => ParseError::NothingRecognised {
                kind: KIND,
                expected: "the `FSUse%  Count  Size  Files/sec  App Overhead` table",
            },
            Some((line, text)) => ParseError::Malformed {
                kind: KIND,
                line,
                message: format!("no results table; fs_mark printed: {text}"),
            },
        });
    }
    check_loops(&mut out, expected_loops, rows_since_table);
    if ops.is_some() && rows_since_table == 0 {
        out.partial = true;
    }
    Ok(out)
}

fn check_loops(out: &mut Output<FsMarkRow>, expected: Option<u64>, got: u64) {
    if expected.is_some_and(|e| got < e) {
        out.partial = true;
    }
}

fn comment(c: &str, h: &mut Header) {
    if let Some(rest) = c.strip_prefix("fs_mark") {
        // The echoed command line: `fs_mark  -d  dir  -n  1000  -L  3 …`
        let args: Vec<&str> = rest.split_whitespace().collect();
        let fill = args.contains(&"-F");
        let loops = args
            .iter()
            .position(|a| *a == "-L")
            .and_then(|i| args.get(i + 1))
            .and_then(|v| parse_u64(v));
        h.loops = if fill { None } else { Some(loops.unwrap_or(1)) };
    } else if let Some(rest) = c.strip_prefix("Version ") {
        // `3.3, 1 thread(s) starting at …`; fs_mark 3.1 printed `Version Version 3.1, …`.
        let rest = rest.strip_prefix("Version ").unwrap_or(rest);
        let mut parts = rest.splitn(2, ", ");
        h.version = parts.next().map(str::to_string);
        h.threads = parts
            .next()
            .and_then(|p| p.split_whitespace().next())
            .and_then(parse_u64);
    } else if let Some(rest) = c.strip_prefix("Sync method:") {
        let method = rest.split(':').next().unwrap_or("").trim();
        h.sync_method = (!method.is_empty()).then(|| method.to_string());
    } else if let Some(rest) = c.strip_prefix("Files info:") {
        // `size 20480 bytes, written with an IO size of 16384 bytes per write`
        let words: Vec<&str> = rest.split_whitespace().collect();
        h.io_size_bytes = words
            .windows(3)
            .find(|w| w[0] == "size" && w[1] == "of")
            .and_then(|w| parse_u64(w[2]));
    }
}

/// The columns of a results table.
struct Table {
    /// `App Overhead` is a column (fs_mark 3.2 on; 3.1 printed none).
    overhead: bool,
    /// The `NAME (Min/Avg/Max)` groups after the fixed columns, as indexes into [`OPS`];
    /// None for an unknown group.
    groups: Vec<Option<usize>>,
}

/// The header line: whether it has `App Overhead`, and the extra `NAME (Min/Avg/Max)`
/// groups after it (after `Files/sec` without it).
fn table_header(t: &str, n: usize, line: &str, out: &mut Output<FsMarkRow>) -> Table {
    let (overhead, extra) = match t.split_once("App Overhead") {
        Some((_, extra)) => (true, extra),
        None => match t.split_once("Files/sec") {
            Some((_, extra)) => (false, extra),
            None => {
                out.warnings.push(warning(
                    n,
                    line,
                    "table header without `Files/sec` and `App Overhead`",
                ));
                return Table {
                    overhead: true,
                    groups: Vec::new(),
                };
            }
        },
    };
    let words: Vec<&str> = extra.split_whitespace().collect();
    let mut groups = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let name = words[i];
        let triple = words.get(i + 1) == Some(&"(Min/Avg/Max)");
        if !triple {
            out.warnings.push(warning(
                n,
                line,
                format!("header word `{name}` is not a `NAME (Min/Avg/Max)` group"),
            ));
            i += 1;
            continue;
        }
        let op = OPS.iter().position(|o| *o == name);
        if op.is_none() {
            out.warnings.push(warning(
                n,
                line,
                format!("unknown column group `{name}`; its columns are skipped"),
            ));
        }
        groups.push(op);
        i += 2;
    }
    Table { overhead, groups }
}

/// Why a data line of fs_mark is not a row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum RowError {
    #[error("{got} columns where the header has {want}")]
    Columns { got: usize, want: usize },
    #[error("`{0}` is not a whole number")]
    NotWhole(String),
    #[error("`Files/sec` is not a number")]
    FilesPerSec,
}

fn data_row(t: &str, table: &Table, h: &Header) -> Result<FsMarkRow, RowError> {
    let cols: Vec<&str> = t.split_whitespace().collect();
    let fixed = if table.overhead { 5 } else { 4 };
    let groups = &table.groups;
    let want = fixed + 3 * groups.len();
    if cols.len() != want {
        return Err(RowError::Columns {
            got: cols.len(),
            want,
        });
    }
    let int = |i: usize, name: &str| {
        cols.get(i)
            .and_then(|c| parse_u64(c))
            .ok_or_else(|| RowError::NotWhole(name.to_string()))
    };
    let mut row = FsMarkRow {
        fsuse_pct: int(0, "FSUse%")?,
        count: int(1, "Count")?,
        size_bytes: int(2, "Size")?,
        files_per_sec: cols
            .get(3)
            .and_then(|c| parse_f64(c))
            .ok_or(RowError::FilesPerSec)?,
        app_overhead_us: if table.overhead {
            Some(int(4, "App Overhead")?)
        } else {
            None
        },
        version: h.version.clone(),
        threads: h.threads,
        sync_method: h.sync_method.clone(),
        io_size_bytes: h.io_size_bytes,
        ..FsMarkRow::default()
    };
    for (g, op) in groups.iter().enumerate() {
        let mut v = [None; 3];
        for (k, slot) in v.iter_mut().enumerate() {
            let c = cols.get(fixed + 3 * g + k).copied().unwrap_or("");
            *slot = Some(parse_u64(c).ok_or_else(|| RowError::NotWhole(c.to_string()))?);
        }
        let [min, avg, max] = v;
        let fields = match op {
            Some(0) => (
                &mut row.creat_min_us,
                &mut row.creat_avg_us,
                &mut row.creat_max_us,
            ),
            Some(1) => (
                &mut row.write_min_us,
                &mut row.write_avg_us,
                &mut row.write_max_us,
            ),
            Some(2) => (
                &mut row.fsync_min_us,
                &mut row.fsync_avg_us,
                &mut row.fsync_max_us,
            ),
            Some(3) => (
                &mut row.sync_min_us,
                &mut row.sync_avg_us,
                &mut row.sync_max_us,
            ),
            Some(4) => (
                &mut row.close_min_us,
                &mut row.close_avg_us,
                &mut row.close_max_us,
            ),
            Some(5) => (
                &mut row.unlink_min_us,
                &mut row.unlink_avg_us,
                &mut row.unlink_max_us,
            ),
            _ => continue,
        };
        *fields.0 = min;
        *fields.1 = avg;
        *fields.2 = max;
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_run_is_partial() {
        let text = "#  fs_mark  -d  x  -n  10  -L  3\nFSUse%        Count         Size    Files/sec     App Overhead\n     7         10        0      12.5             87\n";
        let out = parse(text).unwrap();
        assert!(out.partial);
        assert_eq!(out.rows[0].files_per_sec, 12.5);
        let full = text.replace("-L  3", "-L  1");
        assert!(!parse(&full).unwrap().partial);
    }

    #[test]
    fn wrong_column_count_warns() {
        let out = parse("FSUse% Count Size Files/sec App Overhead\n1 2 3\n").unwrap();
        assert_eq!(out.warnings.len(), 1);
        assert!(out.partial, "a header with no rows");
    }
}
