//! `perf stat -x,` (CSV) output pasted into a post: each run of lines perf's CSV parser
//! (`crate::parse::perf_stat::parse`) reads as counter lines, with the lines between them
//! that look like its output (`,,,,,87.9,%  tma_bad_speculation`), becomes published rows
//! as perf's human output does ([`super::perfstat`]): the value (`statistic` `value`, in
//! `count`, `ms` for `msec`), the variance over the runs of `-r` (`variance`, `percent`),
//! the derived metric (`metric`, in perf's words) and, when multiplexed (below 100 %), the
//! share of the run it was counted (`counted`, `percent`); each with its field as printed
//! and its line (a `<not counted>` or `<not supported>` counter gives none). The `-I` time stamp, the CPU or aggregate, the `--per-thread` thread and the cgroup are settings;
//! `-r N` of the `perf stat` command above is the setting `runs` (the CSV does not print
//! it). The lines perf's parser does not read in a run (metric-only lines) are "not mapped"
//! messages. A run needs two counter lines, or one under a `perf stat` command.

use super::mail::{Post, PostLine};
use super::output::{label_above, Found};
use super::perfstat::{prompt_above, settings_of};
use super::shell::perf;
use super::{Category, Note, NoteKind, Row};
use crate::parse::perf_stat::{parse, CounterStatus, PerfStatRow};

const SEPARATORS: [char; 4] = [',', ';', '\t', '|'];
/// The most lines a run spans: a post is not a program to search.
const MAX_RUN: usize = 2000;

/// The counter perf's CSV parser reads in the line, with its line's fields.
fn counter(t: &str) -> Option<(PerfStatRow, Vec<String>)> {
    let out = parse(t.trim()).ok()?;
    let [r] = out.rows.as_slice() else {
        return None;
    };
    let fields = SEPARATORS
        .iter()
        .map(|&c| t.trim().split(c).map(str::to_string).collect::<Vec<_>>())
        .find(|f| f.iter().any(|x| x.trim() == r.event))?;
    Some((r.clone(), fields))
}

/// A line of perf's CSV that holds no counter: four separators or more.
fn csv_like(t: &str) -> bool {
    SEPARATORS
        .iter()
        .any(|&c| t.chars().filter(|&x| x == c).count() >= 4)
}

/// `-r N` of the `perf stat` command at the line.
fn runs_of(command: &str) -> Option<u64> {
    let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    (0..words.len()).find_map(|i| perf::at(&words, i).and_then(|p| p.runs))
}

/// Every run of perf stat CSV lines in the post, its rows and its lines.
pub fn blocks(post: &Post, is_cmd: &[bool], notes: &mut Vec<Note>) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if is_cmd[k] || counter(&lines[k].text).is_none() {
            k += 1;
            continue;
        }
        let depth = lines[k].depth;
        let mut end = k;
        let mut counters = Vec::new();
        let mut unread = Vec::new();
        let mut m = k;
        while m < lines.len() && m < k + MAX_RUN && lines[m].depth == depth && !is_cmd[m] {
            let t = &lines[m].text;
            if let Some(c) = counter(t) {
                counters.push((m, c));
                end = m;
            } else if csv_like(t) {
                unread.push(m);
            } else {
                break;
            }
            m += 1;
        }
        // the run's csv lines after its last counter are perf's too (a metric line)
        end = end.max(unread.last().copied().unwrap_or(end));
        let command = prompt_above(lines, k, is_cmd);
        if counters.len() < 2 && command.is_none() {
            k = end + 1;
            continue;
        }
        for &u in &unread {
            notes.push(Note::new(
                lines[u].n,
                NoteKind::Unmapped,
                "a perf stat CSV line not read: not a counter line (a metric line without a counter, or the workload's own output)",
            ));
        }
        let prompt =
            |i: usize| is_cmd[i] && super::commands::after_prompt(&lines[i].text).is_some();
        let label = match command {
            Some(i) => lines[i].text.trim().to_string(),
            None => label_above(lines, k, &|i| is_cmd[i], &prompt)
                .map(|l| l.0)
                .unwrap_or_default(),
        };
        let runs = command.and_then(|i| runs_of(&lines[i].text));
        let mut rows = Vec::new();
        for (i, (r, fields)) in &counters {
            rows.extend(counter_rows(r, fields, &lines[*i], runs, &label));
        }
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

/// The rows of one counter line: its fields as perf printed them.
fn counter_rows(
    r: &PerfStatRow,
    fields: &[String],
    l: &PostLine,
    runs: Option<u64>,
    label: &str,
) -> Vec<Row> {
    let settings = settings_of(r, runs, label);
    let row = |stat: &str, value: f64, unit: String, printed: &str| {
        let mut s = settings.clone();
        s.push(("statistic".to_string(), stat.to_string()));
        Row {
            line: l.n,
            group: "perf_stat".into(),
            quantity: r.event.clone(),
            settings: s,
            value,
            unit,
            printed: printed.trim().to_string(),
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
    // `<not counted>`, `<not supported>`: perf counted nothing, as in its human output
    let Some(ev) = fields
        .iter()
        .position(|f| f.trim() == r.event)
        .filter(|_| r.status == CounterStatus::Counted)
    else {
        return Vec::new();
    };
    // value, unit, event, [cgroup], [variance], run time, percent, metric, metric unit
    let mut after = ev + 1 + usize::from(r.cgroup.is_some());
    let mut out = Vec::new();
    if let (Some(v), Some(p)) = (r.value, ev.checked_sub(2).map(|i| &fields[i])) {
        let unit = match r.unit.as_deref() {
            None => "count",
            Some("msec") => "ms",
            Some(u) => u,
        };
        out.push(row("value", v, unit.into(), p));
    }
    if let Some(v) = r.variance_pct {
        if let Some(p) = fields.get(after) {
            out.push(row("variance", v, "%".into(), p));
        }
        after += 1;
    }
    if let (Some(v), Some(p)) = (r.run_pct.filter(|&p| p < 100.0), fields.get(after + 1)) {
        out.push(row("counted", v, "%".into(), p));
    }
    if let (Some(v), Some(p)) = (r.metric_value, fields.get(after + 2)) {
        let unit = r.metric_unit.as_deref().unwrap_or("");
        out.push(row("metric", v, unit.into(), p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::blocks;
    use crate::import::mail;

    #[test]
    fn runs_of_counter_lines_with_their_fields() {
        let p = mail::read(
            "Subject: x\n\nWith -r 3:\n\n202.07,msec,task-clock,/,0.02%,203847766,100.00,1.999,CPUs utilized\n32,,context-switches,/,5.80%,1670,75.50,158.310,/sec\n,,,,,87.9,%  tma_bad_speculation\n<not counted>,,page-faults,/,0.00%,0,100.00,,\n\n1,2,3 is no counter.\n"
                .as_bytes(),
        )
        .unwrap();
        let mut notes = Vec::new();
        let f = blocks(&p, &vec![false; p.lines.len()], &mut notes);
        assert_eq!(f.len(), 1);
        let got: Vec<(usize, &str, String, f64, &str, &str)> = f[0]
            .rows
            .iter()
            .map(|r| {
                (
                    r.line,
                    r.quantity.as_str(),
                    r.settings.last().unwrap().1.clone(),
                    r.value,
                    r.unit.as_str(),
                    r.printed.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (5, "task-clock", "value".into(), 202.07, "ms", "202.07"),
                (5, "task-clock", "variance".into(), 0.02, "%", "0.02%"),
                (
                    5,
                    "task-clock",
                    "metric".into(),
                    1.999,
                    "CPUs utilized",
                    "1.999"
                ),
                (6, "context-switches", "value".into(), 32.0, "count", "32"),
                (6, "context-switches", "variance".into(), 5.8, "%", "5.80%"),
                (6, "context-switches", "counted".into(), 75.5, "%", "75.50"),
                (
                    6,
                    "context-switches",
                    "metric".into(),
                    158.31,
                    "/sec",
                    "158.310"
                ),
            ]
        );
        assert!(f[0].rows[0]
            .settings
            .contains(&("cgroup".to_string(), "/".to_string())));
        assert_eq!(f[0].rows[0].note, "With -r 3:");
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].line, 7);
        // one counter line alone, under no perf command: not perf's
        let p = mail::read(
            "Subject: x\n\n4.33,msec,task-clock,4330939,100.00,0.045,CPUs utilized\n".as_bytes(),
        )
        .unwrap();
        assert!(blocks(&p, &vec![false; p.lines.len()], &mut Vec::new()).is_empty());
    }

    /// `perf stat -x, --per-thread` (perf 6.1, tests/fixtures/perf_stat/per-thread.txt):
    /// each thread's counters are rows of their own, the thread a setting.
    #[test]
    fn per_thread_lines_keep_their_thread() {
        let p = mail::read(
            "Subject: x\n\n# perf stat -x, --per-thread -e task-clock,context-switches -p 21643 -- sleep 1\npython3-21698,11.17,msec,task-clock,11173623,100.00,0.011,CPUs utilized\npython3-21697,897,,context-switches,10612091,100.00,84.526,K/sec\n"
                .as_bytes(),
        )
        .unwrap();
        let f = blocks(&p, &vec![false; p.lines.len()], &mut Vec::new());
        let threads: Vec<(String, f64)> = f
            .iter()
            .flat_map(|b| &b.rows)
            .filter(|r| r.settings.last().is_some_and(|(_, v)| v == "value"))
            .map(|r| {
                let t = r.settings.iter().find(|(k, _)| k == "thread");
                (t.map(|(_, v)| v.clone()).unwrap_or_default(), r.value)
            })
            .collect();
        assert_eq!(
            threads,
            [
                ("python3-21698".to_string(), 11.17),
                ("python3-21697".to_string(), 897.0)
            ]
        );
    }
}
