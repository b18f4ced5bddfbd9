//! One verdict per kernel, on the committed seed 003 bundles made in User-Mode Linux
//! guests by the real runner (`data/reruns/003-uml-*`: a `kernel` axis with one value
//! each). The split of a bundle with two kernels is tested on a bundle the real runner
//! makes with both (tests/it/uml.rs, `the_truncate_path_column_and_the_claims_tell_the_two_guest_kernels_apart`).

use super::{check_claims, pins_kernel, verdicts_frame, ClaimVerdict, Evidence, Inapplicable};
use crate::spec::Claim;
use crate::store::Bundle;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Today's seed 003 claims over a committed rerun, and the claims themselves.
fn verdicts(bundle: &str, extra: Vec<Claim>) -> Vec<ClaimVerdict> {
    let exp =
        crate::spec::Experiment::load(root().join("experiments/xfs-rt-truncate.yaml")).unwrap();
    let b = Bundle::open(root().join("data/reruns").join(bundle)).unwrap();
    let mut ev = Evidence::from_bundle(&b).unwrap();
    ev.scale = exp.def.scale.clone();
    let mut claims = exp.def.claims;
    claims.extend(extra);
    check_claims(&claims, &ev)
}

fn find<'a>(v: &'a [ClaimVerdict], id: &str) -> Vec<&'a ClaimVerdict> {
    v.iter().filter(|c| c.id == id).collect()
}

/// A claim of seed 003 that does not pin `kernel` is named with the kernel of the
/// bundle's `kernel` axis, and rests only on that kernel's guest; one that measures
/// nothing (`not_measured:`) or selects no point of the bundle (the host-only
/// data-extsize-hint variant) is checked once, as written.
#[test]
fn each_verdict_names_its_kernel_and_rests_on_its_guest_alone() {
    for (bundle, kernel, path) in [
        ("003-uml-bookworm", "uml-bookworm", "kept_written"),
        ("003-uml-trixie", "uml-trixie", "converted"),
    ] {
        let v = verdicts(bundle, Vec::new());
        let flat = find(&v, "convert-unwritten-flat-one-process");
        assert_eq!(flat.len(), 1, "{bundle}: {flat:?}");
        let flat = flat[0];
        assert_eq!(flat.kernel.as_deref(), Some(kernel));
        assert_eq!(
            flat.name(),
            format!("convert-unwritten-flat-one-process @ kernel={kernel}")
        );
        assert!(
            flat.substitutions.iter().any(|s| s.starts_with(&format!(
                "points with kernel={kernel} measured in a User-Mode Linux guest"
            ))),
            "{bundle}: {:?}",
            flat.substitutions
        );
        // `needs: { truncate_path: converted }` on this kernel's points: 6.1 keeps the
        // tail written, 6.12 converts it.
        match path {
            "kept_written" => {
                assert_eq!(
                    flat.not_applicable,
                    Some(Inapplicable::MechanismAbsent),
                    "{flat:?}"
                );
                assert!(
                    flat.reason.contains("took `kept_written`"),
                    "{}",
                    flat.reason
                );
            }
            _ => {
                assert_ne!(flat.not_applicable, Some(Inapplicable::MechanismAbsent));
                assert!(
                    flat.details
                        .iter()
                        .any(|d| d.starts_with("truncate path `converted` at every selected point")),
                    "{:?}",
                    flat.details
                );
            }
        }
        // Not measured anywhere: one verdict, whatever the kernels.
        let conclusion = find(&v, "conclusion-small-same");
        assert_eq!(conclusion.len(), 1);
        assert_eq!(conclusion[0].kernel, None);
        let hint = find(&v, "variant-data-hint-flat");
        assert_eq!(hint.len(), 1);
        assert_eq!(hint[0].kernel, None, "{:?}", hint[0]);
        assert_eq!(hint[0].not_applicable, Some(Inapplicable::NotRun));
        // The frame says which kernel each row is about.
        let df = verdicts_frame(&v).unwrap();
        let kernels = df.column("kernel").unwrap().str().unwrap().clone();
        let claims = df.column("claim").unwrap().str().unwrap().clone();
        for (c, k) in claims.iter().zip(kernels.iter()) {
            let want = v.iter().find(|x| Some(x.id.as_str()) == c).unwrap();
            assert_eq!(k, want.kernel.as_deref(), "{c:?}");
        }
    }
}

/// A claim that pins `kernel` in its selections is checked once, as written: over the
/// one kernel it names it gives the number the split claim gives on that kernel.
#[test]
fn a_claim_that_pins_the_kernel_is_checked_once_as_written() {
    let exp =
        crate::spec::Experiment::load(root().join("experiments/xfs-rt-truncate.yaml")).unwrap();
    let split = exp
        .def
        .claims
        .iter()
        .find(|c| c.id == "large-rtextsize-costs-little-one-process")
        .unwrap()
        .clone();
    assert!(!pins_kernel(&split));
    let mut pinned = split.clone();
    pinned.id = "pinned".into();
    let mut raw = pinned.check.as_ref().unwrap().raw().clone();
    for side in ["numerator", "denominator"] {
        raw[side]
            .as_mapping_mut()
            .unwrap()
            .insert("kernel".into(), "uml-trixie".into());
    }
    pinned.check = Some(crate::spec::claim::CheckSpec::new(raw).unwrap());
    assert!(pins_kernel(&pinned));
    let v = verdicts("003-uml-trixie", vec![pinned]);
    let one = find(&v, "pinned");
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].kernel, None);
    assert_eq!(one[0].name(), "pinned");
    let per = find(&v, "large-rtextsize-costs-little-one-process");
    assert_eq!(per.len(), 1);
    assert_eq!(per[0].kernel.as_deref(), Some("uml-trixie"));
    assert!(one[0].measured.is_some(), "{:?}", one[0]);
    assert_eq!(one[0].measured, per[0].measured);
    assert_eq!(one[0].tier, per[0].tier);
}

/// A claim checked over a scale series (`scale_check`) is split by kernel too: each
/// kernel's verdict rests on that kernel's points at every scale of the series, names its
/// kernel and lists each scale it was measured at. The committed seed 003 guest bundles
/// stand in for a series: the 6.12 bundle read at `files` = 250 and 500 (below the
/// published 1000), beside the 6.1 bundle at 500.
#[test]
fn a_scale_series_gives_one_verdict_per_kernel_over_its_own_points() {
    use super::per_kernel::check_over_scales_per_kernel;
    use super::words::num;
    use crate::spec::Value as SpecValue;
    let exp =
        crate::spec::Experiment::load(root().join("experiments/xfs-rt-truncate.yaml")).unwrap();
    let at = |bundle: &str, files: i64| {
        let b = Bundle::open(root().join("data/reruns").join(bundle)).unwrap();
        let mut ev = Evidence::from_bundle(&b).unwrap();
        ev.scale = exp.def.scale.clone();
        ev.vars.insert("files".into(), SpecValue::Int(files));
        ev
    };
    let series = [
        at("003-uml-trixie", 250),
        at("003-uml-trixie", 500),
        at("003-uml-bookworm", 500),
    ];
    let refs: Vec<&Evidence> = series.iter().collect();
    let claim = exp
        .def
        .claims
        .iter()
        .find(|c| c.id == "large-rtextsize-costs-little-one-process")
        .unwrap();
    let v = check_over_scales_per_kernel(claim, "files", &refs);
    let kernels: Vec<Option<&str>> = v.iter().map(|x| x.kernel.as_deref()).collect();
    assert_eq!(
        kernels,
        vec![Some("uml-trixie"), Some("uml-bookworm")],
        "{v:?}"
    );
    let trixie = &v[0];
    assert_eq!(
        trixie.name(),
        "large-rtextsize-costs-little-one-process @ kernel=uml-trixie"
    );
    for scale in ["files=250: ", "files=500: "] {
        assert!(
            trixie.details.iter().any(|d| d.starts_with(scale)),
            "{scale}: {:?}",
            trixie.details
        );
    }
    // 6.12 converts the tail: its verdict is about scale, never the mechanism; 6.1 keeps
    // it written, and no scale of the series changes that.
    assert_ne!(trixie.not_applicable, Some(Inapplicable::MechanismAbsent));
    assert_eq!(
        v[1].not_applicable,
        Some(Inapplicable::MechanismAbsent),
        "{:?}",
        v[1]
    );
    assert!(
        v[1].reason.contains("took `kept_written`"),
        "{}",
        v[1].reason
    );
    // Each kernel's number is its own: computed on the 6.12 points alone, it is the
    // number of the 6.12 bundle checked on its own.
    let alone = check_claims(std::slice::from_ref(claim), &series[1]);
    assert_eq!(alone.len(), 1);
    let largest = trixie
        .details
        .iter()
        .find(|d| d.starts_with("files=500: "))
        .unwrap();
    let m = alone[0].measured.unwrap();
    assert!(largest.contains(&num(m)), "{largest} vs {m}");
}
