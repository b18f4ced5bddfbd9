//! Here-documents: `cat > job.fio <<EOF`, `<<-'EOF'`, `fio - << "END"`. The lines up to
//! the delimiter are a text the command reads on its standard input (usually a file the
//! script writes): never commands, never the post's numbers. A here-string
//! (`debugfs -w /dev/sdb <<< "stats"`, `<<<$cmds`, `<<< $'a\nb'`) is the same: a text on
//! the command's input, kept as a [`HereDoc`] (`sh` has no `<<<`); a quoted one that does
//! not close on its line goes on to the line holding its closing quote, like a
//! here-document's body.

use super::unquote;

/// A here-document fed to a command.
#[derive(Debug, Clone, PartialEq)]
pub struct HereDoc {
    /// The delimiter (`EOF`).
    pub delim: String,
    /// `<<'EOF'` / `<<"EOF"` / `<<\EOF`: the shell expands nothing in the body.
    pub quoted: bool,
    /// The body's lines with their post line numbers, as written.
    pub body: Vec<(usize, String)>,
    /// Whether the delimiter line was found (else the body runs to the block's end).
    pub closed: bool,
    /// Written as a here-string (`<<< WORD`): the body is the word, with a newline.
    pub string: bool,
}

impl HereDoc {
    /// The body with the indentation all its lines share removed (a mail indents the
    /// whole script), one line each.
    pub fn text(&self) -> Vec<String> {
        let indent = self
            .body
            .iter()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(_, l)| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        self.body
            .iter()
            .map(|(_, l)| l.get(indent..).unwrap_or(l.trim_start()).to_string())
            .collect()
    }
}

/// A here-document operator in a line: where it starts and ends in the line, its delimiter
/// and whether the delimiter is quoted.
#[derive(Debug, Clone, PartialEq)]
pub struct Opener {
    pub start: usize,
    pub end: usize,
    pub delim: String,
    pub quoted: bool,
    /// A here-string whose quoted text goes on past the line (`<<< "stats`): where its
    /// text starts in the line; `delim` is then [`STRING`] and the quote (see [`ends`]).
    pub text_from: Option<usize>,
}

/// The start of the `delim` of a here-string whose quoted text spans lines: `STRING` and
/// its opening quote (`"`, `'` or `$'`).
pub const STRING: &str = "\u{2}here-string";

/// Where the quoted text opened by `quote` (`"`, `'`, `$'`) closes in `s`: the index of
/// the closing quote (a `\` escapes the next character in `"…"` and `$'…'`).
pub fn closing(s: &str, quote: &str) -> Option<usize> {
    let q = if quote == "\"" { '"' } else { '\'' };
    let escapes = quote != "'";
    let mut it = s.char_indices();
    while let Some((i, c)) = it.next() {
        if escapes && c == '\\' {
            it.next();
        } else if c == q {
            return Some(i);
        }
    }
    None
}

/// The rest of the line after the closing quote of a here-string that spans lines (`; done`).
pub fn after_close<'a>(line: &'a str, delim: &str) -> Option<&'a str> {
    let quote = delim.strip_prefix(STRING)?;
    closing(line, quote).map(|i| &line[i + 1..])
}

/// The here-document operators of a shell line, outside quotes, in order (`<<` inside
/// `$((…))` is not one); a here-string (`<<<`) only when its quoted text does not close on
/// the line (its body then runs to the line of its closing quote).
pub fn openers(line: &str) -> Vec<Opener> {
    let b: Vec<(usize, char)> = line.char_indices().collect();
    let mut out = Vec::new();
    let mut q: Option<char> = None;
    let mut k = 0;
    while k < b.len() {
        let c = b[k].1;
        if let Some(o) = q {
            if c == o {
                q = None;
            }
            k += 1;
            continue;
        }
        match c {
            '\'' | '"' => q = Some(c),
            '#' if k == 0 || b[k - 1].1.is_whitespace() => break,
            '<' if line[b[k].0..].starts_with("<<<") => {
                // a here-string: a quoted text that does not close on this line goes on
                // over the next lines
                let at = b[k].0;
                let rest = &line[at + 3..];
                let word = rest.trim_start();
                let wat = at + 3 + (rest.len() - word.len());
                let quote = ["$'", "\"", "'"].into_iter().find(|q| word.starts_with(q));
                let Some(quote) = quote else {
                    k += 3;
                    continue;
                };
                let from = wat + quote.len();
                match closing(&line[from..], quote) {
                    Some(c) => {
                        // closed on the line: read with the command's words
                        let end = from + c + 1;
                        k = b.iter().position(|x| x.0 >= end).unwrap_or(b.len());
                        continue;
                    }
                    None => {
                        out.push(Opener {
                            start: at,
                            end: line.len(),
                            delim: format!("{STRING}{quote}"),
                            quoted: quote != "\"",
                            text_from: Some(from),
                        });
                        break;
                    }
                }
            }
            '<' if b.get(k + 1).is_some_and(|x| x.1 == '<')
                && b.get(k + 2).is_none_or(|x| x.1 != '<')
                && (k == 0 || b[k - 1].1 != '<')
                && !line[..b[k].0].contains("$((") =>
            {
                let start = b[k].0;
                let mut j = k + 2;
                if b.get(j).is_some_and(|x| x.1 == '-') {
                    j += 1;
                }
                while b.get(j).is_some_and(|x| x.1 == ' ' || x.1 == '\t') {
                    j += 1;
                }
                let mut delim = String::new();
                let mut quoted = false;
                let mut dq: Option<char> = None;
                while let Some(&(_, ch)) = b.get(j) {
                    match (dq, ch) {
                        (None, '\'' | '"') => {
                            dq = Some(ch);
                            quoted = true;
                        }
                        (Some(o), ch) if ch == o => dq = None,
                        (None, '\\') => quoted = true,
                        (None, ch)
                            if ch.is_whitespace()
                                || matches!(ch, ';' | '|' | '&' | '<' | '>' | ')') =>
                        {
                            break
                        }
                        (_, ch) => delim.push(ch),
                    }
                    j += 1;
                }
                let end = b.get(j).map_or(line.len(), |x| x.0);
                if !delim.is_empty() {
                    out.push(Opener {
                        start,
                        end,
                        delim,
                        quoted,
                        text_from: None,
                    });
                }
                k = j;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// Whether `line` ends the here-document of `delim` (`<<-` strips tabs; a mail may
/// indent it further, so any leading white space is allowed).
pub fn ends(line: &str, delim: &str) -> bool {
    match delim.strip_prefix(STRING) {
        // a here-string: the line holding its closing quote
        Some(quote) => closing(line, quote).is_some(),
        None => line.trim() == delim,
    }
}

/// The mark left in a line where a here-document's operator was: a word the parser
/// attaches the `n`th body to.
pub(super) fn marker(n: usize) -> String {
    format!("\u{1}heredoc{n}")
}

/// The index of a here-document mark.
pub(super) fn marker_index(w: &str) -> Option<usize> {
    w.strip_prefix("\u{1}heredoc")?.parse().ok()
}

/// Take the here-documents out of a block's logical lines: each operator becomes a mark
/// word, the body lines leave the block and become the [`HereDoc`]s, in order.
pub(super) fn extract(logical: &[(usize, String)]) -> (Vec<(usize, String)>, Vec<HereDoc>) {
    let mut lines = Vec::new();
    let mut docs: Vec<HereDoc> = Vec::new();
    let mut k = 0;
    while k < logical.len() {
        let (n, text) = &logical[k];
        let ops = openers(text);
        if ops.is_empty() {
            lines.push((*n, text.clone()));
            k += 1;
            continue;
        }
        let mut t = String::new();
        let mut at = 0;
        for (j, op) in ops.iter().enumerate() {
            t.push_str(&text[at..op.start]);
            t.push(' ');
            t.push_str(&marker(docs.len() + j));
            t.push(' ');
            at = op.end;
        }
        t.push_str(&text[at..]);
        let line = *n;
        k += 1;
        // the bodies follow one after the other
        for op in ops {
            if let Some(from) = op.text_from {
                let (doc, rest) = string_body(&text[from..], line, &op.delim, logical, &mut k);
                // what follows the closing quote is the command's (`| grep x`, `; done`)
                t.push(' ');
                t.push_str(&rest);
                docs.push(doc);
                continue;
            }
            let mut doc = HereDoc {
                delim: op.delim.clone(),
                quoted: op.quoted,
                body: Vec::new(),
                closed: false,
                string: false,
            };
            while k < logical.len() {
                let (bn, bt) = &logical[k];
                k += 1;
                if ends(bt, &op.delim) {
                    doc.closed = true;
                    break;
                }
                doc.body.push((*bn, bt.clone()));
            }
            docs.push(doc);
        }
        lines.push((line, t));
    }
    (lines, docs)
}

/// The text of a here-string that spans lines: `first` (after the opening quote on line
/// `line`), then the lines from `logical[*k]` up to the closing quote; the text after
/// the quote is returned for the command.
fn string_body(
    first: &str,
    line: usize,
    delim: &str,
    logical: &[(usize, String)],
    k: &mut usize,
) -> (HereDoc, String) {
    let quote = delim.strip_prefix(STRING).unwrap_or("\"");
    let mut body = vec![(line, first.to_string())];
    let mut closed = false;
    let mut rest = String::new();
    while *k < logical.len() {
        let (bn, bt) = &logical[*k];
        *k += 1;
        if let Some(c) = closing(bt, quote) {
            body.push((*bn, bt[..c].to_string()));
            rest = bt[c + 1..].to_string();
            closed = true;
            break;
        }
        body.push((*bn, bt.clone()));
    }
    if quote == "$'" {
        body = body
            .into_iter()
            .flat_map(|(n, l)| {
                ansi_c(&l)
                    .split('\n')
                    .map(|p| (n, p.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    let delim = if body.iter().any(|(_, l)| l.contains("EOF")) {
        "END_OF_STRING"
    } else {
        "EOF"
    };
    let doc = HereDoc {
        delim: delim.into(),
        quoted: quote != "\"",
        body,
        closed,
        string: true,
    };
    (doc, rest)
}

/// A here-string's word (`<<< "stats"`, `<<<$cmds`, `<<< $'a\nb'`) on line `line` as
/// the command's [`HereDoc`]: its text the body, expanded later unless single-quoted.
pub(super) fn from_string(word: &str, line: usize) -> HereDoc {
    let (text, quoted) = match word.strip_prefix("$'") {
        Some(ansi) => (ansi_c(ansi.strip_suffix('\'').unwrap_or(ansi)), true),
        None => (unquote(word), word.starts_with('\'')),
    };
    let delim = if text.contains("EOF") {
        "END_OF_STRING"
    } else {
        "EOF"
    };
    HereDoc {
        delim: delim.into(),
        quoted,
        body: text.split('\n').map(|l| (line, l.to_string())).collect(),
        closed: true,
        string: true,
    }
}

/// The text of bash's `$'…'`: `\n`, `\t`, `\\`, `\'` decoded, other escapes kept.
fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(e @ ('\\' | '\'' | '"')) => out.push(e),
            Some(e) => {
                out.push('\\');
                out.push(e);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{after_close, ends, extract, openers};

    #[test]
    fn operators_and_bodies() {
        let o = openers("cat > job.fio <<-'EOF'");
        assert_eq!((o[0].delim.as_str(), o[0].quoted), ("EOF", true));
        let o = openers("fio - << END");
        assert_eq!((o[0].delim.as_str(), o[0].quoted), ("END", false));
        assert!(openers("cat <<< \"$x\"").is_empty());
        // a here-string that does not close on its line
        let o = openers("debugfs /dev/sdb <<< \"stat <2>");
        assert_eq!((o[0].text_from, o[0].quoted), (Some(22), false));
        assert!(ends("ls -l /\"; done", &o[0].delim));
        assert!(!ends("ls -l /", &o[0].delim));
        assert_eq!(after_close("ls -l /\"; done", &o[0].delim), Some("; done"));
        let logical: Vec<(usize, String)> =
            ["xfs_io <<< $'open f", "pwrite 0 4k\\nfsync' -x", "sync"]
                .iter()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect();
        let (lines, docs) = extract(&logical);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].1.starts_with("xfs_io ") && lines[0].1.ends_with(" -x"));
        assert_eq!(
            docs[0].body,
            [
                (1, "open f".to_string()),
                (2, "pwrite 0 4k".to_string()),
                (2, "fsync".to_string())
            ]
        );
        assert!(docs[0].string && docs[0].closed && docs[0].quoted);
        assert!(openers("echo '<<EOF'").is_empty());
        assert!(openers("x=$((1 << 4))").is_empty());
        let logical: Vec<(usize, String)> = [
            "cat > job.fio <<EOF",
            "[global]",
            "bs=4k",
            "",
            "EOF",
            "fio job.fio",
        ]
        .iter()
        .enumerate()
        .map(|(i, l)| (i + 10, l.to_string()))
        .collect();
        let (lines, docs) = extract(&logical);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1], (15, "fio job.fio".to_string()));
        assert_eq!(docs.len(), 1);
        assert!(docs[0].closed);
        assert_eq!(
            docs[0].body,
            [
                (11, "[global]".to_string()),
                (12, "bs=4k".to_string()),
                (13, String::new())
            ]
        );
    }
}
