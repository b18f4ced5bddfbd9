//! Verdict tiers (issue 10, item 2) on bundles produced by the real runner.

mod common;
use common::{text, Scratch};

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
        let have = v.iter().filter(|c| c["tier"] == snake.as_str()).count();
        assert_eq!(n.as_u64(), Some(have as u64), "{label}: {report}");
    }
    v
}

fn by_id<'a>(v: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    v.iter().find(|c| c["id"] == id).unwrap()
}

#[test]
fn tiers_need_the_whole_interval_enough_samples_and_name_substitutes() {
    let s = Scratch::new("fslab-test-tiers-");
    // The stand-in workload ran: at best "reproduced with substitutes", and it is named.
    let (v, out) = claims(&s, &[]);
    let inside = by_id(&v, "inside");
    assert_eq!(inside["verdict"], "reproduced");
    assert_eq!(inside["tier"], "reproduced_with_substitutes", "{inside}");
    assert!(inside["tier_reason"]
        .as_str()
        .unwrap()
        .contains("substitutes: stand-in workload: job ran as `true` (/bin/true instead of the post's workload)"));
    let lo = inside["interval"]["lo"].as_f64().unwrap();
    let hi = inside["interval"]["hi"].as_f64().unwrap();
    assert!(
        (0.40..0.42).contains(&lo) && (2.42..2.44).contains(&hi),
        "{inside}"
    );
    assert_eq!(inside["interval"]["method"], "fieller_welch");
    // A point estimate of 1 is inside [0.5, 2], the interval is not: inconclusive.
    let straddles = by_id(&v, "straddles");
    assert_eq!(straddles["verdict"], "reproduced");
    assert_eq!(straddles["tier"], "inconclusive", "{straddles}");
    assert!(straddles["tier_reason"]
        .as_str()
        .unwrap()
        .contains("straddles between 0.5 and 2"));
    let outside = by_id(&v, "outside");
    assert_eq!(outside["tier"], "not_reproduced", "{outside}");
    // One sample per side: inconclusive by the minimum, and without an interval anyway.
    let few = by_id(&v, "too-few");
    assert_eq!(few["verdict"], "reproduced");
    assert_eq!(few["tier"], "inconclusive");
    assert_eq!(
        few["tier_reason"],
        "1 over 1 samples; at least 3 per side are needed"
    );
    let allowed = by_id(&v, "too-few-allowed");
    assert_eq!(allowed["tier"], "inconclusive");
    assert!(allowed["tier_reason"]
        .as_str()
        .unwrap()
        .contains("too few samples for an interval"));
    // A selected point that failed: inconclusive, naming it (the point estimate holds).
    let incomplete = by_id(&v, "incomplete");
    assert_eq!(incomplete["verdict"], "reproduced");
    assert_eq!(incomplete["tier"], "inconclusive", "{incomplete}");
    assert!(
        incomplete["tier_reason"]
            .as_str()
            .unwrap()
            .starts_with("incomplete: point p=c is failed"),
        "{incomplete}"
    );
    // A flat check: a bootstrap within each group.
    let flat = by_id(&v, "flat");
    assert_eq!(flat["tier"], "reproduced_with_substitutes", "{flat}");
    assert_eq!(flat["interval"]["method"], "bootstrap");
    assert!(flat["interval"]["hi"].as_f64().unwrap() < 10.0, "{flat}");
    // Below the claim's `at_scale`: not applicable, saying by how much.
    let at_scale = by_id(&v, "at-scale");
    assert_eq!(at_scale["tier"], "not_applicable", "{at_scale}");
    assert_eq!(
        at_scale["tier_reason"],
        "scale differs: spare=1 here, at least 2 for this claim (`at_scale`)"
    );
    assert!(
        out.contains("8 claims by tier: 0 reproduced, 2 reproduced with substitutes, 1 not reproduced, 4 inconclusive, 1 not applicable"),
        "{out}"
    );

    // The same run with the real program given: plain "reproduced".
    let (v, _) = claims(&s, &["--set", "job=true"]);
    let inside = by_id(&v, "inside");
    assert_eq!(inside["tier"], "reproduced", "{inside}");
    assert!(inside["substitutions"].as_array().unwrap().is_empty());

    // A variable away from the published profile (here above it) is named in every
    // tier's reason, but decides nothing: at or above `at_scale`, the interval does.
    let (v, _) = claims(&s, &["--set", "job=true", "--set", "spare=2"]);
    for c in &v {
        assert!(
            c["tier_reason"].as_str().unwrap().ends_with(
                "; ran at another scale than the published profile (at or above the claim's `at_scale`): spare=2 here, 1 published"
            ),
            "{c}"
        );
    }
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
            assert_eq!(c["tier"], "reproduced_with_substitutes", "{c}");
            assert!(c["tier_reason"].as_str().unwrap().contains(sub), "{c}");
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
        assert!(layout["tier_reason"]
            .as_str()
            .unwrap()
            .starts_with("0 is ≤ 0.5 (no interval: single measurement of a deterministic layout); substitutes: medium:"));
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
    assert_eq!(by_id(&v, "ratio")["tier"], "reproduced", "{v:?}");
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
        c["tier_reason"],
        "incomplete: point p=lost is failed: workload-01-sh-it01: exited with status 1"
    );
}
