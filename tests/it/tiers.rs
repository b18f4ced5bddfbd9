//! Verdict tiers (issue 10, item 2) on bundles produced by the real runner.

use crate::common::{text, Scratch};

/// Run tests/experiments/tiers.yaml and return `fslab claims --json` by claim id.
fn claims(s: &Scratch, extra: &[&str]) -> (Vec<serde_json::Value>, String) {
    let mut args = vec!["run", "tests/experiments/tiers.yaml", "--quiet"];
    args.extend(extra);
    let o = s.run(&args);
    // p=c fails on purpose: exit status 1, the bundle is still made.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let o = s.run(&["claims", &bundle, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v = json_claims(&o.stdout);
    let t = s.run(&["claims", &bundle]);
    (v, String::from_utf8_lossy(&t.stdout).to_string())
}

/// The claims of `fslab claims --json`, after checking its count per tier: every tier
/// listed, each count the number of claims in that tier.
fn json_claims(stdout: &[u8]) -> Vec<serde_json::Value> {
    let report: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    let v = report["claims"].as_array().unwrap().clone();
    let tiers = report["tiers"].as_object().unwrap();
    let keys: Vec<&str> = tiers.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "reproduced",
            "reproduced with substitutes",
            "not reproduced",
            "inconclusive",
            "not applicable"
        ]
    );
    for (label, n) in tiers {
        let snake = label.replace(' ', "_");
        let have = v
            .iter()
            .filter(|c| c["tier"] == snake.as_str() && c["variant"] == false)
            .count();
        assert_eq!(n.as_u64(), Some(have as u64), "{label}: {report}");
    }
    for c in &v {
        assert!(c.get("verdict").is_none(), "one verdict, the tier: {c}");
    }
    v
}

fn by_id<'a>(v: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    v.iter().find(|c| c["id"] == id).unwrap()
}

#[test]
fn tiers_need_the_whole_interval_over_replicates_and_name_substitutes() {
    let s = Scratch::new("fslab-test-tiers-");
    // Five replicates a point; the stand-in workload ran: at best "reproduced with
    // substitutes", and it is named once for the bundle, not in each reason.
    let (v, out) = claims(&s, &["--set", "replicates=5"]);
    let inside = by_id(&v, "inside");
    assert_eq!(inside["tier"], "reproduced_with_substitutes", "{inside}");
    assert_eq!(inside["replication"]["unit"], "replicate", "{inside}");
    assert_eq!(inside["replication"]["replicates"][0], 5, "{inside}");
    assert!(inside["substitutions"][0].as_str().unwrap().contains(
        "stand-in workload: job ran as `true` (/bin/true instead of the post's workload)"
    ));
    assert!(
        !inside["reason"].as_str().unwrap().contains("stand-in"),
        "{inside}"
    );
    // Fieller over the replicate means 1..5 a side (mean 3, s² 2.5, n 5): about
    // [0.47, 2.13]; the iterations of a replicate have no spread and do not count.
    let lo = inside["interval"]["lo"].as_f64().unwrap();
    let hi = inside["interval"]["hi"].as_f64().unwrap();
    assert!(
        (0.3..0.7).contains(&lo) && (1.5..2.9).contains(&hi),
        "{inside}"
    );
    assert_eq!(inside["interval"]["method"], "fieller_welch");
    assert!(
        inside["recipe"]
            .as_str()
            .unwrap()
            .contains("per (point, replicate)"),
        "{inside}"
    );
    let straddles = by_id(&v, "straddles");
    assert_eq!(straddles["tier"], "inconclusive", "{straddles}");
    assert!(straddles["reason"]
        .as_str()
        .unwrap()
        .contains("straddles between 0.9 and 1.1"));
    assert_eq!(by_id(&v, "outside")["tier"], "not_reproduced");
    // A first-run claim: one first run a replicate, five a side.
    let first = by_id(&v, "first-runs");
    assert_eq!(first["tier"], "reproduced_with_substitutes", "{first}");
    assert_eq!(first["replication"]["replicates"][1], 5, "{first}");
    // A selected point that failed: inconclusive, naming it.
    let incomplete = by_id(&v, "incomplete");
    assert_eq!(incomplete["tier"], "inconclusive", "{incomplete}");
    assert!(
        incomplete["reason"]
            .as_str()
            .unwrap()
            .starts_with("incomplete: point p=c is failed"),
        "{incomplete}"
    );
    // A flat check: five replicates a group, a bootstrap within each group.
    let flat = by_id(&v, "flat");
    assert_eq!(flat["tier"], "reproduced_with_substitutes", "{flat}");
    assert_eq!(flat["interval"]["method"], "bootstrap");
    // Below the claim's `at_scale`: not applicable, saying by how much, with what it
    // measured at this scale.
    let at_scale = by_id(&v, "at-scale");
    assert_eq!(at_scale["tier"], "not_applicable", "{at_scale}");
    assert_eq!(at_scale["not_applicable"], "reduced_scale", "{at_scale}");
    assert!(
        at_scale["reason"]
            .as_str()
            .unwrap()
            .starts_with("reduced scale (see the scale note); at this scale: the whole interval"),
        "{at_scale}"
    );
    assert_eq!(
        at_scale["scale"], "reduced: spare=1 here, 2 published",
        "{at_scale}"
    );
    // fslab's own variant is listed apart and not counted.
    assert_eq!(by_id(&v, "variant")["variant"], true);
    assert!(
        out.contains("7 claims by tier: 0 reproduced, 3 reproduced with substitutes, 1 not reproduced, 2 inconclusive, 1 not applicable (and 1 variant of fslab's own)"),
        "{out}"
    );
    // The headline of each claim is its tier; no other verdict word is printed.
    assert!(
        out.contains("inside — REPRODUCED WITH SUBSTITUTES"),
        "{out}"
    );
    assert!(
        out.contains("at-scale — NOT APPLICABLE (REDUCED SCALE)"),
        "{out}"
    );

    // One replicate: the same numbers over five iterations of one filesystem. They never
    // decide, whatever their interval says.
    let (v, _) = claims(&s, &[]);
    for id in ["inside", "outside", "first-runs", "flat"] {
        let c = by_id(&v, id);
        assert_eq!(c["tier"], "inconclusive", "{c}");
        assert!(
            c["reason"]
                .as_str()
                .unwrap()
                .contains("unit: iteration of one filesystem (1 replicate a side"),
            "{c}"
        );
    }
    // Two replicates a side: an interval over them, but fewer than three.
    let (v, _) = claims(&s, &["--set", "replicates=2"]);
    assert_eq!(
        by_id(&v, "outside")["reason"],
        "unit: replicate, 2 a side; at least 3 replicates a side are needed"
    );

    // The real program given: plain "reproduced".
    let (v, _) = claims(&s, &["--set", "job=true", "--set", "replicates=5"]);
    let inside = by_id(&v, "inside");
    assert_eq!(inside["tier"], "reproduced", "{inside}");
    assert!(inside["substitutions"].as_array().unwrap().is_empty());

    // Above the published scale: the claim's own `at_scale` is met too.
    let (v, _) = claims(
        &s,
        &[
            "--set",
            "job=true",
            "--set",
            "spare=2",
            "--set",
            "replicates=5",
        ],
    );
    assert_eq!(by_id(&v, "inside")["tier"], "reproduced");
    assert_eq!(by_id(&v, "at-scale")["tier"], "reproduced");
    assert_eq!(by_id(&v, "outside")["tier"], "not_reproduced");
}

/// tests/experiments/tiers-medium.yaml: the post used an HDD. Run on a loop device or on
/// the hdd-2008 model, every claim names the medium and is at best "with substitutes";
/// the layout has no interval and says so, and its number decides.
#[test]
fn another_medium_is_a_named_substitution_and_a_layout_says_it_has_no_interval() {
    let s = Scratch::new("fslab-test-tiers-medium-");
    for (medium, named) in [
        (
            "none",
            "medium: device `data` is a loop device on an image file here (",
        ),
        (
            "hdd-2008",
            "medium: device `data` ran through the `hdd-2008` disk model {",
        ),
    ] {
        let set = format!("medium={medium}");
        let o = s.run(&[
            "run",
            "tests/experiments/tiers-medium.yaml",
            "--quiet",
            "--set",
            &set,
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let o = s.run(&["claims", &bundle, "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        let v = json_claims(&o.stdout);
        for c in &v {
            let subs = c["substitutions"].as_array().unwrap();
            assert_eq!(subs.len(), 1, "{c}");
            let sub = subs[0].as_str().unwrap();
            assert!(sub.starts_with(named), "{medium}: {sub}");
            assert!(
                sub.ends_with("the post used a rotating disk (HDD)"),
                "{sub}"
            );
            let tier = c["tier"].as_str().unwrap();
            if c["id"] == "layout" {
                assert_eq!(tier, "reproduced_with_substitutes", "{c}");
            } else {
                // One replicate: iterations of one filesystem never decide.
                assert_eq!(tier, "inconclusive", "{c}");
            }
        }
        let ratio = by_id(&v, "ratio");
        assert!(ratio["interval"]["lo"].is_number(), "{ratio}");
        assert!(ratio["no_interval"].is_null(), "{ratio}");
        let layout = by_id(&v, "layout");
        assert!(layout["interval"].is_null(), "{layout}");
        assert_eq!(
            layout["no_interval"],
            "no interval: single measurement of a deterministic layout"
        );
        assert_eq!(layout["measured"], 0.0, "{layout}");
        assert_eq!(
            layout["reason"],
            "0 is ≤ 0.5 (no interval: single measurement of a deterministic layout)"
        );
    }
    // The experiment without `medium:` in its source: nothing to compare with, nothing named.
    let plain = s.root.join("plain.yaml");
    let yaml = std::fs::read_to_string("tests/experiments/tiers-medium.yaml").unwrap();
    std::fs::write(&plain, yaml.replace("    medium: hdd\n", "")).unwrap();
    let o = s.run(&["run", plain.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let o = s.run(&["claims", &bundle, "--json"]);
    let v = json_claims(&o.stdout);
    assert_eq!(by_id(&v, "layout")["tier"], "reproduced", "{v:?}");
    assert_eq!(by_id(&v, "ratio")["tier"], "inconclusive", "{v:?}");
}

#[test]
fn first_vs_rest_needs_iteration_1_of_every_selected_point() {
    let s = Scratch::new("fslab-test-first-");
    let o = s.run(&["run", "tests/experiments/first-run.yaml", "--quiet"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let o = s.run(&["claims", &bundle, "--json"]);
    let v = json_claims(&o.stdout);
    let c = by_id(&v, "first-slowest");
    // p=lost failed at iteration 1: no first run there, and the claim cannot pass on p=kept alone.
    assert_eq!(c["tier"], "inconclusive", "{c}");
    assert_eq!(
        c["reason"],
        "incomplete: point p=lost is failed: workload-01-sh-it01: exited with status 1"
    );
}
