//! `fslab compare` and `fslab report` on real bundles (measured on this machine) and on
//! bundles of seed 000's published numbers, through the real binary.

use crate::{browser, support};

use fslab::polars::prelude::*;
use fslab::store::{Environment, ExperimentInfo, Manifest};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fslab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .output()
        .expect("run fslab")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A bundle holding seed 000's published timings, `wall_s` of `parent=1` scaled by
/// `factor`, and optionally one more point.
fn seed_bundle(name: &str, factor: f64, extra_point: bool) -> PathBuf {
    let dir = support::scratch().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let runs = support::seed_000_runs();
    let scaled: Vec<Option<f64>> = runs
        .column("wall_s")
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .zip(runs.column("point_id").unwrap().str().unwrap().iter())
        .map(|(v, id)| {
            v.map(|v| {
                if id == Some("parent=1") {
                    v * factor
                } else {
                    v
                }
            })
        })
        .collect();
    let mut runs = runs.clone();
    runs.with_column(Column::new("wall_s".into(), scaled))
        .unwrap();
    if extra_point {
        let mut extra = runs.head(Some(10));
        extra
            .with_column(Column::new("point_id".into(), vec!["parent=2"; 10]))
            .unwrap();
        extra
            .with_column(Column::new("point_index".into(), vec![2i64; 10]))
            .unwrap();
        runs.vstack_mut(&extra).unwrap();
    }
    let kernel = if extra_point { "6.18.0" } else { "6.1.0" };
    let manifest = Manifest {
        fslab_version: "0.1.0".into(),
        experiment: ExperimentInfo {
            id: "xfs-parent-pointers".into(),
            title: "Seed 000: XFS parent pointers".into(),
            ..ExperimentInfo::default()
        },
        started_at: "2025-12-02T00:00:00Z".into(),
        environment: Environment {
            kernel: kernel.into(),
            tools: [(
                "mkfs.xfs".to_string(),
                "mkfs.xfs version 6.18.0".to_string(),
            )]
            .into(),
            ..Environment::default()
        },
        ..Manifest::default()
    };
    support::write_bundle(&dir, &manifest, &runs);
    dir
}

/// The table rows of `fslab compare` (lines below the dashed rule).
fn table_rows(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("----"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn compare_two_real_bundles_prints_the_table_and_exits_0() {
    let (a, b) = support::real_bundles();
    let out = fslab(&["compare", p(&a), p(&b)]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("%change"), "{text}");
    let rows = table_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows[0].ends_with("fs=ext4") && rows[1].ends_with("fs=xfs"),
        "{text}"
    );
    // The two bundles used different image files: an environment difference.
    assert!(
        text.contains("environment.devices.image0.backing"),
        "{text}"
    );
}

#[test]
fn a_bundle_compared_with_itself_shows_no_significant_change() {
    let (a, _) = support::real_bundles();
    let out = fslab(&["compare", p(&a), p(&a)]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(!text.contains("Environment differences"), "{text}");
    for row in table_rows(&text) {
        assert!(row.contains("+0.0%"), "{row}");
        assert!(!row.contains('*'), "significance mark in {row}");
    }
    let json: Value =
        serde_json::from_slice(&fslab(&["compare", p(&a), p(&a), "--json"]).stdout).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["significant"], json!(false));
        assert_eq!(r["p_value"], json!(1.0));
    }
}

#[test]
fn a_ten_percent_slowdown_is_marked_and_new_points_are_listed() {
    let base = seed_bundle("seed-base", 1.0, false);
    let slow = seed_bundle("seed-slow", 1.10, true);
    let out = fslab(&["compare", p(&base), p(&slow)]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let rows = table_rows(&text);
    let parent1 = rows.iter().find(|r| r.ends_with("parent=1")).unwrap();
    assert!(
        parent1.contains("+10.0%") && parent1.contains("***"),
        "{text}"
    );
    assert!(parent1.contains("significant"), "{text}");
    let parent0 = rows.iter().find(|r| r.ends_with("parent=0")).unwrap();
    assert!(!parent0.contains('*'), "{text}");
    assert!(text.contains("only in new: parent=2"), "{text}");
    assert!(text.contains("environment.kernel"), "{text}");

    // Only wall_s was scaled: system time shows no change and no mark.
    let json: Value = serde_json::from_slice(
        &fslab(&["compare", p(&base), p(&slow), "--json", "--metric", "sys_s"]).stdout,
    )
    .unwrap();
    assert_eq!(json["metric"], "sys_s");
    for r in json["rows"].as_array().unwrap() {
        assert_eq!(r["change_pct"], json!(0.0));
        assert_eq!(r["mark"], "");
    }
}

#[test]
fn compare_of_a_missing_bundle_fails_with_a_message() {
    let out = fslab(&["compare", "/nonexistent/a", "/nonexistent/b"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("manifest.json"));
}

fn svg_blocks(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("unclosed svg") + start + "</svg>".len();
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}

fn well_formed_xml(s: &str) {
    let mut reader = quick_xml::Reader::from_str(s);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("SVG is not well-formed XML: {e}"),
        }
    }
}

#[test]
fn html_report_is_self_contained_with_inline_charts() {
    let (a, b) = support::real_bundles();
    let html_path = support::scratch().join("report.html");
    let out = fslab(&["report", p(&a), "--compare", p(&b), "-o", p(&html_path)]);
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for section in [
        "Environment",
        "Per-point statistics",
        "Comparison",
        "Charts",
    ] {
        assert!(
            html.contains(&format!("<h2>{section}</h2>")),
            "missing {section}"
        );
    }
    // mean/CI, iterations, distribution, normalised (with --compare), extents (table present)
    let svgs = svg_blocks(&html);
    assert_eq!(svgs.len(), 5);
    for svg in &svgs {
        well_formed_xml(svg);
    }
    // Nothing to fetch: no scripts, stylesheets or images from elsewhere.
    for external in ["<script", "<link", "<img", "src=\"http", "href=\"http"] {
        assert!(!html.contains(external), "external reference {external}");
    }
    assert!(html.contains("fs=ext4") && html.contains("mkfs.xfs version"));

    // Headless Chromium renders it; the screenshot stays next to the report.
    let Some(chromium) = browser::find_chromium() else {
        assert!(
            std::env::var_os("FSLAB_REQUIRE_CHROMIUM").is_none(),
            "FSLAB_REQUIRE_CHROMIUM is set but no chromium is installed"
        );
        eprintln!("note: no chromium installed, report not rendered in a browser");
        return;
    };
    let shot = support::scratch().join("report.png");
    let _ = std::fs::remove_file(&shot);
    let status = browser::headless(chromium, &support::scratch().join("chromium-profile"))
        .arg("--window-size=1300,5200")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html_path.display()))
        .output()
        .expect("run chromium");
    assert!(status.status.success(), "{status:?}");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // A page of text and five charts compresses far worse than a blank one.
    assert!(
        png.len() > 100_000,
        "screenshot looks empty: {} bytes",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn markdown_report_has_plain_text_tables_for_mail() {
    let base = seed_bundle("seed-md-base", 1.0, false);
    let (a, _) = support::real_bundles();
    let md_path = support::scratch().join("report.md");
    let out = fslab(&["report", p(&a), "--compare", p(&base), "-o", p(&md_path)]);
    // Different experiments have no point in common: the comparison says so, still exit 0.
    assert!(out.status.success(), "{out:?}");
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(md.starts_with("# mkfs time per filesystem"));
    assert!(md.contains("## Per-point statistics"));
    assert!(md.contains("(no point in common)"));
    assert!(md.contains("only in base: parent=0, parent=1"));
    assert!(!md.contains("<svg"));
    // Tables sit in code blocks and stay narrow enough for mail.
    let mut in_block = false;
    for line in md.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block && line.starts_with("point ") {
            assert!(line.chars().count() <= 100, "wide table line: {line}");
        }
    }
    assert!(!in_block, "unclosed code block");

    let bad = fslab(&["report", p(&a), "-o", p(&support::scratch().join("r.pdf"))]);
    assert_eq!(bad.status.code(), Some(2));
}

/// The acceptance check of issue 5: two real bundles of the example experiment, made by
/// `fslab run` on loop devices, compared; the bundle compared with itself shows no
/// significant change; the report of one against the other renders.
#[test]
fn compare_and_report_two_runs_of_the_example_experiment() {
    let results = support::scratch().join("results");
    let _ = std::fs::remove_dir_all(&results);
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/smallfiles.yaml");
    let mut bundles = Vec::new();
    for _ in 0..2 {
        let out = fslab(&[
            "run",
            example,
            "-q",
            "--set",
            "reps=4",
            "--results",
            p(&results),
        ]);
        assert!(out.status.success(), "fslab run: {out:?}");
        let dir = stdout(&out)
            .lines()
            .rev()
            .find(|l| l.contains("smallfiles"))
            .map(|l| PathBuf::from(l.trim()))
            .expect("bundle path on stdout");
        assert!(dir.join("runs.parquet").exists(), "{}", dir.display());
        bundles.push(dir);
    }
    let out = fslab(&["compare", p(&bundles[0]), p(&bundles[1])]);
    assert!(out.status.success(), "{out:?}");
    let rows = table_rows(&stdout(&out));
    assert_eq!(rows.len(), 2, "{}", stdout(&out));
    assert!(rows[0].ends_with("fs=ext4") && rows[1].ends_with("fs=xfs"));

    let same = fslab(&["compare", p(&bundles[0]), p(&bundles[0])]);
    assert!(same.status.success());
    for row in table_rows(&stdout(&same)) {
        assert!(row.contains("+0.0%") && !row.contains('*'), "{row}");
    }

    let html = support::scratch().join("smallfiles.html");
    let out = fslab(&[
        "report",
        p(&bundles[1]),
        "--compare",
        p(&bundles[0]),
        "-o",
        p(&html),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&html).unwrap();
    // mean/CI, iterations, distribution, normalised, and the extent layout of its block-map capture
    assert_eq!(svg_blocks(&text).len(), 5);
    assert!(text.contains("Small-file creation with fs_mark"));
}

#[test]
fn a_bundle_compared_with_itself_prints_no_significant_change_and_no_p_zero() {
    let (a, _) = support::real_bundles();
    for metric in ["wall_s", "user_s", "sys_s"] {
        let out = fslab(&["compare", p(&a), p(&a), "--metric", metric]);
        assert!(out.status.success(), "{out:?}");
        let text = stdout(&out);
        for row in table_rows(&text) {
            assert!(!row.contains("significant"), "{metric}: {row}");
            assert!(!row.contains('*'), "{metric}: {row}");
        }
        assert!(text.contains("p(Holm)"), "{text}");
        let json: Value = serde_json::from_slice(
            &fslab(&["compare", p(&a), p(&a), "--json", "--metric", metric]).stdout,
        )
        .unwrap();
        for r in json["rows"].as_array().unwrap() {
            assert_ne!(r["p_value"], json!(0.0), "{metric}: {r}");
            assert_eq!(r["significant"], json!(false), "{metric}: {r}");
        }
    }
}

/// A bundle of 12 points × 6 iterations, `wall_s` = base + shift(point).
fn twelve_point_bundle(name: &str, shift: f64) -> PathBuf {
    let dir = support::scratch().join(name);
    let mut ids = Vec::new();
    let mut idx = Vec::new();
    let mut k_col = Vec::new();
    let mut it = Vec::new();
    let mut wall = Vec::new();
    let noise = [0.0, 0.2, -0.2, 0.1, -0.1, 0.05];
    for k in 0..12i64 {
        for (i, e) in noise.iter().enumerate() {
            ids.push(format!("k={k}"));
            idx.push(k);
            k_col.push(k);
            it.push(i as i64 + 1);
            wall.push(10.0 + k as f64 + e + if k % 4 == 0 { shift } else { 0.0 });
        }
    }
    let n = ids.len();
    let runs = df!(
        "experiment" => vec!["twelve"; n],
        "point_id" => ids,
        "point_index" => idx,
        "k" => k_col,
        "iteration" => it,
        "replicate" => vec![1i64; n],
        "wall_s" => wall,
        "status" => vec!["ok"; n],
    )
    .unwrap();
    let manifest = Manifest {
        experiment: ExperimentInfo {
            id: "twelve".into(),
            title: "Twelve points".into(),
            ..ExperimentInfo::default()
        },
        started_at: "2026-12-01T00:00:00Z".into(),
        ..Manifest::default()
    };
    support::write_bundle(&dir, &manifest, &runs);
    dir
}

#[test]
fn twelve_points_print_holm_adjusted_p_and_the_number_of_tests() {
    let a = twelve_point_bundle("twelve-a", 0.0);
    let b = twelve_point_bundle("twelve-b", 1.5);
    let out = fslab(&["compare", p(&a), p(&b)]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("p(Holm)"), "{text}");
    assert!(text.contains("12 tests (Holm"), "{text}");
    assert_eq!(table_rows(&text).len(), 12, "{text}");
    let json: Value =
        serde_json::from_slice(&fslab(&["compare", p(&a), p(&b), "--json"]).stdout).unwrap();
    assert_eq!(json["tests"], json!(12));
    let rows = json["rows"].as_array().unwrap();
    // Points 0, 4, 8 moved by 1.5 s; their adjusted p is at least their raw p.
    for r in rows {
        let (raw, adj) = (r["p_value"].as_f64(), r["p_adjusted"].as_f64());
        if let (Some(raw), Some(adj)) = (raw, adj) {
            assert!(adj >= raw, "{r}");
        }
    }
    assert_eq!(
        rows.iter()
            .filter(|r| r["significant"] == json!(true))
            .count(),
        3,
        "{text}"
    );
    // The noise threshold is settable: at 50 % every change is within noise.
    let json: Value = serde_json::from_slice(
        &fslab(&["compare", p(&a), p(&b), "--json", "--threshold", "50"]).stdout,
    )
    .unwrap();
    assert!(json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["significant"] == json!(false)));
}
