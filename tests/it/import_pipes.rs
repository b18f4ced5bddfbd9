//! `fslab import` on the shell around a post's commands (issue 41, pattern 3): a
//! redirection (`> /dev/null 2>&1`, `2>&1 > fsmark.log`) or the rest of a pipeline
//! (`| tee LOG`, `echo y |`) is never an argument of the program, and the step's comment
//! says, as a `# guess:` beside the post's line, what the draft does not carry; a variable
//! holding several words (`MOUNT_OPTIONS="-o ssd"`) is split where the shell splits it;
//! a variable built up in a counting loop (`OPTS="$OPTS -d $MNT/$i"`) has its value after
//! the loop, and one built in a loop whose iterations cannot be read is said, never
//! guessed. The posts are written the way xfs and btrfs patch mails show their scripts.

use super::import::{draft_of, note_at};
use super::import_dirs::line_of;
use fslab::import::NoteKind;
use fslab::spec::{CommandSpec, Step};

/// Every step's command as one text.
fn runs(e: &fslab::Experiment) -> Vec<String> {
    let d = &e.def;
    let steps: Vec<&Step> = (d.setup.iter())
        .chain([&d.workload])
        .chain(d.capture.iter())
        .collect();
    steps
        .iter()
        .filter_map(|s| match &s.run {
            Some(CommandSpec::Line(l)) => Some(l.clone()),
            Some(CommandSpec::Argv(v)) => Some(v.join(" ")),
            None => None,
        })
        .collect()
}

const SCRIPT: &str = "Subject: [PATCH] btrfs: scale inode cluster allocation\n\nThe script I ran on an 8p VM:\n\n#!/bin/bash\nDEV=/dev/vdc\nMNT=/mnt/scratch\nMOUNT_OPTIONS=\"-o ssd\"\necho y | mkfs.btrfs -f $DEV > /dev/null 2>&1\nmount $MOUNT_OPTIONS $DEV $MNT\nOPTS=\"-S0 -n 100000 -s 0\"\nfor ((i = 0; i < 4; i++)); do\n\tOPTS=\"$OPTS -d $MNT/$i\"\ndone\necho 3 > /proc/sys/vm/drop_caches\ntime fs_mark $OPTS 2>&1 > fsmark.log | tee fsmark.out\n\nreal    4m12.001s\nuser    0m40.000s\nsys     6m1.000s\n";

#[test]
fn redirections_and_pipes_are_never_arguments() {
    let (d, e) = draft_of(SCRIPT);
    let yaml = d.yaml.as_deref().unwrap();
    let all = runs(&e);
    for shell in ["2>&1", ">", "|", "tee", "fsmark.log", "/dev/null", "echo y"] {
        assert!(
            !all.iter()
                .any(|r| r.split_whitespace().any(|w| w == shell) || r.contains(shell)),
            "{shell:?} is in a step: {all:#?}"
        );
    }
    assert!(
        all.contains(&"mkfs.btrfs -f {{dev.data}}".to_string()),
        "{all:#?}"
    );
    // `echo 3 > /proc/sys/vm/drop_caches` is the draft's own step
    assert!(yaml.contains("drop_caches: true"), "{yaml}");
    // what is not carried is a `# guess:` beside the post's line, and a note at that line
    let mkfs = line_of(SCRIPT, "echo y | mkfs.btrfs");
    assert!(
        yaml.contains(&format!("# line {mkfs}: echo y | mkfs.btrfs -f /dev/vdc > /dev/null 2>&1; guess: the shell's `> /dev/null`, `2>&1`, `echo y |` are not carried (a step runs no shell)\n")),
        "{yaml}"
    );
    note_at(&d, mkfs, NoteKind::Guess, "`echo y |` are not carried");
    let fs_mark = line_of(SCRIPT, "time fs_mark");
    assert!(
        yaml.contains("guess: the shell's\n  #   `2>&1`, `> fsmark.log`, `| tee fsmark.out` are not carried (a step runs no shell); its output is kept in the bundle instead of `fsmark.log`, `fsmark.out`\n"),
        "{yaml}"
    );
    note_at(&d, fs_mark, NoteKind::Guess, "`| tee fsmark.out`");
}

#[test]
fn a_variable_of_several_words_splits_and_one_built_in_a_loop_has_its_value() {
    let (d, e) = draft_of(SCRIPT);
    let yaml = d.yaml.as_deref().unwrap();
    // `MOUNT_OPTIONS="-o ssd"`, `mount $MOUNT_OPTIONS …`: the option is `ssd`, not ` ssd`
    assert!(
        yaml.contains("mount: { device: \"data\", options: \"ssd\" }"),
        "{yaml}"
    );
    // `OPTS` built in `for ((i = 0; i < 4; i++))`: its four `-d` directories, on {{mnt}}
    assert_eq!(
        format!("{:?}", e.def.workload.run),
        "Some(Line(\"{{fs_mark}} -S0 -n 100000 -s 0 -d {{mnt}}/0 -d {{mnt}}/1 -d {{mnt}}/2 -d {{mnt}}/3\"))"
    );
    assert!(
        !yaml.contains("FILL_IN") && !yaml.contains("{{OPTS}}"),
        "{yaml}"
    );
    assert!(e.def.matrix.is_empty(), "{:?}", e.def.matrix);

    // built in a loop whose iterations the post does not give: said, left to fill in
    let post = "Subject: [PATCH] xfs: faster creates\n\nThe script:\n\n#!/bin/bash\nmkfs.xfs -f /dev/vdc\nmount /dev/vdc /mnt/scratch\nOPTS=\"-S0 -n 1000\"\nwhile read d; do\n\tOPTS=\"$OPTS -d /mnt/scratch/$d\"\ndone < dirs.txt\ntime fs_mark $OPTS\n";
    let (d, _) = draft_of(post);
    note_at(
        &d,
        9,
        NoteKind::Unmapped,
        "`OPTS` is set in `while read d` (line 9), whose iterations could not be read: its value after the loop is not known",
    );
    let said = d
        .notes
        .iter()
        .filter(|n| n.what.contains("`OPTS` is set in"))
        .count();
    assert_eq!(said, 2, "the loop's line and the var's: {:#?}", d.notes);
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains(
            "OPTS: \"FILL_IN\"  # line 12: guess: `OPTS` is set in `while read d` (line 9)"
        ),
        "{yaml}"
    );
}
