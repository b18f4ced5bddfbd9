//! fio results: `--output-format=json` (and `json+`) and the terse format that old
//! mails contain (`--output-format=terse`, or `--minimal`; `--terse-version=3`, the
//! default, 4 or 5). One
//! [`FioRow`] per job and data direction (`read`, `write`, `trim`, or `mixed` with
//! `unified_rw_reporting`) that did any I/O.
//!
//! Units are fio's own where fio states them, and one unit per column otherwise:
//! bytes and bytes/s for sizes and bandwidth, nanoseconds for latencies, milliseconds
//! for the runtime. JSON of fio ≥ 3 gives latencies in ns (`clat_ns`, `slat_ns`,
//! `lat_ns`); fio 2's JSON (`clat`, `slat`, `lat`) and the terse format give µs, which are
//! multiplied by 1000 (exact). Terse sizes are KiB (× 1024). fio's JSON `io_bytes` was
//! KiB until fio 2.21 (fio commit c12d597a, "stat: correct json 'io_bytes' output"), which
//! made it bytes and added `io_kbytes`: without `io_kbytes` beside it, `io_bytes` is KiB
//! (× 1024).
//!
//! Completion-latency percentiles become columns `clat_p<percent>_ns`, the percent
//! written with `_` for its point and without trailing zeros (`99.900000` →
//! `clat_p99_9_ns`): whatever list fio printed (`--percentile_list`), each value as fio
//! gave it. The unused slots fio 2 prints (`"0.00" : 0` in JSON, `0%=0` in terse) are
//! not percentiles and give no column. json+'s histogram bins are not kept. A job's options are its own
//! `job options` over the file's `global options`.
//!
//! Terse versions differ in their direction blocks (fio's stat.c,
//! `show_thread_status_terse_all`): v3 prints read and write, v4 and v5 read, write and
//! trim; v5 adds 6 fields to each (bandwidth samples; IOPS min, max, mean, stddev,
//! samples), which no column keeps. With `unified_rw_reporting=1` fio ≥ 3.27 prints
//! one block, `mixed`; with `both`, `mixed` after the others. The number of blocks is
//! read off the line (the CPU usage that follows them starts with a percentage), never
//! assumed. Two things a terse line does not say: before fio 3.27,
//! `unified_rw_reporting=1` printed the mixed numbers in the read block (a `read` row
//! then); and with `lat_percentiles=1` the percentile slots hold total-latency
//! percentiles, which the `clat_p…` columns cannot tell apart.

use super::{Output, ParseError, Warning};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One job's results in one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FioRow {
    /// `fio-3.33`.
    pub fio_version: Option<String>,
    /// 0-based position of the job in the output (`numjobs=2` gives two jobs of one name).
    pub job: u64,
    pub jobname: String,
    pub groupid: i64,
    /// fio's error code for the job (0: none).
    pub error: i64,
    /// `read`, `write`, `trim`, or `mixed` (`unified_rw_reporting`).
    pub direction: String,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub io_bytes: u64,
    pub runtime_ms: u64,
    /// Completed I/Os (JSON only).
    pub total_ios: Option<u64>,
    pub slat_min_ns: Option<f64>,
    pub slat_max_ns: Option<f64>,
    pub slat_mean_ns: Option<f64>,
    pub slat_stddev_ns: Option<f64>,
    pub clat_min_ns: Option<f64>,
    pub clat_max_ns: Option<f64>,
    pub clat_mean_ns: Option<f64>,
    pub clat_stddev_ns: Option<f64>,
    /// Total latency (submission + completion), when fio printed it.
    pub lat_min_ns: Option<f64>,
    pub lat_max_ns: Option<f64>,
    pub lat_mean_ns: Option<f64>,
    pub lat_stddev_ns: Option<f64>,
    pub rw: Option<String>,
    pub bs: Option<String>,
    pub iodepth: Option<String>,
    pub ioengine: Option<String>,
    pub direct: Option<String>,
    pub numjobs: Option<String>,
    pub size: Option<String>,
    /// `clat_p<percent>_ns` → value, in the order fio printed them.
    #[serde(flatten)]
    pub clat_percentiles: BTreeMap<String, f64>,
}

const KIND: &str = "fio";
const KIND_TERSE: &str = "fio-terse";

fn malformed(kind: &'static str, line: usize, message: impl Into<String>) -> ParseError {
    ParseError::Malformed {
        kind,
        line,
        message: message.into(),
    }
}

/// `99.900000` → `clat_p99_9_ns`.
pub fn percentile_column(percent: &str) -> String {
    let p = percent.trim().trim_end_matches('%');
    let p = if p.contains('.') {
        p.trim_end_matches('0').trim_end_matches('.')
    } else {
        p
    };
    format!("clat_p{}_ns", p.replace('.', "_"))
}

fn f(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn u(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|x| x.max(0.0) as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn opt_str(opts: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    opts.get(key).map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// fio's per-priority latencies in a direction's JSON object (with `cmdprio_percentage`
/// and the like): fio 3.18 to 3.29's `clat_high_prio`/`clat_low_prio` objects
/// (`lat_high_prio`/`lat_low_prio` with `lat_percentiles=1`), fio 3.30's `prios` list
/// (fio commit 1cbbba65). No column keeps them: each is a warning.
const PRIO_KEYS: &[&str] = &[
    "clat_high_prio",
    "clat_low_prio",
    "lat_high_prio",
    "lat_low_prio",
    "prios",
];

/// The 1-based line of `"key"` in `lines`, searched from `*from` on (the keys are met in
/// the document's order), else from the start; `*from` moves past it.
fn key_line(lines: &[&str], from: &mut usize, key: &str) -> usize {
    let quoted = format!("\"{key}\"");
    let found = (*from..lines.len())
        .chain(0..*from)
        .find(|n| lines[*n].contains(&quoted));
    match found {
        Some(n) => {
            *from = n + 1;
            n + 1
        }
        None => *from,
    }
}

/// fio prints warnings and errors before the JSON document (`fio: ...` lines); the
/// document is the first line that is exactly `{`.
fn json_start(text: &str) -> Option<(usize, usize)> {
    let mut offset = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_end() == "{" {
            return Some((offset, n));
        }
        offset += line.len();
    }
    None
}

/// Parse fio's JSON or json+ output.
pub fn parse_json(text: &str) -> Result<Output<FioRow>, ParseError> {
    let Some((start, skipped)) = json_start(text) else {
        return Err(ParseError::NothingRecognised {
            kind: KIND,
            expected: "a JSON document from `fio --output-format=json`",
        });
    };
    let mut out = Output::default();
    for (n, line) in text.lines().take(skipped).enumerate() {
        if !line.trim().is_empty() {
            out.warnings.push(Warning {
                line: n + 1,
                text: line.to_string(),
                reason: "printed by fio before its JSON".into(),
            });
        }
    }
    // `--output-format=normal,json` prints the normal results after the document: read
    // the first JSON value, and the lines after it are warnings.
    let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let doc: Value = match values.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            return Err(malformed(
                KIND,
                skipped + e.line(),
                format!("not fio's JSON: {e} (column {})", e.column()),
            ))
        }
        None => {
            return Err(malformed(KIND, skipped + 1, "no JSON document after `{`"));
        }
    };
    let end = start + values.byte_offset();
    let after_line = text[..end].lines().count();
    for (n, line) in text[end..].lines().enumerate() {
        if !line.trim().is_empty() {
            out.warnings.push(Warning {
                line: after_line + n,
                text: line.to_string(),
                reason: "printed by fio after its JSON (`--output-format=normal,json`)".into(),
            });
        }
    }
    let version = doc
        .get("fio version")
        .and_then(Value::as_str)
        .map(str::to_string);
    let global = doc
        .get("global options")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let Some(jobs) = doc.get("jobs").and_then(Value::as_array) else {
        return Err(malformed(
            KIND,
            skipped + 1,
            "the document has no `jobs` list",
        ));
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut cursor = skipped;
    for (i, job) in jobs.iter().enumerate() {
        let mut opts = global.clone();
        if let Some(o) = job.get("job options").and_then(Value::as_object) {
            opts.extend(o.clone());
        }
        let jobname = job
            .get("jobname")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| malformed(KIND, skipped + 1, format!("job {i} has no jobname")))?;
        for dir in ["read", "write", "trim", "mixed"] {
            let Some(d) = job.get(dir) else { continue };
            // fio < 2.21 printed KiB as `io_bytes`, and no `io_kbytes`.
            let kib = d.get("io_kbytes").and_then(u);
            let io_bytes = match (d.get("io_bytes").and_then(u), kib) {
                (Some(b), Some(_)) => b,
                (Some(k), None) => k.saturating_mul(1024),
                (None, Some(k)) => k.saturating_mul(1024),
                (None, None) => 0,
            };
            let total_ios = d.get("total_ios").and_then(u);
            if io_bytes == 0 && total_ios.unwrap_or(0) == 0 {
                continue;
            }
            for key in PRIO_KEYS {
                let Some(v) = d.get(*key) else { continue };
                if v.as_array().is_some_and(|a| a.is_empty()) {
                    continue;
                }
                let line = key_line(&lines, &mut cursor, key);
                out.warnings.push(Warning {
                    line,
                    text: lines.get(line.wrapping_sub(1)).map_or("", |l| l.trim()).into(),
                    reason: format!(
                        "fio's per-priority latencies (`{key}`) of job `{jobname}`, `{dir}`: not kept, no column holds them"
                    ),
                });
            }
            // fio ≥ 3: `<x>_ns` in ns; fio 2: `<x>` in µs.
            let lat = |name: &str| -> (Option<&Value>, f64) {
                match d.get(format!("{name}_ns")) {
                    Some(v) => (Some(v), 1.0),
                    None => (d.get(name), 1000.0),
                }
            };
            let stat = |name: &str, field: &str| -> Option<f64> {
                let (v, scale) = lat(name);
                v.and_then(|v| v.get(field)).and_then(f).map(|x| x * scale)
            };
            let mut row = FioRow {
                fio_version: version.clone(),
                job: i as u64,
                jobname: jobname.clone(),
                groupid: job.get("groupid").and_then(Value::as_i64).unwrap_or(0),
                error: job.get("error").and_then(Value::as_i64).unwrap_or(0),
                direction: dir.to_string(),
                iops: d.get("iops").and_then(f).unwrap_or(0.0),
                bw_bytes_per_s: d
                    .get("bw_bytes")
                    .and_then(f)
                    .or_else(|| d.get("bw").and_then(f).map(|k| k * 1024.0))
                    .unwrap_or(0.0),
                io_bytes,
                runtime_ms: d.get("runtime").and_then(u).unwrap_or(0),
                total_ios,
                slat_min_ns: stat("slat", "min"),
                slat_max_ns: stat("slat", "max"),
                slat_mean_ns: stat("slat", "mean"),
                slat_stddev_ns: stat("slat", "stddev"),
                clat_min_ns: stat("clat", "min"),
                clat_max_ns: stat("clat", "max"),
                clat_mean_ns: stat("clat", "mean"),
                clat_stddev_ns: stat("clat", "stddev"),
                lat_min_ns: stat("lat", "min"),
                lat_max_ns: stat("lat", "max"),
                lat_mean_ns: stat("lat", "mean"),
                lat_stddev_ns: stat("lat", "stddev"),
                rw: opt_str(&opts, "rw").or_else(|| opt_str(&opts, "readwrite")),
                bs: opt_str(&opts, "bs").or_else(|| opt_str(&opts, "blocksize")),
                iodepth: opt_str(&opts, "iodepth"),
                ioengine: opt_str(&opts, "ioengine"),
                direct: opt_str(&opts, "direct"),
                numjobs: opt_str(&opts, "numjobs"),
                size: opt_str(&opts, "size"),
                clat_percentiles: BTreeMap::new(),
            };
            let (clat, scale) = lat("clat");
            if let Some(p) = clat
                .and_then(|c| c.get("percentile"))
                .and_then(Value::as_object)
            {
                for (k, v) in p {
                    // fio 2 fills the unused slots of its list with `"0.00" : 0`.
                    if !k.trim().parse::<f64>().is_ok_and(|p| p > 0.0) {
                        continue;
                    }
                    if let Some(x) = f(v) {
                        row.clat_percentiles.insert(percentile_column(k), x * scale);
                    }
                }
            }
            out.rows.push(row);
        }
    }
    if out.rows.is_empty() && jobs.is_empty() {
        return Err(malformed(KIND, skipped + 1, "the `jobs` list is empty"));
    }
    Ok(out)
}

/// The fields of one direction in terse v3 and v4 (`show_ddir_status_terse` in fio's
/// stat.c): total KiB, KiB/s, IOPS, runtime ms; slat, clat (min, max, mean, stddev,
/// µs); 20 clat percentiles `P%=V`; total latency (4); bandwidth (min, max, aggregate %,
/// mean, stddev). Version 5 adds the bandwidth's number of samples and IOPS (min, max,
/// mean, stddev, samples): 6 more.
const TERSE_DIR_FIELDS: usize = 4 + 4 + 4 + 20 + 4 + 5;

/// Offset of the bandwidth's aggregate share (`87.378491%`) in a direction's fields.
const TERSE_AGG_PCT: usize = 4 + 4 + 4 + 20 + 4 + 2;

/// What follows the directions: CPU (user %, system %, context switches, major and
/// minor faults), 7 I/O depths, 10 µs and 12 ms latency buckets. Disk utilisation,
/// errors and the description may follow; they are not read.
const TERSE_TAIL_FIELDS: usize = 5 + 7 + 10 + 12;

fn terse_dir_fields(version: u32) -> usize {
    TERSE_DIR_FIELDS + if version == 5 { 6 } else { 0 }
}

/// The directions of a terse line with `blocks` direction blocks (stat.c's
/// `show_thread_status_terse_all`): read and write (v3), read, write and trim (v4, v5);
/// with `unified_rw_reporting=1` one block, `mixed`; with `unified_rw_reporting=both`
/// the separate ones, then `mixed` (fio ≥ 3.27 for both).
fn terse_directions(version: u32, blocks: usize) -> Option<&'static [&'static str]> {
    match (version, blocks) {
        (_, 1) => Some(&["mixed"]),
        (3, 2) => Some(&["read", "write"]),
        (3, 3) => Some(&["read", "write", "mixed"]),
        (4 | 5, 3) => Some(&["read", "write", "trim"]),
        (4 | 5, 4) => Some(&["read", "write", "trim", "mixed"]),
        _ => None,
    }
}

/// How many direction blocks a terse line holds: the block after the last one starts
/// with the CPU's user share (`12.5%`), a direction's first field is a KiB count. Every
/// block's aggregate share must be a percentage, so a line of another layout is an
/// error, not rows of shifted fields.
fn terse_blocks(fields: &[&str], version: u32, line_no: usize) -> Result<usize, ParseError> {
    let width = terse_dir_fields(version);
    let mut blocks = 0;
    loop {
        let at = 5 + blocks * width;
        let Some(first) = fields.get(at) else {
            return Err(malformed(
                KIND_TERSE,
                line_no,
                format!(
                    "the line ends after {} fields, before the CPU usage",
                    fields.len()
                ),
            ));
        };
        if first.ends_with('%') {
            return Ok(blocks);
        }
        if blocks == 4 {
            return Err(malformed(
                KIND_TERSE,
                line_no,
                format!(
                    "field {} is `{first}`, not the CPU's user share after 4 directions",
                    at + 1
                ),
            ));
        }
        let pct = at + TERSE_AGG_PCT;
        match fields.get(pct) {
            Some(p) if p.ends_with('%') => blocks += 1,
            Some(p) => {
                return Err(malformed(
                    KIND_TERSE,
                    line_no,
                    format!(
                        "field {} is `{p}`, not the bandwidth's share of the group (`…%`) that terse version {version} has there",
                        pct + 1
                    ),
                ))
            }
            None => {
                return Err(malformed(
                    KIND_TERSE,
                    line_no,
                    format!("the line ends after {} fields, inside a direction's", fields.len()),
                ))
            }
        }
    }
}

/// Parse terse (`--minimal`) output, versions 3, 4 and 5: one line per job,
/// `;`-separated.
pub fn parse_terse(text: &str) -> Result<Output<FioRow>, ParseError> {
    let mut out = Output::default();
    let mut job = 0u64;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let fields: Vec<&str> = t.split(';').collect();
        let version = fields[0].parse::<u32>().ok();
        if fields.len() < 40 || version.is_none() {
            out.warnings.push(Warning {
                line: line_no,
                text: line.to_string(),
                reason: "not a terse result line".into(),
            });
            continue;
        }
        let version = version.unwrap_or_default();
        if !(3..=5).contains(&version) {
            return Err(malformed(
                KIND_TERSE,
                line_no,
                format!("terse version {version}; this parser reads versions 3, 4 and 5 (`--terse-version=3|4|5`)"),
            ));
        }
        let blocks = terse_blocks(&fields, version, line_no)?;
        let Some(directions) = terse_directions(version, blocks) else {
            return Err(malformed(
                KIND_TERSE,
                line_no,
                format!("{blocks} direction blocks before the CPU usage; terse version {version} prints {}", if version == 3 { "1 (mixed), 2 or 3" } else { "1 (mixed), 3 or 4" }),
            ));
        };
        let tail = 5 + blocks * terse_dir_fields(version);
        if fields.len() < tail + TERSE_TAIL_FIELDS || !fields[tail + 1].ends_with('%') {
            return Err(malformed(
                KIND_TERSE,
                line_no,
                "the CPU usage, I/O depths and latency buckets after the directions are cut short",
            ));
        }
        let num = |i: usize| -> Result<f64, ParseError> {
            fields[i].trim_end_matches('%').parse::<f64>().map_err(|_| {
                malformed(
                    KIND_TERSE,
                    line_no,
                    format!("field {} is `{}`, not a number", i + 1, fields[i]),
                )
            })
        };
        let jobname = fields[2].to_string();
        let groupid = num(3)? as i64;
        let error = num(4)? as i64;
        for (d, dir) in directions.iter().enumerate() {
            let b = 5 + d * terse_dir_fields(version);
            let kib = num(b)?;
            if kib == 0.0 {
                continue;
            }
            let us = |i: usize| num(b + i).map(|v| Some(v * 1000.0));
            let mut row = FioRow {
                fio_version: Some(fields[1].to_string()),
                job,
                jobname: jobname.clone(),
                groupid,
                error,
                direction: dir.to_string(),
                io_bytes: (kib * 1024.0) as u64,
                bw_bytes_per_s: num(b + 1)? * 1024.0,
                iops: num(b + 2)?,
                runtime_ms: num(b + 3)? as u64,
                slat_min_ns: us(4)?,
                slat_max_ns: us(5)?,
                slat_mean_ns: us(6)?,
                slat_stddev_ns: us(7)?,
                clat_min_ns: us(8)?,
                clat_max_ns: us(9)?,
                clat_mean_ns: us(10)?,
                clat_stddev_ns: us(11)?,
                lat_min_ns: us(32)?,
                lat_max_ns: us(33)?,
                lat_mean_ns: us(34)?,
                lat_stddev_ns: us(35)?,
                ..Default::default()
            };
            for i in 12..32 {
                let Some((p, v)) = fields[b + i].split_once('=') else {
                    return Err(malformed(
                        KIND_TERSE,
                        line_no,
                        format!(
                            "field {} is `{}`, not a percentile `P%=V`",
                            b + i + 1,
                            fields[b + i]
                        ),
                    ));
                };
                // Unused slots print as `0%=0`.
                if p.trim_end_matches('%')
                    .parse::<f64>()
                    .is_ok_and(|x| x > 0.0)
                {
                    let v: f64 = v.parse().map_err(|_| {
                        malformed(
                            KIND_TERSE,
                            line_no,
                            format!("percentile `{}`", fields[b + i]),
                        )
                    })?;
                    row.clat_percentiles
                        .insert(percentile_column(p), v * 1000.0);
                }
            }
            out.rows.push(row);
        }
        job += 1;
    }
    if out.rows.is_empty()
        && out.warnings.len() == text.lines().filter(|l| !l.trim().is_empty()).count()
    {
        return Err(ParseError::NothingRecognised {
            kind: KIND_TERSE,
            expected:
                "`3;fio-…;job;…` lines from `fio --output-format=terse` (terse versions 3, 4, 5)",
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_columns() {
        assert_eq!(percentile_column("99.900000"), "clat_p99_9_ns");
        assert_eq!(percentile_column("50.000000"), "clat_p50_ns");
        assert_eq!(percentile_column("99.990000%"), "clat_p99_99_ns");
        assert_eq!(percentile_column("5"), "clat_p5_ns");
    }

    #[test]
    fn fio_2_json_latencies_are_in_microseconds() {
        let text = r#"{
  "fio version" : "fio-2.2.10",
  "jobs" : [ { "jobname" : "j", "groupid" : 0, "error" : 0,
    "read" : { "io_bytes" : 4096, "bw" : 4, "iops" : 1.0, "runtime" : 1000,
      "slat" : { "min" : 1, "max" : 2, "mean" : 1.5, "stddev" : 0.5 },
      "clat" : { "min" : 10, "max" : 20, "mean" : 15.0, "stddev" : 5.0,
        "percentile" : { "50.000000" : 14, "99.000000" : 20 } },
      "lat" : { "min" : 11, "max" : 22, "mean" : 16.5, "stddev" : 5.5 } },
    "write" : { "io_bytes" : 0, "bw" : 0, "iops" : 0.0, "runtime" : 0 } } ]
}"#;
        let out = parse_json(text).unwrap();
        assert_eq!(out.rows.len(), 1);
        let r = &out.rows[0];
        assert_eq!(r.clat_mean_ns, Some(15_000.0));
        assert_eq!(r.clat_percentiles["clat_p50_ns"], 14_000.0);
        assert_eq!(r.lat_max_ns, Some(22_000.0));
        assert_eq!(r.bw_bytes_per_s, 4096.0);
    }

    /// fio 3.30's `prios` list (made up here from fio 3.30's stat.c,
    /// `add_ddir_status_json`; tests/it/parse_world.rs reads fio 3.29's real
    /// `clat_high_prio`): a warning at its line, the row as without it.
    #[test]
    fn per_priority_latencies_are_warnings() {
        let text = r#"{
  "fio version" : "fio-3.30",
  "jobs" : [ { "jobname" : "j", "groupid" : 0, "error" : 0,
    "read" : { "io_bytes" : 4096, "io_kbytes" : 4, "bw" : 4, "iops" : 1.0,
      "runtime" : 1000,
      "clat_ns" : { "min" : 10, "max" : 20, "mean" : 15.0, "stddev" : 5.0 },
      "prios" : [
        { "prioclass" : 1, "prio" : 0,
          "clat_ns" : { "min" : 10, "max" : 12, "mean" : 11.0, "stddev" : 1.0 } },
        { "prioclass" : 0, "prio" : 0,
          "clat_ns" : { "min" : 12, "max" : 20, "mean" : 16.0, "stddev" : 4.0 } } ] },
    "write" : { "io_bytes" : 0, "io_kbytes" : 0, "bw" : 0, "iops" : 0.0, "runtime" : 0,
      "prios" : [ ] } } ]
}"#;
        let out = parse_json(text).unwrap();
        assert_eq!(out.rows.len(), 1);
        assert_eq!(out.rows[0].clat_mean_ns, Some(15.0));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        let w = &out.warnings[0];
        assert_eq!((w.line, w.text.as_str()), (7, r#""prios" : ["#));
        assert!(w.reason.contains("`prios`") && w.reason.contains("`read`"));
    }

    /// A terse line with `blocks` direction blocks of `width` fields, the first one
    /// 4 KiB in 1 ms, then the CPU usage and the buckets.
    fn terse_line(version: u32, blocks: usize, width: usize) -> String {
        let mut f: Vec<String> = vec![
            version.to_string(),
            "fio-3.36".into(),
            "j".into(),
            "0".into(),
            "0".into(),
        ];
        for b in 0..blocks {
            let mut d = vec!["0".to_string(); width];
            if b == 0 {
                d[0] = "4".into();
                d[3] = "1".into();
            }
            for (i, p) in d.iter_mut().enumerate().skip(12).take(20) {
                *p = if i == 12 {
                    "50.000000%=7".into()
                } else {
                    "0%=0".into()
                };
            }
            d[38] = "0.000000%".into();
            f.extend(d);
        }
        f.extend([
            "1.0%".to_string(),
            "2.0%".into(),
            "3".into(),
            "0".into(),
            "4".into(),
        ]);
        f.extend(std::iter::repeat_n("0.0%".to_string(), 29));
        f.join(";")
    }

    #[test]
    fn terse_versions_and_their_blocks() {
        let dirs = |line: &str| -> Vec<String> {
            parse_terse(line)
                .unwrap()
                .rows
                .into_iter()
                .map(|r| r.direction)
                .collect()
        };
        assert_eq!(dirs(&terse_line(3, 2, 41)), ["read"]);
        assert_eq!(dirs(&terse_line(3, 1, 41)), ["mixed"]);
        assert_eq!(dirs(&terse_line(4, 3, 41)), ["read"]);
        assert_eq!(dirs(&terse_line(5, 3, 47)), ["read"]);
        assert_eq!(dirs(&terse_line(5, 4, 47)), ["read"]);
        let r = &parse_terse(&terse_line(5, 3, 47)).unwrap().rows[0];
        assert_eq!((r.io_bytes, r.runtime_ms), (4096, 1));
        assert_eq!(r.clat_percentiles["clat_p50_ns"], 7000.0);
        // v4 has no trim-less layout of 2 blocks; v5's blocks read as v4's do not line up.
        for (line, want) in [
            (terse_line(4, 2, 41), "2 direction blocks"),
            (terse_line(4, 3, 47), "bandwidth's share"),
            (terse_line(2, 3, 41), "terse version 2"),
        ] {
            let e = parse_terse(&line).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        // Cut short inside the buckets: an error naming the line, not fewer fields read.
        let mut cut = terse_line(3, 2, 41);
        cut.truncate(cut.len() - 40);
        let e = parse_terse(&format!("\n{cut}\n")).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("cut short"), "{e}");
    }

    #[test]
    fn not_fio_output_is_a_clear_error() {
        assert!(matches!(
            parse_json("hello\n"),
            Err(ParseError::NothingRecognised { .. })
        ));
        let e = parse_json("fio: warn\n{\n  \"jobs\" : [ \n").unwrap_err();
        assert!(e.to_string().contains("not fio's JSON"), "{e}");
        assert!(matches!(
            parse_terse("nothing here\n"),
            Err(ParseError::NothingRecognised { .. })
        ));
    }
}
