//! A bundle `fslab run --until-decided` made: its verdicts use the last look's level
//! (`Manifest::sequential`) and say the stopping rule was sequential.

use super::tests::{claim, manifest};
use super::{check_claim, Evidence};
use crate::analysis::tiers::Tier;
use crate::store::{LookRecord, SequentialRecord, SequentialStop, Spending};
use indexmap::IndexMap;
use polars::prelude::*;
use std::collections::BTreeMap;

/// Two points of 4 replicates each (one iteration a replicate): side 1 about 5 % slower
/// than side 0 with a 1 % spread.
fn evidence() -> Evidence {
    let a = [100.0, 101.0, 99.0, 100.5];
    let b = [105.0, 104.0, 106.0, 105.5];
    let mut point_index = Vec::new();
    let mut replicate = Vec::new();
    let mut parent = Vec::new();
    let mut wall = Vec::new();
    for (p, side) in [a, b].iter().enumerate() {
        for (r, w) in side.iter().enumerate() {
            point_index.push(p as i64);
            replicate.push(r as i64 + 1);
            parent.push(p as i64);
            wall.push(*w);
        }
    }
    let n = wall.len();
    let runs = df!(
        "point_id" => parent.iter().map(|p| format!("parent={p}")).collect::<Vec<_>>(),
        "point_index" => point_index,
        "replicate" => replicate,
        "parent" => parent,
        "iteration" => vec![1i64; n],
        "wall_s" => wall,
        "status" => vec!["ok"; n],
    )
    .unwrap();
    let mut tables = BTreeMap::new();
    tables.insert("runs".to_string(), runs);
    Evidence {
        manifest: manifest(&["parent"], Vec::new()),
        tables,
        vars: IndexMap::new(),
        published: std::rc::Rc::new(crate::published::load),
        scale: None,
    }
}

fn record(level: f64) -> SequentialRecord {
    SequentialRecord {
        alpha: 0.05,
        spending: Spending::OBrienFleming,
        power: 0.9,
        max_replicates: 12,
        budget_s: None,
        looks: vec![LookRecord {
            look: 2,
            replicates: 4,
            fraction: 4.0 / 12.0,
            spent: 1.0 - level,
            nominal_alpha: 1.0 - level,
            level,
            at: String::new(),
            elapsed_s: 0.0,
            claims: Vec::new(),
            added: 0,
            next_points: Vec::new(),
        }],
        stopped: Some(SequentialStop::MaxReplicates),
        stated: String::new(),
    }
}

#[test]
fn the_last_looks_level_makes_the_interval_and_the_verdict_says_it() {
    let c = claim(
        "kind: ratio\nmetric: wall_s\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { max: 1.03 }\n",
    );
    // A plain run: 95 %, decided (the whole interval is above 1.03), no stopping rule.
    let mut ev = evidence();
    let plain = check_claim(&c, &ev);
    assert_eq!(plain.tier, Tier::NotReproduced, "{plain:?}");
    assert_eq!(plain.interval.unwrap().level, 0.95);
    assert!(plain.sequential.is_none());
    assert!(!plain.power_line().unwrap().contains("sequential"));
    // The same rows at an early look of a sequential design: 99.999 %, wider, and no
    // longer decided; the verdict names the rule and the level.
    ev.manifest.sequential = Some(record(0.99999));
    let early = check_claim(&c, &ev);
    let i = early.interval.unwrap();
    assert_eq!(i.level, 0.99999);
    let j = plain.interval.unwrap();
    assert!(i.lo < j.lo && i.hi > j.hi, "{i:?} against {j:?}");
    assert_eq!(early.tier, Tier::Inconclusive, "{early:?}");
    let line = early.power_line().unwrap();
    assert!(
        line.contains("stopping rule: sequential")
            && line.contains("99.999 % repeated confidence interval")
            && line.contains("stopped: the most replicates a point may get was reached"),
        "{line}"
    );
    assert!(
        early.recipe.contains("99.999 % repeated (sequential)"),
        "{}",
        early.recipe
    );
    assert_eq!(early.sequential.unwrap().look, 2);
}
