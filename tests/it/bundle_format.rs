//! The bundle format: `format_version` in the manifest, old bundles still open, newer
//! ones are refused with a clear message.

use fslab::store::{Bundle, BundleWriter, ExperimentInfo, Manifest, FORMAT_VERSION};
use std::path::PathBuf;
use std::process::Command;

fn old_bundle() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundles/v0-tiny")
}

#[test]
fn a_bundle_written_before_format_version_opens_as_version_1() {
    let text = std::fs::read_to_string(old_bundle().join("manifest.json")).unwrap();
    assert!(
        !text.contains("\"format_version\""),
        "the fixture must stay old"
    );
    let b = Bundle::open(old_bundle()).unwrap();
    let m = b.manifest();
    assert_eq!(m.format_version, 1);
    assert_eq!(m.experiment.id, "tiny");
    assert_eq!(m.matrix_axes, ["n"]);
    assert_eq!(m.points.len(), 2);
    assert!(m
        .points
        .iter()
        .all(|p| p.status == "ok" && p.iterations == 2));
    let runs = b.runs().unwrap();
    assert_eq!(runs.height(), 4);
    assert!(runs.column("n").is_ok());
    assert_eq!(b.tables().unwrap(), ["runs"]);
    assert_eq!(b.table_if_present("claims").unwrap(), None);
}

#[test]
fn compare_and_report_read_an_old_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.md");
    let bundle = old_bundle().display().to_string();
    let bin = env!("CARGO_BIN_EXE_fslab");
    let o = Command::new(bin)
        .args(["compare", &bundle, &bundle])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("n=1"));
    let o = Command::new(bin)
        .args(["report", &bundle, "-o", report.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(
        md.contains("A bundle written before format_version"),
        "{md}"
    );
}

#[test]
fn a_new_bundle_records_the_format_version() {
    let root = tempfile::tempdir().unwrap();
    let manifest = Manifest {
        experiment: ExperimentInfo {
            id: "fmt".into(),
            ..ExperimentInfo::default()
        },
        ..Manifest::default()
    };
    let w = BundleWriter::create(root.path(), manifest).unwrap();
    let text = std::fs::read_to_string(w.dir().join("manifest.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format_version"], FORMAT_VERSION);
    assert_eq!(
        Bundle::open(w.dir()).unwrap().manifest().format_version,
        FORMAT_VERSION
    );
}

#[test]
fn a_bundle_of_a_newer_format_is_refused_with_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(old_bundle().join("manifest.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["format_version"] = (FORMAT_VERSION + 1).into();
    std::fs::write(dir.path().join("manifest.json"), v.to_string()).unwrap();
    let err = Bundle::open(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains(&format!("format_version {}", FORMAT_VERSION + 1))
            && err.contains("newer fslab"),
        "{err}"
    );
}

#[test]
fn show_lists_the_notebooks_stored_in_a_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    let copy = Command::new("cp")
        .arg("-r")
        .arg(old_bundle())
        .arg(&b)
        .status()
        .unwrap();
    assert!(copy.success());
    let show = || {
        let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
            .arg("show")
            .arg(&b)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    assert!(Bundle::open(&b).unwrap().notebooks().unwrap().is_empty());
    assert!(show().contains("notebooks: none"), "{}", show());
    let nb = b.join("notebook");
    std::fs::create_dir_all(&nb).unwrap();
    for f in [
        "seed.ipynb",
        "seed.html",
        "alone.ipynb",
        ".staged.ipynb",
        "notes.txt",
    ] {
        std::fs::write(nb.join(f), "{}").unwrap();
    }
    let found = Bundle::open(&b).unwrap().notebooks().unwrap();
    let names: Vec<&str> = found.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["alone", "seed"]);
    assert_eq!(found[0].html, None);
    assert_eq!(found[1].html, Some(nb.join("seed.html")));
    let out = show();
    assert!(
        out.contains(&format!(
            "seed: {}, {}",
            nb.join("seed.ipynb").display(),
            nb.join("seed.html").display()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("alone: {}\n", nb.join("alone.ipynb").display())),
        "{out}"
    );
}

#[test]
fn show_prints_one_line_per_run() {
    let runs = Bundle::open(old_bundle()).unwrap().runs().unwrap().height();
    assert!(runs >= 2, "the fixture needs rows to rule between: {runs}");
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .arg("show")
        .arg(old_bundle())
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    // The header, one rule under it, then the rows up to the list of tables.
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("point_id"))
        .unwrap_or_else(|| panic!("{out}"));
    let tables = lines
        .iter()
        .position(|l| l.starts_with("tables:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(lines[header + 1].trim().chars().all(|c| c == '─'), "{out}");
    assert_eq!(tables - header - 2, runs, "{out}");
    let rules = lines[header + 2..tables]
        .iter()
        .filter(|l| l.contains('─'))
        .count();
    assert_eq!(rules, 0, "{out}");
}
