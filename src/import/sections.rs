//! Section headings as run labels: a heading labels the results below it until the next
//! heading of its rank or above, as people write a post of several runs:
//!
//! ```text
//! # Main array without SLOG          (Markdown, and `<h2>…</h2>`: ranks 1 to 6)
//! --- baseline ---                   (a text between rules, `== result (KBps) ==`)
//! [ w/o patch ]                      (a text in brackets with a blank in it)
//! Without "discard":                 (a short label: `rowlabels::short_label`)
//! 1) dbench result example1          (a numbered item over results)
//! ```
//!
//! Markdown and HTML headings are the post's structure: they hold until the next heading
//! of their level or above. The others are run labels: a sentence below them (prose, not a
//! result line) ends them too, so that the author's discussion is not labelled with the run
//! above it. A heading's text that names nothing (`## Results`, `Output:`) still ends the
//! sections it closes but labels nothing. A row gets its section as the setting `section`
//! (the headings in force joined with ` / `), unless its settings already say it.

use super::mail::PostLine;
use super::rowlabels::{looks_like_prose, result_like, short_label, GENERIC};
use super::Row;
use std::collections::HashMap;

/// Ranks below Markdown's six levels: run labels.
const FRAMED: u8 = 7;
const LABEL: u8 = 8;

/// A heading line: its rank (1–6 Markdown/HTML, [`FRAMED`], [`LABEL`]) and its text.
/// `code`: the line is inside a code fence (a `#` line there is a shell comment).
pub fn heading(text: &str, code: bool) -> Option<(u8, String)> {
    let t = text.trim();
    if let Some(h) = html_heading(t) {
        return Some(h);
    }
    if let Some((level, body)) = atx(t).filter(|_| !code) {
        // a title, not a comment line of a program's output (`# Sync method: NO SYNC`,
        // `# App overhead is time in microseconds spent …`)
        let title = body.split_whitespace().count() <= 10
            && !body.ends_with(['.', '?', '!'])
            && !body.contains(": ");
        return title.then(|| (level, body.to_string()));
    }
    if let Some(body) = framed(t) {
        return Some((FRAMED, body));
    }
    if let Some(body) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let body = body.trim();
        // `[global]`, `[job1]`: an ini or fio job section, not a heading
        if body.contains(' ') && !body.contains(['[', ']']) && body.len() <= 40 {
            return Some((FRAMED, body.to_string()));
        }
    }
    short_label(t).map(|l| (LABEL, l))
}

/// A title line, a heading that is no short label: Markdown or HTML, a text between
/// rules, in brackets (`== result (KBps) ==`).
pub fn title(text: &str) -> Option<String> {
    heading(text, false)
        .filter(|(rank, _)| *rank <= FRAMED)
        .map(|(_, t)| t)
}

/// A Markdown heading, `### text ###`: its level and text.
fn atx(t: &str) -> Option<(u8, &str)> {
    let level = t.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&level) || !t[level..].starts_with([' ', '\t']) {
        return None;
    }
    let body = t[level..].trim().trim_end_matches('#').trim();
    (!body.is_empty()).then_some((level as u8, body))
}

/// `<h2>#Table of results</h2>`: the level and the text (tags and a leading `#` dropped).
fn html_heading(t: &str) -> Option<(u8, String)> {
    let rest = t.strip_prefix("<h").or_else(|| t.strip_prefix("<H"))?;
    let level = rest.bytes().next().filter(|b| (b'1'..=b'6').contains(b))? - b'0';
    let body = rest[1..].strip_prefix('>')?;
    let end = body.to_ascii_lowercase().rfind("</h")?;
    let mut text = String::new();
    let mut in_tag = false;
    for c in body[..end].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text.trim().trim_start_matches('#').trim();
    (!text.is_empty()).then(|| (level, text.to_string()))
}

/// `--- baseline ---`, `== result (KBps) ==`, `*** patched ***`, `=== v2 ===`: the text
/// between two runs of the same rule mark.
fn framed(t: &str) -> Option<String> {
    let mark = t.chars().next().filter(|c| matches!(c, '-' | '=' | '*'))?;
    let lead = t.chars().take_while(|c| *c == mark).count();
    let trail = t.chars().rev().take_while(|c| *c == mark).count();
    if lead < 2 || trail < 2 || lead + trail >= t.chars().count() {
        return None;
    }
    let body = t[lead..t.len() - trail].trim();
    (!body.is_empty() && body.chars().any(char::is_alphanumeric)).then(|| body.to_string())
}

/// `1) dbench result example1`, `b. with the patch`: a short numbered item with no
/// sentence in it, a label when results follow it.
fn numbered_item(t: &str) -> Option<String> {
    let t = t.trim();
    let mark = t.find([')', '.'])?;
    let (n, rest) = (&t[..mark], t[mark + 1..].trim());
    let numbered = (!n.is_empty() && n.len() <= 2 && n.chars().all(|c| c.is_ascii_digit()))
        || (n.len() == 1 && n.chars().all(|c| c.is_ascii_lowercase()));
    if !numbered
        || !rest.starts_with(|c: char| c.is_alphabetic())
        || rest.ends_with(['.', ',', ';', '?'])
    {
        return None;
    }
    short_label(&format!("{rest}:"))
}

/// Whether the text names anything (`Results`, `Output`, `Example` do not).
fn names_something(label: &str) -> bool {
    label
        .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
        .filter(|w| !w.is_empty())
        .any(|w| !GENERIC.contains(&w.to_ascii_lowercase().as_str()))
}

/// One open section.
struct Open {
    rank: u8,
    text: String,
}

/// Give every row the headings in force at its line (see the module's text). `taken`:
/// the post's lines that commands and tool output took (a root prompt `# mkfs …` is no
/// Markdown heading, fio's `clat percentiles (usec):` no run label). A run label ends at
/// two blank lines too.
pub fn label_rows(lines: &[PostLine], taken: &[bool], rows: &mut [Row]) {
    let mut open: HashMap<usize, Vec<Open>> = HashMap::new();
    let mut at_line: HashMap<usize, String> = HashMap::new();
    let mut code = false;
    let mut blanks = 0;
    for (k, l) in lines.iter().enumerate() {
        let t = l.text.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            code = !code;
            continue;
        }
        let stack = open.entry(l.depth).or_default();
        blanks = if t.is_empty() { blanks + 1 } else { 0 };
        if blanks == 2 {
            stack.retain(|o| o.rank < LABEL);
        }
        // a run of `#` lines is a comment block, not headings
        let hash = |i: usize| lines.get(i).is_some_and(|n| atx(n.text.trim()).is_some());
        let comments = atx(t).is_some() && ((k > 0 && hash(k - 1)) || hash(k + 1));
        let next_is_result = || {
            lines[k + 1..]
                .iter()
                .find(|n| !n.text.trim().is_empty())
                .is_some_and(|n| n.depth == l.depth && !looks_like_prose(&n.text))
        };
        let is_taken = taken.get(k).copied().unwrap_or(false);
        let found = if is_taken || comments {
            None
        } else {
            heading(t, code).or_else(|| {
                numbered_item(t)
                    .filter(|_| next_is_result())
                    .map(|h| (LABEL, h))
            })
        };
        match found {
            Some((rank, text)) => {
                stack.retain(|o| o.rank < rank);
                stack.push(Open { rank, text });
            }
            None if !is_taken && !result_like(t) && looks_like_prose(t) => {
                stack.retain(|o| o.rank < FRAMED);
            }
            None => {}
        }
        let label: Vec<&str> = stack
            .iter()
            .filter(|o| names_something(&o.text))
            .map(|o| o.text.as_str())
            .collect();
        if !label.is_empty() {
            at_line.insert(l.n, label.join(" / "));
        }
    }
    for r in rows {
        let Some(label) = at_line.get(&r.line) else {
            continue;
        };
        let said = r
            .settings
            .iter()
            .any(|(_, v)| label.contains(v.as_str()) && v.len() >= label.len() / 2);
        if !said {
            r.settings.push(("section".into(), label.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Category;

    fn post(text: &str) -> Vec<PostLine> {
        text.lines()
            .enumerate()
            .map(|(i, t)| {
                let depth = t.chars().take_while(|c| *c == '>').count();
                PostLine {
                    n: i + 1,
                    depth,
                    text: t[depth..].trim_start().to_string(),
                    quoted_author: None,
                }
            })
            .collect()
    }

    fn row(line: usize) -> Row {
        Row {
            line,
            group: "prose".into(),
            quantity: "rate".into(),
            settings: Vec::new(),
            value: 1.0,
            unit: "MB/s".into(),
            printed: "1 MB/s".into(),
            approx: false,
            category: Category::Measurement,
            stated_by: None,
            note: String::new(),
        }
    }

    fn sections(text: &str, taken: &[usize]) -> Vec<Option<String>> {
        let lines = post(text);
        let taken: Vec<bool> = (0..lines.len()).map(|k| taken.contains(&k)).collect();
        let mut rows: Vec<Row> = (1..=lines.len()).map(row).collect();
        label_rows(&lines, &taken, &mut rows);
        rows.iter()
            .map(|r| {
                r.settings
                    .iter()
                    .find(|s| s.0 == "section")
                    .map(|s| s.1.clone())
            })
            .collect()
    }

    #[test]
    fn heading_kinds() {
        for (t, want) in [
            (
                "# Main array without SLOG",
                Some((1, "Main array without SLOG")),
            ),
            (
                "### SSD Samsung 860Pro ###",
                Some((3, "SSD Samsung 860Pro")),
            ),
            (
                "<h2>#Table of results with lvmraid</h2>",
                Some((2, "Table of results with lvmraid")),
            ),
            ("--- baseline ---", Some((FRAMED, "baseline"))),
            ("== result (KBps) ==", Some((FRAMED, "result (KBps)"))),
            ("[ w/o patch ]", Some((FRAMED, "w/o patch"))),
            ("Without \"discard\":", Some((LABEL, "Without \"discard\""))),
            ("patched:", Some((LABEL, "patched"))),
            // not headings: an ini section, a rule, a comment without a blank, a sentence
            ("[global]", None),
            ("----------------------------------------", None),
            ("#Throughput 884.406 MB/sec (sync open)", None),
            ("Here is what I got with the patch:", None),
        ] {
            let got = heading(t, false);
            assert_eq!(got.as_ref().map(|(r, s)| (*r, s.as_str())), want, "{t}");
        }
        // in a code block `# …` is a shell comment
        assert_eq!(heading("# drop the caches", true), None);
        assert_eq!(
            numbered_item("1)dbench result example1").as_deref(),
            Some("dbench result example1")
        );
        assert_eq!(numbered_item("2. I ran it again."), None);
    }

    #[test]
    fn a_heading_labels_the_results_below_it_until_the_next() {
        let s = sections(
            "# Main array without SLOG\n\n```\nWRITE: bw=10MiB/s\n# a comment in the block\nREAD: bw=20MiB/s\n```\n\n## with SLOG\nWRITE: bw=30MiB/s\n# Results\nsee 40 MB/s\n",
            &[],
        );
        assert_eq!(s[3].as_deref(), Some("Main array without SLOG"));
        assert_eq!(s[5].as_deref(), Some("Main array without SLOG"));
        assert_eq!(s[9].as_deref(), Some("Main array without SLOG / with SLOG"));
        // a heading that names nothing ends the others and labels nothing
        assert_eq!(s[11], None);
        // a program's `#` comment lines are no headings
        let s = sections(
            "# Version 3.3, 40 thread(s)\n# Sync method: NO SYNC\n  12 files/sec\n# Sync method: fsync after each file was written to the disk\n 13 files/sec\n",
            &[],
        );
        assert_eq!(s, [None, None, None, None, None]);
    }

    #[test]
    fn run_labels_end_at_the_next_label_or_a_sentence() {
        let s = sections(
            "--- baseline ---\n  12.5 MB/s\n[ w/o patch ]\n  13.1 MB/s\nWith the patch applied the numbers got a lot better for all of us.\n  14 MB/s\npatched:\n 15 MB/s\n\n 16 MB/s\n# mkfs.xfs -f /dev/sdb\n",
            &[10],
        );
        assert_eq!(s[1].as_deref(), Some("baseline"));
        assert_eq!(s[3].as_deref(), Some("w/o patch"));
        assert_eq!(s[5], None);
        assert_eq!(s[7].as_deref(), Some("patched"));
        assert_eq!(s[9].as_deref(), Some("patched"));
        // a root prompt (a command line) is no heading
        assert_eq!(s[10].as_deref(), Some("patched"));
        // two blank lines end a run label
        let s = sections("Unpatched:\n\n\n  2.00 reqs/sec\n", &[]);
        assert_eq!(s[3], None);
    }

    #[test]
    fn quoted_sections_are_their_own() {
        let s = sections("> before:\n> 10 MB/s\nafter:\n> 11 MB/s\n12 MB/s\n", &[]);
        assert_eq!(s[1].as_deref(), Some("before"));
        assert_eq!(s[3].as_deref(), Some("before"));
        assert_eq!(s[4].as_deref(), Some("after"));
    }
}
