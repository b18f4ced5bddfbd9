//! Claim checks over synthetic frames; every expected number is computed by hand in the
//! comment next to it.

use super::{
    check_claim, check_claims, render, tier_counts_frame, verdicts_frame, Evidence, Expect,
    Inapplicable, Stat,
};
use crate::analysis::tiers::Tier;
use crate::spec::{Claim, Value as SpecValue};
use crate::store::{Manifest, PointRecord, PointStatus, ToolRecord};
use indexmap::IndexMap;
use polars::prelude::*;
use std::collections::BTreeMap;

fn point(index: usize, id: &str, vars: &[(&str, serde_json::Value)], status: &str) -> PointRecord {
    PointRecord {
        id: id.into(),
        index,
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        status: status.parse().unwrap(),
        reason: (status == "unsupported")
            .then(|| "tool too old: `mkfs.xfs` is version 6.1.0, this point needs ≥ 6.10".into()),
        iterations: 0,
        repeat_stop: None,
        repeat_stops: Vec::new(),
        notes: Vec::new(),
    }
}

/// parent=0: 10, 8, 8 s; parent=1: 11, 8.2, 8.1 s; one failed row that must not count.
fn parent_runs() -> DataFrame {
    df!(
        "experiment" => ["e"; 7],
        "point_id" => ["parent=0", "parent=0", "parent=0", "parent=1", "parent=1", "parent=1", "parent=1"],
        "point_index" => [0i64, 0, 0, 1, 1, 1, 1],
        "parent" => [0i64, 0, 0, 1, 1, 1, 1],
        "iteration" => [1i64, 2, 3, 1, 2, 3, 4],
        "wall_s" => [10.0, 8.0, 8.0, 11.0, 8.2, 8.1, 99.0],
        "status" => ["ok", "ok", "ok", "ok", "ok", "ok", "failed"],
    )
    .unwrap()
}

pub(super) fn manifest(axes: &[&str], points: Vec<PointRecord>) -> Manifest {
    let mut m = Manifest::default();
    m.experiment.id = "e".into();
    m.matrix_axes = axes.iter().map(|s| s.to_string()).collect();
    m.points = points;
    m
}

pub(super) fn parent_evidence(n: i64) -> Evidence {
    let mut tables = BTreeMap::new();
    tables.insert("runs".to_string(), parent_runs());
    let mut vars = IndexMap::new();
    vars.insert("n".to_string(), SpecValue::Int(n));
    Evidence {
        manifest: manifest(
            &["parent"],
            vec![
                point(0, "parent=0", &[("parent", 0.into())], "ok"),
                point(1, "parent=1", &[("parent", 1.into())], "ok"),
            ],
        ),
        tables,
        vars,
        published: std::rc::Rc::new(crate::published::load),
        scale: None,
    }
}

pub(super) fn claim(yaml: &str) -> Claim {
    Claim {
        id: "c".into(),
        text: "a claim".into(),
        quote: None,
        check: Some(serde_yaml::from_str(yaml).unwrap()),
        not_measured: None,
        needs: None,
        draft: false,
    }
}

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn ratio_of_first_iterations_against_the_published_runs() {
    let v = check_claim(
        &claim(
            r#"
kind: ratio
numerator: { parent: 1, iteration: 1 }
denominator: { parent: 0, iteration: 1 }
expect: { max: 1.10 }
published:
  dataset: "000"
  numerator: { quantity: real_time, parent: 1, link_op: true, run: 1 }
  denominator: { quantity: real_time, parent: 0, link_op: true, run: 1 }
"#,
        ),
        &parent_evidence(400000),
    );
    // 11 / 10 = 1.1, which is ≤ 1.10.
    assert!(close(v.measured.unwrap(), 1.1), "{v:?}");
    // The post: 20.654 / 18.807 = 1.098208...
    assert!(close(v.published.unwrap(), 20.654 / 18.807), "{v:?}");
    // One replicate a side: the unit is the iteration, and the tier is at best
    // inconclusive whatever the number says.
    assert_eq!(v.tier, Tier::Inconclusive, "{v:?}");
    assert_eq!(v.expected, "≤ 1.1");
    assert!(
        v.reason.starts_with(
            "unit: iteration of one filesystem (1 replicate a side, 1 iteration): an interval over the iterations of one filesystem does not cover"
        ),
        "{}",
        v.reason
    );
}

#[test]
fn ratio_of_later_iterations_with_a_range_and_a_failed_row_left_out() {
    let v = check_claim(
        &claim(
            r#"
kind: ratio
numerator: { parent: 1, iteration: { min: 2 } }
denominator: { parent: 0, iteration: { min: 2 } }
expect: { min: 0.95, max: 1.01 }
published:
  dataset: "000"
  numerator: { quantity: real_time, parent: 1, link_op: true, run: { min: 2 } }
  denominator: { quantity: real_time, parent: 0, link_op: true, run: { min: 2 } }
"#,
        ),
        &parent_evidence(400000),
    );
    // (8.2 + 8.1) / 2 = 8.15 over (8 + 8) / 2 = 8 → 1.01875 (the failed 99 s is not a run).
    assert!(close(v.measured.unwrap(), 1.01875), "{v:?}");
    // The post, runs 2..10: 128.628 / 9 = 14.292 over 126.738 / 9 = 14.082.
    assert!(close(v.published.unwrap(), 128.628 / 126.738), "{v:?}");
    assert_eq!(v.tier, Tier::Inconclusive);
    assert_eq!(
        v.replication.map(|r| r.label()).as_deref(),
        Some("unit: iteration of one filesystem (1 replicate a side, 2 iterations)")
    );
}

#[test]
fn first_vs_rest_takes_the_point_closest_to_failing() {
    let v = check_claim(
        &claim(
            r#"
kind: first_vs_rest
expect: { min: 1.2 }
published:
  dataset: "000"
  select: { quantity: real_time, link_op: true }
  by: [parent]
"#,
        ),
        &parent_evidence(400000),
    );
    // parent=0: 10 / 8 = 1.25; parent=1: 11 / 8.15 = 1.349693…; the lower one decides.
    assert!(close(v.measured.unwrap(), 1.25), "{v:?}");
    assert!(
        v.details
            .iter()
            .any(|d| d.contains("parent=1") && d.contains("1.35")),
        "{v:?}"
    );
    // The post: parent=0 18.807 / 14.082 = 1.335535…, parent=1 20.654 / 14.292 = 1.4451…
    assert!(
        close(v.published.unwrap(), 18.807 / (126.738 / 9.0)),
        "{v:?}"
    );
    // One first run per point: one replicate, not enough to decide.
    assert_eq!(v.tier, Tier::Inconclusive);
    assert!(
        v.reason
            .starts_with("unit: replicate, 1 a side; at least 3 replicates a side are needed"),
        "{}",
        v.reason
    );
}

#[test]
fn flat_is_the_largest_over_the_smallest_group() {
    let runs = df!(
        "point_id" => ["r=8k", "r=8k", "r=64k", "r=1024k"],
        "point_index" => [0i64, 0, 1, 2],
        "rtextsize" => ["8k", "8k", "64k", "1024k"],
        "iteration" => [1i64, 2, 1, 1],
        "wall_s" => [1.0, 1.2, 1.3, 1.21],
        "status" => ["ok"; 4],
    )
    .unwrap();
    let mut tables = BTreeMap::new();
    tables.insert("runs".to_string(), runs);
    let ev = Evidence {
        manifest: manifest(&["rtextsize"], Vec::new()),
        tables,
        vars: IndexMap::new(),
        published: std::rc::Rc::new(crate::published::load),
        scale: None,
    };
    let v = check_claim(
        &claim(
            r#"
kind: flat
across: rtextsize
expect: { max: 1.2 }
published:
  dataset: "003"
  select: { method: convert_unwritten }
  across: rtextsize
"#,
        ),
        &ev,
    );
    // Means: 8k 1.1, 64k 1.3, 1024k 1.21 → 1.3 / 1.1 = 1.181818…
    assert!(close(v.measured.unwrap(), 1.3 / 1.1), "{v:?}");
    // The post's convert-unwritten row: 10.526 / 9.441 = 1.114924…
    assert!(close(v.published.unwrap(), 10.526 / 9.441), "{v:?}");
    // One replicate a group: iterations of one filesystem, never decisive.
    assert_eq!(v.tier, Tier::Inconclusive);
}

pub(super) fn extents_evidence() -> Evidence {
    // fs=ext3 (point 0): inode 12 has blocks at 100, 105, 106, 200 (logical 0..3) → runs
    // [100] [105-106] [200]: 3 block pairs, 2 breaks → 2/3. Inode 13 (2 blocks) is smaller.
    // A metadata (IND) block in between is ignored.
    // fs=ext4 (point 1): inode 20 has 10 blocks at 1000 and 5 at 1010 → contiguous → 0.
    let k = 4096u64;
    let df = df!(
        "point_id" => ["fs=ext3"; 7].iter().copied().chain(["fs=ext4"; 2]).collect::<Vec<_>>(),
        "point_index" => [0i64, 0, 0, 0, 0, 0, 0, 1, 1],
        "capture" => ["capture-02-debugfs"; 9],
        "path" => [""; 9],
        "inode" => [12i64, 12, 12, 12, 12, 13, 13, 20, 20],
        "index" => [0i64, 1, 2, 3, 2, 0, 1, 0, 1],
        "logical_bytes" => [0, k, 2 * k, 3 * k, 2 * k, 0, k, 0, 10 * k],
        "physical_bytes" => [100 * k, 105 * k, 106 * k, 200 * k, 150 * k, 300 * k, 301 * k, 1000 * k, 1010 * k],
        "length_bytes" => [k, k, k, k, k, k, k, 10 * k, 5 * k],
        "flags" => ["", "", "", "last", "metadata,ind", "", "last", "", "last,eof"],
    )
    .unwrap();
    let mut tables = BTreeMap::new();
    tables.insert("extents".to_string(), df);
    Evidence {
        manifest: manifest(
            &["fs"],
            vec![
                point(0, "fs=ext3", &[("fs", "ext3".into())], "ok"),
                point(1, "fs=ext4", &[("fs", "ext4".into())], "ok"),
            ],
        ),
        tables,
        vars: IndexMap::new(),
        published: std::rc::Rc::new(crate::published::load),
        scale: None,
    }
}

#[test]
fn layout_measures_the_largest_file_of_each_point() {
    let ev = extents_evidence();
    let v = check_claim(
        &claim(
            r#"
kind: layout
select: { fs: ext3 }
min_blocks: 4
expect: { min: 0.5 }
published: { dataset: "001-dir-blocks", select: { fs: ext3 } }
"#,
        ),
        &ev,
    );
    assert!(close(v.measured.unwrap(), 2.0 / 3.0), "{v:?}");
    // The post's ext3 listing (head and tail): 79 data blocks, 77 pairs, 66 breaks.
    assert!(close(v.published.unwrap(), 66.0 / 77.0), "{v:?}");
    assert_eq!(v.tier, Tier::ReproducedWithSubstitutes, "{v:?}");
    assert!(
        v.details[0].contains("4 blocks in 3 contiguous runs"),
        "{v:?}"
    );

    let v = check_claim(
        &claim(
            r#"
kind: layout
select: { fs: ext4 }
min_blocks: 4
expect: { max: 0.01 }
published: { dataset: "001-dir-blocks", select: { fs: ext4 } }
"#,
        ),
        &ev,
    );
    assert!(close(v.measured.unwrap(), 0.0), "{v:?}");
    // The post's ext4 directory: (0):1900544, (1-5070):1900546-… → 1 break in 5070 pairs.
    assert!(close(v.published.unwrap(), 1.0 / 5070.0), "{v:?}");
    assert_eq!(v.tier, Tier::ReproducedWithSubstitutes, "{v:?}");
}

#[test]
fn layout_of_files_too_small_is_not_applicable() {
    let v = check_claim(
        &claim("kind: layout\nselect: { fs: ext3 }\nmin_blocks: 64\nexpect: { min: 0.5 }\n"),
        &extents_evidence(),
    );
    assert_eq!(v.tier, Tier::NotApplicable);
    assert!(v.reason.contains("too small"), "{}", v.reason);
    assert!(v.reason.contains("has 4 blocks"), "{}", v.reason);
}

#[test]
fn smaller_scale_is_not_applicable_but_shows_the_measurement() {
    let v = check_claim(
        &claim(
            "kind: ratio\nnumerator: { parent: 1, iteration: 1 }\ndenominator: { parent: 0, iteration: 1 }\nexpect: { max: 1.1 }\nat_scale: { n: 400000 }\n",
        ),
        &parent_evidence(2000),
    );
    assert_eq!(v.tier, Tier::NotApplicable);
    assert_eq!(v.not_applicable, Some(Inapplicable::ReducedScale));
    assert_eq!(v.tier_label(), "not applicable (reduced scale)");
    assert!(close(v.measured.unwrap(), 1.1));
    assert!(
        v.reason
            .starts_with("reduced scale (see the scale note); at this scale: unit: iteration"),
        "{}",
        v.reason
    );
    assert_eq!(v.scale, "reduced: n=2000 here, 400000 published");
}

#[test]
fn unsupported_points_missing_tables_and_stand_ins_are_named() {
    let mut ev = parent_evidence(400000);
    ev.manifest.points[1].status = PointStatus::Unsupported;
    ev.manifest.points[1].reason = Some("tool too old: mkfs.xfs 6.1.0 < 6.10".into());
    let mut runs = parent_runs();
    let keep: BooleanChunked = [true, true, true, false, false, false, false]
        .into_iter()
        .map(Some)
        .collect();
    runs = runs.filter(&keep).unwrap();
    ev.tables.insert("runs".into(), runs);
    ev.manifest.tools.insert(
        "fsstress".into(),
        ToolRecord {
            command: "{{fslab}} stress".into(),
            program: "/x/fslab".into(),
            version: "fslab 0.1.0".into(),
            stand_in: Some("fslab's built-in workload".into()),
            choice: Some(1),
            notes: Vec::new(),
        },
    );
    let v = check_claim(
        &claim("kind: ratio\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { max: 1.1 }\n"),
        &ev,
    );
    assert_eq!(v.tier, Tier::NotApplicable);
    assert!(v.measured.is_none());
    assert!(
        v.reason
            .starts_with("unsupported here: parent=1 unsupported here (tool too old"),
        "{}",
        v.reason
    );
    // The stand-in is named once for the bundle, not in each reason.
    assert_eq!(v.not_applicable, Some(Inapplicable::NotRun));
    assert!(
        v.substitutions[0].starts_with("stand-in workload: fsstress ran as `fslab stress`"),
        "{:?}",
        v.substitutions
    );

    let v = check_claim(&claim("kind: layout\nexpect: { max: 0.1 }\n"), &ev);
    assert_eq!(v.tier, Tier::NotApplicable);
    assert!(
        v.reason
            .contains("missing data: the bundle has no `extents` table"),
        "{}",
        v.reason
    );

    let v = check_claim(
        &claim("kind: flat\nacross: parent\nexpect: { max: 1.1 }\n"),
        &ev,
    );
    assert_eq!(v.tier, Tier::NotApplicable);
    assert!(v.reason.contains("only 0 ran"), "{}", v.reason);
}

#[test]
fn unreadable_and_absent_checks_are_not_applicable() {
    let ev = parent_evidence(1);
    let v = check_claim(&claim("kind: guess\n"), &ev);
    assert_eq!(v.tier, Tier::NotApplicable);
    assert!(v.reason.contains("cannot be read"), "{}", v.reason);
    let v = check_claim(
        &claim("kind: ratio\nnumerator: {}\ndenominator: {}\nexpct: {}\n"),
        &ev,
    );
    assert!(v.reason.contains("expct"), "{}", v.reason);
    let mut c = claim("kind: ratio");
    c.check = None;
    assert!(check_claim(&c, &ev).reason.contains("no `check:`"));
}

#[test]
fn expectations_and_the_frame() {
    let e = Expect {
        min: Some(1.0),
        max: Some(2.0),
    };
    assert!(e.holds(1.0) && e.holds(2.0) && !e.holds(2.01) && !e.holds(0.99));
    // Inside: the one nearest a bound decides; outside: the one furthest out.
    assert_eq!(e.decisive(&[1.5, 1.1, 1.8]), Some(1.1));
    assert_eq!(e.decisive(&[1.5, 2.5, 0.9]), Some(2.5));
    assert_eq!(Stat::Median.apply(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
    let mut quoted = claim("kind: first_vs_rest\nexpect: { min: 1.2 }\n");
    quoted.quote = Some("the post's words".into());
    let vs = check_claims(&[quoted], &parent_evidence(1));
    let df = verdicts_frame(&vs).unwrap();
    assert_eq!(df.height(), 1);
    assert_eq!(
        df.get_column_names()
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
        [
            "claim",
            "kernel",
            "kind",
            "variant",
            "tier",
            "not_applicable",
            "reason",
            "measured",
            "interval_lo",
            "interval_hi",
            "no_interval",
            "published",
            "expected",
            "unit",
            "sample_unit",
            "replicates_num",
            "replicates_den",
            "scale",
            "recipe",
            "text",
            "details",
            "substitutions"
        ]
    );
    // The count per tier, every tier a row.
    let counts = tier_counts_frame(&vs).unwrap();
    assert_eq!(counts.height(), 5);
    let n = counts.column("claims").unwrap().u32().unwrap();
    let t = counts.column("tier").unwrap().str().unwrap();
    assert_eq!(t.get(3), Some("inconclusive"));
    assert_eq!(n.get(3), Some(1));
    assert_eq!(n.sum(), Some(1));
    let text = render(&vs);
    // The tier is the headline and the only verdict.
    assert!(text.contains("c — INCONCLUSIVE"), "{text}");
    assert!(!text.contains("REPRODUCED"), "{text}");
    // first_vs_rest: one first run per replicate, one replicate a point.
    assert!(
        text.contains(
            "why:       unit: replicate, 1 a side; at least 3 replicates a side are needed"
        ),
        "{text}"
    );
    assert!(text.contains("1 claims by tier: 0 reproduced, 0 reproduced with substitutes, 0 not reproduced, 1 inconclusive, 0 not applicable"), "{text}");
}

/// Claims the post makes in words only: no published number to check (the experiment
/// says so in each claim's `note`).
#[test]
fn claims_in_words_only_have_no_published_number() {
    for (experiment, claim) in [
        ("xfs-parent-pointers", "later-runs-same-without-link"),
        ("ext-fsck-small-files", "fast-without-flex_bg"),
        ("ext-fsck-small-files", "pass2-carries-the-gap"),
    ] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let exp = crate::spec::Experiment::load(dir.join(format!("{experiment}.yaml"))).unwrap();
        let c = exp.def.claims.iter().find(|c| c.id == claim).unwrap();
        let check = c.check.as_ref().unwrap().read().unwrap().clone();
        let ev = Evidence {
            manifest: Manifest::default(),
            tables: BTreeMap::new(),
            vars: IndexMap::new(),
            published: std::rc::Rc::new(crate::published::load),
            scale: None,
        };
        assert!(check.published(&ev).is_none(), "{experiment} {claim}");
    }
}

/// A claim marked `not_measured` (it compares two kernels): not applicable with its
/// reason, the published number computed, and why this bundle could not stand in.
#[test]
fn a_claim_not_measured_here_is_not_applicable_with_its_reason() {
    let ev = parent_evidence(400000);
    let mut c = claim(
        "kind: ratio\nnumerator: { parent: 1 }\ndenominator: { parent: 7 }\nexpect: { min: 1.5 }\npublished: { dataset: \"003\", numerator: { group: truncate_time, method: zero_out, rtextsize: 1024k }, denominator: { group: truncate_time, method: convert_unwritten, rtextsize: 1024k } }\n",
    );
    c.not_measured = Some("it compares two kernels".into());
    let v = check_claim(&c, &ev);
    assert_eq!(v.tier, Tier::NotApplicable);
    assert_eq!(v.not_applicable, Some(Inapplicable::NotMeasured));
    assert!(
        v.reason
            .starts_with("not measured here: it compares two kernels"),
        "{v:?}"
    );
    // 20.141 / 10.526
    assert!(close(v.published.unwrap(), 20.141 / 10.526), "{v:?}");
    assert_eq!(v.no_interval.as_deref(), Some("not measured here"));
}

#[test]
fn a_layout_claim_over_a_failed_point_is_inconclusive_and_names_it() {
    let mut ev = extents_evidence();
    let c = claim("kind: layout\nselect: { fs: [ext3, ext4] }\nexpect: { max: 1 }\n");
    let v = check_claim(&c, &ev);
    // A layout has no interval by its nature: its number decides, and says so (ext3
    // ran on the ext4 driver: a substitution, named once for the bundle).
    assert_eq!(v.tier, Tier::ReproducedWithSubstitutes, "{v:?}");
    assert_eq!(
        v.reason,
        "0.6667 is ≤ 1 (no interval: single measurement of a deterministic layout)"
    );
    assert_eq!(
        v.no_interval.as_deref(),
        Some("no interval: single measurement of a deterministic layout")
    );
    assert!(v.interval.is_none());
    // fs=ext4 failed (its rows are what it left before failing).
    ev.manifest.points[1].status = PointStatus::Failed;
    ev.manifest.points[1].reason = Some("mkfs: exit 1".into());
    let v = check_claim(&c, &ev);
    assert_eq!(v.tier, Tier::Inconclusive);
    assert_eq!(
        v.reason,
        "incomplete: point fs=ext4 is failed: mkfs: exit 1"
    );
    // A substitution is named on every claim of the bundle: ext3 ran on the ext4 driver.
    ev.manifest.environment.kernel = "6.18.0".into();
    let v = check_claim(&c, &ev);
    assert!(
        v.substitutions
            .iter()
            .any(|s| s.starts_with("ext3 mounted by the ext4 driver (kernel 6.18.0")),
        "{v:?}"
    );
}

#[test]
fn first_vs_rest_takes_each_replicates_own_first_run() {
    // parent=0 in two replicates: 10, 8, 8 and 12, 8, 8. Pooled by point (the old
    // grouping), both iteration 1s sort first and 12 counts as a later run.
    let runs = df!(
        "experiment" => ["e"; 6],
        "point_id" => ["parent=0"; 6],
        "point_index" => [0i64; 6],
        "parent" => [0i64; 6],
        "iteration" => [1i64, 2, 3, 1, 2, 3],
        "replicate" => [1i64, 1, 1, 2, 2, 2],
        "wall_s" => [10.0, 8.0, 8.0, 12.0, 8.0, 8.0],
        "status" => ["ok"; 6],
    )
    .unwrap();
    let mut ev = parent_evidence(400000);
    ev.tables.insert("runs".to_string(), runs);
    ev.manifest.points.truncate(1);
    let v = check_claim(
        &claim("kind: first_vs_rest\nexpect: { min: 1.2 }\nmin_samples: 1\n"),
        &ev,
    );
    // Replicate 1: 10 / 8 = 1.25; replicate 2: 12 / 8 = 1.5; their mean 1.375.
    assert!(close(v.measured.unwrap(), 1.375), "{v:?}");
    assert!(
        v.details
            .iter()
            .any(|d| d.contains("per replicate: 1.25, 1.5")),
        "{v:?}"
    );
    // Student t over the two replicates: 1.375 ± 12.706 × 0.17678 / √2 = ± 1.5883.
    let i = v.interval.unwrap();
    assert!((i.lo - (1.375 - 1.5883)).abs() < 1e-3, "{i:?}");
    assert_eq!(v.tier, Tier::Inconclusive);
}
