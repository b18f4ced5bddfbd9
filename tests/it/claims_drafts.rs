//! Draft claims (`draft: true`, as `fslab import` writes them) on a bundle made by the
//! real runner: listed as "draft, not checked", never evaluated, in text and JSON.

use crate::common::{text, Scratch};

#[test]
fn a_draft_claim_is_listed_and_never_checked() {
    let s = Scratch::new("drft");
    let bundle = s.run_fixture("draft-claims.yaml");
    let o = s.run(&["claims", &bundle]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_lowercase();
    assert!(
        out.contains("imported") && out.contains("draft, not checked"),
        "{out}"
    );
    let o = s.run(&["claims", &bundle, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let checked: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(checked, ["checked"], "{v}");
    assert!(v["drafts"].to_string().contains("imported"), "{v}");
}
