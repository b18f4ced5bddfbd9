//! Robustness of the text parsers: no input makes them panic, warnings point at real
//! lines, and a fixture cut short is either an error or a result (often flagged
//! partial), never a crash. Arbitrary strings, strings built from the formats' own
//! vocabulary, and mutated real fixtures (tests/fixtures/).
//!
//! Case counts follow PROPTEST_CASES (default 256 per property); CI can raise it for a
//! longer bounded run.

use fslab::parse::{self, Kind};
use proptest::prelude::*;
use std::path::Path;

/// The kinds whose parsers live in this part of the crate, with a fixture each.
const KINDS: [(Kind, &str, &str); 10] = [
    (Kind::MkfsXfs, "xfs", "seed000-mkfs-parent0"),
    (Kind::XfsInfo, "xfs", "mkfs-realtime-extlog-stripe"),
    (Kind::Mke2fs, "mke2fs", "ext3-verbose-test_fs"),
    (Kind::Dumpe2fs, "dumpe2fs", "ext4-default"),
    (Kind::Time, "time", "seed000-post"),
    (Kind::E2fsck, "e2fsck", "ext4-damaged-f-n-tt"),
    (Kind::FsMark, "fs_mark", "ext4-2-threads-fsync-verbose"),
    (Kind::XfsBmap, "xfs_bmap", "holes-vvp-legend"),
    (Kind::XfsIoFiemap, "xfs_io", "holes-fiemap-v"),
    (Kind::Time, "time", "gnu-verbose-failed"),
];

fn fixture(tool: &str, name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(tool)
        .join(format!("{name}.txt"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Parse with every kind; check the invariants that hold whatever the input.
fn check_all(text: &str) -> Result<(), TestCaseError> {
    for (kind, _, _) in KINDS {
        check(kind, text)?;
    }
    Ok(())
}

fn check(kind: Kind, text: &str) -> Result<(), TestCaseError> {
    let lines = text.lines().count();
    if let Ok(p) = parse::parse_json(kind, text) {
        prop_assert_eq!(p.frame.height(), p.json.len());
        for w in &p.warnings {
            prop_assert!(
                w.line >= 1 && w.line <= lines.max(1),
                "{kind}: warning at line {} of {lines}",
                w.line
            );
        }
    }
    Ok(())
}

/// Words and shapes the formats are made of, so that generated text gets deep into
/// the parsers instead of failing on the first token.
fn vocabulary() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("meta-data=".to_string()),
        Just("data     =".to_string()),
        Just("naming   =version ".to_string()),
        Just("log      =internal log ".to_string()),
        Just("realtime =none ".to_string()),
        Just("         =".to_string()),
        Just(" blks".to_string()),
        Just(" extents".to_string()),
        Just("bsize=".to_string()),
        Just("agsize=".to_string()),
        Just("extsz=".to_string()),
        Just(", ".to_string()),
        Just("=".to_string()),
        Just("real\t".to_string()),
        Just("user ".to_string()),
        Just("sys ".to_string()),
        Just("0m1.5s".to_string()),
        Just(
            "user 0.17system 0:00.17elapsed 95%CPU (0avgtext+0avgdata 2652maxresident)k"
                .to_string()
        ),
        Just("0inputs+0outputs (0major+353minor)pagefaults 0swaps".to_string()),
        Just("\tExit status: ".to_string()),
        Just("\tCommand being timed: \"".to_string()),
        Just("Command exited with non-zero status ".to_string()),
        Just("Pass 1: ".to_string()),
        Just("Pass 3A: ".to_string()),
        Just("Memory used: 224k/0k (88k/137k), time:  0.00/ 0.00/ 0.00".to_string()),
        Just("I/O read: 2MB, write: 0MB, rate: 1.5MB/s".to_string()),
        Just("Peak memory: ".to_string()),
        Just("/dev/x: 1/2 files (0.0% non-contiguous), 3/4 blocks".to_string()),
        Just("/dev/x: clean, 1/2 files, 3/4 blocks".to_string()),
        Just("*****".to_string()),
        Just("Filesystem features:".to_string()),
        Just("Block size:".to_string()),
        Just("Block count:".to_string()),
        Just("Blocks per group:".to_string()),
        Just("First block:".to_string()),
        Just("Group 0:".to_string()),
        Just("mke2fs 1.47.0 (5-Feb-2023)".to_string()),
        Just("Creating filesystem with 10 4k blocks and 5 inodes".to_string()),
        Just("Superblock backups stored on blocks: ".to_string()),
        Just("Writing superblocks and filesystem accounting information: ".to_string()),
        Just("done".to_string()),
        Just("\x08".to_string()),
        Just("#  fs_mark  -L  3".to_string()),
        Just("FSUse%        Count         Size    Files/sec     App Overhead".to_string()),
        Just("        CREAT (Min/Avg/Max)".to_string()),
        Just("mnt/f:".to_string()),
        Just(" EXT: FILE-OFFSET      BLOCK-RANGE      AG AG-OFFSET        TOTAL FLAGS".to_string()),
        Just(
            "   0: [0..127]:        448..575          0 (448..575)         128 010000".to_string()
        ),
        Just("[".to_string()),
        Just("..".to_string()),
        Just("]:".to_string()),
        Just(" hole".to_string()),
        Just(" delalloc".to_string()),
        Just("0x801".to_string()),
        Just(" FLAG Values:".to_string()),
        Just("\n".to_string()),
        Just("\t".to_string()),
        Just(" ".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("%".to_string()),
        Just(":".to_string()),
        Just("/".to_string()),
        Just("-".to_string()),
        "[0-9]{1,22}",
        "[0-9]{1,3}\\.[0-9]{0,3}",
        "0x[0-9a-fA-F]{0,17}",
        "[a-zA-Z_-]{1,8}",
        any::<char>().prop_map(String::from),
    ]
}

fn vocab_text() -> impl Strategy<Value = String> {
    prop::collection::vec(vocabulary(), 0..80).prop_map(|v| v.concat())
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Cut the text at this fraction of its length (on a char boundary).
    Truncate(f64),
    /// Delete bytes [a, a+len) (fractions, char boundaries).
    Delete(f64, f64),
    /// Insert this string at this fraction.
    Insert(f64, String),
    /// Duplicate the line at this fraction.
    DuplicateLine(f64),
    /// Swap two lines.
    SwapLines(f64, f64),
    /// Replace every digit of one line by this digit string.
    Renumber(f64, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let frac = 0.0f64..1.0;
    prop_oneof![
        frac.clone().prop_map(Mutation::Truncate),
        (frac.clone(), 0.0f64..0.2).prop_map(|(a, l)| Mutation::Delete(a, l)),
        (frac.clone(), prop_oneof![vocabulary(), any::<String>()])
            .prop_map(|(a, s)| Mutation::Insert(a, s)),
        frac.clone().prop_map(Mutation::DuplicateLine),
        (frac.clone(), frac.clone()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (frac, "[0-9]{0,25}|-[0-9]{1,3}|99999999999999999999999")
            .prop_map(|(a, d)| Mutation::Renumber(a, d)),
    ]
}

fn boundary(s: &str, f: f64) -> usize {
    let mut i = ((s.len() as f64) * f) as usize;
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let line_at = |f: f64, n: usize| ((n as f64) * f) as usize % n.max(1);
    match m {
        Mutation::Truncate(f) => text[..boundary(text, *f)].to_string(),
        Mutation::Delete(a, l) => {
            let s = boundary(text, *a);
            let e = boundary(text, (*a + *l).min(1.0)).max(s);
            format!("{}{}", &text[..s], &text[e..])
        }
        Mutation::Insert(a, ins) => {
            let s = boundary(text, *a);
            format!("{}{}{}", &text[..s], ins, &text[s..])
        }
        Mutation::DuplicateLine(f) => {
            if !lines.is_empty() {
                let i = line_at(*f, lines.len());
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            lines.join("\n")
        }
        Mutation::SwapLines(a, b) => {
            if !lines.is_empty() {
                let (i, j) = (line_at(*a, lines.len()), line_at(*b, lines.len()));
                lines.swap(i, j);
            }
            lines.join("\n")
        }
        Mutation::Renumber(f, d) => {
            if !lines.is_empty() {
                let i = line_at(*f, lines.len());
                let mut out = String::new();
                let mut in_digits = false;
                for c in lines[i].chars() {
                    if c.is_ascii_digit() {
                        if !in_digits {
                            out.push_str(d);
                        }
                        in_digits = true;
                    } else {
                        in_digits = false;
                        out.push(c);
                    }
                }
                lines[i] = out;
            }
            lines.join("\n")
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        check_all(&text)?;
    }

    #[test]
    fn arbitrary_lines_never_panic(lines in prop::collection::vec("[ -~\t\x08]{0,120}", 0..40)) {
        check_all(&lines.join("\n"))?;
    }

    #[test]
    fn format_vocabulary_never_panics(text in vocab_text()) {
        check_all(&text)?;
    }

    #[test]
    fn mutated_fixtures_never_panic(
        which in 0..KINDS.len(),
        muts in prop::collection::vec(mutation(), 1..6),
    ) {
        let (kind, tool, name) = KINDS[which];
        let mut text = fixture(tool, name);
        for m in &muts {
            text = apply(&text, m);
        }
        check(kind, &text)?;
        // The mutated text of one tool fed to every other parser, too.
        check_all(&text)?;
    }

    #[test]
    fn fixtures_cut_at_any_line_give_rows_or_an_error(which in 0..KINDS.len(), at in 0.0f64..1.0) {
        let (kind, tool, name) = KINDS[which];
        let text = fixture(tool, name);
        let n = text.lines().count();
        let keep = ((n as f64) * at) as usize;
        let cut: String = text.lines().take(keep).map(|l| format!("{l}\n")).collect();
        check(kind, &cut)?;
        // A prefix never has more rows than the whole.
        if let (Ok(part), Ok(whole)) = (parse::parse_json(kind, &cut), parse::parse_json(kind, &text)) {
            prop_assert!(part.json.len() <= whole.json.len() + 1, "{kind}: {} > {}", part.json.len(), whole.json.len());
        }
    }
}

/// Cutting a fixture after any line is noticed: `partial`, fewer or other rows, other
/// warnings, or an error. The only cuts that may go unnoticed are those that remove
/// nothing but blank lines and messages the parser skips on purpose.
#[test]
fn every_line_cut_of_every_fixture_is_noticed() {
    let skipped = |l: &str| {
        let t = l.trim();
        let legend = t
            .split_whitespace()
            .next()
            .is_some_and(|w| w.len() == 7 && w.bytes().all(|b| (b'0'..=b'7').contains(&b)));
        t.is_empty() || t == "Discarding blocks...Done." || t == "FLAG Values:" || legend
    };
    for (kind, tool, name) in KINDS {
        let text = fixture(tool, name);
        let lines: Vec<&str> = text.lines().collect();
        let whole = parse::parse_json(kind, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for keep in 0..lines.len() {
            let cut: String = lines[..keep].iter().map(|l| format!("{l}\n")).collect();
            let Ok(p) = parse::parse_json(kind, &cut) else {
                continue;
            };
            assert_eq!(p.frame.height(), p.json.len());
            let noticed = p.partial || p.json != whole.json || p.warnings != whole.warnings;
            let removed_only_skipped = lines[keep..].iter().all(|l| skipped(l));
            assert!(
                noticed || removed_only_skipped,
                "{name}: cut after line {keep} of {} not noticed",
                lines.len()
            );
        }
    }
}
