//! REPRODUCTION.md is what `fslab claims --md --claims-from experiments` makes of the
//! committed repro bundles (data/reruns/), and it meets issue 28's acceptance: every claim
//! of the three seed experiments is listed with its unit, replicates, scale note and
//! recipe; no decisive tier rests on iterations of one filesystem, fewer than three
//! replicates or a reduced scale; a stand-in workload is never plain `reproduced`; a
//! second rerun of a profile is compared claim by claim.

use fslab::analysis::claims::{
    analyse, check_claims, render_reproduction, reproduction_md, summarise, summary_text,
    why_words, Answer, ClaimVerdict, ClaimsSource, Evidence, SampleUnit, SHARED_MIN, WHY_MAX,
};
use fslab::analysis::tiers::Tier;
use fslab::Bundle;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// What the README's command makes of the committed reruns, made once for the tests of
/// this file: the document and the summary's answers.
struct Regenerated {
    md: String,
    answers: Vec<Answer>,
}

fn regenerated() -> &'static Regenerated {
    static R: OnceLock<Regenerated> = OnceLock::new();
    R.get_or_init(|| {
        let bundles = all_reruns();
        let secs = analyse(&bundles, &ClaimsSource::Dir(root().join("experiments"))).unwrap();
        Regenerated {
            md: render_reproduction(&secs),
            answers: summarise(&secs),
        }
    })
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
    let md = &regenerated().md;
    let file = std::fs::read_to_string(root().join("REPRODUCTION.md")).unwrap();
    if *md != file {
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

/// The numbers a text writes: each run of digits (with `.` inside, a version as one
/// number; an exponent `e-6` as part of it) that stands as a word of its own, not inside
/// a hash or a name (`4d58253ce898`, `0x800`, `v1045`), with its minus sign.
fn numbers(text: &str) -> BTreeSet<String> {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() || (i > 0 && (word(b[i - 1]) || b[i - 1] == b'.')) {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i;
        while j < b.len()
            && (b[j].is_ascii_digit()
                || (b[j] == b'.' && b.get(j + 1).is_some_and(u8::is_ascii_digit)))
        {
            j += 1;
        }
        // An exponent: e, an optional sign, digits.
        if b.get(j) == Some(&b'e') {
            let mut k = j + 1;
            if matches!(b.get(k), Some(b'-' | b'+')) {
                k += 1;
            }
            if b.get(k).is_some_and(u8::is_ascii_digit) {
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
                j = k;
            }
        }
        if b.get(j).is_some_and(|&c| word(c)) {
            // Part of a name or a hash: skip the whole word.
            while j < b.len() && (word(b[j]) || b[j] == b'.') {
                j += 1;
            }
            i = j;
            continue;
        }
        let negative = start > 0 && b[start - 1] == b'-' && (start < 2 || !word(b[start - 2]));
        let n = &text[start..j];
        out.insert(if negative {
            format!("-{n}")
        } else {
            n.to_string()
        });
        i = j;
    }
    out
}

#[test]
fn the_number_scanner_reads_numbers_and_not_hashes() {
    let n = numbers(
        "1.098 [-0.1366, 3.566] n=400000 sha256 4d58253ce898 0x800 v1045 6.13.0 -3.775e-6 2026-12-03T10:36:41.176Z 8k",
    );
    let want: BTreeSet<String> = [
        "1.098",
        "-0.1366",
        "3.566",
        "400000",
        "6.13.0",
        "-3.775e-6",
        "2026",
        "12",
        "36",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(n, want);
}

/// Issue 42: the summary and the sentences said once per section leave every number
/// REPRODUCTION.md gave before them (tests/fixtures/reproduction/before.md, the file as
/// it was at 71a1395) in the document.
#[test]
fn every_number_of_the_document_before_the_summary_is_still_in_it() {
    let before =
        std::fs::read_to_string(root().join("tests/fixtures/reproduction/before.md")).unwrap();
    let was = numbers(&before);
    assert!(was.len() > 300, "{} numbers in the fixture", was.len());
    let now = numbers(&regenerated().md);
    let lost: Vec<&String> = was.difference(&now).collect();
    assert!(
        lost.is_empty(),
        "numbers no longer in REPRODUCTION.md: {lost:?}"
    );
}

/// The sentences of a row's cell, as issue 42's check counts them: split after `;` and
/// after a `.` followed by white space (not in `e.g.` or `i.e.`), trimmed, a claim's note
/// without its `note: ` label.
fn row_sentences(cell: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = cell.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let end = match c {
            ';' => true,
            '.' => {
                chars.get(i + 1).is_some_and(|n| n.is_whitespace())
                    && !(cur.ends_with("e.g") || cur.ends_with("i.e"))
            }
            _ => false,
        };
        if end {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| {
            let t = s.trim();
            t.strip_prefix("note: ").unwrap_or(t).to_string()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// Per section (`## …`) of a Markdown document: each sentence of at least SHARED_MIN
/// characters that more than one table row says, with the rows (by line), and how many
/// such sentences were read.
fn repeated_sentences(md: &str) -> (Vec<(String, String, usize)>, usize) {
    let mut out = Vec::new();
    let mut read = 0;
    for section in md.split("\n## ") {
        let heading = section.lines().next().unwrap_or("").to_string();
        let mut rows: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
        for (n, line) in section.lines().enumerate() {
            let is_row = line.starts_with("| ")
                && !line.starts_with("| claim | quote |")
                && !line.starts_with("| experiment | claim |");
            if !is_row {
                continue;
            }
            let inner = line.trim_start_matches("| ").trim_end_matches(" |");
            // A claim row's quote (its second cell) is the post's own words for that
            // claim: two claims read from one sentence of the post quote it both.
            let claim_row = section.contains("\n| claim | quote |");
            for (k, cell) in inner.split(" | ").enumerate() {
                if claim_row && k == 1 {
                    continue;
                }
                for s in row_sentences(cell) {
                    if s.chars().count() >= SHARED_MIN {
                        read += 1;
                        rows.entry(s).or_default().insert(n);
                    }
                }
            }
        }
        for (s, at) in rows {
            if at.len() > 1 {
                out.push((heading.clone(), s, at.len()));
            }
        }
    }
    (out, read)
}

/// Issue 42: what a section's rows share is said once at its top; a row says only what is
/// its own. The document before issue 42 repeated sentences across rows (the check finds
/// them there), today's repeats none.
#[test]
fn no_sentence_of_60_characters_is_in_two_rows_of_a_section() {
    let before =
        std::fs::read_to_string(root().join("tests/fixtures/reproduction/before.md")).unwrap();
    let (was, _) = repeated_sentences(&before);
    assert!(
        was.iter()
            .any(|(_, s, _)| s.starts_with("the post's fsstress may have run creat alone")),
        "{was:?}"
    );
    let (now, read) = repeated_sentences(&regenerated().md);
    assert!(
        read > 100,
        "only {read} sentences of {SHARED_MIN}+ characters read"
    );
    assert!(
        now.is_empty(),
        "sentences said in more than one row of a section:\n{}",
        now.iter()
            .map(|(h, s, n)| format!("{h}: {n} rows: {s}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The summary section of REPRODUCTION.md: from its heading to the next section.
fn summary_section(md: &str) -> &str {
    let start = md.find("\n## Summary").expect("a summary section") + 1;
    let end = md[start..].find("\n\n## ").map_or(md.len(), |e| start + e);
    &md[start..end]
}

/// Issue 42's acceptance: one answer per claim of the three posts (23) and fslab's
/// variants apart, each naming the section and bundle that decides (chosen by the rule
/// of `analysis::claims::summary`), with a reason of at most WHY_MAX characters, first
/// in REPRODUCTION.md and on one screen.
#[test]
fn the_summary_gives_one_answer_per_claim_on_one_screen() {
    let r = regenerated();
    let post: Vec<&Answer> = r.answers.iter().filter(|a| !a.variant).collect();
    let variants: Vec<&Answer> = r.answers.iter().filter(|a| a.variant).collect();
    assert_eq!(post.len(), 23, "{post:#?}");
    assert_eq!(variants.len(), 6, "{variants:#?}");
    for (_, id) in SEEDS {
        let exp =
            fslab::Experiment::load(root().join("experiments").join(format!("{id}.yaml"))).unwrap();
        for c in &exp.def.claims {
            let n = r
                .answers
                .iter()
                .filter(|a| a.id == c.id && a.experiment == id)
                .count();
            assert_eq!(n, 1, "{id} {}", c.id);
        }
    }
    for a in &r.answers {
        assert!(ORDER.contains(&a.bundle.as_str()), "{a:?}");
        // The section it names is the one whose bundle it names.
        assert!(
            r.md.contains(&format!("(§{})\n\nBundle: `{}`", a.section, a.bundle)),
            "{a:?}"
        );
        let why = why_words(a);
        assert!(
            why.chars().count() <= WHY_MAX,
            "{} chars: {why}",
            why.chars().count()
        );
    }
    let pick = |id: &str| -> (&str, Option<&str>) {
        let a = r.answers.iter().find(|a| a.id == id).unwrap();
        (a.bundle.as_str(), a.kernel.as_deref())
    };
    // At the post's scale, 3 replicates a side in both readings: the post's reading
    // (fsstress_f=first) decides, over 8 replicates at n = 100,000 and today's reading.
    assert_eq!(pick("first-run-slowest"), ("000-as-run", None));
    // At the post's scale under the post's reading (creat alone, the claim checked
    // without the spill regime): 3 replicates a side over 8 at n = 100,000.
    assert_eq!(pick("later-runs-same"), ("000-as-run", None));
    // The kernel that takes the zeroing path, over the one that converts.
    assert_eq!(pick("zero-out-grows"), ("003-paths", Some("uml-rt-zero")));
    // 5 replicates a side over seed 003's first rerun's single one.
    assert_eq!(
        pick("convert-unwritten-flat"),
        ("003-converted", Some("uml-trixie"))
    );
    assert_eq!(pick("ext4-fsck-10x-faster"), ("001", None));

    let summary = summary_section(&r.md);
    let lines = summary.lines().count();
    assert!(lines <= 40, "the summary has {lines} lines:\n{summary}");
    assert!(
        r.md.find("\n## Summary").unwrap() < r.md.find("\n## xfs-parent-pointers").unwrap(),
        "the summary comes first"
    );
    for a in &r.answers {
        assert!(summary.contains(&format!("| {} |", a.id)), "{}", a.id);
    }
    // Issue 43.5: which reading each verdict assumes, said once under the table.
    assert!(
        summary.contains("\nR1: read as the post's fsstress ran creat alone"),
        "{summary}"
    );
    let a = r
        .answers
        .iter()
        .find(|a| a.id == "later-runs-same")
        .unwrap();
    assert!(
        a.reading
            .as_deref()
            .is_some_and(|s| s.contains("creat alone")),
        "{a:?}"
    );
    let text = summary_text(&r.answers);
    assert!(text.lines().count() <= 40, "{text}");
}

fn fslab_claims(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fslab"))
        .current_dir(root())
        .arg("claims")
        .args(args)
        .output()
        .unwrap()
}

/// `fslab claims --summary` over the committed seed bundles: one row per claim of the
/// posts (23), fslab's variants apart (6), each naming the section and bundle that
/// decides, in at most 40 lines.
#[test]
fn fslab_claims_summary_over_the_seed_bundles_fits_a_screen() {
    let dirs: Vec<String> = ORDER.iter().map(|n| format!("data/reruns/{n}")).collect();
    let mut args = vec!["--summary", "--claims-from", "experiments"];
    args.extend(dirs.iter().map(String::as_str));
    let o = fslab_claims(&args);
    assert!(o.status.success(), "{}", crate::common::text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.lines().count() <= 40,
        "{} lines:\n{out}",
        out.lines().count()
    );
    let (post, variants) = out
        .split_once("\nfslab's own variants")
        .expect("the variants apart");
    let named = |part: &str| -> usize {
        part.lines()
            .filter(|l| {
                ORDER.iter().any(|b| {
                    l.contains(&format!(" {b}  "))
                        || l.contains(&format!(" {b}, kernel="))
                        || l.ends_with(&format!(" {b}"))
                }) && l.contains('§')
            })
            .count()
    };
    assert_eq!(named(post), 23, "{out}");
    assert_eq!(named(variants), 6, "{out}");
    assert!(out.contains("Which evidence decides"), "{out}");
}

#[test]
fn fslab_claims_summary_json_and_where_claims_from_goes() {
    let o = fslab_claims(&[
        "--summary",
        "--json",
        "--claims-from",
        "experiments",
        "data/reruns/001",
        "data/reruns/001-b",
    ]);
    assert!(o.status.success(), "{}", crate::common::text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 8, "{v}");
    assert!(
        a.iter().all(|x| x["bundle"] == "001" && x["section"] == 1),
        "{v}"
    );
    let o = fslab_claims(&["--claims-from", "experiments", "data/reruns/001"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--claims-from goes with --md or --summary"),
        "{}",
        crate::common::text(&o)
    );
}

/// The cells of a Markdown table row (`\|` inside a cell is not a separator).
fn md_cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells.pop();
    cells.iter().map(|c| c.trim().to_string()).collect()
}

/// Issue 43's acceptance: every decided and every inconclusive row of REPRODUCTION.md
/// says what its design could detect at 90 % power (or why nothing is detectable): the
/// summary in its column, a section's row in its reason (with the sentences said once at
/// the section's top put back).
#[test]
fn every_decided_or_inconclusive_row_states_its_detectable_effect() {
    let md = &regenerated().md;
    let judged = |tier: &str| {
        [
            "inconclusive",
            "reproduced",
            "reproduced with substitutes",
            "not reproduced",
        ]
        .contains(&tier)
    };
    let says_power = |text: &str| {
        text.contains("could detect ≥ ")
            || text.contains("could detect a difference ≥ ")
            || text.contains("detectable effect unknown")
            || text.contains("no effect is detectable")
    };
    let mut summary_rows = 0;
    let mut section_rows = 0;
    let mut shared: BTreeMap<String, String> = BTreeMap::new();
    let mut summary_head: Option<Vec<String>> = None;
    let mut missing = Vec::new();
    for line in md.lines() {
        if line.starts_with("## ") {
            shared.clear();
            continue;
        }
        if let Some(rest) = line.strip_prefix("- [") {
            if let Some((letter, sentence)) = rest.split_once("] ") {
                shared.insert(format!("[{letter}]"), sentence.to_string());
            }
            continue;
        }
        if !line.starts_with('|') || line.starts_with("|---") {
            continue;
        }
        let cells = md_cells(line);
        if cells.first().is_some_and(|c| c == "experiment") {
            summary_head = Some(cells);
            continue;
        }
        if let Some(head) = summary_head.as_ref().filter(|_| !line.starts_with("| **")) {
            let col = |name: &str| head.iter().position(|h| h == name).unwrap();
            let (tier, detects) = (&cells[col("tier")], &cells[col("detects (90 % power)")]);
            if judged(tier) {
                summary_rows += 1;
                if detects == "—" || detects.is_empty() {
                    missing.push(format!("summary {}: {detects:?}", cells[1]));
                }
            }
            continue;
        }
        if line.starts_with("| **") && cells.len() >= 9 && judged(&cells[7]) {
            section_rows += 1;
            let mut reason = cells[8].clone();
            for (letter, sentence) in &shared {
                reason = reason.replace(letter, sentence);
            }
            if !says_power(&reason) {
                missing.push(format!("{}: {}", cells[0], cells[8]));
            }
        }
    }
    assert!(
        summary_rows >= 20,
        "only {summary_rows} judged summary rows"
    );
    assert!(
        section_rows >= 40,
        "only {section_rows} judged section rows"
    );
    assert!(
        missing.is_empty(),
        "rows without their detectable effect:\n{}",
        missing.join("\n")
    );
}
