//! Text fitted to a mail's columns: widths in terminal columns (`unicode-width`: `—`
//! and `±` are one column, a CJK character two), quotes shortened at a word, paragraphs
//! wrapped at words, shell commands continued with ` \`. Whatever the input, no line
//! these return is wider than asked, but for one case said where it is.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The columns of a plain-text mail line (the lists' convention).
pub const MAIL_COLUMNS: usize = 72;

/// The columns `s` takes on a terminal.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// The longest prefix of `s` that fits in `cols` columns.
fn prefix_fitting(s: &str, cols: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let w = UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > cols {
            return &s[..i];
        }
        used += w;
    }
    s
}

/// `s` with its runs of whitespace made one space, cut to at most `cols` columns: at
/// the last word that fits with an ellipsis (`…`) after it, or inside a word when the
/// first word alone is wider than half of `cols`.
pub fn shorten(s: &str, cols: usize) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if width(&s) <= cols {
        return s;
    }
    if cols == 0 {
        return String::new();
    }
    let room = prefix_fitting(&s, cols - 1);
    let cut = match room.rfind(' ') {
        Some(i) if width(&room[..i]) * 2 >= cols => &room[..i],
        _ => room,
    };
    format!("{}…", cut.trim_end_matches([' ', ',', ';', ':', '.']))
}

/// `text` wrapped at words into lines of at most `cols` columns, the first starting
/// with `first` and the others with `rest` (a hanging indent). A word wider than a line
/// is cut where the line ends and continued on the next.
pub fn wrap(text: &str, cols: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let mut word = word;
        loop {
            let sep = usize::from(!empty);
            if width(&line) + sep + width(word) <= cols {
                if !empty {
                    line.push(' ');
                }
                line.push_str(word);
                empty = false;
                break;
            }
            if !empty {
                lines.push(std::mem::replace(&mut line, rest.to_string()));
                empty = true;
                continue;
            }
            // A word wider than a whole line: cut it where the line ends.
            let head = prefix_fitting(word, cols.saturating_sub(width(&line)).max(1));
            let head = if head.is_empty() {
                &word[..word.chars().next().map_or(0, char::len_utf8)]
            } else {
                head
            };
            line.push_str(head);
            word = &word[head.len()..];
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            if word.is_empty() {
                break;
            }
        }
    }
    if !empty || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// A shell command of `words` (each already quoted for the shell) in lines of at most
/// `cols` columns: each line but the last ends with ` \` and the next is indented by
/// `indent`. An unquoted word too long for any line is split with a backslash-newline,
/// which the shell removes, and continued at the next line's first column; a quoted one
/// (`'…'`) cannot be split, and is the one case where a line can be wider than `cols`.
pub fn wrap_command(words: &[String], cols: usize, first: &str, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in words {
        let sep = usize::from(!empty);
        // Room for the word and, unless it is the last, for a ` \` after it.
        if width(&line) + sep + width(word) + 2 <= cols {
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
            continue;
        }
        if !empty {
            line.push_str(" \\");
            lines.push(std::mem::replace(&mut line, indent.to_string()));
        }
        let quoted = word.contains(['\'', '"', '\\']);
        let mut rest = word.as_str();
        while !quoted && width(&line) + width(rest) + 2 > cols {
            let head = match prefix_fitting(rest, cols.saturating_sub(width(&line) + 1)) {
                "" => &rest[..rest.chars().next().map_or(0, char::len_utf8)],
                head => head,
            };
            line.push_str(head);
            line.push('\\');
            lines.push(std::mem::take(&mut line));
            rest = &rest[head.len()..];
        }
        line.push_str(rest);
        empty = false;
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_cuts_at_a_word_and_says_so() {
        let q = "I think it's safe to say the overhead ranges between negligible and 10%";
        assert_eq!(shorten(q, 200), q);
        let s = shorten(q, 24);
        assert_eq!(s, "I think it's safe to…");
        assert!(width(&s) <= 24);
        // Whitespace is one space; a long first word is cut inside.
        assert_eq!(shorten("a\n  b", 10), "a b");
        assert_eq!(shorten("abcdefghijklmnop qr", 8), "abcdefg…");
        assert_eq!(shorten("abc", 0), "");
        for cols in 1..40 {
            assert!(width(&shorten(q, cols)) <= cols, "{cols}");
        }
    }

    #[test]
    fn wrap_keeps_every_line_within_the_columns() {
        let t = "stand-in workload: fsstress ran as `fslab stress` (fslab's built-in fsstress-compatible workload)";
        let lines = wrap(t, 30, "Differs: ", "  ");
        assert_eq!(lines[0], "Differs: stand-in workload:");
        assert!(lines[1..].iter().all(|l| l.starts_with("  ")));
        assert!(lines.iter().all(|l| width(l) <= 30), "{lines:?}");
        assert_eq!(
            lines.join(" ").split_whitespace().collect::<Vec<_>>(),
            format!("Differs: {t}")
                .split_whitespace()
                .collect::<Vec<_>>()
        );
        // A word wider than a line is cut, never left over-wide.
        let long = wrap(&"x".repeat(25), 10, "", "");
        assert_eq!(long, ["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]);
        assert_eq!(wrap("", 10, "a: ", ""), ["a: "]);
        // Columns, not bytes or chars: `—` is one column, `漢` two.
        assert_eq!(width("a — ±"), 5);
        assert_eq!(width("漢"), 2);
        assert!(wrap("漢漢漢漢漢漢", 5, "", "")
            .iter()
            .all(|l| width(l) <= 5));
    }

    #[test]
    fn a_command_continues_with_backslashes() {
        let words: Vec<String> = "fslab run experiments/xfs-parent-pointers.yaml --profile published --set link=1 --set replicates=3"
            .split(' ')
            .map(str::to_string)
            .collect();
        let lines = wrap_command(&words, 48, "  ", "      ");
        assert!(lines.iter().all(|l| width(l) <= 48), "{lines:#?}");
        assert!(lines[..lines.len() - 1].iter().all(|l| l.ends_with(" \\")));
        assert!(!lines.last().unwrap().ends_with('\\'));
        // What the shell reads back: the same words.
        let back = lines.join("\n").replace("\\\n", "");
        assert_eq!(back.split_whitespace().collect::<Vec<_>>(), words);
        // An unquoted word wider than a line is split with a backslash-newline.
        let long = vec!["cat".to_string(), format!("/var/tmp/{}", "d".repeat(50))];
        let lines = wrap_command(&long, 30, "", "  ");
        assert!(lines.iter().all(|l| width(l) <= 30), "{lines:#?}");
        let back = lines.join("\n").replace("\\\n", "");
        assert_eq!(back.split_whitespace().collect::<Vec<_>>(), long);
    }
}
