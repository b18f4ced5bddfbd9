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
    let v: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let t = s.run(&["claims", &bundle]);
    (v, String::from_utf8_lossy(&t.stdout).to_string())
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
    assert!(
        out.contains("7 claims by tier: 0 reproduced, 2 reproduced with substitutes, 1 not reproduced, 4 inconclusive, 0 not applicable"),
        "{out}"
    );

    // The same run with the real program given: plain "reproduced".
    let (v, _) = claims(&s, &["--set", "job=true"]);
    let inside = by_id(&v, "inside");
    assert_eq!(inside["tier"], "reproduced", "{inside}");
    assert!(inside["substitutions"].as_array().unwrap().is_empty());

    // Any variable away from the published profile, in either direction: not applicable.
    let (v, _) = claims(&s, &["--set", "job=true", "--set", "spare=2"]);
    for c in &v {
        assert_eq!(c["tier"], "not_applicable", "{c}");
        assert_eq!(
            c["tier_reason"],
            "not at the published profile's scale: spare=2 here, 1 published"
        );
    }
}

#[test]
fn first_vs_rest_needs_iteration_1_of_every_selected_point() {
    let s = Scratch::new("fslab-test-first-");
    let o = s.run(&["run", "tests/experiments/first-run.yaml", "--quiet"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let o = s.run(&["claims", &bundle, "--json"]);
    let v: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let c = by_id(&v, "first-slowest");
    // p=lost failed at iteration 1: no first run there, and the claim cannot pass on p=kept alone.
    assert_eq!(c["tier"], "inconclusive", "{c}");
    assert_eq!(
        c["tier_reason"],
        "incomplete: point p=lost is failed: workload-01-sh-it01: exited with status 1"
    );
}
