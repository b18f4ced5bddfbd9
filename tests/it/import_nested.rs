//! `fslab import` on runs of the same commands inside a loop body, a function body and a
//! `case` branch (the same axis as at top level, where the runs stand), and on
//! here-strings whose quoted text spans lines (the command's input, never commands or
//! numbers). The posts are written the way such mails are.

use super::import::{draft_of, note_at};
use fslab::import::NoteKind;

/// The runs at top level: mkfs without and with CRCs, each timed.
const RUNS: &str = "\tmkfs.xfs -f -m crc=0 /dev/sdb
\tmount /dev/sdb /mnt
\ttime fs_mark -d /mnt/fsm -n 100000 -s 0
\tumount /mnt
\tmkfs.xfs -f -m crc=1 /dev/sdb
\tmount /dev/sdb /mnt
\ttime fs_mark -d /mnt/fsm -n 100000 -s 0
\tumount /mnt
";

fn post(script: &str) -> String {
    format!("Subject: [PATCH] xfs: faster directory block allocation\n\nWithout and with CRCs:\n\n#!/bin/bash\n{script}")
}

/// The matrix's axes and values, the setup's `run:` and the workload's, and its repeat.
fn shape(e: &fslab::Experiment) -> (Vec<(String, Vec<String>)>, Vec<String>, String, String) {
    let m = e
        .def
        .matrix
        .iter()
        .map(|(k, v)| (k.clone(), v.iter().map(|x| x.to_string()).collect()))
        .collect();
    let setup = e
        .def
        .setup
        .iter()
        .filter_map(|s| s.run.as_ref().map(|r| format!("{r:?}")))
        .collect();
    let w = format!("{:?}", e.def.workload.run);
    (m, setup, w, format!("{:?}", e.def.workload.repeat))
}

fn crc() -> (String, Vec<String>) {
    ("crc".into(), vec!["0".into(), "1".into()])
}

/// The runs inside `for i in 1 2 3; do … done`: the same `crc: [0, 1]` axis, the mkfs
/// with `crc={{crc}}`, as at top level, and the loop still counts the repetitions.
#[test]
fn repeated_runs_inside_a_loop_body() {
    let (_, top) = draft_of(&post(RUNS));
    let (d, e) = draft_of(&post(&format!("for i in 1 2 3; do\n{RUNS}done\n")));
    let (tm, ts, tw, _) = shape(&top);
    let (m, s, w, repeat) = shape(&e);
    assert_eq!(tm, vec![crc()]);
    assert_eq!((m, s, w), (tm, ts.clone(), tw));
    assert!(
        ts[0].contains("mkfs.xfs -f -m crc={{crc}} {{dev.data}}"),
        "{ts:?}"
    );
    assert!(repeat.contains('3'), "{repeat}");
    note_at(&d, 7, NoteKind::Guess, "matrix axis `crc`");
}

/// The runs in a function's body: called once, the body is inlined where it is called
/// (the same as top level); called as `bench 512` / `bench 1024`, its calls are a loop
/// over `size` and the runs inside that loop's body are the `crc` axis as well.
#[test]
fn repeated_runs_inside_a_function_body() {
    let (_, top) = draft_of(&post(RUNS));
    let (_, once) = draft_of(&post(&format!("bench() {{\n{RUNS}}}\nbench\n")));
    assert_eq!(shape(&once), shape(&top));
    let body = RUNS.replace(" /dev/sdb\n\tmount", " -i size=$1 /dev/sdb\n\tmount");
    let (d, e) = draft_of(&post(&format!(
        "bench() {{\n{body}}}\nbench 512\nbench 1024\n"
    )));
    let (m, s, _, _) = shape(&e);
    assert_eq!(
        m,
        vec![("size".into(), vec!["512".into(), "1024".into()]), crc()]
    );
    assert_eq!(s.len(), 1, "{s:?}");
    assert!(
        s[0].contains("mkfs.xfs -f -m crc={{crc}} -i size={{size}} {{dev.data}}"),
        "{s:?}"
    );
    note_at(&d, 7, NoteKind::Guess, "matrix axis `crc`");
}

/// The runs in one branch of a `case` over a loop variable: the `crc` axis, the mkfs with
/// `crc={{crc}}` and the branch's `when:`, the other branch's commands as they were.
#[test]
fn repeated_runs_inside_a_case_branch() {
    let branch = RUNS.replace('\t', "\t\t");
    let script = format!(
        "for fs in xfs ext4; do\n\tcase $fs in\n\txfs)\n{branch}\t\t;;\n\text4)\n\t\tmkfs.ext4 -F /dev/sdb\n\t\tmount /dev/sdb /mnt\n\t\ttime fs_mark -d /mnt/fsm -n 100000 -s 0\n\t\tumount /mnt\n\t\t;;\n\tesac\ndone\n"
    );
    let (d, e) = draft_of(&post(&script));
    let (m, _, _, _) = shape(&e);
    assert_eq!(
        m,
        vec![("fs".into(), vec!["xfs".into(), "ext4".into()]), crc()]
    );
    let setup: Vec<String> = e.def.setup.iter().map(|s| format!("{s:?}")).collect();
    let mkfs: Vec<&String> = setup.iter().filter(|s| s.contains("mkfs")).collect();
    assert_eq!(mkfs.len(), 2, "{setup:#?}");
    assert!(
        mkfs[0].contains("mkfs.xfs -f -m crc={{crc}} {{dev.data}}"),
        "{mkfs:?}"
    );
    assert!(mkfs[0].contains("\"xfs\""), "{mkfs:?}");
    assert!(mkfs[1].contains("mkfs.ext4 -F {{dev.data}}") && mkfs[1].contains("\"ext4\""));
    note_at(&d, 9, NoteKind::Guess, "matrix axis `crc`");
}
