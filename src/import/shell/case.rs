//! `case WORD in PAT) …;; esac`: the branch a command is in, and which values of the word
//! select it (shell glob patterns: `*`, `?`, `[…]`, `a|b`).

/// The `case` branch a command is in: it runs only where the case's word matches one of
/// `patterns` and none of the branches before it (`earlier`).
#[derive(Debug, Clone, PartialEq)]
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
}

impl CaseArm {
    /// Whether the branch runs when the word is `value`.
    pub fn selects(&self, value: &str) -> bool {
        self.patterns.iter().any(|p| glob_matches(p, value))
            && !self.earlier.iter().any(|p| glob_matches(p, value))
    }

    /// The branch's head as written, for messages: `xfs|ext4)`.
    pub fn head(&self) -> String {
        format!("{})", self.patterns.join("|"))
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
        };
        assert!(arm.selects("btrfs"));
        assert!(!arm.selects("ext4"));
    }
}
