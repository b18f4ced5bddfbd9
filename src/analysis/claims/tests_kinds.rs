//! Every kind of check in the schema has an evaluator, and a claim of each kind goes
//! from its YAML to a measured number on a real rerun bundle (`data/reruns/`). The
//! schema, `Check::KINDS` and the evaluators are made from one registration list
//! (`spec::claim::kinds::claim_kinds`): a kind registered without an evaluator does not
//! compile, a kind's file left out of the list fails `every_kind_file_is_registered`,
//! and a kind without a claim measured here fails
//! `every_kind_measures_a_claim_of_a_real_bundle`.

use super::evidence::Evidence;
use super::kinds::EVALUATED;
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

/// The kinds serde reads after `kind:`, [`Check::KINDS`] and the kinds with an
/// evaluator are one list: the registration list (`spec::claim::kinds::claim_kinds`)
/// that all three are made from.
#[test]
fn the_schema_the_kinds_and_the_evaluators_are_one_list() {
    let listed: Vec<String> = Check::KINDS.iter().map(|k| k.to_string()).collect();
    assert_eq!(
        serde_kinds(),
        listed,
        "serde's tags are not the kinds' names"
    );
    assert_eq!(EVALUATED, Check::KINDS);
}

/// The kinds' files (`src/spec/claim/kinds/NAME.rs` and
/// `src/analysis/claims/kinds/NAME.rs`), but `mod.rs`.
fn kind_files(dir: &str) -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|s| s != "mod")
        .collect()
}

/// A kind's two files are compiled only through its line in the registration list, so
/// a file there without its line would be left out silently: each file is a registered
/// kind, and each kind has both files.
#[test]
fn every_kind_file_is_registered() {
    let kinds: BTreeSet<String> = Check::KINDS.iter().map(|k| k.to_string()).collect();
    for dir in ["src/spec/claim/kinds", "src/analysis/claims/kinds"] {
        assert_eq!(
            kind_files(dir),
            kinds,
            "{dir}: every file is one kind, registered in spec::claim::kinds::claim_kinds"
        );
    }
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
            let check =
                parse_check(raw.raw()).unwrap_or_else(|e| panic!("{name} {}: {e}", claim.id));
            // The kind it answers to is the one written.
            assert_eq!(
                raw.raw().get("kind").and_then(|k| k.as_str()),
                Some(check.kind()),
                "{name} {}",
                claim.id
            );
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
