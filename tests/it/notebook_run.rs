//! `fslab notebook run` in real Jupyter with the evcxr kernel (as CI installs them):
//! papermill-style parameters, a cell error that names the cell, and the getting-started
//! notebook on an existing bundle, stored in the bundle and rendered in Chromium.

use crate::common::{text, Scratch};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn have(program: &str) -> bool {
    Command::new("which")
        .arg(program)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Jupyter with the evcxr kernel, or the test says why it cannot run (CI has both).
fn jupyter_ready() -> bool {
    let ok = have("jupyter") && have("evcxr_jupyter");
    assert!(
        ok || std::env::var_os("FSLAB_REQUIRE_JUPYTER").is_none(),
        "FSLAB_REQUIRE_JUPYTER is set but jupyter or evcxr_jupyter is missing"
    );
    if !ok {
        eprintln!("note: jupyter or evcxr_jupyter missing; notebook not run");
    }
    ok
}

/// `fslab notebook run` with `args` and `-o out.ipynb` on a Rust notebook `name`: a code
/// cell tagged `parameters` (`let n: i64 = 1;`), then `cells`. Its output, and the
/// executed copy's path.
fn run_notebook(s: &Scratch, name: &str, cells: &[Value], args: &[&str]) -> (Output, PathBuf) {
    let nb = s.root.join(name);
    let mut all = vec![serde_json::json!(
        {"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]},
         "execution_count": null, "outputs": [], "source": "let n: i64 = 1;"}
    )];
    all.extend_from_slice(cells);
    let doc = serde_json::json!({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "rust", "display_name": "Rust", "language": "rust"}},
        "cells": all
    });
    std::fs::write(&nb, doc.to_string()).unwrap();
    let out = s.root.join("out.ipynb");
    let mut all_args = vec!["notebook", "run", nb.to_str().unwrap()];
    all_args.extend(args);
    all_args.extend(["-o", out.to_str().unwrap()]);
    (s.run(&all_args), out)
}

/// A code cell.
fn code(id: &str, source: &str) -> Value {
    serde_json::json!({"cell_type": "code", "id": id, "metadata": {}, "execution_count": null,
                       "outputs": [], "source": source})
}

fn code_sources(nb: &Value) -> Vec<(Vec<String>, String)> {
    nb["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["cell_type"] == "code")
        .map(|c| {
            let tags = c["metadata"]["tags"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let src = match &c["source"] {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => String::new(),
            };
            (tags, src)
        })
        .collect()
}

/// One test, so that two evcxr kernels never share `EVCXR_TMPDIR` at once (a second
/// kernel on a busy build directory dies at start).
#[test]
fn notebooks_run_with_parameters_name_failing_cells_and_travel_with_bundles() {
    if !jupyter_ready() {
        return;
    }
    a_cell_error_names_the_cell_and_parameters_are_injected();
    timing_lists_each_code_cell();
    getting_started_on_an_existing_bundle_travels_with_it();
}

fn timing_lists_each_code_cell() {
    let s = Scratch::new("nbt");
    let markdown =
        serde_json::json!({"cell_type": "markdown", "id": "m", "metadata": {}, "source": "text"});
    let cells = [markdown, code("a", "\nprintln!(\"n is {}\", n + 1);")];
    let (o, _) = run_notebook(&s, "ok.ipynb", &cells, &["--timing"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("cell ")).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("cell   1 ") && lines[0].ends_with(" s  let n: i64 = 1;"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("cell   2 ") && lines[1].contains("println!"),
        "{err}"
    );
    assert!(err.contains("2 code cells "), "{err}");
}

fn a_cell_error_names_the_cell_and_parameters_are_injected() {
    let s = Scratch::new("nbe");
    let cells = [
        code("a", "println!(\"n is {}\", n);"),
        code("b", "let s: i32 = \"not a number\";"),
    ];
    let (o, out) = run_notebook(&s, "broken.ipynb", &cells, &["-p", "n", "5"]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    // Code cells: parameters 1, injected 2, println 3, the broken one 4.
    assert!(err.contains("code cell 4"), "{}", text(&o));
    let done: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let cells = code_sources(&done);
    assert_eq!(cells[1].0, ["injected-parameters"]);
    assert!(cells[1].1.contains("let n: i64 = 5i64;"), "{}", cells[1].1);
    let printed = serde_json::to_string(&done["cells"][2]["outputs"]).unwrap();
    assert!(printed.contains("n is 5"), "{printed}");
}

fn getting_started_on_an_existing_bundle_travels_with_it() {
    // `fslab run … --notebook` runs the notebook on the new bundle and stores it there
    // (the same path as `fslab notebook run NB --bundle DIR`: NotebookRun::on_bundle).
    let s = Scratch::new("nbb");
    let o = s.run(&[
        "run",
        "smallfiles",
        "--quiet",
        "--notebook",
        "notebooks/getting-started.ipynb",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let shown = s.run(&["show", &bundle]);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("getting-started: "),
        "{}",
        text(&shown)
    );
    let ipynb = Path::new(&bundle).join("notebook/getting-started.ipynb");
    let html = Path::new(&bundle).join("notebook/getting-started.html");
    let done: Value = serde_json::from_str(&std::fs::read_to_string(&ipynb).unwrap()).unwrap();
    let cells = code_sources(&done);
    let injected = cells
        .iter()
        .find(|(t, _)| t.iter().any(|x| x == "injected-parameters"))
        .expect("an injected-parameters cell");
    assert!(
        injected.1.contains(&format!("Some({bundle:?})")),
        "{}",
        injected.1
    );
    let outputs = serde_json::to_string(&done["cells"]).unwrap();
    assert!(outputs.contains("text/html") && outputs.contains("image/svg+xml"));
    let page = std::fs::read_to_string(&html).unwrap();
    // nbconvert inlines SVG outputs as data URLs: self-contained, nothing to fetch.
    let inline = |t: &str| t.matches("data:image/svg+xml").count() + t.matches("<svg").count();
    assert!(inline(&page) >= 1, "the HTML has no inline chart");
    // The bundle it opened is the one given (no new run: one bundle only).
    assert_eq!(s.bundles("smallfiles").len(), 1);
    // Headless Chromium renders it with the charts in the DOM.
    let Some(chromium) = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| have(c))
    else {
        assert!(std::env::var_os("FSLAB_REQUIRE_CHROMIUM").is_none());
        return;
    };
    let dom = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            s.root.join("chromium").display()
        ))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(dom.status.success(), "{dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(inline(&dom) >= 1, "no chart in the rendered page");
}
