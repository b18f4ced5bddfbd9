//! `fslab import` on a post whose commands run after a `cd` (`cd /mnt/scratch` at a
//! prompt, `cd DIR && CMD`, `cd DIR; CMD`): a directory at or under the mount point runs
//! the step there (`{{mnt}}`, `{{mnt}}/src`), any other is a `# guess:` naming it. The post
//! is written in the style of linux-xfs replies (its fixture's `#|` note says so).

use super::import::{draft_of, fixture_post, note_at};
use fslab::import::NoteKind;

/// A post of `tests/fixtures/import/styled/`, its `#|` note taken out.
pub(crate) fn styled(name: &str) -> String {
    fixture_post("styled", name)
}

/// The line (from 1) of the first line of `text` that contains `needle`.
pub(crate) fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in the post"))
        + 1
}

fn run_of(s: &fslab::spec::Step) -> Vec<String> {
    match &s.run {
        Some(fslab::spec::CommandSpec::Argv(w)) => w.clone(),
        Some(fslab::spec::CommandSpec::Line(l)) => vec![l.clone()],
        None => Vec::new(),
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

const IN_DIR: &str = "cd \"$1\" && shift && exec \"$@\"";

/// The directories of the draft's built-in `mkdir:` setup steps, in order.
fn mkdirs(e: &fslab::Experiment) -> Vec<&str> {
    e.def
        .setup
        .iter()
        .filter_map(|s| s.mkdir.as_deref())
        .collect()
}

/// Whether a setup step runs `cmd` in `dir` (the `sh -c 'cd "$1" …' sh DIR CMD…` form).
fn runs_in(e: &fslab::Experiment, dir: &str, cmd: &str) -> bool {
    e.def
        .setup
        .iter()
        .map(run_of)
        .any(|r| r.len() > 5 && r[4] == dir && r[5] == cmd)
}

#[test]
fn commands_after_a_cd_into_the_mount_point_run_there() {
    let text = styled("xfs-cd-into-scratch.txt");
    let (d, e) = draft_of(&text);
    // `cd /mnt/scratch` then `mkdir -p fsm`, `mkdir src`: the built-in mkdir under {{mnt}}
    assert_eq!(mkdirs(&e), ["{{mnt}}/fsm", "{{mnt}}/src"]);
    // the timed fs_mark runs in {{mnt}}, its relative `-d fsm/0` kept as written
    let mut want = words(&[
        "sh",
        "-c",
        IN_DIR,
        "sh",
        "{{mnt}}",
        "{{fs_mark}}",
        "-S0",
        "-k",
    ]);
    want.extend(words(&[
        "-n", "100000", "-s", "0", "-d", "fsm/0", "-d", "fsm/1",
    ]));
    want.extend(words(&["-d", "fsm/2", "-d", "fsm/3"]));
    assert_eq!(run_of(&e.def.workload), want);
    // `cd /mnt/scratch/src && time tar xf …`: in {{mnt}}/src, and the `cd` is no condition
    let tar = line_of(&text, "&& time tar");
    let runs: Vec<Vec<String>> = e.def.capture.iter().map(run_of).collect();
    assert!(
        runs.contains(&words(&[
            "sh",
            "-c",
            IN_DIR,
            "sh",
            "{{mnt}}/src",
            "tar",
            "xf",
            "/root/linux-6.8.tar"
        ])),
        "{runs:#?}"
    );
    assert!(
        !d.notes
            .iter()
            .any(|n| n.line == tar && n.what.contains("only under")),
        "{:#?}",
        d.notes
    );
    note_at(
        &d,
        tar,
        NoteKind::Recognised,
        "the commands after it run in {{mnt}}/src",
    );
    // `cd /mnt/scratch; xfs_io … src/linux-6.8/Makefile`: in {{mnt}}
    assert!(runs.iter().any(|r| r.get(..6)
        == Some(&words(&["sh", "-c", IN_DIR, "sh", "{{mnt}}", "xfs_io"])[..])
        && r.last().map(String::as_str) == Some("src/linux-6.8/Makefile")));
    // `cd ~/src/xfsprogs; make -j8`: not the filesystem; the draft says where the post ran it
    let make = line_of(&text, "cd ~/src/xfsprogs");
    note_at(
        &d,
        make,
        NoteKind::Guess,
        "the post ran it in `~/src/xfsprogs`",
    );
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains(&format!(
            "guess: the post ran it in `~/src/xfsprogs` (line {make})"
        )),
        "{yaml}"
    );
    // `>/dev/null` is the shell's, never an argument of make (issue 41, pattern 3): the
    // step runs `make -j8`, its comment says what it does not carry
    assert!(runs.contains(&words(&["{{make}} -j8"])), "{runs:#?}");
    assert!(
        yaml.contains(&format!(
            "# line {}: make -j8 >/dev/null; guess: the post ran it in",
            make
        )) && yaml.contains("`>/dev/null` is not carried (a step runs no shell)\n"),
        "{yaml}"
    );
    // no step is a `cd`
    let all = (e.def.setup.iter())
        .chain(e.def.capture.iter())
        .chain([&e.def.workload]);
    assert!(all
        .filter_map(|s| run_of(s).first().cloned())
        .all(|w| w != "cd" && !w.starts_with("cd ")));
}

/// `cd DIR` inside a script's loop holds for the rest of the body; a relative `cd` goes on
/// from the directory before it; a `cd` into a directory the post never mounts is a guess.
#[test]
fn a_cd_in_a_script_and_a_relative_cd() {
    let post = "Subject: Re: [PATCH] ext4: faster unlink\n\nThe script:\n\n#!/bin/sh\nmkfs.ext4 -F /dev/sdb\nmount /dev/sdb /mnt/test\ncd /mnt/test\nmkdir d\ncd d\nfor i in $(seq 1 100); do touch f$i; done\ncd /tmp\ntime rm -rf /mnt/test/d\n";
    let (d, e) = draft_of(post);
    let setup: Vec<Vec<String>> = e.def.setup.iter().map(run_of).collect();
    assert_eq!(mkdirs(&e), ["{{mnt}}/d"]);
    assert!(runs_in(&e, "{{mnt}}/d", "touch"), "{setup:#?}");
    // `cd /tmp`: the workload names its path from `/`; it runs in {{work}}, said as a guess
    assert_eq!(run_of(&e.def.workload), ["rm -rf {{mnt}}/d"]);
    note_at(&d, 12, NoteKind::Guess, "the post ran it in `/tmp`");
}

/// `pushd DIR` goes there as `cd` does, and `popd` back to where the commands ran before
/// it (bash's stack); a `popd` with nothing pushed leaves the directory unknown, said as a
/// guess at the step, never taken as the mount point.
#[test]
fn pushd_and_popd_follow_the_directory_stack() {
    let post = "Subject: Re: [PATCH] xfs: faster link\n\nThe script:\n\n#!/bin/sh\nmkfs.xfs -f /dev/sdb\nmount /dev/sdb /mnt/test\ncd /mnt/test\nmkdir a\npushd a\nfor i in $(seq 1 100); do touch f$i; done\npopd\nmkdir b\npopd\ntime rm -rf /mnt/test/a\n";
    let (d, e) = draft_of(post);
    assert_eq!(
        mkdirs(&e),
        // `mkdir b` after the `popd` is back in /mnt/test, not in a
        ["{{mnt}}/a", "{{mnt}}/b"]
    );
    let setup: Vec<Vec<String>> = e.def.setup.iter().map(run_of).collect();
    assert!(runs_in(&e, "{{mnt}}/a", "touch"), "{setup:#?}");
    // the second `popd` has nothing to pop: the workload's directory is unknown, a guess
    assert_eq!(run_of(&e.def.workload), ["rm -rf {{mnt}}/a"]);
    note_at(&d, 14, NoteKind::Guess, "(after `popd`)");
}

/// `(cd DIR && CMD)`: the `cd` holds inside the parentheses only, so the command after
/// them runs where the commands before them ran.
#[test]
fn a_cd_in_a_subshell_holds_inside_it_only() {
    let post = "Subject: Re: [PATCH] xfs: faster link\n\nThe script:\n\n#!/bin/sh\nmkfs.xfs -f /dev/sdb\nmount /dev/sdb /mnt/test\ncd /mnt/test\n(cd /tmp && tar xf /root/src.tar)\nmkdir d\n(cd d && touch x) > /dev/null 2>&1\ntime rm -rf /mnt/test/d\n";
    let (d, e) = draft_of(post);
    // `mkdir d` after the first subshell is back in /mnt/test
    assert_eq!(mkdirs(&e), ["{{mnt}}/d"]);
    let setup: Vec<Vec<String>> = e.def.setup.iter().map(run_of).collect();
    // the tar ran in /tmp: a guess naming it; the touch in {{mnt}}/d
    note_at(&d, 9, NoteKind::Guess, "the post ran it in `/tmp`");
    assert!(runs_in(&e, "{{mnt}}/d", "touch"), "{setup:#?}");
    // neither the parentheses nor the redirection after them is a step of its own
    assert!(
        !setup
            .iter()
            .flatten()
            .any(|w| w == ")" || w == "(cd" || w == ">" || w == "2>&1"),
        "{setup:#?}"
    );
}

/// A post that mounts nothing and runs its benchmark where its shell is: after a numbered
/// step's `#cd` (a root prompt written without its blank), or at a prompt that shows its
/// directory (`bob@nas:~$`). That directory is the filesystem the post measured: the
/// draft declares a device, makes a filesystem on it (said as a guess) and runs the
/// workload at `{{mnt}}`; a command elsewhere (`make` in a source tree) is no such
/// directory (issue 41, patterns 1 and 4).
#[test]
fn the_directory_a_post_measured_in_becomes_the_draft_s_filesystem() {
    let post = "Subject: slow writes on my pool\n\nWhat I did:\n1.  # mkdir /tank/scratch\n2.  #cd /tank/scratch\n3.  # time dd if=/dev/zero of=big.bin bs=1M count=2048\n\nIt only does 12 MB/s.\n";
    let (d, e) = draft_of(post);
    assert_eq!(e.def.devices.len(), 1, "{:?}", d.yaml);
    assert!(
        e.def.setup.iter().any(|s| s.mount.is_some()),
        "{:?}",
        d.yaml
    );
    let w = run_of(&e.def.workload);
    assert_eq!(
        w[..6],
        words(&["sh", "-c", IN_DIR, "sh", "{{mnt}}", "dd"]),
        "{w:?}"
    );
    assert!(w.contains(&"of=big.bin".to_string()), "{w:?}");
    note_at(
        &d,
        5,
        NoteKind::Guess,
        "the workload runs in `/tank/scratch`",
    );
    // no step names the host's directory (the comments keep the post's lines)
    let steps: Vec<Vec<String>> = e.def.setup.iter().map(run_of).collect();
    assert!(
        !steps.iter().flatten().any(|w| w.contains("/tank")),
        "{steps:?}"
    );
    assert_eq!(mkdirs(&e), ["{{mnt}}"]);

    // the same benchmark again at a prompt that shows the home directory
    let post = "Subject: fio on my laptop\n\ncmd:\n\n    fio --name=t --filename=t.dat --size=1G --rw=randread\n\nresult:\n\n    bob@nas:~$ fio --name=t --filename=t.dat --size=1G --rw=randread\n      read: IOPS=9120, BW=35.6MiB/s\n";
    let (_, e) = draft_of(post);
    let w = run_of(&e.def.workload);
    assert_eq!(w.get(4).map(String::as_str), Some("{{mnt}}"), "{w:?}");
    assert!(e.def.setup.iter().any(|s| s.mount.is_some()));

    // a build in a source tree is not the filesystem measured
    let post = "Subject: build times\n\n# cd /root/src/linux\n# time make -j8\n";
    let (_, e) = draft_of(post);
    assert!(e.def.devices.is_empty(), "{:?}", e.def.devices);
}
