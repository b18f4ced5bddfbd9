//! Finding where things are written in an experiment file, and turning serde_yaml's
//! errors into located, helpful ones.
//!
//! serde_yaml gives locations for syntax and type errors only; the checks that run
//! after deserialising find their text again from the document's block layout: a
//! top-level section, a nested key's block, the n-th item of a sequence. Flow style
//! (`{ a: 1 }`, `[x, y]`) is searched as text within the enclosing block. Every
//! search falls back to something coarser (the section key, then the file) rather
//! than failing.

use super::SpecError;
use std::ops::Range;

/// Builds located errors against one source text.
pub(crate) struct Locator<'a> {
    pub(crate) file: String,
    pub(crate) text: &'a str,
    /// Lines as YAML counts them (see [`yaml_lines`]).
    lines: Vec<(usize, usize)>,
}

/// Lines as libyaml counts them: broken by `\r\n`, `\r`, `\n`, NEL, LS and PS. Each is
/// the byte range of the line's content, without its break; a break at the very end
/// does not start another line (as with `str::lines`).
pub(crate) fn yaml_lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let next_start = match c {
            '\r' => {
                if let Some((j, '\n')) = it.peek().copied() {
                    it.next();
                    j + 1
                } else {
                    i + 1
                }
            }
            '\n' => i + 1,
            '\u{85}' | '\u{2028}' | '\u{2029}' => i + c.len_utf8(),
            _ => continue,
        };
        out.push((start, i));
        start = next_start;
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A line that carries no structure (blank or a comment).
fn is_filler(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn is_item(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    t == "-" || t.starts_with("- ") || t.starts_with("-\t") || t.starts_with("-\n") || t == "-\r"
}

/// Does `line` (from its indentation on) start with the mapping key `key`?
fn starts_with_key(line: &str, key: &str) -> bool {
    let t = line.trim_start_matches(' ');
    let t = t
        .strip_prefix("- ")
        .map_or(t, |r| r.trim_start_matches(' '));
    for q in ["", "\"", "'"] {
        if let Some(rest) = t.strip_prefix(q).and_then(|r| r.strip_prefix(key)) {
            if let Some(after) = rest.strip_prefix(q) {
                if after.starts_with(':') {
                    return true;
                }
            }
        }
    }
    false
}

impl<'a> Locator<'a> {
    pub(crate) fn new(file: &str, text: &'a str) -> Locator<'a> {
        Locator {
            file: file.to_string(),
            text,
            lines: yaml_lines(text),
        }
    }

    /// The text of a 1-based line.
    fn line_text(&self, line: usize) -> Option<&'a str> {
        let (s, e) = *self.lines.get(line.checked_sub(1)?)?;
        self.text.get(s..e)
    }

    pub(crate) fn at(&self, line: usize, column: usize, message: impl Into<String>) -> SpecError {
        // A place past the last line (the end of the file) is shown at the last line's end.
        let count = self.lines.len();
        let (line, column) = if line > count {
            (
                count,
                self.line_text(count).map_or(0, |l| l.chars().count() + 1),
            )
        } else {
            let width = self.line_text(line).map_or(0, |l| l.chars().count());
            (line, column.min(width + 1))
        };
        SpecError {
            file: self.file.clone(),
            line,
            column: if line == 0 { 0 } else { column },
            message: message.into(),
            snippet: self.line_text(line).map(str::to_string),
            help: None,
        }
    }

    pub(crate) fn at_pos(&self, pos: (usize, usize), message: impl Into<String>) -> SpecError {
        self.at(pos.0, pos.1, message)
    }

    /// Line/column (1-based) of a byte offset.
    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let i = self.lines.partition_point(|l| l.0 <= offset);
        let Some(&(s, e)) = i.checked_sub(1).and_then(|i| self.lines.get(i)) else {
            return (1, 1);
        };
        let col = self.text[s..offset.min(e)].chars().count() + 1;
        (i, col)
    }

    /// Byte offset of a 1-based line/column (clamped to the text).
    pub(crate) fn offset(&self, line: usize, column: usize) -> usize {
        match line.checked_sub(1).and_then(|i| self.lines.get(i)) {
            Some(&(s, e)) => {
                s + self.text[s..e]
                    .chars()
                    .take(column.saturating_sub(1))
                    .map(char::len_utf8)
                    .sum::<usize>()
            }
            None => self.text.len(),
        }
    }

    /// Lines of `range` with their starting byte offsets.
    fn lines_in(&self, range: Range<usize>) -> impl Iterator<Item = (usize, &'a str)> + 'a {
        let text = self.text;
        let start = range.start.min(text.len());
        let end = range.end.min(text.len());
        let mut off = start;
        text.get(start..end)
            .unwrap_or("")
            .split_inclusive('\n')
            .map(move |l| {
                let at = off;
                off += l.len();
                (at, l)
            })
    }

    /// The whole document.
    pub(crate) fn all(&self) -> Range<usize> {
        0..self.text.len()
    }

    /// A top-level key's block: its line and every following line up to the next
    /// top-level key.
    pub(crate) fn section(&self, key: &str) -> Option<Range<usize>> {
        let mut start = None;
        for (at, line) in self.lines_in(self.all()) {
            match start {
                None => {
                    if indent_of(line) == 0 && starts_with_key(line, key) {
                        start = Some(at);
                    }
                }
                Some(s) => {
                    if !is_filler(line) && indent_of(line) == 0 && !is_item(line) {
                        return Some(s..at);
                    }
                }
            }
        }
        start.map(|s| s..self.text.len())
    }

    /// The block of the key `key` written inside `within` (after its first line): the
    /// key's line and the lines indented deeper (or sequence items at the key's
    /// indentation, which YAML allows).
    pub(crate) fn block(&self, within: Range<usize>, key: &str) -> Option<Range<usize>> {
        let mut start: Option<(usize, usize)> = None;
        let first_line_end = self.text[within.start.min(self.text.len())..]
            .find('\n')
            .map_or(within.end, |i| within.start + i + 1);
        // The key may be on the block's first line in flow style (`data: { size: x }`).
        if let Some(o) = self.find_key_offset_in(key, within.start..first_line_end) {
            if o > within.start {
                return Some(o..first_line_end.min(within.end));
            }
        }
        for (at, line) in self.lines_in(first_line_end..within.end) {
            match start {
                None => {
                    if starts_with_key(line, key) {
                        let key_col = indent_of(line)
                            + if line.trim_start().starts_with("- ") {
                                2
                            } else {
                                0
                            };
                        start = Some((at, key_col));
                    }
                }
                Some((s, ind)) => {
                    if !is_filler(line)
                        && (indent_of(line) < ind || (indent_of(line) == ind && !is_item(line)))
                    {
                        return Some(s..at);
                    }
                }
            }
        }
        start.map(|(s, _)| s..within.end)
    }

    /// The `n`-th (0-based) item of the block sequence that is the value of the block
    /// `range` (whose first line is the key).
    pub(crate) fn item(&self, range: Range<usize>, n: usize) -> Option<Range<usize>> {
        let first_line_end = self.text[range.start.min(self.text.len())..]
            .find('\n')
            .map_or(range.end, |i| range.start + i + 1);
        let mut item_indent = None;
        let mut starts = Vec::new();
        for (at, line) in self.lines_in(first_line_end..range.end) {
            if is_filler(line) {
                continue;
            }
            let ind = indent_of(line);
            match item_indent {
                None if is_item(line) => {
                    item_indent = Some(ind);
                    starts.push(at);
                }
                None => return None,
                Some(i) if ind == i && is_item(line) => starts.push(at),
                Some(i) if ind < i => break,
                _ => {}
            }
        }
        let s = *starts.get(n)?;
        let e = starts.get(n + 1).copied().unwrap_or(range.end);
        Some(s..e)
    }

    /// Where the content of a block or item starts (after indentation and `- `).
    pub(crate) fn start_of(&self, range: &Range<usize>) -> (usize, usize) {
        let line = self.text[range.start.min(self.text.len())..]
            .split('\n')
            .next()
            .unwrap_or("");
        let t = line.trim_start_matches(' ');
        let mut skip = line.len() - t.len();
        if let Some(r) = t.strip_prefix("- ") {
            skip += 2 + (r.len() - r.trim_start_matches(' ').len());
        }
        self.position(range.start + skip)
    }

    /// The first occurrence of `needle` in `range`.
    pub(crate) fn find_in(&self, range: Range<usize>, needle: &str) -> Option<(usize, usize)> {
        if needle.is_empty() {
            return None;
        }
        let hay = self.text.get(range.start..range.end.min(self.text.len()))?;
        hay.find(needle).map(|i| self.position(range.start + i))
    }

    /// Where the mapping key `key:` is written in `range`.
    pub(crate) fn key_in(&self, range: Range<usize>, key: &str) -> Option<(usize, usize)> {
        self.find_key_offset_in(key, range)
            .map(|o| self.position(o))
    }

    /// Where the value of `key:` starts in `range` (the key when there is no value on
    /// its line).
    pub(crate) fn value_in(&self, range: Range<usize>, key: &str) -> Option<(usize, usize)> {
        let o = self.find_key_offset_in(key, range)?;
        let rest = &self.text[o..];
        let colon = rest.find(':')?;
        let after = &rest[colon + 1..];
        let line_rest = after.split('\n').next().unwrap_or("");
        let trimmed = line_rest.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Some(self.position(o));
        }
        Some(self.position(o + colon + 1 + (line_rest.len() - trimmed.len())))
    }

    /// Where the mapping key `key:` is written (optionally the first after the key
    /// `after`), or (0, 0).
    pub(crate) fn find_key(&self, key: &str, after: Option<&str>) -> (usize, usize) {
        let start = after
            .and_then(|a| self.find_key_offset_in(a, self.all()))
            .unwrap_or(0);
        self.find_key_offset_in(key, start..self.text.len())
            .map_or((0, 0), |o| self.position(o))
    }

    /// Offset of `key:` as a mapping key (block or flow style) within `range`.
    pub(crate) fn find_key_offset_in(&self, key: &str, range: Range<usize>) -> Option<usize> {
        let text = self.text;
        if key.is_empty() {
            return None;
        }
        let end = range.end.min(text.len());
        let mut search = range.start;
        while search < end {
            let rel = text.get(search..end)?.find(key)?;
            let at = search + rel;
            let before = text[..at].chars().next_back();
            let boundary = matches!(
                before,
                None | Some(' ' | '\t' | '\n' | '{' | ',' | '-' | '"' | '\'')
            );
            let after = text[at + key.len()..].trim_start_matches(['"', '\'']);
            if boundary && after.starts_with(':') {
                let quoted = matches!(before, Some('"' | '\''));
                return Some(if quoted { at - 1 } else { at });
            }
            search = at + key.len();
        }
        None
    }

    /// The `n`-th (0-based) occurrence of `token` in `range` as a whole scalar (not
    /// part of a longer word).
    pub(crate) fn token_in(
        &self,
        range: Range<usize>,
        token: &str,
        n: usize,
    ) -> Option<(usize, usize)> {
        let hay = self.text.get(range.start..range.end.min(self.text.len()))?;
        let bound = |c: Option<char>| {
            matches!(
                c,
                None | Some(' ' | '\t' | '\n' | '[' | ']' | '{' | '}' | ',' | '"' | '\'' | ':')
            )
        };
        let mut seen = 0;
        let mut from = 0;
        while let Some(i) = hay[from..].find(token) {
            let at = from + i;
            let before = hay[..at].chars().next_back();
            let after = hay[at + token.len()..].chars().next();
            let before_ok = bound(before) || before == Some('-');
            if before_ok && bound(after) {
                if seen == n {
                    return Some(self.position(range.start + at));
                }
                seen += 1;
            }
            from = at + token.len().max(1);
        }
        None
    }

    /// Where `{{ name }}` is used in `range`.
    pub(crate) fn template_use_in(
        &self,
        range: Range<usize>,
        name: &str,
    ) -> Option<(usize, usize)> {
        let hay = self.text.get(range.start..range.end.min(self.text.len()))?;
        let mut offset = 0;
        while let Some(i) = hay[offset..].find("{{") {
            let start = offset + i;
            let end = hay[start..].find("}}")?;
            // `{{name}}` or `{{name:02x}}`.
            let inner = &hay[start + 2..start + end];
            let used = inner.split_once(':').map_or(inner, |(n, _)| n);
            if used.trim() == name {
                return Some(self.position(range.start + start));
            }
            offset = start + 2;
        }
        None
    }
}

/// The closest of `candidates` to `given`, when one is close enough to be a likely
/// typo: a small edit distance (transpositions count once) or a high Jaro-Winkler
/// similarity.
pub(crate) fn closest<'c>(
    given: &str,
    candidates: impl Iterator<Item = &'c str>,
) -> Option<&'c str> {
    candidates
        .filter(|c| !c.is_empty() && *c != given)
        .map(|c| {
            let d = strsim::damerau_levenshtein(given, c);
            let j = strsim::jaro_winkler(given, c);
            let longest = given.chars().count().max(c.chars().count());
            let allowed = if longest <= 2 {
                0
            } else {
                (longest / 3).max(1)
            };
            (c, d, j, d <= allowed || j > 0.8)
        })
        .filter(|x| x.3)
        .min_by(|a, b| a.1.cmp(&b.1).then(b.2.total_cmp(&a.2)))
        .map(|x| x.0)
}

pub(crate) fn suggest<'c>(
    given: &str,
    candidates: impl Iterator<Item = &'c str>,
) -> Option<String> {
    closest(given, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// Friendlier names for serde's type names in messages.
fn friendly(message: &str) -> String {
    let mut m = message.to_string();
    for (from, to) in [
        (
            "struct ExperimentDef",
            "an experiment: a mapping with `id`, `title`, `workload` and more",
        ),
        (
            "struct Step",
            "a step: a mapping with one action key such as `run:`",
        ),
        (
            "struct DeviceSpec",
            "a device: a mapping such as `{ size: 512MiB }`",
        ),
        (
            "struct MountFull",
            "a mapping with `device`, `at`, `options`, `type`",
        ),
        (
            "struct Citation",
            "a citation: a mapping with `author`, `url`, `note`, ...",
        ),
        (
            "struct Claim",
            "a claim: a mapping with `id`, `text`, `check`",
        ),
        ("expected f64", "expected a number"),
        ("expected u32", "expected a whole number"),
        ("expected u64", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected a borrowed string", "expected text"),
        ("expected a string", "expected text"),
    ] {
        m = m.replace(from, to);
    }
    m
}

/// libyaml's "while <context> at line L column C" becomes advice about that place.
fn context_help(context: &str, line: usize, col: usize) -> String {
    if context.contains("quoted scalar") {
        format!("the quoted text that starts at line {line} column {col} is never closed")
    } else if context.contains("flow sequence") {
        format!(
            "the `[` list that starts at line {line} column {col} is not closed, or an item in it lacks a comma"
        )
    } else if context.contains("flow mapping") {
        format!(
            "the `{{` mapping that starts at line {line} column {col} is not closed, or an entry in it lacks a comma"
        )
    } else if context.contains("block mapping") || context.contains("block collection") {
        format!(
            "in the block that starts at line {line} column {col}: keys of one mapping must line up at the same indentation"
        )
    } else {
        format!("{context} that starts at line {line} column {col}")
    }
}

fn parse_line_col(s: &str) -> Option<(usize, usize)> {
    // "line L column C"
    let rest = s.trim().strip_prefix("line ")?;
    let (l, c) = rest.split_once(" column ")?;
    let c: String = c.chars().take_while(char::is_ascii_digit).collect();
    Some((l.trim().parse().ok()?, c.parse().ok()?))
}

/// From serde's "unknown field `x`, expected one of `a`, `b`" suggest the closest name.
pub(crate) fn did_you_mean(message: &str) -> Option<String> {
    let (given, rest) = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.split(p).nth(1).map(|r| (r, *p)))
        .and_then(|(r, p)| Some((r.split('`').next()?, (r, p))))?;
    let (rest, prefix) = rest;
    let expected: Vec<&str> = rest
        .split("expected ")
        .nth(1)?
        .split('`')
        .skip(1)
        .step_by(2)
        .collect();
    let what = if prefix.contains("variant") {
        "valid values here"
    } else {
        "valid keys here"
    };
    match closest(given, expected.iter().copied()) {
        Some(c) => Some(format!("did you mean `{c}`?")),
        None => Some(format!("{what}: {}", expected.join(", "))),
    }
}

/// A serde_yaml error as a located error with advice.
pub(crate) fn yaml_error(loc: &Locator<'_>, e: &serde_yaml::Error) -> SpecError {
    let (mut line, mut column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
    let raw = e.to_string();
    // serde_yaml appends " at line L column C" (and libyaml ", while <context> at line
    // L column C"); the location is reported separately, the context becomes help.
    let (message, context) = match raw.split_once(", while ") {
        Some((m, c)) => (m.to_string(), Some(c.to_string())),
        None => (raw.clone(), None),
    };
    let mut message = match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    let mut help = None;
    if let Some(c) = &context {
        if let Some(i) = c.find(" at line ") {
            if let Some((l, col)) = parse_line_col(&c[i + 4..]) {
                help = Some(context_help(&c[..i], l, col));
                // At the end of the file, the place where the unclosed thing starts
                // is the useful one.
                if message.contains("end of stream") {
                    (line, column) = (l, col);
                    let (thing, close) = if c.contains("quoted scalar") {
                        (
                            "quoted text",
                            "close the quote; inside double quotes write a `\"` as `\\\"`",
                        )
                    } else if c.contains("flow sequence") {
                        ("`[` list", "close it with `]`")
                    } else if c.contains("flow mapping") {
                        ("`{` mapping", "close it with `}`")
                    } else {
                        ("block", "check the lines from here to the end")
                    };
                    message = format!("the file ends inside the {thing} that starts here");
                    help = Some(close.to_string());
                }
            }
        }
    }
    if message.contains("tab character") {
        help = Some("indent with spaces: YAML does not allow tabs for indentation".into());
    }
    if loc.text.trim().is_empty()
        || (message.contains("missing field") && loc.text.lines().all(is_filler))
    {
        let mut err = loc.at(0, 0, "the file is empty");
        err.help = Some(
            "an experiment needs at least `id`, `title` and a `workload:` with a `run:` command"
                .into(),
        );
        return err;
    }
    // A misspelt or repeated key: point at the key itself (serde_yaml points at the
    // start of the mapping that holds it).
    let key_named = |prefix: &str| {
        message
            .split(prefix)
            .nth(1)
            .and_then(|r| r.split('`').next())
            .map(str::to_string)
    };
    let here = loc.offset(line.max(1), column.max(1));
    if let Some(k) = key_named("unknown field `") {
        if let Some(o) = loc.find_key_offset_in(&k, here..loc.text.len()) {
            (line, column) = loc.position(o);
        }
    } else if let Some(v) = key_named("unknown counter source `") {
        // A value inside `counters:` (checked after the whole value was read): point at it.
        if let Some(o) = loc.find_key_offset_in("counters", here..loc.text.len()) {
            if let Some(p) = loc.find_in(o..loc.text.len(), &v) {
                (line, column) = p;
            }
        }
    } else if message.contains("`counters") {
        // The other `counters:` forms: point at the key, or at the part that is wrong.
        if let Some(o) = loc.find_key_offset_in("counters", here..loc.text.len()) {
            (line, column) = loc.position(o);
            let part = key_named("unknown key `").or_else(|| {
                message
                    .contains("`counters.sync`")
                    .then(|| "sync".to_string())
            });
            if let Some(p) = part.and_then(|k| loc.find_key_offset_in(&k, o..loc.text.len())) {
                (line, column) = loc.position(p);
            }
        }
    } else if let Some(k) = key_named("duplicate field `") {
        let first = loc.find_key_offset_in(&k, here..loc.text.len());
        if let Some(second) =
            first.and_then(|f| loc.find_key_offset_in(&k, f + k.len()..loc.text.len()))
        {
            (line, column) = loc.position(second);
            let (fl, _) = loc.position(first.unwrap_or(0));
            help = Some(format!(
                "`{k}` is already given at line {fl}; a key may appear once in a mapping"
            ));
        }
    }
    let message = friendly(&message);
    let mut err = loc.at(line, column, message.clone());
    err.help = help.or_else(|| did_you_mean(&message));
    if err.help.is_none() {
        err.help = if let Some(field) = key_named("missing field `") {
            let path = message.split(": missing").next().filter(|p| *p != message);
            Some(match path {
                None => format!(
                    "add `{field}:`; an experiment needs at least `id`, `title` and a `workload:` with a `run:` command"
                ),
                Some(p) => format!("add `{field}:` to {p}"),
            })
        } else if message.contains("mapping values are not allowed") {
            Some("a `key: value` cannot start here: check this line's indentation against the lines above, or quote a value that contains `: `".into())
        } else if message.contains("expected a sequence") {
            Some("write a list, e.g. `[ext4, xfs]` (one value is `[ext4]`)".into())
        } else if message.contains("expected a boolean") {
            Some("write `true` or `false`".into())
        } else if message.contains("expected a number") {
            Some("write a number, e.g. `600`".into())
        } else {
            None
        };
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "id: x\nsetup:\n  - run: a\n    when: { fs: ext4 }\n\n  - mount: data\nworkload:\n  run: b\n  before_each:\n  - sync: true\n  - drop_caches: true\n  repeat: 2\nmatrix:\n  fs: [ext4, xfs, ext4]\n";

    fn loc() -> Locator<'static> {
        Locator::new("t.yaml", DOC)
    }

    #[test]
    fn sections_items_and_blocks() {
        let l = loc();
        let setup = l.section("setup").unwrap();
        assert_eq!(l.position(setup.start), (2, 1));
        let second = l.item(setup.clone(), 1).unwrap();
        assert_eq!(l.start_of(&second), (6, 5));
        assert!(l.item(setup, 2).is_none());
        let w = l.section("workload").unwrap();
        let be = l.block(w.clone(), "before_each").unwrap();
        let item = l.item(be.clone(), 1).unwrap();
        assert_eq!(l.start_of(&item), (11, 5));
        assert_eq!(l.key_in(w, "repeat"), Some((12, 3)));
        assert!(!DOC[be].contains("repeat"));
        let m = l.section("matrix").unwrap();
        let fs = l.block(m, "fs").unwrap();
        assert_eq!(l.token_in(fs.clone(), "ext4", 1), Some((14, 19)));
        assert_eq!(l.value_in(fs, "fs"), Some((14, 7)));
    }

    #[test]
    fn lines_break_where_libyaml_breaks_them() {
        assert_eq!(yaml_lines(""), []);
        assert_eq!(yaml_lines("a\n"), [(0, 1)]);
        assert_eq!(
            yaml_lines("a\r\nb\rc\u{2028}d"),
            [(0, 1), (3, 4), (5, 6), (9, 10)]
        );
        assert_eq!(yaml_lines("\n\n"), [(0, 0), (1, 1)]);
        let l = Locator::new("t", "ab\rcd\r\n");
        assert_eq!(l.position(4), (2, 2));
        assert_eq!(l.offset(2, 2), 4);
        let e = l.at(5, 9, "m");
        assert_eq!((e.line, e.column, e.snippet.as_deref()), (2, 3, Some("cd")));
    }

    #[test]
    fn suggestions_catch_transpositions_but_not_everything() {
        let keys = ["run", "mount", "repeat", "fs", "files"];
        assert_eq!(closest("rnu", keys.iter().copied()), Some("run"));
        assert_eq!(closest("repaet", keys.iter().copied()), Some("repeat"));
        assert_eq!(closest("fss", keys.iter().copied()), Some("fs"));
        assert_eq!(closest("file", keys.iter().copied()), Some("files"));
        assert_eq!(closest("x", ["i", "n"].iter().copied()), None);
        assert_eq!(closest("bs", ["fs"].iter().copied()), None);
    }
}
