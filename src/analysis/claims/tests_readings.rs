//! `needs: reading:` on the committed seed 000 bundles: a claim's precondition is the
//! post's mechanism under one reading of the post, and a bundle run under the other
//! reading (the `as-run` profile: the post's fsstress ran `creat` alone) checks it
//! without, and says which reading each verdict assumes (issue 43, part 5).

use super::{check_claims, ClaimVerdict, Evidence, Inapplicable};
use crate::analysis::tiers::Tier;
use crate::store::Bundle;
use std::path::Path;

fn verdict(bundle: &str, id: &str) -> ClaimVerdict {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exp =
        crate::spec::Experiment::load(root.join("experiments/xfs-parent-pointers.yaml")).unwrap();
    let b = Bundle::open(root.join("data/reruns").join(bundle)).unwrap();
    let mut ev = Evidence::from_bundle(&b).unwrap();
    ev.scale = exp.def.scale.clone();
    check_claims(&exp.def.claims, &ev)
        .into_iter()
        .find(|v| v.id == id)
        .unwrap()
}

#[test]
fn under_the_creat_alone_reading_the_first_run_claims_are_decided_at_the_published_scale() {
    for id in ["first-run-overhead", "first-run-sys-overhead"] {
        let v = verdict("000-as-run-first-runs", id);
        assert!(v.tier.decides(), "{id}: {:?} {}", v.tier, v.reason);
        assert_eq!(v.not_applicable, None, "{id}");
        let reading = v.reading.as_deref().unwrap();
        assert!(reading.contains("creat alone"), "{id}: {reading}");
        // the verdict says what the design could detect
        assert!(
            v.power_line().unwrap().starts_with("could detect ≥ "),
            "{id}"
        );
    }
}

#[test]
fn under_the_whole_list_reading_the_needs_apply_and_an_unrecorded_reading_is_said() {
    // 000-published-first-runs predates the `fsstress_f` variable: its needs apply (it
    // ran the whole -f list), and the verdict says it could not tell from the bundle.
    let v = verdict("000-published-first-runs", "first-run-overhead");
    assert_eq!(
        v.not_applicable,
        Some(Inapplicable::MechanismAbsent),
        "{}",
        v.reason
    );
    assert_eq!(v.tier, Tier::NotApplicable);
    let reading = v.reading.as_deref().unwrap();
    assert!(reading.contains("whole -f list"), "{reading}");
    assert!(
        reading.contains("does not record `fsstress_f`"),
        "{reading}"
    );
    // a claim without `reading:` says none
    assert_eq!(verdict("000-published", "first-run-slowest").reading, None);
}
