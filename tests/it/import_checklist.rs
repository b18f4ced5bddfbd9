//! Issue 41's "what to check before running": every draft ends with a short list of what
//! the import guessed or could not carry, each item with its post line, and `fslab
//! import` prints the same list on stderr. Checked on the acceptance corpus, the seeds and
//! the outside posts: every `guess:` comment of a draft and every `FILL_IN` is in the list.

use super::common::text;
use super::import::fixture_post;
use std::path::Path;
use std::process::Command;

const HEAD: &str = "# What to check before `fslab run`";

/// The posts: (name, text without its `#|` header).
fn posts() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for (dir, strip) in [
        ("tests/fixtures/import-acceptance", true),
        ("tests/fixtures/import/outside", true),
        ("data/published/posts", false),
    ] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        names.sort();
        for p in names {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let t = if strip {
                let d = p.parent().unwrap().file_name().unwrap().to_string_lossy();
                let dir = if d == "outside" {
                    "outside".to_string()
                } else {
                    format!("../{d}")
                };
                fixture_post(&dir, &name)
            } else {
                std::fs::read_to_string(&p).unwrap()
            };
            out.push((name, t));
        }
    }
    assert!(out.len() >= 20, "{} posts", out.len());
    out
}

/// The first words after `guess:` on a comment line (what its item must say).
fn guess_words(l: &str) -> Option<String> {
    let at = l.rfind("guess:")?;
    let words: Vec<&str> = l[at + 6..].split_whitespace().take(4).collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[test]
fn every_guess_and_fill_in_of_a_draft_is_in_its_list() {
    let mut drafts = 0;
    for (name, post) in posts() {
        let d = fslab::import::import(post.as_bytes(), Some(&name)).unwrap();
        let Some(yaml) = &d.yaml else { continue };
        drafts += 1;
        let (body, list) = match yaml.find(HEAD) {
            Some(i) => (&yaml[..i], &yaml[i..]),
            None => (yaml.as_str(), ""),
        };
        assert_eq!(
            list.lines().skip(1).count(),
            d.checks.len(),
            "{name}: the draft's list is the draft's checks\n{list}"
        );
        // the list's items are located: a post line, or the post as a whole
        for l in list.lines().skip(1) {
            assert!(
                l.starts_with("#   line ") || l.starts_with("#   the post: "),
                "{name}: {l}"
            );
        }
        let all = d
            .checks
            .iter()
            .map(|c| c.what.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n");
        for l in body.lines().filter(|l| l.contains('#')) {
            // the draft's header says what `guess:` means
            if l.contains("`guess:` marks") || l.contains("(guess: move one into") {
                continue;
            }
            if let Some(g) = guess_words(l) {
                assert!(
                    all.contains(&g),
                    "{name}: `{g}` ({l}) is not in the list:\n{all}"
                );
            }
        }
        for l in body.lines().filter(|l| l.contains("FILL_IN")) {
            let var = l.trim().split(':').next().unwrap();
            assert!(
                d.checks
                    .iter()
                    .any(|c| c.what.contains(&format!("var `{var}` is FILL_IN"))),
                "{name}: {l}"
            );
        }
        // each item once
        for (i, c) in d.checks.iter().enumerate() {
            assert!(!d.checks[..i].contains(c), "{name}: twice: {c:?}");
        }
    }
    assert!(drafts >= 15, "{drafts} drafts");
}

/// A var the post never sets is FILL_IN, and the list says so at its line; `fslab import`
/// prints the list on stderr, the draft keeps it at its end, and the draft still loads.
#[test]
fn fslab_import_prints_the_list_on_stderr() {
    let post = "Subject: [PATCH] xfs: faster creates\n\nHere is what I ran:\n\n# mkfs.xfs -f /dev/sdb\n# mount /dev/sdb /mnt/scratch\n# time fs_mark -d /mnt/scratch/d -n $NFILES -s 0\n\nreal 0m12.0s\nuser 0m1.0s\nsys 0m8.0s\n";
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("post.txt");
    std::fs::write(&p, post).unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(["import", p.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("what to check before `fslab run` ("), "{err}");
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with("7  var `NFILES` is FILL_IN")),
        "{err}"
    );
    let yaml = std::fs::read_to_string(out.join("xfs-faster-creates.yaml")).unwrap();
    let list = &yaml[yaml.find(HEAD).unwrap_or_else(|| panic!("{yaml}"))..];
    assert!(
        list.contains("#   line 7: var `NFILES` is FILL_IN"),
        "{list}"
    );
    fslab::Experiment::from_str_named(&yaml, "d.yaml").unwrap();
}
