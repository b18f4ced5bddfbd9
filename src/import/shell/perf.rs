//! `perf stat [OPTIONS] [--] CMD`: the command perf measures is the one the post runs,
//! `-r N` its repetition (perf runs it N times and prints the means), the other options
//! (`-e cycles,instructions`, `-x,`, `-a`) how perf counted it. Read like `time CMD`.

use super::super::{Note, NoteKind};
use super::unquote;

/// `perf stat`'s options that take a value (short and long forms), from perf-stat(1).
const SHORT_WITH_VALUE: &str = "eroxIGCptMD";
const LONG_WITH_VALUE: &[&str] = &[
    "--event",
    "--repeat",
    "--output",
    "--field-separator",
    "--interval-print",
    "--interval-count",
    "--cgroup",
    "--cpu",
    "--pid",
    "--tid",
    "--metrics",
    "--delay",
    "--pre",
    "--post",
    "--log-fd",
    "--timeout",
    "--control",
    "--metric-groups",
];

/// What `perf stat` around a command says.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfStat {
    /// Where `perf` stands among the command's words.
    pub start: usize,
    /// How many words `perf stat` and its options take (`--` included).
    pub len: usize,
    /// `-r N` / `--repeat N`.
    pub runs: Option<u64>,
    /// The events of `-e` (each `-e` split at top-level commas), as written.
    pub events: Vec<String>,
    /// The options as written (`-r 6 -e cycles -x,`), for messages.
    pub options: String,
}

/// `perf stat …` at word `at` of `words`: its options, when a command follows them.
pub fn at(words: &[String], at: usize) -> Option<PerfStat> {
    let prog = unquote(words.get(at)?);
    if prog.rsplit('/').next() != Some("perf")
        || words.get(at + 1).map(String::as_str) != Some("stat")
    {
        return None;
    }
    let mut i = at + 2;
    let mut runs = None;
    let mut events = Vec::new();
    let mut take = |opt: &str, value: &str| match opt {
        "r" | "--repeat" => runs = value.parse().ok(),
        "e" | "--event" => events.extend(split_events(value)),
        _ => {}
    };
    while let Some(w) = words.get(i) {
        let w = unquote(w);
        if w == "--" {
            i += 1;
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (w.clone(), None),
            };
            if LONG_WITH_VALUE.contains(&name.as_str()) {
                match value {
                    Some(v) => take(&name, &v),
                    None => {
                        take(&name, &unquote(words.get(i + 1)?));
                        i += 1;
                    }
                }
            }
            i += 1;
            continue;
        }
        let Some(flags) = w.strip_prefix('-').filter(|f| !f.is_empty()) else {
            break;
        };
        // `-a`, `-ar 5`, `-r5`, `-x,`, `-e cycles`
        for (k, c) in flags.char_indices() {
            if SHORT_WITH_VALUE.contains(c) {
                let rest = &flags[k + c.len_utf8()..];
                if rest.is_empty() {
                    take(&c.to_string(), &unquote(words.get(i + 1)?));
                    i += 1;
                } else {
                    take(&c.to_string(), rest);
                }
                break;
            }
        }
        i += 1;
    }
    if i >= words.len() {
        return None;
    }
    Some(PerfStat {
        start: at,
        len: i - at,
        runs,
        events,
        options: words[at + 2..i]
            .iter()
            .map(String::as_str)
            .filter(|w| *w != "--")
            .collect::<Vec<_>>()
            .join(" "),
    })
}

/// `cycles,instructions,cpu/event=0x3c/` → its events (commas inside `/…/` or `{…}` kept).
fn split_events(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut slash = false;
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '/' => slash = !slash,
            ',' if depth <= 0 && !slash => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.retain(|e| !e.is_empty());
    out
}

/// The workload's `repeat:`: perf's `-r N` (above 1), times the count of a loop around it
/// (`looped`).
pub fn repeat(looped: Option<u64>, p: Option<&PerfStat>) -> Option<u64> {
    match (looped, p.and_then(|p| p.runs).filter(|&n| n > 1)) {
        (Some(a), Some(b)) => Some(a.saturating_mul(b)),
        (a, b) => a.or(b),
    }
}

/// The `perf stat` a command ran under: said in its comment and the trace. Its runs are
/// the step's `repeat:` (`runs`); its counters are not the draft's (fslab times the
/// command, as for `time CMD`), which a message says.
pub fn note(
    p: &PerfStat,
    workload: bool,
    line: usize,
    comment: &mut String,
    notes: &mut Vec<Note>,
) {
    let runs = p.runs.filter(|&n| n > 1 && workload);
    let counted = if p.events.is_empty() {
        "perf's default events".to_string()
    } else {
        format!("`{}`", p.events.join(","))
    };
    comment.push_str(&format!(
        "; under `perf stat {}` in the post: {counted} not counted, the draft times it",
        p.options
    ));
    if let Some(n) = runs {
        notes.push(Note::new(
            line,
            NoteKind::Recognised,
            &format!("`perf stat -r {n}`: the command it measures runs {n} times (`repeat: {n}`)"),
        ));
    }
    notes.push(Note::new(
        line,
        NoteKind::Unmapped,
        &format!(
            "`perf stat {}` counted {counted}: the draft times the command and does not count them (run it under `perf stat -x,` in a step with `parse: perf-stat` to)",
            p.options
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::{at, split_events};

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn options_runs_and_events() {
        let w = words("perf stat -r 6 -e cycles,instructions -x, -a dd if=/dev/zero of=f");
        let p = at(&w, 0).unwrap();
        assert_eq!((p.len, p.runs), (8, Some(6)));
        assert_eq!(p.events, ["cycles", "instructions"]);
        assert_eq!(p.options, "-r 6 -e cycles,instructions -x, -a");
        let w = words("sudo perf stat --repeat=3 -ar5 -- ls -l");
        let p = at(&w, 1).unwrap();
        assert_eq!((p.start, p.len, p.runs), (1, 5, Some(5)));
        assert_eq!(w[p.start + p.len], "ls");
        // no command after the options, or not `perf stat`
        assert_eq!(at(&words("perf stat -a -r"), 0), None);
        assert_eq!(at(&words("perf record -g ls"), 0), None);
        assert_eq!(
            split_events("cpu/event=0x3c,umask=0/,{cycles,branches},faults"),
            ["cpu/event=0x3c,umask=0/", "{cycles,branches}", "faults"]
        );
    }
}
