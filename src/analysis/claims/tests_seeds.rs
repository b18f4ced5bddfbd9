//! The seed experiments' claims: every `check:` parses, and each claim holds for the
//! post's own numbers (data/published).

use super::evidence::Evidence;
use crate::spec::claim::{parse_check, Check};
use crate::store::Manifest;
use indexmap::IndexMap;
use std::collections::BTreeMap;

#[test]
fn the_seed_experiments_checks_all_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    for name in [
        "xfs-parent-pointers",
        "ext-fsck-small-files",
        "xfs-rt-truncate",
    ] {
        let exp = crate::spec::Experiment::load(dir.join(format!("{name}.yaml"))).unwrap();
        assert!(!exp.def.claims.is_empty(), "{name} has no claims");
        for c in &exp.def.claims {
            let check = parse_check(c.check.as_ref().expect("every claim has a check").raw());
            assert!(check.is_ok(), "{name} claim {}: {:?}", c.id, check.err());
        }
    }
}

/// Each seed claim, checked against its own post's published numbers: the post must
/// satisfy the claim it makes (else the claim's `expect` is wrong, not the rerun).
fn published_satisfies(experiment: &str, claim: &str) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let exp = crate::spec::Experiment::load(dir.join(format!("{experiment}.yaml"))).unwrap();
    let c = exp.def.claims.iter().find(|c| c.id == claim).unwrap();
    let check: Check = c.check.as_ref().unwrap().read().unwrap().clone();
    let ev = Evidence {
        manifest: Manifest::default(),
        tables: BTreeMap::new(),
        vars: IndexMap::new(),
        published: std::rc::Rc::new(crate::published::load),
        scale: None,
    };
    let Some(published) = check.published(&ev) else {
        panic!("{experiment} {claim}: no published value to check");
    };
    let value = published.unwrap_or_else(|e| panic!("{experiment} {claim}: {e}"));
    let expect = check.stated().expect;
    assert!(
        expect.holds(value),
        "{experiment} {claim}: the post's own number {value} is not {expect}"
    );
}

#[test]
fn seed_000_first_run_overhead_holds_for_the_post() {
    published_satisfies("xfs-parent-pointers", "first-run-overhead");
}

#[test]
fn seed_000_first_run_overhead_without_link_holds_for_the_post() {
    published_satisfies("xfs-parent-pointers", "first-run-overhead-without-link");
}

#[test]
fn seed_000_later_runs_same_holds_for_the_post() {
    published_satisfies("xfs-parent-pointers", "later-runs-same");
}

#[test]
fn seed_000_first_run_slowest_holds_for_the_post() {
    published_satisfies("xfs-parent-pointers", "first-run-slowest");
}

#[test]
fn seed_ext_fsck_small_files_ext4_fsck_10x_faster_holds_for_the_post() {
    published_satisfies("ext-fsck-small-files", "ext4-fsck-10x-faster");
}

#[test]
fn seed_ext_fsck_small_files_uninit_bg_halves_fsck_holds_for_the_post() {
    published_satisfies("ext-fsck-small-files", "uninit-bg-halves-fsck");
}

#[test]
fn seed_ext_fsck_small_files_ext4_largest_dir_contiguous_holds_for_the_post() {
    published_satisfies("ext-fsck-small-files", "ext4-largest-dir-contiguous");
}

#[test]
fn seed_ext_fsck_small_files_ext3_largest_dir_scattered_holds_for_the_post() {
    published_satisfies("ext-fsck-small-files", "ext3-largest-dir-scattered");
}

#[test]
fn seed_xfs_rt_truncate_convert_unwritten_flat_holds_for_the_post() {
    published_satisfies("xfs-rt-truncate", "convert-unwritten-flat");
}

#[test]
fn seed_xfs_rt_truncate_large_rtextsize_costs_little_holds_for_the_post() {
    published_satisfies("xfs-rt-truncate", "large-rtextsize-costs-little");
}

#[test]
fn seed_000_first_run_sys_overhead_holds_for_the_post() {
    published_satisfies("xfs-parent-pointers", "first-run-sys-overhead");
}

#[test]
fn seed_000_later_runs_sys_close_holds_for_the_post() {
    published_satisfies("xfs-parent-pointers", "later-runs-sys-close");
}

#[test]
fn seed_000_later_runs_user_same_holds_for_the_post() {
    published_satisfies("xfs-parent-pointers", "later-runs-user-same");
}

#[test]
fn seed_xfs_rt_truncate_zero_out_grows_holds_for_the_post() {
    published_satisfies("xfs-rt-truncate", "zero-out-grows");
}

#[test]
fn seed_xfs_rt_truncate_conclusion_small_same_holds_for_the_post() {
    published_satisfies("xfs-rt-truncate", "conclusion-small-same");
}

#[test]
fn seed_xfs_rt_truncate_conclusion_large_better_holds_for_the_post() {
    published_satisfies("xfs-rt-truncate", "conclusion-large-better");
}

// `variant-data-hint-flat` is fslab's own variant, with no published counterpart.
#[test]
fn seed_xfs_rt_truncate_variant_has_no_published_number() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let exp = crate::spec::Experiment::load(dir.join("xfs-rt-truncate.yaml")).unwrap();
    let c = exp
        .def
        .claims
        .iter()
        .find(|c| c.id == "variant-data-hint-flat")
        .unwrap();
    let check: Check = c.check.as_ref().unwrap().read().unwrap().clone();
    let ev = Evidence {
        manifest: Manifest::default(),
        tables: BTreeMap::new(),
        vars: IndexMap::new(),
        published: std::rc::Rc::new(crate::published::load),
        scale: None,
    };
    assert!(check.published(&ev).is_none());
}
