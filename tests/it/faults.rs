//! Faults on real loop devices (as root): a run killed mid-matrix and resumed; runs
//! interrupted with SIGINT or SIGTERM at random moments.

use crate::common::{fixture, text, Scratch};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::collections::BTreeMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// `(point_id, iteration) → started_at` of every row, failing on a duplicate key.
fn rows(bundle: &Path) -> BTreeMap<(String, i64), String> {
    let df = fslab::Bundle::open(bundle).unwrap().runs().unwrap();
    let ids = df.column("point_id").unwrap().str().unwrap().clone();
    let its = df
        .column("iteration")
        .unwrap()
        .cast(&fslab::polars::prelude::DataType::Int64)
        .unwrap();
    let its = its.i64().unwrap().clone();
    let started = df.column("started_at").unwrap().str().unwrap().clone();
    let mut out = BTreeMap::new();
    for i in 0..df.height() {
        let key = (ids.get(i).unwrap().to_string(), its.get(i).unwrap());
        let prev = out.insert(key.clone(), started.get(i).unwrap().to_string());
        assert!(
            prev.is_none(),
            "{key:?} appears twice in {}",
            bundle.display()
        );
    }
    out
}

/// The same from the journal `runs.jsonl` (a kill can fall between the journal line
/// and the rewrite of runs.parquet; the journal is what a resume starts from).
fn journal_rows(bundle: &Path) -> BTreeMap<(String, i64), String> {
    let text = std::fs::read_to_string(bundle.join("runs.jsonl")).unwrap();
    let mut out = BTreeMap::new();
    // The rows end at the first zero byte (room grown ahead by the writer).
    for line in text.split('\0').next().unwrap_or_default().lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue; // a torn last line
        };
        let key = (
            v["point_id"].as_str().unwrap().to_string(),
            v["iteration"].as_i64().unwrap(),
        );
        let prev = out.insert(key.clone(), v["started_at"].as_str().unwrap().to_string());
        assert!(prev.is_none(), "{key:?} twice in the journal");
    }
    out
}

fn journal_lines(bundle: &Path) -> usize {
    std::fs::read_to_string(bundle.join("runs.jsonl"))
        .map(|t| t.split('\0').next().unwrap_or_default().lines().count())
        .unwrap_or(0)
}

fn wait_with_deadline(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fslab did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start a run of `resumable`, SIGKILL it once a point is complete and the next one is
/// mid-way (mounted), and return the bundle and the rows written before the kill.
fn killed_run(s: &Scratch) -> (PathBuf, BTreeMap<(String, i64), String>) {
    let mut child = s
        .fslab()
        .args([
            "run",
            fixture("resumable.yaml").to_str().unwrap(),
            "--quiet",
        ])
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let bundle = loop {
        assert!(t0.elapsed() < Duration::from_secs(60), "no progress");
        if let Some(b) = s.bundles("resumable").pop() {
            if journal_lines(&b) >= 4 && !s.mounts().is_empty() {
                break b;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !s.mounts().is_empty() && !s.loops().is_empty(),
        "SIGKILL left nothing to reclaim: the test proves nothing"
    );
    let before = journal_rows(&bundle);
    assert!(before.len() >= 4, "{before:?}");
    (bundle, before)
}

fn assert_resumed(
    bundle: &Path,
    before: &BTreeMap<(String, i64), String>,
    reference: &BTreeMap<(String, i64), String>,
) {
    let after = rows(bundle);
    let keys = |m: &BTreeMap<(String, i64), String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&after),
        keys(reference),
        "rows differ from an uninterrupted run"
    );
    let m = fslab::Bundle::open(bundle).unwrap().manifest().clone();
    assert_eq!(m.status, "complete");
    assert!(
        m.points
            .iter()
            .all(|p| p.status == "ok" && p.iterations == 3),
        "{:?}",
        m.points
    );
    // The first point of the run order was complete before the kill: its rows are the
    // same rows, not a second measurement.
    let order = m.run_order.clone().expect("the run order is recorded");
    let first = &order.pairs[0].point_id;
    let kept: Vec<_> = before.iter().filter(|((p, _), _)| p == first).collect();
    assert_eq!(kept.len(), 3, "{before:?}");
    for (k, started) in kept {
        assert_eq!(&after[k], started, "{k:?} was measured again");
    }
    // The partial point's earlier logs are kept aside, not mixed with the new ones.
    let second = &order.pairs[1];
    let second = fslab::store::point_dir_name(second.point_index, &second.point_id);
    assert!(
        bundle.join(format!("logs/{second}.interrupted-1")).is_dir(),
        "old logs of the partial point not set aside"
    );
}

/// Issue 15: `runs.parquet` is written at the end of each point, the journal after every
/// iteration. A run SIGKILLed between iterations of its second point leaves the parquet
/// behind the journal; reopening the bundle (no resume) still gives every journaled row.
#[test]
fn a_run_killed_between_iterations_reopens_with_every_journaled_row() {
    let s = Scratch::new("kil");
    let (bundle, journaled) = killed_run(&s);
    let parquet = fslab::store::read_parquet(&bundle.join("runs.parquet"))
        .map(|df| df.height())
        .unwrap_or(0);
    // The kill fell mid-point (0.3 s iterations, a 10 ms poll): the parquet holds the
    // finished first point only, so the rows below can only come from the journal.
    assert_eq!(
        parquet, 3,
        "runs.parquet: {parquet} rows; journal: {journaled:?}"
    );
    assert!(journaled.len() > parquet, "{journaled:?}");
    assert_eq!(rows(&bundle), journaled, "Bundle::runs() after the kill");
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(s.mounts().is_empty() && s.loops().is_empty());
}

#[test]
fn a_killed_run_resumes_to_the_rows_of_an_uninterrupted_run() {
    let s = Scratch::new("res");
    let o = s.run(&[
        "run",
        fixture("resumable.yaml").to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let reference = rows(Path::new(String::from_utf8_lossy(&o.stdout).trim()));
    assert_eq!(reference.len(), 18);

    // Killed, then `fslab cleanup`, then `--resume BUNDLE` alone.
    let (bundle, before) = killed_run(&s);
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(s.mounts().is_empty() && s.loops().is_empty());
    let o = s.run(&["run", "--resume", bundle.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        bundle.to_str().unwrap()
    );
    assert_resumed(&bundle, &before, &reference);
    assert!(s.mounts().is_empty() && s.loops().is_empty());

    // Killed, then resumed at once (naming the experiment): the resume reclaims.
    let (bundle, before) = killed_run(&s);
    let o = s.run(&[
        "run",
        fixture("resumable.yaml").to_str().unwrap(),
        "--resume",
        bundle.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("left by a killed run"),
        "{}",
        text(&o)
    );
    assert_resumed(&bundle, &before, &reference);
    assert!(s.mounts().is_empty() && s.loops().is_empty());

    // A complete bundle, or a different plan, cannot be resumed.
    let o = s.run(&["run", "--resume", bundle.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("it is complete"));
    let o = s.run(&[
        "run",
        fixture("resumable.yaml").to_str().unwrap(),
        "--set",
        "n=[1, 2]",
        "--resume",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("its points are"),
        "{}",
        text(&o)
    );
}

#[test]
fn twenty_runs_interrupted_at_random_moments_leave_nothing_behind() {
    let exp = fixture("interruptible.yaml");
    let exp = exp.to_str().unwrap();
    // How long an uninterrupted run takes, to spread the interruptions over it.
    let s = Scratch::new("int");
    let t0 = Instant::now();
    let o = s.run(&["run", exp, "--quiet"]);
    let full = t0.elapsed();
    assert!(o.status.success(), "{}", text(&o));
    assert!(s.mounts().is_empty() && s.loops().is_empty());
    drop(s);

    let mut outcomes: Vec<String> = Vec::new();
    let mut interrupted = 0;
    for round in 0..20 {
        let s = Scratch::new("int");
        let sig = if rand::random::<bool>() {
            Signal::SIGINT
        } else {
            Signal::SIGTERM
        };
        // Like a terminal's Ctrl-C (the whole process group) or like `kill PID`.
        let to_group = rand::random::<bool>();
        let delay = full.mul_f64(rand::random_range(0.0..0.9));
        let mut child = s
            .fslab()
            .args(["run", exp, "--quiet"])
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let pid = Pid::from_raw(child.id() as i32);
        if to_group {
            let _ = killpg(pid, sig);
        } else {
            let _ = kill(pid, sig);
        }
        let status = wait_with_deadline(&mut child, Duration::from_secs(120));
        let what = format!(
            "round {round}: {sig} to {} after {delay:?}: {status:?}",
            if to_group { "group" } else { "pid" }
        );
        match (status.code(), status.signal()) {
            (Some(130), _) => {
                interrupted += 1;
                let b = s.bundles("interruptible");
                assert_eq!(b.len(), 1, "{what}");
                let m = fslab::Bundle::open(&b[0]).unwrap().manifest().clone();
                assert_eq!(m.status, "interrupted", "{what}");
            }
            (Some(0), _) => {}
            // The signal came before fslab set its handlers: nothing was made yet.
            (None, Some(n)) if n == sig as i32 => {
                assert!(
                    !s.work().exists(),
                    "{what}: killed after making its work dir"
                );
            }
            _ => panic!("{what}: unexpected exit"),
        }
        assert!(
            s.mounts().is_empty(),
            "{what}: mounts left: {:?}",
            s.mounts()
        );
        assert!(s.loops().is_empty(), "{what}: loops left: {:?}", s.loops());
        let records: Vec<_> = std::fs::read_dir(s.work().join("owned"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(
            records.is_empty(),
            "{what}: ownership records left: {records:?}"
        );
        outcomes.push(what);
    }
    eprintln!("{}", outcomes.join("\n"));
    assert!(
        interrupted >= 5,
        "only {interrupted} of 20 runs were interrupted mid-way: the test proves little\n{}",
        outcomes.join("\n")
    );
}
