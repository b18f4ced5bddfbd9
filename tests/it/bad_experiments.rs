//! The corpus of broken experiment files (tests/bad-experiments/): each must fail to
//! load with its expected located message and help, and none may panic.

use std::path::Path;

#[test]
fn every_broken_file_gives_its_expected_located_message() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-experiments");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "only {} broken files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let expected_path = path.with_extension("expected");
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let mut lines = expected.lines();
        let want = lines.next().unwrap_or_default().to_string();
        let want_help = lines.find_map(|l| l.strip_prefix("help: ").map(str::to_string));

        // The loader the CLI uses: the spec, then every claim's `check:` against its kind.
        let loaded = std::panic::catch_unwind(|| fslab::Experiment::load(path));
        let err = match loaded {
            Err(_) => {
                failures.push(format!("{name}: the loader panicked"));
                continue;
            }
            Ok(Ok(_)) => {
                failures.push(format!("{name}: loaded without an error"));
                continue;
            }
            Ok(Err(e)) => e,
        };
        let got = if err.line > 0 {
            format!("{name}:{}:{}: {}", err.line, err.column, err.message)
        } else {
            format!("{name}: {}", err.message)
        };
        if !got.starts_with(&want) {
            failures.push(format!("{name}:\n  expected: {want}\n  got:      {got}"));
        }
        match (&want_help, &err.help) {
            (Some(w), Some(h)) if h.contains(w.as_str()) => {}
            (Some(w), got_help) => failures.push(format!(
                "{name}: help should contain `{w}`, got {got_help:?}"
            )),
            (None, _) => {}
        }
        // The snippet is the line the location names, and the full message shows it.
        let text = std::fs::read_to_string(path).unwrap();
        if err.line > 0 {
            let line = text.lines().nth(err.line - 1).map(str::to_string);
            if err.snippet != line {
                failures.push(format!(
                    "{name}: snippet {:?} is not line {}",
                    err.snippet, err.line
                ));
            }
            assert!(err.line <= text.lines().count(), "{name}");
            let shown = err.to_string();
            assert!(
                shown.contains(&format!(" {} | ", err.line)),
                "{name}: {shown}"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cli_reports_a_broken_file_with_exit_status_2_and_no_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-experiments");
    for name in [
        "unknown-mount-key.yaml",
        "yaml-unclosed-quote.yaml",
        "empty-file.yaml",
        "claim-io-summary-half-ratio.yaml",
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_fslab"))
            .args(["plan", dir.join(name).to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name) && !err.contains("panicked"), "{err}");
    }
}
