//! The notebook pages under `docs/notebooks/` (issue 42): each is fresh with respect to
//! what made it (its notebook's cells, the bundles and data it opens, the code that renders
//! notebook output), the staleness check fails when any of those changes, and a page shows
//! its charts in headless Chromium without running or loading anything.
//!
//! The check is `scripts/notebooks-html.py check` (the same code that writes the stamp);
//! no notebook is executed here. A stale page is regenerated with
//! `bash scripts/notebooks-html.sh NAME`.

use crate::{browser, support};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `python3 scripts/notebooks-html.py ARGS` (the repository's copy).
fn script(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts/notebooks-html.py"))
        .args(args)
        .output()
        .expect("run python3 scripts/notebooks-html.py")
}

fn stdout(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The pages the script publishes, from its stamp inputs (`docs/notebooks/NAME.html`).
fn pages() -> Vec<String> {
    let o = script(&["inputs"]);
    assert!(o.status.success(), "{}", stdout(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("docs/notebooks/"))
        .filter_map(|l| l.strip_suffix(".html"))
        .map(String::from)
        .collect()
}

#[test]
fn committed_pages_are_fresh() {
    let o = script(&["check"]);
    assert!(
        o.status.success(),
        "the notebook pages are stale (CI fails until they are regenerated):\n{}",
        stdout(&o)
    );
    let pages = pages();
    // The three seed notebooks at least.
    for seed in [
        "xfs-parent-pointers",
        "ext-fsck-small-files",
        "xfs-rt-truncate",
    ] {
        assert!(
            pages.iter().any(|p| p == seed),
            "{seed} has no page: {pages:?}"
        );
    }
    // Kept small enough to serve and to keep in git.
    for p in &pages {
        let path = repo().join(format!("docs/notebooks/{p}.html"));
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < 2 << 20, "{}: {size} bytes", path.display());
    }
}

/// A copy of everything the stamp covers, under a fresh directory.
fn copy_inputs(to: &Path) {
    let o = script(&["inputs"]);
    assert!(o.status.success(), "{}", stdout(&o));
    for rel in String::from_utf8_lossy(&o.stdout).lines() {
        let from = repo().join(rel);
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        if from.is_dir() {
            let status = Command::new("cp")
                .arg("-a")
                .arg(&from)
                .arg(&dest)
                .status()
                .unwrap();
            assert!(status.success(), "cp -a {}", from.display());
        } else {
            std::fs::copy(&from, &dest).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        }
    }
}

fn check_in(root: &Path) -> (bool, String) {
    let o = script(&["check", "--root", root.to_str().unwrap()]);
    (o.status.success(), stdout(&o))
}

/// Apply `edit` to `rel` under `root`, run the check, restore the file; the check's result.
fn with_edit(root: &Path, rel: &str, edit: impl FnOnce(&[u8]) -> Vec<u8>) -> (bool, String) {
    let path = root.join(rel);
    let before = std::fs::read(&path).unwrap();
    std::fs::write(&path, edit(&before)).unwrap();
    let result = check_in(root);
    std::fs::write(&path, before).unwrap();
    result
}

fn stale_pages(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter_map(|l| l.strip_suffix(".html is stale:"))
        .filter_map(|l| l.strip_prefix("docs/notebooks/"))
        .collect()
}

/// An edit of a notebook's JSON through serde.
fn edit_notebook(bytes: &[u8], f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut nb: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    f(&mut nb);
    serde_json::to_vec_pretty(&nb).unwrap()
}

#[test]
fn a_changed_input_makes_its_page_stale() {
    let tmp = tempfile::tempdir_in(support::scratch()).unwrap();
    let root = tmp.path();
    copy_inputs(root);
    let (ok, report) = check_in(root);
    assert!(ok, "the copy is fresh before any edit:\n{report}");
    let all = pages();

    // A cell's source: that page only, named with the command that regenerates it.
    let (ok, report) = with_edit(root, "notebooks/xfs-rt-truncate.ipynb", |b| {
        edit_notebook(b, |nb| {
            let cell = nb["cells"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|c| c["cell_type"] == "code")
                .unwrap();
            cell["source"] = serde_json::json!("// edited\n");
        })
    });
    assert!(!ok, "{report}");
    assert_eq!(stale_pages(&report), ["xfs-rt-truncate"], "{report}");
    assert!(
        report.contains("notebooks/xfs-rt-truncate.ipynb changed since the page was made"),
        "{report}"
    );
    assert!(
        report.contains("regenerate with: bash scripts/notebooks-html.sh xfs-rt-truncate"),
        "{report}"
    );

    // Outputs and execution counts are not the source: running a notebook in place
    // (run-notebooks.sh --inplace) leaves its page fresh.
    let (ok, report) = with_edit(root, "notebooks/xfs-rt-truncate.ipynb", |b| {
        edit_notebook(b, |nb| {
            for c in nb["cells"].as_array_mut().unwrap() {
                if c["cell_type"] == "code" {
                    c["execution_count"] = serde_json::json!(7);
                    c["outputs"] = serde_json::json!([{"output_type": "stream", "name": "stdout", "text": "x"}]);
                }
            }
            nb["metadata"]["edited"] = serde_json::json!(true);
        })
    });
    assert!(ok, "{report}");

    // A file of a bundle it opens.
    let (ok, report) = with_edit(root, "data/reruns/000/runs.jsonl", |b| [b, b"\n"].concat());
    assert!(!ok, "{report}");
    assert_eq!(stale_pages(&report), ["xfs-parent-pointers"], "{report}");
    assert!(report.contains("data/reruns/000 changed"), "{report}");

    // A bundle of the size sweep, opened through a format string.
    let (ok, report) = with_edit(root, "data/reruns/001-size-8GiB/manifest.json", |b| {
        [b, b" "].concat()
    });
    assert!(!ok, "{report}");
    assert_eq!(stale_pages(&report), ["ext-fsck-small-files"], "{report}");

    // A published CSV it loads.
    let (ok, report) = with_edit(root, "data/published/003_xfs_rt_truncate.csv", |b| {
        [b, b"\n"].concat()
    });
    assert!(!ok, "{report}");
    assert_eq!(stale_pages(&report), ["xfs-rt-truncate"], "{report}");

    // The code that draws the charts: every page.
    let (ok, report) = with_edit(root, "src/plot/mod.rs", |b| [b, b"\n// edited\n"].concat());
    assert!(!ok, "{report}");
    let mut stale = stale_pages(&report);
    stale.sort();
    let mut expected: Vec<&str> = all.iter().map(String::as_str).collect();
    expected.sort();
    assert_eq!(stale, expected, "{report}");
    assert!(report.contains("src/plot changed"), "{report}");

    // The page itself, edited by hand.
    let (ok, report) = with_edit(root, "docs/notebooks/kernels.html", |b| {
        [b, b"<!-- edited -->"].concat()
    });
    assert!(!ok, "{report}");
    assert_eq!(stale_pages(&report), ["kernels"], "{report}");
    assert!(
        report.contains("docs/notebooks/kernels.html was edited"),
        "{report}"
    );

    // A notebook that starts opening a bundle its page does not list.
    let (ok, report) = with_edit(root, "notebooks/xfs-rt-truncate.ipynb", |b| {
        edit_notebook(b, |nb| {
            nb["cells"].as_array_mut().unwrap().push(serde_json::json!({
                "cell_type": "code", "id": "new", "metadata": {}, "execution_count": null,
                "outputs": [], "source": "Bundle::open(\"../data/reruns/003-paths\")?"
            }));
        })
    });
    assert!(!ok, "{report}");
    assert!(
        report.contains("opens ../data/reruns/003-paths, which is not among the page's inputs"),
        "{report}"
    );

    // A page deleted.
    std::fs::remove_file(root.join("docs/notebooks/xfs-parent-pointers.html")).unwrap();
    let (ok, report) = check_in(root);
    assert!(!ok, "{report}");
    assert!(
        report.contains("docs/notebooks/xfs-parent-pointers.html does not exist"),
        "{report}"
    );
}

fn chromium_args(profile: &Path) -> Command {
    let chromium = browser::find_chromium()
        .expect("chromium is installed (this test renders a notebook page in it)");
    let mut c = browser::headless(chromium, profile);
    c.arg("--virtual-time-budget=10000");
    c
}

/// Appended to a copy of the page: once it has loaded, writes what Chromium laid out into
/// an element that `--dump-dom` shows.
const PROBE: &str = r#"<script>
window.addEventListener("load", () => {
  const charts = [...document.querySelectorAll(".jp-RenderedSVG img, .jp-RenderedSVG svg")];
  const drawn = charts.filter(c => {
    const r = c.getBoundingClientRect();
    const decoded = c.tagName.toLowerCase() !== "img" || (c.complete && c.naturalWidth > 100);
    return decoded && r.width > 100 && r.height > 100;
  });
  const tables = document.querySelectorAll(".jp-OutputArea-output table").length;
  const p = document.createElement("pre");
  p.id = "fslab-probe";
  p.textContent = `charts=${charts.length} drawn=${drawn.length} tables=${tables}`;
  document.body.appendChild(p);
});
</script>"#;

fn probe_value(dom: &str, key: &str) -> usize {
    let start = dom.find("id=\"fslab-probe\">").expect("the probe ran") + 17;
    let line = &dom[start..start + dom[start..].find('<').unwrap()];
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in probe output {line:?}"))
}

#[test]
fn a_page_shows_its_charts_in_chromium() {
    let page = repo().join("docs/notebooks/xfs-parent-pointers.html");
    let html = std::fs::read_to_string(&page).expect("the committed page");
    // Self-contained: nothing to fetch to see it.
    for external in ["<script src=", "<link rel=\"stylesheet\" href=\"http"] {
        assert!(!html.contains(external), "{}: {external}", page.display());
    }
    let in_source = html.matches("class=\"jp-RenderedSVG").count();
    assert!(in_source >= 2, "{in_source} SVG outputs in the page");

    let dir = support::scratch();
    let probed = dir.join("notebook-page-probed.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let profile = dir.join("chromium-profile-notebook-page");
    let dom = chromium_args(&profile)
        .arg("--dump-dom")
        .arg(format!("file://{}", probed.display()))
        .output()
        .expect("run chromium");
    assert!(dom.status.success(), "{dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let charts = probe_value(&dom, "charts");
    let drawn = probe_value(&dom, "drawn");
    let tables = probe_value(&dom, "tables");
    assert_eq!(charts, in_source, "every SVG output is a chart in the DOM");
    assert_eq!(
        drawn, charts,
        "every chart decoded and laid out with a size"
    );
    assert!(tables >= 3, "{tables} HTML tables (the frames)");

    // For a look (not compared: a chart's pixels are not this test's business).
    let shot = dir.join("notebook-page.png");
    let _ = std::fs::remove_file(&shot);
    let o = chromium_args(&profile)
        .arg("--window-size=1200,6000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(o.status.success(), "{o:?}");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn a_run_whose_outputs_differ_from_the_page_is_reported() {
    // `compare` reads executed notebooks; the committed notebook, never executed, has no
    // outputs at all, so every cell that shows something differs from the page.
    let tmp = tempfile::tempdir_in(support::scratch()).unwrap();
    std::fs::copy(
        repo().join("notebooks/xfs-rt-truncate.ipynb"),
        tmp.path().join("xfs-rt-truncate.ipynb"),
    )
    .unwrap();
    let o = script(&["compare", tmp.path().to_str().unwrap()]);
    let report = stdout(&o);
    assert!(!o.status.success(), "{report}");
    assert!(
        report.contains("docs/notebooks/xfs-rt-truncate.html: the output of cell "),
        "{report}"
    );
    assert!(
        report.contains("regenerate with: bash scripts/notebooks-html.sh xfs-rt-truncate"),
        "{report}"
    );
    // The pages it has no run of are not compared.
    assert!(!report.contains("xfs-parent-pointers.html"), "{report}");
    // The doctor's cell (tagged host-dependent) is not among those that differ, although
    // its output in the page is not empty.
    let line = report
        .lines()
        .find(|l| l.contains("the output of"))
        .unwrap();
    assert!(
        !line.contains("cell 3,") && !line.contains("cell 3 "),
        "{line}"
    );
}
