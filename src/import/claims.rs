//! Sentences that compare (`14% faster`, `10x`, `no obvious downgrade`, `same or down
//! across the board`, `not much of a difference`) become draft claims with their quote.

use super::comparison::is_comparison;
use super::mail::{is_furniture, PostLine};

/// A draft claim: the sentence, where it is, who wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftClaim {
    pub id: String,
    pub line: usize,
    pub quote: String,
    pub stated_by: Option<String>,
    /// A number the sentence gives (`10%` → 10 percent), for a check skeleton.
    pub bound: Option<(f64, String)>,
}

/// Sentences of the prose lines (those not `taken` by commands or tool output), each with
/// the post index of the line it starts on.
pub fn sentences(lines: &[PostLine], taken: &[bool]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    let flush = |cur: &mut String, start: usize, out: &mut Vec<(usize, String)>| {
        let s = cur.trim().to_string();
        if !s.is_empty() {
            out.push((start, s));
        }
        cur.clear();
    };
    for (k, l) in lines.iter().enumerate() {
        let t = l.text.trim();
        if taken[k] || t.is_empty() || is_furniture(t) || (k > 0 && lines[k - 1].depth != l.depth) {
            flush(&mut cur, start, &mut out);
            if taken[k] || t.is_empty() || is_furniture(t) {
                continue;
            }
        }
        let mut rest = t;
        while !rest.is_empty() {
            if cur.is_empty() {
                start = k;
            } else {
                cur.push(' ');
            }
            // split at `. ` / `? ` / `! ` ends of sentences
            let end = rest
                .match_indices(". ")
                .chain(rest.match_indices("? "))
                .chain(rest.match_indices("! "))
                .map(|(i, _)| i + 1)
                .filter(|&i| {
                    // not `e.g.` or `i.e.` or a decimal
                    let before = &rest[..i];
                    !before.ends_with("e.g.")
                        && !before.ends_with("i.e.")
                        && !before.ends_with("vs.")
                })
                .min();
            match end {
                Some(i) => {
                    cur.push_str(&rest[..i]);
                    flush(&mut cur, start, &mut out);
                    rest = rest[i..].trim_start();
                }
                None => {
                    cur.push_str(rest);
                    rest = "";
                }
            }
        }
        if t.ends_with('.') || t.ends_with('?') || t.ends_with('!') || t.ends_with(':') {
            flush(&mut cur, start, &mut out);
        }
    }
    flush(&mut cur, start, &mut out);
    out
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for w in s
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 2)
        .take(6)
    {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&w.to_ascii_lowercase());
    }
    if out.is_empty() {
        "claim".into()
    } else {
        out
    }
}

/// Draft claims from the prose.
pub fn find(lines: &[PostLine], taken: &[bool]) -> Vec<DraftClaim> {
    let mut out: Vec<DraftClaim> = Vec::new();
    for (k, s) in sentences(lines, taken) {
        if !is_comparison(&s) || s.split_whitespace().count() < 3 || s.ends_with('?') {
            continue;
        }
        let mut id = slug(&s);
        let base = id.clone();
        let mut n = 2;
        while out.iter().any(|c| c.id == id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        let bound = super::numbers::prose_numbers(&s)
            .into_iter()
            .find(|p| matches!(p.quantity.unit.as_str(), "%" | "x"))
            .map(|p| (p.quantity.value, p.quantity.unit));
        out.push(DraftClaim {
            id,
            line: lines[k].n,
            quote: s,
            stated_by: lines[k].quoted_author.clone(),
            bound,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::mail::unquote;

    fn lines(s: &str) -> Vec<PostLine> {
        unquote(
            &s.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn comparisons_become_claims_with_quote_and_line() {
        let l = lines("Hi,\n\nAs you can see, there's a noticeable increase in the runtime of the\nfirst fsstress invocation, but for the subsequent runs there's not much\nof a difference.  I think the log items are omitted.\n\n> With the patch it is 14% faster than before.\nThe numbers are the same or down across the board, no obvious downgrade.\nWhat is the threshold?\n");
        let c = find(&l, &vec![false; l.len()]);
        let quotes: Vec<(usize, &str)> = c.iter().map(|c| (c.line, c.quote.as_str())).collect();
        assert_eq!(quotes.len(), 3, "{quotes:?}");
        assert_eq!(quotes[0].0, 3);
        assert!(quotes[0].1.ends_with("not much of a difference."));
        assert_eq!(c[1].bound, Some((14.0, "%".into())));
        assert_eq!(c[1].line, 7);
        assert!(quotes[2].1.contains("across the board"));
    }

    #[test]
    fn plain_sentences_are_not_claims() {
        assert!(!is_comparison(
            "I created a really stupid benchmarking script that does:"
        ));
        assert!(is_comparison(
            "the fsck is finished in 5 minutes - more than 10x faster"
        ));
        assert!(is_comparison(
            "it went from 924 transactions/sec to 322, a 65% drop over the old code"
        ));
    }
}
