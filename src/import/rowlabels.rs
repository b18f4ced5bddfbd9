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
pub(super) const GENERIC: &[&str] = &[
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
    // `After (+1.8% faster):`: the result in parentheses is no part of the label
    let label = &without_numbers_in_parens(label);
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
    // `Results before this patch:`: after a word of comparison, `this`/`that` point at
    // what is compared, they make no sentence
    let compared = words.iter().any(|w| COMPARED.contains(&w.as_str()));
    let sentence = |w: &str| {
        SENTENCE_WORDS.contains(&w) && !(compared && matches!(w, "this" | "that" | "these"))
    };
    if words.len() > 6 || words.iter().any(|w| sentence(w)) {
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

/// The text without its parenthesised parts that hold a digit.
fn without_numbers_in_parens(label: &str) -> String {
    let mut out = String::new();
    let mut rest = label;
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let inner = &rest[open..open + close + 1];
        out.push_str(&rest[..open]);
        if !inner.contains(|c: char| c.is_ascii_digit()) {
            out.push_str(inner);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Words that open the label of a compared result (`With the stripe cache 21MB/s`).
const COMPARED: [&str; 12] = [
    "with",
    "without",
    "before",
    "after",
    "patched",
    "unpatched",
    "baseline",
    "vanilla",
    "stock",
    "original",
    "old",
    "new",
];

/// The row a result line names before its one number (`printed`): `Without 3a8b36f: 16.01
/// reqs/sec`, `a) without patch: (*SPEED* : …)`, `Without the stripe cache -- 2.1MB/s`,
/// `With the stripe cache 21MB/s`. A list mark before it (`- throughput: +70%`) is no
/// part of the label.
pub fn result_head(text: &str, printed: &str) -> Option<String> {
    let t = text.trim();
    let t = match t.split_once(char::is_whitespace) {
        Some((mark, rest))
            if !mark.is_empty() && mark.chars().all(|c| matches!(c, '-' | '*' | '+')) =>
        {
            rest.trim_start()
        }
        _ => t,
    };
    let short = |h: &str| {
        let h = h.trim();
        (!h.is_empty() && h.split_whitespace().count() <= 6 && !h.contains(printed))
            .then(|| h.to_string())
    };
    for sep in [": ", " -- "] {
        if let Some((head, rest)) = t.split_once(sep) {
            if rest.contains(printed) {
                return short(head);
            }
        }
    }
    let head = t.strip_suffix(printed)?.trim_end();
    let first = head.split_whitespace().next()?.to_ascii_lowercase();
    COMPARED
        .contains(&first.as_str())
        .then(|| short(head))
        .flatten()
}

/// Name the rows of a result line by its head ([`result_head`]): its one number, or each
/// field of the list after the head (`f2fs: IOPS=41.2k, BW=161MiB/s`; a list whose first
/// field is the head, `Mean: 619.7; Median: 548`, has none). Returns the head.
pub fn line_head(text: &str, rows: &mut [Row]) -> Option<String> {
    let field = |r: &Row| {
        r.settings
            .iter()
            .find(|s| s.0 == "field")
            .map(|s| s.1.clone())
    };
    let fields = rows.len() > 1 && rows.iter().all(|r| field(r).is_some());
    let one = rows.len() == 1 && rows[0].settings.is_empty();
    if !one && !fields {
        return None;
    }
    let head =
        result_head(text, &rows[0].printed).filter(|h| field(&rows[0]).as_ref() != Some(h))?;
    apply(rows, &head);
    Some(head)
}

/// The list mark a line starts with (`*`, `**`, `-`, `--`), if any.
fn list_mark(text: &str) -> Option<&str> {
    let t = text.trim_start();
    let end = t.find(|c: char| !matches!(c, '*' | '-'))?;
    (end > 0 && t[end..].starts_with(' ')).then(|| &t[..end])
}

/// The item a sub-item belongs to: `* 32 concurrent processes performing random reads`
/// above `** the bandwidth is improved from 466KB/s to 477KB/s` (a shorter mark, the
/// nearest above at the same quote depth).
pub fn list_parent(lines: &[PostLine], k: usize) -> Option<String> {
    let mark = list_mark(&lines.get(k)?.text)?;
    if mark.len() < 2 {
        return None;
    }
    let depth = lines[k].depth;
    for l in lines[..k].iter().rev() {
        if l.depth != depth || l.text.trim().is_empty() {
            return None;
        }
        match list_mark(&l.text) {
            Some(m) if m.len() < mark.len() => {
                let item = l.text.trim_start()[m.len()..].trim();
                return (item.split_whitespace().count() <= 10).then(|| item.to_string());
            }
            Some(_) => continue,
            None => return None,
        }
    }
    None
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

/// A sentence rather than a table row: many words, ends like a sentence.
pub fn looks_like_prose(t: &str) -> bool {
    let words: Vec<&str> = t.split_whitespace().collect();
    let alpha = words
        .iter()
        .filter(|w| {
            w.len() > 1
                && w.chars()
                    .all(|c| c.is_alphabetic() || matches!(c, ',' | '.' | '\'' | ';'))
        })
        .count();
    alpha >= 6 && alpha * 2 > words.len()
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
    use super::{list_parent, result_head, result_like, short_label, PostLine};

    #[test]
    fn labels_and_not_labels() {
        for (t, want) in [
            ("Unpatched:", Some("Unpatched")),
            ("parent=0:", Some("parent=0")),
            ("  Without the patch:", Some("Without the patch")),
            ("a) without patch:", Some("a) without patch")),
            ("Before:", Some("Before")),
            (
                "Results before this patch:",
                Some("Results before this patch"),
            ),
            ("After (+1.8% faster):", Some("After")),
            ("Wall time (seconds):", Some("Wall time (seconds)")),
            ("This is what we got:", None),
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

    #[test]
    fn sub_items_name_their_item() {
        let lines: Vec<PostLine> = [
            "I performed two tests:",
            "* 32 processes doing random reads",
            "** the bandwidth is improved from 466KB/s to 477KB/s",
            "** the latency is reduced from 7.6s to 1.7s",
            "- throughput: +70%",
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| PostLine {
            n: i + 1,
            text: t.to_string(),
            depth: 0,
            quoted_author: None,
        })
        .collect();
        let p = |k| list_parent(&lines, k);
        assert_eq!(p(3).as_deref(), Some("32 processes doing random reads"));
        assert_eq!(p(2).as_deref(), Some("32 processes doing random reads"));
        assert_eq!(p(1), None);
        assert_eq!(p(4), None);
    }

    #[test]
    fn result_lines_name_their_row() {
        for (t, printed, want) in [
            (
                "Without 3a8b36f: 16.01 reqs/sec",
                "16.01 reqs/sec",
                Some("Without 3a8b36f"),
            ),
            (
                "Without the stripe cache -- 2.1MB/s",
                "2.1MB/s",
                Some("Without the stripe cache"),
            ),
            (
                "With the stripe cache 21MB/s",
                "21MB/s",
                Some("With the stripe cache"),
            ),
            (
                "\t- throughput: +70% in case of null_blk",
                "+70%",
                Some("throughput"),
            ),
            // a sentence that ends with its number names no row
            ("It went up to 21MB/s", "21MB/s", None),
            ("With this patch the whole run took 12s", "12s", None),
        ] {
            assert_eq!(result_head(t, printed).as_deref(), want, "{t}");
        }
    }
}
