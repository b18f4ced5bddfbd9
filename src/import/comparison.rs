//! The words of a comparison (`faster`, `10x`, `14% … than`, `not much of a difference`):
//! what makes a sentence a claim, for the claim drafts and for the prose numbers that
//! keep their context. A leaf of the importer: it uses nothing else of it.

const PHRASES: &[&str] = &[
    "faster",
    "slower",
    "speedup",
    "speed-up",
    "slowdown",
    "improvement",
    "improves",
    "improved",
    "regression",
    "regresses",
    "downgrade",
    "overhead",
    "better",
    "worse",
    "across the board",
    "not much of a difference",
    "no much difference",
    "not much difference",
    "no difference",
    "no obvious",
    "no noticeable",
    "no measurable",
    "noticeable",
    "significant",
    "negligible",
    "the same",
    "more or less the same",
    "about the same",
    "roughly the same",
    "a wash",
    "reduction",
    "increase",
    "decrease",
    "drops",
    "doubles",
    "halves",
    "cut down",
    "times as",
    // no change worth the name, said of performance
    "unharmed",
    "unaffected",
    "unaltered",
    "boost",
];

/// Whether a sentence compares two things.
pub fn is_comparison(sentence: &str) -> bool {
    let s = sentence.to_ascii_lowercase();
    if PHRASES.iter().any(|p| contains_word(&s, p)) {
        return true;
    }
    // `10x`, `14%` with a verb of change
    s.split_whitespace().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '%');
        (w.ends_with('x') && w[..w.len() - 1].parse::<f64>().is_ok())
            || (w.ends_with('%')
                && w[..w.len() - 1].parse::<f64>().is_ok()
                && (s.contains(" than") || s.contains(" from ") || s.contains("over")))
    })
}

fn contains_word(s: &str, p: &str) -> bool {
    let mut from = 0;
    while let Some(i) = s[from..].find(p) {
        let at = from + i;
        let before = s[..at].chars().last();
        let after = s[at + p.len()..].chars().next();
        if before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
        {
            return true;
        }
        from = at + p.len();
    }
    false
}
