//! Numbers as perf stat's human format prints them: counter values with the locale's
//! thousands separators, and the ungrouped numbers of metrics, percentages, the trailer
//! and `-I` time stamps. See [`super::human`] for why a separator before exactly three
//! digits groups thousands.

/// Why a counter value is not read (the text of the warning).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum ValueError {
    #[error("`{0}` is not a number")]
    NotANumber(String),
    #[error("`{0}` is not grouped in thousands")]
    NotGrouped(String),
    #[error("`{0}` is not a number perf prints")]
    NotPrinted(String),
    #[error(
        "`{value}`: `{sep}` groups thousands here, but the document's decimal point is `{sep}`"
    )]
    GroupsTheDecimalPoint { value: String, sep: char },
    #[error("`{value}`: `{sep}` would be the decimal point, but the document's is `{doc}`")]
    OtherDecimalPoint { value: String, sep: char, doc: char },
}

/// Thousands separators of the locales perf may print in.
const GROUPING: [char; 6] = [',', '.', '\'', '\u{a0}', '\u{202f}', '\u{2019}'];

/// A number printed without grouping (`%f`, metrics, the trailer): digits with at most
/// one decimal point, `.` or `,`. Returns it and the decimal point it used.
pub(super) fn plain_num(s: &str) -> Option<(f64, Option<char>)> {
    let (int, frac, dec) = match s.find(['.', ',']) {
        Some(p) => (&s[..p], &s[p + 1..], s[p..].chars().next()),
        None => (s, "", None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || (dec.is_some() && !digits(frac)) {
        return None;
    }
    let v = if dec.is_some() {
        format!("{int}.{frac}").parse().ok()?
    } else {
        int.parse().ok()?
    };
    Some((v, dec))
}

/// `int` grouped by `g` (1-3 digits, then groups of 3), or ungrouped digits.
fn grouped_digits(int: &str, g: Option<char>) -> Option<String> {
    let groups: Vec<&str> = match g {
        Some(g) => int.split(g).collect(),
        None => vec![int],
    };
    let ok = groups.iter().enumerate().all(|(i, d)| {
        let n = d.chars().count();
        d.bytes().all(|b| b.is_ascii_digit())
            && if g.is_none() {
                n >= 1
            } else if i == 0 {
                (1..=3).contains(&n)
            } else {
                n == 3
            }
    });
    ok.then(|| groups.concat())
}

/// A counter value as perf prints it (`%'.0f`, `%'.2f`, old `%.6f`): see the module
/// documentation. `Ok((value, decimal point used))`; `Err` says why it is not read.
pub(super) fn counter_value(
    s: &str,
    doc_decimal: Option<char>,
) -> Result<(f64, Option<char>), ValueError> {
    if !s.starts_with(|c: char| c.is_ascii_digit())
        || !s
            .chars()
            .all(|c| c.is_ascii_digit() || GROUPING.contains(&c))
    {
        return Err(ValueError::NotANumber(s.into()));
    }
    let Some((p, last)) = s.char_indices().rfind(|(_, c)| !c.is_ascii_digit()) else {
        return s
            .parse()
            .map(|v| (v, None))
            .map_err(|_| ValueError::NotANumber(s.into()));
    };
    let tail = &s[p + last.len_utf8()..];
    let head = &s[..p];
    let mut before: Vec<char> = head.chars().filter(|c| !c.is_ascii_digit()).collect();
    before.dedup();
    if tail.len() == 3 && before.iter().all(|c| *c == last) {
        // Grouping only: counts are printed without decimals.
        if doc_decimal == Some(last) {
            return Err(ValueError::GroupsTheDecimalPoint {
                value: s.into(),
                sep: last,
            });
        }
        return grouped_digits(s, Some(last))
            .and_then(|d| d.parse().ok())
            .map(|v| (v, None))
            .ok_or_else(|| ValueError::NotGrouped(s.into()));
    }
    if !matches!(last, '.' | ',') || tail.is_empty() || before.contains(&last) || before.len() > 1 {
        return Err(ValueError::NotPrinted(s.into()));
    }
    if let Some(d) = doc_decimal.filter(|d| *d != last) {
        return Err(ValueError::OtherDecimalPoint {
            value: s.into(),
            sep: last,
            doc: d,
        });
    }
    let int = grouped_digits(head, before.first().copied())
        .ok_or_else(|| ValueError::NotGrouped(s.into()))?;
    format!("{int}.{tail}")
        .parse()
        .map(|v| (v, Some(last)))
        .map_err(|_| ValueError::NotANumber(s.into()))
}

/// The `-I` time stamp: `%lu.%09lu`, always with `.`.
pub(super) fn time_stamp(s: &str) -> Option<f64> {
    let (a, b) = s.split_once('.')?;
    (!a.is_empty() && a.bytes().all(|c| c.is_ascii_digit()) && b.len() == 9)
        .then(|| plain_num(s).map(|(v, _)| v))
        .flatten()
        .filter(|_| b.bytes().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_their_locales() {
        let v = |s: &str, d| counter_value(s, d).map(|(v, _)| v);
        assert_eq!(v("1,234,567", None), Ok(1_234_567.0));
        assert_eq!(v("1.234.567", None), Ok(1_234_567.0));
        assert_eq!(v("1\u{202f}234\u{202f}567", None), Ok(1_234_567.0));
        assert_eq!(v("2\u{2019}855", None), Ok(2855.0));
        assert_eq!(v("1234567", None), Ok(1_234_567.0));
        assert_eq!(v("4,330.94", None), Ok(4330.94));
        assert_eq!(v("4.330,94", None), Ok(4330.94));
        assert_eq!(v("9.134,89", Some(',')), Ok(9134.89));
        assert_eq!(v("956.474238", None), Ok(956.474238));
        assert_eq!(v("1,810", Some('.')), Ok(1810.0));
        // `1.234` in a document whose decimal point is `.`: no number perf prints.
        assert!(v("1.234", Some('.')).is_err());
        assert!(v("4,330.94", Some(',')).is_err());
        assert!(v("1,23,456", None).is_err());
        assert!(v("12,34.5,6", None).is_err());
        assert!(v("nan", None).is_err());
        assert!(v("1.2.3", None).is_err());
    }
}
