//! `fslab import` on scripts whose points differ by more than a value in one command: a
//! timed command in each branch of a `case` (`workload_variants`), a variable set per
//! `case` branch and used after it, here-strings (`<<<`), the same commands run twice with
//! several arguments changed, and fio's job options and results. The posts are written the
//! way such mails are; the fio one is checked against a real post too.

use super::import::{draft_of, note_at};
use fslab::import::NoteKind;
use fslab::plan::Phase;
use fslab::Plan;

/// Each point's commands in one phase, by point id.
fn by_point(e: &fslab::Experiment, phase: Phase) -> Vec<(String, Vec<String>)> {
    let plan = Plan::new(e, None, &[]).expect("plans");
    plan.points
        .iter()
        .map(|p| {
            let runs = plan
                .steps(p, phase)
                .iter()
                .filter_map(|s| s.run.as_ref().map(|r| format!("{r:?}")))
                .collect();
            (p.id.clone(), runs)
        })
        .collect()
}

pub(crate) const CASE_WORKLOAD_POST: &str = "From: Ann Tester <ann@example.org>
Subject: Re: [PATCH] ext4: skip the journal flush on fsync of new files
Date: Mon, 3 Mar 2025 09:10:11 +0100

I ran fs_mark with and without fsync on a fresh filesystem each time:

#!/bin/bash
for m in sync nosync; do
	mkfs.ext4 -F /dev/sdb
	mount /dev/sdb /mnt/scratch
	case $m in
	sync)	time fs_mark -d /mnt/scratch/fsm -n 10000 -s 4096 ;;
	nosync)	time fs_mark -d /mnt/scratch/fsm -n 10000 -s 4096 -S0 ;;
	esac
	umount /mnt/scratch
done
";

/// `case $m in sync) time fs_mark …;; nosync) time fs_mark … -S0;; esac` inside
/// `for m in sync nosync`: each branch's timed command is a `workload_variants` entry with
/// its `when:`, so each point times its own branch's command, as the post does.
#[test]
fn a_timed_command_in_each_case_branch_is_a_workload_variant() {
    let (d, e) = draft_of(CASE_WORKLOAD_POST);
    assert_eq!(e.def.workload_variants.len(), 2, "{:?}", d.yaml);
    let work = by_point(&e, Phase::Workload);
    let ids: Vec<&str> = work.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(ids, ["m=sync", "m=nosync"]);
    assert!(
        work[0].1[0].contains("{{fs_mark}} -d {{mnt}}/fsm -n 10000 -s 4096\""),
        "{work:?}"
    );
    assert!(
        work[1].1[0].contains("{{fs_mark}} -d {{mnt}}/fsm -n 10000 -s 4096 -S0\""),
        "{work:?}"
    );
    let yaml = d.yaml.as_deref().unwrap();
    assert!(yaml.contains("when: { m: [\"nosync\"] }"), "{yaml}");
    assert!(
        yaml.contains("every point runs its branch's entry of `workload_variants`"),
        "{yaml}"
    );
    note_at(&d, 12, NoteKind::Recognised, "a `workload_variants` entry");
    // the other branch's timed command is no capture step
    assert!(e.def.capture.is_empty(), "{:?}", e.def.capture);
    // the umount after the case is still the teardown's
    assert!(by_point(&e, Phase::Setup)
        .iter()
        .all(|(_, runs)| runs.iter().all(|r| !r.contains("umount"))));
}

pub(crate) const BRANCH_VAR_POST: &str =
    "Subject: [PATCH] ext4: faster block allocation for indirect-mapped files

Tested on the same disk with and without extents:

#!/bin/sh
for fs in ext3 ext4; do
	case $fs in
	ext3) opts=\"-O ^extent\" ;;
	ext4) opts=\"\" ;;
	esac
	mkfs.ext4 -F $opts /dev/sdb
	mount /dev/sdb /mnt
	time dd if=/dev/zero of=/mnt/f bs=1M count=1024 conv=fsync
	umount /mnt
done
";

pub(crate) const FLAGS_POST: &str = "Subject: Re: [PATCH] iomap: direct write speedup

Buffered against direct writes:

#!/bin/sh
for mode in buffered direct; do
	case $mode in
	buffered) flags=\"\" ;;
	direct) flags=\"--direct=1\" ;;
	esac
	time fio --name=w --rw=write --bs=1M --size=1g $flags --directory=/mnt
done
";

/// `case $fs in ext3) opts=\"-O ^extent\";; ext4) opts=\"\";; esac; mkfs.ext4 $opts …`:
/// the variable depends on the axis, so the mkfs is one step per branch with that
/// branch's value and its `when:`; used in the timed command, it gives one workload
/// variant per branch.
#[test]
fn a_variable_set_per_case_branch_gives_one_command_per_branch() {
    let (d, e) = draft_of(BRANCH_VAR_POST);
    let setup = by_point(&e, Phase::Setup);
    let ids: Vec<&str> = setup.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(ids, ["fs=ext3", "fs=ext4"]);
    for (point, runs) in &setup {
        let mkfs: Vec<&String> = runs.iter().filter(|r| r.contains("mkfs")).collect();
        assert_eq!(mkfs.len(), 1, "{point}: {runs:?}");
        let want = match point.as_str() {
            "fs=ext3" => "\"mkfs.ext4 -F -O ^extent {{dev.data}}\"",
            _ => "\"mkfs.ext4 -F {{dev.data}}\"",
        };
        assert!(mkfs[0].contains(want), "{point}: {mkfs:?}");
    }
    note_at(
        &d,
        11,
        NoteKind::Recognised,
        "$opts set in the branches of `case $fs`",
    );
    assert!(e.def.vars.is_empty(), "no var to fill in: {:?}", e.def.vars);
    // in the timed command: a workload variant per branch
    let (_, e) = draft_of(FLAGS_POST);
    let work = by_point(&e, Phase::Workload);
    let ids: Vec<&str> = work.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(ids, ["mode=buffered", "mode=direct"]);
    for (point, runs) in &work {
        assert_eq!(
            runs[0].contains("--direct=1"),
            point.contains("mode=direct"),
            "{point}: {runs:?}"
        );
    }
}

pub(crate) const HERESTRING_POST: &str = "Subject: [PATCH] debugfs: faster stats on big filesystems

  # mkfs.ext4 -F /dev/sdb
  # CMDS=\"stats\"
  # time debugfs /dev/sdb <<< \"$CMDS\"
  # debugfs -w /dev/sdb <<<'set_super_value mount_opts nodelalloc'
  # mount /dev/sdb /mnt
  # debugfs /dev/sdb <<< $'stat <2>\\nls -l /'

real	0m2.310s
user	0m0.120s
sys	0m1.020s
";

/// `cmd <<< \"text\"`, `<<<'text'`, `<<< $'a\\nb'`: the command is kept, its here-string is
/// its input (never a here-document that swallows the lines below), written in the draft
/// as a `sh -c` step with a here-document (`sh` has no `<<<`), a variable substituted.
#[test]
fn here_strings_are_the_command_input() {
    let (d, e) = draft_of(HERESTRING_POST);
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("\"sh\", \"-c\""), "{w}");
    assert!(
        w.contains("debugfs {{dev.data}} <<'EOF'\\nstats\\nEOF"),
        "{w}"
    );
    let capture = format!("{:?}", e.def.capture);
    assert!(
        capture.contains(
            "debugfs -w {{dev.data}} <<'EOF'\\nset_super_value mount_opts nodelalloc\\nEOF"
        ),
        "{capture}"
    );
    assert!(
        capture.contains("debugfs {{dev.data}} <<'EOF'\\nstat <2>\\nls -l /\\nEOF"),
        "{capture}"
    );
    assert!(!capture.contains("<<<"), "{capture}");
    note_at(&d, 5, NoteKind::Recognised, "a here-string");
    // the lines after it are still read: the mount, and the time block's numbers
    assert!(
        capture.contains("mount: Some(Device(\"data\"))"),
        "{capture}"
    );
    assert!(
        d.rows.iter().any(|r| r.printed == "0m2.310s"),
        "{:#?}",
        d.rows
    );
}

pub(crate) const RUNS_POST: &str = "Subject: Re: [PATCH] xfs: speed up directory block allocation

With 1k blocks, then with 4k blocks and 8k directory blocks:

# mkfs.xfs -f -b size=1k /dev/sdb
# mount /dev/sdb /mnt
# time fs_mark -d /mnt/fsm -n 100000 -s 0
real	1m2.310s
user	0m1.120s
sys	0m40.020s
# umount /mnt
# mkfs.xfs -f -b size=4k -n size=8k /dev/sdb
# mount /dev/sdb /mnt
# time fs_mark -d /mnt/fsm -n 100000 -s 0
real	0m52.100s
user	0m1.100s
sys	0m33.500s
";

/// The same prompt commands run twice, the mkfs differing in several arguments
/// (`-b size=1k`, then `-b size=4k -n size=8k`): one axis `variant` whose values name the
/// runs from the words that differ, the mkfs one step per value with its `when:`, the
/// shared mount and timed fs_mark once, the axis marked `guess:`. One word changed
/// (`-m crc=0` / `-m crc=1`) gives an axis named from it.
#[test]
fn runs_that_differ_in_several_arguments_are_an_axis_of_variants() {
    let (d, e) = draft_of(RUNS_POST);
    let vals: Vec<String> = e.def.matrix["variant"]
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(vals, ["size-1k", "size-4k_n_size-8k"]);
    let setup = by_point(&e, Phase::Setup);
    for (point, runs) in &setup {
        let mkfs: Vec<&String> = runs.iter().filter(|r| r.contains("mkfs")).collect();
        assert_eq!(mkfs.len(), 1, "{point}: {runs:?}");
        let want = if point.ends_with("size-1k") {
            "\"mkfs.xfs -f -b size=1k {{dev.data}}\""
        } else {
            "\"mkfs.xfs -f -b size=4k -n size=8k {{dev.data}}\""
        };
        assert!(mkfs[0].contains(want), "{point}: {mkfs:?}");
    }
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{fs_mark}} -d {{mnt}}/fsm -n 100000 -s 0"),
        "{w}"
    );
    assert!(e.def.workload_variants.is_empty());
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains("variant: [\"size-1k\", \"size-4k_n_size-8k\"]  # line 5: guess: the post runs the same 4 commands 2 times (line 5, line 12)"),
        "{yaml}"
    );
    note_at(&d, 5, NoteKind::Guess, "matrix axis `variant`");
    // both time blocks are still the post's numbers
    assert!(d.rows.iter().any(|r| r.printed == "0m52.100s"));
    // one word changed: an axis named from it
    let post = RUNS_POST
        .replace("-b size=1k", "-m crc=0")
        .replace("-b size=4k -n size=8k", "-m crc=1");
    let (_, e) = draft_of(&post);
    let vals: Vec<String> = e.def.matrix["crc"].iter().map(|v| v.to_string()).collect();
    assert_eq!(vals, ["0", "1"]);
    assert!(format!("{:?}", e.def.setup).contains("mkfs.xfs -f -m crc={{crc}} {{dev.data}}"));
}

pub(crate) const FIO_JOB_POST: &str =
    "Subject: [PATCH] ext4: avoid lock contention in random writes

The job file:

[global]
ioengine=libaio
direct=1
bs=4k
size=1g
iodepth=32
directory=/mnt/test

[randwrite]
rw=randwrite
numjobs=16

  # mkfs.ext4 -F /dev/nvme0n1
  # mount /dev/nvme0n1 /mnt/test
  # fio randwrite.fio

Without the patch:
randwrite: (groupid=0, jobs=16): err= 0: pid=4242: Mon Jun  3 10:00:00 2024
  write: IOPS=412k, BW=1609MiB/s (1687MB/s)(16.0GiB/10183msec)
    clat (usec): min=3, max=2212, avg=37.61, stdev=12.01

With the patch:
randwrite: (groupid=0, jobs=16): err= 0: pid=4250: Mon Jun  3 10:05:00 2024
  write: IOPS=520k, BW=2031MiB/s (2130MB/s)(16.0GiB/8066msec)
    clat (usec): min=3, max=1906, avg=29.80, stdev=9.12
";

/// A fio job file shown in the post (`[global]` and `[randwrite]` sections) and run as
/// `fio randwrite.fio`: the draft's workload is fio with the job's options on its command
/// line (global ones first, `--name=randwrite` and its own after), the directory as
/// `{{mnt}}`; the job lines are neither shell nor the post's numbers. fio's results take
/// the job's name and options and the label above them; the job header and the latency
/// lines are fio's, not prose numbers.
#[test]
fn a_fio_job_file_gives_the_workload_options_and_labels_its_results() {
    let (d, e) = draft_of(FIO_JOB_POST);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{fio}} --ioengine=libaio --direct=1 --bs=4k --size=1g --iodepth=32 --directory={{mnt}} --name=randwrite --rw=randwrite --numjobs=16"),
        "{w}"
    );
    assert!(e.def.vars.is_empty(), "{:?}", e.def.vars);
    note_at(
        &d,
        5,
        NoteKind::Recognised,
        "a fio job file: its options are the options of `fio randwrite.fio` (line 19)",
    );
    let job = |printed: &str| {
        d.rows
            .iter()
            .find(|r| r.printed == printed)
            .map(|r| (r.line, r.value, r.unit.clone(), r.settings.clone()))
            .unwrap_or_else(|| panic!("no row {printed}: {:#?}", d.rows))
    };
    let s = |k: &str, v: &str| (k.to_string(), v.to_string());
    let want = |row: &str| {
        vec![
            s("direction", "write"),
            s("job", "randwrite"),
            s("rw", "randwrite"),
            s("bs", "4k"),
            s("iodepth", "32"),
            s("numjobs", "16"),
            s("row", row),
        ]
    };
    assert_eq!(
        job("IOPS=412k"),
        (23, 412000.0, "IOPS".into(), want("Without the patch"))
    );
    assert_eq!(
        job("BW=2031MiB/s"),
        (28, 2031.0, "MiB/s".into(), want("With the patch"))
    );
    // the job file's lines and the header are no numbers of the post
    let lines: Vec<usize> = d.rows.iter().map(|r| r.line).collect();
    for l in [8, 9, 10, 22, 27] {
        assert!(!lines.contains(&l), "line {l}: {:#?}", d.rows);
    }
    // the clat lines are fio's latencies, labelled like the results above them
    let mut clat = want("Without the patch");
    clat.insert(6, s("statistic", "avg"));
    assert_eq!(job("avg=37.61"), (24, 37.61, "us".into(), clat));
    assert_eq!(job("max=1906").0, 29);
    // a job file and no fio command: the draft runs fio with its options, a guess
    let post = FIO_JOB_POST.replace("  # fio randwrite.fio\n", "");
    let (d, e) = draft_of(&post);
    assert!(format!("{:?}", e.def.workload.run).contains("{{fio}} --ioengine=libaio"));
    note_at(&d, 5, NoteKind::Guess, "no fio command");
}

/// Ankit Jain's mail (linux-kernel, 2012), real: fio 2's `read : io=…, bw=618740 B/s,
/// iops=151 , runt=169006msec` lines under `**Unpatched**` and `**Patched**` give rows of
/// IOPS, bandwidth and runtime with the direction and the label; the `slat` lines are
/// fio's. Values listed by hand from reading the post.
#[test]
fn outside_fio_2_output_with_emphasis_labels() {
    let text = super::import::outside("aio-io-submit-fio2.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.txt")).expect("imports");
    let got = |line: usize, q: &str| {
        d.rows
            .iter()
            .find(|r| r.line == line && r.quantity == q && r.group == "fio")
            .map(|r| (r.value, r.unit.clone(), r.settings.clone()))
            .unwrap_or_else(|| panic!("no {q} at line {line}: {:#?}", d.rows))
    };
    let s = |k: &str, v: &str| (k.to_string(), v.to_string());
    for (line, dir, row, iops, bw, runt) in [
        (36, "read", "Unpatched", 151.0, 618740.0, 169006.0),
        (39, "write", "Unpatched", 151.0, 622133.0, 169006.0),
        (43, "read", "Patched", 123.0, 504885.0, 208627.0),
        (46, "write", "Patched", 122.0, 500330.0, 208627.0),
    ] {
        let settings = vec![s("direction", dir), s("row", row)];
        assert_eq!(got(line, "iops"), (iops, "IOPS".into(), settings.clone()));
        assert_eq!(got(line, "bandwidth"), (bw, "B/s".into(), settings.clone()));
        assert_eq!(got(line, "runtime"), (runt, "ms".into(), settings));
    }
    // the slat lines: fio 2's submission latencies, in µs, with the direction and label
    for (line, dir, row, avg) in [
        (37, "read", "Unpatched", 6571.88),
        (40, "write", "Unpatched", 24.66),
        (44, "read", "Patched", 1.65),
        (47, "write", "Patched", 1.85),
    ] {
        let r = d
            .rows
            .iter()
            .find(|r| r.line == line && r.quantity == "slat" && r.printed.starts_with("avg="))
            .unwrap_or_else(|| panic!("no slat avg at line {line}: {:#?}", d.rows));
        assert_eq!(
            (r.value, r.unit.as_str(), r.settings.clone()),
            (
                avg,
                "us",
                vec![s("direction", dir), s("statistic", "avg"), s("row", row)]
            )
        );
    }
}

/// Runs that differ only in an option one gives and the other leaves out are one axis
/// with `""` for "left out" (issue 41, pattern 4): dd run plain and with `conv=fdatasync`
/// (each writing its own numbered file) gives `conv: ["", fdatasync]`, a `mount` with and
/// without `-o discard` gives `mount_options: ["", discard]`. The measured command is the
/// one whose output the post shows with its numbers (pattern 2), not a later example dd
/// that wipes a disk.
#[test]
fn an_option_given_in_one_run_and_left_out_in_another_is_one_axis() {
    let post = "Subject: write cache on my new SSD\n\nAt the prompt, in the mounted test directory:\n\n    [me@desk bench]# dd if=/dev/zero of=run1.dat bs=1M count=256\n    256+0 records in\n    256+0 records out\n    268435456 bytes (268 MB) copied, 0.31 s, 866 MB/s\n    [me@desk bench]# dd if=/dev/zero of=run2.dat bs=1M count=256 conv=fdatasync\n    256+0 records in\n    256+0 records out\n    268435456 bytes (268 MB) copied, 2.4 s, 112 MB/s\n\nTo wipe a stick first I use:\n\n    dd if=/dev/zero of=/dev/sdd bs=4096 count=512\n    mount /dev/sdd1 /bench\n";
    let (d, e) = draft_of(post);
    let yaml = d.yaml.as_deref().unwrap();
    let conv: Vec<String> = e.def.matrix["conv"].iter().map(|v| v.to_string()).collect();
    assert_eq!(conv, ["", "fdatasync"], "{yaml}");
    let runs: Vec<String> = std::iter::once(&e.def.workload)
        .chain(&e.def.workload_variants)
        .map(|s| format!("{:?}", s.run))
        .collect();
    assert!(
        runs.iter()
            .any(|r| r.contains("\"conv=fdatasync\"") && r.contains("{{mnt}}")),
        "{yaml}"
    );
    assert!(runs.iter().all(|r| !r.contains("{{dev.")), "{yaml}");

    let post = "Subject: discard and untar time\n\n# mkfs.ext4 -F /dev/sdc\n# mount /dev/sdc /mnt/t\n# time tar xf /root/src.tar -C /mnt/t\nreal 0m41.2s\nuser 0m1.1s\nsys 0m9.0s\n# umount /mnt/t\n# mkfs.ext4 -F /dev/sdc\n# mount -o discard /dev/sdc /mnt/t\n# time tar xf /root/src.tar -C /mnt/t\nreal 0m58.9s\nuser 0m1.2s\nsys 0m9.4s\n";
    let (d, e) = draft_of(post);
    let yaml = d.yaml.as_deref().unwrap();
    let opts: Vec<String> = e.def.matrix["mount_options"]
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(opts, ["", "discard"], "{yaml}");
    assert!(!e.def.matrix.contains_key("variant"), "{yaml}");
}
