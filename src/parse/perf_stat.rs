//! `perf stat -x,` (CSV) output: one [`PerfStatRow`] per counter line.
//!
//! ```text
//! 4.33,msec,task-clock,4330939,100.00,0.045,CPUs utilized
//! <not supported>,,cycles,0,100.00,,
//! ```
//!
//! The fields are: value, unit, event, the counter's run time (ns), the percentage of
//! the run it was counted (below 100 when multiplexed), and a derived metric with its
//! unit. Three variants are read:
//! - with `-r N`, a variance field (`7.45%`) follows the event;
//! - with `-I MS`, each line starts with the interval's time stamp (seconds);
//! - with `-A`/`--per-core`/`--per-socket`/`--per-die`, a line starts with the CPU
//!   (`CPU3`) or the aggregate's id and its number of CPUs (`S0,2`, `S0-D0,2`,
//!   `S0-D0-C1,2`).
//!
//! The separator is `,` unless a line splits into these fields only with `;`, tab or
//! `|` (`-x ';'`). `<not supported>` and `<not counted>` counters are rows with no value
//! and that status. Lines that are not counter lines (the workload's own stderr,
//! `#` comments) are warnings, never errors: perf writes to the same stream.

use super::{Output, ParseError, Warning};
use serde::Serialize;

/// Whether perf could count the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterStatus {
    Counted,
    NotSupported,
    NotCounted,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerfStatRow {
    /// Seconds since the start, with `-I`.
    pub time_s: Option<f64>,
    /// `CPU3`, `S0`, `S0-D0-C1` with per-CPU or aggregated counting.
    pub cpu: Option<String>,
    /// How many CPUs an aggregate covers (`--per-socket` and the like).
    pub cpus: Option<u64>,
    pub event: String,
    pub value: Option<f64>,
    /// `msec` for task-clock; empty for counts.
    pub unit: Option<String>,
    pub status: CounterStatus,
    /// With `-r`: the standard deviation over the runs, in % of the mean.
    pub variance_pct: Option<f64>,
    pub run_time_ns: Option<u64>,
    /// Percentage of the run this counter was counted.
    pub run_pct: Option<f64>,
    pub metric_value: Option<f64>,
    pub metric_unit: Option<String>,
}

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

/// An aggregate id printed before the value: `S0`, `S0-D0`, `S0-D0-C1`, `N0`.
fn is_aggregate(s: &str) -> bool {
    let mut parts = s.split('-');
    parts.all(|p| {
        let mut c = p.chars();
        matches!(c.next(), Some('S' | 'D' | 'C' | 'N' | 'L'))
            && !c.as_str().is_empty()
            && c.as_str().chars().all(|d| d.is_ascii_digit())
    })
}

fn parse_line(line: &str, sep: char) -> Option<PerfStatRow> {
    let f: Vec<&str> = line.split(sep).collect();
    let mut i = 0;
    let mut cpu = None;
    let mut cpus = None;
    let mut time_s = None;
    if f.first().is_some_and(|c| c.starts_with("CPU")) {
        cpu = Some(f[0].to_string());
        i = 1;
    } else if f.first().is_some_and(|c| is_aggregate(c)) {
        cpu = Some(f[0].to_string());
        cpus = f.get(1).and_then(|n| n.trim().parse().ok());
        cpus?;
        i = 2;
    }
    let rest = &f[i..];
    // value, unit, event, [variance%], run time, run %, metric value, metric unit; with
    // -I the time stamp comes first.
    let (rest, variance) = match rest.len() {
        n if n >= 8 && rest[3].trim().ends_with('%') => (rest, true),
        n if n >= 8 && is_num(rest[0]) && value_field(rest[1]).is_some() => {
            time_s = rest[0].trim().parse().ok();
            (&rest[1..], false)
        }
        n if n >= 6 => (rest, false),
        _ => return None,
    };
    let (value, status) = value_field(rest[0])?;
    let event = rest[2].trim();
    if event.is_empty() {
        return None;
    }
    let k = if variance { 4 } else { 3 };
    let variance_pct = if variance {
        rest[3].trim().trim_end_matches('%').parse().ok()
    } else {
        None
    };
    let run_time_ns = rest.get(k).and_then(|s| s.trim().parse().ok());
    let run_pct = rest.get(k + 1).and_then(|s| s.trim().parse().ok());
    if rest
        .get(k)
        .is_some_and(|s| !s.trim().is_empty() && run_time_ns.is_none())
    {
        return None;
    }
    Some(PerfStatRow {
        time_s,
        cpu,
        cpus,
        event: event.to_string(),
        value,
        unit: opt(rest[1]),
        status,
        variance_pct,
        run_time_ns,
        run_pct,
        metric_value: rest.get(k + 2).and_then(|s| s.trim().parse().ok()),
        metric_unit: rest.get(k + 3).and_then(|s| opt(s)),
    })
}

/// Parse `perf stat -x SEP` output.
pub fn parse(text: &str) -> Result<Output<PerfStatRow>, ParseError> {
    let mut out = Output::default();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let row = [',', ';', '\t', '|']
            .into_iter()
            .filter(|c| t.contains(*c))
            .find_map(|sep| parse_line(t, sep));
        match row {
            Some(r) => out.rows.push(r),
            None => out.warnings.push(Warning {
                line: n + 1,
                text: line.to_string(),
                reason: if t.starts_with('#') {
                    "a comment".into()
                } else {
                    "not a `perf stat -x` counter line (perhaps the workload's own output)".into()
                },
            }),
        }
    }
    if out.rows.is_empty() {
        return Err(ParseError::NothingRecognised {
            kind: KIND,
            expected: "counter lines of `perf stat -x,` (value,unit,event,run time,%,metric,unit)",
        });
    }
    Ok(out)
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
        let r = parse("<not counted>,,cycles,0,0.00,,\n").unwrap().rows;
        assert_eq!(r[0].status, CounterStatus::NotCounted);
        assert!(parse("100+0 records in\n").is_err());
    }
}
