//! Host paths a post benchmarks on (`--directory=/data`, `of=/mnt/xxx`, `-d /mnt/fsync/`)
//! become `{{mnt}}` of a device the draft declares, so that no draft runs outside its
//! point. When the post shows no mount, the draft makes and mounts its own device, with
//! the filesystem the post names (else a stated guess), and says so in a note.

use super::draft::{Device, Experiment, DEFAULT_SIZE};
use super::filesystems::{is_filesystem, mkfs_command, FILESYSTEMS};
use super::mail::PostLine;
use super::naming::replace_path;
use super::step::{Action, Step};
use super::{Note, NoteKind};
use crate::spec::devpath::{absolute_paths, in_host_data_dir};

/// The filesystem the post is about: its subject's subsystem (`btrfs: …`, `[PATCH] jbd:`),
/// else the one its text names most often.
fn post_filesystem(subject: Option<&str>, lines: &[PostLine]) -> Option<String> {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    };
    let named = |w: &str| match w {
        "jbd" => Some("ext3"),
        "jbd2" => Some("ext4"),
        w => FILESYSTEMS.iter().copied().find(|f| *f == w),
    };
    if let Some(s) = subject {
        if let Some(fs) = words(s).iter().find_map(|w| named(w)) {
            return Some(fs.to_string());
        }
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for l in lines {
        for w in words(&l.text) {
            if let Some(fs) = named(&w) {
                match counts.iter_mut().find(|(f, _)| *f == fs) {
                    Some(c) => c.1 += 1,
                    None => counts.push((fs, 1)),
                }
            }
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(f, _)| f.to_string())
}

/// The directory a host path stands for: its top data directory plus one more level
/// when the path goes deeper (`/mnt/test/d` → `/mnt/test`, `/mnt/xxx` → `/mnt`,
/// `/mnt/fsync/` → `/mnt/fsync`, `/data` → `/data`).
fn mount_point_of(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let deeper = parts.len() > 2 || (parts.len() == 2 && path.ends_with('/'));
    let keep = if deeper { 2 } else { 1 };
    format!("/{}", parts[..keep.min(parts.len())].join("/"))
}

/// Every step's command text, for reading and rewriting.
fn commands(exp: &mut Experiment) -> Vec<&mut String> {
    let mut out: Vec<&mut String> = Vec::new();
    let steps = exp
        .setup
        .iter_mut()
        .chain(exp.workload.iter_mut())
        .chain(exp.workload_variants.iter_mut())
        .chain(exp.capture.iter_mut())
        .chain(exp.teardown.iter_mut());
    for s in steps {
        match &mut s.action {
            Action::Run { command, .. } => out.push(command),
            Action::Words { argv, .. } => out.extend(argv.iter_mut()),
            Action::Mkdir(p) => out.push(p),
            _ => {}
        }
    }
    out
}

/// Flags by which benchmarks take the directory they run in (`dbench -D`, `fs_mark -d`,
/// `bonnie++ -d`, fio's `--directory=`).
const DIR_FLAGS: &[&str] = &["--dir", "--directory", "-D", "-d", "-directory"];

/// The host's own directories, never a directory a post benchmarks on.
const SYSTEM_DIRS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/proc", "/run", "/sbin", "/sys", "/usr",
];

/// Whether `path` is one of the host's own directories or under one.
pub(super) fn is_system_dir(path: &str) -> bool {
    SYSTEM_DIRS
        .iter()
        .any(|d| path == *d || path.starts_with(&format!("{d}/")))
}

/// The directory a benchmark is given by a flag (`-D /xfs`, `--directory=/ext4/t`), when it
/// is no directory of the host's system.
fn flag_dir<'a>(prev: &str, word: &'a str) -> Option<&'a str> {
    let path = match word.split_once('=') {
        Some((flag, p)) if DIR_FLAGS.contains(&flag) => p,
        _ if DIR_FLAGS.contains(&prev) => word,
        _ => return None,
    };
    (path.len() > 1 && path.starts_with('/') && !is_system_dir(path)).then_some(path)
}

/// The first host data path a command names (not its program): one under a host data
/// directory (`/mnt/x`, `/data`), or the directory a flag gives a benchmark (`-D /xfs`).
fn first_host_path(exp: &mut Experiment) -> Option<String> {
    for c in commands(exp) {
        let words: Vec<&str> = c
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
            .collect();
        for (i, word) in words.iter().enumerate().skip(1) {
            if let Some(p) = flag_dir(words[i - 1], word) {
                return Some(p.to_string());
            }
            if let Some(p) = absolute_paths(word)
                .into_iter()
                .find(|p| in_host_data_dir(p))
            {
                return Some(p.to_string());
            }
        }
    }
    None
}

/// Map every host data path of the draft's steps into `{{mnt}}`, declaring and
/// mounting a device when the post showed none.
pub(super) fn contain(
    exp: &mut Experiment,
    subject: Option<&str>,
    lines: &[PostLine],
    notes: &mut Vec<Note>,
) {
    let mut mapped: Vec<String> = Vec::new();
    while let Some(path) = first_host_path(exp) {
        let mp = mount_point_of(&path);
        if mapped.contains(&mp) {
            // replace_path could not take it (an unusual neighbour): never loop.
            break;
        }
        let line = exp.workload.as_ref().map_or(0, |w| w.line);
        for c in commands(exp) {
            *c = replace_path(c, &mp, "{{mnt}}");
        }
        // `/{{fs}}`: the post's own paths, `/xfs`, `/ext4`
        let shown = exp
            .matrix
            .iter()
            .find(|a| mp.contains(&format!("{{{{{}}}}}", a.name)))
            .map_or(format!("`{mp}`"), |a| {
                let var = format!("{{{{{}}}}}", a.name);
                a.values
                    .iter()
                    .map(|v| format!("`{}`", mp.replace(&var, v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            });
        notes.push(Note::new(
            line,
            NoteKind::Guess,
            &format!(
                "the post runs on the host path {shown}: the draft runs there on its own device's filesystem, `{{{{mnt}}}}`{}",
                if mapped.is_empty() {
                    ""
                } else {
                    " (with the other host paths: the post may have used several filesystems)"
                }
            ),
        ));
        mapped.push(mp);
    }
    if mapped.is_empty() {
        // a step runs in `{{mnt}}` (the directory the post measured in) with no mount
        if !commands(exp).iter().any(|c| c.contains("{{mnt}}")) {
            return;
        }
        mapped.push("{{mnt}}".into());
    }
    let mounts = exp
        .setup
        .iter()
        .any(|s| matches!(s.action, Action::Mount { .. }));
    if mounts {
        return;
    }
    let line = exp.workload.as_ref().map_or(0, |w| w.line);
    let is_mkfs = |s: &Step| match &s.action {
        Action::Run { name, .. } | Action::Words { name, .. } => name == "mkfs",
        _ => false,
    };
    // the host path is named after an axis of filesystems (`/{{fs}}`): each point makes
    // and mounts its filesystem on a device of its own
    let fs_axis = exp
        .matrix
        .iter()
        .find(|a| {
            mapped
                .iter()
                .any(|m| m.contains(&format!("{{{{{}}}}}", a.name)))
                && a.values.iter().all(|v| is_filesystem(v))
        })
        .map(|a| a.name.clone());
    if let Some(axis) = fs_axis {
        if !exp.setup.iter().any(is_mkfs) {
            per_filesystem(exp, &axis, line, Some(&mapped[0]), notes);
            return;
        }
    }
    if !exp.devices.iter().any(|d| d.name == "data") {
        let why = format!(
            "guess: the post does not give the size of the filesystem at `{}`; {DEFAULT_SIZE} is a default",
            mapped[0]
        );
        notes.push(Note::new(line, NoteKind::Guess, &why));
        exp.devices.insert(
            0,
            Device {
                name: "data".into(),
                path: String::new(),
                line,
                size: DEFAULT_SIZE.into(),
                size_from_post: false,
                why,
            },
        );
    }
    let has_mkfs = exp.setup.iter().any(is_mkfs);
    let mut new_steps = Vec::new();
    if !has_mkfs {
        let (fs, why) = match post_filesystem(subject, lines) {
            Some(fs) => (fs.clone(), format!("the post names {fs}")),
            None => (
                "ext4".to_string(),
                "guess: the post names no filesystem; ext4 is a default, change it".to_string(),
            ),
        };
        notes.push(Note::new(
            line,
            NoteKind::Guess,
            &format!(
                "the post does not show how `{}` was made: the draft makes {fs} on `data` ({why})",
                mapped[0]
            ),
        ));
        new_steps.push(Step {
            line,
            action: Action::Run {
                name: "mkfs".into(),
                command: mkfs_command(&fs, "{{dev.data}}"),
                parse: None,
            },
            times: None,
            repeat: None,
            when: None,
            comment: format!(
                "line {line}: guess: the post does not show the filesystem at `{}`; {why}",
                mapped[0]
            ),
        });
    }
    new_steps.push(Step {
        line,
        action: Action::Mount {
            device: "data".into(),
            options: None,
        },
        times: None,
        repeat: None,
        when: None,
        comment: format!(
            "line {line}: guess: the post does not show the mount at `{}`",
            mapped[0]
        ),
    });
    // after the post's own mkfs, if any (a filesystem is made before it is mounted)
    let at = exp.setup.iter().rposition(is_mkfs).map_or(0, |i| i + 1);
    exp.setup.splice(at..at, new_steps);
}

/// One device per value of the filesystem axis `axis` (`xfs`, `ext4`), each made with
/// its filesystem and mounted at `{{mnt}}` at the points of that value only (`when:`),
/// before the draft's other setup steps; said in a note. `host`: the post's directory,
/// written with `{{axis}}` (`/{{fs}}`), when it benchmarked on one.
pub(super) fn per_filesystem(
    exp: &mut Experiment,
    axis: &str,
    line: usize,
    host: Option<&str>,
    notes: &mut Vec<Note>,
) {
    let Some(values) = exp
        .matrix
        .iter()
        .find(|a| a.name == axis)
        .map(|a| a.values.clone())
    else {
        return;
    };
    // the post's own paths (`/xfs`, `/ext4`), not the draft's `/{{fs}}`
    let var = format!("{{{{{axis}}}}}");
    let one = |v: &str| match host {
        Some(h) => format!(" at `{}`", h.replace(&var, v)),
        None => String::new(),
    };
    let all = match host {
        Some(h) if h.contains(&var) => format!(
            " at {}",
            values
                .iter()
                .map(|v| format!("`{}`", h.replace(&var, v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some(h) => format!(" at `{h}`"),
        None => String::new(),
    };
    let why = format!(
        "guess: the post does not give the size of its filesystems{all}; {DEFAULT_SIZE} is a default"
    );
    notes.push(Note::new(line, NoteKind::Guess, &why));
    notes.push(Note::new(
        line,
        NoteKind::Guess,
        &format!(
            "the post does not show how it made its filesystems{all}: each point makes its `{axis}` ({}) on a device of its own and mounts it at `{{{{mnt}}}}`",
            values.join(", ")
        ),
    ));
    let mut steps = Vec::new();
    for (i, fs) in values.iter().enumerate() {
        if !exp.devices.iter().any(|d| d.name == *fs) {
            exp.devices.insert(
                i,
                Device {
                    name: fs.clone(),
                    path: String::new(),
                    line,
                    size: DEFAULT_SIZE.into(),
                    size_from_post: false,
                    why: why.clone(),
                },
            );
        }
        let when = Some((axis.to_string(), vec![fs.clone()]));
        steps.push(Step {
            line,
            action: Action::Run {
                name: "mkfs".into(),
                command: mkfs_command(fs, &format!("{{{{dev.{fs}}}}}")),
                parse: None,
            },
            times: None,
            repeat: None,
            when: when.clone(),
            comment: format!(
                "line {line}: guess: the post does not show how it made {fs}{}",
                one(fs)
            ),
        });
        steps.push(Step {
            line,
            action: Action::Mount {
                device: fs.clone(),
                options: None,
            },
            times: None,
            repeat: None,
            when,
            comment: format!(
                "line {line}: guess: the post does not show the mount{}",
                one(fs)
            ),
        });
    }
    exp.setup.splice(0..0, steps);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_a_host_path_stands_for() {
        assert_eq!(mount_point_of("/mnt/test/d"), "/mnt/test");
        assert_eq!(mount_point_of("/mnt/xxx"), "/mnt");
        assert_eq!(mount_point_of("/mnt/fsync/"), "/mnt/fsync");
        assert_eq!(mount_point_of("/data"), "/data");
        assert_eq!(mount_point_of("/opt/bench/run1/x"), "/opt/bench");
    }

    #[test]
    fn a_directory_given_by_a_flag_is_a_host_path() {
        assert_eq!(flag_dir("-D", "/xfs"), Some("/xfs"));
        assert_eq!(flag_dir("-d", "/bench/t1"), Some("/bench/t1"));
        assert_eq!(flag_dir("x", "--directory=/ssd"), Some("/ssd"));
        // the host's own directories and words that are no paths
        assert_eq!(flag_dir("-d", "/dev/sdb"), None);
        assert_eq!(flag_dir("-d", "/"), None);
        assert_eq!(flag_dir("-d", "agcount=4"), None);
        assert_eq!(flag_dir("-t", "/xfs"), None);
        assert_eq!(mount_point_of("/xfs"), "/xfs");
    }

    #[test]
    fn the_filesystem_a_post_names() {
        let line = |t: &str| PostLine {
            n: 1,
            depth: 0,
            text: t.into(),
            quoted_author: None,
        };
        assert_eq!(
            post_filesystem(Some("[PATCH] jbd: commit writeout"), &[]).as_deref(),
            Some("ext3")
        );
        assert_eq!(
            post_filesystem(
                Some("Re: raid56 stripe cache"),
                &[line("on btrfs, not xfs: btrfs")]
            )
            .as_deref(),
            Some("btrfs")
        );
        assert_eq!(post_filesystem(None, &[line("a disk")]), None);
    }
}
