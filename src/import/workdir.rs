//! Where a step runs: the post's `cd DIR` before a command (`shell::cwd`). A directory
//! at or under the mount point runs the step there: the format runs commands in
//! `{{work}}` and has no working directory per step, so the step becomes `sh -c 'cd "$1" &&
//! shift && exec "$@"' sh {{mnt}}/sub CMD…` (each word of the command stays a word, a
//! `{{tool}}` given as a list too), and `mkdir foo` the built-in `mkdir: "{{mnt}}/foo"`.
//! Any other directory (`cd ~/src`, a path the post never mounts) is a `# guess:`: the
//! draft runs the step in `{{work}}` and says where the post ran it.

use super::block::Block;
use super::host_paths::is_system_dir;
use super::programs::Program;
use super::shell::cwd::Cwd;
use super::shell::{walk, Cmd};
use super::step::Action;
use super::{Note, NoteKind};

/// The script that runs a command in the directory of its first argument.
pub const IN_DIR: &str = "cd \"$1\" && shift && exec \"$@\"";

/// `{{mnt}}` or `{{mnt}}/sub` when `dir` is the mount point or under it.
pub fn under_mount(dir: &str, mount_point: Option<&str>) -> Option<String> {
    let mp = mount_point?.trim_end_matches('/');
    if !mp.is_empty() && dir.trim_end_matches('/') == mp {
        // the directory the post measured in, however it names it (`~`, a prompt's `mnt`)
        return Some("{{mnt}}".into());
    }
    if mp.is_empty() || !mp.starts_with('/') {
        return None;
    }
    let rest = dir.strip_prefix(mp)?;
    (rest.is_empty() || rest.starts_with('/')).then(|| format!("{{{{mnt}}}}{rest}"))
}

/// The host directory a workload ran in, when the post mounts nothing there: the
/// filesystem it measured (for a benchmark, dd or xfs_io). A `cd` or prompt to a directory of the host's (`/`, `/usr`,
/// `/etc`) or to one the post never anchors (`cd build`) names none; the home directory
/// (`~`, `cd`) and the last name a prompt shows (`[root@host mnt]# `) do.
pub fn measured<'a>(workload: &'a Cmd, blocks: &'a [Block]) -> Option<&'a Cwd> {
    // only a program that does file I/O measures the filesystem it runs on (`make` in a
    // source tree measures the build)
    let p = workload.program();
    if !(p.is_benchmark() || matches!(p, Program::Dd | Program::XfsIo)) {
        return None;
    }
    // the same command run again at a prompt that shows where (`:~$ fio …` under it)
    let mut again = None;
    for b in blocks {
        walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
            if again.is_none() && c.cwd.is_some() && c.words == workload.words {
                again = c.cwd.as_ref();
            }
        });
    }
    let cwd = workload.cwd.as_ref().or(again)?;
    let d = cwd.dir.as_str();
    let ok = if d.starts_with('/') {
        d.len() > 1 && !is_system_dir(d)
    } else {
        d == "~" || d.starts_with("~/") || (cwd.prompt && !d.contains(['/', '$', '(']))
    };
    ok.then_some(cwd)
}

/// Run `action` where the post ran it (`cwd`), saying so in `comment` and, once per `cd`,
/// in a note.
pub fn place(
    cwd: Option<&Cwd>,
    mount_point: Option<&str>,
    action: &mut Action,
    comment: &mut String,
    notes: &mut Vec<Note>,
) {
    let Some(cwd) = cwd else { return };
    let said = |notes: &[Note]| {
        notes
            .iter()
            .any(|n| n.line == cwd.line && n.what.contains("`cd"))
    };
    // a prompt shows bash's last name of the directory (`[root@ws mnt]# `): the mount
    // point when it ends so
    let last_name = || {
        let mp = mount_point?.trim_end_matches('/');
        (cwd.prompt && !cwd.dir.contains('/') && mp.rsplit('/').next() == Some(cwd.dir.as_str()))
            .then(|| "{{mnt}}".to_string())
    };
    let Some(dir) = under_mount(&cwd.dir, mount_point).or_else(last_name) else {
        if cwd.prompt {
            // the shell was there (its prompt says), not sent there by the post
            return;
        }
        let why = format!(
            "guess: the post ran it in `{}` (line {}), not under the mount point; the draft runs it in {{{{work}}}}",
            cwd.dir, cwd.line
        );
        comment.push_str(&format!("; {why}"));
        if !said(notes) {
            notes.push(Note::new(
                cwd.line,
                NoteKind::Guess,
                &format!("`{}`: {}", cwd.text, &why[7..]),
            ));
        }
        return;
    };
    if run_in(&dir, action) {
        said_in(cwd, &dir, comment, notes);
    }
}

/// Make `action` run in `dir` (`{{mnt}}`, `{{mnt}}/sub`): a command becomes `sh -c 'cd
/// "$1" && shift && exec "$@"' sh DIR CMD…` (a relative `mkdir` the built-in `mkdir:`), a
/// `sh -c` script starts with its `cd`. Whether it was moved.
pub fn run_in(dir: &str, action: &mut Action) -> bool {
    let moved = match action {
        Action::Run {
            name,
            command,
            parse,
        } => {
            let words = shell_words::split(command)
                .unwrap_or_else(|_| command.split_whitespace().map(str::to_string).collect());
            match relative_mkdir(&words) {
                Some(p) => Action::Mkdir(format!("{dir}/{p}")),
                None => {
                    let mut argv: Vec<String> =
                        ["sh", "-c", IN_DIR, "sh", dir].map(String::from).to_vec();
                    // a job file the draft wrote in `{{work}}` (`fio - <<EOF`)
                    argv.extend(words.into_iter().map(|w| {
                        if w.starts_with("heredoc-") && w.ends_with(".fio") {
                            format!("{{{{work}}}}/{w}")
                        } else {
                            w
                        }
                    }));
                    Action::Words {
                        name: name.clone(),
                        argv,
                        parse: *parse,
                    }
                }
            }
        }
        Action::Words { argv, .. } if argv.len() >= 3 && argv[0] == "sh" && argv[1] == "-c" => {
            argv[2] = format!("cd \"{dir}\" && {}", argv[2]);
            return true;
        }
        _ => return false,
    };
    *action = moved;
    true
}

fn said_in(cwd: &Cwd, dir: &str, comment: &mut String, notes: &mut Vec<Note>) {
    comment.push_str(&format!(
        "; runs in {dir} (line {}: `{}`)",
        cwd.line, cwd.text
    ));
    if !notes
        .iter()
        .any(|n| n.line == cwd.line && n.what.contains("`cd"))
    {
        notes.push(Note::new(
            cwd.line,
            NoteKind::Recognised,
            &format!("`{}`: the commands after it run in {dir}", cwd.text),
        ));
    }
}

/// `mkdir [-p] DIR` with one relative directory: the directory.
fn relative_mkdir(words: &[String]) -> Option<&str> {
    let (prog, args) = words.split_first()?;
    let dirs: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    match dirs.as_slice() {
        [d] if prog == "mkdir" && !d.starts_with('/') && !d.contains("{{") => {
            Some(d.trim_start_matches("./"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::under_mount;

    #[test]
    fn the_mount_point_and_below() {
        let mp = Some("/mnt/scratch/");
        assert_eq!(under_mount("/mnt/scratch", mp).as_deref(), Some("{{mnt}}"));
        assert_eq!(
            under_mount("/mnt/scratch/d/e", mp).as_deref(),
            Some("{{mnt}}/d/e")
        );
        assert_eq!(under_mount("/mnt/scratch2", mp), None);
        assert_eq!(under_mount("/root", mp), None);
        assert_eq!(under_mount("/mnt", None), None);
    }
}
