//! No block-map parser panics on any input: arbitrary text, and real fixtures cut, spliced
//! and mutated at random.

use fslab::parse::{debugfs, filefrag};
use proptest::prelude::*;

fn fixture(rel: &str) -> String {
    let p = format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn seeds() -> Vec<String> {
    [
        "filefrag/ext4-files.txt",
        "filefrag/ext3-files.txt",
        "filefrag/ext4-inline.txt",
        "filefrag/ext4-delalloc.txt",
        "debugfs/ext3-stat-big.txt",
        "debugfs/ext3-stat-tind.txt",
        "debugfs/ext4-stat-prealloc.txt",
        "debugfs/ext4-stat-inline.txt",
        "debugfs/ext4-stat-fastlink.txt",
        "debugfs/ext4-ex-prealloc.txt",
        "debugfs/seed001-blocks.txt",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect()
}

fn all_parsers(text: &str) {
    let _ = filefrag::parse_report(text);
    let _ = debugfs::parse_stat_report(text, None);
    let _ = debugfs::parse_stat_report(text, Some(1024));
    let _ = debugfs::parse_ex_rows(text);
    let _ = debugfs::parse_ex_with_block_size(text, 65536);
    let _ = fslab::parse::parse(fslab::parse::Kind::Filefrag, text);
    let _ = fslab::parse::parse(fslab::parse::Kind::DebugfsStat, text);
    let _ = fslab::parse::parse(fslab::parse::Kind::DebugfsEx, text);
}

/// Characters that matter to these formats, to make random text hit the parsers' paths.
fn format_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::sample::select(vec![
            '0', '1', '9', ':', '.', '-', '(', ')', ',', ' ', '\n', '[', 'u', ']', 'x'
        ]),
        1 => any::<char>(),
    ]
}

fn format_words() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "File size of ",
                " is ",
                " (",
                " blocks of ",
                " bytes)\n",
                ": ",
                " extents found\n",
                "..",
                "last,eof",
                "unknown_loc",
                "inline",
                "BLOCKS:\n",
                "EXTENTS:\n",
                "TOTAL: ",
                "(IND):",
                "(ETB0):",
                "Inode: ",
                "Blockcount: ",
                "Size: ",
                "debugfs: stat \"",
                "Level Entries Logical Physical Length Flags\n",
                " - ",
                "Uninit",
                "18446744073709551615",
                "99999999999999999999",
                "0",
                "\n",
            ])
            .prop_map(str::to_string),
            "[0-9]{1,20}",
            format_char().prop_map(|c| c.to_string()),
        ],
        0..200,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text(s in ".*") {
        all_parsers(&s);
    }

    #[test]
    fn format_like_text(s in format_words()) {
        all_parsers(&s);
    }

    #[test]
    fn fixtures_cut_and_mutated(
        which in 0usize..11,
        cut in 0.0f64..1.0,
        edits in prop::collection::vec((0.0f64..1.0, format_char()), 0..8),
    ) {
        let seeds = seeds();
        let text = &seeds[which % seeds.len()];
        let mut chars: Vec<char> = text.chars().collect();
        let keep = ((chars.len() as f64) * cut) as usize;
        chars.truncate(keep.max(1).min(chars.len()));
        for (pos, c) in edits {
            if chars.is_empty() { break; }
            let i = ((chars.len() as f64) * pos) as usize % chars.len();
            chars[i] = c;
        }
        let s: String = chars.into_iter().collect();
        all_parsers(&s);
    }
}
