//! The run order of the (point, replicate) pairs, on real loop devices (as root):
//! randomised blocks from a recorded seed, recorded in the manifest, followed by the
//! runs table, kept by a resume; `--order fixed` runs point by point.

use crate::common::{fixture, text, Scratch};
use fslab::store::{Manifest, PointStatus, RunOrder};
use fslab::Bundle;
use std::path::{Path, PathBuf};

fn run(s: &Scratch, extra: &[&str]) -> PathBuf {
    let exp = fixture("interleaved.yaml");
    let mut args = vec!["run", exp.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(extra);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", text(&o));
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

/// `(point_index, replicate, started_at)` of every row of `runs`, in table order.
fn rows(bundle: &Path) -> Vec<(usize, u32, String)> {
    let df = Bundle::open(bundle).unwrap().runs().unwrap();
    let int = |c: &str| {
        df.column(c)
            .unwrap()
            .cast(&fslab::polars::prelude::DataType::Int64)
            .unwrap()
            .i64()
            .unwrap()
            .into_no_null_iter()
            .collect::<Vec<i64>>()
    };
    let started = df.column("started_at").unwrap().str().unwrap().clone();
    int("point_index")
        .into_iter()
        .zip(int("replicate"))
        .enumerate()
        .map(|(i, (p, r))| (p as usize, r as u32, started.get(i).unwrap().to_string()))
        .collect()
}

/// The pairs in the order their rows come, each once.
fn pairs_of_rows(rows: &[(usize, u32, String)]) -> Vec<(usize, u32)> {
    let mut out: Vec<(usize, u32)> = Vec::new();
    for &(p, r, _) in rows {
        if out.last() != Some(&(p, r)) {
            assert!(!out.contains(&(p, r)), "{p}/{r} runs twice: {rows:?}");
            out.push((p, r));
        }
    }
    out
}

/// The manifest's order agrees with the runs table: the rows come pair by pair in the
/// recorded order, and each pair's rows fall between its recorded start and end, which
/// follow one another.
fn assert_rows_follow_the_order(bundle: &Path) -> Manifest {
    let m = Bundle::open(bundle).unwrap().manifest().clone();
    let order = m
        .run_order
        .clone()
        .expect("the manifest records the run order");
    let recorded: Vec<(usize, u32)> = order
        .pairs
        .iter()
        .map(|e| (e.point_index, e.replicate))
        .collect();
    let rows = rows(bundle);
    assert_eq!(
        pairs_of_rows(&rows),
        recorded,
        "runs table against run_order"
    );
    let mut last_end = String::new();
    for e in &order.pairs {
        assert_eq!(e.status, PointStatus::Ok, "{e:?}");
        assert_eq!(e.iterations, 2, "{e:?}");
        assert_eq!(e.point_id, m.points[e.point_index].id);
        let start = e.started_at.clone().unwrap();
        let end = e.finished_at.clone().unwrap();
        // RFC 3339 in UTC with milliseconds: the text orders as the time.
        assert!(last_end <= start && start <= end, "{e:?} after {last_end}");
        for (_, _, t) in rows
            .iter()
            .filter(|(p, r, _)| (*p, *r) == (e.point_index, e.replicate))
        {
            assert!(&start <= t && t <= &end, "row at {t} outside {e:?}");
        }
        last_end = end;
    }
    m
}

#[test]
fn replicates_run_in_randomised_blocks_recorded_with_their_seed() {
    let s = Scratch::new("ord");
    let bundle = run(&s, &["--seed", "7"]);
    let m = assert_rows_follow_the_order(&bundle);
    assert_eq!(m.status, "complete");
    let order = m.run_order.clone().unwrap();
    assert_eq!(order.order, RunOrder::Random);
    assert_eq!(order.seed, Some(7));
    let recorded: Vec<(usize, u32)> = order
        .pairs
        .iter()
        .map(|e| (e.point_index, e.replicate))
        .collect();
    // The order is the one its seed draws, anywhere.
    let points = [(0, 3), (1, 3), (2, 3)];
    assert_eq!(
        recorded,
        fslab::run::order::pairs(&points, RunOrder::Random, 7)
    );
    // Blocks: replicate r of every point before any point's replicate r + 1; never
    // point by point.
    for (b, block) in recorded.chunks(3).enumerate() {
        let mut ps: Vec<usize> = block.iter().map(|&(p, _)| p).collect();
        ps.sort();
        assert_eq!(ps, [0, 1, 2], "block {}: {recorded:?}", b + 1);
        assert!(
            block.iter().all(|&(_, r)| r == b as u32 + 1),
            "{recorded:?}"
        );
    }
    for p in &m.points {
        assert_eq!(p.status, "ok", "{p:?}");
        assert_eq!(p.iterations, 6, "{p:?}");
        let reps: Vec<u32> = p.repeat_stops.iter().map(|s| s.replicate).collect();
        assert_eq!(reps, [1, 2, 3], "{p:?}");
    }
    let o = s.run(&["show", bundle.to_str().unwrap()]);
    assert!(
        text(&o).contains("run order random, seed 7: 9 (point, replicate) pairs"),
        "{}",
        text(&o)
    );
    // Without --seed: a fresh seed, recorded.
    let other = run(&s, &[]);
    let m2 = assert_rows_follow_the_order(&other);
    let o2 = m2.run_order.unwrap();
    let seed = o2.seed.expect("a random order records its seed");
    assert_eq!(
        o2.pairs
            .iter()
            .map(|e| (e.point_index, e.replicate))
            .collect::<Vec<_>>(),
        fslab::run::order::pairs(&points, RunOrder::Random, seed)
    );
}

#[test]
fn order_fixed_runs_point_by_point() {
    let s = Scratch::new("ordf");
    let bundle = run(&s, &["--order", "fixed"]);
    let m = assert_rows_follow_the_order(&bundle);
    let order = m.run_order.unwrap();
    assert_eq!(order.order, RunOrder::Fixed);
    assert_eq!(order.seed, None);
    let recorded: Vec<(usize, u32)> = order
        .pairs
        .iter()
        .map(|e| (e.point_index, e.replicate))
        .collect();
    assert_eq!(
        recorded,
        [
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 1),
            (1, 2),
            (1, 3),
            (2, 1),
            (2, 2),
            (2, 3)
        ]
    );
    // A seed means a random order: with --order fixed it is refused.
    let exp = fixture("interleaved.yaml");
    let o = s.run(&[
        "run",
        exp.to_str().unwrap(),
        "--order",
        "fixed",
        "--seed",
        "3",
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("--seed"), "{}", text(&o));
}

/// A bundle stopped after its fourth pair (the fourth running, the rest pending, as a
/// kill leaves it): the resume keeps the three finished replicates, drops the fourth's
/// rows, and runs the rest in the recorded order.
#[test]
fn a_resume_keeps_finished_replicates_and_follows_the_recorded_order() {
    let s = Scratch::new("ordr");
    let bundle = run(&s, &["--seed", "11"]);
    let before = rows(&bundle);
    let mpath = bundle.join("manifest.json");
    let mut m: Manifest = serde_json::from_slice(&std::fs::read(&mpath).unwrap()).unwrap();
    let order = m.run_order.as_mut().unwrap();
    let recorded: Vec<(usize, u32)> = order
        .pairs
        .iter()
        .map(|e| (e.point_index, e.replicate))
        .collect();
    for (n, e) in order.pairs.iter_mut().enumerate().skip(3) {
        e.status = if n == 3 {
            PointStatus::Running
        } else {
            PointStatus::Pending
        };
        e.iterations = 0;
        e.finished_at = None;
        if n > 3 {
            e.started_at = None;
        }
    }
    for p in &mut m.points {
        p.status = "running".parse().unwrap();
    }
    m.status = "interrupted".parse().unwrap();
    m.finished_at = None;
    std::fs::write(&mpath, serde_json::to_vec_pretty(&m).unwrap()).unwrap();

    let o = s.run(&["run", "--resume", bundle.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let m = assert_rows_follow_the_order(&bundle);
    assert_eq!(m.status, "complete");
    let after = rows(&bundle);
    assert_eq!(after.len(), 18, "{after:?}");
    let kept = &recorded[..3];
    for (p, r, t) in &before {
        let again = after
            .iter()
            .filter(|(p2, r2, _)| (p2, r2) == (p, r))
            .any(|(_, _, t2)| t2 == t);
        // The first three pairs are the same rows; the others were measured again.
        assert_eq!(again, kept.contains(&(*p, *r)), "{p}/{r} at {t}");
    }
    assert!(m
        .points
        .iter()
        .all(|p| p.status == "ok" && p.iterations == 6));
    // The old logs of the replicates run again are set aside; the others' stay.
    let (p4, _) = recorded[3];
    let redone: Vec<u32> = recorded[3..]
        .iter()
        .filter(|(p, _)| *p == p4)
        .map(|&(_, r)| r)
        .collect();
    let name = fslab::store::point_dir_name(p4, &m.points[p4].id);
    let files = |d: &str| -> Vec<String> {
        std::fs::read_dir(bundle.join("logs").join(d))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect()
    };
    let aside = files(&format!("{name}.interrupted-1"));
    let prefix = |r: u32| format!("r{r:02}-");
    for r in 1..=3u32 {
        assert_eq!(
            aside.iter().any(|n| n.starts_with(&prefix(r))),
            redone.contains(&r),
            "replicate {r} (redone: {redone:?}): {aside:?}"
        );
    }
    assert!(
        aside
            .iter()
            .all(|n| redone.iter().any(|&r| n.starts_with(&prefix(r)))),
        "{aside:?}"
    );
    let logs = files(&name);
    for r in 1..=3u32 {
        assert!(
            logs.iter().any(|n| n.starts_with(&prefix(r))),
            "replicate {r}: {logs:?}"
        );
    }
}

/// A replicate that fails ends its point: the point's later replicates are skipped and
/// say which replicate failed; the other points' replicates still run.
#[test]
fn a_failed_replicate_skips_the_later_replicates_of_its_point_only() {
    let s = Scratch::new("ordx");
    let marker = s.root.join("b-ran-once");
    let exp = s.root.join("fails.yaml");
    let yaml = r#"
id: fails-second
title: Point b fails in its second replicate
devices:
  data: { size: 8MiB }
matrix:
  case: [a, b]
setup:
  - run: mkfs.ext2 -F -q {{dev.data}}
  - mount: data
workload:
  run: ["sh", "-c", "if [ {{case}} = b ]; then if [ -e MARKER ]; then exit 3; fi; touch MARKER; fi"]
  repeat: 1
  replicates: 3
teardown:
  - umount: "{{mnt}}"
"#
    .replace("MARKER", marker.to_str().unwrap());
    std::fs::write(&exp, yaml).unwrap();
    let o = s.run(&["run", exp.to_str().unwrap(), "--quiet", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let bundle = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let m = Bundle::open(&bundle).unwrap().manifest().clone();
    assert_eq!(m.status, "partial");
    assert_eq!(m.points[0].status, "ok", "{:?}", m.points[0]);
    assert_eq!(m.points[0].iterations, 3);
    assert_eq!(m.points[1].status, "failed", "{:?}", m.points[1]);
    assert!(
        m.points[1]
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("replicate 2: ")),
        "{:?}",
        m.points[1]
    );
    let order = m.run_order.unwrap();
    let of = |p: usize| -> Vec<(u32, PointStatus, Option<String>)> {
        order
            .pairs
            .iter()
            .filter(|e| e.point_index == p)
            .map(|e| (e.replicate, e.status, e.reason.clone()))
            .collect()
    };
    assert!(
        of(0).iter().all(|(_, st, _)| *st == PointStatus::Ok),
        "{:?}",
        of(0)
    );
    let b = of(1);
    assert_eq!(b[0].1, PointStatus::Ok, "{b:?}");
    assert_eq!(b[1].1, PointStatus::Failed, "{b:?}");
    assert_eq!(b[2].1, PointStatus::Skipped, "{b:?}");
    assert!(
        b[2].2.as_deref().is_some_and(|r| r.contains("replicate 2")),
        "{b:?}"
    );
    // The skipped replicate has no rows; the failed one has its failed row.
    let rows = rows(&bundle);
    let count = |p: usize, r: u32| rows.iter().filter(|x| (x.0, x.1) == (p, r)).count();
    assert_eq!(
        (count(1, 1), count(1, 2), count(1, 3)),
        (1, 1, 0),
        "{rows:?}"
    );
    assert_eq!(
        (count(0, 1), count(0, 2), count(0, 3)),
        (1, 1, 1),
        "{rows:?}"
    );

    // With --fail-fast the run stops after the failed replicate (b fails at once now:
    // the marker is there): the pairs after it stay pending, for a resume. A seed that
    // runs a first, so that a is part-way when the run stops.
    let seed = (0..)
        .find(|&s| fslab::run::order::pairs(&[(0, 3), (1, 3)], RunOrder::Random, s)[0].0 == 0)
        .unwrap()
        .to_string();
    let o = s.run(&[
        "run",
        exp.to_str().unwrap(),
        "--quiet",
        "--seed",
        &seed,
        "--fail-fast",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let bundle = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let m = Bundle::open(&bundle).unwrap().manifest().clone();
    assert_eq!(m.status, "partial");
    let pairs = m.run_order.unwrap().pairs;
    let failed = pairs
        .iter()
        .position(|e| e.status == PointStatus::Failed)
        .unwrap();
    assert_eq!(pairs[failed].point_index, 1, "{pairs:?}");
    assert!(pairs[..failed].iter().all(|e| e.status == PointStatus::Ok));
    // b's later replicates are skipped; a's wait.
    for e in &pairs[failed + 1..] {
        let want = if e.point_index == 1 {
            PointStatus::Skipped
        } else {
            PointStatus::Pending
        };
        assert_eq!(e.status, want, "{pairs:?}");
    }
    let rows = self::rows(&bundle);
    assert_eq!(pairs_of_rows(&rows).len(), failed + 1, "{rows:?}");
    assert_eq!(failed, 1, "{pairs:?}");
    assert_eq!(m.points[0].status, "pending", "{:?}", m.points[0]);
    assert!(
        m.points[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("--fail-fast")),
        "{:?}",
        m.points[0]
    );
}
