//! The text of a tracefs `trace` file holding `block:block_rq_issue` and
//! `block:block_rq_complete` events → one row per request, and the per-iteration summary
//! (`io_summary`).
//!
//! A line looks like (kernel 6.x, `trace_clock` = mono, so the timestamp is seconds of
//! CLOCK_MONOTONIC):
//! ```text
//!   e2fsck-4242  [001] ..... 12345.678901: block_rq_issue: 7,3 R 4096 () 2048 + 8 none,0,0 [e2fsck]
//!   <idle>-0     [000] d.h1. 12345.679100: block_rq_complete: 7,3 R () 2048 + 8 none,0,0 [0]
//! ```
//! The fields after the event name: `MAJ,MIN RWBS [BYTES] (CMD) SECTOR + NR_SECTORS ...`.
//! A completion is matched to the oldest unmatched issue with the same device, sector
//! and length. Events lost to a full buffer (the header's `entries-in-buffer/entries-written`
//! differ) make the output `partial` and are said in a warning.

use super::{Output, Warning};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// The operation of a request, from its RWBS string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoOp {
    Read,
    Write,
    Flush,
    Discard,
    /// Anything else (secure erase, write-zeroes shown as `N`, driver-private).
    Other,
}

impl IoOp {
    /// `R`, `W`, `D`, `E`, `N`, with an optional leading `F` (preflush).
    pub fn from_rwbs(rwbs: &str) -> IoOp {
        let body = rwbs.strip_prefix('F').unwrap_or(rwbs);
        match body.chars().next() {
            Some('R') => IoOp::Read,
            Some('W') => IoOp::Write,
            Some('D') => IoOp::Discard,
            // "FN": a pure cache flush; "F" alone likewise.
            Some('N') | None if rwbs.starts_with('F') => IoOp::Flush,
            _ => IoOp::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Flush => "flush",
            IoOp::Discard => "discard",
            IoOp::Other => "other",
        }
    }

    /// Reads and writes move data and the head; flushes and discards do not count as seeks.
    pub fn moves_data(self) -> bool {
        matches!(self, IoOp::Read | IoOp::Write)
    }
}

/// One block request (`io.parquet` row, without the point/iteration/step columns that
/// the runner adds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoRow {
    /// Seconds from the step's start to the request's issue.
    pub t_s: f64,
    /// `MAJ:MIN`.
    pub device: String,
    pub op: IoOp,
    pub rwbs: String,
    /// In 512-byte sectors.
    pub sector: u64,
    pub bytes: u64,
    /// Issue to completion, when the completion was seen.
    pub latency_s: Option<f64>,
}

struct Event<'a> {
    ts: f64,
    complete: bool,
    dev: (u32, u32),
    rwbs: &'a str,
    bytes: Option<u64>,
    sector: u64,
    nr: u64,
}

/// What a block-request event line lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum EventError {
    #[error("no timestamp before the event name")]
    NoTimestamp,
    #[error("no device")]
    NoDevice,
    #[error("device is not MAJ,MIN")]
    DeviceNotMajMin,
    #[error("bad major")]
    BadMajor,
    #[error("bad minor")]
    BadMinor,
    #[error("no RWBS")]
    NoRwbs,
    #[error("no byte count")]
    NoBytes,
    #[error("no (cmd)")]
    NoCmd,
    #[error("no sector")]
    NoSector,
    #[error("no '+' after the sector")]
    NoPlus,
    #[error("no sector count")]
    NoSectorCount,
}

fn parse_event(line: &str) -> Result<Option<Event<'_>>, EventError> {
    let (complete, idx, name_len) = if let Some(i) = line.find(": block_rq_issue: ") {
        (false, i, ": block_rq_issue: ".len())
    } else if let Some(i) = line.find(": block_rq_complete: ") {
        (true, i, ": block_rq_complete: ".len())
    } else {
        return Ok(None);
    };
    let ts: f64 = line[..idx]
        .rsplit(' ')
        .next()
        .and_then(|t| t.parse().ok())
        .ok_or(EventError::NoTimestamp)?;
    let rest = &line[idx + name_len..];
    let mut words = rest.split_whitespace();
    let dev = words.next().ok_or(EventError::NoDevice)?;
    let (maj, min) = dev.split_once(',').ok_or(EventError::DeviceNotMajMin)?;
    let dev = (
        maj.parse().map_err(|_| EventError::BadMajor)?,
        min.parse().map_err(|_| EventError::BadMinor)?,
    );
    let rwbs = words.next().ok_or(EventError::NoRwbs)?;
    let mut bytes = None;
    if !complete {
        bytes = Some(
            words
                .next()
                .and_then(|b| b.parse().ok())
                .ok_or(EventError::NoBytes)?,
        );
    }
    // (CMD): may be empty "()" or hold spaces; skip to the word after the closing ')'.
    let after_cmd = rest
        .find(") ")
        .map(|i| &rest[i + 2..])
        .ok_or(EventError::NoCmd)?;
    let mut w = after_cmd.split_whitespace();
    let sector: u64 = w
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or(EventError::NoSector)?;
    if w.next() != Some("+") {
        return Err(EventError::NoPlus);
    }
    let nr: u64 = w
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or(EventError::NoSectorCount)?;
    Ok(Some(Event {
        ts,
        complete,
        dev,
        rwbs,
        bytes,
        sector,
        nr,
    }))
}

/// The events lost according to the `trace` file's header, if it says.
fn lost_from_header(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find(|l| l.contains("entries-in-buffer/entries-written"))?;
    let nums = line.split(':').nth(1)?.split_whitespace().next()?;
    let (inbuf, written) = nums.split_once('/')?;
    Some(
        written
            .parse::<u64>()
            .ok()?
            .saturating_sub(inbuf.parse().ok()?),
    )
}

/// Parse a `trace` file's text. `start` is the step's start on the trace clock
/// (CLOCK_MONOTONIC seconds); rows are in issue order.
pub fn parse(text: &str, start: f64) -> Output<IoRow> {
    let mut out = Output::default();
    let mut pending: HashMap<((u32, u32), u64, u64), VecDeque<usize>> = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        match parse_event(line) {
            Ok(Some(e)) => {
                let key = (e.dev, e.sector, e.nr);
                if e.complete {
                    if let Some(i) = pending.get_mut(&key).and_then(|q| q.pop_front()) {
                        let row: &mut IoRow = &mut out.rows[i];
                        row.latency_s = Some((e.ts - start - row.t_s).max(0.0));
                    }
                    // A completion without its issue began before the trace: not a row.
                } else {
                    let op = IoOp::from_rwbs(e.rwbs);
                    pending.entry(key).or_default().push_back(out.rows.len());
                    out.rows.push(IoRow {
                        t_s: e.ts - start,
                        device: format!("{}:{}", e.dev.0, e.dev.1),
                        op,
                        rwbs: e.rwbs.to_string(),
                        sector: e.sector,
                        bytes: e.bytes.unwrap_or(e.nr * 512),
                        latency_s: None,
                    });
                }
            }
            Ok(None) => out.warnings.push(Warning {
                line: n + 1,
                text: line.to_string(),
                reason: "not a block_rq_issue or block_rq_complete event".into(),
            }),
            Err(e) => out.warnings.push(Warning {
                line: n + 1,
                text: line.to_string(),
                reason: e.to_string(),
            }),
        }
    }
    if let Some(lost) = lost_from_header(text).filter(|&l| l > 0) {
        out.partial = true;
        out.warnings.push(Warning {
            line: 0,
            text: String::new(),
            reason: format!("{lost} events were lost (the trace buffer was full)"),
        });
    }
    out
}

/// One iteration's `io_summary` row (over all traced devices, data requests only for
/// seeks; every request for the counts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoSummary {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes: u64,
    /// Data requests that do not start where the previous one on the same device ended.
    pub seeks: u64,
    /// Sum of |start − previous end| over the seeks, in bytes.
    pub seek_distance_bytes: u64,
    pub duration_s: f64,
    pub seeks_per_s: f64,
    pub mb_per_s: f64,
}

impl IoSummary {
    /// Summarize `rows` (in issue order) over a step of `duration_s` seconds.
    pub fn from_rows(rows: &[IoRow], duration_s: f64) -> IoSummary {
        let mut s = IoSummary {
            requests: rows.len() as u64,
            reads: 0,
            writes: 0,
            bytes: 0,
            seeks: 0,
            seek_distance_bytes: 0,
            duration_s,
            seeks_per_s: 0.0,
            mb_per_s: 0.0,
        };
        let mut last_end: HashMap<&str, u64> = HashMap::new();
        for r in rows {
            s.bytes += r.bytes;
            match r.op {
                IoOp::Read => s.reads += 1,
                IoOp::Write => s.writes += 1,
                _ => {}
            }
            if !r.op.moves_data() {
                continue;
            }
            let start = r.sector * 512;
            if let Some(&end) = last_end.get(r.device.as_str()) {
                if start != end {
                    s.seeks += 1;
                    s.seek_distance_bytes += start.abs_diff(end);
                }
            }
            last_end.insert(r.device.as_str(), start + r.bytes);
        }
        if duration_s > 0.0 {
            s.seeks_per_s = s.seeks as f64 / duration_s;
            s.mb_per_s = s.bytes as f64 / 1e6 / duration_s;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "\
# tracer: nop
#
# entries-in-buffer/entries-written: 8/8   #P:2
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          e2fsck-4242    [001] .....   100.500000: block_rq_issue: 7,3 R 4096 () 2048 + 8 none,0,0 [e2fsck]
          e2fsck-4242    [001] .....   100.500100: block_rq_issue: 7,3 RA 65536 () 2056 + 128 none,0,0 [e2fsck]
          <idle>-0       [000] d.h1.   100.501000: block_rq_complete: 7,3 R () 2048 + 8 none,0,0 [0]
     kworker/u8:1-77     [000] .....   100.600000: block_rq_issue: 7,3 WS 4096 () 999999 + 8 none,0,0 [kworker/u8:1]
     kworker/u8:1-77     [000] .....   100.600001: block_rq_issue: 7,3 FN 0 () 0 + 0 none,0,0 [kworker/u8:1]
          <idle>-0       [000] d.h1.   100.602000: block_rq_complete: 7,3 WS () 999999 + 8 none,0,0 [0]
          <idle>-0       [000] d.h1.   100.603000: block_rq_complete: 7,3 RA () 2056 + 128 none,0,0 [0]
            fstrim-9     [001] .....   100.700000: block_rq_issue: 7,4 DS 1048576 () 0 + 2048 none,0,0 [fstrim]
";

    #[test]
    fn issues_become_rows_with_matched_latencies() {
        let out = parse(TRACE, 100.0);
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        assert!(!out.partial);
        let ops: Vec<IoOp> = out.rows.iter().map(|r| r.op).collect();
        assert_eq!(
            ops,
            [
                IoOp::Read,
                IoOp::Read,
                IoOp::Write,
                IoOp::Flush,
                IoOp::Discard
            ]
        );
        let r = &out.rows[0];
        assert!((r.t_s - 0.5).abs() < 1e-9);
        assert_eq!((r.device.as_str(), r.sector, r.bytes), ("7:3", 2048, 4096));
        assert!((r.latency_s.unwrap() - 0.001).abs() < 1e-9);
        assert!((out.rows[1].latency_s.unwrap() - 0.1029).abs() < 1e-9);
        assert!(
            out.rows[3].latency_s.is_none(),
            "the flush never completed here"
        );
        assert_eq!(out.rows[4].device, "7:4");
        assert_eq!(out.rows[4].bytes, 1_048_576);
    }

    #[test]
    fn rwbs_strings() {
        assert_eq!(IoOp::from_rwbs("R"), IoOp::Read);
        assert_eq!(IoOp::from_rwbs("RM"), IoOp::Read);
        assert_eq!(IoOp::from_rwbs("FWFS"), IoOp::Write);
        assert_eq!(IoOp::from_rwbs("WFS"), IoOp::Write);
        assert_eq!(IoOp::from_rwbs("FN"), IoOp::Flush);
        assert_eq!(IoOp::from_rwbs("F"), IoOp::Flush);
        assert_eq!(IoOp::from_rwbs("D"), IoOp::Discard);
        assert_eq!(IoOp::from_rwbs("N"), IoOp::Other);
    }

    #[test]
    fn lost_events_and_odd_lines_are_said() {
        let text = TRACE.replace("8/8", "8/11")
            + "garbage here\n  x-1 [000] ..... 1.0: block_rq_issue: 7 R 4096 () 1 + 8 x [x]\n";
        let out = parse(&text, 100.0);
        assert!(out.partial);
        assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
        assert!(out
            .warnings
            .iter()
            .any(|w| w.reason.contains("3 events were lost")));
        assert!(out.warnings.iter().any(|w| w.reason.contains("MAJ,MIN")));
        assert_eq!(out.rows.len(), 5);
    }

    #[test]
    fn summary_counts_seeks_between_data_requests() {
        let out = parse(TRACE, 100.0);
        let s = IoSummary::from_rows(&out.rows, 2.0);
        assert_eq!(s.requests, 5);
        assert_eq!((s.reads, s.writes), (2, 1));
        assert_eq!(s.bytes, 4096 + 65536 + 4096 + 1_048_576);
        // 2048+8 → 2056 is sequential; then 2056+128=2184 → 999999 is a seek; the flush
        // and the discard (another device) are not data requests.
        assert_eq!(s.seeks, 1);
        assert_eq!(s.seek_distance_bytes, (999_999 - 2184) * 512);
        assert!((s.seeks_per_s - 0.5).abs() < 1e-12);
        assert!((s.mb_per_s - s.bytes as f64 / 2e6).abs() < 1e-12);
        assert_eq!(IoSummary::from_rows(&[], 0.0).seeks_per_s, 0.0);
    }
}
