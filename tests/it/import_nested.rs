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
type Axes = Vec<(String, Vec<String>)>;

fn shape(e: &fslab::Experiment) -> (Axes, Vec<String>, String, String) {
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
    // the post runs ext4 once, not once per crc value: `exclude:` leaves out ext4 × crc=1
    note_at(&d, 9, NoteKind::Recognised, "an `exclude:` entry");
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains("exclude:\n  - { fs: [\"ext4\"], crc: [1] }  # line 9: "),
        "{yaml}"
    );
    let plan = fslab::Plan::new(&e, None, &[]).unwrap();
    let ids: Vec<&str> = plan.points.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["fs=xfs,crc=0", "fs=xfs,crc=1", "fs=ext4,crc=0"]);
}

/// The runs in the first branch of a `case` over three values, the other two branches
/// each running once in the post: 2 + 1 + 1 points, not 3 × 2.
#[test]
fn repeated_runs_inside_one_of_three_case_branches_plan_four_points() {
    let branch = RUNS.replace('\t', "\t\t");
    let other = |fs: &str| {
        format!("\t{fs})\n\t\tmkfs.{fs} -F /dev/sdb\n\t\tmount /dev/sdb /mnt\n\t\ttime fs_mark -d /mnt/fsm -n 100000 -s 0\n\t\tumount /mnt\n\t\t;;\n")
    };
    let script = format!(
        "for fs in xfs ext4 btrfs; do\n\tcase $fs in\n\txfs)\n{branch}\t\t;;\n{}{}\tesac\ndone\n",
        other("ext4"),
        other("btrfs")
    );
    let (d, e) = draft_of(&post(&script));
    let (m, _, _, _) = shape(&e);
    assert_eq!(
        m,
        vec![
            (
                "fs".into(),
                vec!["xfs".into(), "ext4".into(), "btrfs".into()]
            ),
            crc()
        ]
    );
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains("  - { fs: [\"ext4\", \"btrfs\"], crc: [1] }"),
        "{yaml}"
    );
    let plan = fslab::Plan::new(&e, None, &[]).unwrap();
    assert_eq!(plan.points.len(), 4, "{:?}", plan.points);
}

/// Without a `case`, the same runs make the axis of every point: no `exclude:`.
#[test]
fn repeated_runs_at_top_level_exclude_nothing() {
    let (d, e) = draft_of(&post(RUNS));
    assert!(!d.yaml.as_deref().unwrap().contains("exclude:"));
    assert_eq!(fslab::Plan::new(&e, None, &[]).unwrap().points.len(), 2);
}

const HERESTRING_LINES_POST: &str = "Subject: [PATCH] ext4: keep the superblock's mount options

Set the options, then the run:

# mkfs.ext4 -F /dev/sdb
# debugfs -w /dev/sdb <<< \"set_super_value mount_opts nodelalloc
ssv s_max_mnt_count 20
dirty\"
# mount /dev/sdb /mnt
# time fs_mark -d /mnt/fsm -n 10000 -s 4096

real\t0m2.310s
user\t0m0.120s
sys\t0m1.020s

And the script that checks it afterwards:

\t#!/bin/sh
\tfor i in 1 2; do
\t\tdebugfs /dev/sdb <<< 'stat <2>
\t\tls -l /
\t\tstats'; done
\tumount /mnt
";

/// `cmd <<< "…"` whose quoted text goes on over lines, at a prompt and in an indented
/// script inside a loop (`<<< '…'; done`): the text up to the closing quote is the
/// command's input, written as a here-document (without the mail's indentation), never
/// commands (`ls -l /`, `dirty`) or numbers (`20`); the lines after it are read again.
#[test]
fn here_strings_that_span_lines_are_the_command_input() {
    let (d, e) = draft_of(HERESTRING_LINES_POST);
    let setup = format!("{:?}", e.def.setup);
    assert!(
        setup.contains("debugfs -w {{dev.data}} <<'EOF'\\nset_super_value mount_opts nodelalloc\\nssv s_max_mnt_count 20\\ndirty\\nEOF"),
        "{setup}"
    );
    assert!(setup.contains("mount: Some(Device(\"data\"))"), "{setup}");
    let capture = format!("{:?}", e.def.capture);
    assert!(
        capture.contains("debugfs {{dev.data}} <<'EOF'\\nstat <2>\\n\\tls -l /\\n\\tstats\\nEOF"),
        "{capture}"
    );
    assert!(!capture.contains("<<<") && !setup.contains("<<<"));
    // the loop closed after the quote: the umount is the draft's teardown
    assert!(format!("{:?}", e.def.teardown).contains("umount"));
    note_at(&d, 6, NoteKind::Recognised, "a here-string");
    note_at(&d, 6, NoteKind::Recognised, "(lines 6–8)");
    note_at(&d, 20, NoteKind::Recognised, "(lines 20–22)");
    for l in [7, 8, 20, 21, 22] {
        assert!(
            !d.rows.iter().any(|r| r.line == l),
            "line {l}: {:#?}",
            d.rows
        );
    }
    assert!(!e.def.tools.contains_key("dirty") && !e.def.tools.contains_key("ssv"));
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{fs_mark}} -d {{mnt}}/fsm -n 10000 -s 4096"),
        "{w}"
    );
    assert!(d
        .rows
        .iter()
        .any(|r| r.printed == "0m2.310s" && r.line == 12));
}

/// The runs inside one `if` branch (a quoted script's `if [ -b /dev/sdb ]; then … fi`) are
/// read as at top level: the same `crc: [0, 1]` axis, each step keeping the `if` as its
/// `# guess:`; and runs written as `&&` chains at prompts (`# mkfs … && mount … && time
/// fs_mark …`) are runs too, the chain's condition naming the loop's word.
#[test]
fn repeated_runs_under_an_if_and_in_chains() {
    let (_, top) = draft_of(&post(RUNS));
    let quoted: String = format!("if [ -b /dev/sdb ]; then\n{RUNS}fi\n")
        .lines()
        .map(|l| format!("> {l}\n"))
        .collect();
    let text = format!("Subject: Re: [PATCH] xfs: faster directory block allocation\n\nOn Mon, 3 Jun 2024, B Dev wrote:\n> #!/bin/bash\n{quoted}\nThanks.\n");
    let (d, e) = draft_of(&text);
    assert_eq!(shape(&e), shape(&top));
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains("# line 6: mkfs.xfs -f -m crc=$crc /dev/sdb; guess: the post runs it only under line 5: if [ -b /dev/sdb ]"),
        "{yaml}"
    );
    let chains = "Subject: [PATCH] xfs: faster directory block allocation\n\n  # mkfs.xfs -f -m crc=0 /dev/sdb && mount /dev/sdb /mnt && time fs_mark -d /mnt/fsm -n 100000 -s 0\n  # umount /mnt\n  # mkfs.xfs -f -m crc=1 /dev/sdb && mount /dev/sdb /mnt && time fs_mark -d /mnt/fsm -n 100000 -s 0\n  # umount /mnt\n";
    let (d, e) = draft_of(chains);
    assert_eq!(shape(&e), shape(&top));
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains(
            "guess: the post runs it only under line 3: `mkfs.xfs -f -m crc=$crc /dev/sdb &&`"
        ),
        "{yaml}"
    );
}

/// Pratik Sampat's reply quotes a script whose `mkdir`/`rmdir` of `cg_"${i}"_"${j}"` sit in
/// `for i in `seq 1 1000`` and `for j in `seq 1 10``: both variables stay the post's
/// loops (one `sh -c` step with both), never a `{{i}}` for `$j` beside a raw `${i}`.
#[test]
fn outside_nested_seq_loops_keep_both_variables() {
    let text = super::import::outside("mm-percpu-depopulation-reply.txt");
    let (_, e) = draft_of(&text);
    let runs: Vec<String> = e
        .def
        .setup
        .iter()
        .chain(&e.def.capture)
        .filter_map(|s| s.run.as_ref().map(|r| format!("{r:?}")))
        .collect();
    for r in &runs {
        assert!(
            !(r.contains("{{i}}") && r.contains("${i}")),
            "a loop variable left raw beside {{{{i}}}}: {r}"
        );
    }
    for verb in ["mkdir", "rmdir"] {
        let want = format!(
            "for i in $(seq 1 1000); do for j in $(seq 1 10); do {verb} percpu_test/cg_\\\"${{i}}\\\"_\\\"${{j}}\\\"; done; done"
        );
        assert!(runs.iter().any(|r| r.contains(&want)), "{want}\n{runs:#?}");
    }
    // the command in the outer loop only keeps its one counter
    assert!(
        runs.iter()
            .any(|r| r.contains("mkdir percpu_test/cg_\\\"{{i}}\\\"")),
        "{runs:#?}"
    );
}

/// Two list loops, one inside the other, whose variables fill two options of the same
/// name (`-b size=${j} -n size=${i}k`): two axes, each variable its own (written for this
/// test: no real post found with this shape).
#[test]
fn nested_list_loops_with_the_same_option_name_are_two_axes() {
    let text = "Subject: xfs: block and directory sizes\n\n#!/bin/sh\nfor i in 4 8 16; do\n  for j in 4k 8k; do\n    mkfs.xfs -f -b size=${j} -n size=${i}k /dev/sdb\n    time fs_mark -d /mnt/f -n 1000\n  done\ndone\n";
    let (_, e) = draft_of(text);
    let (axes, setup, _, _) = shape(&e);
    assert_eq!(axes.len(), 2, "{axes:?}");
    let names: Vec<&str> = axes.iter().map(|a| a.0.as_str()).collect();
    let mkfs = setup.iter().find(|r| r.contains("mkfs.xfs")).expect("mkfs");
    for (name, values) in &axes {
        assert!(
            mkfs.contains(&format!("{{{{{name}}}}}")),
            "{name} unused: {mkfs}"
        );
        assert!(
            values == &["4", "8", "16"] || values == &["4k", "8k"],
            "{values:?}"
        );
    }
    assert!(!mkfs.contains('$'), "{mkfs} ({names:?})");
}
