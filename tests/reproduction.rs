//! REPRODUCTION.md is what `fslab claims --md` makes of the committed repro bundles
//! (data/reruns/), and those bundles meet issue 10's acceptance: every claim of the three
//! seed experiments is listed, none is not applicable for scale, every measured number
//! has its interval (or says why it has none), a stand-in workload is never plain
//! `reproduced`.

use fslab::analysis::claims::{check_bundle, reproduction_md};
use fslab::analysis::tiers::Tier;
use fslab::Bundle;
use std::path::{Path, PathBuf};

const SEEDS: [(&str, &str); 3] = [
    ("000", "xfs-parent-pointers"),
    ("001", "ext-fsck-small-files"),
    ("003", "xfs-rt-truncate"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn reruns() -> Vec<Bundle> {
    SEEDS
        .iter()
        .map(|(seed, _)| {
            let dir = root().join("data/reruns").join(seed);
            Bundle::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        })
        .collect()
}

#[test]
fn reproduction_md_is_regenerated_from_the_committed_reruns() {
    let md = reproduction_md(&reruns()).unwrap();
    let file = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    if md != file {
        let first = md
            .lines()
            .zip(file.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(md.lines().count().min(file.lines().count()));
        panic!(
            "REPRODUCTION.md differs from what the bundles give, first at line {}:\n  file: {:?}\n  now:  {:?}\nregenerate with: fslab claims --md data/reruns/000 data/reruns/001 data/reruns/003 > REPRODUCTION.md",
            first + 1,
            file.lines().nth(first),
            md.lines().nth(first)
        );
    }
}

#[test]
fn every_claim_of_the_seed_experiments_is_in_the_table() {
    let file = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    for (_, id) in SEEDS {
        let exp =
            fslab::Experiment::load(root().join("experiments").join(format!("{id}.yaml"))).unwrap();
        assert!(file.contains(&format!("\n## {id} — ")), "{id}");
        for c in &exp.def.claims {
            assert!(
                file.contains(&format!("| **{}**: ", c.id)),
                "{id}: claim {} is not in REPRODUCTION.md (rerun the repro profile and regenerate it)",
                c.id
            );
        }
    }
}

#[test]
fn the_reruns_meet_the_acceptance() {
    for ((seed, id), b) in SEEDS.iter().zip(reruns()) {
        let m = b.manifest();
        assert_eq!(m.experiment.id, *id, "{seed}");
        assert_eq!(m.profile.as_deref(), Some("repro"), "{seed}");
        let stand_in = m.tools.values().any(|t| t.stand_in.is_some());
        for v in check_bundle(&b).unwrap() {
            let what = format!("{seed} {}: {v:?}", v.id);
            assert!(!v.tier_reason.starts_with("scale differs"), "{what}");
            if v.measured.is_some() {
                assert!(v.interval.is_some() != v.no_interval.is_some(), "{what}");
            }
            if stand_in {
                assert_ne!(v.tier, Tier::Reproduced, "{what}");
            }
        }
        // What was left out of the bundle is said in it.
        assert!(Path::new(b.path()).join("DROPPED.md").exists(), "{seed}");
    }
}
