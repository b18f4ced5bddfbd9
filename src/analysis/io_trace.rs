//! Block-request traces (`io.parquet`) → what the seekwatcher-style charts show: each
//! request's position against time, and per time bin the read and write throughput and
//! the seeks per second.

use super::AnalysisError;
use crate::parse::block_trace::{IoOp, IoRow};
use polars::prelude::{Column, DataFrame};
use std::collections::HashMap;

/// Rows of an `io.parquet` frame (columns `t_s`, `device`, `op`, `sector`, `bytes`;
/// `latency_s` optional), in the frame's order. With `point_id` given, only that point's.
pub fn rows_from_frame(
    df: &DataFrame,
    point_id: Option<&str>,
) -> Result<Vec<IoRow>, AnalysisError> {
    let t = super::f64_values(df, "io", "t_s")?;
    let sector = super::f64_values(df, "io", "sector")?;
    let bytes = super::f64_values(df, "io", "bytes")?;
    let op = super::str_values(df, "io", "op")?;
    let device = super::str_values(df, "io", "device")?;
    let latency = super::f64_values(df, "io", "latency_s").ok();
    let points = match point_id {
        Some(_) => Some(super::str_values(df, "io", "point_id")?),
        None => None,
    };
    let mut rows = Vec::with_capacity(t.len());
    for i in 0..t.len() {
        if let (Some(points), Some(want)) = (&points, point_id) {
            if points[i].as_deref() != Some(want) {
                continue;
            }
        }
        let op = match op[i].as_deref() {
            Some("read") => IoOp::Read,
            Some("write") => IoOp::Write,
            Some("flush") => IoOp::Flush,
            Some("discard") => IoOp::Discard,
            _ => IoOp::Other,
        };
        rows.push(IoRow {
            t_s: t[i].unwrap_or(f64::NAN),
            device: device[i].clone().unwrap_or_default(),
            op,
            rwbs: String::new(),
            sector: sector[i].unwrap_or(0.0) as u64,
            bytes: bytes[i].unwrap_or(0.0) as u64,
            latency_s: latency.as_ref().and_then(|l| l[i]),
        });
    }
    Ok(rows)
}

/// The step's name in a capture label (the `capture` column): `workload-01-e2fsck-it03` → `e2fsck` (the
/// runner's labels are `<phase>-<NN>-<name>`, with `-it<NN>` for an iteration, and an
/// `r<NN>-` prefix for the replicate when a point has more than one).
pub fn step_name(label: &str) -> &str {
    let unprefixed = label
        .split_once('-')
        .filter(|(r, _)| {
            r.len() > 1 && r.starts_with('r') && r[1..].bytes().all(|b| b.is_ascii_digit())
        })
        .map_or(label, |(_, rest)| rest);
    let label = unprefixed;
    let mut parts = label.splitn(3, '-');
    let (Some(_phase), Some(n), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return label;
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return label;
    }
    match rest.rsplit_once("-it") {
        Some((name, it)) if !it.is_empty() && it.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => rest,
    }
}

/// The one traced run of a point that a chart shows: its lowest traced iteration of the
/// first traced step that has iterations (else its first traced step), and a label for
/// it (`e2fsck, iteration 1`). A frame without `capture`/`iteration` columns is one run
/// (label None). With `point_id` None, the frame's first point.
pub fn first_run(
    df: &DataFrame,
    point_id: Option<&str>,
) -> Result<(DataFrame, Option<String>), AnalysisError> {
    let points = super::str_values(df, "io", "point_id").ok();
    let (Ok(capture), Ok(iteration)) = (
        super::str_values(df, "io", "capture"),
        super::i64_values(df, "io", "iteration"),
    ) else {
        return Ok((df.clone(), None));
    };
    let want_point = point_id
        .map(str::to_string)
        .or_else(|| points.as_ref().and_then(|p| p.first().cloned().flatten()));
    let of_point = |i: usize| match (&points, &want_point) {
        (Some(p), Some(w)) => p[i].as_deref() == Some(w.as_str()),
        _ => true,
    };
    let rows: Vec<usize> = (0..df.height()).filter(|&i| of_point(i)).collect();
    let chosen = rows
        .iter()
        .filter_map(|&i| iteration[i].map(|it| (it, i)))
        .min_by_key(|&(it, i)| (it, i))
        .map(|(it, i)| (capture[i].clone(), Some(it)))
        .or_else(|| rows.first().map(|&i| (capture[i].clone(), None)));
    let Some((cap, it)) = chosen else {
        return Ok((df.clone(), None));
    };
    let mask: polars::prelude::BooleanChunked = (0..df.height())
        .map(|i| Some(of_point(i) && capture[i] == cap && iteration[i] == it))
        .collect();
    let label = match (&cap, it) {
        (Some(c), Some(n)) => format!("{}, iteration {n}", step_name(c)),
        (Some(c), None) => step_name(c).to_string(),
        (None, Some(n)) => format!("iteration {n}"),
        (None, None) => String::new(),
    };
    Ok((df.filter(&mask)?, (!label.is_empty()).then_some(label)))
}

/// Per-bin rates of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct IoBins {
    pub bin_s: f64,
    /// The start of each bin, in seconds since the step started.
    pub t_s: Vec<f64>,
    pub read_mb_s: Vec<f64>,
    pub write_mb_s: Vec<f64>,
    pub seeks_per_s: Vec<f64>,
}

/// A bin width that gives about 100 bins over `span_s`, rounded to 1, 2 or 5 × 10ⁿ s.
pub fn default_bin(span_s: f64) -> f64 {
    let raw = (span_s / 100.0).max(1e-3);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&b| b >= raw)
        .unwrap_or(10.0 * p)
}

/// Bin `rows` (issue order) by issue time. A seek is a data request that does not start
/// where the previous data request on its device ended (as in [`crate::parse::block_trace::IoSummary`]).
pub fn bins(rows: &[IoRow], bin_s: f64) -> IoBins {
    let span = rows
        .iter()
        .map(|r| r.t_s)
        .filter(|t| t.is_finite())
        .fold(0.0f64, f64::max);
    let n = ((span / bin_s).floor() as usize + 1).max(1);
    let mut out = IoBins {
        bin_s,
        t_s: (0..n).map(|i| i as f64 * bin_s).collect(),
        read_mb_s: vec![0.0; n],
        write_mb_s: vec![0.0; n],
        seeks_per_s: vec![0.0; n],
    };
    let mut last_end: HashMap<&str, u64> = HashMap::new();
    for r in rows {
        if !r.t_s.is_finite() || !r.op.moves_data() {
            continue;
        }
        let i = ((r.t_s.max(0.0) / bin_s) as usize).min(n - 1);
        let mb = r.bytes as f64 / 1e6 / bin_s;
        match r.op {
            IoOp::Read => out.read_mb_s[i] += mb,
            _ => out.write_mb_s[i] += mb,
        }
        let start = r.sector * 512;
        if let Some(&end) = last_end.get(r.device.as_str()) {
            if start != end {
                out.seeks_per_s[i] += 1.0 / bin_s;
            }
        }
        last_end.insert(r.device.as_str(), start + r.bytes);
    }
    out
}

/// One traced run of a point as a chart draws it (see [`trace_frames`]).
#[derive(Debug, Clone)]
pub struct TraceFrames {
    /// The run drawn, when the frame holds several (`e2fsck, iteration 1`).
    pub run_label: Option<String>,
    /// One row per request, in issue order: `t_s` (seconds since the step started),
    /// `offset_mb` (its start on the device, in MB), `op` (`read`, `write`, `flush`,
    /// `discard`, `other`).
    pub requests: DataFrame,
    /// One row per time bin: `t_s` (the bin's start), `read_mb_s`, `write_mb_s`,
    /// `seeks_per_s` ([`bins`]).
    pub rates: DataFrame,
    /// The width of a bin, in seconds.
    pub bin_s: f64,
}

/// The rows of the run a chart of `point_id` shows ([`first_run`]), in issue order.
fn run_rows(
    io: &DataFrame,
    point_id: Option<&str>,
) -> Result<(Vec<IoRow>, Option<String>), AnalysisError> {
    let (run, run_label) = first_run(io, point_id)?;
    Ok((rows_from_frame(&run, point_id)?, run_label))
}

fn span_of(rows: &[IoRow]) -> f64 {
    rows.iter()
        .map(|r| r.t_s)
        .filter(|t| t.is_finite())
        .fold(0.0, f64::max)
}

/// The run of `point_id` a chart shows (its lowest traced iteration, [`first_run`]): its
/// requests and its rates per bin of `bin_s` seconds (by default [`default_bin`] of its
/// span). No request: empty frames.
pub fn trace_frames(
    io: &DataFrame,
    point_id: Option<&str>,
    bin_s: Option<f64>,
) -> Result<TraceFrames, AnalysisError> {
    let (rows, run_label) = run_rows(io, point_id)?;
    let bin_s = bin_s.unwrap_or_else(|| default_bin(span_of(&rows)));
    let b = bins(&rows, bin_s);
    let op_name = |op: IoOp| match op {
        IoOp::Read => "read",
        IoOp::Write => "write",
        IoOp::Flush => "flush",
        IoOp::Discard => "discard",
        IoOp::Other => "other",
    };
    let requests = DataFrame::new_infer_height(vec![
        Column::new(
            "t_s".into(),
            rows.iter().map(|r| r.t_s).collect::<Vec<f64>>(),
        ),
        Column::new(
            "offset_mb".into(),
            rows.iter()
                .map(|r| (r.sector * 512) as f64 / 1e6)
                .collect::<Vec<f64>>(),
        ),
        Column::new(
            "op".into(),
            rows.iter().map(|r| op_name(r.op)).collect::<Vec<&str>>(),
        ),
    ])?;
    let rates = DataFrame::new_infer_height(vec![
        Column::new("t_s".into(), b.t_s),
        Column::new("read_mb_s".into(), b.read_mb_s),
        Column::new("write_mb_s".into(), b.write_mb_s),
        Column::new("seeks_per_s".into(), b.seeks_per_s),
    ])?;
    Ok(TraceFrames {
        run_label,
        requests,
        rates,
        bin_s,
    })
}

/// One bin width for several points drawn side by side on the same scales: the
/// [`default_bin`] of the longest of their charted runs.
pub fn common_bin(io: &DataFrame, points: &[&str]) -> Result<f64, AnalysisError> {
    let mut span = 0.0f64;
    for p in points {
        span = span.max(span_of(&run_rows(io, Some(p))?.0));
    }
    Ok(default_bin(span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: f64, op: IoOp, sector: u64, bytes: u64) -> IoRow {
        IoRow {
            t_s: t,
            device: "7:1".into(),
            op,
            rwbs: String::new(),
            sector,
            bytes,
            latency_s: None,
        }
    }

    #[test]
    fn bins_sum_rates_and_seeks() {
        let rows = vec![
            row(0.05, IoOp::Read, 0, 1 << 20),
            row(0.06, IoOp::Read, 2048, 1 << 20), // sequential
            row(0.15, IoOp::Read, 10_000, 4096),  // seek
            row(0.16, IoOp::Flush, 0, 0),         // not data
            row(0.25, IoOp::Write, 0, 500_000),   // seek
        ];
        let b = bins(&rows, 0.1);
        assert_eq!(b.t_s.len(), 3);
        assert!((b.read_mb_s[0] - 2.0 * 1.048576 / 0.1).abs() < 1e-9);
        assert!((b.read_mb_s[1] - 0.04096).abs() < 1e-9);
        assert!((b.write_mb_s[2] - 5.0).abs() < 1e-9);
        assert_eq!(b.seeks_per_s[0], 0.0);
        assert!((b.seeks_per_s[1] - 10.0).abs() < 1e-9);
        assert!((b.seeks_per_s[2] - 10.0).abs() < 1e-9);
    }

    #[test]
    fn first_run_takes_the_lowest_iteration_of_the_point() {
        let df = polars::df!(
            "point_id" => ["a", "a", "a", "b", "a"],
            "capture" => ["setup-03-fill", "workload-01-fsck-it02", "workload-01-fsck-it01", "workload-01-fsck-it01", "workload-01-fsck-it01"],
            "iteration" => [None, Some(2i64), Some(1), Some(1), Some(1)],
            "t_s" => [0.0, 0.1, 0.2, 0.3, 0.4],
        )
        .unwrap();
        let (one, label) = first_run(&df, Some("a")).unwrap();
        assert_eq!(label.as_deref(), Some("fsck, iteration 1"));
        let t = crate::analysis::f64_values(&one, "io", "t_s").unwrap();
        assert_eq!(t, [Some(0.2), Some(0.4)]);
        // Only an untimed step traced: that step.
        let (one, label) = first_run(&df.head(Some(1)), None).unwrap();
        assert_eq!((one.height(), label.as_deref()), (1, Some("fill")));
        // No key columns: the frame is one run.
        let bare = df.select(["point_id", "t_s"]).unwrap();
        let (one, label) = first_run(&bare, Some("a")).unwrap();
        assert_eq!((one.height(), label), (5, None));
    }

    #[test]
    fn a_capture_label_names_its_step() {
        assert_eq!(step_name("workload-01-e2fsck-it03"), "e2fsck");
        assert_eq!(step_name("setup-04-fill"), "fill");
        assert_eq!(step_name("before_each-01-drop-it-it12"), "drop-it");
        assert_eq!(step_name("capture-02-dir-blocks"), "dir-blocks");
        assert_eq!(step_name("e2fsck"), "e2fsck");
        assert_eq!(step_name("r02-workload-01-e2fsck-it05"), "e2fsck");
        assert_eq!(step_name("r1-capture-02-dir-blocks"), "dir-blocks");
    }

    #[test]
    fn bin_widths_are_round() {
        assert_eq!(default_bin(10.0), 0.1);
        assert_eq!(default_bin(30.0), 0.5);
        assert_eq!(default_bin(150.0), 2.0);
        assert_eq!(default_bin(0.0), 0.001);
    }
}
