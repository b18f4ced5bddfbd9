//! The run loop through the mock target, without root: what it asks the target to do,
//! and the bundle it writes.

use super::mock::{Call, MockTarget, Reply};
use super::Builtin;
use crate::plan::Plan;
use crate::run::{run, RunOptions};
use crate::store::{BundleStatus, PointStatus};
use crate::Experiment;
use polars::prelude::DataType;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const EXPERIMENT: &str = r#"
id: mock-loop
title: The run loop on the mock target
devices:
  data: { size: 64MiB }
matrix:
  case: [good, bad]
setup:
  - name: mkfs
    run: mkfs-mock {{dev.data}}
  - mount: data
workload:
  run: bench -d {{mnt}}/it{{iteration}} {{case}}
  parse: fs_mark
  repeat: 3
  counters: [vmstat]
  before_each:
    - drop_caches: true
capture:
  - name: usage
    run: df -k {{mnt}}
teardown:
  - umount: "{{mnt}}"
"#;

const FS_MARK: &str = include_str!("../../../tests/fixtures/fs_mark/ext4-3-loops-nosync.txt");

/// `bench` prints fs_mark's output; at `case=bad` its second iteration exits 1.
fn script(argv: &[String]) -> Reply {
    let word = |w: &str| argv.iter().any(|a| a == w || a.ends_with(&format!("/{w}")));
    match argv.first().map(String::as_str) {
        Some("bench") if word("bad") && word("it2") => Reply {
            code: 1,
            stdout: String::new(),
        },
        Some("bench") => Reply {
            code: 0,
            stdout: FS_MARK.to_string(),
        },
        _ => Reply {
            code: 0,
            stdout: String::new(),
        },
    }
}

fn strings(df: &polars::prelude::DataFrame, col: &str) -> Vec<String> {
    df.column(col)
        .unwrap()
        .cast(&DataType::String)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|s| s.unwrap_or_default().to_string())
        .collect()
}

fn ints(df: &polars::prelude::DataFrame, col: &str) -> Vec<i64> {
    df.column(col)
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or(-1))
        .collect()
}

/// Everything under `dir`, relative.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    out
}

#[test]
fn a_plan_runs_through_the_mock_target_into_a_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = Experiment::from_str_named(EXPERIMENT, "mock-loop.yaml").unwrap();
    let plan = Plan::new(&exp, None, &[]).unwrap();
    let mock = Arc::new(MockTarget::new(
        &tmp.path().join("kernel"),
        Box::new(script),
    ));
    let opts = RunOptions {
        results_dir: tmp.path().join("results"),
        work_dir: tmp.path().join("work"),
        target: mock.clone(),
        // The calls are checked in plan order: point by point.
        order: crate::store::RunOrder::Fixed,
        ..Default::default()
    };
    let bundle = run(&plan, &opts).unwrap();

    // The points: one ran whole, one stopped at its failed iteration.
    let m = bundle.manifest();
    assert_eq!(m.status, BundleStatus::Partial);
    let statuses: Vec<PointStatus> = m.points.iter().map(|p| p.status).collect();
    assert_eq!(statuses, [PointStatus::Ok, PointStatus::Failed]);
    let reason = m.points[1].reason.clone().unwrap_or_default();
    assert!(reason.contains("exited with status 1"), "{reason}");
    assert_eq!(m.environment.kernel, "mock");

    // One row per iteration run, the failed one with its status.
    let runs = bundle.runs().unwrap();
    assert_eq!(
        strings(&runs, "case"),
        ["good", "good", "good", "bad", "bad"]
    );
    assert_eq!(ints(&runs, "iteration"), [1, 2, 3, 1, 2]);
    assert_eq!(strings(&runs, "status"), ["ok", "ok", "ok", "ok", "failed"]);
    assert_eq!(ints(&runs, "exit_code"), [0, 0, 0, 0, 1]);
    let wall = runs.column("wall_s").unwrap().f64().unwrap();
    assert!(wall.iter().all(|w| w == Some(0.01)), "{runs}");

    // The workload's output parsed for each successful iteration (3 rows a run).
    let fsmark = bundle.table("fsmark").unwrap();
    assert_eq!(
        ints(&fsmark, "iteration"),
        [1, 1, 1, 2, 2, 2, 3, 3, 3, 1, 1, 1]
    );
    // Counters around every iteration: one command ran between the two reads.
    let counters = bundle.table("counters").unwrap();
    assert_eq!(ints(&counters, "delta"), [10; 5]);

    // What the target was asked, in order, for the good point.
    let calls = mock.calls.lock().unwrap().clone();
    let Some(Call::Exec(mkfs)) = calls.get(1) else {
        panic!("{calls:?}")
    };
    assert_eq!(mkfs, &["mkfs-mock", "/dev/mock-data"]);
    let Some(Call::Builtin(Builtin::Mount { device, at, .. })) = calls.get(2) else {
        panic!("{calls:?}")
    };
    assert_eq!(device, Path::new("/dev/mock-data"));
    let mnt = at.clone();
    let kinds: Vec<String> = calls
        .iter()
        .map(|c| match c {
            Call::Open { point } => format!("open {point}"),
            Call::Exec(argv) => argv[0].clone(),
            Call::Builtin(Builtin::Mount { .. }) => "mount".into(),
            Call::Builtin(Builtin::Unmount(p)) => {
                assert!(p.ends_with("mnt"), "{p:?}");
                "umount".into()
            }
            Call::Builtin(b) => format!("{b:?}"),
            Call::Release { point } => format!("release {point}"),
        })
        .collect();
    let mut want = vec!["open case=good", "mkfs-mock", "mount"];
    want.extend(["DropCaches", "bench"].repeat(3));
    want.extend(["df", "umount", "release case=good"]);
    // The failed iteration stops the point; its captures and teardown still run.
    want.extend(["open case=bad", "mkfs-mock", "mount"]);
    want.extend(["DropCaches", "bench"].repeat(2));
    want.extend(["df", "umount", "release case=bad"]);
    assert_eq!(kinds, want);
    let workload = calls.iter().find_map(|c| match c {
        Call::Exec(a) if a[0] == "bench" => Some(a.clone()),
        _ => None,
    });
    assert_eq!(
        workload.unwrap(),
        [
            "bench".to_string(),
            "-d".into(),
            format!("{}/it1", mnt.display()),
            "good".into()
        ]
    );

    // Nothing stays in the work directory's points, nor running logs in the bundle.
    let points = tmp.path().join("work/p");
    assert_eq!(tree(&points), Vec::<PathBuf>::new());
    let logs = tree(&bundle.path().join("logs"));
    assert!(
        !logs
            .iter()
            .any(|p| p.to_string_lossy().contains("running.")),
        "{logs:?}"
    );
    assert!(
        logs.contains(&PathBuf::from("00-case=good/workload-01-bench-it03.stdout")),
        "{logs:?}"
    );
}

/// Ctrl-C during an iteration: the point is interrupted, its teardown is skipped, and
/// the session is still released (nothing stays); later points do not start.
#[test]
fn an_interrupt_releases_the_session_and_stops_the_run() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let tmp = tempfile::tempdir().unwrap();
    let exp = Experiment::from_str_named(EXPERIMENT, "mock-loop.yaml").unwrap();
    let plan = Plan::new(&exp, None, &[]).unwrap();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let mock = Arc::new(MockTarget::new(
        &tmp.path().join("kernel"),
        Box::new(move |argv: &[String]| {
            if argv.iter().any(|a| a.ends_with("/it2")) {
                flag.store(true, Ordering::SeqCst);
            }
            script(argv)
        }),
    ));
    let opts = RunOptions {
        results_dir: tmp.path().join("results"),
        work_dir: tmp.path().join("work"),
        cancel,
        target: mock.clone(),
        // The calls are checked in plan order: point by point.
        order: crate::store::RunOrder::Fixed,
        ..Default::default()
    };
    let bundle = match run(&plan, &opts) {
        Err(crate::run::RunError::Interrupted { bundle }) => bundle,
        Err(e) => panic!("{e}"),
        Ok(b) => panic!("not interrupted: {}", b.path().display()),
    };
    let b = crate::store::Bundle::open(&bundle).unwrap();
    assert_eq!(b.manifest().status, BundleStatus::Interrupted);
    let statuses: Vec<PointStatus> = b.manifest().points.iter().map(|p| p.status).collect();
    assert_eq!(
        statuses,
        [PointStatus::Interrupted, PointStatus::Pending],
        "{:?}",
        b.manifest().points
    );
    let calls = mock.calls.lock().unwrap().clone();
    assert!(
        !calls
            .iter()
            .any(|c| matches!(c, Call::Builtin(Builtin::Unmount(_)))),
        "{calls:?}"
    );
    assert_eq!(
        calls.last(),
        Some(&Call::Release {
            point: "case=good".into()
        })
    );
    assert_eq!(tree(&tmp.path().join("work/p")), Vec::<PathBuf>::new());
}
