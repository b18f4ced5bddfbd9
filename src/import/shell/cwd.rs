//! `cd DIR`: the directory the commands after it run in (`cd /mnt/test && fs_mark -d foo`,
//! `cd /mnt; dd of=file`, a `cd /mnt` line or prompt before the commands). The `cd` is no
//! step; each later command carries the directory ([`Cwd`]) until the next `cd`, as in the
//! shell: a `cd` inside a loop body holds after the loop too. `pushd DIR` goes there as
//! `cd` does and remembers where it was; `popd` goes back ([`Dirs`], bash's stack). A
//! `(cd DIR && CMD)` subshell is read the same way: its `cd` holds up to its `)`.

use super::{unquote, Cmd, Node};

/// The directory a command runs in, from the `cd` that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cwd {
    /// The directory: absolute when the post's `cd` (or the `cd`s before it) give it so,
    /// else as written (`~`, `-`, a relative path the post never anchors).
    pub dir: String,
    /// The line of the `cd`.
    pub line: usize,
    /// The `cd` as written.
    pub text: String,
    /// Shown by the prompt (`root@host:/data# `, `[root@host mnt]# `), not set by a `cd`:
    /// the shell was there already, so a step elsewhere needs no word about it.
    pub prompt: bool,
}

impl Cwd {
    /// Whether the post names the directory from `/`.
    pub fn absolute(&self) -> bool {
        self.dir.starts_with('/')
    }
}

/// The directory of the commands so far, and the `pushd` stack under it.
#[derive(Debug, Clone, Default)]
pub struct Dirs {
    /// Where the next command runs (None: where the post's shell started).
    pub cur: Option<Cwd>,
    /// The directories `pushd` left, the last pushed last.
    stack: Vec<Option<Cwd>>,
}

/// Is this command one that changes the directory (`cd`, `pushd`, `popd`)?
fn changes_dir(c: &Cmd) -> bool {
    c.words
        .first()
        .is_some_and(|w| matches!(w.as_str(), "cd" | "pushd" | "popd" | "(" | ")"))
}

impl Dirs {
    /// Follow one `cd`, `pushd` or `popd`. `pushd` with no directory or a `+N`/`-N`
    /// rotation, and `popd` on an empty stack, leave the directory unknown from here on
    /// (as written, so that a step placed by it says so) rather than guessed.
    fn follow(&mut self, c: &Cmd) {
        let verb = c.words[0].as_str();
        let args: Vec<String> = c.words[1..]
            .iter()
            .map(|w| unquote(w))
            .filter(|w| w != "-n")
            .collect();
        match verb {
            // a subshell with a `cd` in it (`parse`): its `)` comes back as `popd` does
            "(" => self.stack.push(self.cur.clone()),
            ")" => match self.stack.pop() {
                Some(prev) => self.cur = prev,
                None => self.unknown(c),
            },
            "pushd" => match args.first().map(String::as_str) {
                Some(d) if !(d.starts_with('+') || d.starts_with('-')) => {
                    let next = target(c, self.cur.as_ref());
                    self.stack.push(self.cur.replace(next));
                }
                _ => self.unknown(c),
            },
            "popd" => match self.stack.pop() {
                Some(prev) if args.is_empty() => self.cur = prev,
                _ => self.unknown(c),
            },
            _ => self.cur = Some(target(c, self.cur.as_ref())),
        }
    }

    /// The directory after a `pushd`/`popd` fslab cannot follow: the command as written.
    fn unknown(&mut self, c: &Cmd) {
        let text = c.words.join(" ");
        self.cur = Some(Cwd {
            dir: format!("(after `{text}`)"),
            line: c.line,
            text,
            prompt: false,
        });
    }
}

/// `path` resolved against `base` (`..` and `.` taken out); a relative path with no
/// absolute base stays as written.
pub fn join(base: Option<&str>, path: &str) -> String {
    let start = match base {
        _ if path.starts_with('/') => "/",
        Some(b) if b.starts_with('/') => b,
        Some(b) => return format!("{}/{path}", b.trim_end_matches('/')),
        None => return path.trim_end_matches('/').to_string(),
    };
    let mut parts: Vec<&str> = start.split('/').filter(|p| !p.is_empty()).collect();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The directory a `cd` goes to from `cur`.
fn target(c: &Cmd, cur: Option<&Cwd>) -> Cwd {
    let args: Vec<String> = c.words[1..]
        .iter()
        .map(|w| unquote(w))
        .filter(|w| !matches!(w.as_str(), "-P" | "-L" | "-e" | "-@" | "--"))
        .collect();
    let dir = match args.first().map(String::as_str) {
        None | Some("~") => "~".to_string(),
        Some("-") => "-".to_string(),
        Some(d) if d.contains('$') || d.starts_with('~') => d.to_string(),
        Some(d) => join(cur.map(|c| c.dir.as_str()), d),
    };
    Cwd {
        dir,
        line: c.line,
        text: c.words.join(" "),
        prompt: false,
    }
}

/// Take the `cd`, `pushd` and `popd` commands out of nodes and give each later command
/// the directory they leave (`dirs`, which goes on into the next block).
pub fn apply(nodes: &mut Vec<Node>, dirs: &mut Dirs) {
    for mut n in std::mem::take(nodes) {
        match &mut n {
            Node::Cmd(c) if changes_dir(c) => {
                dirs.follow(c);
                continue;
            }
            Node::Cmd(c) => {
                if c.cwd.is_none() {
                    c.cwd.clone_from(&dirs.cur);
                }
            }
            Node::Loop(l) => apply(&mut l.body, dirs),
            Node::Else { body, .. } | Node::Unread { body, .. } => {
                // a branch the draft does not run: its `cd` holds inside it only
                apply(body, &mut dirs.clone());
            }
            Node::Func { .. } | Node::Assign { .. } => {}
        }
        nodes.push(n);
    }
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn paths_are_joined_as_the_shell_does() {
        assert_eq!(join(None, "/mnt/test/"), "/mnt/test");
        assert_eq!(join(Some("/mnt"), "sub/../d"), "/mnt/d");
        assert_eq!(join(Some("/mnt/x"), "/opt"), "/opt");
        assert_eq!(join(None, "build"), "build");
        assert_eq!(join(Some("~"), "src"), "~/src");
        assert_eq!(join(Some("/"), ".."), "/");
    }
}
