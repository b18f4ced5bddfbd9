//! `fslab reply` through the real binary, on the committed bundles of `data/reruns/`
//! (issue 42, part 2).
//!
//! Golden outputs: `tests/fixtures/reply/<name>.txt`, one per case of [`CASES`]. When a
//! change to the reply (or to the verdicts, the comparison, a committed bundle) is meant,
//! rewrite them with `FSLAB_BLESS=1 cargo test --test it reply::` and read the diff.
//! Besides the goldens: every line of every reply is at most 72 columns, the acceptance
//! reply (000-published against 000-published-b) and the reply of each seed bundle
//! alone fit 60 lines, the content hash is the one `sha256sum` gives in a shell, a post
//! with a Message-ID gives an `In-Reply-To:` line and one without says so, and a
//! missing or bad bundle or post is a located error.

use std::path::PathBuf;
use std::process::{Command, Output};
use unicode_width::UnicodeWidthStr;

/// (golden name, arguments after `fslab reply`).
const CASES: &[(&str, &[&str])] = &[
    (
        "000-published--compare-000-published-b",
        &[
            "data/reruns/000-published",
            "--compare",
            "data/reruns/000-published-b",
        ],
    ),
    ("000-n100k", &["data/reruns/000-n100k"]),
    (
        "001--compare-001-b",
        &["data/reruns/001", "--compare", "data/reruns/001-b"],
    ),
    (
        "003--compare-003-b",
        &["data/reruns/003", "--compare", "data/reruns/003-b"],
    ),
    ("003-paths", &["data/reruns/003-paths"]),
];

/// The seed bundles whose reply alone must fit 60 lines.
const SEED_BUNDLES: &[&str] = &[
    "000",
    "000-published",
    "000-published-first-runs",
    "000-as-run",
    "001",
    "003",
    "003-converted",
    "003-paths",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn reply(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fslab"))
        .arg("reply")
        .args(args)
        .current_dir(root())
        .output()
        .expect("run fslab reply")
}

fn ok(args: &[&str]) -> String {
    let o = reply(args);
    assert!(
        o.status.success(),
        "fslab reply {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8")
}

fn golden(name: &str) -> PathBuf {
    root()
        .join("tests/fixtures/reply")
        .join(format!("{name}.txt"))
}

/// The lines wider than a mail's 72 columns, with their numbers.
fn too_wide(text: &str) -> Vec<(usize, usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, UnicodeWidthStr::width(l), l))
        .filter(|(_, w, _)| *w > 72)
        .collect()
}

#[test]
fn replies_match_their_goldens() {
    let bless = std::env::var_os("FSLAB_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, args) in CASES {
        let have = ok(args);
        let path = golden(name);
        if bless {
            std::fs::write(&path, &have).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (FSLAB_BLESS=1 writes it)", path.display()));
        if have != want {
            stale.push(format!(
                "{}: `fslab reply {}` prints\n{have}",
                path.display(),
                args.join(" ")
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "replies differ from their goldens (FSLAB_BLESS=1 rewrites them):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_line_fits_72_columns_and_the_acceptance_reply_60_lines() {
    for (_, args) in CASES {
        let text = ok(args);
        assert!(
            too_wide(&text).is_empty(),
            "fslab reply {args:?}: lines over 72 columns: {:#?}",
            too_wide(&text)
        );
    }
    let acceptance = ok(CASES[0].1);
    let lines = acceptance.lines().count();
    assert!(lines <= 60, "{lines} lines:\n{acceptance}");
    // What the acceptance line asks to be in it.
    for needle in [
        "%stddev",
        "%change",
        "wall_s parent=0",
        "\"I think it's safe to",
        "1.098",
        "1.278 [0.9377, 1.999]",
        "not reproduced",
        "Differs from the post: fsstress: fslab's stand-in `fslab stress`",
        "Rerun: fslab run experiments/xfs-parent-pointers.yaml",
        "--profile published --set link=1 --set replicates=3",
        "Content hash of 000-published",
    ] {
        assert!(
            acceptance.contains(needle),
            "no {needle:?} in\n{acceptance}"
        );
    }
    // One line per claim of the post: each claim's tier is on the line with its number.
    let claims = acceptance
        .lines()
        .filter(|l| l.starts_with('"'))
        .collect::<Vec<_>>();
    assert_eq!(claims.len(), 10, "{claims:#?}");
    assert!(claims[3].contains("1.336") && claims[3].ends_with("not reproduced"));
    // Without Markdown: no table pipes, no code fences, no headings.
    assert!(!acceptance.contains('|') || acceptance.contains("| LC_ALL=C sort"));
    assert!(!acceptance.contains("```") && !acceptance.lines().any(|l| l.starts_with('#')));
    for b in SEED_BUNDLES {
        let text = ok(&[&format!("data/reruns/{b}")]);
        let lines = text.lines().count();
        assert!(lines <= 60, "{b}: {lines} lines:\n{text}");
        assert!(too_wide(&text).is_empty(), "{b}: {:#?}", too_wide(&text));
    }
}

/// The hash line and the check line under it, recomputed in a shell with `sha256sum`.
#[test]
fn the_content_hash_is_what_sha256sum_gives() {
    let bundle = root().join("data/reruns/000-published");
    let text = ok(&["data/reruns/000-published"]);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("Content hash of 000-published"))
        .expect("a content hash");
    let hash = lines[at + 1..]
        .iter()
        .map(|l| l.trim())
        .find(|l| l.len() == 64 && l.chars().all(|c| c.is_ascii_hexdigit()))
        .expect("a sha256 under the heading");
    // The check the reply prints, run as a reader would: its lines joined as the shell
    // joins a backslash-newline.
    let check_at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("in the bundle: "))
        .expect("the check line");
    let mut check = String::new();
    for l in &lines[check_at..] {
        check.push_str(l.trim_start().trim_start_matches("in the bundle: "));
        if !check.ends_with('\\') {
            break;
        }
        check.pop();
    }
    let out = Command::new("bash")
        .arg("-c")
        .arg(&check)
        .current_dir(&bundle)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{check}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shell = String::from_utf8(out.stdout).unwrap();
    assert_eq!(shell.split_whitespace().next(), Some(hash), "{check}");
    // The library's hash is the same, and names what it covers.
    let h = fslab::store::content_hash(&bundle).unwrap();
    assert_eq!(h.sha256, hash);
    let names: Vec<&str> = h.files.iter().map(|f| f.name.as_str()).collect();
    assert!(names.contains(&"manifest.json") && names.contains(&"runs.parquet"));
    assert!(!names.iter().any(|n| n.ends_with(".md")));
}

/// A copy of a committed bundle's hashed files, one byte of one changed: another hash.
#[test]
fn a_changed_table_changes_the_hash() {
    let src = root().join("data/reruns/000-published");
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
        }
    }
    let before = fslab::store::content_hash(dir.path()).unwrap().sha256;
    assert_eq!(before, fslab::store::content_hash(&src).unwrap().sha256);
    let geometry = dir.path().join("geometry.parquet");
    let mut bytes = std::fs::read(&geometry).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&geometry, bytes).unwrap();
    assert_ne!(
        fslab::store::content_hash(dir.path()).unwrap().sha256,
        before
    );
}

#[test]
fn a_post_gives_in_reply_to_its_message_id_and_none_is_made_up() {
    let plain = ok(&["data/reruns/000-published"]);
    let with = ok(&[
        "data/reruns/000-published",
        "--post",
        "tests/fixtures/reply/post.eml",
    ]);
    assert_eq!(
        with,
        format!("In-Reply-To: <fixture-000-post@fslab.invalid>\n\n{plain}"),
        "the post's Message-ID, not its In-Reply-To, heads the block"
    );
    let without = ok(&[
        "data/reruns/000-published",
        "--post",
        "tests/fixtures/reply/post-without-id.eml",
    ]);
    // The note, wrapped to 72 columns, before the first blank line.
    let note: Vec<&str> = without.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        note.join(" "),
        "[no In-Reply-To line: tests/fixtures/reply/post-without-id.eml has no Message-ID header]",
        "{without}"
    );
    assert!(!without.contains("In-Reply-To:"), "{without}");
    assert!(without.ends_with(&plain), "{without}");
}

fn failure(args: &[&str]) -> String {
    let o = reply(args);
    assert!(!o.status.success(), "fslab reply {args:?} succeeded");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?}: errors exit 2, as in every fslab command"
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn a_missing_or_bad_bundle_or_post_is_a_located_error() {
    let err = failure(&["data/reruns/no-such-bundle"]);
    assert!(
        err.contains("data/reruns/no-such-bundle: not a result bundle (cannot read manifest.json"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("manifest.json"), "{ \"format_version\": ").unwrap();
    let bad = dir.path().display().to_string();
    let err = failure(&[&bad]);
    assert!(
        err.contains(&format!("{bad}: not a result bundle (manifest.json: ")),
        "{err}"
    );
    assert!(err.contains("line 1 column"), "{err}");
    let err = failure(&["data/reruns/000-published", "--compare", "data/reruns/nope"]);
    assert!(err.contains("--compare"), "{err}");
    assert!(
        err.contains("data/reruns/nope: not a result bundle"),
        "{err}"
    );
    let err = failure(&[
        "data/reruns/000-published",
        "--post",
        "tests/fixtures/reply/absent.eml",
    ]);
    assert!(
        err.contains("--post tests/fixtures/reply/absent.eml"),
        "{err}"
    );
    assert!(err.contains("No such file"), "{err}");
    let empty = dir.path().join("empty.eml");
    std::fs::write(&empty, "\n\n").unwrap();
    let err = failure(&[
        "data/reruns/000-published",
        "--post",
        empty.to_str().unwrap(),
    ]);
    assert!(
        err.contains(&format!("--post {}: not a mail", empty.display())),
        "{err}"
    );
}
