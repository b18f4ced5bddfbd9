//! Numbers written by people: a number with its unit as printed (`9.601s`, `~11MB`,
//! `20k`, `2200/s`, `14%`, `10x`, `45.6 million`, `about one hour`), tables with a header
//! row and row labels, and numbers in sentences, with `approx` when the post hedges
//! (`about`, `~`, `a bit over`, `more than`).

use super::units::{count_noun, quantity_name, rate_words, suffix_unit, word_unit};
use super::{Category, Row};
use crate::parse::time::duration_seconds;

/// A number read from text, in the unit it was printed in (hours become minutes).
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    pub value: f64,
    pub unit: String,
    /// Whether the unit came with the number (`9.6s`) rather than from a word after it.
    pub attached: bool,
}

/// A decimal number: digits, optional thousands commas, one decimal point.
fn number_prefix(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut digits = String::new();
    let mut dot = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            digits.push(c as char);
        } else if c == b'.' && !dot && i + 1 < b.len() && b[i + 1].is_ascii_digit() && i > 0 {
            dot = true;
            digits.push('.');
        } else if c == b','
            && !dot
            && i > 0
            && b.len() >= i + 4
            && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
            && b.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
        {
            // thousands separator
        } else if c == b',' && !dot && i > 0 && decimal_comma(&s[i..]) {
            // a locale's decimal comma, `1,2 GB/s` (one or two digits after it)
            dot = true;
            digits.push('.');
        } else {
            break;
        }
        i += 1;
    }
    if digits.is_empty() {
        return None;
    }
    digits.parse().ok().map(|v| (v, i))
}

/// `,2` or `,25` then no digit: the decimal part of a number printed with a comma.
fn decimal_comma(rest: &str) -> bool {
    let d = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
    (1..=2).contains(&d)
}

/// Whether a token is a number with a decimal comma (`1,2`, `12,50GB/s`): read only with
/// a unit, since `1,2` alone is as often a list.
fn has_decimal_comma(tok: &str) -> bool {
    let core = tok.trim_start_matches(['~', '+', '-']);
    let int = core.bytes().take_while(u8::is_ascii_digit).count();
    int > 0 && core[int..].starts_with(',') && decimal_comma(&core[int..])
}

/// One token as a quantity: `9.601s`, `8k`, `~11MB`, `14%`, `10x`, `2,200/s`, `0m1.5s`,
/// `20` (no unit). Surrounding punctuation is ignored; returns the quantity and whether
/// the token said `~`.
pub fn token_quantity(tok: &str) -> Option<(Quantity, bool)> {
    let t = tok.trim_matches(|c: char| {
        matches!(
            c,
            '(' | ')' | ',' | ';' | ':' | '"' | '\'' | '[' | ']' | '.' | '!' | '?' | '`' | '*'
        )
    });
    let (approx, t) = match t.strip_prefix('~') {
        Some(r) => (true, r),
        None => (false, t),
    };
    // `+3.1%`, `-8.2%`: a change, with its sign
    let (sign, t) = match (t.strip_prefix('+'), t.strip_prefix('-')) {
        (Some(r), _) => (1.0, r),
        (_, Some(r)) => (-1.0, r),
        _ => (1.0, t),
    };
    if !t.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(v) = duration_seconds(t) {
        return Some((
            Quantity {
                value: sign * v,
                unit: "s".into(),
                attached: true,
            },
            approx,
        ));
    }
    let (v, used) = number_prefix(t)?;
    let v = sign * v;
    let rest = &t[used..];
    if rest.is_empty() {
        return Some((
            Quantity {
                value: v,
                unit: String::new(),
                attached: false,
            },
            approx,
        ));
    }
    let (unit, factor) = suffix_unit(rest)?;
    Some((
        Quantity {
            value: v * factor,
            unit: unit.to_string(),
            attached: true,
        },
        approx,
    ))
}

const NUMBER_WORDS: &[(&str, f64)] = &[
    ("one", 1.0),
    ("two", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("eleven", 11.0),
    ("twelve", 12.0),
    ("twenty", 20.0),
    ("thirty", 30.0),
    ("fifty", 50.0),
    ("hundred", 100.0),
];

const MULTIPLIERS: &[(&str, f64)] = &[("thousand", 1e3), ("million", 1e6), ("billion", 1e9)];

/// Words that make a number approximate when they come right before it.
const HEDGES: &[&str] = &[
    "about",
    "around",
    "approximately",
    "approx",
    "approx.",
    "roughly",
    "almost",
    "nearly",
    "over",
    "under",
    "~",
    "circa",
    "some",
];
const HEDGE_PAIRS: &[&str] = &[
    "more than",
    "less than",
    "a bit over",
    "bit over",
    "at least",
    "at most",
    "up to",
    "just over",
    "just under",
    "a little over",
];

/// Words after which a number phrase ends.
const STOP: &[&str] = &[
    "of", "in", "and", "or", "to", "the", "a", "an", "on", "with", "for", "is", "are", "was",
    "that", "at", "by", "from", "as", "but", "than", "it", "we", "i", "so",
];

/// A number found in a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct ProseNumber {
    pub quantity: Quantity,
    pub printed: String,
    pub approx: bool,
    /// Token index where it starts.
    pub at: usize,
}

/// The numbers of one line of prose.
pub fn prose_numbers(text: &str) -> Vec<ProseNumber> {
    prose_numbers_before(text, "")
}

/// The numbers of a line whose sentence goes on in `following` (the next line): units
/// and nouns may be there (`distributed between 256` / `subdirectories)`).
pub fn prose_numbers_before(text: &str, following: &str) -> Vec<ProseNumber> {
    let own = text.split_whitespace().count();
    let words: Vec<&str> = text
        .split_whitespace()
        .chain(following.split_whitespace())
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < own {
        let w = words[i];
        let lw = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase();
        let word_num = NUMBER_WORDS.iter().find(|(n, _)| *n == lw).map(|x| x.1);
        // `max_latency=12.3`, `IOPS=41.2k,`: the value of a key
        let (key, value) = match keyed(w) {
            Some((k, v)) => (Some(k), v),
            None => (None, w),
        };
        let tq = if skip_token(value, i, &words) {
            None
        } else {
            token_quantity(value)
                .map(|(q, t)| (key_unit(key, q), t))
                .or_else(|| ratio_x(value, i, &words))
        };
        let (mut q, tilde) = match (tq, word_num) {
            (Some(q), _) => q,
            (None, Some(v)) => {
                // A number word counts only with a unit or a counted noun after it.
                let next = words.get(i + 1).copied().unwrap_or("");
                if word_unit(next).is_none()
                    && count_noun(next).is_none()
                    && !is_adjective_then_noun(&words, i + 1)
                {
                    i += 1;
                    continue;
                }
                (
                    Quantity {
                        value: v,
                        unit: String::new(),
                        attached: false,
                    },
                    false,
                )
            }
            (None, None) => {
                i += 1;
                continue;
            }
        };
        let start = i;
        let mut end = i + 1;
        let mut printed_words =
            vec![w.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | ':' | '"' | '.'))];
        // 45.6 million
        if let Some(m) = words
            .get(end)
            .and_then(|n| MULTIPLIERS.iter().find(|(k, _)| n.trim_matches(',') == *k))
        {
            if q.unit.is_empty() {
                q.value *= m.1;
                printed_words.push(words[end].trim_matches(','));
                end += 1;
            }
        }
        // `Mean: 619.733; Median: 548.000`: a list's separator ends the number's field, the
        // next field's words are not its unit
        let field_ends = w.ends_with([';', ',']);
        if q.unit.is_empty() && !field_ends {
            if let Some((u, n)) = rate_words(&words[end..]) {
                q.unit = u;
                printed_words.extend(&words[end..end + n]);
                end += n;
            }
        }
        if q.unit.is_empty() && !field_ends {
            // a unit word, or a counted noun within the next words
            if let Some((u, f)) = words
                .get(end)
                .and_then(|n| word_unit(n))
                .filter(|(u, _)| *u != "x" || times_compares(&words, start, end))
            {
                q.value *= f;
                q.unit = u.to_string();
                printed_words
                    .push(words[end].trim_matches(|c: char| !c.is_alphanumeric() && c != '%'));
                end += 1;
            } else if let Some(noun) = noun_after(&words, end).filter(|_| q.value.fract() == 0.0) {
                q.unit = noun;
            } else if let Some(year) = year_after(&words, start, q.value) {
                q.unit = year;
            }
        }
        // `1,2` alone is as often a list as a number; `-3` alone an option or a mark
        if q.unit.is_empty() && (has_decimal_comma(value) || q.value < 0.0) {
            i = end;
            continue;
        }
        let mut approx = tilde || w.contains('~');
        let before: Vec<String> = words[start.saturating_sub(3)..start]
            .iter()
            .map(|s| s.to_ascii_lowercase())
            .collect();
        // `about 14%`, and `about a 14% improvement`
        let hedged = |b: &[String]| b.last().is_some_and(|b| HEDGES.contains(&b.as_str()));
        let article = before.last().is_some_and(|b| b == "a" || b == "an")
            && hedged(&before[..before.len() - 1]);
        if hedged(&before) || article {
            approx = true;
        }
        let joined = before.join(" ");
        if HEDGE_PAIRS.iter().any(|h| joined.ends_with(h)) {
            approx = true;
        }
        let printed = if approx && !w.contains('~') {
            // keep the hedge in `printed`
            let hedge_start = if HEDGE_PAIRS
                .iter()
                .any(|h| joined.ends_with(h) && h.contains(' '))
            {
                start.saturating_sub(
                    HEDGE_PAIRS
                        .iter()
                        .find(|h| joined.ends_with(*h))
                        .map_or(1, |h| h.split(' ').count()),
                )
            } else if article {
                start.saturating_sub(2)
            } else {
                start.saturating_sub(1)
            };
            let mut p: Vec<&str> = words[hedge_start..start].to_vec();
            p.extend(printed_words.iter());
            p.join(" ")
        } else {
            printed_words.join(" ")
        };
        out.push(ProseNumber {
            quantity: q,
            printed: printed
                .trim_matches(|c: char| matches!(c, '(' | ')' | ',' | '.'))
                .to_string(),
            approx,
            at: start,
        });
        i = end;
    }
    out
}

/// `key=value` (`max_latency=12.3`, `IOPS=41.2k,`): the key and the value; the key is
/// a word (letters, digits, `_`, `-`), the value starts like a number.
fn keyed(w: &str) -> Option<(&str, &str)> {
    let (k, v) = w.trim_start_matches('(').split_once('=')?;
    let word = !k.is_empty()
        && k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    (word && v.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '~' | '+' | '-')))
        .then_some((k, v))
}

/// A value whose key names its unit: `IOPS=3367` is in IOPS, and the `k` of `IOPS=41.2k`
/// is a thousand, not KiB.
fn key_unit(key: Option<&str>, mut q: Quantity) -> Quantity {
    let Some((u, _)) = key
        .and_then(word_unit)
        .filter(|(u, _)| quantity_name(u) == "rate")
    else {
        return q;
    };
    let factor = match q.unit.as_str() {
        "" => 1.0,
        "KiB" => 1e3,
        "MiB" => 1e6,
        _ => return q,
    };
    q.value *= factor;
    q.unit = u.to_string();
    q
}

/// `x2.5` (`latency increased about x2.5`): a ratio written with the `x` first, read
/// only after a hedge or a verb of change, so that `x86` or `PCIe x4` are not ratios.
fn ratio_x(w: &str, i: usize, words: &[&str]) -> Option<(Quantity, bool)> {
    let rest = w
        .trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | '.' | '!'))
        .strip_prefix(['x', '×'])?;
    let (q, _) = token_quantity(rest).filter(|(q, _)| q.unit.is_empty())?;
    let prev = words.get(i.checked_sub(1)?)?.to_ascii_lowercase();
    let changed =
        HEDGES.contains(&prev.as_str()) || prev == "by" || (prev.len() > 4 && prev.ends_with("ed"));
    changed.then(|| {
        (
            Quantity {
                unit: "x".into(),
                attached: true,
                ..q
            },
            false,
        )
    })
}

/// The key a number's field names (`IOPS=41.2k` → `IOPS`, `Median: 548` → `Median`),
/// for the number at token `at` of `text`.
pub fn field_key(text: &str, at: usize) -> Option<String> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    if let Some((k, _)) = toks.get(at).and_then(|w| keyed(w)) {
        return Some(k.to_string());
    }
    let prev = toks.get(at.checked_sub(1)?)?;
    let k = prev.strip_suffix(':')?;
    let k = k.rsplit([';', ',', '(']).next().unwrap_or(k);
    (!k.is_empty()
        && k.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-')))
    .then(|| k.to_string())
}

/// What a change names right after it: `(+4.3% throughput, -14.4% max latency)`,
/// `-8.2% throughput and …` → `throughput`, `max latency`: up to three words, to the next
/// `,`/`)`/`;` or small word of a sentence (`+70% in case of null_blk` names nothing).
fn change_of(text: &str, printed: &str) -> Option<String> {
    let at = text.find(printed)? + printed.len();
    let rest = text[at..].trim_start_matches(['%', 'x']);
    let end = rest.find([',', ')', ';', '.']).unwrap_or(rest.len());
    let words: Vec<&str> = rest[..end]
        .split_whitespace()
        .take_while(|w| !STOP.contains(&w.to_ascii_lowercase().as_str()))
        .collect();
    let plain = |w: &&str| w.chars().all(|c| c.is_ascii_alphabetic() || c == '-');
    (!words.is_empty() && words.len() <= 3 && words.iter().all(plain)).then(|| words.join(" "))
}

/// Whether `N times` at `at` (the number) and `times` (the word) is a ratio: "10 times
/// faster", "3 times as many", "improved by 4 times"; not "Top 10 times (out of 90)" or
/// "ran it 5 times".
fn times_compares(words: &[&str], at: usize, times: usize) -> bool {
    let word = |k: usize| {
        words
            .get(k)
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_ascii_lowercase()
            })
            .unwrap_or_default()
    };
    let next = word(times + 1);
    let comparative = ["more", "less", "as", "worse", "better", "over"].contains(&next.as_str())
        || (next.len() > 3 && next.ends_with("er"));
    comparative || at.checked_sub(1).is_some_and(|p| word(p) == "by")
}

fn is_adjective_then_noun(words: &[&str], from: usize) -> bool {
    noun_after(words, from).is_some()
}

/// The counted noun in the next few words (`20k files`, `different truncate path`).
fn noun_after(words: &[&str], from: usize) -> Option<String> {
    for (k, raw) in words.iter().enumerate().take(from + 3).skip(from) {
        let raw = *raw;
        let w = raw
            .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
            .to_ascii_lowercase();
        if w.is_empty() || STOP.contains(&w.as_str()) {
            return None;
        }
        if let Some(n) = count_noun(&w) {
            return Some(n);
        }
        if token_quantity(raw).is_some() {
            continue; // `45.6 million 20k files`
        }
        // the phrase ends at punctuation: its last word is the noun
        if raw.ends_with([':', ',', '.', ';', ')'])
            && k > from
            && w.chars().all(|c| c.is_ascii_alphabetic())
        {
            return Some(if w.ends_with('s') { w } else { format!("{w}s") });
        }
        if !w.chars().all(|c| c.is_ascii_alphabetic()) {
            return None;
        }
    }
    None
}

/// `in 2023`, `since 2019`: a year.
fn year_after(words: &[&str], at: usize, v: f64) -> Option<String> {
    let prev = words.get(at.checked_sub(1)?)?.to_ascii_lowercase();
    ((1970.0..=2100.0).contains(&v)
        && v.fract() == 0.0
        && matches!(prev.as_str(), "in" | "since" | "until" | "of" | "from"))
    .then(|| "year".to_string())
}

/// Tokens that are not measurements: list markers `1)`, references `(2)`, dates,
/// times of day, versions in identifiers, fractions like `1/2`.
fn skip_token(w: &str, i: usize, words: &[&str]) -> bool {
    let core = w.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | '"'));
    if core.starts_with('(')
        && core.ends_with(')')
        && core[1..core.len() - 1].chars().all(|c| c.is_ascii_digit())
    {
        return true;
    }
    if i == 0
        && (core.ends_with(')') || core.ends_with('.'))
        && core
            .trim_end_matches([')', '.'])
            .chars()
            .all(|c| c.is_ascii_digit())
    {
        return true;
    }
    let inner = core.trim_matches(|c: char| matches!(c, '(' | ')'));
    if inner.contains(':') && !inner.ends_with(':') {
        return true; // 23:00, 11:38:46PM
    }
    if inner.matches('/').count() >= 1 && !inner.ends_with("/s") && !inner.ends_with("/sec") {
        return true; // 1/2, 2024/5/31
    }
    if inner.matches('.').count() >= 2 && !inner.contains("..") {
        return true; // 6.1.0, IP addresses
    }
    if inner.contains("..") {
        return true;
    }
    if inner.contains('-') && !inner.starts_with('-') {
        return true; // 2024-05-31, ranges printed elsewhere
    }
    // weekday/month context: `Jul 10, 2008`
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    if i >= 2 && MONTHS.contains(&words[i - 2].trim_matches(',').to_ascii_lowercase().as_str()) {
        return true;
    }
    let prev = i
        .checked_sub(1)
        .and_then(|p| words.get(p))
        .map(|p| p.trim_matches(',').to_ascii_lowercase());
    if prev.as_deref().is_some_and(|p| {
        [
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
            "mon", "tue", "wed", "thu", "fri", "sat", "sun", "v", "version", "patch",
        ]
        .contains(&p)
    }) {
        return true;
    }
    false
}

/// A kernel log line, `[ 1197.421616] XFS (loop0): Mounting Filesystem`: its numbers are
/// the time since boot and what the kernel says, not the post's results.
pub fn kernel_log(text: &str) -> bool {
    text.trim_start()
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .is_some_and(|(stamp, _)| {
            let stamp = stamp.trim();
            stamp.contains('.') && stamp.parse::<f64>().is_ok()
        })
}

/// Prose rows of one line.
/// Whether the size printed as `printed` in `text` is an amount moved in a time, not a
/// device's size: `64 MB in 1.60 seconds` (hdparm), `1 GB in 3 s`.
pub fn transferred(text: &str, printed: &str) -> bool {
    let Some(at) = text.find(printed) else {
        return false;
    };
    let mut after = text[at + printed.len()..].split_whitespace();
    after.next() == Some("in")
        && after
            .next()
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
}

pub fn prose_rows(
    line: usize,
    text: &str,
    following: &str,
    stated_by: Option<&str>,
    sentence: &str,
) -> Vec<Row> {
    if kernel_log(text) {
        return Vec::new();
    }
    let claimish = super::comparison::is_comparison(sentence);
    let found = prose_numbers_before(text, following);
    // each `key: value` / `key=value` of a list is its own field, named by its key (one
    // `key: value` alone is a result line's row: `rowlabels::result_head`)
    let keys: Vec<Option<String>> = found.iter().map(|p| field_key(text, p.at)).collect();
    let listed = keys.iter().flatten().count() >= 2;
    found
        .into_iter()
        .zip(keys)
        .map(|(p, key)| {
            let toks = text.split_whitespace().nth(p.at).unwrap_or("");
            let mut settings: Vec<(String, String)> = key
                .filter(|_| listed || keyed(toks).is_some())
                .map(|k| vec![("field".to_string(), k)])
                .unwrap_or_default();
            if matches!(p.quantity.unit.as_str(), "%" | "x") {
                if let Some(what) = change_of(text, &p.printed) {
                    settings.push(("of".into(), what));
                }
            }
            let unit = p.quantity.unit.as_str();
            let category = match unit {
                "%" | "x" if claimish => Category::Claim,
                "" | "year" => Category::Context,
                "ns" => Category::Parameter,
                _ if matches!(quantity_name(unit), "time" | "rate") => Category::Measurement,
                _ => Category::Parameter,
            };
            Row {
                line,
                group: "prose".into(),
                quantity: quantity_name(&p.quantity.unit).into(),
                settings,
                value: p.quantity.value,
                unit: p.quantity.unit.clone(),
                printed: p.printed,
                approx: p.approx,
                category,
                stated_by: stated_by.map(str::to_string),
                note: sentence.to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_with_units() {
        let q = |t: &str| token_quantity(t).map(|(q, a)| (q.value, q.unit, a));
        assert_eq!(q("9.601s"), Some((9.601, "s".into(), false)));
        assert_eq!(q("(~11MB)"), Some((11.0, "MB".into(), true)));
        assert_eq!(q("8k"), Some((8.0, "KiB".into(), false)));
        assert_eq!(q("1024k"), Some((1024.0, "KiB".into(), false)));
        assert_eq!(q("1m4.441s"), Some((64.441, "s".into(), false)));
        assert_eq!(q("14%"), Some((14.0, "%".into(), false)));
        assert_eq!(q("10x"), Some((10.0, "x".into(), false)));
        assert_eq!(q("2,200/s"), Some((2200.0, "/s".into(), false)));
        assert_eq!(q("512M"), Some((512.0, "MiB".into(), false)));
        assert_eq!(q("ext4"), None);
        assert_eq!(q("12abc"), None);
    }

    fn nums(s: &str) -> Vec<(f64, String, bool, String)> {
        prose_numbers(s)
            .into_iter()
            .map(|p| (p.quantity.value, p.quantity.unit, p.approx, p.printed))
            .collect()
    }

    #[test]
    fn prose_numbers_keep_hedges_and_units() {
        assert_eq!(
            nums("Running on ext3, \"fsck -f\" takes about one hour."),
            [(60.0, "min".into(), true, "about one hour".into())]
        );
        assert_eq!(
            nums("the same fsck is finished in a bit over 5 minutes - more than 10x faster."),
            [
                (5.0, "min".into(), true, "a bit over 5 minutes".into()),
                (10.0, "x".into(), true, "more than 10x".into())
            ]
        );
        let n =
            nums("fill a 1TB Seagate drive with 45.6 million 20k files (distributed between 256");
        assert_eq!(n[0], (1.0, "TB".into(), false, "1TB".into()));
        assert_eq!(n[1], (45.6e6, "files".into(), false, "45.6 million".into()));
        assert_eq!(n[2].0, 20.0);
        assert_eq!(n[2].1, "KiB");
        assert_eq!(
            nums("improves it from about 2200/s to about 2500/s, about a 14% improvement"),
            [
                (2200.0, "/s".into(), true, "about 2200/s".into()),
                (2500.0, "/s".into(), true, "about 2500/s".into()),
                (14.0, "%".into(), true, "about a 14%".into())
            ]
        );
        assert_eq!(
            nums("we turned on rmap by default back in 2023?")[0].1,
            "year"
        );
        // `N times` is a ratio only when it compares
        assert_eq!(nums("Top 10 times (out of 90) in us:")[0].1, "");
        assert_eq!(nums("it is 10 times faster")[0].1, "x");
        assert_eq!(nums("throughput improved by 4 times.")[0].1, "x");
        assert_eq!(
            nums("I see the same for the nine subsequent runs")[0],
            (9.0, "runs".into(), false, "nine".into())
        );
        assert_eq!(
            nums("With this series we have 3 different truncate path:")[0].1,
            "paths"
        );
        assert!(
            nums("On Thu, Jul 10, 2008 at 08:36:42AM -0400, and [PATCH 1/2] with (2)").is_empty()
        );
        assert!(kernel_log(
            "[ 1197.421616] XFS (loop0): Mounting Filesystem"
        ));
        assert!(kernel_log("[12345.000001] EXT4-fs (sda1): mounted"));
        assert!(!kernel_log("[PATCH 1/2] xfs: 10% faster"));
        assert!(!kernel_log("[1] see 3.2s"));
    }

    #[test]
    fn changes_durations_and_locale_decimals() {
        assert_eq!(
            nums("throughput went -8.2% and latency +3.1% (noise?)"),
            [
                (-8.2, "%".into(), false, "-8.2%".into()),
                (3.1, "%".into(), false, "+3.1%".into())
            ]
        );
        // a bare negative number is an option or a mark, not a result
        assert!(nums("nice -5 and then -3").is_empty());
        assert_eq!(nums("the copy took ~1m56")[0].0, 116.0);
        assert!(nums("the copy took ~1m56")[0].2);
        assert_eq!(nums("done in 1m56.3s")[0].0, 116.3);
        // a decimal comma with a unit; without one `1,2` is a list
        assert_eq!(nums("dd says 1,2 GB/s here")[0].0, 1.2);
        assert_eq!(nums("dd says 1,2 GB/s here")[0].1, "GB/s");
        assert_eq!(nums("and 12,5MB/s with sync")[0].1, "MB/s");
        assert!(nums("tests 1,2 and 3 failed").iter().all(|n| n.0 != 1.2));
        assert_eq!(nums("a 1,024 files run")[0].0, 1024.0);
    }

    #[test]
    fn rates_in_words_and_spaced_units() {
        let n = nums("an average of 48.34 megabytes per second over the run");
        assert_eq!((n[0].0, n[0].1.as_str()), (48.34, "MB/s"));
        assert_eq!(n[0].3, "48.34 megabytes per second");
        assert_eq!(nums("Only 31.9 kb/s.")[0].1, "KB/s");
        assert_eq!(nums("it copied at 88.7 MB/s")[0].1, "MB/s");
        assert_eq!(nums("Throughput 452.385 MB/sec")[0].1, "MB/s");
        assert_eq!(nums("94055.61 qps")[0].1, "qps");
        // a ratio with its `x` first, after a word of change only
        assert_eq!(nums("latency increased about x2.5")[0].1, "x");
        assert!(nums("on x86 with a PCIe x4 slot")
            .iter()
            .all(|n| n.1 != "x"));
    }

    type Settings = Vec<(String, String)>;

    fn rows(text: &str) -> Vec<(f64, String, Settings)> {
        prose_rows(1, text, "", None, text)
            .into_iter()
            .map(|r| (r.value, r.unit, r.settings))
            .collect()
    }

    fn set(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn fields_of_a_list_and_keyed_values() {
        // each `key: value` of a `;` list is its own field: `Median` is no unit of 619.733
        assert_eq!(
            rows("Mean: 619.733; Median: 548.000; Max: 1,204 ms"),
            [
                (619.733, String::new(), vec![set("field", "Mean")]),
                (548.0, String::new(), vec![set("field", "Median")]),
                (1204.0, "ms".into(), vec![set("field", "Max")]),
            ]
        );
        // `key=value`: the key names the field, and `IOPS=` makes `41.2k` a count
        assert_eq!(
            rows("ext4: IOPS=41.2k, BW=161MiB/s"),
            [
                (41200.0, "IOPS".into(), vec![set("field", "IOPS")]),
                (161.0, "MiB/s".into(), vec![set("field", "BW")]),
            ]
        );
        assert_eq!(
            rows("we saw max_latency=12.3 ms at worst"),
            [(12.3, "ms".into(), vec![set("field", "max_latency")])]
        );
        // what a change names after it
        assert_eq!(
            rows("(+4.3% throughput, -14.4% max latency)"),
            [
                (4.3, "%".into(), vec![set("of", "throughput")]),
                (-14.4, "%".into(), vec![set("of", "max latency")]),
            ]
        );
        assert_eq!(rows("+70% in case of null_blk")[0].2, []);
    }
}
