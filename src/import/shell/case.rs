//! `case WORD in PAT) …;; esac`: the branch a command is in, and which values of the word
//! select it (shell glob patterns: `*`, `?`, `[…]`, `a|b`).

/// The `case` branch a command is in: it runs only where the case's word matches one of
/// `patterns` and none of the branches before it (`earlier`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseArm {
    /// The `case` line.
    pub line: usize,
    /// The branch's line.
    pub arm_line: usize,
    /// The word the case tests (`$fs`), substituted like a command's words.
    pub word: String,
    /// This branch's patterns, quotes removed (`xfs`, `ext*`, `*`).
    pub patterns: Vec<String>,
    /// The patterns of the branches before it.
    pub earlier: Vec<String>,
    /// Branches it excludes as well: a command after the `case` that uses a variable some
    /// branches set runs once per such branch, and once, with the value from before the
    /// `case`, where none of them runs (`patterns` `*`, `unless` those branches).
    pub unless: Vec<CaseArm>,
}

impl CaseArm {
    /// Whether the branch runs when the word is `value`.
    pub fn selects(&self, value: &str) -> bool {
        self.patterns.iter().any(|p| glob_matches(p, value))
            && !self.earlier.iter().any(|p| glob_matches(p, value))
            && !self.unless.iter().any(|a| a.selects(value))
    }

    /// The branch's head as written, for messages: `xfs|ext4)`; `none of ext3) ext4)` for
    /// where none of the `unless` branches runs.
    pub fn head(&self) -> String {
        if self.unless.is_empty() {
            format!("{})", self.patterns.join("|"))
        } else {
            let heads: Vec<String> = self.unless.iter().map(CaseArm::head).collect();
            format!("none of {}", heads.join(" "))
        }
    }
}

/// Whether a shell glob pattern matches the whole of `s`.
pub fn glob_matches(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = s.chars().collect();
    glob(&p, &s)
}

fn glob(p: &[char], s: &[char]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some('*') => (0..=s.len()).any(|k| glob(&p[1..], &s[k..])),
        Some('?') => !s.is_empty() && glob(&p[1..], &s[1..]),
        Some('[') => match p.iter().position(|c| *c == ']').filter(|e| *e > 1) {
            Some(end) => {
                let Some(c) = s.first() else { return false };
                let (neg, set) = match p[1] {
                    '!' | '^' => (true, &p[2..end]),
                    _ => (false, &p[1..end]),
                };
                let mut hit = false;
                let mut k = 0;
                while k < set.len() {
                    if k + 2 < set.len() && set[k + 1] == '-' {
                        hit |= set[k] <= *c && *c <= set[k + 2];
                        k += 3;
                    } else {
                        hit |= set[k] == *c;
                        k += 1;
                    }
                }
                hit != neg && glob(&p[end + 1..], &s[1..])
            }
            None => s.first() == Some(&'[') && glob(&p[1..], &s[1..]),
        },
        Some('\\') if p.len() > 1 => s.first() == Some(&p[1]) && glob(&p[2..], &s[1..]),
        Some(c) => s.first() == Some(c) && glob(&p[1..], &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::{glob_matches, CaseArm};

    #[test]
    fn globs_and_earlier_branches() {
        assert!(glob_matches("ext*", "ext4"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("ext[34]", "ext3"));
        assert!(!glob_matches("ext[34]", "ext2"));
        assert!(glob_matches("x?s", "xfs"));
        assert!(!glob_matches("xfs", "xfs2"));
        let arm = CaseArm {
            line: 1,
            arm_line: 3,
            word: "$fs".into(),
            patterns: vec!["*".into()],
            earlier: vec!["xfs".into(), "ext[34]".into()],
            unless: Vec::new(),
        };
        assert!(arm.selects("btrfs"));
        assert!(!arm.selects("ext4"));
        // where none of the branches `xfs)` and `*)` (after `ext[34])`) runs: ext3 and ext4
        let xfs = CaseArm {
            patterns: vec!["xfs".into()],
            earlier: Vec::new(),
            ..arm.clone()
        };
        let rest = CaseArm {
            patterns: vec!["*".into()],
            earlier: Vec::new(),
            unless: vec![xfs, arm],
            ..CaseArm::default()
        };
        assert!(rest.selects("ext3") && rest.selects("ext4"));
        assert!(!rest.selects("xfs") && !rest.selects("btrfs"));
        assert_eq!(rest.head(), "none of xfs) *)");
    }
}
