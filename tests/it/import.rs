//! `fslab import` on the three seed posts (`data/published/posts/`): the draft loads and
//! plans, its matrix, workload and repetition match the hand-written experiment's core,
//! and its published CSV holds ≥ 95 % of the hand-made CSV's values (equal value, same
//! unit, each hand-made row matched by a row of its own); plus empty, binary, oversized
//! and command-less input, and mutated posts fed to the importer.

use fslab::import::NoteKind;
use fslab::spec::Value;
use fslab::Experiment;
use polars::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn post(seed: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/published/posts");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(seed))
        .unwrap()
}

fn fslab(args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        let mut s = child.stdin.take().unwrap();
        let _ = s.write_all(input);
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

struct Imported {
    _dir: tempfile::TempDir,
    yaml: PathBuf,
    csv: PathBuf,
    stdout: String,
}

fn import(seed: &str) -> Imported {
    let dir = tempfile::tempdir().unwrap();
    let p = post(seed);
    let out = fslab(
        &[
            "import",
            p.to_str().unwrap(),
            "-o",
            dir.path().to_str().unwrap(),
            "--explain",
        ],
        None,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = |ext: &str| {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.to_string_lossy().ends_with(ext)
                    && !(ext == ".yaml" && p.to_string_lossy().ends_with(".csv"))
            })
            .unwrap_or_else(|| panic!("no {ext} written"))
    };
    let (yaml, csv) = (file(".yaml"), file(".published.csv"));
    Imported {
        _dir: dir,
        yaml,
        csv,
        stdout,
    }
}

fn values_units(df: &DataFrame) -> Vec<(f64, String)> {
    let v = df.column("value").unwrap().f64().unwrap().clone();
    let u = df.column("unit").unwrap().str().unwrap().clone();
    (0..df.height())
        .filter_map(|i| Some((v.get(i)?, u.get(i).unwrap_or("").to_string())))
        .collect()
}

/// The hand-made rows (value, unit) that the import has no row for, each import row
/// matching one hand-made row at most.
fn missed(hand: &[(f64, String)], ours: &[(f64, String)]) -> Vec<(f64, String)> {
    let mut used = vec![false; ours.len()];
    let mut miss = Vec::new();
    for (v, u) in hand {
        let hit = ours
            .iter()
            .enumerate()
            .position(|(i, (w, x))| !used[i] && x == u && (v - w).abs() <= 1e-9 * v.abs().max(1.0));
        match hit {
            Some(i) => used[i] = true,
            None => miss.push((*v, u.clone())),
        }
    }
    miss
}

fn recovery(seed: &str, hand_file: &str, imp: &Imported) {
    let hand = fslab::published::load_from(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/published")
            .join(hand_file),
    )
    .unwrap();
    let ours =
        fslab::published::load_from(&imp.csv).expect("the imported CSV loads as published data");
    let (h, o) = (values_units(&hand), values_units(&ours));
    let miss = missed(&h, &o);
    let share = 1.0 - miss.len() as f64 / h.len() as f64;
    assert!(
        share >= 0.95,
        "seed {seed}: {:.1} % of {} values recovered; missed: {miss:?}",
        share * 100.0,
        h.len()
    );
}

fn exp(imp: &Imported) -> Experiment {
    let e = Experiment::load(&imp.yaml)
        .unwrap_or_else(|e| panic!("{e}\n{}", std::fs::read_to_string(&imp.yaml).unwrap()));
    fslab::Plan::new(&e, None, &[]).unwrap_or_else(|e| panic!("plan: {e}"));
    e
}

fn axis(e: &Experiment, name: &str) -> Vec<String> {
    let mut v: Vec<String> = e
        .def
        .matrix
        .get(name)
        .unwrap_or_else(|| panic!("no axis {name}: {:?}", e.def.matrix))
        .iter()
        .map(Value::to_string)
        .collect();
    v.sort();
    v
}

/// The row of the CSV with this printed text: (line, settings as `k=v` text).
fn row_line(imp: &Imported, printed: &str) -> Vec<(i64, String)> {
    let text = std::fs::read_to_string(&imp.csv).unwrap();
    let mut rdr = text.lines();
    let head: Vec<&str> = rdr.next().unwrap().split(',').collect();
    let line_col = head.iter().position(|h| *h == "line").unwrap();
    let df = fslab::published::load_from(&imp.csv).unwrap();
    let printed_col = df.column("printed").unwrap().str().unwrap().clone();
    let lines = df.column(head[line_col]).unwrap().str().unwrap().clone();
    let run = df.column("run").ok().map(|c| c.i64().unwrap().clone());
    let parent = df.column("parent").ok().map(|c| c.i64().unwrap().clone());
    let mut out = Vec::new();
    for i in 0..df.height() {
        if printed_col.get(i) == Some(printed) {
            let s = format!(
                "parent={:?} run={:?}",
                parent.as_ref().and_then(|p| p.get(i)),
                run.as_ref().and_then(|r| r.get(i))
            );
            out.push((lines.get(i).unwrap().parse().unwrap(), s));
        }
    }
    out
}

#[test]
fn seed_000_parent_pointers() {
    let imp = import("000");
    let e = exp(&imp);
    assert_eq!(axis(&e, "parent"), ["0", "1"]);
    let w = &e.def.workload;
    let run = format!("{:?}", w.run);
    assert!(run.contains("-n 400000 -p 4 -z -f creat=1,mkdir=1,mknod=1,rmdir=1,unlink=1,link=1,rename=1 -d {{mnt}}/foo -s 1"), "{run}");
    assert!(format!("{:?}", w.repeat).contains("10"), "{:?}", w.repeat);
    assert!(
        e.def.tools.contains_key("fsstress"),
        "fsstress becomes a tools: entry"
    );
    let setup = format!("{:?}", e.def.setup);
    assert!(setup.contains("-n parent={{parent}}"), "{setup}");
    recovery("000", "000_xfs_parent_pointers.csv", &imp);
    // numbers traced to their lines, with the script argument and the run
    assert_eq!(
        row_line(&imp, "0m18.807s"),
        [(46, "parent=Some(0) run=Some(1)".to_string())]
    );
    assert_eq!(
        row_line(&imp, "1m4.441s"),
        [(103, "parent=Some(1) run=Some(1)".to_string())]
    );
    assert_eq!(
        row_line(&imp, "0m20.458s"),
        [(159, "parent=Some(1) run=Some(1)".to_string())]
    );
    let claims = &e.def.claims;
    assert!(claims.iter().all(|c| c.draft));
    assert!(claims.iter().any(|c| c
        .quote
        .as_deref()
        .is_some_and(|q| q.contains("not much of a difference"))));
    assert!(claims.iter().any(|c| c
        .quote
        .as_deref()
        .is_some_and(|q| q.contains("between negligible and 10%"))));
    assert!(
        imp.stdout.contains("   28  recognised  workload"),
        "{}",
        imp.stdout
    );
}

#[test]
fn seed_003_rt_truncate() {
    let imp = import("003");
    let e = exp(&imp);
    assert_eq!(
        axis(&e, "rtextsize"),
        ["1024k", "16k", "256k", "32k", "64k", "8k"]
    );
    let w = &e.def.workload;
    assert!(
        format!("{:?}", w.run).contains(r#"xfs_io -c \"truncate 4k\" {{mnt}}/{{i}}"#),
        "{:?}",
        w.run
    );
    assert!(format!("{:?}", w.times).contains("1000"));
    assert!(e.def.devices.contains_key("rt") && e.def.devices.contains_key("data"));
    let setup = format!("{:?}", e.def.setup);
    assert!(
        setup.contains("rtdev={{dev.rt}},extsize={{rtextsize}} {{dev.data}}"),
        "{setup}"
    );
    recovery("003", "003_xfs_rt_truncate.csv", &imp);
    let (line, _) = row_line(&imp, "9.601s")[0];
    let (line2, _) = row_line(&imp, "10.526s")[0];
    assert_eq!((line, line2), (66, 67));
    let yaml = std::fs::read_to_string(&imp.yaml).unwrap();
    assert!(yaml.contains("guess: the post does not give the size of /dev/pmem2s"));
    assert!(e.def.claims.iter().any(|c| c
        .quote
        .as_deref()
        .is_some_and(|q| q.contains("no much difference"))));
}

#[test]
fn seed_001_fsck() {
    let imp = import("001");
    let e = exp(&imp);
    assert!(format!("{:?}", e.def.workload.run).contains("fsck -f"));
    assert!(e.def.tools.contains_key("fs_mark"));
    recovery("001", "001_ext_fsck_small_files.csv", &imp);
    let yaml = std::fs::read_to_string(&imp.yaml).unwrap();
    assert!(
        yaml.contains("\"1TB\""),
        "the device size from \"a 1TB Seagate drive\"\n{yaml}"
    );
    assert!(e.def.claims.iter().any(|c| c
        .quote
        .as_deref()
        .is_some_and(|q| q.contains("more than 10x faster"))));
}

#[test]
fn empty_binary_huge_and_commandless_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = fslab(&["import", "-", "-o", d], Some(b""));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("empty"));
    let o = fslab(
        &["import", "-", "-o", d],
        Some(b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00"),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("binary"));
    let big =
        "From a@b Mon Jan  1 00:00:00 2024\nSubject: x\n\nreal 0m1.0s\n".repeat(50 << 20 >> 6);
    let o = fslab(&["import", "-", "-o", d], Some(big.as_bytes()));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("larger than"));
    let o = fslab(
        &["import", "-", "-o", d],
        Some(b"Subject: thoughts\n\nWith the patch the run took about 12 minutes, 14% faster.\n"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no command in the post"));
    assert!(std::fs::read_dir(d).unwrap().all(|e| !e
        .unwrap()
        .path()
        .to_string_lossy()
        .ends_with(".yaml")));
}

/// Mutated seed posts: the importer never panics, and any draft it makes loads.
#[test]
fn fuzz_mutated_posts_never_panic_and_drafts_load() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut seeds: Vec<Vec<u8>> = ["000", "001", "003"]
        .iter()
        .map(|s| std::fs::read(post(s)).unwrap())
        .collect();
    // and the outside posts, with the shell, range and table forms they brought
    for f in [
        "btrfs-fast-fsync-sync-log.txt",
        "btrfs-csum-treelog.txt",
        "xfs-inode-cluster-v5.txt",
        "xfs-dirent-filetype.txt",
        "xfs-parent-pointer-speedup.txt",
        "xfs-pptr-benchme-reply.txt",
        "aio-io-submit-fio2.txt",
        "mm-per-zone-dirty-perf-stat.txt",
        "block-ioprio-fio-clat-prio.txt",
        "ext4-bigalloc-quoted-script.txt",
        "fsdevel-shrinker-quoted-scripts.txt",
        "null-blk-queue-rqs-iops.txt",
        "lkml-xfs-reiserfs-ext3-time.txt",
        // the posts of `import_world`: tables with units in headers, captions and notes,
        // `|` tables with several header lines, lore thread pages, wrapped commands
        "bfq-iops-mode-fio-table.txt",
        "btrfs-fsync-filter-extents-table.txt",
        "jbd-commit-writeout-before-after-columns.txt",
        "phoronix-forum-fs-table-units-in-header.txt",
        "btrfs-raid56-stripe-cache-dd.txt",
        "blk-mq-flush-throughput-percent.txt",
        "fsdevel-hot-track-reply-quoted-setup.txt",
        "cfq-slice-prose-from-to.txt",
        "ext2-create-speedup-prose.txt",
    ] {
        seeds.push(outside(f).into_bytes());
    }
    // and the posts with `case`, shell functions and here-documents
    for p in [
        super::import_shell::CASE_POST,
        super::import_shell::FUNCTION_POST,
        super::import_shell::HEREDOC_POST,
        super::import_variants::CASE_WORKLOAD_POST,
        super::import_variants::BRANCH_VAR_POST,
        super::import_variants::FLAGS_POST,
        super::import_variants::HERESTRING_POST,
        super::import_variants::RUNS_POST,
        super::import_variants::FIO_JOB_POST,
    ] {
        seeds.push(p.as_bytes().to_vec());
    }
    // and the posts written in the style of mailing-list replies (`cd`, counting loops)
    let styled = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/styled");
    let mut names: Vec<String> = std::fs::read_dir(&styled)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for f in names {
        seeds.push(super::import_dirs::styled(&f).into_bytes());
    }
    for round in 0..350 {
        let mut lines: Vec<Vec<u8>> = seeds[round % seeds.len()]
            .split(|b| *b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        for _ in 0..1 + next() % 6 {
            if lines.is_empty() {
                lines.push(Vec::new());
            }
            let n = lines.len();
            let i = (next() as usize) % n;
            match next() % 7 {
                0 => {
                    lines.remove(i);
                }
                1 => {
                    let l = lines[i].clone();
                    lines.insert(i, l);
                }
                2 => {
                    let j = (next() as usize) % n;
                    lines.swap(i, j);
                }
                3 => {
                    let l = &mut lines[i];
                    if !l.is_empty() {
                        let k = (next() as usize) % l.len();
                        l[k] = b"{}$\\=>\"'|;#~%x0 "[(next() % 16) as usize];
                    }
                }
                4 => lines.truncate(i.max(1)),
                5 => lines.insert(
                    i,
                    [
                        &b"> > for ((i=0;i<3;i++)); do time {{x}} $9 \\"[..],
                        &b"i=0; while [ $i -lt 4 ]; do sync; i=$((i+1)); done"[..],
                        &b"if [ -d /mnt ]; then mount /dev/sdb /mnt; else"[..],
                        &b"rtextsize from 8k to 1024k, with and without link=1 -> 3.2s->2.9s"[..],
                        &b"BLOCKS:\n(0-4):10-14, (IND):9\n..... x\nTOTAL: 6"[..],
                    ][(next() % 5) as usize]
                        .to_vec(),
                ),
                _ => {
                    let l = &mut lines[i];
                    let cut = (next() as usize) % (l.len() + 1);
                    l.truncate(cut);
                }
            }
        }
        let bytes = lines.join(&b'\n');
        let d = fslab::import::import(&bytes, Some("fuzz.txt"));
        if let Ok(d) = d {
            if let Some(y) = &d.yaml {
                Experiment::from_str_named(y, "fuzz.yaml").unwrap_or_else(|e| {
                    panic!("round {round}: a draft that does not load: {e}\n{y}")
                });
            }
        }
    }
}

/// Import a post given as text through the library; the draft must load and plan.
pub(crate) fn draft_of(text: &str) -> (fslab::import::Draft, Experiment) {
    let d = fslab::import::import(text.as_bytes(), Some("post.eml")).expect("imports");
    let yaml = d
        .yaml
        .clone()
        .unwrap_or_else(|| panic!("no draft: {:#?}", d.notes));
    let e =
        Experiment::from_str_named(&yaml, "post.yaml").unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    fslab::Plan::new(&e, None, &[]).unwrap_or_else(|e| panic!("plan: {e}\n{yaml}"));
    (d, e)
}

pub(crate) fn note_at(
    d: &fslab::import::Draft,
    line: usize,
    kind: fslab::import::NoteKind,
    has: &str,
) {
    assert!(
        d.notes
            .iter()
            .any(|n| n.line == line && n.kind == kind && n.what.contains(has)),
        "no {kind:?} note at line {line} with {has:?}: {:#?}",
        d.notes
    );
}

/// `while` counters, `if` blocks: the counter is the repetition, the `then` branch's
/// commands are steps with their condition as a `# guess:`, the `else` branch a message.
#[test]
fn while_counters_and_if_blocks() {
    let post = "Subject: [PATCH] xfs: faster creates\n\nHere is what I ran:\n\n#!/bin/sh\nif [ -d /mnt/scratch ]; then\n\tumount /mnt/scratch\nelse\n\tmkdir -p /mnt/scratch\nfi\nmkfs.xfs -f /dev/vdb\nmount /dev/vdb /mnt/scratch\nif [ \"$COLD\" = 1 ]; then echo 3 > /proc/sys/vm/drop_caches; fi\ni=0\nwhile [ $i -lt 10 ]; do\n\ttime fs_mark -d /mnt/scratch/d -n 100000 -s 0 -t 8\n\ti=$((i+1))\ndone\n\nreal 0m12.0s\nuser 0m1.0s\nsys 0m8.0s\n";
    let (d, e) = draft_of(post);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{fs_mark}} -d {{mnt}}/d -n 100000 -s 0 -t 8"),
        "{w}"
    );
    assert!(
        format!("{:?}", e.def.workload.repeat).contains("10"),
        "{:?}",
        e.def.workload.repeat
    );
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains("guess: the post runs it only under line 13: if [ \"$COLD\" = 1 ]"),
        "{yaml}"
    );
    note_at(
        &d,
        8,
        fslab::import::NoteKind::Unmapped,
        "mkdir -p /mnt/scratch",
    );
    note_at(
        &d,
        7,
        fslab::import::NoteKind::Guess,
        "if [ -d /mnt/scratch ]",
    );
    assert!(
        format!("{:?}", e.def.setup).contains("drop_caches: true")
            || yaml.contains("drop_caches: true")
    );
}

/// A setup script and a test script, and a prompt command next to an invoked script:
/// every command becomes a step of one draft, in the post's order, with a message.
#[test]
fn several_scripts_in_one_post() {
    let post = "Subject: ext4 mballoc numbers\n\nsetup.sh:\n\n#!/bin/bash\nmkfs.ext4 -F /dev/sdc\nmount /dev/sdc /mnt/t\n\nrun.sh:\n\n#!/bin/bash\nfor i in $(seq 1 5); do\n\ttime fio --name=w --rw=randwrite --bs=4k --size=1g --directory=/mnt/t\ndone\n\n# echo 3 > /proc/sys/vm/drop_caches\n# ./setup.sh\n# ./run.sh\nreal 0m30.5s\nuser 0m2.0s\nsys 0m10.0s\n";
    let (d, e) = draft_of(post);
    let setup = format!("{:?}", e.def.setup);
    assert!(setup.contains("mkfs.ext4 -F {{dev.data}}"), "{setup}");
    assert!(
        setup.to_lowercase().contains("dropcaches") || setup.contains("drop_caches"),
        "{setup}"
    );
    assert!(format!("{:?}", e.def.workload.repeat).contains('5'));
    assert!(format!("{:?}", e.def.workload.run).contains("--rw=randwrite"));
    note_at(
        &d,
        11,
        fslab::import::NoteKind::Recognised,
        "2 scripts in the post (lines 5, 11)",
    );
}

/// Ranges and changes in prose, and axes said in words: candidates written as `# guess:`
/// comments (never run), the changed numbers as `change` before/after rows.
#[test]
fn prose_ranges_changes_and_axes() {
    let post = "Subject: [PATCH] xfs: rt truncate\n\n# mkfs.xfs -f -r rtdev=/dev/pmem1 /dev/pmem0\n# time xfs_io -c 'truncate 4k' /mnt/f\n\nI tried rtextsize from 8k to 1024k, and fio from 1 to 16 threads.\nWith the patch the truncate time went from 12.5s to 9.6s; unlink 3.2s -> 2.9s.\nThis was with and without link=1, on v4 and v5 filesystems.\n";
    let (d, e) = draft_of(post);
    assert!(e.def.matrix.is_empty(), "candidates never enter the matrix");
    let yaml = d.yaml.as_deref().unwrap();
    for want in [
        "#   rtextsize: [\"8k\", \"1024k\"]  # line 6: guess: \"rtextsize from 8k to 1024k\" gives a range",
        "#   threads: [1, 16]  # line 6: guess: \"from 1 to 16 threads\"",
        "#   link: [1, 0]  # line 8: guess: \"with and without link=1\"",
        "#   filesystem: [\"v4\", \"v5\"]  # line 8: guess: \"v4 and v5 filesystems\"",
    ] {
        assert!(yaml.contains(want), "{want}\n{yaml}");
    }
    let change = |printed: &str| {
        d.rows
            .iter()
            .find(|r| r.printed == printed)
            .map(|r| (r.line, r.value, r.unit.clone(), r.settings.clone()))
    };
    let s = |w: &str| vec![("change".to_string(), w.to_string())];
    assert_eq!(change("12.5s"), Some((7, 12.5, "s".into(), s("before"))));
    assert_eq!(change("9.6s"), Some((7, 9.6, "s".into(), s("after"))));
    assert_eq!(change("3.2s"), Some((7, 3.2, "s".into(), s("before"))));
    assert_eq!(change("2.9s"), Some((7, 2.9, "s".into(), s("after"))));
    let from = d.rows.iter().find(|r| r.printed == "8k").unwrap();
    assert_eq!(from.settings, [("range".to_string(), "from".to_string())]);
    note_at(
        &d,
        8,
        fslab::import::NoteKind::Guess,
        "a matrix axis candidate `link: [1, 0]`",
    );
}

/// Seed 000's "If I remove the -flink=1 parameter" gives the `link` axis the hand-written
/// experiment adds.
#[test]
fn seed_000_link_axis_candidate() {
    let imp = import("000");
    let yaml = std::fs::read_to_string(&imp.yaml).unwrap();
    assert!(
        yaml.contains("#   link: [1, 0]  # line 149: guess: \"remove the -flink=1\""),
        "{yaml}"
    );
}

/// Seed 001's two debugfs block listings become rows of `001_dir_blocks.csv`'s schema:
/// every hand-made row, in order, with its fs, segment (head/tail around the post's
/// elision), entry, kind and ranges; the file loads as published data.
#[test]
fn seed_001_dir_blocks() {
    let imp = import("001");
    let path = std::fs::read_dir(imp.yaml.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".dir_blocks.csv"))
        .expect("a dir_blocks CSV");
    let cols = [
        "fs",
        "segment",
        "entry",
        "kind",
        "logical_start",
        "logical_end",
        "physical_start",
        "physical_end",
        "length",
        "printed",
        "seed",
        "message_id",
    ];
    let read = |p: &Path| -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(p).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let idx: Vec<usize> = cols
            .iter()
            .map(|c| {
                head.iter()
                    .position(|h| h == c)
                    .unwrap_or_else(|| panic!("{c}"))
            })
            .collect();
        lines
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                idx.iter().map(|i| f[*i].to_string()).collect()
            })
            .collect()
    };
    let hand =
        read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("data/published/001_dir_blocks.csv"));
    let ours = read(&path);
    assert_eq!(ours.len(), hand.len());
    for (o, h) in ours.iter().zip(&hand) {
        assert_eq!(o, h);
    }
    let df = fslab::published::load_from(&path).expect("loads as published data");
    let ext = fslab::published::extents_from(&df, 4096).unwrap();
    assert_eq!(ext.height(), hand.iter().filter(|r| r[3] == "data").count());
    assert!(
        imp.stdout
            .contains("a debugfs block listing (ext3): 69 rows"),
        "{}",
        imp.stdout
    );
}

/// A post saved under `tests/fixtures/import/outside/`, without its `#|` header lines.
pub(crate) fn outside(name: &str) -> String {
    fixture_post("outside", name)
}

/// A post saved under `tests/fixtures/import/DIR/`, without its `#|` header lines.
pub(crate) fn fixture_post(dir: &str, name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(dir)
        .join(name);
    std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("#|"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Each (value, unit, printed) of `want` is a row of the import, on its line.
pub(crate) fn has_rows(d: &fslab::import::Draft, want: &[(usize, f64, &str, &str)]) {
    for (line, v, unit, printed) in want {
        assert!(
            d.rows.iter().any(|r| r.line == *line
                && (r.value - v).abs() < 1e-9
                && r.unit == *unit
                && r.printed == *printed),
            "no row {v} {unit} ({printed}) at line {line}: {:#?}",
            d.rows
                .iter()
                .map(|r| (r.line, r.value, r.unit.clone(), r.printed.clone()))
                .collect::<Vec<_>>()
        );
    }
}

/// Filipe Manana's commit message: an indented test script (`for ((…))` over fallocate,
/// sysbench continued with `\`) and a "Without / With" result list in reqs/sec.
#[test]
fn outside_btrfs_commit_with_script_and_results() {
    let text = outside("btrfs-fast-fsync-sync-log.txt");
    let (d, e) = draft_of(&text);
    assert_eq!(d.id, "btrfs-avoid-syncing-log-in-the");
    assert_eq!(
        d.headers.from.as_deref(),
        Some("Filipe Manana <fdmanana@suse.com>")
    );
    // `cd /fs/sda2` (line 22) before the loop and sysbench: both run in the mount point,
    // where sysbench finds the 1024 files the loop made
    let in_mnt = |s: &fslab::spec::Step| match &s.run {
        Some(fslab::spec::CommandSpec::Argv(w))
            if w.get(4).map(String::as_str) == Some("{{mnt}}") =>
        {
            w[5..].join(" ")
        }
        other => panic!("not run in {{{{mnt}}}}: {other:?}"),
    };
    let w = in_mnt(&e.def.workload);
    assert!(
        w.starts_with("{{sysbench}} --test=fileio --max-requests=0 --num-threads=4"),
        "{w}"
    );
    assert!(w.ends_with("--file-num=1024 run"), "{w}");
    note_at(
        &d,
        22,
        NoteKind::Recognised,
        "the commands after it run in {{mnt}}",
    );
    assert!(e.def.tools.contains_key("sysbench"));
    let setup = format!("{:?}", e.def.setup);
    let fallocate = e
        .def
        .setup
        .iter()
        .find(|s| s.name.as_deref() == Some("fallocate"));
    assert_eq!(
        fallocate.map(in_mnt).as_deref(),
        Some("fallocate -l 67108864 testfile.{{i}}")
    );
    assert!(
        setup.contains("1024"),
        "the fallocate loop's 1024 files: {setup}"
    );
    has_rows(
        &d,
        &[
            (30, 16.01, "requests/s", "16.01 reqs/sec"),
            (31, 3.39, "requests/s", "3.39 reqs/sec"),
            (32, 16.04, "requests/s", "16.04 reqs/sec"),
        ],
    );
    let row = |l: usize| {
        d.rows
            .iter()
            .find(|r| r.line == l)
            .map(|r| r.settings.clone())
            .unwrap()
    };
    assert_eq!(
        row(31),
        [("row".to_string(), "With 3a8b36f378060d".to_string())]
    );
}

/// Liu Bo's commit message: a sysbench command between `===` lines and "without patch" /
/// "with patch" results in Kb/sec, Mb/sec and Requests/sec.
#[test]
fn outside_btrfs_commit_with_sysbench_results() {
    let text = outside("btrfs-csum-treelog.txt");
    let (d, e) = draft_of(&text);
    assert!(format!("{:?}", e.def.workload.run).contains("--file-test-mode=rndwr"));
    has_rows(
        &d,
        &[
            (36, 451.01, "Kb/s", "451.01Kb/sec"),
            (37, 112.75, "requests/s", "112.75 Requests/sec"),
            (39, 4.7533, "Mb/s", "4.7533Mb/sec"),
            (40, 1216.84, "requests/s", "1216.84 Requests/sec"),
            (34, 39.062, "Mb", "39.062Mb"),
        ],
    );
}

/// Dave Chinner's commit message: `time` output under "Unpatched, no CRCs:" and "With
/// dtype support patched in …", the command named as "Walking via ls -R".
#[test]
fn outside_xfs_commit_with_time_blocks() {
    let text = outside("xfs-dirent-filetype.txt");
    let (d, e) = draft_of(&text);
    assert!(format!("{:?}", e.def.workload.run).contains("ls -R"));
    has_rows(
        &d,
        &[
            (15, 199.886, "s", "3m19.886s"),
            (16, 396.96, "s", "6m36.960s"),
            (17, 1699.087, "s", "28m19.087s"),
            (24, 31.316, "s", "0m31.316s"),
            (25, 392.975, "s", "6m32.975s"),
            (26, 21.111, "s", "0m21.111s"),
            (27, 16000.0, "IOPS", "16,000 IOPS"),
        ],
    );
    let note = |l: usize| d.rows.iter().find(|r| r.line == l).unwrap().note.clone();
    assert!(note(15).starts_with("Unpatched, no CRCs"), "{}", note(15));
    assert!(
        note(24).starts_with("With dtype support patched in"),
        "{}",
        note(24)
    );
    note_at(
        &d,
        23,
        fslab::import::NoteKind::Recognised,
        "the same command as line 14",
    );
}

/// Dave Chinner's v4/v5/patched tables, headed `create bulkstat find+stat ls -R unlink`
/// with single spaces: every cell, with its row, column and table title; no command in the
/// post, so no draft (exit 1), only the numbers.
#[test]
fn outside_xfs_commit_with_before_after_tables() {
    let text = outside("xfs-inode-cluster-v5.txt");
    let d = fslab::import::import(text.as_bytes(), Some("xfs-inode-cluster-v5.txt")).unwrap();
    assert!(d.yaml.is_none());
    let wall = [
        ("v4", [237.0, 161.0, 173.0, 201.0, 299.0]),
        ("v5", [235.0, 163.0, 205.0, 31.0, 356.0]),
        ("patched", [234.0, 160.0, 182.0, 29.0, 317.0]),
    ];
    let sys = [
        ("v4", [2601.0, 2490.0, 1653.0, 1656.0, 2960.0]),
        ("v5", [2637.0, 2497.0, 1681.0, 20.0, 3216.0]),
        ("patched", [2613.0, 2451.0, 1658.0, 20.0, 3007.0]),
    ];
    let cols = ["create", "bulkstat", "find+stat", "ls -R", "unlink"];
    for (table, rows) in [("Wall time", wall), ("System time", sys)] {
        for (row, values) in rows {
            for (col, v) in cols.iter().zip(values) {
                let s = |k: &str, v: &str| (k.to_string(), v.to_string());
                let want = [s("table", table), s("row", row), s("column", col)];
                assert!(
                    d.rows
                        .iter()
                        .any(|r| r.value == v && r.unit == "s" && r.settings == want),
                    "{table} {row} {col} = {v}s"
                );
            }
        }
    }
    assert!(d
        .claims
        .iter()
        .any(|c| c.quote.contains("same or down across the board")));
}

/// Darrick Wong's commit message: a prompt session (`$ mkfs.xfs … -n parent=0`, `$ time
/// fs_mark …`, `$ time rm -rf ...`) with `time` output side by side under `parent=0
/// parent=1`: each cell a row with its column's setting, and `parent` an axis candidate.
#[test]
fn outside_xfs_commit_with_side_by_side_times() {
    let text = outside("xfs-parent-pointer-speedup.txt");
    let (d, e) = draft_of(&text);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{fs_mark}} -D 10000 -S 0 -n 100000 -s 0 -L 8"),
        "{w}"
    );
    assert!(
        e.def.devices.contains_key("log"),
        "logdev= gives a log device"
    );
    let p = |v: &str| vec![("parent".to_string(), v.to_string())];
    for (line, q, v, printed, parent) in [
        (34, "real_time", 57.573, "0m57.573s", "0"),
        (34, "real_time", 62.934, "1m2.934s", "1"),
        (35, "user_time", 233.578, "3m53.578s", "0"),
        (35, "user_time", 233.508, "3m53.508s", "1"),
        (36, "sys_time", 1184.44, "19m44.440s", "0"),
        (36, "sys_time", 1514.81, "25m14.810s", "1"),
        (40, "real_time", 59.649, "0m59.649s", "0"),
        (40, "real_time", 72.505, "1m12.505s", "1"),
        (41, "user_time", 41.196, "0m41.196s", "0"),
        (41, "user_time", 47.489, "0m47.489s", "1"),
        (42, "sys_time", 789.566, "13m9.566s", "0"),
        (42, "sys_time", 1233.844, "20m33.844s", "1"),
    ] {
        assert!(
            d.rows.iter().any(|r| r.line == line
                && r.quantity == q
                && (r.value - v).abs() < 1e-9
                && r.printed == printed
                && r.settings == p(parent)),
            "{q} {printed} parent={parent} at line {line}"
        );
    }
    has_rows(&d, &[(43, 28.0, "%", "28%")]);
    let yaml = d.yaml.as_deref().unwrap();
    assert!(
        yaml.contains("#   parent: [0, 1]  # line 32: guess:"),
        "{yaml}"
    );
}

/// Alex Lau's reply on linux-kernel (18 Mar 2003), real: `time` blocks under
/// `StPeter:/mnt/part2# time cp -rf …` prompts, one `real` line followed by the author's
/// words (`real 0m3.696s *************** so fast...`), which had made that time a prose
/// number and left its block without `real`. Each of the six blocks gives its real, user
/// and sys rows, labelled by its prompt.
#[test]
fn outside_time_block_with_words_after_the_time() {
    let d = fslab::import::import(
        outside("lkml-xfs-reiserfs-ext3-time.txt").as_bytes(),
        Some("post.eml"),
    )
    .expect("imports");
    let real: Vec<(usize, f64, &str)> = d
        .rows
        .iter()
        .filter(|r| r.quantity == "real_time")
        .map(|r| (r.line, r.value, r.printed.as_str()))
        .collect();
    assert_eq!(
        real,
        [
            (91, 63.501, "1m3.501s"),
            (97, 3.696, "0m3.696s"),
            (103, 89.697, "1m29.697s"),
            (117, 23.351, "0m23.351s"),
            (123, 1.297, "0m1.297s"),
            (129, 1.062, "0m1.062s"),
        ]
    );
    let at97: Vec<(&str, &str, &str)> = d
        .rows
        .iter()
        .filter(|r| r.line == 97)
        .map(|r| (r.group.as_str(), r.quantity.as_str(), r.note.as_str()))
        .collect();
    assert_eq!(
        at97,
        [(
            "time",
            "real_time",
            "StPeter:/mnt/part2# time cp -rf /usr/src/kernel-source-2.4.20 ./"
        )]
    );
    assert_eq!(d.rows.iter().filter(|r| r.group == "time").count(), 18);
    // its From is a Big5 `=?Big5?B?…?=` word: the ASCII of the name is kept, never the
    // encoded word (fslab carries no Big5 table)
    assert_eq!(
        d.headers.from.as_deref(),
        Some("Alex Lau <alexlau@thizgroup.com>")
    );
    assert!(d.csv.contains(",Alex Lau,"), "{}", d.csv);
    // hdparm's `64 MB in 1.60 seconds` on a line about the disk is no device size
    let yaml = d.yaml.as_deref().unwrap();
    assert!(!yaml.contains("64MB"), "{yaml}");
    assert!(yaml.contains("guess:"), "{yaml}");
}

/// Pratik Sampat's reply: `Vanilla 5.12-rc6` / `5.12-rc6 + with patchset applied` above
/// blocks of `Percpu: N kB` lines (a `# ./` prompt between). Each block's rows carry the
/// label above them and are measurements, not parameters.
#[test]
fn outside_named_value_blocks_take_the_label_above() {
    let text = outside("mm-percpu-depopulation-reply.txt");
    let (d, _) = draft_of(&text);
    let row = |line: usize| {
        d.rows
            .iter()
            .find(|r| r.line == line)
            .unwrap_or_else(|| panic!("no row at line {line}: {:#?}", d.rows))
    };
    for (line, value, label) in [
        (14, 1952.0, "Vanilla 5.12-rc6"),
        (16, 219648.0, "Vanilla 5.12-rc6"),
        (22, 72672.0, "5.12-rc6 + with patchset applied"),
        (30, 5888.0, "Vanilla 5.12-rc6"),
        (38, 119040.0, "5.12-rc6 + with patchset applied"),
    ] {
        let r = row(line);
        assert_eq!(r.value, value, "line {line}");
        assert_eq!(
            r.category,
            fslab::import::Category::Measurement,
            "line {line}"
        );
        assert!(
            r.settings.iter().any(|s| s.0 == "label" && s.1 == label),
            "line {line}: {:?}",
            r.settings
        );
        assert_eq!(r.note, label, "line {line}");
    }
    assert!(row(22).settings.contains(&("position".into(), "3".into())));
}

/// Ted Ts'o's ext4 commit message: fs_mark's result table before and after, with only
/// "vs." between them. The rows say which side they are (`change`), and `Files/sec` and
/// `FSUse%` in the header give the cells their units.
#[test]
fn outside_ext4_commit_with_fs_mark_tables_around_vs() {
    let text = outside("ext4-async-commit-fs-mark.txt");
    let (d, _) = draft_of(&text);
    let cell = |line: usize, column: &str| {
        d.rows
            .iter()
            .find(|r| r.line == line && r.settings.iter().any(|s| s.1 == column))
            .unwrap_or_else(|| panic!("no {column} at line {line}: {:#?}", d.rows))
    };
    for (line, when, files) in [(16, "before", 30.5), (21, "after", 45.8)] {
        let r = cell(line, "Files/sec");
        assert_eq!((r.value, r.unit.as_str()), (files, "/s"), "line {line}");
        assert!(
            r.settings.contains(&("change".into(), when.into())),
            "line {line}: {:?}",
            r.settings
        );
        let r = cell(line, "FSUse%");
        assert_eq!((r.value, r.unit.as_str()), (8.0, "%"), "line {line}");
        assert!(r.settings.contains(&("change".into(), when.into())));
    }
}
