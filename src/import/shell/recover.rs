//! Shell the grammar rejects as a whole, read in parts: a post shows half a loop, a
//! stray `done`, a function whose `}` comes after a quoted reply's prose. The smallest run
//! of lines that parses is read; a construct the post never closes is read as if it
//! closed where the block ends (said, as [`Node::Unread`]); a line of a construct shown
//! only in part loses the keywords that open or close what is not shown; a line that
//! still does not parse is kept as [`Node::Unread`] with its line.

use super::parse::read_span;
use super::Node;

/// How many lines a construct the grammar cannot close is looked for (a post's script).
const MAX_SPAN: usize = 400;

/// How many ends an unclosed construct is tried with (the longest first).
const MAX_CLOSE_TRIES: usize = 32;

/// Read logical lines (post line, text) as shell.
pub(super) fn read(lines: &[(usize, String)]) -> Vec<Node> {
    if let Some(nodes) = read_span(lines) {
        return nodes;
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let end = (start + 1..=lines.len().min(start + MAX_SPAN))
            .find_map(|end| read_span(&lines[start..end]).map(|n| (end, n)));
        if let Some((end, nodes)) = end {
            out.extend(nodes);
            start = end;
            continue;
        }
        if let Some((end, nodes, note)) = closed(&lines[start..]) {
            out.push(note);
            out.extend(nodes);
            start += end;
            continue;
        }
        let (line, text) = &lines[start];
        match repaired(text).and_then(|t| read_span(&[(*line, t)])) {
            Some(nodes) => out.extend(nodes),
            None => out.push(Node::Unread {
                line: *line,
                what: format!("`{}`: not shell the draft can read", text.trim()),
                body: Vec::new(),
            }),
        }
        start += 1;
    }
    out
}

/// A construct the first line opens and the post never closes (`benchme() {` … with its
/// `}` after a reply's prose, `for f in *; do` … without `done`): the longest run of lines
/// that parses once the words that close what is still open are added after it. The
/// nodes, how many lines they take, and the note that says so.
fn closed(lines: &[(usize, String)]) -> Option<(usize, Vec<Node>, Node)> {
    let first = lines.first()?;
    if closers(std::slice::from_ref(first)).is_empty() {
        return None;
    }
    let longest = lines.len().min(MAX_SPAN);
    (1..=longest)
        .rev()
        .filter_map(|end| {
            let shut = closers(&lines[..end]);
            (!shut.is_empty()).then_some((end, shut))
        })
        .take(MAX_CLOSE_TRIES)
        .find_map(|(end, shut)| {
            let last = lines[end - 1].0;
            let mut span = lines[..end].to_vec();
            span.extend(shut.iter().map(|w| (last, w.to_string())));
            let nodes = read_span(&span)?;
            let note = Node::Unread {
                line: first.0,
                what: format!(
                    "`{}` is not closed where the post's shell stops (line {last}): guess: read as if `{}` closed it there",
                    first.1.trim(),
                    shut.join("; ")
                ),
                body: Vec::new(),
            };
            Some((end, nodes, note))
        })
}

/// The words that would close the constructs the lines leave open, innermost first
/// (`do` → `done`, `if` → `fi`, `case` → `esac`, `{` → `}`), read from the keywords at a
/// command's place; quotes and comments are skipped.
fn closers(lines: &[(usize, String)]) -> Vec<&'static str> {
    let mut open: Vec<&'static str> = Vec::new();
    for (_, text) in lines {
        for w in command_words(text) {
            let shut = match w.as_str() {
                "do" => Some("done"),
                "if" => Some("fi"),
                "case" => Some("esac"),
                "{" => Some("}"),
                _ => None,
            };
            if let Some(s) = shut {
                open.push(s);
            } else if open.last().is_some_and(|s| *s == w) {
                open.pop();
            }
        }
    }
    open.reverse();
    open
}

/// The words of a line that stand where a command (or a keyword) starts: first on the
/// line, after `;`, `&`, `|`, `(`, `)`, or after a keyword; quoted text and a comment
/// are no words.
fn command_words(text: &str) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "do", "done", "then", "else", "elif", "if", "fi", "case", "esac", "{", "}", "while",
        "until", "!", "time",
    ];
    let mut out = Vec::new();
    let mut word = String::new();
    let mut at_command = true;
    let mut quote: Option<char> = None;
    let mut flush = |word: &mut String, at_command: &mut bool, sep: bool| {
        if !word.is_empty() {
            if *at_command {
                out.push(word.clone());
            }
            *at_command = KEYWORDS.contains(&word.as_str());
            word.clear();
        }
        if sep {
            *at_command = true;
        }
    };
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => {
                quote = Some(c);
                word.push('x');
            }
            (None, '#') if word.is_empty() => break,
            (None, ';' | '&' | '|' | '(' | ')') => flush(&mut word, &mut at_command, true),
            (None, c) if c.is_whitespace() => flush(&mut word, &mut at_command, false),
            (None, c) => word.push(c),
        }
    }
    flush(&mut word, &mut at_command, false);
    out
}

/// A line of a construct the post shows only in part (`do dd …; done`, `fi`): the commands
/// without the keywords that open or close what the post does not show.
fn repaired(text: &str) -> Option<String> {
    let mut t = text.trim();
    loop {
        let before = t;
        for k in ["do", "then", "else", "{"] {
            if let Some(r) = t
                .strip_prefix(k)
                .filter(|r| r.starts_with([' ', '\t', ';']))
            {
                t = r.trim_start_matches([' ', '\t', ';']);
            }
        }
        for k in ["done", "fi", "}", "esac"] {
            if t == k {
                return Some(String::new());
            }
            if let Some(r) = t.strip_suffix(k).filter(|r| r.ends_with([' ', '\t', ';'])) {
                t = r.trim_end_matches([' ', '\t', ';']);
            }
        }
        if t == before {
            break;
        }
    }
    (t != text.trim()).then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::{closers, read};
    use crate::import::shell::Node;

    fn lines(s: &str) -> Vec<(usize, String)> {
        s.lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.to_string()))
            .collect()
    }

    #[test]
    fn closers_follow_the_keywords_at_a_command_place() {
        assert_eq!(closers(&lines("benchme() {\n  x=1")), ["}"]);
        assert_eq!(
            closers(&lines("for i in 1 2; do\n  if [ -d x ]; then\n  echo done")),
            ["fi", "done"]
        );
        assert!(closers(&lines("for i in 1 2; do echo \"do\"; done")).is_empty());
        assert!(closers(&lines("# if we do this { x")).is_empty());
        assert!(closers(&lines("echo ${x} {a,b}")).is_empty());
    }

    #[test]
    fn an_unclosed_function_is_read_to_the_end_of_the_block_and_said() {
        let nodes = read(&lines(
            "benchme() {\n  mkdirme\n\n  time fs_mark -d /mnt/x\n  time rmdirme",
        ));
        let Some(Node::Unread { line: 1, what, .. }) = nodes.first() else {
            panic!("{nodes:?}");
        };
        assert!(
            what.contains("not closed where the post's shell stops (line 5)"),
            "{what}"
        );
        let Some(Node::Func { name, body, .. }) = nodes.get(1) else {
            panic!("{nodes:?}");
        };
        assert_eq!(name, "benchme");
        assert_eq!(body.len(), 3, "{body:?}");
        // a stray closing word alone is nothing
        assert!(read(&lines("}")).is_empty());
    }
}
