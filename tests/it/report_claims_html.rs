//! `fslab report` on a committed bundle with claims, rendered in headless Chromium: the
//! claims section is an HTML table (a row per verdict, a tier badge and a forest-plot
//! bar in each), not a text dump, and the page draws.

use crate::{browser, support};

use std::path::Path;
use std::process::Command;

fn chromium_args(profile: &Path) -> Command {
    let chromium = browser::find_chromium()
        .expect("chromium is installed (this test renders the report in it)");
    browser::headless(chromium, profile)
}

#[test]
fn report_claims_are_an_html_table_in_chromium() {
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/reruns/000-published");
    let html_path = support::scratch().join("claims-report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .arg("report")
        .arg(&bundle)
        .arg("-o")
        .arg(&html_path)
        .output()
        .expect("run fslab");
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    // No polars dump, no boolean column.
    assert!(!html.contains("<pre>shape:") && !html.contains("variant false"));

    // The DOM as Chromium builds it.
    let profile = support::scratch().join("chromium-profile-claims");
    let dom = chromium_args(&profile)
        .arg("--dump-dom")
        .arg(format!("file://{}", html_path.display()))
        .output()
        .expect("run chromium");
    assert!(dom.status.success(), "{dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let start = dom
        .find("<table class=\"claims\">")
        .expect("the claims section is an HTML table");
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr class=\"claim\"").skip(1).collect();
    // 000-published checks the post's 10 claims.
    assert_eq!(rows.len(), 10, "{table}");
    for r in &rows {
        assert!(r.contains("<span class=\"tier tier-"), "no badge: {r}");
    }
    // A forest bar in every row that has a number; the post's diamond where it has one.
    let bars = rows.iter().filter(|r| r.contains("<svg")).count();
    assert!(bars >= 8, "{bars} bars");
    assert!(table.contains("class=\"post\""), "{table}");
    // One chart per claim after the table.
    assert_eq!(dom.matches("<figure class=\"claim\"").count(), 10);

    let shot = support::scratch().join("claims-report.png");
    let _ = std::fs::remove_file(&shot);
    let status = chromium_args(&profile)
        .arg("--window-size=1300,2400")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html_path.display()))
        .output()
        .expect("run chromium");
    assert!(status.status.success(), "{status:?}");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 100_000,
        "screenshot looks empty: {} bytes",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}
