//! `fslab stress`: determinism, summaries, the CLI. Plain temporary directories, no devices.

use fslab::stress::{self, Config, Op, Summary, Workers};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::process::Command;

const SEED_FREQS: &str = "creat=1,mkdir=1,mknod=1,rmdir=1,unlink=1,link=1,rename=1";

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fslab-test-published-")
        .tempdir()
        .unwrap()
}

/// Every entry under `root`: relative path, type, link count, and size (regular files) or
/// target length (symlinks), sorted.
fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let e = e.unwrap();
        let md = e.path().symlink_metadata().unwrap();
        let ft = md.file_type();
        let (kind, size) = if ft.is_dir() {
            ('d', 0)
        } else if ft.is_file() {
            ('f', md.len())
        } else if ft.is_symlink() {
            ('l', md.len())
        } else if ft.is_char_device() {
            ('c', 0)
        } else {
            ('?', 0)
        };
        let rel = e.path().strip_prefix(root).unwrap().display().to_string();
        out.push(format!("{rel} {kind} {} {size}", md.nlink()));
    }
    out
}

fn cfg(args: &str, dir: &Path) -> Config {
    let mut words = shell_words::split(args).unwrap();
    words.push("-d".into());
    words.push(dir.display().to_string());
    Config::from_args(&words).unwrap()
}

fn check_counts(s: &Summary, n: u64, p: u32) {
    assert_eq!(s.total_attempted(), n * u64::from(p), "{s}");
    for o in &s.ops {
        assert_eq!(o.attempted, o.succeeded + o.failed + o.skipped, "{}", o.op);
        assert_eq!(o.errors.values().sum::<u64>(), o.failed, "{}", o.op);
    }
    assert_eq!(
        s.total_attempted(),
        s.total_succeeded() + s.total_failed() + s.total_skipped()
    );
}

#[test]
fn same_seed_same_tree_different_seed_different_tree() {
    let (a, b, c) = (tempdir(), tempdir(), tempdir());
    let args = format!("-n 3000 -p 3 -z -f {SEED_FREQS},write=1,truncate=1,fsync=1,symlink=1 -s 7");
    let sa = stress::run(&cfg(&args, a.path())).unwrap();
    let sb = stress::run(&cfg(&args, b.path())).unwrap();
    let sc = stress::run(&cfg(&args.replace("-s 7", "-s 8"), c.path())).unwrap();
    let (la, lb, lc) = (listing(a.path()), listing(b.path()), listing(c.path()));
    assert!(la.len() > 1000, "only {} entries", la.len());
    assert_eq!(la, lb, "same seed, different trees");
    assert_ne!(la, lc, "different seeds, same tree");
    // The summaries agree too, except for the wall-clock time.
    assert_eq!(sa.ops, sb.ops);
    assert_eq!((sa.seed, sb.seed, sc.seed), (7, 7, 8));
    for s in [&sa, &sb, &sc] {
        check_counts(s, 3000, 3);
    }
    // fsstress layout: p0, p1, p2 at the top, and every type the ops make.
    let top: Vec<&String> = la.iter().filter(|l| !l.contains('/')).collect();
    assert_eq!(top.len(), 3);
    assert!(top
        .iter()
        .zip(["p0 d", "p1 d", "p2 d"])
        .all(|(l, w)| l.starts_with(w)));
    for kind in [" d ", " f ", " l "] {
        assert!(la.iter().any(|l| l.contains(kind)), "no {kind:?} entries");
    }
    // Only root makes character devices: the rest of the test runs either way.
    if crate::require::root(
        "stress::same_seed_same_tree_different_seed_different_tree (character devices)",
    ) {
        assert!(la.iter().any(|l| l.contains(" c ")), "no character devices");
    }
    // Hard links happened: some file has a link count above 1.
    assert!(la
        .iter()
        .any(|l| l.contains(" f ") && l.split(' ').nth(2) != Some("1")));
}

#[test]
fn same_seed_same_operation_sequence_per_process() {
    let (a, b) = (tempdir(), tempdir());
    let mut ca = cfg(&format!("-n 500 -p 2 -z -f {SEED_FREQS} -v -s 3"), a.path());
    let mut cb = cfg(&format!("-n 500 -p 2 -z -f {SEED_FREQS} -v -s 3"), b.path());
    ca.workers = Workers::Threads;
    cb.workers = Workers::Threads;
    let (mut la, mut lb, mut l1) = (Vec::new(), Vec::new(), Vec::new());
    stress::run_worker(&ca, 1, &mut la).unwrap();
    stress::run_worker(&cb, 1, &mut lb).unwrap();
    stress::run_worker(&ca, 0, &mut l1).unwrap();
    let (la, lb, l1) = (
        String::from_utf8(la).unwrap(),
        String::from_utf8(lb).unwrap(),
        String::from_utf8(l1).unwrap(),
    );
    assert_eq!(la.lines().count(), 500);
    assert_eq!(la, lb, "process 1, same seed: different operations");
    // Process 0 uses seed + 0: a different sequence.
    let strip = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| l.split_once(": ").unwrap().1.to_string())
            .collect()
    };
    assert_ne!(strip(&la), strip(&l1));
    assert!(la.lines().all(|l| l.starts_with("1/")));
}

#[test]
fn summary_counts_add_up_and_only_chosen_ops_run() {
    let d = tempdir();
    let s = stress::run(&cfg(
        "-n 2000 -p 4 -z -f creat=2 -f unlink=1,rmdir=1 -s 11",
        d.path(),
    ))
    .unwrap();
    check_counts(&s, 2000, 4);
    let ran: Vec<Op> = s
        .ops
        .iter()
        .filter(|o| o.attempted > 0)
        .map(|o| o.op)
        .collect();
    assert_eq!(ran, [Op::Creat, Op::Rmdir, Op::Unlink]);
    // creat never fails in a fresh tree; rmdir has no directory to act on.
    let creat = s.op(Op::Creat).unwrap();
    assert_eq!(creat.failed, 0);
    assert_eq!(
        s.op(Op::Rmdir).unwrap().skipped,
        s.op(Op::Rmdir).unwrap().attempted
    );
    // Roughly 2:1:1 (loose bounds: 8000 draws).
    assert!(creat.attempted > 3400 && creat.attempted < 4600, "{s}");
}

#[test]
fn rerun_in_the_same_directory_meets_its_own_names() {
    // fsstress does not clean up without -c: a second run meets the first one's names.
    let d = tempdir();
    let c = cfg(&format!("-n 2000 -p 1 -z -f {SEED_FREQS} -s 5"), d.path());
    stress::run(&c).unwrap();
    let second = stress::run(&c).unwrap();
    check_counts(&second, 2000, 1);
    let eexist: u64 = second
        .ops
        .iter()
        .map(|o| o.errors.get("EEXIST").copied().unwrap_or(0))
        .sum();
    assert!(eexist > 0, "{second}");
    // -c removes each process directory afterwards.
    let mut clean = c.clone();
    clean.cleanup = true;
    stress::run(&clean).unwrap();
    assert!(!d.path().join("p0").exists());
}

#[test]
fn processes_and_threads_make_the_same_tree() {
    let (a, b) = (tempdir(), tempdir());
    let args = format!("-n 1500 -p 3 -z -f {SEED_FREQS} -s 1");
    let mut threads = cfg(&args, a.path());
    threads.workers = Workers::Threads;
    let mut procs = cfg(&args, b.path());
    procs.workers = Workers::Processes {
        exe: env!("CARGO_BIN_EXE_fslab").into(),
    };
    let st = stress::run(&threads).unwrap();
    let sp = stress::run(&procs).unwrap();
    assert_eq!(sp.workers, "processes");
    assert_eq!(st.ops, sp.ops);
    check_counts(&sp, 1500, 3);
    assert_eq!(listing(a.path()), listing(b.path()));
}

#[test]
fn cli_runs_the_seed_command_line() {
    let d = tempdir();
    let dir = d.path().join("foo");
    let out = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args([
            "stress", "-n", "400", "-p", "4", "-z", "-f", SEED_FREQS, "-d",
        ])
        .arg(&dir)
        .args(["-s", "1", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Summary = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s.implementation, stress::IMPLEMENTATION);
    assert_eq!((s.seed, s.procs, s.ops_per_proc), (1, 4, 400));
    assert_eq!(s.workers, "processes");
    assert_eq!(s.freqs.len(), 7);
    assert!(s.freqs.values().all(|&f| f == 1));
    check_counts(&s, 400, 4);
    let names: Vec<&str> = s.ops.iter().map(|o| o.op.name()).collect();
    assert_eq!(
        names,
        ["creat", "link", "mkdir", "mknod", "rename", "rmdir", "unlink"]
    );

    // The table form ends with the totals line.
    let out = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args([
            "stress", "-n", "10", "-p", "2", "-z", "-f", "creat=1", "-s", "2", "-d",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let total = text.lines().last().unwrap();
    assert_eq!(
        total.split_whitespace().take(2).collect::<Vec<_>>(),
        ["total", "20"]
    );

    // Bad flags are refused with fsstress's vocabulary.
    let out = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(["stress", "-z", "-f", "frobnicate=1", "-d"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("frobnicate"));
}
