//! The shell around a command that its words are not: redirections ([`Redir`]) and the
//! rest of its pipeline ([`Piped`]), kept beside the words by the grammar (`parse`) so
//! that `> out.log`, `2>&1` or `| tee LOG` never become the program's arguments; what a
//! step cannot carry of them (the format runs no shell) is said for a `# guess:`.

use super::Cmd;

/// A redirection of a command, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Redir {
    /// As the post wrote it: `2>&1`, `> out.log`.
    pub text: String,
    /// The file standard output goes to (`> f`, `>> f`, `&> f`).
    pub stdout: Option<String>,
    pub append: bool,
}

/// Another command of a command's pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Piped {
    /// As written: `tee LOG`.
    pub text: String,
    /// It feeds the command (`yes | mkfs …`) rather than reads its output.
    pub before: bool,
}

impl Piped {
    /// `| tee LOG`, `yes |`, quoted for a message.
    pub fn written(&self) -> String {
        if self.before {
            format!("`{} |`", self.text)
        } else {
            format!("`| {}`", self.text)
        }
    }
}

impl Cmd {
    /// The shell around the command that a step cannot carry (the format runs no shell):
    /// its redirections and the rest of its pipeline, said as a `guess:` (the step's
    /// comment also holds the post's line as written). None when there is none.
    pub fn not_carried(&self) -> Option<String> {
        let mut parts: Vec<String> = self
            .redirs
            .iter()
            .map(|r| format!("`{}`", r.text))
            .collect();
        parts.extend(self.piped.iter().map(Piped::written));
        if parts.is_empty() {
            return None;
        }
        let tee = self
            .piped
            .iter()
            .filter(|p| !p.before && p.text.split_whitespace().next() == Some("tee"))
            .filter_map(|p| {
                p.text
                    .split_whitespace()
                    .filter(|w| !w.starts_with('-'))
                    .nth(1)
            });
        let (host, files): (Vec<&str>, Vec<&str>) = (self.redirs.iter())
            .filter_map(|r| r.stdout.as_deref())
            .chain(tee)
            .filter(|f| *f != "/dev/null")
            .partition(|f| f.starts_with("/proc/") || f.starts_with("/sys/"));
        let quoted = |fs: &[&str]| {
            let q: Vec<String> = fs.iter().map(|f| format!("`{f}`")).collect();
            q.join(", ")
        };
        let mut kept = String::new();
        if !files.is_empty() {
            kept.push_str(&format!(
                "; its output is kept in the bundle instead of {}",
                quoted(&files)
            ));
        }
        if !host.is_empty() {
            kept.push_str(&format!(
                "; the draft does not write the host's {}",
                quoted(&host)
            ));
        }
        Some(format!(
            "guess: the shell's {} {} not carried (a step runs no shell){kept}",
            parts.join(", "),
            if parts.len() == 1 { "is" } else { "are" }
        ))
    }

    /// `echo 3 > /proc/sys/vm/drop_caches` (or `| tee /proc/sys/vm/drop_caches`): the
    /// draft's `drop_caches:` step.
    pub fn drops_caches(&self) -> bool {
        let argv = self.argv();
        matches!(argv.first().map(String::as_str), Some("echo" | "printf"))
            && (self.words.iter())
                .chain(self.redirs.iter().map(|r| &r.text))
                .chain(self.piped.iter().filter(|p| !p.before).map(|p| &p.text))
                .any(|w| w.contains("drop_caches"))
    }
}
