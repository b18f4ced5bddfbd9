//! Small helpers shared by the text parsers: numbered lines, warnings, strict numbers.

use super::Warning;
use std::borrow::Cow;

/// The lines of `text`, numbered from 1, without their terminator (`\n` or `\r\n`).
pub(crate) fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l))
}

pub(crate) fn warning(line: usize, text: &str, reason: impl Into<String>) -> Warning {
    Warning {
        line,
        text: text.to_string(),
        reason: reason.into(),
    }
}

/// What a terminal shows for a line with progress output: every backspace (`\x08`)
/// removes the character before it.
pub(crate) fn apply_backspaces(line: &str) -> Cow<'_, str> {
    if !line.contains('\x08') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c == '\x08' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A non-negative integer written with decimal digits only.
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An integer, optionally negative.
pub(crate) fn parse_i64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    parse_u64(digits)?;
    s.parse().ok()
}

/// A decimal number as tools print it: digits, at most one decimal point (`.`, or `,`
/// in locales that use it), an optional sign. No exponents, no `inf`/`NaN`.
pub(crate) fn parse_f64(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    if body.is_empty() || body == "." || body == "," {
        return None;
    }
    let mut points = 0;
    for b in body.bytes() {
        match b {
            b'0'..=b'9' => {}
            b'.' | b',' => points += 1,
            _ => return None,
        }
    }
    if points > 1 {
        return None;
    }
    let v: f64 = s.replace(',', ".").parse().ok()?;
    v.is_finite().then_some(v)
}

/// `0x1f` → 31.
pub(crate) fn parse_hex(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(h, 16).ok()
}

/// Normalise a printed label to a column-friendly key: lower case, every run of
/// characters other than ASCII letters and digits becomes one `_`, no `_` at either end.
/// `Filesystem revision #` → `filesystem_revision`.
pub(crate) fn snake(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backspaces_erase() {
        assert_eq!(
            apply_backspaces("a: 0/16\x08\x08\x08\x08    \x08\x08\x08\x08done"),
            "a: done"
        );
        assert_eq!(apply_backspaces("\x08\x08x"), "x");
    }

    #[test]
    fn strict_numbers() {
        assert_eq!(parse_f64("18.807"), Some(18.807));
        assert_eq!(parse_f64("0,256"), Some(0.256));
        assert_eq!(parse_f64("inf"), None);
        assert_eq!(parse_f64("1e5"), None);
        assert_eq!(parse_f64("1.2.3"), None);
        assert_eq!(parse_u64("12a"), None);
        assert_eq!(parse_i64("-1"), Some(-1));
        assert_eq!(parse_hex("0xEF53"), Some(0xef53));
        assert_eq!(snake("Filesystem revision #"), "filesystem_revision");
        assert_eq!(snake("Inode size:\t"), "inode_size");
    }
}
