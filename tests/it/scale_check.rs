//! `scale_check:` on bundles made by the real runner: one profile run at n = 100 and
//! n = 200 (both below the published 1000), read together by `fslab claims --md`.

use crate::common::{fixture, text, Scratch};

fn row<'a>(md: &'a str, id: &str) -> &'a str {
    md.lines()
        .find(|l| l.starts_with(&format!("| **{id}**")))
        .unwrap_or_else(|| panic!("no row for {id} in:\n{md}"))
}

#[test]
fn a_claim_below_the_published_scale_is_decided_from_its_trend_when_every_scale_agrees() {
    let s = Scratch::new("scck");
    let exp = fixture("scale-check.yaml");
    let mut bundles = Vec::new();
    for n in ["100", "200"] {
        let o = s.run(&[
            "run",
            exp.to_str().unwrap(),
            "--profile",
            "small",
            "--set",
            &format!("n={n}"),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        bundles.push(String::from_utf8_lossy(&o.stdout).trim().to_string());
    }
    // Each bundle alone is below the published scale: not applicable.
    let o = s.run(&["claims", &bundles[1], "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["claims"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["tier"] == "not_applicable"),
        "{v}"
    );
    // Together: (n+1)/(2n+1) is 0.5025 at n=100 and 0.5012 at n=200, every replicate
    // alike. `≤ 0.51` holds at both and on the trend to n=1000: decided.
    let o = s.run(&["claims", "--md", &bundles[0], &bundles[1]]);
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(md.contains("the same profile at other scales"), "{md}");
    let r = row(&md, "half-as-many");
    assert!(r.contains("| reproduced |"), "{r}");
    assert!(
        r.contains("scale check over n: 100, 200 measured, 1000 published"),
        "{r}"
    );
    assert!(r.contains("every measured scale is reproduced"), "{r}");
    assert!(r.contains("n=100: 0.5025"), "{r}");
    // `≤ 0.5015` fails at n=100 and holds at n=200: the scales disagree, so the trend
    // does not decide.
    let r = row(&md, "half-as-many-tight");
    assert!(r.contains("| inconclusive |"), "{r}");
    assert!(
        r.contains("the measured scales do not all give the tier the trend predicts"),
        "{r}"
    );
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}
