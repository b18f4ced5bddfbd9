//! `fslab import` on posts whose scripts use `case`, shell functions and here-documents,
//! and on result labels written on the line above their numbers. The posts are written the
//! way such mails are (a reply with a `#!/bin/bash` loop over filesystems, a commit message
//! with a `run_test()` function, a patch with a fio job in a here-document); the label test
//! also reads a real commit message (`tests/fixtures/import/outside/btrfs-csum-treelog.txt`).

use super::import::{draft_of, note_at, outside};
use fslab::import::{Draft, NoteKind};
use fslab::plan::Phase;
use fslab::Plan;

/// The setup commands each point of the draft runs, by point id.
fn setup_by_point(e: &fslab::Experiment) -> Vec<(String, Vec<String>)> {
    let plan = Plan::new(e, None, &[]).expect("plans");
    plan.points
        .iter()
        .map(|p| {
            let runs = plan
                .steps(p, Phase::Setup)
                .iter()
                .filter_map(|s| s.run.as_ref().map(|r| format!("{r:?}")))
                .collect();
            (p.id.clone(), runs)
        })
        .collect()
}

fn row_settings(d: &Draft, line: usize, printed: &str) -> Vec<(String, String)> {
    d.rows
        .iter()
        .find(|r| r.line == line && r.printed == printed)
        .unwrap_or_else(|| panic!("no row {printed} at line {line}: {:#?}", d.rows))
        .settings
        .clone()
}

fn s(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

pub(crate) const CASE_POST: &str = "From: Jan Tester <jan@example.org>
Subject: Re: [PATCH v3] fs: speed up small-file creation
Date: Wed, 12 Jun 2024 10:12:44 +0200
Message-ID: <20240612081244.GA1234@example.org>

On Tue, Jun 11, 2024 at 03:00:00PM +0000, Pat Author wrote:
> This patch makes file creation faster on every filesystem I tried.

I ran it over the three filesystems with this:

#!/bin/bash
DEV=/dev/nvme0n1p1
MNT=/mnt/test
for fs in xfs ext4 btrfs; do
	case $fs in
	xfs)	mkfs.xfs -f -m reflink=1 $DEV ;;
	ext*)	mkfs.$fs -F -E lazy_itable_init=0 $DEV ;;
	*)	mkfs.$fs -f $DEV ;;
	esac
	case $MODE in
	cold)	echo 3 > /proc/sys/vm/drop_caches ;;
	esac
	mount $DEV $MNT
	time fs_mark -d $MNT/fsm -n 100000 -s 0 -t 8
	umount $MNT
done

xfs was about 5% faster, ext4 and btrfs the same.
";

/// `case $fs in xfs) …;; ext*) …;; *) …;; esac` inside `for fs in xfs ext4 btrfs`: the
/// loop is the matrix, each branch's mkfs a step with `when:` for the values its pattern
/// selects (globs and the `*` fallback included), so each point runs its own mkfs; a
/// `case` over a variable the post never sets is reported with its line, not run.
#[test]
fn case_branches_over_a_loop_variable_run_where_they_match() {
    let (d, e) = draft_of(CASE_POST);
    let by_point = setup_by_point(&e);
    let ids: Vec<&str> = by_point.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(ids, ["fs=xfs", "fs=ext4", "fs=btrfs"], "{by_point:?}");
    for (point, runs) in &by_point {
        let mkfs: Vec<&String> = runs.iter().filter(|r| r.contains("mkfs")).collect();
        assert_eq!(mkfs.len(), 1, "{point}: {runs:?}");
        let want = match point.as_str() {
            "fs=xfs" => "mkfs.xfs -f -m reflink=1 {{dev.data}}",
            "fs=ext4" => "mkfs.{{fs}} -F -E lazy_itable_init=0 {{dev.data}}",
            _ => "mkfs.{{fs}} -f {{dev.data}}",
        };
        assert!(mkfs[0].contains(want), "{point}: {mkfs:?}");
    }
    note_at(&d, 17, NoteKind::Recognised, "`when: { fs: [ext4] }`");
    note_at(&d, 18, NoteKind::Recognised, "`*)` branch");
    note_at(
        &d,
        21,
        NoteKind::Unmapped,
        "$MODE is neither a matrix axis nor set",
    );
    assert!(format!("{:?}", e.def.workload.run).contains("{{fs_mark}} -d {{mnt}}/fsm"));
    // the umount after the workload is the teardown's, not a setup step before it
    assert!(by_point
        .iter()
        .all(|(_, runs)| runs.iter().all(|r| !r.contains("umount"))));
}

pub(crate) const FUNCTION_POST: &str = "xfs: test parent pointer overhead

Here is the script I used:

#!/bin/sh

DEV=/dev/sdb
MNT=/mnt/scratch

run_test()
{
	mkfs.xfs -f -n parent=$1 $DEV
	mount $DEV $MNT
	mkdir -p $MNT/foo
	time fsstress -d $MNT/foo -n 100000 -p 4 -s 1
	umount $MNT
}

cleanup() {
	rm -rf $MNT/foo
}

run_test 0
run_test 1

Results:

parent=0:
real	0m18.920s
user	0m1.020s
sys	0m31.450s

parent=1:
real	0m20.310s
user	0m1.050s
sys	0m33.780s
";

/// `run_test()` defined after blank lines in a `#!/bin/sh` script and called as
/// `run_test 0` / `run_test 1`: the body is inlined with `$1` bound, the two calls are the
/// matrix `parent: [0, 1]` (named from `-n parent=$1`), the timed fsstress the workload;
/// `cleanup()`, never called, is reported; the calls are commands, not prose numbers.
#[test]
fn shell_functions_are_inlined_at_their_calls() {
    let (d, e) = draft_of(FUNCTION_POST);
    assert_eq!(
        e.def.matrix.keys().collect::<Vec<_>>(),
        ["parent"],
        "{:?}",
        e.def.matrix
    );
    let by_point = setup_by_point(&e);
    assert_eq!(by_point.len(), 2);
    assert!(by_point[0].1[0].contains("mkfs.xfs -f -n parent={{parent}} {{dev.data}}"));
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{fsstress}} -d {{mnt}}/foo -n 100000 -p 4 -s 1"),
        "{w}"
    );
    note_at(&d, 15, NoteKind::Recognised, "workload: line 15: fsstress");
    note_at(&d, 19, NoteKind::Unmapped, "`cleanup` is never called");
    note_at(&d, 23, NoteKind::Recognised, "matrix axis `parent`");
    assert!(
        !d.rows.iter().any(|r| r.line == 23 || r.line == 24),
        "the calls are not numbers: {:#?}",
        d.rows
    );
    // `parent=0:` on the line above its `time` block
    assert_eq!(
        row_settings(&d, 29, "0m18.920s"),
        [s("parent", "0"), s("run", "1")]
    );
    assert_eq!(
        row_settings(&d, 34, "0m20.310s"),
        [s("parent", "1"), s("run", "1")]
    );
}

pub(crate) const HEREDOC_POST: &str =
    "Subject: [PATCH] ext4: avoid lock contention in random writes

This reduces contention on the i_data_sem in the write path.

Test setup on a 32-core machine with an NVMe drive:

  # mkfs.ext4 -F /dev/nvme0n1
  # mount -o noatime /dev/nvme0n1 /mnt/test
  # cat > randwrite.fio <<EOF
  [global]
  ioengine=libaio
  direct=1
  bs=4k
  size=1g
  iodepth=32
  directory=/mnt/test
  [job1]
  rw=randwrite
  numjobs=16
  EOF
  # fio randwrite.fio

and for reads the job goes to fio on its stdin:

  # fio --output-format=normal - <<-'END'
	[randread]
	rw=randread
	bs=4k
	size=1g
	directory=/mnt/test
	END

Without the patch:
  write: IOPS=412k, BW=1609MiB/s (1687MB/s)(16.0GiB/10183msec)

With the patch:
  write: IOPS=520k, BW=2031MiB/s (2130MB/s)(16.0GiB/8066msec)
";

/// `cat > randwrite.fio <<EOF … EOF` then `fio randwrite.fio`: the job file is a setup step
/// that writes it (`sh -c` with the here-document, the mount point as `{{mnt}}`), its lines
/// are neither commands nor the post's numbers; `fio - <<-'END'` gets its job written to a
/// file and named. The fio results take the label on the line above them.
#[test]
fn here_documents_are_files_the_script_writes() {
    let (d, e) = draft_of(HEREDOC_POST);
    let setup: Vec<String> = e
        .def
        .setup
        .iter()
        .filter_map(|s| s.run.as_ref().map(|r| format!("{r:?}")))
        .collect();
    let write = setup
        .iter()
        .find(|r| r.contains("cat > randwrite.fio <<'EOF'"))
        .unwrap_or_else(|| panic!("{setup:?}"));
    assert!(write.contains("[global]\\nioengine=libaio"), "{write}");
    assert!(write.contains("directory={{mnt}}\\n"), "{write}");
    assert!(write.contains("numjobs=16\\nEOF"), "{write}");
    assert!(setup
        .iter()
        .any(|r| r.contains("cat > heredoc-26.fio <<'END'\\n[randread]\\nrw=randread")));
    assert!(format!("{:?}", e.def.workload.run).contains("{{fio}} randwrite.fio"));
    assert!(
        format!("{:?}", e.def.capture).contains("{{fio}} --output-format=normal heredoc-26.fio")
    );
    note_at(&d, 9, NoteKind::Recognised, "a here-document (lines 10–19)");
    // the job file's lines are not numbers of the post
    assert!(
        !d.rows.iter().any(|r| (10..=31).contains(&r.line)),
        "{:#?}",
        d.rows
    );
    assert_eq!(
        row_settings(&d, 34, "IOPS=412k"),
        [s("direction", "write"), s("row", "Without the patch")]
    );
    assert_eq!(
        row_settings(&d, 37, "BW=2031MiB/s"),
        [s("direction", "write"), s("row", "With the patch")]
    );
}

/// Liu Bo's commit message: `a) without patch:  (*SPEED* : 451.01Kb/sec)` names its row, and
/// `112.75 Requests/sec executed` on the line below belongs to it; a sentence ending with `:`
/// above a number is no label.
#[test]
fn a_result_label_on_the_line_above_heads_its_numbers() {
    let text = outside("btrfs-csum-treelog.txt");
    let (d, _) = draft_of(&text);
    assert_eq!(
        row_settings(&d, 37, "112.75 Requests/sec"),
        [s("row", "a) without patch")]
    );
    assert_eq!(
        row_settings(&d, 40, "1216.84 Requests/sec"),
        [s("row", "b) with patch")]
    );
    // not from prose: a sentence, a generic heading, a blank line in between
    let post = "Subject: [PATCH] xfs: faster unlink\n\nHere is what I got with the patch applied:\n  16.01 reqs/sec\nResults:\n  3.39 reqs/sec\nUnpatched:\n\n\n  2.00 reqs/sec\n\n  # fs_mark -d /mnt/x -n 1000\n";
    let d = fslab::import::import(post.as_bytes(), Some("p.eml")).unwrap();
    for (line, printed) in [
        (4, "16.01 reqs/sec"),
        (6, "3.39 reqs/sec"),
        (10, "2.00 reqs/sec"),
    ] {
        assert_eq!(row_settings(&d, line, printed), [], "line {line}");
    }
}

/// Darrick J. Wong's reply of 16 Dec 2025 (linux-xfs), a real mail that quotes earlier
/// messages' scripts two and four `>` deep: the least-quoted one (two deep: the
/// `benchme()` function, split by blank lines, inlined at its call in `for p in 0 1`, his
/// newer benchmark) is the draft, with a `# guess:` naming both scripts' lines; the older
/// `#!/bin/bash` script four deep (`for i in 1 0` over `parent=$i`, `time fsstress`) is
/// written as comments, each command with its line; the `/proc/mounts` line under a prompt
/// is output, not a program; a sentence that starts with `fs_mark` is prose, its numbers
/// kept; the table's cells are rows. Values listed by hand from reading the post.
#[test]
fn outside_reply_quoting_scripts_and_a_function() {
    let text = outside("xfs-pptr-benchme-reply.txt");
    let (d, e) = draft_of(&text);
    assert_eq!(d.id, "mkfs-enable-new-features-by-default");
    let p: Vec<String> = e.def.matrix["p"].iter().map(|v| v.to_string()).collect();
    assert_eq!(p, ["0", "1"]);
    assert!(!e.def.matrix.contains_key("parent"));
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("{{fs_mark}} -w"), "{w}");
    let yaml = d.yaml.as_deref().unwrap();
    for want in [
        "# guess: the workload is the least-quoted script's (lines 60–89, quoted 2 deep); the other at lines 28–40, quoted 4 deep, is written at the end as comments\nworkload:",
        "#   line 36: mkfs.xfs -f /dev/sdb -n parent=$i | grep -i parent=\n",
        "#   line 40: time fsstress -n 100000 -p 4 -z -f creat=1 -d /opt/foo -s 1\n",
    ] {
        assert!(yaml.contains(want), "{want}\n{yaml}");
    }
    note_at(
        &d,
        28,
        NoteKind::Unmapped,
        "another script of the post (lines 28–40, quoted 4 deep), not run",
    );
    note_at(&d, 28, NoteKind::Recognised, "a #! script");
    note_at(
        &d,
        60,
        NoteKind::Recognised,
        "`benchme`: its body is inlined where it is called (line 84)",
    );
    note_at(&d, 66, NoteKind::Recognised, "`fs_mark`: a `tools:` entry");
    assert!(
        !d.notes.iter().any(|n| n.what.contains("`nvme1n1`")),
        "a device path is no program: {:#?}",
        d.notes
    );
    assert!(!format!("{:?}", e.def.capture).contains("itself shows"));
    super::import::has_rows(
        &d,
        &[
            (113, 57.573, "s", "0m57.573s"),
            (114, 1514.81, "s", "25m14.810s"),
            (116, 1.122, "s", "0m1.122s"),
            (117, 39.847, "s", "0m39.847s"),
            (119, 789.566, "s", "13m9.566s"),
            (120, 72.505, "s", "1m12.505s"),
            (122, 9.0, "%", "about 9%"),
            (124, 28.0, "%", "about 28%"),
            (139, 3.0, "%", "3%"),
            (151, 56.0, "%", "about 56%"),
            (185, 3.0, "%", "~3%"),
        ],
    );
    assert_eq!(
        row_settings(&d, 113, "0m57.573s"),
        [s("row", "create"), s("column", "real")]
    );
}

/// A program fslab does not know, run at a prompt with arguments, is kept: it becomes a
/// `tools:` entry (which `fslab doctor` reports when missing) and its step, never dropped.
/// A heading or a comment after `#` stays prose.
#[test]
fn an_unknown_program_at_a_prompt_is_a_tool_never_dropped() {
    let (d, e) = draft_of(
        "Subject: unknown tools\n\nI ran:\n\n# sfdisk /dev/sdb\n# mkfs.xfs -f /dev/sdb1\n\
         # mount /dev/sdb1 /mnt\n$ frobnicate --fast /mnt\n\n\
         # Results\n# see /proc/meminfo for details\n\nand it took 5s.\n",
    );
    let tools: Vec<&String> = e.def.tools.keys().collect();
    assert!(
        tools.iter().any(|t| t.as_str() == "sfdisk")
            && tools.iter().any(|t| t.as_str() == "frobnicate"),
        "{tools:?}"
    );
    assert!(
        !tools
            .iter()
            .any(|t| ["see", "results"].contains(&t.as_str())),
        "{tools:?}"
    );
    let steps: Vec<String> = e
        .def
        .setup
        .iter()
        .chain(std::iter::once(&e.def.workload))
        .filter_map(|s| s.run.as_ref().map(|r| format!("{r:?}")))
        .collect();
    assert!(steps.iter().any(|r| r.contains("{{sfdisk}}")), "{steps:?}");
    assert!(
        steps
            .iter()
            .any(|r| r.contains("{{frobnicate}} --fast {{mnt}}")),
        "{steps:?}"
    );
    note_at(&d, 5, NoteKind::Recognised, "`sfdisk`");
}

/// A reply quoting a script whose commands run under `if … fi`, `&&` and `||`: each is a
/// step as at the top level, its condition a `# guess:` comment naming the line and the
/// test or command it depends on; a test heading a chain (`[ -d … ] ||`, `test -x … &&`)
/// is no step, nor is what a failure runs to stop (`|| exit 1`).
#[test]
fn commands_under_if_and_chains_in_a_quoted_script() {
    let post = "Subject: Re: [PATCH v2] ext4: faster fsync\n\nOn Tue, 4 Jun 2024, B Dev wrote:\n> Here is how I ran it:\n>\n>   if [ ! -d /mnt/scratch ]; then mkdir -p /mnt/scratch; fi\n>   mkfs.ext4 -F /dev/sdc && mount -o noatime /dev/sdc /mnt/scratch || exit 1\n>   [ -d /mnt/scratch/d ] || mkdir -p /mnt/scratch/d\n>   test -x /usr/bin/fio && time fio --name=w --rw=randwrite --bs=4k --size=1g --directory=/mnt/scratch/d --fsync=1\n>   if [ \"$TRACE\" = 1 ]; then\n>     xfs_io -c \"fiemap -v\" /mnt/scratch/d/w.0.0\n>   fi\n\nThanks, I see the same.\n";
    let (d, e) = draft_of(post);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains(
            "{{fio}} --name=w --rw=randwrite --bs=4k --size=1g --directory={{mnt}}/d --fsync=1"
        ),
        "{w}"
    );
    let yaml = d.yaml.as_deref().unwrap();
    for comment in [
        "# line 9: fio --name=w",
        "guess: the post runs it only under line 9: `test -x /usr/bin/fio &&`",
        "# line 8: mkdir -p /mnt/scratch/d; guess: the post runs it only under line 8: `[ -d /mnt/scratch/d ] ||`",
        "# line 7: mount -o noatime /dev/sdc /mnt/scratch; guess: the post runs it only under line 7: `mkfs.ext4 -F /dev/sdc &&`",
        "# line 11: xfs_io -c \"fiemap -v\" /mnt/scratch/d/w.0.0; guess: the post runs it only under line 10: if [ \"$TRACE\" = 1 ]",
    ] {
        assert!(yaml.contains(comment), "no {comment:?} in\n{yaml}");
    }
    assert!(yaml.contains("mkdir: \"{{mnt}}/d\""), "{yaml}");
    assert!(yaml.contains("options: \"noatime\""), "{yaml}");
    for not_a_step in ["exit", "test -x", "[ -d", "||"] {
        assert!(
            !yaml.contains(&format!("run: \"{not_a_step}"))
                && !yaml.contains(&format!("{not_a_step} 1\"")),
            "{not_a_step} in\n{yaml}"
        );
    }
    note_at(&d, 9, NoteKind::Guess, "`test -x /usr/bin/fio &&`");
    note_at(&d, 11, NoteKind::Guess, "if [ \"$TRACE\" = 1 ]");
}

/// Real replies that quote a reproducer script (see each fixture's SOURCE header). In
/// JeffleXu's reply on linux-ext4 the script's `exit` under `if [[ $status == 1 ]]` was the
/// draft's workload (and a `tools:` entry); `exit`, `return`, `break` and `continue` are no
/// steps, so the workload is `./check shared/298`, run 100 times by `for i in `seq 100``.
/// In Yang Shi's reply on linux-fsdevel, `done &` gave a workload `&`, and
/// ``FILE=`head /dev/urandom | tr …` `` was cut at its spaces into a command
/// `/dev/urandom | …` (a `tools:` entry `urandom`): a backquoted or `$(…)` command is one
/// word, `&` sends a command to the background (the draft runs it in turn), and a variable
/// set from a command's output is a "not mapped" message, never substituted.
#[test]
fn outside_replies_quoting_reproducer_scripts() {
    let (d, e) = draft_of(&outside("ext4-bigalloc-quoted-script.txt"));
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("\"./check shared/298\""), "{w}");
    assert_eq!(format!("{:?}", e.def.workload.times), "Some(Int(100))");
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        !yaml.contains("exit:") && !yaml.contains("{{exit}}"),
        "{yaml}"
    );
    // `echo y |` only answers mkfs's question: the step is mkfs itself (read as mke2fs
    // output), not an `echo` given `| mkfs.ext4 …` as arguments (issue 41, pattern 3)
    assert!(
        yaml.contains("run: \"mkfs.ext4 -O bigalloc -C 16K {{dev.data}}\"\n    parse: mke2fs"),
        "{yaml}"
    );
    assert!(
        yaml.contains("guess: the shell's `echo y |` is not carried (a step runs no shell)"),
        "{yaml}"
    );
    note_at(&d, 113, NoteKind::Guess, "if [[ $status == 1 ]]");

    let (d, e) = draft_of(&outside("fsdevel-shrinker-quoted-scripts.txt"));
    let yaml = d.yaml.as_deref().unwrap();
    // the draft's steps (the list of what to check at its end quotes the post)
    let steps = &yaml[..yaml.find("# What to check before").unwrap_or(yaml.len())];
    for bad in ["urandom", "\"&\"", "tool_:"] {
        assert!(!steps.contains(bad), "{bad} in\n{yaml}");
    }
    assert!(
        !format!("{:?}", e.def.workload.run).contains('&'),
        "{:?}",
        e.def.workload.run
    );
    for line in [30, 49, 56] {
        note_at(
            &d,
            line,
            NoteKind::Unmapped,
            "is set from a command's output",
        );
    }
    // the commands in the background loop are still steps
    assert!(yaml.contains("# line 57: cat $FILE 2>/dev/null"), "{yaml}");
}
