//! One bundle summary, three renderings (issue 31): `fslab show`, the report (HTML and
//! Markdown) and the notebook display of a real rerun bundle (`data/reruns/001`) show
//! the same counts of points and runs by status, and those counts are the bundle's
//! (counted here from `runs.parquet` and the manifest, not by the summary).

use fslab::analysis::BundleSummary;
use fslab::report::{render_report, ReportFormat, ReportOptions};
use fslab::Bundle;
use std::path::PathBuf;
use std::process::Command;

fn rerun(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/reruns")
        .join(name)
}

/// `N points (a ok, b failed …), M runs (c ok …)` counted from the bundle's own files.
fn counted(b: &Bundle) -> String {
    let runs = b.runs().unwrap();
    let statuses: Vec<String> = runs
        .column("status")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|s| s.unwrap_or("(none)").to_string())
        .collect();
    let tally = |values: &[String], order: &[&str]| {
        let mut kinds: Vec<&str> = order.to_vec();
        for v in values {
            if !kinds.contains(&v.as_str()) {
                kinds.push(v);
            }
        }
        kinds
            .iter()
            .map(|k| (k, values.iter().filter(|v| v == k).count()))
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let points: Vec<String> = b
        .manifest()
        .points
        .iter()
        .map(|p| p.status.to_string())
        .collect();
    let point_order: Vec<&str> = fslab::store::PointStatus::ALL
        .iter()
        .map(|s| s.as_str())
        .collect();
    format!(
        "{} points ({}), {} runs ({})",
        points.len(),
        tally(&points, &point_order),
        statuses.len(),
        tally(&statuses, &["ok", "failed", "timeout"])
    )
}

#[test]
fn show_report_and_notebook_show_the_same_counts() {
    for name in ["001", "003"] {
        let dir = rerun(name);
        let bundle = Bundle::open(&dir).unwrap();
        let expected = counted(&bundle);
        assert!(!expected.starts_with("0 points"), "{expected}");

        let out = Command::new(env!("CARGO_BIN_EXE_fslab"))
            .arg("show")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let show = String::from_utf8_lossy(&out.stdout);
        assert!(
            show.lines().any(|l| l == expected),
            "{expected} not in\n{show}"
        );

        let opts = ReportOptions::default();
        let md = render_report(&bundle, None, &opts, ReportFormat::Markdown).unwrap();
        assert!(md.contains(&format!("- counts: {expected}\n")), "{md}");
        let html = render_report(&bundle, None, &opts, ReportFormat::Html).unwrap();
        assert!(
            html.contains(&format!("<dt>counts</dt><dd>{expected}</dd>")),
            "{expected} not in the HTML report"
        );

        let summary = BundleSummary::new(&bundle, &bundle.runs().unwrap()).unwrap();
        let nb = fslab::notebook::bundle_html(&summary);
        assert!(nb.contains(&format!("<br>{expected}<br>")), "{nb}");

        // Every point, with its status, in show and in the notebook display.
        for p in &bundle.manifest().points {
            assert!(
                show.contains(&format!("[{}] {}", p.id, p.status)),
                "{} in show",
                p.id
            );
            let id = fslab::report::html_escape(&p.id);
            assert!(
                nb.contains(&format!("<code>{id}</code>: {}", p.status)),
                "{} in the notebook display",
                p.id
            );
        }
    }
}
