//! perf stat's default, human-readable output (kind `perf-stat-human`): the format
//! people paste into mails.
//!
//! ```text
//!  Performance counter stats for 'perf bench sched pipe' (10 runs):
//!
//!        814,886,355      cycles:u                  #    0.073 GHz                      ( +-  1.79% )
//!          11,112.19 msec task-clock:u              #    0.996 CPUs utilized            ( +-  0.18% )
//!      <not counted>      cpu_core/cycles/u                                             (0.00%)
//!
//!            11.1575 +- 0.0207 seconds time elapsed  ( +-  0.19% )
//! ```
//!
//! A counter line is, in perf's order (`abs_printout` and `printout` in
//! tools/perf/util/stat-display.c): the `-I` time stamp (`%6lu.%09lu`), the CPU (`CPU3`,
//! `-A`) or the aggregate and its number of CPUs (`S0        2`, `S0-D0-C1    2`,
//! `--per-socket`/`--per-die`/`--per-core`) or the thread (`python3-21698`,
//! `--per-thread`; a comm with a space in it is not read), the value (or `<not counted>` /
//! `<not supported>`), the unit (`msec`), the event, the cgroup (`-G`,
//! `--for-each-cgroup`), then `# value unit` of the derived metric, the variance of
//! `-r` (`( +-  1.79% )`, 2.6 kernels' `( +-   0.123% )`) and the share of the run the
//! counter was counted when multiplexed (`(75.01%)`; `[75.01%]` in perf 3.x;
//! `(scaled from 75.01%)` in 2.6 kernels).
//!
//! Values are printed with the locale's grouping (`%'.0f`, `%'.2f`): `1,234,567`,
//! `1.234.567` (de_DE), `1’234’567`, `1 234 567` (a no-break space), or none (C locale,
//! `--no-big-num`). perf prints counts without decimals and scaled values (msec) with 2
//! (6 before perf 4.x), so a separator followed by exactly three digits groups
//! thousands and any other is the decimal point. The decimal point the document uses
//! elsewhere (the trailer's `9,138776575 seconds`, metrics such as `1,000 CPUs utilized`)
//! must agree: a value that would read one way in the document's locale and another way
//! in a different one is a warning, not a number.
//!
//! The unit column has no marker of its own: the event is the only name after the value,
//! or the second when the first is a unit perf prints (`msec`, `ns`, `Joules`, …) or
//! when the second starts in the column where this block's events start; with a cgroup
//! the names are unit, event, cgroup. A line whose names fit none of these is a warning.
//! perf 3.14 to 4.x print task-clock's unit after the event (`task-clock (msec)`).
//!
//! Mails: quote marks (`> `) are not part of a line; a tab in the gap before a name
//! turns the column check off; a line holding only the variance or the share counted,
//! right under a row that printed none, is that row's (a mail wrapped the line).
//!
//! The trailer's times are rows with unit `s`: `seconds time elapsed` (with `-r`, its
//! variance), `seconds user`, `seconds sys`. The header's `(N runs)` fills
//! [`PerfStatRow::runs`] of the rows after it. A `--metric-only` table (`--topdown`'s
//! too: a header naming the metrics, lines of their values under it) gives a row per
//! value ([`super::metric_only`]). Lines that carry only a metric (`#` first: the second
//! metric of the counter above, TopdownL1's `tma_*` lines), headers of `-I` and perf's
//! hints are warnings, as is the workload's own output: perf writes to the same stream.

use super::metric_only::{self, HumanValues};
use super::number::{counter_value, plain_num, time_stamp};
use super::prefix::{is_aggregate, is_cpu, is_thread};
use super::{CounterStatus, PerfStatRow};
use crate::parse::{Output, ParseError, Warning};
use std::collections::HashMap;

const KIND: &str = "perf-stat-human";

/// Units perf prints before an event name: task-clock's `msec`, the tool events' `ns`,
/// and the scaled units of PMU events in sysfs (`power/energy-pkg/` in Joules,
/// `uncore_imc/cas_count_read/` in MiB).
const UNITS: [&str; 10] = [
    "msec", "ns", "us", "Joules", "MiB", "MB", "KiB", "GiB", "Watts", "Bytes",
];

/// A whitespace-separated token and its byte offset in the line. Only ASCII whitespace
/// separates: the no-break spaces of some locales group digits inside a value.
#[derive(Debug, Clone, Copy)]
struct Tok<'a> {
    at: usize,
    text: &'a str,
}

impl Tok<'_> {
    fn end(&self) -> usize {
        self.at + self.text.len()
    }
}

fn tokens(line: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_ascii_whitespace(), start) {
            (true, Some(s)) => {
                out.push(Tok {
                    at: s,
                    text: &line[s..i],
                });
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Tok {
            at: s,
            text: &line[s..],
        });
    }
    out
}

/// What comes after the counter's names: the metric, the variance, the share counted.
#[derive(Debug, Default, PartialEq)]
struct Tail {
    metric_value: Option<f64>,
    metric_unit: Option<String>,
    variance_pct: Option<f64>,
    run_pct: Option<f64>,
    decimals: Vec<char>,
}

/// `12.34%` or `12.34 %` inside an annotation.
fn percent(s: &str) -> Option<(f64, Option<char>)> {
    plain_num(s.trim().strip_suffix('%')?.trim_end())
}

/// Reads the annotations off the end of `s` (`( +-  1.79% )`, `(75.01%)`, `[75.01%]`,
/// `(scaled from 75.01%)`), then the metric `# value unit` that must be all that is left.
fn tail(s: &str) -> Option<Tail> {
    let mut t = Tail::default();
    let mut rest = s.trim_end();
    loop {
        let (open, close) = if rest.ends_with(')') {
            ('(', ')')
        } else if rest.ends_with(']') {
            ('[', ']')
        } else {
            break;
        };
        let Some(at) = rest.rfind(open) else { break };
        let inner = rest[at + 1..rest.len() - close.len_utf8()].trim();
        if let Some(noise) = inner.strip_prefix("+-").filter(|_| open == '(') {
            let (v, d) = percent(noise)?;
            t.variance_pct = Some(v);
            t.decimals.extend(d);
        } else {
            let share = inner.strip_prefix("scaled from").unwrap_or(inner);
            let Some((v, d)) = percent(share) else { break };
            t.run_pct = Some(v);
            t.decimals.extend(d);
        }
        rest = rest[..at].trim_end();
    }
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(t);
    }
    let metric = rest.strip_prefix('#')?.trim();
    let (first, unit) = match metric.split_once(|c: char| c.is_ascii_whitespace()) {
        Some((a, b)) => (a, b.trim()),
        None => (metric, ""),
    };
    // `59.89% frontend cycles idle`: the CSV gives 59.89 and `frontend cycles idle`.
    match plain_num(first.strip_suffix('%').unwrap_or(first)) {
        Some((v, d)) => {
            t.metric_value = Some(v);
            t.decimals.extend(d);
            t.metric_unit = (!unit.is_empty()).then(|| unit.to_string());
        }
        None => t.metric_unit = (!metric.is_empty()).then(|| metric.to_string()),
    }
    Some(t)
}

/// A counter line cut into its parts, before the names are told apart.
#[derive(Debug)]
struct Counter<'a> {
    time_s: Option<f64>,
    cpu: Option<String>,
    cpus: Option<u64>,
    thread: Option<String>,
    /// The value token(s) as printed; None for `<not …>`.
    value: Option<&'a str>,
    status: CounterStatus,
    /// Byte offset where the value ends (names are placed relative to it).
    value_end: usize,
    names: Vec<Tok<'a>>,
    /// perf 3.14 to 4.x print task-clock's unit after the event: `task-clock (msec)`.
    unit_after: Option<&'a str>,
    tail: Tail,
    /// The line (without a mail's quote marks), for the whitespace before a name.
    line: &'a str,
}

/// The prefixes a line can start with, most specific first: (time stamp, CPU or
/// aggregate, its number of CPUs, `--per-thread`'s thread, tokens taken).
type Prefix = (
    Option<f64>,
    Option<String>,
    Option<u64>,
    Option<String>,
    usize,
);

fn prefixes(t: &[Tok<'_>]) -> Vec<Prefix> {
    let mut out = Vec::new();
    for timed in [true, false] {
        let time = if timed {
            match t.first().and_then(|x| time_stamp(x.text)) {
                Some(v) => Some(v),
                None => continue,
            }
        } else {
            None
        };
        let i = usize::from(timed);
        if let Some(first) = t.get(i).map(|x| x.text) {
            if is_cpu(first) {
                out.push((time, Some(first.to_string()), None, None, i + 1));
            } else if is_aggregate(first) {
                if let Some(n) = t.get(i + 1).and_then(|n| n.text.parse().ok()) {
                    out.push((time, Some(first.to_string()), Some(n), None, i + 2));
                }
                // `--per-core` counters of `--percore-show-thread` print no count.
                out.push((time, Some(first.to_string()), None, None, i + 1));
            } else if is_thread(first) {
                out.push((time, None, None, Some(first.to_string()), i + 1));
            }
        }
        out.push((time, None, None, None, i));
    }
    out
}

/// Cuts a counter line after `prefix`: value, names, tail.
fn counter_after<'a>(line: &'a str, t: &[Tok<'a>], p: &Prefix) -> Option<Counter<'a>> {
    let (time_s, cpu, cpus, thread, i) = p.clone();
    let first = t.get(i)?;
    let (value, status, next) = match first.text {
        "<not" => {
            let status = match t.get(i + 1)?.text {
                "counted>" => CounterStatus::NotCounted,
                "supported>" => CounterStatus::NotSupported,
                _ => return None,
            };
            (None, status, i + 2)
        }
        v => {
            counter_value(v, None).ok()?;
            (Some(v), CounterStatus::Counted, i + 1)
        }
    };
    let value_end = t[next - 1].end();
    let mut names: Vec<Tok<'a>> = Vec::new();
    let mut unit_after = None;
    let mut k = next;
    while let Some(x) = t.get(k) {
        let s = x.text;
        if let Some(u) = s
            .strip_prefix('(')
            .and_then(|u| u.strip_suffix(')'))
            .filter(|u| UNITS.contains(u) && !names.is_empty() && unit_after.is_none())
        {
            unit_after = Some(u);
            k += 1;
            continue;
        }
        if s.starts_with('#') || s.starts_with('(') || (s.starts_with('[') && s.ends_with("%]")) {
            break;
        }
        // `name [pmu]`: perf's name of an event counted on several PMUs (`--no-merge`).
        match names.last_mut() {
            Some(last) if s.starts_with('[') && s.ends_with(']') => {
                *last = Tok {
                    at: last.at,
                    text: &line[last.at..x.end()],
                }
            }
            _ => names.push(*x),
        }
        k += 1;
    }
    if names.is_empty() {
        return None;
    }
    let rest = t.get(k).map_or("", |x| &line[x.at..]);
    let tail = tail(rest)?;
    Some(Counter {
        time_s,
        cpu,
        cpus,
        thread,
        value,
        status,
        value_end,
        names,
        unit_after,
        tail,
        line,
    })
}

fn counter(line: &str) -> Option<Counter<'_>> {
    let t = tokens(line);
    prefixes(&t).iter().find_map(|p| counter_after(line, &t, p))
}

/// Why a counter line's names are not read (the text of the warning).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum NamesError {
    #[error("cannot tell the unit, event and cgroup apart in `{0}`")]
    Ambiguous(String),
    #[error("the event `{0}` is a number")]
    NumericEvent(String),
    #[error("`{event}` is not in the column of the events ({at} characters after the value, not {want})")]
    OffColumn {
        event: String,
        at: usize,
        want: usize,
    },
}

/// A counter's unit, event and cgroup.
type Names = (Option<String>, String, Option<String>);

/// The unit, event and cgroup among a counter's names; `event_at` is where this block's
/// events start, relative to the end of the value.
fn names(c: &Counter<'_>, event_at: Option<usize>) -> Result<Names, NamesError> {
    let n = &c.names;
    let off = |t: &Tok<'_>| t.at - c.value_end;
    // A tab (a mail that turned spaces into tabs) moves the columns: no column check.
    let tabbed = |t: &Tok<'_>| c.line[c.value_end..t.at].contains('\t');
    let event_at = event_at.filter(|_| !n.iter().any(tabbed));
    let is_unit = |t: &Tok<'_>, e: &Tok<'_>| UNITS.contains(&t.text) || event_at == Some(off(e));
    let s = |t: &Tok<'_>| t.text.to_string();
    let (unit, event, cgroup) = match n.len() {
        1 if c.unit_after.is_some() => (c.unit_after.map(str::to_string), &n[0], None),
        2 if c.unit_after.is_some() => (c.unit_after.map(str::to_string), &n[0], Some(s(&n[1]))),
        1 => (None, &n[0], None),
        2 if is_unit(&n[0], &n[1]) => (Some(s(&n[0])), &n[1], None),
        2 if event_at == Some(off(&n[0])) => (None, &n[0], Some(s(&n[1]))),
        3 if is_unit(&n[0], &n[1]) => (Some(s(&n[0])), &n[1], Some(s(&n[2]))),
        _ => {
            let all: Vec<&str> = n.iter().map(|t| t.text).collect();
            return Err(NamesError::Ambiguous(all.join(" ")));
        }
    };
    if plain_num(event.text).is_some() || counter_value(event.text, None).is_ok() {
        return Err(NamesError::NumericEvent(event.text.into()));
    }
    if let Some(e) = event_at.filter(|e| *e != off(event)) {
        return Err(NamesError::OffColumn {
            event: event.text.into(),
            at: off(event),
            want: e,
        });
    }
    Ok((unit, s(event), cgroup))
}

/// One line of the document, classified.
enum Line<'a> {
    Blank,
    Header {
        runs: Option<u64>,
    },
    Trailer(PerfStatRow, Vec<char>),
    Counter(Counter<'a>),
    /// `( +-  0.06% )` alone: a mail wrapped the line above.
    Annotations(Tail),
    /// A `--metric-only` line: the prefix and values only, under a header.
    Metrics(HumanValues),
    Other(&'static str),
}

/// `Performance counter stats for 'ls' (5 runs):`.
fn header(t: &str) -> Option<Option<u64>> {
    let rest = t.strip_prefix("Performance counter stats for")?;
    let runs = rest
        .trim_end()
        .strip_suffix("runs):")
        .and_then(|r| r.trim_end().rsplit_once('('))
        .and_then(|(_, n)| n.trim().parse().ok());
    Some(runs)
}

/// `1.002805453 seconds time elapsed`, `11.1575 +- 0.0207 seconds time elapsed  ( +-  0.19% )`,
/// `0.250275000 seconds user`, `2.261419000 seconds sys`.
fn trailer(t: &str) -> Option<(PerfStatRow, Vec<char>)> {
    let (event, at) = ["seconds time elapsed", "seconds user", "seconds sys"]
        .into_iter()
        .find_map(|e| t.find(e).map(|at| (e, at)))?;
    let before: Vec<&str> = t[..at].split_ascii_whitespace().collect();
    let mut decimals = Vec::new();
    let value = match before.as_slice() {
        [v] | [v, "+-", _] => {
            let (v, d) = plain_num(v)?;
            decimals.extend(d);
            v
        }
        _ => return None,
    };
    if let [_, "+-", sd] = before.as_slice() {
        decimals.extend(plain_num(sd)?.1);
    }
    let after = tail(&t[at + event.len()..])?;
    if after.metric_value.is_some() || after.metric_unit.is_some() || after.run_pct.is_some() {
        return None;
    }
    decimals.extend(after.decimals);
    Some((
        PerfStatRow {
            time_s: None,
            cpu: None,
            cpus: None,
            thread: None,
            event: event.to_string(),
            cgroup: None,
            value: Some(value),
            unit: Some("s".into()),
            status: CounterStatus::Counted,
            variance_pct: after.variance_pct,
            run_time_ns: None,
            run_pct: None,
            metric_value: None,
            metric_unit: None,
            runs: None,
        },
        decimals,
    ))
}

/// A line as quoted in a mail (`> `, `> > `) without its quote marks.
fn unquote(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with('>') {
        t.trim_start_matches(['>', ' ', '\t'])
    } else {
        line
    }
}

fn classify(line: &str) -> Line<'_> {
    let line = unquote(line);
    let t = line.trim();
    if t.is_empty() {
        return Line::Blank;
    }
    if let Some(runs) = header(t) {
        return Line::Header { runs };
    }
    if let Some((row, d)) = trailer(t) {
        return Line::Trailer(row, d);
    }
    if t.starts_with(['(', '[']) {
        if let Some(a) = tail(t).filter(|a| {
            a.metric_value.is_none()
                && a.metric_unit.is_none()
                && (a.variance_pct.is_some() || a.run_pct.is_some())
        }) {
            return Line::Annotations(a);
        }
    }
    if t.starts_with('#') {
        return Line::Other("a metric without a counter (perf prints a counter's further metrics, and TopdownL1's, on lines of their own), or a comment");
    }
    if let Some(v) = metric_only::human_values(line) {
        return Line::Metrics(v);
    }
    match counter(line) {
        Some(c) => Line::Counter(c),
        None => Line::Other("not a `perf stat` counter line (the workload's own output, or a layout this parser does not read)"),
    }
}

/// The decimal point a document uses, when everything it prints with one agrees.
fn document_decimal(lines: &[Line<'_>]) -> Option<char> {
    let mut seen: Vec<char> = Vec::new();
    for l in lines {
        let ds: Vec<char> = match l {
            Line::Trailer(_, d) => d.clone(),
            Line::Counter(c) => {
                let mut d = c.tail.decimals.clone();
                if let Some(v) = c.value {
                    d.extend(counter_value(v, None).ok().and_then(|(_, d)| d));
                }
                d
            }
            _ => Vec::new(),
        };
        for d in ds {
            if !seen.contains(&d) {
                seen.push(d);
            }
        }
    }
    match seen.as_slice() {
        [d] => Some(*d),
        _ => None,
    }
}

/// Parse perf stat's human-readable output.
pub fn parse_human(text: &str) -> Result<Output<PerfStatRow>, ParseError> {
    let lines: Vec<Line<'_>> = text.lines().map(classify).collect();
    let decimal = document_decimal(&lines);
    // Where the events start, per block (a header starts one): the most common offset
    // from the end of the value of the names that can only be events.
    let mut event_at: Vec<Option<usize>> = Vec::with_capacity(lines.len());
    let mut block_start = 0;
    let mut counts: HashMap<usize, usize> = HashMap::new();
    let flush = |counts: &mut HashMap<usize, usize>,
                 event_at: &mut Vec<Option<usize>>,
                 from: usize,
                 to: usize| {
        let best = counts
            .iter()
            .max_by_key(|(off, n)| (**n, std::cmp::Reverse(**off)))
            .map(|(off, _)| *off);
        for slot in event_at.iter_mut().take(to).skip(from) {
            *slot = best;
        }
        counts.clear();
    };
    for (i, l) in lines.iter().enumerate() {
        if matches!(l, Line::Header { .. }) && i > block_start {
            flush(&mut counts, &mut event_at, block_start, i);
            block_start = i;
        }
        event_at.push(None);
        if let Line::Counter(c) = l {
            let e = match c.names.as_slice() {
                [e] => Some(e),
                [u, e] | [u, e, _] if UNITS.contains(&u.text) => Some(e),
                _ => None,
            };
            if let Some(e) = e.filter(|e| !c.line[c.value_end..e.at].contains('\t')) {
                *counts.entry(e.at - c.value_end).or_default() += 1;
            }
        }
    }
    flush(&mut counts, &mut event_at, block_start, lines.len());

    let mut out = Output::default();
    let mut runs = None;
    // The line of the last row, for a wrapped line of annotations under it.
    let mut row_line: Option<usize> = None;
    // `--metric-only`: the header of the table being read, its last line of values, and
    // the last line that was not blank.
    let mut metric_header: Option<usize> = None;
    let mut metrics_line: Option<usize> = None;
    let mut prev: Option<usize> = None;
    let raw: Vec<&str> = text.lines().collect();
    let warn = |out: &mut Output<PerfStatRow>, n: usize, reason: String| {
        out.warnings.push(Warning {
            line: n + 1,
            text: raw[n].to_string(),
            reason,
        })
    };
    for (n, l) in lines.into_iter().enumerate() {
        let before = prev.replace(n);
        match l {
            Line::Blank => prev = before,
            Line::Metrics(v) => {
                // A table's header is the unread line right above its first values; a
                // line of values under another keeps that one's header.
                let last_warned = out.warnings.last().map(|w| w.line);
                let header = match before {
                    Some(b) if last_warned == Some(b + 1) => Some((b, true)),
                    Some(b) if Some(b) == metrics_line => metric_header.map(|h| (h, false)),
                    _ => None,
                };
                match header.and_then(|(h, _)| metric_only::human_rows(unquote(raw[h]), &v)) {
                    Some(rows) => {
                        if let Some((_, true)) = header {
                            out.warnings.pop();
                        }
                        metric_header = header.map(|(h, _)| h);
                        metrics_line = Some(n);
                        row_line = None;
                        out.rows.extend(rows.into_iter().map(|mut r| {
                            r.runs = runs;
                            r
                        }));
                    }
                    None => {
                        metrics_line = None;
                        warn(&mut out, n, "values without names: a `--metric-only` line whose header is not right above its table, or names fewer metrics".into());
                    }
                }
            }
            Line::Header { runs: r } => runs = r,
            Line::Trailer(mut row, _) => {
                row.runs = runs;
                out.rows.push(row);
                row_line = Some(n);
            }
            Line::Annotations(a) => {
                // Only right under a row that printed none of them: a wrapped line.
                let fits = |r: &PerfStatRow| {
                    (a.variance_pct.is_none() || r.variance_pct.is_none())
                        && (a.run_pct.is_none() || r.run_pct.is_none())
                        && (a.run_pct.is_none() || r.unit.as_deref() != Some("s"))
                };
                match out.rows.last_mut().filter(|r| row_line == n.checked_sub(1) && fits(r)) {
                    Some(r) => {
                        r.variance_pct = r.variance_pct.or(a.variance_pct);
                        r.run_pct = r.run_pct.or(a.run_pct);
                    }
                    None => warn(
                        &mut out,
                        n,
                        "a variance or multiplexing share that is not right under a counter that lacks it".into(),
                    ),
                }
            }
            Line::Other(reason) => warn(&mut out, n, reason.to_string()),
            Line::Counter(c) => {
                let value = match c.value.map(|v| counter_value(v, decimal)) {
                    None => None,
                    Some(Ok((v, _))) => Some(v),
                    Some(Err(e)) => {
                        warn(&mut out, n, format!("the value is not read: {e}"));
                        continue;
                    }
                };
                let (unit, event, cgroup) = match names(&c, event_at[n]) {
                    Ok(x) => x,
                    Err(e) => {
                        warn(&mut out, n, e.to_string());
                        continue;
                    }
                };
                row_line = Some(n);
                out.rows.push(PerfStatRow {
                    time_s: c.time_s,
                    cpu: c.cpu,
                    cpus: c.cpus,
                    thread: c.thread,
                    event,
                    cgroup,
                    value,
                    unit,
                    status: c.status,
                    variance_pct: c.tail.variance_pct,
                    run_time_ns: None,
                    run_pct: c.tail.run_pct,
                    metric_value: c.tail.metric_value,
                    metric_unit: c.tail.metric_unit,
                    runs,
                });
            }
        }
    }
    if out.rows.is_empty() {
        return Err(ParseError::NothingRecognised {
            kind: KIND,
            expected: "counter lines of perf stat's human format (`  1,234,567      cycles   # 2.300 GHz`) or its `seconds time elapsed`; `perf stat -x,` is kind `perf-stat`",
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_lines_of_several_perf_versions() {
        let text = " Performance counter stats for 'ls' (3 runs):\n\n\
              4,330.94 msec task-clock:u          #    0.045 CPUs utilized            ( +-  0.12% )\n\
             1,234,567      cycles                #    2.300 GHz                      ( +-  0.12% )  (75.01%)\n\
         <not counted>      cpu_core/cycles/u                                             (0.00%)\n\
       <not supported>      branches\n\
                                                  #    0.65  stalled cycles per insn\n\
\n           1.234 +- 0.002 seconds time elapsed  ( +-  0.16% )\n";
        let out = parse_human(text).unwrap();
        let r = &out.rows;
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(
            (r[0].event.as_str(), r[0].value, r[0].unit.as_deref()),
            ("task-clock:u", Some(4330.94), Some("msec"))
        );
        assert_eq!(
            (r[0].metric_value, r[0].variance_pct),
            (Some(0.045), Some(0.12))
        );
        assert_eq!(r[0].runs, Some(3));
        assert_eq!(
            (r[1].value, r[1].unit.as_deref()),
            (Some(1_234_567.0), None)
        );
        assert_eq!(
            (r[1].run_pct, r[1].metric_unit.as_deref()),
            (Some(75.01), Some("GHz"))
        );
        assert_eq!(
            (r[2].status, r[2].value, r[2].run_pct),
            (CounterStatus::NotCounted, None, Some(0.0))
        );
        assert_eq!(r[3].status, CounterStatus::NotSupported);
        assert_eq!(
            (
                r[4].event.as_str(),
                r[4].value,
                r[4].variance_pct,
                r[4].unit.as_deref()
            ),
            ("seconds time elapsed", Some(1.234), Some(0.16), Some("s"))
        );
        assert_eq!(out.warnings.len(), 1);
        assert_eq!(out.warnings[0].line, 7);
    }

    #[test]
    fn interval_per_socket_and_per_cpu_prefixes() {
        let text = "#           time socket cpus             counts unit events\n\
     1.001034215 S0        2              4.33 msec task-clock                #    0.045 CPUs utilized\n\
     1.001034215 S0        2                123      cycles\n\
     2.002000000 CPU3                       17      context-switches\n";
        let out = parse_human(text).unwrap();
        let r = &out.rows;
        assert_eq!(r.len(), 3, "{:?}", out.warnings);
        assert_eq!(
            (r[0].time_s, r[0].cpu.as_deref(), r[0].cpus),
            (Some(1.001034215), Some("S0"), Some(2))
        );
        assert_eq!((r[1].event.as_str(), r[1].value), ("cycles", Some(123.0)));
        assert_eq!(
            (r[2].cpu.as_deref(), r[2].cpus, r[2].value),
            (Some("CPU3"), None, Some(17.0))
        );
        assert_eq!(out.warnings.len(), 1);
    }

    #[test]
    fn cgroups_after_the_event() {
        let text = "\
              0.65 msec task-clock                       /                #    0.390 CPUs utilized\n\
                 1      context-switches                 /                #    1.536 K/sec\n\
                 3      context-switches                 system.slice     #    2.000 K/sec\n";
        let r = parse_human(text).unwrap().rows;
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].unit.as_deref(), r[0].cgroup.as_deref()),
            (Some("msec"), Some("/"))
        );
        assert_eq!(
            (r[1].event.as_str(), r[1].cgroup.as_deref()),
            ("context-switches", Some("/"))
        );
        assert_eq!(r[2].cgroup.as_deref(), Some("system.slice"));
    }

    #[test]
    fn quoted_tabbed_and_wrapped_lines() {
        // A reply quoting a quote; single spaces, as in a 2009 mail.
        let text = "  > > 129875.554435 task-clock-msecs # 10.210 CPUs \n  > >          1883 context-switches # 0.000 M/sec \n";
        let r = parse_human(text).unwrap().rows;
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].event.as_str(), r[0].value),
            ("task-clock-msecs", Some(129_875.554435))
        );
        assert_eq!((r[1].value, r[1].metric_value), (Some(1883.0), Some(0.0)));
        // Spaces turned into a tab move the column: the column check is off, not the row.
        let text = "     1,234      cycles        # 2.300 GHz\n\t 5,678\tinstructions  # 1.20  insn per cycle\n";
        let r = parse_human(text).unwrap().rows;
        assert_eq!(
            (r[1].event.as_str(), r[1].value),
            ("instructions", Some(5678.0))
        );
        // A wrapped share fills the row above only when that row has none.
        let text = "     1,234      cycles        # 2.300 GHz   (50.00%)\n   (75.00%)\n";
        let out = parse_human(text).unwrap();
        assert_eq!((out.rows[0].run_pct, out.warnings.len()), (Some(50.0), 1));
        // A workload line in the middle: not in the events' column.
        let text = "     1,234      cycles\n3 files\n         5      page-faults\n";
        let out = parse_human(text).unwrap();
        assert_eq!(out.rows.len(), 2);
        assert_eq!(out.warnings[0].line, 2, "{:?}", out.warnings);
    }

    /// perf 3.x printed the share counted in brackets (`  [%5.2f%%]`), also after a
    /// continued metric; 2.6 kernels as `(scaled from …)`.
    #[test]
    fn old_multiplexing_spellings() {
        let text = "\
             6,158,591,568 cycles                    #    3.194 GHz                     [83.25%]\n\
             8,898,332,744 instructions              #    1.44  insns per cycle        \n\
                                                     #    0.27  stalled cycles per insn [83.26%]\n\
             2,066,201,729 cycles                   #   2160.227 M/sec (scaled from 66.67%)\n";
        let out = parse_human(text).unwrap();
        let r = &out.rows;
        assert_eq!(
            (r[0].value, r[0].run_pct),
            (Some(6_158_591_568.0), Some(83.25))
        );
        assert_eq!(
            (r[1].metric_unit.as_deref(), r[1].run_pct),
            (Some("insns per cycle"), None)
        );
        assert_eq!(
            (r[2].metric_value, r[2].run_pct),
            (Some(2160.227), Some(66.67))
        );
        assert_eq!(out.warnings.len(), 1);
    }

    #[test]
    fn workload_output_and_csv_are_not_counters() {
        let out = parse_human("1000000+0 records in\n512000000 bytes (512 MB, 488 MiB) copied, 0.49 s, 1.0 GB/s\n\n       0.001668752 seconds time elapsed\n").unwrap();
        assert_eq!(out.rows.len(), 1);
        assert_eq!(out.warnings.len(), 2);
        assert!(matches!(
            parse_human("0.65,msec,task-clock:u,648266,100.00,0.534,CPUs utilized\n"),
            Err(ParseError::NothingRecognised { .. })
        ));
    }
}
