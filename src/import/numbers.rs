//! Numbers written by people: a number with its unit as printed (`9.601s`, `~11MB`,
//! `20k`, `2200/s`, `14%`, `10x`, `45.6 million`, `about one hour`), tables with a header
//! row and row labels, and numbers in sentences, with `approx` when the post hedges
//! (`about`, `~`, `a bit over`, `more than`).

use super::units::{count_noun, quantity_name, suffix_unit, word_unit};
use super::{Category, Row};

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

/// `0m18.807s`, `1m4.441s`, `1h2m3s` → seconds.
fn shell_time(s: &str) -> Option<f64> {
    let body = s.strip_suffix('s')?;
    let (m, sec) = body.split_once('m')?;
    let (h, m) = match m.split_once('h') {
        Some((h, m)) => (h.parse::<f64>().ok()?, m.parse::<f64>().ok()?),
        None => (0.0, m.parse::<f64>().ok()?),
    };
    let sec: f64 = sec.parse().ok()?;
    Some(h * 3600.0 + m * 60.0 + sec)
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
    let t = t.strip_prefix('+').unwrap_or(t);
    if !t.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(v) = shell_time(t) {
        return Some((
            Quantity {
                value: v,
                unit: "s".into(),
                attached: true,
            },
            approx,
        ));
    }
    let (v, used) = number_prefix(t)?;
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
        let tq = if skip_token(w, i, &words) {
            None
        } else {
            token_quantity(w)
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
        if q.unit.is_empty() {
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
    prose_numbers_before(text, following)
        .into_iter()
        .map(|p| {
            let category = match p.quantity.unit.as_str() {
                "percent" | "x" if claimish => Category::Claim,
                "s" | "ms" | "us" | "min" | "/s" | "IOPS" | "MB/s" | "MiB/s" | "GB/s" | "KB/s"
                | "Kb/s" | "Mb/s" | "requests/s" | "transactions/s" => Category::Measurement,
                "" | "year" => Category::Context,
                _ => Category::Parameter,
            };
            Row {
                line,
                group: "prose".into(),
                quantity: quantity_name(&p.quantity.unit).into(),
                settings: Vec::new(),
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
        assert_eq!(q("14%"), Some((14.0, "percent".into(), false)));
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
                (14.0, "percent".into(), true, "about a 14%".into())
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
}
