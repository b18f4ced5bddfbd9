//! What prose says varies, and how numbers moved:
//! - a range of a parameter, "rtextsize from 8k to 1024k", "from 1 to 16 threads": a
//!   matrix axis candidate (its two ends; the values between are not said) marked as a
//!   guess, and its two numbers as `range` `from`/`to`;
//! - a change, "from about 2200/s to about 2500/s", "went from 12s to 9s", "3.2s -> 2.9s",
//!   "924 → 322 transactions/sec": before/after numbers with their unit (`change`
//!   `before`/`after`; a unit said once is shared);
//! - axes said in words: "with and without link=1", "with parent=0 and parent=1", "on v4
//!   and v5 filesystems", "ext3 vs ext4": axis candidates.
//!
//! Candidates never enter the matrix by themselves: the draft lists them as comments.

use super::axis::Axis;
use super::numbers::{prose_numbers_before, token_quantity, ProseNumber};
use super::{Category, Row};

/// What a line says about two of its numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// A value before and after (a measurement that moved).
    Change {
        before: ProseNumber,
        after: ProseNumber,
        /// The unit said once, for both ("924 → 322 transactions/sec").
        unit: String,
    },
    /// Two ends of a parameter's range.
    Range {
        axis: Axis,
        from: ProseNumber,
        to: ProseNumber,
    },
    /// "from X to Y" of nothing the line names: neither a change nor a range, unless the
    /// sentence says what (`iops_change`).
    Unnamed { from: ProseNumber, to: ProseNumber },
}

/// What a change is of, when the line names it with `the` before its verb: "the bandwidth
/// is improved from 466KB/s", "the maximum latency is reduced from 7.667s" → `bandwidth`,
/// `maximum latency`. `first` is the first number as printed.
pub fn changed(text: &str, first: &str) -> Option<String> {
    let head = &text[..text.find(first)?];
    let words: Vec<String> = head
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let from = words.iter().rposition(|w| w == "from")?;
    let verb = words[..from]
        .iter()
        .rposition(|w| matches!(w.as_str(), "is" | "are" | "was" | "were"))?;
    let the = words[..verb]
        .iter()
        .rposition(|w| w == "the" || w == "its")?;
    let what = &words[the + 1..verb];
    (!what.is_empty()
        && what.len() <= 3
        && what
            .iter()
            .all(|w| w.chars().all(|c| c.is_ascii_alphabetic() || c == '-')))
    .then(|| what.join(" "))
}

/// Units of things measured: a "from X to Y" of these is a change, not a range.
const MEASURED: &[&str] = &[
    "s",
    "ms",
    "us",
    "min",
    "/s",
    "IOPS",
    "MB/s",
    "MiB/s",
    "GB/s",
    "GiB/s",
    "KB/s",
    "KiB/s",
    "%",
    "x",
    "transactions/s",
];

/// Words before "from" that make it a change ("went from", "dropped from").
const MOVED: &[&str] = &[
    "went",
    "goes",
    "go",
    "dropped",
    "drops",
    "drop",
    "improved",
    "improves",
    "increased",
    "increases",
    "decreased",
    "decreases",
    "reduced",
    "reduces",
    "rose",
    "fell",
    "falls",
    "changed",
    "changes",
    "down",
    "up",
    "jumped",
    "jumps",
    "grew",
    "grows",
    "shrank",
    "time",
    "times",
    "it",
    "this",
    "that",
    "speed",
    "throughput",
    "runtime",
    "latency",
    "performance",
];

const HEDGE: &[&str] = &["about", "around", "roughly", "approximately", "approx", "~"];

const FILESYSTEMS: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "bcachefs", "tmpfs", "jfs", "reiserfs",
];

fn clean(w: &str) -> String {
    w.trim_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '_' | '=' | '-' | '.'))
        .trim_end_matches('.')
        .to_string()
}

fn is_name(w: &str) -> bool {
    !w.is_empty()
        && w.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn arrow(w: &str) -> bool {
    matches!(w, "->" | "→" | "=>" | "-->")
}

/// The changes and ranges of one line (`following`: the next line of the sentence).
/// "improvement in IOPS … from 1.09M to 1.13M": in a sentence about IOPS, the ends of a
/// "from X to Y" with a bare `k`/`M`/`G` suffix are IOPS counts (×1000, as fio prints them),
/// not sizes: the range is a change, and their rows (`rows`, by printed text) are IOPS.
pub fn iops_change(f: Finding, sentence: &str, rows: &mut [Row]) -> Finding {
    let (from, to, axis) = match f {
        Finding::Range { axis, from, to } => (from, to, Some(axis)),
        Finding::Unnamed { from, to } => (from, to, None),
        f => return f,
    };
    let about_iops = sentence
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("iops"));
    let scale = |p: &ProseNumber| {
        match p.printed.chars().last() {
            Some('k' | 'K') => Some(1e3),
            Some('M') => Some(1e6),
            Some('G') => Some(1e9),
            _ => None,
        }
        .filter(|_| matches!(p.quantity.unit.as_str(), "KiB" | "MiB" | "GiB"))
    };
    let (Some(a), Some(b), true) = (scale(&from), scale(&to), about_iops) else {
        return match axis {
            Some(axis) => Finding::Range { axis, from, to },
            None => Finding::Unnamed { from, to },
        };
    };
    Finding::Change {
        before: as_iops(from, a, rows),
        after: as_iops(to, b, rows),
        unit: "IOPS".into(),
    }
}

/// The number `p` as `m` IOPS per unit printed, and its row (by printed text) too.
fn as_iops(mut p: ProseNumber, m: f64, rows: &mut [Row]) -> ProseNumber {
    p.quantity.value *= m;
    p.quantity.unit = "IOPS".into();
    if let Some(r) = rows
        .iter_mut()
        .find(|r| r.printed == p.printed && r.unit != "IOPS")
    {
        r.value = p.quantity.value;
        r.unit = "IOPS".into();
        r.quantity = super::units::quantity_name("IOPS").into();
        r.category = Category::Measurement;
    }
    p
}

pub fn read(line: usize, text: &str, following: &str) -> Vec<Finding> {
    let words: Vec<&str> = text
        .split_whitespace()
        .chain(following.split_whitespace())
        .collect();
    let nums = prose_numbers_before(text, following);
    let mut out = Vec::new();
    for pair in nums.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.at <= a.at || b.at - a.at > 6 {
            continue;
        }
        let between: Vec<String> = words[a.at + 1..b.at]
            .iter()
            .map(|w| w.to_ascii_lowercase())
            .collect();
        let by_arrow = between.iter().any(|w| arrow(w));
        let by_to = between.iter().any(|w| w == "to");
        if !(by_arrow || by_to) || between.iter().any(|w| w == "and" || w.ends_with(',')) {
            continue;
        }
        // the word before the first number, hedges skipped
        let mut k = a.at;
        while k > 0 && HEDGE.contains(&words[k - 1].to_ascii_lowercase().as_str()) {
            k -= 1;
        }
        let from = k > 0 && words[k - 1].eq_ignore_ascii_case("from");
        if !by_arrow && !from {
            continue;
        }
        let unit = if a.quantity.unit.is_empty() {
            b.quantity.unit.clone()
        } else {
            a.quantity.unit.clone()
        };
        let before_from = (k >= 2).then(|| clean(words[k - 2]).to_ascii_lowercase());
        let measured = MEASURED.contains(&unit.as_str())
            || before_from.as_deref().is_some_and(|w| MOVED.contains(&w));
        if by_arrow || measured {
            out.push(Finding::Change {
                before: a.clone(),
                after: b.clone(),
                unit,
            });
            continue;
        }
        // a range: named by the word before "from", else by the noun after the second end
        let noun_after = words
            .get(b.at + 1)
            .map(|w| clean(w).to_ascii_lowercase())
            .filter(|w| {
                is_name(w) && !b.quantity.unit.is_empty() && !b.quantity.unit.contains('B')
            });
        // a parameter's name before "from" (`rtextsize`, `agcount`), else the counted noun
        // after the range (`threads`), else a plain word before "from" that is no verb
        let param = before_from.filter(|w| is_name(w));
        let name = param
            .clone()
            .filter(|w| w.contains('_') || w.contains(char::is_numeric))
            .or(noun_after)
            .or(param.filter(|w| w.len() > 3 && !w.ends_with("ing") && !w.ends_with("ed")));
        let Some(name) = name else {
            out.push(Finding::Unnamed {
                from: a.clone(),
                to: b.clone(),
            });
            continue;
        };
        let noun = name_is_noun(&name, &words, b.at);
        let start = if noun { k - 1 } else { k.saturating_sub(2) };
        let end = (b.at + 1 + usize::from(noun)).min(words.len());
        let printed_a = a
            .printed
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_string();
        let printed_b = b
            .printed
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_string();
        let (va, vb) = if noun {
            (trim_num(a.quantity.value), trim_num(b.quantity.value))
        } else {
            (printed_a, printed_b)
        };
        let span = words[start..end].join(" ");
        out.push(Finding::Range {
            axis: Axis {
                name,
                values: vec![va, vb],
                line,
                why: format!(
                    "guess: \"{}\" gives a range; only its ends are said",
                    span.trim_end_matches([',', '.', ';'])
                ),
            },
            from: a.clone(),
            to: b.clone(),
        });
    }
    // `3.2s->2.9s` written as one word
    for w in text.split_whitespace() {
        for sep in ["->", "→", "=>"] {
            if let Some((x, y)) = w.split_once(sep) {
                if let (Some((qa, ta)), Some((qb, tb))) = (token_quantity(x), token_quantity(y)) {
                    let unit = if qa.unit.is_empty() {
                        qb.unit.clone()
                    } else {
                        qa.unit.clone()
                    };
                    let pn = |q, t, p: &str| ProseNumber {
                        quantity: q,
                        printed: p
                            .trim_matches(|c: char| matches!(c, '(' | ')' | ',' | '.'))
                            .to_string(),
                        approx: t,
                        at: 0,
                    };
                    out.push(Finding::Change {
                        before: pn(qa, ta, x),
                        after: pn(qb, tb, y),
                        unit,
                    });
                }
            }
        }
    }
    out
}

fn name_is_noun(name: &str, words: &[&str], at: usize) -> bool {
    words
        .get(at + 1)
        .is_some_and(|w| clean(w).eq_ignore_ascii_case(name))
}

fn trim_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// An option said in prose as an axis: `link=1`, `-flink=1` (a one-letter option and its
/// argument), `--foo=bar`, or (`words`) a feature word (`uninit_bg`, `patch`).
fn option_axis(x: &str, words: bool) -> Option<(String, Vec<String>)> {
    let opt = x.trim_start_matches("--");
    let opt = match opt.strip_prefix('-') {
        Some(r) if r.len() > 1 && r.contains('=') => &r[1..],
        Some(r) => r,
        None => opt,
    };
    match opt.split_once('=') {
        Some((k, v)) if is_name(k) && !v.is_empty() => {
            let values = if v == "1" {
                vec!["1".into(), "0".into()]
            } else {
                vec![v.to_string(), "without".into()]
            };
            Some((k.to_string(), values))
        }
        None if words && is_name(opt) => {
            let values = if opt.contains('_') {
                vec!["1".into(), "0".into()]
            } else {
                vec!["with".into(), "without".into()]
            };
            Some((opt.to_ascii_lowercase(), values))
        }
        _ => None,
    }
}

/// Axes said in words on one line of prose.
pub fn axes(line: usize, text: &str) -> Vec<Axis> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let mut out: Vec<Axis> = Vec::new();
    let mut push = |name: String, values: Vec<String>, printed: String| {
        if !out.iter().any(|a| a.name == name) && values.len() > 1 {
            out.push(Axis {
                name,
                values,
                line,
                why: format!(
                    "guess: \"{}\"",
                    printed.trim_end_matches([',', '.', ';', ':'])
                ),
            });
        }
    };
    // "with and without X", "with or without X"
    for i in 0..lower.len().saturating_sub(3) {
        if lower[i] == "with"
            && matches!(lower[i + 1].as_str(), "and" | "or")
            && lower[i + 2] == "without"
        {
            let mut j = i + 3;
            if lower[j] == "the" && j + 1 < lower.len() {
                j += 1;
            }
            let x = words[j].trim_matches(|c: char| {
                matches!(c, '"' | '\'' | '`' | ',' | '.' | ':' | ';' | '(' | ')')
            });
            if let Some((k, values)) = option_axis(x, true) {
                push(k, values, words[i..=j].join(" "));
            }
        }
    }
    // "if I remove the -flink=1 parameter", "without -o discard": an option turned off
    for i in 0..lower.len().saturating_sub(1) {
        if !matches!(
            lower[i].as_str(),
            "remove" | "removing" | "removed" | "drop" | "dropping" | "dropped" | "without"
        ) {
            continue;
        }
        let j = if lower[i + 1] == "the" { i + 2 } else { i + 1 };
        let Some(x) = words.get(j).map(|w| {
            w.trim_matches(|c: char| {
                matches!(c, '"' | '\'' | '`' | ',' | '.' | ':' | ';' | '(' | ')')
            })
        }) else {
            continue;
        };
        if x.starts_with('-') || x.contains('=') {
            if let Some((k, values)) = option_axis(x, false) {
                push(k, values, words[i..=j].join(" "));
            }
        }
    }
    // the same key with several values: "parent=0 and parent=1", "crc=0 vs crc=1"
    let pairs: Vec<(usize, String, String)> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let w = w.trim_matches(|c: char| {
                matches!(c, '"' | '\'' | '`' | ',' | '.' | ':' | ';' | '(' | ')')
            });
            let w = w.trim_start_matches('-');
            let (k, v) = w.split_once('=')?;
            (is_name(k) && !v.is_empty() && !v.contains('='))
                .then(|| (i, k.to_string(), v.to_string()))
        })
        .collect();
    for (n, (i, k, _)) in pairs.iter().enumerate() {
        let same: Vec<&(usize, String, String)> = pairs[n..].iter().filter(|p| p.1 == *k).collect();
        let mut values: Vec<String> = Vec::new();
        for p in &same {
            if !values.contains(&p.2) {
                values.push(p.2.clone());
            }
        }
        let last = same.last().map_or(*i, |p| p.0);
        let joined = lower[*i..=last].join(" ");
        if values.len() > 1
            && [" and ", " vs", " versus ", " or ", ", "]
                .iter()
                .any(|j| joined.contains(j))
        {
            push(k.clone(), values, words[*i..=last].join(" "));
        }
    }
    // "v4 and v5 filesystems", "ext3 vs ext4"
    for i in 0..lower.len().saturating_sub(2) {
        if !matches!(lower[i + 1].as_str(), "and" | "vs" | "vs." | "versus") {
            continue;
        }
        let a = clean(&lower[i]);
        let b = clean(&lower[i + 2]);
        let alpha = |s: &str| s.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
        let fs = FILESYSTEMS.contains(&a.as_str()) && FILESYSTEMS.contains(&b.as_str());
        let family = a != b
            && !alpha(&a).is_empty()
            && alpha(&a) == alpha(&b)
            && a.len() > alpha(&a).len()
            && b.len() > alpha(&b).len()
            && a.len() <= 8;
        if a == b || !(fs || family) {
            continue;
        }
        let noun = lower.get(i + 3).map(|w| clean(w)).filter(|w| {
            is_name(w)
                && w.len() > 2
                && !matches!(
                    w.as_str(),
                    "the" | "and" | "with" | "on" | "is" | "are" | "was"
                )
        });
        let name = if fs {
            "fs".to_string()
        } else {
            match noun {
                Some(n) => n.strip_suffix('s').unwrap_or(&n).to_string(),
                None => continue,
            }
        };
        let end = if fs { i + 2 } else { i + 3 };
        push(
            name,
            vec![a, b],
            words[i..=end.min(words.len() - 1)].join(" "),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{axes, read, Finding};

    #[test]
    fn what_a_change_is_of() {
        let c = |t: &str, f: &str| super::changed(t, f);
        assert_eq!(
            c(
                "** the bandwidth is improved from 466KB/s to 477KB/s",
                "466KB/s"
            )
            .as_deref(),
            Some("bandwidth")
        );
        assert_eq!(
            c(
                "** the maximum latency is reduced from 7.667s to 1.728",
                "7.667s"
            )
            .as_deref(),
            Some("maximum latency")
        );
        assert_eq!(
            c("Why did ffsb drop from 924 transactions/sec to 322?", "924"),
            None
        );
        assert_eq!(
            c(
                "speeds up from about 2200/s to about 2500/s",
                "about 2200/s"
            ),
            None
        );
    }

    fn summary(f: &Finding) -> String {
        match f {
            Finding::Change {
                before,
                after,
                unit,
            } => format!("change {} -> {} {unit}", before.printed, after.printed),
            Finding::Range { axis, .. } => format!("range {} {:?}", axis.name, axis.values),
            Finding::Unnamed { from, to } => format!("unnamed {} {}", from.printed, to.printed),
        }
    }

    #[test]
    fn ranges_and_changes() {
        for (text, want) in [
            (
                "I tested rtextsize from 8k to 1024k and saw no difference.",
                "range rtextsize [\"8k\", \"1024k\"]",
            ),
            (
                "scaling from 1 to 16 threads",
                "range threads [\"1\", \"16\"]",
            ),
            (
                "creates went from about 2200/s to about 2500/s",
                "change about 2200/s -> about 2500/s /s",
            ),
            ("unlink time: 12.5s -> 10.0s", "change 12.5s -> 10.0s s"),
            (
                "it drops 924 → 322 transactions/sec",
                "change 924 -> 322 transactions/sec transactions/s",
            ),
            ("wall time 3.2s->2.9s overall", "change 3.2s -> 2.9s s"),
        ] {
            let got: Vec<String> = read(7, text, "").iter().map(summary).collect();
            assert!(got.iter().any(|g| g.starts_with(want)), "{text}: {got:?}");
        }
        assert!(read(1, "we wrote 10 files to 2 disks", "").is_empty());
        let r = read(3, "rtextsize from 8k to 1024k", "");
        let Finding::Range { axis, .. } = &r[0] else {
            panic!("{r:?}")
        };
        assert_eq!(axis.line, 3);
        assert!(axis
            .why
            .starts_with("guess: \"rtextsize from 8k to 1024k\""));
    }

    #[test]
    fn axes_in_words() {
        let names = |t: &str| -> Vec<(String, Vec<String>)> {
            axes(5, t).into_iter().map(|a| (a.name, a.values)).collect()
        };
        assert_eq!(
            names("I ran it with and without link=1 in the op list."),
            [("link".to_string(), vec!["1".to_string(), "0".to_string()])]
        );
        assert_eq!(
            names("with and without -flink=1"),
            [("link".to_string(), vec!["1".to_string(), "0".to_string()])]
        );
        assert_eq!(
            names("Here are the numbers with parent=0 and parent=1:"),
            [("parent".to_string(), vec!["0".to_string(), "1".to_string()])]
        );
        assert_eq!(
            names("runtime increased on v4 and v5 filesystems"),
            [(
                "filesystem".to_string(),
                vec!["v4".to_string(), "v5".to_string()]
            )]
        );
        assert_eq!(
            names("fsck on ext3 vs ext4 is 10x faster"),
            [(
                "fs".to_string(),
                vec!["ext3".to_string(), "ext4".to_string()]
            )]
        );
        assert_eq!(
            names("If I remove the -flink=1 parameter from fsstress so that"),
            [("link".to_string(), vec!["1".to_string(), "0".to_string()])]
        );
        assert!(names("I and my colleague ran this on a 4 and 8 core box").is_empty());
        assert!(axes(5, "with and without")
            .iter()
            .all(|a| a.why.starts_with("guess:")));
    }
}
