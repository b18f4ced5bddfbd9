//! Applying a build's patches to an unpacked kernel tree, in order.
//!
//! - An **mbox** (a file that begins with a `From ` line: `git format-patch`, `b4 am`, a
//!   list archive's download) is applied as `git am` applies it, without a repository:
//!   `git mailsplit` splits it into messages, `git mailinfo` takes each message's patch
//!   (decoding the mail as `git am` does), and `git apply -p1` applies it, all or nothing,
//!   without fuzz. A message with no patch (a cover letter) is skipped.
//! - Anything else is a **diff**, applied with `patch -p1 --forward --fuzz=0`: without
//!   fuzz, as `git am`, so that a hunk whose context differs fails instead of landing
//!   somewhere near.
//!
//! A patch that does not apply is an error naming the file (and the message of an
//! mbox) and the hunks that failed.

use std::path::Path;

/// How a patch file is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchFormat {
    Mbox,
    Diff,
}

impl PatchFormat {
    /// From the file's first bytes: an mbox begins with a `From ` line.
    pub fn of(text: &[u8]) -> PatchFormat {
        if text.starts_with(b"From ") {
            PatchFormat::Mbox
        } else {
            PatchFormat::Diff
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PatchFormat::Mbox => "mbox",
            PatchFormat::Diff => "diff",
        }
    }
}

/// What applying one patch file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub format: PatchFormat,
    /// The subjects of the mbox's messages that were applied.
    pub subjects: Vec<String>,
    /// The subjects of messages without a patch (skipped).
    pub skipped: Vec<String>,
}

/// Why a patch file did not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFailure {
    /// For an mbox: which message (1-based), of how many, and its subject.
    pub message: Option<(usize, usize, String)>,
    /// The failed hunks and files, or the tool's last words.
    pub detail: String,
}

/// The failures GNU `patch` reports: `FILE: hunk #2 FAILED at 2375`, `no file to patch:
/// FILE`, `FILE: reversed (or already applied)`.
pub fn diff_failures(output: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut file = String::new();
    let mut missing = false;
    for line in output.lines() {
        if let Some(f) = line.strip_prefix("patching file ") {
            file = f.trim().trim_matches('\'').to_string();
        } else if line.starts_with("can't find file to patch") {
            missing = true;
        } else if missing && line.starts_with("|+++ ") {
            let f = line[5..].split('\t').next().unwrap_or("").trim();
            let f = f.split_once('/').map_or(f, |(_, rest)| rest);
            out.push(format!("no file to patch: {f}"));
            missing = false;
        } else if let Some(rest) = line.strip_prefix("Hunk #") {
            if let Some((n, at)) = rest.split_once(" FAILED at ") {
                out.push(format!(
                    "{file}: hunk #{n} FAILED at line {}",
                    at.trim_end_matches('.')
                ));
            }
        } else if line.starts_with("Reversed (or previously applied) patch detected") {
            out.push(format!("{file}: reversed (or already applied)"));
        }
    }
    out
}

/// The failures `git apply` reports (its `error:` lines): `patch failed:
/// fs/xfs/xfs_super.c:2375`, `fs/xfs/xfs_super.c: patch does not apply`.
pub fn git_apply_failures(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("error: "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The `Subject:` `git mailinfo` printed.
pub fn mailinfo_subject(info: &str) -> String {
    info.lines()
        .find_map(|l| l.strip_prefix("Subject: "))
        .unwrap_or("(no subject)")
        .trim()
        .to_string()
}

/// The last `n` non-empty lines of `text`, joined with ` | `.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// `program args` in `dir` (stdin from `stdin` if given): whether it succeeded, and its
/// stdout and stderr together.
fn output(
    dir: &Path,
    program: &str,
    args: &[String],
    stdin: Option<&Path>,
    tree: &Path,
) -> (bool, String, String) {
    // Never let git find a repository above the tree (fslab's cache may be inside one).
    let ceiling = tree.parent().unwrap_or(tree).display().to_string();
    let mut cmd = duct::cmd(program, args)
        .dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .env("LC_ALL", "C")
        .stdout_capture()
        .stderr_capture()
        .unchecked();
    cmd = match stdin {
        Some(p) => cmd.stdin_path(p),
        None => cmd.stdin_null(),
    };
    match cmd.run() {
        Ok(o) => (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        ),
        Err(e) => (
            false,
            String::new(),
            format!("cannot start `{program}`: {e}"),
        ),
    }
}

fn failure(detail: String) -> PatchFailure {
    PatchFailure {
        message: None,
        detail,
    }
}

/// Apply `file` to the kernel tree `tree`; `scratch` is an empty directory for the
/// split messages. `progress` is told each message of an mbox.
pub fn apply(
    tree: &Path,
    file: &Path,
    scratch: &Path,
    progress: &dyn Fn(&str),
) -> Result<Applied, PatchFailure> {
    let head =
        std::fs::read(file).map_err(|e| failure(format!("cannot read {}: {e}", file.display())))?;
    match PatchFormat::of(&head) {
        PatchFormat::Diff => apply_diff(tree, file).map(|()| Applied {
            format: PatchFormat::Diff,
            subjects: Vec::new(),
            skipped: Vec::new(),
        }),
        PatchFormat::Mbox => apply_mbox(tree, file, scratch, progress),
    }
}

fn apply_diff(tree: &Path, file: &Path) -> Result<(), PatchFailure> {
    let args: Vec<String> = [
        "-p1",
        "--batch",
        "--forward",
        "--fuzz=0",
        "--no-backup-if-mismatch",
        "--reject-file=-",
        "-i",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([file.display().to_string()])
    .collect();
    let (ok, _, text) = output(tree, "patch", &args, None, tree);
    if ok {
        return Ok(());
    }
    let failed = diff_failures(&text);
    Err(failure(if failed.is_empty() {
        format!("patch -p1: {}", last_lines(&text, 3))
    } else {
        format!("patch -p1: {}", failed.join("; "))
    }))
}

fn apply_mbox(
    tree: &Path,
    file: &Path,
    scratch: &Path,
    progress: &dyn Fn(&str),
) -> Result<Applied, PatchFailure> {
    let mail = scratch.join("mail");
    std::fs::create_dir_all(&mail)
        .map_err(|e| failure(format!("cannot create {}: {e}", mail.display())))?;
    let (ok, _, text) = output(
        scratch,
        "git",
        &[
            "mailsplit".into(),
            format!("-o{}", mail.display()),
            file.display().to_string(),
        ],
        None,
        tree,
    );
    if !ok {
        return Err(failure(format!("git mailsplit: {}", last_lines(&text, 3))));
    }
    let mut messages: Vec<std::path::PathBuf> = std::fs::read_dir(&mail)
        .map_err(|e| failure(format!("cannot read {}: {e}", mail.display())))?
        .flatten()
        .map(|e| e.path())
        .collect();
    messages.sort();
    let total = messages.len();
    let mut applied = Applied {
        format: PatchFormat::Mbox,
        subjects: Vec::new(),
        skipped: Vec::new(),
    };
    for (i, m) in messages.iter().enumerate() {
        let msg = scratch.join("msg");
        let patch = scratch.join("patch");
        let (ok, info, text) = output(
            scratch,
            "git",
            &[
                "mailinfo".into(),
                msg.display().to_string(),
                patch.display().to_string(),
            ],
            Some(m),
            tree,
        );
        let subject = mailinfo_subject(&info);
        let at = |detail: String| PatchFailure {
            message: Some((i + 1, total, subject.clone())),
            detail,
        };
        if !ok {
            return Err(at(format!("git mailinfo: {}", last_lines(&text, 3))));
        }
        if std::fs::metadata(&patch).map_or(0, |m| m.len()) == 0 {
            progress(&format!(
                "  message {}/{total} \"{subject}\" has no patch: skipped",
                i + 1
            ));
            applied.skipped.push(subject);
            continue;
        }
        progress(&format!("  message {}/{total}: {subject}", i + 1));
        let (ok, _, text) = output(
            tree,
            "git",
            &[
                "apply".into(),
                "-p1".into(),
                "--whitespace=nowarn".into(),
                patch.display().to_string(),
            ],
            None,
            tree,
        );
        if !ok {
            let failed = git_apply_failures(&text);
            return Err(at(if failed.is_empty() {
                format!("git apply: {}", last_lines(&text, 3))
            } else {
                format!("git apply: {}", failed.join("; "))
            }));
        }
        applied.subjects.push(subject);
    }
    if applied.subjects.is_empty() {
        return Err(failure(format!(
            "no message of the mbox has a patch ({total} message(s))"
        )));
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::{diff_failures, git_apply_failures, mailinfo_subject, PatchFormat};

    #[test]
    fn gnu_patch_failures_name_file_and_hunk() {
        let out = "patching file fs/xfs/xfs_super.c\nHunk #1 succeeded at 10.\n\
                   Hunk #2 FAILED at 2375.\n1 out of 2 hunks FAILED\n";
        assert_eq!(
            diff_failures(out),
            ["fs/xfs/xfs_super.c: hunk #2 FAILED at line 2375"]
        );
        let out = "can't find file to patch at input line 5\nPerhaps you used the wrong -p\n\
                   --------------------------\n|diff --git a/fs/x.c b/fs/x.c\n|--- a/fs/x.c\n\
                   |+++ b/fs/x.c\n--------------------------\nNo file to patch.  Skipping patch.\n";
        assert_eq!(diff_failures(out), ["no file to patch: fs/x.c"]);
        let out = "patching file Makefile\nReversed (or previously applied) patch detected!  Skipping patch.\n";
        assert_eq!(
            diff_failures(out),
            ["Makefile: reversed (or already applied)"]
        );
    }

    #[test]
    fn git_apply_errors_and_subjects_are_read() {
        let out = "error: patch failed: Makefile:5\nerror: Makefile: patch does not apply\n";
        assert_eq!(
            git_apply_failures(out),
            ["patch failed: Makefile:5", "Makefile: patch does not apply"]
        );
        assert_eq!(
            mailinfo_subject("Author: A\nEmail: a@b\nSubject: xfs: fix it\nDate: x\n"),
            "xfs: fix it"
        );
        assert_eq!(PatchFormat::of(b"From 123 Mon Sep"), PatchFormat::Mbox);
        assert_eq!(PatchFormat::of(b"diff --git a/x b/x"), PatchFormat::Diff);
    }
}
