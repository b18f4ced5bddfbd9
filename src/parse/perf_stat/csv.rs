//! `perf stat -x,` (CSV) output: one [`PerfStatRow`] per counter line.
//!
//! ```text
//! 4.33,msec,task-clock,4330939,100.00,0.045,CPUs utilized
//! <not supported>,,cycles,0,100.00,,
//! ```
//!
//! The fields are: value, unit, event, the cgroup (with `-G` or `--for-each-cgroup`),
//! the counter's run time (ns), the percentage of the run it was counted (below 100
//! when multiplexed), and a derived metric with its unit. Three variants are read:
//! - with `-r N`, a variance field (`7.45%`) follows the event (and the cgroup);
//! - with `-I MS`, each line starts with the interval's time stamp (seconds);
//! - with `-A`/`--per-core`/`--per-socket`/`--per-die`, a line starts with the CPU
//!   (`CPU3`) or the aggregate's id and its number of CPUs (`S0,2`, `S0-D0,2`,
//!   `S0-D0-C1,2`).
//!
//! - `-I` with `-A` or an aggregation: the time stamp, then the CPU or aggregate.
//!
//! perf prints the cgroup right after the event (`print_cgroup` in
//! tools/perf/util/stat-display.c): the field after the event is the cgroup when it is
//! neither the run time (a count) nor the variance (`7.45%`): a name such as `/`,
//! `system.slice` or `user.slice/user-1000.slice`, or empty for an event outside any
//! cgroup.
//!
//! Every field must read as what its place holds (a number where a count is, an event
//! name that is not a number), so a line of another layout is a warning, not a row of
//! shifted fields. perf's lines of a counter's further metrics (`,,,,,87.9,%  tma_bad_speculation`,
//! and `S0,1,,,,,,,1.27,stalled cycles per insn`) carry no counter: they are warnings.
//! `--per-thread` lines start with the thread (`python3-21698,11.17,msec,task-clock,…`):
//! the row's `thread`. A `--metric-only` table (a header naming the metrics, then lines of
//! their values) gives a row per value ([`metric_only`]).
//!
//! The separator is `,` unless a line splits into these fields only with `;`, tab or
//! `|` (`-x ';'`). `<not supported>` and `<not counted>` counters are rows with no value
//! and that status. Lines that are not counter lines (the workload's own stderr,
//! `#` comments) are warnings, never errors: perf writes to the same stream.

use super::metric_only::{self, CsvHeader};
use super::prefix::{is_aggregate, is_cpu, is_thread};
use super::{CounterStatus, PerfStatRow};
use crate::parse::{Output, ParseError, Warning};

const KIND: &str = "perf-stat";

fn is_num(s: &str) -> bool {
    s.trim().parse::<f64>().is_ok()
}

fn value_field(s: &str) -> Option<(Option<f64>, CounterStatus)> {
    match s.trim() {
        "<not supported>" => Some((None, CounterStatus::NotSupported)),
        "<not counted>" => Some((None, CounterStatus::NotCounted)),
        v => v.parse().ok().map(|x| (Some(x), CounterStatus::Counted)),
    }
}

fn opt(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// What comes before the value: the `-I` time stamp, then the CPU (`-A`) or the
/// aggregate and its number of CPUs (`--per-socket` …), each optional.
struct Prefix {
    time_s: Option<f64>,
    cpu: Option<String>,
    cpus: Option<u64>,
    /// `--per-thread`: `comm-pid`.
    thread: Option<String>,
    /// Fields taken.
    len: usize,
}

/// The prefixes `f` can start with, most specific first.
fn prefixes(f: &[&str]) -> Vec<Prefix> {
    let mut out = Vec::new();
    for timed in [false, true] {
        let t = if timed {
            match f.first().and_then(|s| s.trim().parse::<f64>().ok()) {
                Some(t) => Some(t),
                None => continue,
            }
        } else {
            None
        };
        let i = usize::from(timed);
        let Some(first) = f.get(i).map(|s| s.trim()) else {
            continue;
        };
        if is_cpu(first) {
            out.push(Prefix {
                time_s: t,
                cpu: Some(first.to_string()),
                cpus: None,
                thread: None,
                len: i + 1,
            });
        } else if is_aggregate(first) {
            if let Some(n) = f.get(i + 1).and_then(|n| n.trim().parse().ok()) {
                out.push(Prefix {
                    time_s: t,
                    cpu: Some(first.to_string()),
                    cpus: Some(n),
                    thread: None,
                    len: i + 2,
                });
            }
        } else if is_thread(first) {
            out.push(Prefix {
                time_s: t,
                cpu: None,
                cpus: None,
                thread: Some(first.to_string()),
                len: i + 1,
            });
        }
        out.push(Prefix {
            time_s: t,
            cpu: None,
            cpus: None,
            thread: None,
            len: i,
        });
    }
    out
}

/// `7.45%`: the variance field of `-r`.
fn is_variance(s: &str) -> bool {
    s.trim()
        .strip_suffix('%')
        .is_some_and(|x| x.parse::<f64>().is_ok())
}

/// The counter fields after the prefix: value, unit, event, [cgroup], [variance%], run
/// time, run %, and (newer perf) metric value and metric unit. Every field must read as
/// what it is, so that a line of another layout is not taken for this one.
fn counter(prefix: &Prefix, rest: &[&str]) -> Option<PerfStatRow> {
    [false, true]
        .into_iter()
        .find_map(|cgroup| counter_with(prefix, rest, cgroup))
}

/// [`counter`] with or without the cgroup field after the event. The cgroup is a name
/// (possibly empty), never a number or a variance, so the two layouts cannot both read
/// one line.
fn counter_with(prefix: &Prefix, rest: &[&str], cgroup: bool) -> Option<PerfStatRow> {
    let c = usize::from(cgroup);
    if cgroup && rest.get(3).is_none_or(|g| is_num(g) || is_variance(g)) {
        return None;
    }
    let variance = rest.get(3 + c).is_some_and(|v| is_variance(v));
    let k = 3 + c + usize::from(variance);
    if rest.len() != k + 2 && rest.len() != k + 4 {
        return None;
    }
    let (value, status) = value_field(rest[0])?;
    let unit = opt(rest[1]);
    let event = rest[2].trim();
    if event.is_empty() || is_num(event) || unit.as_deref().is_some_and(is_num) {
        return None;
    }
    let num_or_empty = |s: &str| s.trim().is_empty() || is_num(s);
    let run = rest[k].trim();
    if !(run.is_empty() || run.parse::<u64>().is_ok()) || !num_or_empty(rest[k + 1]) {
        return None;
    }
    if rest.get(k + 2).is_some_and(|m| !num_or_empty(m)) {
        return None;
    }
    Some(PerfStatRow {
        time_s: prefix.time_s,
        cpu: prefix.cpu.clone(),
        cpus: prefix.cpus,
        thread: prefix.thread.clone(),
        event: event.to_string(),
        cgroup: cgroup.then(|| rest[3].trim().to_string()),
        value,
        unit,
        status,
        variance_pct: if variance {
            rest[3 + c].trim().trim_end_matches('%').parse().ok()
        } else {
            None
        },
        run_time_ns: run.parse().ok(),
        run_pct: rest[k + 1].trim().parse().ok(),
        metric_value: rest.get(k + 2).and_then(|s| s.trim().parse().ok()),
        metric_unit: rest.get(k + 3).and_then(|s| opt(s)),
        runs: None,
    })
}

fn parse_line(line: &str, sep: char) -> Option<PerfStatRow> {
    let f: Vec<&str> = line.split(sep).collect();
    prefixes(&f).into_iter().find_map(|p| {
        let rest = f.get(p.len..)?;
        counter(&p, rest)
    })
}

/// Parse `perf stat -x SEP` output.
pub fn parse(text: &str) -> Result<Output<PerfStatRow>, ParseError> {
    let mut out = Output::default();
    // The `--metric-only` header the lines below are read under, its separator, and its
    // line while no line has been read under it (a warning if none is).
    let mut header: Option<(CsvHeader, char)> = None;
    let mut unused_header: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let seps = || [',', ';', '\t', '|'].into_iter().filter(|c| t.contains(*c));
        if let Some(rows) = header
            .as_ref()
            .and_then(|(h, sep)| metric_only::csv_rows(h, t, *sep))
        {
            out.rows.extend(rows);
            unused_header = None;
            continue;
        }
        if let Some(r) = seps().find_map(|sep| parse_line(t, sep)) {
            out.rows.push(r);
            continue;
        }
        if let Some(h) = seps().find_map(|sep| metric_only::csv_header(t, sep).map(|h| (h, sep))) {
            if let Some(u) = unused_header.replace(n) {
                warn_header(&mut out, u, text);
            }
            header = Some(h);
            continue;
        }
        out.warnings.push(Warning {
            line: n + 1,
            text: line.to_string(),
            reason: if t.starts_with('#') {
                "a comment".into()
            } else {
                "not a `perf stat -x` counter line (a metric-only line without its header, or the workload's own output)".into()
            },
        });
    }
    if let Some(u) = unused_header {
        warn_header(&mut out, u, text);
    }
    out.warnings.sort_by_key(|w| w.line);
    if out.rows.is_empty() {
        return Err(ParseError::NothingRecognised {
            kind: KIND,
            expected: "counter lines of `perf stat -x,` (value,unit,event,run time,%,metric,unit), or a `--metric-only` header and its lines; perf's human format is kind `perf-stat-human`",
        });
    }
    Ok(out)
}

/// A line read as a `--metric-only` header that no line followed.
fn warn_header(out: &mut Output<PerfStatRow>, n: usize, text: &str) {
    out.warnings.push(Warning {
        line: n + 1,
        text: text.lines().nth(n).unwrap_or_default().to_string(),
        reason: "names only, like a `--metric-only` header, but no line of values under it".into(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants() {
        let r = parse("1.001,4.33,msec,task-clock,4330939,100.00,0.045,CPUs utilized\n")
            .unwrap()
            .rows;
        assert_eq!(r[0].time_s, Some(1.001));
        assert_eq!(r[0].value, Some(4.33));
        let r = parse("CPU1,195,,block:block_rq_issue,535945091,100.00,,\n")
            .unwrap()
            .rows;
        assert_eq!(r[0].cpu.as_deref(), Some("CPU1"));
        assert_eq!(r[0].value, Some(195.0));
        assert_eq!(r[0].unit, None);
        let r = parse("S0-D0-C1,2,12.5,msec,task-clock,125000,100.00,1.2,CPUs utilized\n")
            .unwrap()
            .rows;
        assert_eq!(r[0].cpu.as_deref(), Some("S0-D0-C1"));
        assert_eq!(r[0].cpus, Some(2));
        assert_eq!(r[0].event, "task-clock");
        // -I with -A: the time stamp, then the CPU.
        let r = parse("     1.001034215,CPU3,123,,cycles,1000,100.00,,\n")
            .unwrap()
            .rows;
        assert_eq!(
            (r[0].time_s, r[0].cpu.as_deref(), r[0].value),
            (Some(1.001034215), Some("CPU3"), Some(123.0))
        );
        assert_eq!(r[0].event, "cycles");
        // -G: the cgroup after the event, with and without -r; an empty cgroup name.
        let r = parse("202.07,msec,task-clock,/,0.02%,203847766,100.00,1.999,CPUs utilized\n")
            .unwrap()
            .rows;
        assert_eq!(
            (r[0].cgroup.as_deref(), r[0].variance_pct, r[0].run_time_ns),
            (Some("/"), Some(0.02), Some(203_847_766))
        );
        let r = parse("5,,cycles,,1000,100.00,,\n").unwrap().rows;
        assert_eq!(
            (r[0].cgroup.as_deref(), r[0].run_time_ns),
            (Some(""), Some(1000))
        );
        let r = parse("5,,cycles,1000,100.00,,\n").unwrap().rows;
        assert_eq!(
            (r[0].cgroup.as_deref(), r[0].run_time_ns),
            (None, Some(1000))
        );
        let r = parse("<not counted>,,cycles,0,0.00,,\n").unwrap().rows;
        assert_eq!(r[0].status, CounterStatus::NotCounted);
        assert!(parse("100+0 records in\n").is_err());
    }
}
