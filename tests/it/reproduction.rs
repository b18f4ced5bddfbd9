//! REPRODUCTION.md is what `fslab claims --md --claims-from experiments` makes of the
//! committed repro bundles (data/reruns/), and it meets issue 28's acceptance: every claim
//! of the three seed experiments is listed with its unit, replicates, scale note and
//! recipe; no decisive tier rests on iterations of one filesystem, fewer than three
//! replicates or a reduced scale; a stand-in workload is never plain `reproduced`; a
//! second rerun of a profile is compared claim by claim.

use fslab::analysis::claims::{
    check_claims, reproduction_md, ClaimVerdict, ClaimsSource, Evidence, SampleUnit,
};
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

/// Every committed bundle in the order REPRODUCTION.md takes them: a seed's repro
/// profile at its other scales (`scale_check`, smallest first) and its independent
/// second rerun next to it (consecutive bundles of one profile are read together), then
/// its run at the published scale.
const ORDER: [&str; 20] = [
    "000-n10k",
    "000",
    "000-b",
    "000-n100k",
    "000-published",
    "000-published-b",
    "000-published-first-runs",
    "000-published-first-runs-b",
    "000-as-run",
    "000-as-run-b",
    "000-as-run-first-runs",
    "000-as-run-first-runs-b",
    "001",
    "001-b",
    "003",
    "003-b",
    "003-converted",
    "003-converted-b",
    "003-paths",
    "003-paths-b",
];

/// The command that regenerates REPRODUCTION.md.
fn command() -> String {
    format!(
        "fslab claims --md --claims-from experiments {} > REPRODUCTION.md",
        ORDER
            .iter()
            .map(|n| format!("data/reruns/{n}"))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

fn open(name: &str) -> Bundle {
    let dir = root().join("data/reruns").join(name);
    Bundle::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// The first rerun of each seed, in SEEDS order.
fn reruns() -> Vec<Bundle> {
    SEEDS.iter().map(|(seed, _)| open(seed)).collect()
}

fn all_reruns() -> Vec<Bundle> {
    ORDER.iter().map(|n| open(n)).collect()
}

#[test]
fn reproduction_md_is_regenerated_from_the_committed_reruns() {
    // The command written in README.md is the one this test runs.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&command().replace(" > REPRODUCTION.md", "")),
        "README.md should give: {}",
        command()
    );
    let md = reproduction_md(
        &all_reruns(),
        &ClaimsSource::Dir(root().join("experiments")),
    )
    .unwrap();
    let file = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    if md != file {
        let first = md
            .lines()
            .zip(file.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(md.lines().count().min(file.lines().count()));
        panic!(
            "REPRODUCTION.md differs from what the bundles give, first at line {}:\n  file: {:?}\n  now:  {:?}\nregenerate with: {}",
            first + 1,
            file.lines().nth(first),
            md.lines().nth(first),
            command()
        );
    }
}

/// Every bundle in the table was made from an experiment with today's axes: a claim that
/// says the bundle lacks a column it selects (a rerun older than an axis, as `003` was
/// before the `loop` axis) is a stale bundle, not a verdict. Rerun it.
#[test]
fn no_committed_rerun_lacks_a_column_that_todays_claims_select() {
    let file = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    let stale: Vec<&str> = file
        .lines()
        .filter(|l| l.contains("table has no column"))
        .map(|l| l.get(..160).unwrap_or(l))
        .collect();
    assert!(
        stale.is_empty(),
        "rows over stale bundles:\n{}",
        stale.join("\n")
    );
}

#[test]
fn a_bundle_with_other_settings_is_not_read_as_a_rerun() {
    // 000-published (link=1, ten runs) and 000-published-first-runs (runs=1, three
    // replicates) share the experiment and profile, not the `--set` values: two sections.
    let md = reproduction_md(
        &[open("000-published"), open("000-published-first-runs")],
        &ClaimsSource::Dir(root().join("experiments")),
    )
    .unwrap();
    assert!(
        md.contains("Bundle: `000-published`; no independent rerun"),
        "{md}"
    );
    assert!(
        md.contains("Bundle: `000-published-first-runs`; no independent rerun"),
        "{md}"
    );
    assert!(!md.contains("its independent rerun"), "{md}");
    // The scale check's variable is not such a setting, even where the bundle ran a copy
    // of the experiment from before its `scale_check:` (000-n10k): one series.
    let md = reproduction_md(
        &[open("000-n10k"), open("000"), open("000-b")],
        &ClaimsSource::Dir(root().join("experiments")),
    )
    .unwrap();
    assert_eq!(md.matches("\nBundle: ").count(), 1, "{md}");
    assert!(
        md.contains("the same profile at other scales: `000-n10k` (n=10000)"),
        "{md}"
    );
}

/// The replicate count is how much evidence a run gathers, not what it measures: a rerun
/// whose only other `--set` is `replicates=` is read as the rerun it is, and its line
/// says its settings and replicates.
#[test]
fn a_rerun_with_another_replicate_count_is_still_a_rerun() {
    let tmp = std::env::temp_dir().join(format!("fslab-repl-{}", std::process::id()));
    let copy = tmp.join("000-b");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(root().join("data/reruns/000-b"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(st.success());
    let path = copy.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["overrides"]["replicates"] = serde_json::json!(8);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let md = reproduction_md(
        &[open("000"), Bundle::open(&copy).unwrap()],
        &ClaimsSource::Dir(root().join("experiments")),
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(md.matches("\nBundle: ").count(), 1, "{md}");
    assert!(md.contains("its independent rerun: `000-b`"), "{md}");
    assert!(
        md.contains("- rerun `000-b` with `replicates=8`, 8 replicates a point:"),
        "{md}"
    );
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
                // Split by kernel where the bundle has a `kernel` axis.
                file.contains(&format!("| **{}**: ", c.id))
                    || file.contains(&format!("| **{} @ kernel=", c.id)),
                "{id}: claim {} is not in REPRODUCTION.md (rerun the repro profile and regenerate it)",
                c.id
            );
        }
    }
}

/// Today's claims over a committed bundle's data (what REPRODUCTION.md shows).
fn verdicts(id: &str, b: &Bundle) -> Vec<ClaimVerdict> {
    let exp =
        fslab::Experiment::load(root().join("experiments").join(format!("{id}.yaml"))).unwrap();
    check_claims(&exp.def.claims, &Evidence::from_bundle(b).unwrap())
}

fn decisive(v: &ClaimVerdict) -> bool {
    matches!(
        v.tier,
        Tier::Reproduced | Tier::ReproducedWithSubstitutes | Tier::NotReproduced
    )
}

/// Issue 28's acceptance on bundles made by the real runner: no decisive tier whose
/// unit is the iteration of one filesystem or that has fewer than three replicates a
/// side; none below the published scale; every row with its unit, replicates, scale
/// note and recipe; a stand-in never plain `reproduced`.
#[test]
fn the_reruns_meet_the_acceptance() {
    for ((seed, id), b) in SEEDS.iter().zip(reruns()) {
        let m = b.manifest();
        assert_eq!(m.experiment.id, *id, "{seed}");
        assert_eq!(m.profile.as_deref(), Some("repro"), "{seed}");
        let stand_in = m.tools.values().any(|t| t.stand_in.is_some());
        for v in verdicts(id, &b) {
            let what = format!("{seed} {}: {v:?}", v.id);
            assert!(!v.scale.is_empty(), "{what}");
            if v.measured.is_some() {
                assert!(v.interval.is_some() != v.no_interval.is_some(), "{what}");
                assert!(!v.recipe.is_empty(), "{what}");
                assert!(v.replication.is_some(), "{what}");
            }
            if decisive(&v) {
                let r = v.replication.unwrap();
                assert_ne!(r.unit, SampleUnit::Iteration, "{what}");
                if r.unit == SampleUnit::Replicate {
                    assert!(r.fewest_replicates() >= 3, "{what}");
                }
                assert!(v.scale.starts_with("at or above"), "{what}");
            }
            if stand_in {
                assert_ne!(v.tier, Tier::Reproduced, "{what}");
            }
        }
        // What was left out of the bundle is said in it.
        assert!(Path::new(b.path()).join("DROPPED.md").exists(), "{seed}");
    }
}

/// The ext3 claims of seed 001 rest on ext3's allocator, which no kernel since 4.3 has:
/// `not applicable: mechanism absent`, with the evidence in the reason.
#[test]
fn ext3_claims_say_their_mechanism_is_absent_on_a_kernel_without_ext3() {
    let b = &reruns()[1];
    let v = verdicts("ext-fsck-small-files", b);
    for id in ["ext3-largest-dir-scattered", "pass2-carries-the-gap"] {
        let c = v.iter().find(|c| c.id == id).unwrap();
        assert_eq!(c.tier_label(), "not applicable: mechanism absent", "{c:?}");
        assert!(
            c.reason
                .contains("ext3 mounted by the ext4 driver (kernel 6.18"),
            "{}",
            c.reason
        );
    }
    let md = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    assert!(md.contains("| not applicable: mechanism absent |"), "{md}");
}

/// Seed 000's two sides are made with the same mkfs features: xfsprogs 6.13 turns
/// `exchange` on with parent pointers only, so the experiment asks for it on both.
#[test]
fn seed_000_parent_0_and_1_are_made_with_the_same_exchange() {
    let b = &reruns()[0];
    let geo = b.table("geometry").unwrap();
    let col = |n: &str| -> Vec<String> {
        geo.column(n)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|x| x.unwrap_or_default().to_string())
            .collect()
    };
    let (ids, keys, values) = (col("point_id"), col("key"), col("value"));
    let exchange = |parent: &str| -> Vec<String> {
        (0..ids.len())
            .filter(|&i| keys[i] == "exchange" && ids[i].starts_with(&format!("parent={parent},")))
            .map(|i| values[i].clone())
            .collect()
    };
    let (p0, p1) = (exchange("0"), exchange("1"));
    assert!(!p0.is_empty() && !p1.is_empty(), "{geo}");
    assert!(p0.iter().chain(&p1).all(|v| v == "1"), "{p0:?} {p1:?}");
}

/// The second rerun of a profile is compared with the first, claim by claim, and the
/// agreement is in REPRODUCTION.md.
#[test]
fn a_second_rerun_is_compared_claim_by_claim() {
    let md = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    for second in ORDER.iter().filter(|n| n.ends_with("-b")) {
        let first_name = second.strip_suffix("-b").unwrap();
        // Alone, or inside a series over scales whose top is another bundle (seed 000's
        // top is n = 100,000): then the heading names the bundle the rerun reruns.
        assert!(
            md.contains(&format!("; its independent rerun: `{second}`"))
                || md.contains(&format!(
                    "; an independent rerun of `{first_name}` (n=40000): `{second}` (n=40000)"
                )),
            "{second}"
        );
        let first = open(first_name);
        let b = open(second);
        assert_eq!(first.manifest().experiment.id, b.manifest().experiment.id);
        assert_eq!(first.manifest().profile, b.manifest().profile);
        assert_ne!(
            first.manifest().run_order.as_ref().map(|o| o.seed),
            b.manifest().run_order.as_ref().map(|o| o.seed),
            "two independent reruns draw their own order"
        );
    }
    assert!(
        md.contains("both reruns: ") || md.contains("reruns disagree: "),
        "{md}"
    );
}

/// Seed 000 at the post's own scale is in the table, its claims at the published scale,
/// over three replicates a side: the later-run claims in the spill regime (the fsmap
/// after the tenth run counts it), the first-run claims not shown by that capture, and
/// no claim decided on the iterations of one filesystem.
#[test]
fn seed_000_at_the_published_scale_is_in_the_table() {
    let b = open("000-published");
    assert_eq!(b.manifest().profile.as_deref(), Some("published"));
    let md = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    assert!(md.contains("Bundle: `000-published`"), "{md}");
    let v = verdicts("xfs-parent-pointers", &b);
    for v in &v {
        assert_ne!(v.tier_label(), "not applicable (reduced scale)", "{v:?}");
        if v.replication
            .is_some_and(|r| r.unit == SampleUnit::Iteration)
        {
            assert!(!decisive(v), "{v:?}");
        }
    }
    let get = |id: &str| v.iter().find(|c| c.id == id).unwrap();
    for id in [
        "later-runs-same",
        "later-runs-sys-close",
        "later-runs-user-same",
    ] {
        let c = get(id);
        assert_eq!(c.not_applicable, None, "{c:?}");
        let r = c.replication.as_ref().unwrap();
        assert_eq!(
            (r.unit, r.replicates),
            (SampleUnit::Replicate, (3, 3)),
            "{c:?}"
        );
    }
    for id in ["first-run-overhead", "first-run-sys-overhead"] {
        let c = get(id);
        assert_eq!(
            c.tier_label(),
            "not applicable: mechanism not shown",
            "{c:?}"
        );
        assert!(c.reason.contains("counted after run 10"), "{}", c.reason);
    }
}

/// Seed 000's link=1 timing claims rest on parent pointers spilled out of the inode: on
/// the committed n = 40,000 bundle (the real runner, `xfs_io -c fsmap` parsed into the
/// `fsmap` table) the parent=1,link=1 filesystems have far fewer inodes with an attr
/// fork extent than the later-runs claims need, so they say `mechanism absent` with the
/// counts; the first-run claims cannot be told from a capture after the tenth run.
#[test]
fn seed_000_link_claims_need_the_spill_regime_measured_in_the_bundle() {
    let v = verdicts("xfs-parent-pointers", &open("000"));
    let get = |id: &str| v.iter().find(|c| c.id == id).unwrap();
    let c = get("later-runs-same");
    assert_eq!(c.tier_label(), "not applicable: mechanism absent", "{c:?}");
    assert!(
        c.reason
            .contains("inodes with an attr fork extent per replicate (fsmap)"),
        "{}",
        c.reason
    );
    // The capture is taken after the tenth run: it says nothing about the first, which
    // the first-run claims read, whether it finds a spill (link=1) or none (link=0).
    for id in [
        "first-run-overhead",
        "first-run-sys-overhead",
        "first-run-overhead-without-link",
    ] {
        let c = get(id);
        assert_eq!(
            c.tier_label(),
            "not applicable: mechanism not shown",
            "{c:?}"
        );
        assert!(
            c.reason.contains("counted after run 10 of each replicate")
                && c.reason.contains("the claim reads run 1"),
            "{}",
            c.reason
        );
    }
    // The log-item claims are measured from the tracepoint counts of the same bundle.
    let c = get("log-items-elided-first-run");
    assert!(c.recipe.contains("name=attri_elided"), "{c:?}");
    assert!(c.measured.is_some_and(|m| m > 0.5), "{c:?}");
}

/// Seed 000's `as-run` bundles ran the post's command as fsstress before xfstests
/// 1b37d45c read it (`-f creat=1` alone, a workload variant chosen by a var): the table
/// says so at the top of their section, and no file gets a second name. Under that reading
/// the post's own runs had no spilled attr forks either, so the link=1 claims are checked
/// without that precondition (issue 43.5): each says which reading it assumes and is
/// decided or inconclusive with the effect it could have detected, never `mechanism
/// absent` for a mechanism the post did not have.
#[test]
fn seed_000_as_run_says_which_workload_ran_and_lacks_the_spill_regime() {
    let b = open("000-as-run");
    assert_eq!(b.manifest().profile.as_deref(), Some("as-run"));
    let lines = fslab::analysis::claims::workloads_ran(b.manifest());
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("`when: fsstress_f=first`")
            && lines[0].contains("every point")
            && lines[0].contains("-z -f creat=1 -d"),
        "{lines:?}"
    );
    // The bundles of the post's own command say so, naming the whole -f list.
    let plain = fslab::analysis::claims::workloads_ran(open("000-published").manifest());
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert!(
        plain[0].starts_with("workload: `workload:` at every point")
            && plain[0].contains("-f creat=1,mkdir=1,"),
        "{plain:?}"
    );

    let md = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    assert!(md.contains(&format!("- {}\n", lines[0])), "{md}");
    let v = verdicts("xfs-parent-pointers", &b);
    let get = |id: &str| v.iter().find(|c| c.id == id).unwrap();
    for id in [
        "later-runs-same",
        "later-runs-sys-close",
        "later-runs-user-same",
    ] {
        let c = get(id);
        assert_ne!(c.tier, Tier::NotApplicable, "{id}: {c:?}");
        assert!(
            c.reading
                .as_deref()
                .is_some_and(|r| r.contains("creat alone")),
            "{id}: {:?}",
            c.reading
        );
        let power = c.power_line().unwrap_or_default();
        assert!(power.starts_with("could detect ≥ "), "{id}: {power}");
    }
    let c = get("first-run-slowest");
    assert!(decisive(c), "{c:?}");
    // With a capture after the first run, the link=0 first-run claim is decided.
    let fr = verdicts("xfs-parent-pointers", &open("000-as-run-first-runs"));
    let c = fr
        .iter()
        .find(|c| c.id == "first-run-overhead-without-link")
        .unwrap();
    assert_eq!(c.not_applicable, None, "{c:?}");
    // The link=1 first-run claim too: the post's first runs had no spilled forks under
    // this reading, so the count after run 1 is not its precondition.
    let c = fr.iter().find(|c| c.id == "first-run-overhead").unwrap();
    assert!(decisive(c), "{c:?}");
    assert!(c.reading.is_some(), "{c:?}");
}

/// Issue 29's acceptance for seed 003: on the kernel here that converts the truncated tail
/// to unwritten (6.12 in a guest), the post's two convert claims get verdicts measured
/// over 5 replicates a side of the post's own loop, each naming the guest and the path.
#[test]
fn seed_003_convert_claims_are_measured_over_replicates_in_the_converting_guest() {
    for name in ["003-converted", "003-converted-b"] {
        let b = open(name);
        let v = verdicts("xfs-rt-truncate", &b);
        for id in ["convert-unwritten-flat", "large-rtextsize-costs-little"] {
            let c: Vec<&ClaimVerdict> = v.iter().filter(|c| c.id == id).collect();
            assert_eq!(c.len(), 1, "{name} {id}: {c:?}");
            let c = c[0];
            assert_eq!(c.kernel.as_deref(), Some("uml-trixie"), "{c:?}");
            assert_ne!(c.tier, Tier::NotApplicable, "{name} {id}: {}", c.reason);
            assert!(c.interval.is_some(), "{name} {id}: {c:?}");
            let r = c.replication.as_ref().unwrap();
            assert_eq!(r.unit, SampleUnit::Replicate, "{c:?}");
            assert_eq!(r.replicates, (5, 5), "{c:?}");
            assert!(
                c.substitutions.iter().any(|s| {
                    s.starts_with(
                    "points with kernel=uml-trixie measured in a User-Mode Linux guest: kernel 6.12"
                )
                }),
                "{:?}",
                c.substitutions
            );
            assert!(
                c.details
                    .iter()
                    .any(|d| d.starts_with("truncate path `converted` at every selected point")),
                "{:?}",
                c.details
            );
        }
    }
}

/// Issue 29, seed 003's two paths: the `paths` bundles ran one 6.12 tree built twice, with
/// and without fslab's port of the RFC's zero-out path. Each kernel's path is measured
/// (`zeroed` on `uml-rt-zero`, `converted` on `uml-rt-convert`), `zero-out-grows` is
/// measured on the zeroing kernel and `mechanism absent` on the other, and the post's
/// two conclusions compare the kernels over 5 replicates a side, each side having taken
/// its own path, naming both built kernels and the patch.
#[test]
fn seed_003_conclusions_compare_two_builds_of_one_tree_that_take_the_two_paths() {
    for name in ["003-paths", "003-paths-b"] {
        let b = open(name);
        let v = verdicts("xfs-rt-truncate", &b);
        let one = |id: &str, kernel: Option<&str>| -> &ClaimVerdict {
            let c: Vec<&ClaimVerdict> = v
                .iter()
                .filter(|c| c.id == id && c.kernel.as_deref() == kernel)
                .collect();
            assert_eq!(c.len(), 1, "{name} {id} {kernel:?}: {c:?}");
            c[0]
        };
        let z = one("zero-out-grows", Some("uml-rt-zero"));
        assert_ne!(z.tier, Tier::NotApplicable, "{name}: {}", z.reason);
        assert!(
            z.details
                .iter()
                .any(|d| d.starts_with("truncate path `zeroed` at every selected point")),
            "{:?}",
            z.details
        );
        let c = one("zero-out-grows", Some("uml-rt-convert"));
        assert_eq!(c.tier_label(), "not applicable: mechanism absent", "{c:?}");
        assert!(c.reason.contains("took `converted`"), "{}", c.reason);
        for id in ["conclusion-small-same", "conclusion-large-better"] {
            let c = one(id, None);
            assert_ne!(c.tier, Tier::NotApplicable, "{name} {id}: {}", c.reason);
            assert!(c.interval.is_some(), "{name} {id}: {c:?}");
            let r = c.replication.as_ref().unwrap();
            assert_eq!(r.unit, SampleUnit::Replicate, "{c:?}");
            assert_eq!(r.replicates, (5, 5), "{c:?}");
            for path in ["zeroed", "converted"] {
                assert!(
                    c.details.iter().any(|d| d
                        .starts_with(&format!("truncate path `{path}` at every selected point"))),
                    "{name} {id}: {:?}",
                    c.details
                );
            }
            assert!(
                c.substitutions
                    .iter()
                    .any(|s| s.contains("`uml-rt-zero`") && s.contains("xfs-rt-zero-out-6.12.diff")),
                "{name} {id}: {:?}",
                c.substitutions
            );
            assert!(
                c.substitutions
                    .iter()
                    .any(|s| s.contains("`uml-rt-convert`")),
                "{name} {id}: {:?}",
                c.substitutions
            );
        }
    }
}
