//! Dotted version numbers as tools report them.

use serde::Serialize;
use std::fmt;

/// A dotted version number, compared numerically (`6.10` > `6.9`, `6.1` == `6.1.0`).
#[derive(Debug, Clone, Eq, Serialize)]
pub struct Version(pub Vec<u64>);

impl Version {
    /// Parse `6.10`, `6.1.0`, `1.47`; None for anything else.
    pub fn parse(s: &str) -> Option<Version> {
        let parts: Option<Vec<u64>> = s.trim().split('.').map(|p| p.parse().ok()).collect();
        parts.filter(|p| !p.is_empty()).map(Version)
    }

    /// The first `N.N[.N…]` in a tool's version output (`mkfs.xfs version 6.1.0` → 6.1.0,
    /// `mke2fs 1.47.0 (5-Feb-2023)` → 1.47.0).
    pub fn find_in(text: &str) -> Option<Version> {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let starts_word = |k: usize| k == 0 || !b[k - 1].is_ascii_alphanumeric();
            // `6.2` or `v6.2` at the start of a word.
            let boundary =
                starts_word(i) || (matches!(b[i - 1], b'v' | b'V') && starts_word(i - 1));
            if b[i].is_ascii_digit() && boundary {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                    j += 1;
                }
                let cand = text[i..j].trim_end_matches('.');
                if cand.contains('.') {
                    if let Some(v) = Version::parse(cand) {
                        return Some(v);
                    }
                }
                i = j.max(i + 1);
            } else {
                i += 1;
            }
        }
        None
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let n = self.0.len().max(other.0.len());
        for k in 0..n {
            let a = self.0.get(k).copied().unwrap_or(0);
            let b = other.0.get(k).copied().unwrap_or(0);
            match a.cmp(&b) {
                std::cmp::Ordering::Equal => continue,
                o => return o,
            }
        }
        std::cmp::Ordering::Equal
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&s.join("."))
    }
}
