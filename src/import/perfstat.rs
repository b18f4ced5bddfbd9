//! `perf stat` output pasted into a post (its default human format, as mails quote it):
//! each block from its `Performance counter stats for '…'` line to its last `seconds time
//! elapsed` / `seconds user` / `seconds sys` line is cut out, read with
//! `crate::parse::perf_stat::parse_human`, and each counter becomes published rows, each
//! with the text perf printed and its line: the value (`statistic` `value`, in `count`,
//! `ms` for perf's `msec` and 2.6 kernels' `task-clock-msecs`, `s` for the trailer's
//! times), the variance over the runs of `-r` (`variance`, `%`), the derived metric
//! (`metric`, in perf's words: `M/sec`, `IPC`) and the share of the run a multiplexed
//! counter was counted (`counted`, `%`). The header's `(N runs)` is the setting
//! `runs`; a CPU, an aggregate, a `--per-thread` thread, a cgroup or an interval's time
//! stamp are settings too. A `--metric-only` table's values are one "not mapped" message. The
//! label above the block (`3.0-per-zone-dirty:`) heads its rows, as above a `time` block
//! (a block right under another shares its label); the `perf stat …` command above it,
//! with its workload's output between them, is its rows' note. What the parser does not
//! read in a block (a metric on a line of its own, the workload's output) is a "not
//! mapped" message; the block's lines are perf's, never prose numbers. perf's CSV (`-x,`)
//! is [`super::perfcsv`]'s.

use super::mail::{Post, PostLine};
use super::output::{add_label_settings, label_above, Found};
use super::{Category, Note, NoteKind, Row};
use crate::parse::perf_stat::{parse_human, CounterStatus, PerfStatRow};

const HEADER: &str = "Performance counter stats for";
const TRAILERS: [&str; 3] = ["seconds time elapsed", "seconds user", "seconds sys"];
/// The most lines a block spans: a post is not a program to search.
const MAX_BLOCK: usize = 400;

fn is_header(t: &str) -> bool {
    t.trim_start().starts_with(HEADER)
}

/// `912.625436885  seconds time elapsed`: a number, then one of perf's trailer words (a
/// sentence that names them is no trailer).
fn is_trailer(t: &str) -> bool {
    t.split_ascii_whitespace()
        .next()
        .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        && TRAILERS.iter().any(|e| t.contains(e))
}

/// The block that starts at the header at post index `k`: its last post index. It ends at
/// its last trailer line (the trailer's lines stand together, blank lines between them);
/// without a trailer (a cut paste), at the last counter line before a blank line.
fn block_end(lines: &[PostLine], k: usize) -> usize {
    let depth = lines[k].depth;
    let mut last_trailer = None;
    let mut last_counter = k;
    // the last counter line before the first blank line after counters
    let mut counters_end = None;
    let mut m = k + 1;
    while m < lines.len() && m < k + MAX_BLOCK {
        let l = &lines[m];
        let t = l.text.trim();
        if is_header(t) || l.depth != depth {
            break;
        }
        if is_trailer(t) {
            last_trailer = Some(m);
        } else if t.is_empty() {
            if last_counter > k && counters_end.is_none() {
                counters_end = Some(last_counter);
            }
        } else if last_trailer.is_some() || (counters_end.is_some() && looks_like_prose(t)) {
            // after the trailer, or words after the counters: the post goes on
            break;
        } else {
            last_counter = m;
        }
        m += 1;
    }
    last_trailer.unwrap_or(counters_end.unwrap_or(last_counter))
}

/// A line of words, not perf's: no digit-grouped number, no `#` metric, no `<not …>`.
fn looks_like_prose(t: &str) -> bool {
    !t.contains('#')
        && !t.contains("<not ")
        && !t
            .split_ascii_whitespace()
            .next()
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
}

/// Where `event` stands in the line as a whole word, before any `#` metric.
fn event_at(line: &str, event: &str) -> Option<usize> {
    let hash = line.find('#').unwrap_or(line.len());
    let mut from = 0;
    while let Some(i) = line[from..].find(event) {
        let at = from + i;
        let end = at + event.len();
        let before = line[..at].chars().next_back();
        let after = line[end..].chars().next();
        if at < hash
            && before.is_none_or(|c| c.is_ascii_whitespace())
            && after.is_none_or(|c| c.is_ascii_whitespace())
        {
            return Some(at);
        }
        from = at + event.len().max(1);
    }
    None
}

/// The text of an annotation `( +-  1.79% )` (or `[75.01%]`, `(scaled from 75.01%)`,
/// `(75.01%)`): the first in `t` that `want` accepts, verbatim.
fn annotation<'a>(t: &'a str, want: &dyn Fn(&str) -> bool) -> Option<&'a str> {
    let mut from = 0;
    while let Some(i) = t[from..].find(['(', '[']) {
        let at = from + i;
        let close = if t[at..].starts_with('(') { ')' } else { ']' };
        let end = at + t[at..].find(close)?;
        let inner = &t[at + 1..end];
        if want(inner.trim()) {
            return Some(&t[at..=end]);
        }
        from = end + 1;
    }
    None
}

fn variance_text(inner: &str) -> bool {
    inner.starts_with("+-")
}

fn share_text(inner: &str) -> bool {
    !inner.starts_with("+-") && inner.ends_with('%')
}

/// `#      4.923 M/sec   ( +-   0.198% )` → `#      4.923 M/sec`.
fn metric_text(t: &str) -> Option<&str> {
    let at = t.find('#')?;
    let rest = &t[at..];
    let end = rest.find(['(', '[']).unwrap_or(rest.len());
    Some(rest[..end].trim_end())
}

/// The value as printed: the word before the unit and the event (`140,671,831`,
/// `28574.255540`, `912.625436885`), `<not counted>`.
fn value_text<'a>(line: &'a str, at: usize, r: &PerfStatRow) -> Option<&'a str> {
    if r.status != CounterStatus::Counted {
        return None;
    }
    if r.unit.as_deref() == Some("s") && r.event.starts_with("seconds ") {
        return line.split_ascii_whitespace().next();
    }
    let mut words: Vec<&str> = line[..at].split_ascii_whitespace().collect();
    if words.last().copied() == r.unit.as_deref() {
        words.pop();
    }
    words.last().copied()
}

/// The value's unit: perf's `msec` as `ms`; 2.6 kernels' `task-clock-msecs` printed no
/// unit, its name says it.
fn unit_of(r: &PerfStatRow) -> String {
    match r.unit.as_deref() {
        None if r.event.ends_with("-msecs") => "ms".into(),
        None => "count".into(),
        Some("msec") => "ms".into(),
        Some(u) => u.into(),
    }
}

/// The `perf stat …` command above the header at post index `k` that printed the block,
/// with only its workload's output between them (`dd`'s `records in`): its post index.
pub(super) fn prompt_above(lines: &[PostLine], k: usize, is_cmd: &[bool]) -> Option<usize> {
    let mut i = k;
    while i > 0 && k - i < 30 {
        i -= 1;
        let t = lines[i].text.trim();
        if is_header(t) {
            return None;
        }
        if is_cmd[i] {
            let words: Vec<&str> = t.split_ascii_whitespace().collect();
            // `perf stat`, `./perf stat`, `/usr/bin/perf stat`
            return words
                .windows(2)
                .any(|w| w[0].rsplit('/').next() == Some("perf") && w[1] == "stat")
                .then_some(i);
        }
    }
    None
}

/// Every perf stat block of the post, its rows and its lines; what the parser leaves
/// unread in a block is a message.
pub fn blocks(post: &Post, is_cmd: &[bool], notes: &mut Vec<Note>) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    // the lines of the blocks so far: a block right under another shares its label
    let mut perf = vec![false; lines.len()];
    let mut k = 0;
    while k < lines.len() {
        if !is_header(&lines[k].text) {
            k += 1;
            continue;
        }
        let end = block_end(lines, k);
        let text: Vec<&str> = lines[k..=end].iter().map(|l| l.text.as_str()).collect();
        let out = match parse_human(&text.join("\n")) {
            Ok(out) => out,
            Err(e) => {
                notes.push(Note::new(
                    lines[k].n,
                    NoteKind::Unmapped,
                    &format!("perf stat output that cannot be read: {e}"),
                ));
                k = end + 1;
                continue;
            }
        };
        for w in &out.warnings {
            if let Some(l) = lines.get(k + w.line - 1) {
                notes.push(Note::new(
                    l.n,
                    NoteKind::Unmapped,
                    &format!("a perf stat line not read: {}", w.reason),
                ));
            }
        }
        let prompt =
            |i: usize| is_cmd[i] && super::commands::after_prompt(&lines[i].text).is_some();
        let label = match prompt_above(lines, k, is_cmd) {
            Some(i) => lines[i].text.trim().to_string(),
            None => label_above(lines, k, &|i| is_cmd[i] || perf[i], &prompt)
                .map(|l| l.0)
                .unwrap_or_default(),
        };
        let mut rows = Vec::new();
        let mut cursor = k + 1;
        // A `--metric-only` table's values are rows without a counter; their names are in
        // the table's header, not on their lines: said once, not mapped.
        let (metrics, counters): (Vec<&PerfStatRow>, Vec<&PerfStatRow>) = out
            .rows
            .iter()
            .partition(|r| r.value.is_none() && r.status == CounterStatus::Counted);
        if !metrics.is_empty() {
            notes.push(Note::new(
                lines[k].n,
                NoteKind::Unmapped,
                &format!(
                    "perf stat --metric-only values not mapped ({}): import reads counters",
                    metrics.len()
                ),
            ));
        }
        for r in counters {
            let Some((i, at)) =
                (cursor..=end).find_map(|i| event_at(&lines[i].text, &r.event).map(|at| (i, at)))
            else {
                notes.push(Note::new(
                    lines[k].n,
                    NoteKind::Unmapped,
                    &format!("perf stat's `{}`: its line is not found", r.event),
                ));
                continue;
            };
            cursor = i + 1;
            rows.extend(counter_rows(r, &lines[i], lines.get(i + 1), at, &label));
        }
        perf[k..=end].fill(true);
        found.push(Found {
            tool: "perf stat",
            first: k,
            rows,
            lines: (k..=end).collect(),
            device_bytes: Vec::new(),
        });
        k = end + 1;
    }
    found
}

/// A counter's settings: the `-I` time stamp, the CPU or aggregate and its CPUs, the
/// `--per-thread` thread, the cgroup, `-r`'s runs, then what the label above says.
pub(super) fn settings_of(
    r: &PerfStatRow,
    runs: Option<u64>,
    label: &str,
) -> Vec<(String, String)> {
    let mut settings = Vec::new();
    for (k, v) in [
        ("time", r.time_s.map(|s| s.to_string())),
        ("cpu", r.cpu.clone()),
        ("cpus", r.cpus.map(|n| n.to_string())),
        ("thread", r.thread.clone()),
        ("cgroup", r.cgroup.clone()),
        ("runs", runs.map(|n| n.to_string())),
    ] {
        if let Some(v) = v {
            settings.push((k.to_string(), v));
        }
    }
    add_label_settings(&mut settings, label);
    settings
}

/// The rows of one counter at its line `l` (its event at byte `at`); `next`, the line
/// below, may hold its variance or share when a mail wrapped the line.
fn counter_rows(
    r: &PerfStatRow,
    l: &PostLine,
    next: Option<&PostLine>,
    at: usize,
    label: &str,
) -> Vec<Row> {
    let t = l.text.as_str();
    let settings = settings_of(r, r.runs, label);
    let annotated = |want: &dyn Fn(&str) -> bool| -> Option<(String, usize)> {
        annotation(&t[at..], want)
            .map(|a| (a.to_string(), l.n))
            .or_else(|| next.and_then(|n| annotation(&n.text, want).map(|a| (a.to_string(), n.n))))
    };
    let row = |stat: &str, value: f64, unit: String, printed: String, line: usize| {
        let mut s = settings.clone();
        s.push(("statistic".to_string(), stat.to_string()));
        Row {
            line,
            group: "perf_stat".into(),
            quantity: r.event.clone(),
            settings: s,
            value,
            unit,
            printed,
            approx: false,
            category: Category::Measurement,
            stated_by: l.quoted_author.clone(),
            note: if label.is_empty() {
                "perf stat output".into()
            } else {
                label.to_string()
            },
        }
    };
    let mut out = Vec::new();
    if let (Some(v), Some(p)) = (r.value, value_text(t, at, r)) {
        out.push(row("value", v, unit_of(r), p.to_string(), l.n));
    }
    if let (Some(v), Some((p, n))) = (r.variance_pct, annotated(&variance_text)) {
        out.push(row("variance", v, "%".into(), p, n));
    }
    if let (Some(v), Some(p)) = (r.metric_value, metric_text(&t[at..])) {
        let unit = r.metric_unit.clone().unwrap_or_default();
        out.push(row("metric", v, unit, p.to_string(), l.n));
    }
    if let (Some(v), Some((p, n))) = (r.run_pct, annotated(&share_text)) {
        out.push(row("counted", v, "%".into(), p, n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::mail;

    fn post(s: &str) -> Post {
        mail::read(s.as_bytes()).unwrap()
    }

    fn find<'a>(rows: &'a [Row], q: &str, stat: &str) -> &'a Row {
        rows.iter()
            .find(|r| {
                r.quantity == q && r.settings.iter().any(|s| s.0 == "statistic" && s.1 == stat)
            })
            .unwrap_or_else(|| panic!("no {q} {stat}: {rows:#?}"))
    }

    #[test]
    fn a_quoted_block_with_runs_variance_and_metrics() {
        let p = post("Subject: x\n\nBefore:\n\n>  Performance counter stats for 'ls' (3 runs):\n>\n>          4,330.94 msec task-clock:u     #    0.045 CPUs utilized   ( +-  0.12% )\n>         1,234,567      cycles           #    2.300 GHz             ( +-  0.50% )  (75.01%)\n>     <not counted>      branches\n>\n>            1.234 +- 0.002 seconds time elapsed  ( +-  0.16% )\n>\n> 12 files\n");
        let mut notes = Vec::new();
        let f = blocks(&p, &vec![false; p.lines.len()], &mut notes);
        assert_eq!(f.len(), 1);
        let ns: Vec<usize> = f[0].lines.iter().map(|&i| p.lines[i].n).collect();
        assert_eq!(ns, (5..=11).collect::<Vec<_>>());
        let r = &f[0].rows;
        let v = find(r, "task-clock:u", "value");
        assert_eq!(
            (v.line, v.value, v.unit.as_str(), v.printed.as_str()),
            (7, 4330.94, "ms", "4,330.94")
        );
        assert!(v.settings.contains(&("runs".to_string(), "3".to_string())));
        assert_eq!(v.note, "Before:");
        let m = find(r, "task-clock:u", "metric");
        assert_eq!(
            (m.value, m.unit.as_str(), m.printed.as_str()),
            (0.045, "CPUs utilized", "#    0.045 CPUs utilized")
        );
        let s = find(r, "cycles", "counted");
        assert_eq!((s.value, s.printed.as_str()), (75.01, "(75.01%)"));
        let var = find(r, "cycles", "variance");
        assert_eq!((var.value, var.printed.as_str()), (0.5, "( +-  0.50% )"));
        let e = find(r, "seconds time elapsed", "value");
        assert_eq!((e.line, e.value, e.unit.as_str()), (11, 1.234, "s"));
        assert_eq!(e.printed, "1.234");
        // `<not counted>` has no value row
        assert!(!r.iter().any(|x| x.quantity == "branches"));
    }

    /// perf 6.1's `--per-thread` (tests/fixtures/perf_stat/per-thread-human.txt) and a
    /// `--topdown -I` table (perf's topdown.txt), pasted into a post.
    #[test]
    fn threads_are_settings_and_a_metric_only_table_is_one_message() {
        let p = post("Subject: x\n\n Performance counter stats for process id '21643':\n\n         python3-21698                 10.21 msec task-clock                       #    0.010 CPUs utilized\n         python3-21643         <not counted> msec task-clock\n\n       1.012064387 seconds time elapsed\n\nand\n\n Performance counter stats for 'system wide':\n\n#           time      %  tma_retiring %  tma_backend_bound\n     1.001141351                 11.5                 34.9\n\n       1.012064387 seconds time elapsed\n");
        let mut notes = Vec::new();
        let f = blocks(&p, &vec![false; p.lines.len()], &mut notes);
        assert_eq!(f.len(), 2);
        let v = find(&f[0].rows, "task-clock", "value");
        assert!(v
            .settings
            .contains(&("thread".to_string(), "python3-21698".to_string())));
        let said: Vec<&str> = notes.iter().map(|n| n.what.as_str()).collect();
        assert_eq!(
            said,
            ["perf stat --metric-only values not mapped (2): import reads counters"]
        );
        assert!(!f[1].rows.iter().any(|r| r.quantity.starts_with("tma_")));
    }

    #[test]
    fn a_block_right_under_another_shares_its_label() {
        let block = " Performance counter stats for 'ls':\n\n     1,234      cycles\n\n       1.5 seconds time elapsed\n\n";
        let p = post(&format!("Subject: x\n\nWith the patch:\n\n{block}{block}"));
        let f = blocks(&p, &vec![false; p.lines.len()], &mut Vec::new());
        assert_eq!(f.len(), 2);
        assert_eq!(f[1].rows[0].note, "With the patch:");
    }

    #[test]
    fn a_sentence_naming_the_trailer_is_not_in_the_block() {
        let p = post("Subject: x\n\n Performance counter stats for 'ls':\n\n     1,234      cycles\n\n       1.5 seconds time elapsed\n\nThe 'seconds time elapsed' above is 1.5.\n");
        let f = blocks(&p, &vec![false; p.lines.len()], &mut Vec::new());
        let ns: Vec<usize> = f[0].lines.iter().map(|&i| p.lines[i].n).collect();
        assert_eq!(ns, [3, 4, 5, 6, 7]);
    }

    #[test]
    fn a_block_without_its_trailer_ends_at_the_blank_after_its_counters() {
        let p = post("Subject: x\n\n Performance counter stats for 'ls':\n\n     1,234      cycles\n         5      page-faults\n\n12 files were made in 3 s.\n");
        let mut notes = Vec::new();
        let f = blocks(&p, &vec![false; p.lines.len()], &mut notes);
        let ns: Vec<usize> = f[0].lines.iter().map(|&i| p.lines[i].n).collect();
        assert_eq!(ns, [3, 4, 5, 6]);
        assert_eq!(f[0].rows.len(), 2);
        assert_eq!((f[0].rows[1].line, f[0].rows[1].value), (6, 5.0));
    }

    #[test]
    fn the_event_is_a_whole_word_before_the_metric() {
        let line = "   2,066,201,729 cycles   #    0.65  stalled cycles per insn";
        assert_eq!(event_at(line, "cycles"), Some(17));
        assert_eq!(event_at("   5 stalled-cycles   # x", "cycles"), None);
    }
}
