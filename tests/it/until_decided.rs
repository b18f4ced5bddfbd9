//! `fslab run --until-decided` on real loop devices (as root): the plan's replicates,
//! looks at the claims with the sequential rule, randomised blocks of added replicates,
//! and the manifest's record of every look and of why it stopped
//! (tests/experiments/until-decided.yaml, whose metric does not depend on the machine).

use crate::common::{fixture, text, Scratch};
use fslab::store::{ClaimState, Manifest, PointStatus, SequentialStop};
use fslab::Bundle;
use std::path::PathBuf;

fn run(s: &Scratch, extra: &[&str]) -> (PathBuf, String) {
    let exp = fixture("until-decided.yaml");
    let mut args = vec!["run", exp.to_str().unwrap(), "--quiet", "--seed", "5"];
    args.extend_from_slice(extra);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", text(&o));
    (
        PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn manifest(bundle: &PathBuf) -> Manifest {
    Bundle::open(bundle).unwrap().manifest().clone()
}

fn ok_replicates(m: &Manifest, point: usize) -> usize {
    m.run_order
        .as_ref()
        .unwrap()
        .of_point(point)
        .filter(|e| e.status == PointStatus::Ok)
        .count()
}

fn assert_clean(s: &Scratch) {
    assert!(s.loops().is_empty(), "loop devices left: {:?}", s.loops());
    assert!(s.mounts().is_empty(), "mounts left: {:?}", s.mounts());
}

#[test]
fn replicates_are_added_in_blocks_until_the_claim_is_decided_and_each_look_is_recorded() {
    let s = Scratch::new("ud");
    let (bundle, stderr) = run(&s, &["--until-decided", "--max-replicates", "12"]);
    let m = manifest(&bundle);
    assert_eq!(m.status, "complete");
    let seq = m
        .sequential
        .clone()
        .expect("the manifest records the looks");
    assert_eq!(seq.max_replicates, 12);
    assert_eq!(seq.alpha, 0.05);
    assert_eq!(seq.stopped, Some(SequentialStop::AllDecided), "{seq:#?}");
    // Undecided at the first look (3 replicates a point), decided at a later one after
    // at least one added block.
    assert!(seq.looks.len() >= 2, "{seq:#?}");
    let first = &seq.looks[0];
    assert_eq!(first.replicates, 3);
    assert_eq!(first.claims.len(), 1);
    assert_eq!(first.claims[0].claim, "below-three");
    assert_eq!(first.claims[0].state, ClaimState::Open, "{first:#?}");
    assert!(
        first.added >= 1 && first.next_points.len() == 2,
        "{first:#?}"
    );
    let last = seq.looks.last().unwrap();
    assert_eq!(last.claims[0].state, ClaimState::Decided, "{last:#?}");
    assert_eq!(last.claims[0].tier, "reproduced");
    assert_eq!(last.added, 0);
    // Each look is at more replicates than the one before, by what it added; the α
    // spent grows and never exceeds α; each look's level is 1 − its nominal α, and is
    // stricter than the fixed design's 95 % before the last possible look.
    for w in seq.looks.windows(2) {
        assert_eq!(w[1].replicates, w[0].replicates + w[0].added, "{seq:#?}");
        assert!(w[1].spent > w[0].spent && w[1].spent <= 0.05 + 1e-12);
        assert_eq!(w[1].look, w[0].look + 1);
    }
    for l in &seq.looks {
        assert!((l.level - (1.0 - l.nominal_alpha)).abs() < 1e-12);
        if l.replicates < 12 {
            assert!(l.level > 0.95, "{l:#?}");
        }
    }
    // The replicates grew: every point has the last look's count, each ran ok, and the
    // added replicates are numbered on from the plan's.
    for p in 0..2 {
        assert_eq!(ok_replicates(&m, p), last.replicates as usize, "point {p}");
        let mut reps: Vec<u32> = m
            .run_order
            .as_ref()
            .unwrap()
            .of_point(p)
            .map(|e| e.replicate)
            .collect();
        reps.sort();
        assert_eq!(reps, (1..=last.replicates).collect::<Vec<u32>>());
    }
    let runs = Bundle::open(&bundle).unwrap().runs().unwrap();
    assert_eq!(runs.height(), 2 * last.replicates as usize);
    // The added blocks interleave the points: within each block every point's k-th
    // added replicate runs before any point's (k + 1)-th.
    let order = &m.run_order.as_ref().unwrap().pairs;
    for pair in order.chunks(2) {
        assert_eq!(pair[0].replicate, pair[1].replicate, "{order:#?}");
        assert_ne!(pair[0].point_index, pair[1].point_index);
    }
    // The verdict reads the level from the manifest and says the rule was sequential.
    let o = s.run(&["claims", bundle.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &report["claims"][0];
    assert_eq!(c["tier"], "reproduced", "{c}");
    assert!(
        (c["interval"]["level"].as_f64().unwrap() - last.level).abs() < 1e-12,
        "{c}"
    );
    assert_eq!(c["sequential"]["look"], last.look as u64, "{c}");
    let o = s.run(&["claims", bundle.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("stopping rule: sequential") && out.contains("repeated confidence interval"),
        "{out}"
    );
    // The run said each look.
    assert!(
        stderr.contains("fslab: look 1 at 3 replicates a point"),
        "{stderr}"
    );
    assert!(
        stderr.contains("stopped: every claim is decided"),
        "{stderr}"
    );
    assert_clean(&s);
}

#[test]
fn a_budget_or_the_most_replicates_stops_the_looks_and_says_so() {
    let s = Scratch::new("udb");
    // A budget the first block already used up: one look, nothing added; the look is
    // the design's last (its level is the fixed design's), and the stop says why.
    let (bundle, _) = run(&s, &["--until-decided", "--budget", "1ms"]);
    let seq = manifest(&bundle).sequential.unwrap();
    assert_eq!(seq.stopped, Some(SequentialStop::Budget), "{seq:#?}");
    assert_eq!(seq.looks.len(), 1);
    assert_eq!(seq.max_replicates, 3);
    assert!((seq.looks[0].level - 0.95).abs() < 1e-9, "{seq:#?}");
    assert_eq!(seq.looks[0].added, 0);
    assert!(seq
        .stated
        .contains("stopped: the next block would not fit in the budget"));
    // A most of 4 replicates: one block of one replicate a point, then it stops there
    // whatever the claim says.
    let (bundle, _) = run(&s, &["--power", "0.8", "--max-replicates", "4"]);
    let m = manifest(&bundle);
    let seq = m.sequential.clone().unwrap();
    assert_eq!(seq.power, 0.8);
    let reps: Vec<u32> = seq.looks.iter().map(|l| l.replicates).collect();
    assert_eq!(reps, [3, 4], "{seq:#?}");
    assert!(
        matches!(
            seq.stopped,
            Some(SequentialStop::MaxReplicates | SequentialStop::AllDecided)
        ),
        "{seq:#?}"
    );
    assert_eq!(ok_replicates(&m, 0), 4);
    assert_eq!(ok_replicates(&m, 1), 4);
    assert_clean(&s);
}

#[test]
fn bad_flag_combinations_are_clear_errors() {
    let s = Scratch::new("udf");
    let exp = fixture("until-decided.yaml");
    let exp = exp.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--budget", "10m"], "add --until-decided"),
        (&["--max-replicates", "6"], "add --until-decided"),
        (&["--power", "1.5"], "strictly between 0 and 1"),
        (
            &["--until-decided", "--budget", "soon"],
            "is not a duration",
        ),
        (&["--until-decided", "--budget", "0s"], "no time"),
        (
            &["--until-decided", "--max-replicates", "1"],
            "--max-replicates",
        ),
        (
            &["--until-decided", "--max-replicates", "2"],
            "at least that many",
        ),
        (
            &["--until-decided", "--shard", "1/2"],
            "cannot be used with",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", exp, "--quiet"];
        args.extend_from_slice(extra);
        let o = s.run(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    // With --resume too, which finishes a bundle and takes no looks.
    let o = s.run(&["run", "--resume", "/nonexistent", "--until-decided"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
    // An experiment without claims has nothing to decide.
    let o = s.run(&[
        "run",
        fixture("interleaved.yaml").to_str().unwrap(),
        "--quiet",
        "--until-decided",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no claims to decide"));
    // Nothing ran: no bundle, nothing left behind.
    assert!(!s.results().join("until-decided").exists());
    assert!(!s.results().join("interleaved").exists());
    assert_clean(&s);
}
