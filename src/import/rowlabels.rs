//! Result labels on the line above their numbers: a line that is only a short label
//! (`Unpatched:`, `parent=0:`, `Without the patch:`, `a) without patch:`) heads the numbers,
//! `time` blocks and fio lines right below it; a result line that names its row
//! (`a) without patch:  (*SPEED* : 451.01Kb/sec)`) heads the result line right below it
//! (`112.75 Requests/sec executed`). A sentence ending with `:` ("Here are the results:"),
//! a generic heading (`Results:`) or a blank line between them heads nothing, so that a
//! label is never taken from unrelated prose.

use super::mail::PostLine;
use super::output::label_settings;
use super::Row;

/// Words that make a line a sentence, not a label.
const SENTENCE_WORDS: &[&str] = &[
    "i",
    "we",
    "you",
    "he",
    "she",
    "they",
    "it",
    "this",
    "these",
    "those",
    "that",
    "here",
    "there",
    "see",
    "got",
    "get",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "shows",
    "show",
    "following",
    "below",
    "above",
    "like",
    "looks",
    "look",
    "has",
    "have",
    "had",
    "ran",
    "run",
    "running",
    "did",
    "does",
    "which",
    "when",
    "what",
    "so",
    "if",
    "then",
];

/// Words of a heading that names no row (`Results:`, `Test output:`).
const GENERIC: &[&str] = &[
    "results",
    "result",
    "output",
    "outputs",
    "numbers",
    "data",
    "example",
    "examples",
    "log",
    "logs",
    "summary",
    "details",
    "test",
    "tests",
    "testing",
    "script",
    "command",
    "commands",
    "setup",
    "the",
    "my",
    "our",
    "and",
    "of",
    "benchmark",
    "benchmarks",
    "performance",
    "perf",
    "timings",
    "timing",
    "runs",
    "sysbench",
    "fio",
    "fs_mark",
    "fsstress",
    "time",
    "times",
    "note",
    "notes",
    "e.g",
    "ps",
    "cc",
    "to",
    "from",
    "subject",
    "date",
    "link",
    "signed-off-by",
    "reviewed-by",
    "acked-by",
    "tested-by",
    "reported-by",
];

/// The label of a line that is only a short label ending with `:` (at most six words,
/// not a sentence, not a generic heading).
pub fn short_label(text: &str) -> Option<String> {
    let t = text.trim();
    // `**Unpatched**`, `*Patched*`: a label set off by emphasis needs no colon
    let emphasis = ["**", "*", "__"].iter().find_map(|m| {
        t.strip_prefix(m)?
            .strip_suffix(m)
            .filter(|l| !l.is_empty() && !l.contains('*'))
    });
    let label = match emphasis {
        Some(l) => l.trim().trim_end_matches(':'),
        None => t.strip_suffix(':')?.trim(),
    };
    if label.is_empty() || label.contains(':') || label.ends_with(['.', ',']) {
        return None;
    }
    let words: Vec<String> = label
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '=' && c != '-' && c != '_')
                .to_ascii_lowercase()
        })
        .collect();
    if words.len() > 6 || words.iter().any(|w| SENTENCE_WORDS.contains(&w.as_str())) {
        return None;
    }
    if words
        .iter()
        .all(|w| w.is_empty() || GENERIC.contains(&w.as_str()))
    {
        return None;
    }
    Some(label.to_string())
}

/// A line of results rather than a sentence: a few words, a digit, no full stop, no
/// sentence words (`112.75 Requests/sec executed`, `16.01 reqs/sec`).
pub fn result_like(text: &str) -> bool {
    let t = text.trim();
    let words: Vec<String> = t
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_ascii_lowercase()
        })
        .collect();
    !words.is_empty()
        && words.len() <= 8
        && t.chars().any(|c| c.is_ascii_digit())
        && !t.ends_with(['.', ':', '?'])
        && !words.iter().any(|w| SENTENCE_WORDS.contains(&w.as_str()))
}

/// The short label heading the block that starts at post index `k`: the nearest line above
/// it, past lines `skip` says belong to the block's kind (earlier `time` blocks under the
/// same label) and single blank lines, when it is a short label at the same quote depth.
pub fn heading(lines: &[PostLine], k: usize, skip: &dyn Fn(usize) -> bool) -> Option<String> {
    let depth = lines.get(k)?.depth;
    let mut i = k;
    let mut blanks = 0;
    while i > 0 {
        i -= 1;
        let l = &lines[i];
        if l.depth != depth {
            return None;
        }
        if l.text.trim().is_empty() {
            blanks += 1;
            if blanks > 1 {
                return None;
            }
            continue;
        }
        blanks = 0;
        if skip(i) {
            continue;
        }
        return short_label(&l.text);
    }
    None
}

/// Give rows the label that heads them: its `key=value` settings, and the label as `row`
/// unless it is only settings (`parent=0:`) or the rows have a row already.
pub fn apply(rows: &mut [Row], label: &str) {
    let settings = label_settings(label);
    let only_settings = !settings.is_empty()
        && label
            .split_whitespace()
            .all(|w| w.trim_matches([',', ':']).contains('='));
    for r in rows {
        for (k, v) in &settings {
            if !r.settings.iter().any(|s| s.0 == *k) {
                r.settings.push((k.clone(), v.clone()));
            }
        }
        if !only_settings && !r.settings.iter().any(|s| s.0 == "row") {
            r.settings.push(("row".into(), label.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{result_like, short_label};

    #[test]
    fn labels_and_not_labels() {
        for (t, want) in [
            ("Unpatched:", Some("Unpatched")),
            ("parent=0:", Some("parent=0")),
            ("  Without the patch:", Some("Without the patch")),
            ("a) without patch:", Some("a) without patch")),
            ("Before:", Some("Before")),
            ("Here are the results:", None),
            ("Results:", None),
            ("Test results:", None),
            ("I ran the test on a 1TB drive and got:", None),
            ("Signed-off-by:", None),
            ("a) without patch:  (*SPEED* : 451.01Kb/sec)", None),
        ] {
            assert_eq!(short_label(t).as_deref(), want, "{t}");
        }
        assert!(result_like("   112.75 Requests/sec executed"));
        assert!(!result_like("It took 112 seconds, which is fine."));
        assert!(!result_like("see 3 below"));
    }
}
