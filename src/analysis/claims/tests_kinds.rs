//! Every kind of check in the schema has an evaluator, and a claim of each kind goes
//! from its YAML to a measured number on a real rerun bundle (`data/reruns/`). A kind
//! added to `Check` without an evaluator does not compile; one added without a claim
//! measured here fails `every_kind_measures_a_claim_of_a_real_bundle`.

use super::evidence::Evidence;
use crate::spec::claim::{parse_check, Check, CheckError};
use crate::spec::Experiment;
use crate::store::Bundle;
use std::collections::BTreeSet;
use std::path::Path;

/// The bundles whose claims cover every kind: the smallest rerun of each seed.
const BUNDLES: [&str; 3] = ["000-published", "001", "003"];

/// serde's own list of `Check`'s variants, read from its refusal of an unknown kind.
fn serde_kinds() -> Vec<String> {
    let raw: serde_yaml::Value = serde_yaml::from_str("kind: no_such_kind").unwrap();
    let Err(CheckError::Yaml(e)) = parse_check(&raw) else {
        panic!("an unknown kind must be refused by serde");
    };
    let message = e.to_string();
    let (_, list) = message
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("serde's message names no variants: {message}"));
    list.split(", ")
        .map(|k| k.trim().trim_matches('`').to_string())
        .collect()
}

#[test]
fn the_kinds_listed_are_the_schemas_variants() {
    let listed: Vec<String> = Check::KINDS.iter().map(|k| k.to_string()).collect();
    assert_eq!(serde_kinds(), listed);
}

/// Each kind's evaluator and written form answer to the name serde reads after
/// `kind:` (the names are written by hand in each kind's `CheckSchema`).
#[test]
fn every_kind_has_an_evaluator_under_its_own_name() {
    for kind in Check::KINDS {
        let check = minimal(kind);
        assert_eq!(check.kind(), kind);
        assert_eq!(check.evaluator().name(), kind);
        assert_eq!(check.schema().name(), kind);
    }
}

/// One check of `kind` with only its required keys.
fn minimal(kind: &str) -> Check {
    let keys = match kind {
        "ratio" => "numerator: {}\ndenominator: {}",
        "flat" => "across: x",
        "io_summary" => "metric: seeks\nselect: {}",
        "gap_share" => "a: {}\nb: {}\npart: {}",
        _ => "",
    };
    serde_yaml::from_str(&format!("kind: {kind}\n{keys}\n"))
        .unwrap_or_else(|e| panic!("kind {kind}: {e}"))
}

#[test]
fn every_kind_measures_a_claim_of_a_real_bundle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/reruns");
    let mut measured: BTreeSet<&'static str> = BTreeSet::new();
    for name in BUNDLES {
        let bundle = Bundle::open(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let exp = Experiment::from_str_named(&bundle.manifest().experiment.yaml, name)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ev = Evidence::from_bundle(&bundle).unwrap_or_else(|e| panic!("{name}: {e}"));
        for claim in exp.def.claims.iter().filter(|c| !c.draft) {
            let Some(raw) = &claim.check else { continue };
            let check = parse_check(raw).unwrap_or_else(|e| panic!("{name} {}: {e}", claim.id));
            // Written back and read again, the check is the same check.
            let again = parse_check(&serde_yaml::to_value(&check).unwrap())
                .unwrap_or_else(|e| panic!("{name} {}: written back: {e}", claim.id));
            assert_eq!(again.kind(), check.kind(), "{name} {}", claim.id);
            let (Ok(m), Ok(m2)) = (check.measure(&ev), again.measure(&ev)) else {
                continue;
            };
            assert!(m.value.is_finite(), "{name} {}: {}", claim.id, m.value);
            assert_eq!(
                m.value.to_bits(),
                m2.value.to_bits(),
                "{name} {}: the check written back measures another number",
                claim.id
            );
            assert!(!m.recipe.is_empty(), "{name} {}: no recipe", claim.id);
            measured.insert(check.kind());
        }
    }
    let missing: Vec<&str> = Check::KINDS
        .into_iter()
        .filter(|k| !measured.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "no claim of kind {missing:?} measured a number on {BUNDLES:?}: give the kind a claim in a seed experiment and a rerun bundle here"
    );
}
