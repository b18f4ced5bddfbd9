//! Issue 28's rules over synthetic frames: the replicate as the unit, the published
//! scale, mechanism preconditions, variants, the log slope of `flat`.

use super::evidence::{published_vars, Evidence};
use super::per_kernel::check_claims;
use super::render::{render, tier_counts};
use super::scale_need::{scale_gap, scale_required};
use super::tests::{claim, close, extents_evidence, manifest, parent_evidence};
use super::units::SampleUnit;
use super::verdict::{check_claim, Inapplicable};
use crate::spec::claim::{Allocator, AttrForks, Cond, Contrast, Needs};

use crate::analysis::tiers::Tier;
use crate::spec::Value as SpecValue;
use indexmap::IndexMap;
use polars::prelude::*;
use std::collections::BTreeMap;

/// parent=0 and parent=1 in `reps` replicates of 3 iterations each; replicate r of
/// parent=1 takes `1.2 + 0.01 r` s an iteration and of parent=0 `1.0 + 0.01 r` s.
fn replicated_evidence(reps: i64) -> Evidence {
    let mut point_id = Vec::new();
    let mut point_index = Vec::new();
    let mut parent = Vec::new();
    let mut iteration = Vec::new();
    let mut replicate = Vec::new();
    let mut wall = Vec::new();
    for p in [0i64, 1] {
        for r in 1..=reps {
            for i in 1..=3i64 {
                point_id.push(format!("parent={p}"));
                point_index.push(p);
                parent.push(p);
                iteration.push(i);
                replicate.push(r);
                // Iterations of one filesystem barely differ (± 0.001 s); replicates do.
                let base = if p == 1 { 1.2 } else { 1.0 };
                wall.push(base + 0.01 * r as f64 + 0.001 * (i - 2) as f64);
            }
        }
    }
    let n = point_id.len();
    let runs = df!(
        "experiment" => vec!["e"; n],
        "point_id" => point_id,
        "point_index" => point_index,
        "parent" => parent,
        "iteration" => iteration,
        "replicate" => replicate,
        "wall_s" => wall,
        "status" => vec!["ok"; n],
    )
    .unwrap();
    let mut ev = parent_evidence(400000);
    ev.tables.insert("runs".to_string(), runs);
    ev
}

#[test]
fn the_interval_is_over_replicates_and_decides_only_with_enough_of_them() {
    let c = claim(
        "kind: ratio\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { min: 1.1 }\n",
    );
    let v = check_claim(&c, &replicated_evidence(4));
    // Replicate means: parent=1 1.21..1.24 (mean 1.225), parent=0 1.01..1.04 (1.025).
    assert!(close(v.measured.unwrap(), 1.225 / 1.025), "{v:?}");
    let r = v.replication.unwrap();
    assert_eq!(r.unit, SampleUnit::Replicate);
    assert_eq!(r.replicates, (4, 4));
    assert_eq!(v.tier, Tier::Reproduced, "{v:?}");
    assert!(v.recipe.contains("per (point, replicate)"), "{}", v.recipe);
    // Fieller over the four replicate means a side, not the twelve iterations.
    let over_reps = crate::analysis::interval::fieller_welch(
        &[1.21, 1.22, 1.23, 1.24],
        &[1.01, 1.02, 1.03, 1.04],
        0.95,
    )
    .unwrap();
    let i = v.interval.unwrap();
    assert!((i.lo - over_reps.lo).abs() < 1e-9 && (i.hi - over_reps.hi).abs() < 1e-9);
    // Two replicates a side: an interval, but fewer than three: inconclusive.
    let v = check_claim(&c, &replicated_evidence(2));
    assert_eq!(v.tier, Tier::Inconclusive);
    assert!(
        v.reason
            .starts_with("unit: replicate, 2 a side; at least 3 replicates a side are needed"),
        "{}",
        v.reason
    );
    // One replicate: three iterations a side whose interval lies far above 1.1, and
    // still only inconclusive, since they are iterations of one filesystem.
    let v = check_claim(&c, &replicated_evidence(1));
    assert_eq!(v.tier, Tier::Inconclusive);
    assert!(
        v.reason.contains("unit: iteration of one filesystem"),
        "{}",
        v.reason
    );
    assert!(
        v.reason.contains("over the iterations alone"),
        "{}",
        v.reason
    );
}

#[test]
fn ext3_claims_need_the_ext3_allocator_and_a_contrast() {
    let mut ev = extents_evidence();
    ev.manifest.environment.kernel = "6.18.0".into();
    let mut c = claim("kind: layout\nselect: { fs: ext3 }\nmin_blocks: 4\nexpect: { min: 0.5 }\n");
    // Without `needs:`, a decisive tier (capped by the substitution).
    assert_eq!(check_claim(&c, &ev).tier, Tier::ReproducedWithSubstitutes);
    c.needs = Some(Needs {
        allocator: Some(Allocator::Ext3),
        ..Needs::default()
    });
    let v = check_claim(&c, &ev);
    assert_eq!(v.tier, Tier::NotApplicable);
    assert_eq!(v.not_applicable, Some(Inapplicable::MechanismAbsent));
    assert_eq!(v.tier_label(), "not applicable: mechanism absent");
    assert!(
        v.reason.starts_with("mechanism absent: the claim is about ext3's allocator, and none ran: ext3 mounted by the ext4 driver (kernel 6.18.0"),
        "{}",
        v.reason
    );
    // On a kernel with an ext3 driver the allocator is there; the contrast decides:
    // ext4's largest file scores 0 against ext3's 2/3, far enough apart.
    ev.manifest.environment.kernel = "2.6.32".into();
    let contrast = |d: f64| Contrast {
        select: [("fs".to_string(), Cond::Value(SpecValue::Str("ext4".into())))]
            .into_iter()
            .collect(),
        min_difference: d,
    };
    c.needs = Some(Needs {
        allocator: Some(Allocator::Ext3),
        contrast: Some(contrast(0.1)),
        ..Needs::default()
    });
    assert_eq!(check_claim(&c, &ev).tier, Tier::Reproduced);
    c.needs = Some(Needs {
        allocator: None,
        contrast: Some(contrast(0.9)),
        ..Needs::default()
    });
    let v = check_claim(&c, &ev);
    assert_eq!(v.not_applicable, Some(Inapplicable::MechanismAbsent));
    assert!(
        v.reason
            .contains("the same measure over fs=ext4 gives 0 against 0.6667 here"),
        "{}",
        v.reason
    );
}

#[test]
fn the_published_profile_is_the_scale_and_at_scale_cannot_lower_it() {
    let published: IndexMap<String, SpecValue> = [
        ("n".to_string(), SpecValue::Int(400000)),
        ("size".to_string(), SpecValue::Str("1TB".into())),
        ("fs".to_string(), SpecValue::Str("xfs".into())),
    ]
    .into_iter()
    .collect();
    let self_certified: IndexMap<String, f64> = [("n".to_string(), 40000.0)].into_iter().collect();
    let req = scale_required(&self_certified, Some(&published));
    assert_eq!(req["n"], (400000.0, "400000".to_string()));
    assert_eq!(req["size"].1, "1TB");
    assert!(!req.contains_key("fs"));
    let here: IndexMap<String, SpecValue> = [
        ("n".to_string(), SpecValue::Int(40000)),
        ("size".to_string(), SpecValue::Str("8GiB".into())),
        ("fs".to_string(), SpecValue::Str("xfs".into())),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        scale_gap(&req, &here).as_deref(),
        Some("n=40000 here, 400000 published, size=8GiB here, 1TB published")
    );
    let at: IndexMap<String, SpecValue> = [
        ("n".to_string(), SpecValue::Int(400000)),
        ("size".to_string(), SpecValue::Str("1TB".into())),
    ]
    .into_iter()
    .collect();
    assert_eq!(scale_gap(&req, &at), None);
}

#[test]
fn a_first_run_claim_does_not_need_the_later_runs_but_a_later_run_claim_does() {
    // Seed 000's experiment: `repeat: "{{runs}}"`, 10 runs published; this bundle made 1.
    let mut ev = replicated_evidence(3);
    ev.manifest.experiment.yaml =
        include_str!("../../../experiments/xfs-parent-pointers.yaml").into();
    let mut vars = published_vars(&ev.manifest).expect("the seed has a published profile");
    vars.insert("runs".into(), SpecValue::Int(1));
    ev.vars = vars;
    let first = claim(
        "kind: ratio\nnumerator: { parent: 1, iteration: 1 }\ndenominator: { parent: 0, iteration: 1 }\nexpect: { min: 1.1 }\n",
    );
    let v = check_claim(&first, &ev);
    assert!(
        v.scale.starts_with("at or above the published scale; `runs` (10 published) is not compared: the claim reads only the first run"),
        "{}",
        v.scale
    );
    assert_eq!(v.tier, Tier::Reproduced, "{}", v.reason);
    let later = claim(
        "kind: ratio\nnumerator: { parent: 1, iteration: { min: 2 } }\ndenominator: { parent: 0, iteration: { min: 2 } }\nexpect: { min: 1.1 }\n",
    );
    let v = check_claim(&later, &ev);
    assert_eq!(v.scale, "reduced: runs=1 here, 10 published");
    assert_eq!(v.not_applicable, Some(Inapplicable::ReducedScale));
    // A claim that says its run count matters keeps it.
    let explicit = claim(
        "kind: ratio\nnumerator: { parent: 1, iteration: 1 }\ndenominator: { parent: 0, iteration: 1 }\nexpect: { min: 1.1 }\nat_scale: { runs: 10 }\n",
    );
    let v = check_claim(&explicit, &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::ReducedScale),
        "{}",
        v.scale
    );
}

#[test]
fn a_claim_without_a_quote_is_a_variant_outside_the_tallies() {
    let mut variant = claim("kind: first_vs_rest\nexpect: { min: 1.2 }\n");
    variant.id = "v".into();
    let mut post = claim("kind: first_vs_rest\nexpect: { min: 1.2 }\n");
    post.quote = Some("the post's words".into());
    let vs = check_claims(&[post, variant], &parent_evidence(1));
    assert!(!vs[0].variant && vs[1].variant);
    let counts = tier_counts(&vs);
    assert_eq!(counts.values().sum::<usize>(), 1);
    let text = render(&vs);
    assert!(text.contains("fslab's own variants"), "{text}");
    assert!(text.contains("1 claims by tier"), "{text}");
    assert!(text.contains("(and 1 variant of fslab's own)"), "{text}");
}

#[test]
fn a_log_slope_is_fitted_per_block_of_replicates() {
    // Three sizes, five replicates: wall = (1 + r / 100) · size^0.1 (size in KiB), so
    // every block's slope is exactly 0.1, whatever its replicate's level.
    let mut point_index = Vec::new();
    let mut replicate = Vec::new();
    let mut size = Vec::new();
    let mut wall = Vec::new();
    for (p, (label, kib)) in [("8k", 8.0f64), ("64k", 64.0), ("1024k", 1024.0)]
        .into_iter()
        .enumerate()
    {
        for r in 1..=5i64 {
            for _ in 0..2 {
                point_index.push(p as i64);
                replicate.push(r);
                size.push(label);
                wall.push((1.0 + r as f64 / 100.0) * kib.powf(0.1));
            }
        }
    }
    let n = wall.len();
    let runs = df!(
        "point_id" => size.iter().map(|s| format!("rtextsize={s}")).collect::<Vec<_>>(),
        "point_index" => point_index,
        "replicate" => replicate,
        "rtextsize" => size,
        "iteration" => vec![1i64; n],
        "wall_s" => wall,
        "status" => vec!["ok"; n],
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
    let mut c = claim(
        "kind: flat\nacross: rtextsize\nstatistic: log_slope\nexpect: { min: -0.05, max: 0.05 }\n",
    );
    c.quote = Some("q".into());
    let v = check_claim(&c, &ev);
    assert!((v.measured.unwrap() - 0.1).abs() < 1e-9, "{v:?}");
    assert_eq!(v.replication.unwrap().replicates, (5, 5));
    // Five identical slopes: a zero-width interval at 0.1, outside ±0.05.
    assert_eq!(v.tier, Tier::NotReproduced, "{v:?}");
    assert!(
        v.recipe.contains("least-squares slope of ln(wall_s)"),
        "{}",
        v.recipe
    );
}

/// `needs: attr_forks`: the inodes with an attr fork extent in the `fsmap` table, per
/// selected point and replicate, against `min_inodes` / `max_inodes`; the counts are the
/// evidence. Without the table the need cannot be met, and says what to capture.
#[test]
fn attr_fork_needs_count_the_spilled_inodes_of_each_replicate() {
    let mut ev = extents_evidence();
    ev.manifest.environment.kernel = "2.6.32".into();
    let c0 = claim("kind: layout\nselect: { fs: ext3 }\nmin_blocks: 4\nexpect: { min: 0.5 }\n");
    let with = |min: Option<u64>, max: Option<u64>| {
        let mut c = c0.clone();
        c.needs = Some(Needs {
            attr_forks: Some(AttrForks {
                select: [("fs".to_string(), Cond::Value(SpecValue::Str("ext3".into())))]
                    .into_iter()
                    .collect(),
                min_inodes: min,
                max_inodes: max,
            }),
            ..Needs::default()
        });
        c
    };
    let v = check_claim(&with(Some(1), None), &ev);
    assert_eq!(v.not_applicable, Some(Inapplicable::MechanismUnshown));
    assert_eq!(v.tier_label(), "not applicable: mechanism not shown");
    assert!(
        v.reason.contains("no `fsmap` table") && v.reason.contains("xfs_io -c fsmap"),
        "{}",
        v.reason
    );
    // ext3 point: replicate 1 has inodes 7 and 9 with attr extents (9 twice), replicate 2
    // only inode 7; data extents and special owners do not count.
    let fsmap = df!(
        "point_id" => ["fs=ext3"; 6],
        "point_index" => [0i64; 6],
        "replicate" => [1i64, 1, 1, 1, 2, 2],
        "owner" => ["inode", "inode", "inode", "inodes", "inode", "inode"],
        "inode" => [Some(7i64), Some(9), Some(9), None, Some(7), Some(8)],
        "fork" => [Some("attr"), Some("attr"), Some("attr"), None, Some("attr"), Some("data")],
    )
    .unwrap();
    ev.tables.insert("fsmap".into(), fsmap);
    assert_eq!(
        check_claim(&with(Some(1), None), &ev).tier,
        Tier::Reproduced
    );
    let v = check_claim(&with(Some(2), None), &ev);
    assert_eq!(v.not_applicable, Some(Inapplicable::MechanismAbsent));
    assert!(
        v.reason.contains("as few as 1") && v.reason.contains("2 (fs=ext3), 1 (fs=ext3)"),
        "{}",
        v.reason
    );
    let v = check_claim(&with(None, Some(0)), &ev);
    assert_eq!(v.not_applicable, Some(Inapplicable::MechanismAbsent));
    assert!(v.reason.contains("kept in the inode"), "{}", v.reason);
    assert_eq!(
        check_claim(&with(None, Some(2)), &ev).tier,
        Tier::Reproduced
    );
}

/// A bundle whose points ran in a User-Mode Linux guest cannot check a claim on the
/// split of CPU time (UML charges system time to user time): untestable, with why; the
/// wall clock is still checked.
#[test]
fn cpu_time_split_claims_are_untestable_in_a_uml_guest() {
    let mut ev = parent_evidence(40000);
    let sys = claim("kind: ratio\nmetric: sys_s\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { max: 10 }\n");
    let wall = claim("kind: ratio\nmetric: wall_s\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { max: 10 }\n");
    assert_ne!(
        check_claim(&sys, &ev).not_applicable,
        Some(Inapplicable::Untestable)
    );
    ev.manifest
        .environment
        .guests
        .push(crate::store::GuestInfo {
            kind: "User-Mode Linux".into(),
            name: "uml-bookworm".into(),
            release: "6.1.0".into(),
            caveats: vec![
                "system CPU time is not measured: UML charges it to user time (sys_s stays 0)"
                    .into(),
            ],
            ..Default::default()
        });
    let v = check_claim(&sys, &ev);
    assert_eq!(v.not_applicable, Some(Inapplicable::Untestable), "{v:?}");
    assert!(
        v.reason.contains("User-Mode Linux `uml-bookworm`")
            && v.reason.contains("charges it to user time"),
        "{}",
        v.reason
    );
    assert_ne!(
        check_claim(&wall, &ev).not_applicable,
        Some(Inapplicable::Untestable)
    );
}

/// A `truncate_path` table of points parent=0 and parent=1, 5 replicates each, the path
/// of each (parent, replicate) from `path_of`, with FIEMAP-like evidence for it.
fn path_table<'a>(path_of: impl Fn(i64, i64) -> &'a str) -> polars::prelude::DataFrame {
    let mut point_id = Vec::new();
    let mut point_index = Vec::new();
    let mut replicate = Vec::new();
    let mut path = Vec::new();
    let mut evidence = Vec::new();
    for p in [0i64, 1] {
        for r in 1..=5i64 {
            let taken = path_of(p, r);
            point_id.push(format!("parent={p}"));
            point_index.push(p);
            replicate.push(r);
            path.push(taken.to_string());
            evidence.push(match taken {
                "kept_written" => "/mnt/0 (4096 bytes): [0..1048575] 0x1 last",
                _ => "/mnt/0 (4096 bytes): [0..4095] 0x0; [4096..1048575] 0x801 last,unwritten",
            });
        }
    }
    let n = point_id.len();
    df!(
        "point_id" => point_id,
        "point_index" => point_index.clone(),
        "parent" => point_index,
        "replicate" => replicate,
        "truncate_path" => path,
        "reason" => vec!["why"; n],
        "evidence" => evidence,
    )
    .unwrap()
}

/// `needs: truncate_path`: every (point, replicate) the check selects must have taken the
/// claim's path in the `truncate_path` table; another path makes the claim `mechanism
/// absent` naming it and its evidence, and a path the map could not tell (or no table)
/// makes it `mechanism not shown`.
#[test]
fn truncate_path_needs_the_path_at_every_selected_replicate() {
    use crate::spec::claim::{TruncatePathNeed, TruncatePathNeeds};
    let mut ev = replicated_evidence(5);
    let mut c = claim(
        "kind: ratio\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { min: 1.1 }\n",
    );
    c.needs = Some(Needs {
        truncate_path: Some(TruncatePathNeeds::Every(TruncatePathNeed::Converted)),
        ..Needs::default()
    });
    let v = check_claim(&c, &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismUnshown),
        "{v:?}"
    );
    assert!(
        v.reason.contains("no `truncate_path` table") && v.reason.contains("parse: truncate-path"),
        "{}",
        v.reason
    );
    let table = |paths: [&str; 2]| {
        path_table(|p, r| {
            let want = paths[p as usize];
            if want == "unknown-last" {
                if r == 5 {
                    "unknown"
                } else {
                    "converted"
                }
            } else {
                want
            }
        })
    };
    ev.tables
        .insert("truncate_path".into(), table(["converted", "converted"]));
    let v = check_claim(&c, &ev);
    assert_eq!(v.not_applicable, None, "{v:?}");
    assert!(
        v.details.iter().any(|d| d.contains(
            "truncate path `converted` at every selected point (2 points, 10 replicates"
        )),
        "{:?}",
        v.details
    );
    ev.tables
        .insert("truncate_path".into(), table(["kept_written", "converted"]));
    let v = check_claim(&c, &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismAbsent),
        "{v:?}"
    );
    assert_eq!(v.tier_label(), "not applicable: mechanism absent");
    assert!(
        v.reason.contains(
            "about the `converted` truncate path, and parent=0 took `kept_written` (5 replicates"
        ) && v
            .reason
            .contains("evidence: /mnt/0 (4096 bytes): [0..1048575] 0x1 last"),
        "{}",
        v.reason
    );
    ev.tables
        .insert("truncate_path".into(), table(["converted", "unknown-last"]));
    let v = check_claim(&c, &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismUnshown),
        "{v:?}"
    );
    assert!(
        v.reason
            .contains("cannot tell which path ran: parent=1 took `unknown` (1 replicate"),
        "{}",
        v.reason
    );
}

/// `needs: { truncate_path: { numerator: …, denominator: … } }`: a ratio that compares two
/// paths needs each side's points to have taken that side's path; a swap, or one path
/// asked of both sides, makes it `mechanism absent`, naming the side's point.
#[test]
fn per_side_truncate_paths_need_each_side_its_own() {
    use crate::spec::claim::{TruncatePathNeed, TruncatePathNeeds};
    let mut ev = replicated_evidence(5);
    let mut c = claim(
        "kind: ratio\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { min: 1.1 }\n",
    );
    let sides = TruncatePathNeeds::Sides {
        numerator: TruncatePathNeed::Zeroed,
        denominator: TruncatePathNeed::Converted,
    };
    c.needs = Some(Needs {
        truncate_path: Some(sides),
        ..Needs::default()
    });
    let table = |one: &'static str, zero: &'static str| {
        path_table(move |p, _| if p == 1 { one } else { zero })
    };
    ev.tables
        .insert("truncate_path".into(), table("zeroed", "converted"));
    let v = check_claim(&c, &ev);
    assert_eq!(v.not_applicable, None, "{v:?}");
    for path in ["zeroed", "converted"] {
        assert!(
            v.details.iter().any(|d| d.contains(&format!(
                "truncate path `{path}` at every selected point (1 point, 5 replicates"
            ))),
            "{:?}",
            v.details
        );
    }
    ev.tables
        .insert("truncate_path".into(), table("converted", "zeroed"));
    let v = check_claim(&c, &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismAbsent),
        "{v:?}"
    );
    assert!(
        v.reason
            .contains("about the `zeroed` truncate path, and parent=1 took `converted`")
            && v.reason
                .contains("about the `converted` truncate path, and parent=0 took `zeroed`"),
        "{}",
        v.reason
    );
    ev.tables
        .insert("truncate_path".into(), table("zeroed", "converted"));
    c.needs = Some(Needs {
        truncate_path: Some(TruncatePathNeeds::Every(TruncatePathNeed::Zeroed)),
        ..Needs::default()
    });
    let v = check_claim(&c, &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismAbsent),
        "{v:?}"
    );
    assert!(
        v.reason
            .contains("about the `zeroed` truncate path, and parent=0 took `converted`"),
        "{}",
        v.reason
    );
}

/// `needs: { flush_latency: true }`: a claim whose number rests on fsync/flush latency is
/// untestable in a bundle whose points ran in a guest (its flushes never reach the
/// host's disk), with the guest's caveat as the reason; on the host it is checked, and a
/// claim without the field is checked in the guest too.
#[test]
fn flush_latency_claims_are_untestable_in_a_uml_guest() {
    let mut ev = parent_evidence(40000);
    let plain = claim("kind: ratio\nmetric: wall_s\nnumerator: { parent: 1 }\ndenominator: { parent: 0 }\nexpect: { max: 10 }\n");
    let mut flush = plain.clone();
    flush.needs = Some(Needs {
        flush_latency: true,
        ..Needs::default()
    });
    assert_ne!(
        check_claim(&flush, &ev).not_applicable,
        Some(Inapplicable::Untestable)
    );
    ev.manifest
        .environment
        .guests
        .push(crate::store::GuestInfo {
            kind: "User-Mode Linux".into(),
            name: "uml-trixie".into(),
            release: "6.12.0".into(),
            caveats: vec![
            "fsync and flush latency are not measured: guest flushes never reach the host's disk"
                .into(),
        ],
            ..Default::default()
        });
    let v = check_claim(&flush, &ev);
    assert_eq!(v.not_applicable, Some(Inapplicable::Untestable), "{v:?}");
    assert!(
        v.reason.contains("rests on fsync/flush latency")
            && v.reason.contains("User-Mode Linux `uml-trixie`")
            && v.reason.contains("never reach the host's disk"),
        "{}",
        v.reason
    );
    assert_ne!(
        check_claim(&plain, &ev).not_applicable,
        Some(Inapplicable::Untestable)
    );
}

/// A capture after the workload is the state after its last run: a claim that reads
/// only earlier runs (a first run) is not credited with the spill of later ones. Its
/// need is "not shown", naming the run the count is from; a claim that reads to the
/// last run, or a capture taken at the run it reads, is counted.
#[test]
fn attr_forks_counted_after_the_last_run_do_not_vouch_for_the_first() {
    let mut ev = parent_evidence(40000);
    let fsmap = |iteration: Option<i64>| {
        df!(
            "point_id" => ["parent=1"; 3],
            "point_index" => [1i64; 3],
            "iteration" => [iteration; 3],
            "owner" => ["inode"; 3],
            "inode" => [7i64, 8, 9],
            "fork" => ["attr"; 3],
        )
        .unwrap()
    };
    let with = |sel: &str| {
        let mut c = claim(&format!(
            "kind: ratio\nmetric: wall_s\nnumerator: {{ parent: 1, iteration: {sel} }}\ndenominator: {{ parent: 0, iteration: {sel} }}\nexpect: {{ max: 10 }}\n"
        ));
        c.needs = Some(Needs {
            attr_forks: Some(AttrForks {
                select: [("parent".to_string(), Cond::Value(SpecValue::Int(1)))]
                    .into_iter()
                    .collect(),
                min_inodes: Some(2),
                max_inodes: None,
            }),
            ..Needs::default()
        });
        c
    };
    ev.tables.insert("fsmap".into(), fsmap(None));
    // Captured after the workload: run 4 is parent=1's last.
    let v = check_claim(&with("1"), &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismUnshown),
        "{v:?}"
    );
    assert!(
        v.reason.contains("counted after run 4") && v.reason.contains("reads run 1"),
        "{}",
        v.reason
    );
    assert!(v.reason.contains("--set runs=1"), "{}", v.reason);
    // A list of runs reads up to its highest, still before run 4 (a list of two numbers
    // is read as a range by serde; one of texts stays a list).
    let v = check_claim(&with("['1', '2']"), &ev);
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismUnshown),
        "{v:?}"
    );
    assert!(v.reason.contains("runs up to 2"), "{}", v.reason);
    // Runs 2 and later end with the run it was captured after.
    let v = check_claim(&with("{ min: 2 }"), &ev);
    assert_eq!(v.not_applicable, None, "{v:?}");
    // A capture whose rows say they were taken after run 1 is counted for run 1.
    ev.tables.insert("fsmap".into(), fsmap(Some(1)));
    let v = check_claim(&with("1"), &ev);
    assert_eq!(v.not_applicable, None, "{v:?}");
}
