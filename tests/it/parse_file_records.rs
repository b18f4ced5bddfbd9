//! Issue 16: block-map parses keep every number the tool printed for a file or an extent,
//! in the tool's unit next to bytes, and never assume a block size. Real captures of this
//! machine's tools (tests/fixtures/*/NAME.txt, the command in NAME.cmd, recaptured by
//! tests/fixtures/capture-issue16.sh), and seed 001's post.

use fslab::parse::map::{BlockSizeSource, MapOptions, MapRow, Unit};
use fslab::parse::{self, debugfs, filefrag, xfs_bmap, Kind};
use serde_json::{json, Value};

fn fixture(rel: &str) -> String {
    let p = format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A row's tool columns.
type Tool = (
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
);

/// The tool columns of a row: (logical_start, logical_end, physical_start, physical_end,
/// length).
fn tool(r: &MapRow) -> Tool {
    (
        r.logical_start,
        r.logical_end,
        r.physical_start,
        r.physical_end,
        r.length,
    )
}

fn bytes(r: &MapRow) -> (Option<u64>, Option<u64>, Option<u64>) {
    (r.logical_bytes, r.physical_bytes, r.length_bytes)
}

// ---------------------------------------------------------------- ext3, 1 KiB blocks

/// `debugfs -R 'stat /holey.bin'` of a 1 KiB-block ext3: every header field, every list
/// entry; without a block size the byte columns are null and a warning says why.
#[test]
fn ext3_1k_stat_every_field_and_no_guessed_block_size() {
    let text = fixture("debugfs/ext3-1k-holey-stat.txt");
    let r = debugfs::parse_stat_map(&text, MapOptions::default()).unwrap();
    assert!(!r.partial);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0].reason;
    assert!(
        w.contains("block size unknown") && w.contains("--block-size"),
        "{w}"
    );
    assert!(r.rows.iter().all(|x| bytes(x) == (None, None, None)));
    assert!(r
        .rows
        .iter()
        .all(|x| x.unit_bytes.is_none() && x.unit == Unit::Block));
    let f = &r.files[0];
    assert_eq!(f.block_size, None);
    assert_eq!(f.block_size_source, BlockSizeSource::Unknown);
    // Blockcount 126 sectors / 63 blocks: the hint, not used.
    assert_eq!(f.blockcount_block_size, Some(1024));

    // Inode: 12   Type: regular    Mode:  0600   Flags: 0x0
    // Generation: 2432050659    Version: 0x00000000:00000001
    // User:     0   Group:     0   Project:     0   Size: 348160
    // File ACL: 0
    // Links: 1   Blockcount: 126
    // Fragment:  Address: 0    Number: 0    Size: 0
    //  ctime: 0x6b0e3f00:49a9ef48 -- Tue Dec  1 03:29:04 2026   (and atime, mtime, crtime)
    // Size of extra inode fields: 32
    assert_eq!(f.inode, Some(12));
    assert_eq!(f.file_type.as_deref(), Some("regular"));
    assert_eq!(f.mode, Some(0o600));
    assert_eq!(f.flags, Some(0));
    assert_eq!(f.generation, Some(2432050659));
    assert_eq!(f.version.as_deref(), Some("0x00000000:00000001"));
    assert_eq!((f.user, f.group, f.project), (Some(0), Some(0), Some(0)));
    assert_eq!(f.size_bytes, Some(348160));
    assert_eq!(f.file_acl, Some(0));
    assert_eq!((f.links, f.blockcount), (Some(1), Some(126)));
    assert_eq!(
        (f.fragment_address, f.fragment_number, f.fragment_size),
        (Some(0), Some(0), Some(0))
    );
    for (t, ns) in [
        (f.ctime, f.ctime_ns),
        (f.atime, f.atime_ns),
        (f.mtime, f.mtime_ns),
        (f.crtime, f.crtime_ns),
    ] {
        assert_eq!(t, Some(0x6b0e3f00));
        assert_eq!(ns, Some(0x49a9ef48 >> 2));
    }
    assert_eq!(f.dtime, None);
    assert_eq!(f.extra_isize, Some(32));
    assert_eq!(f.map, "blocks");
    // TOTAL: 63
    assert_eq!(f.total_blocks, Some(63));
    assert_eq!(
        (f.data_extents, f.data_blocks, f.metadata_blocks, f.rows),
        (4, 60, 3, 7)
    );

    // (0-11):4771-4782, (IND):5283, (12-15):4783-4786, (16-19):5329-5332, (DIND):5284,
    // (IND):5285, (300-339):5613-5652
    let got: Vec<_> = r
        .rows
        .iter()
        .map(|x| (tool(x), &*x.flags, x.index))
        .collect();
    let s = Some;
    assert_eq!(
        got,
        [
            ((s(0), s(11), s(4771), s(4782), s(12)), "", 0),
            ((None, None, s(5283), s(5283), s(1)), "metadata,ind", 1),
            ((s(12), s(15), s(4783), s(4786), s(4)), "", 1),
            ((s(16), s(19), s(5329), s(5332), s(4)), "", 2),
            ((None, None, s(5284), s(5284), s(1)), "metadata,dind", 3),
            ((None, None, s(5285), s(5285), s(1)), "metadata,ind", 3),
            ((s(300), s(339), s(5613), s(5652), s(40)), "last", 3),
        ]
    );

    // With the block size (dumpe2fs -h of the same image says `Block size: 1024`).
    let dumpe2fs = fixture("dumpe2fs/ext3-1k-holey.txt");
    assert_eq!(
        parse::geometry_block_size(Kind::Dumpe2fs, &dumpe2fs),
        Some(1024)
    );
    let r = debugfs::parse_stat_map(&text, MapOptions::geometry(1024)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.files[0].block_size_source, BlockSizeSource::Geometry);
    let k = 1024;
    assert_eq!(bytes(&r.rows[0]), (Some(0), Some(4771 * k), Some(12 * k)));
    assert_eq!(bytes(&r.rows[1]), (Some(12 * k), Some(5283 * k), Some(k)));
    let last = r.rows.last().unwrap();
    assert_eq!(bytes(last), (Some(300 * k), Some(5613 * k), Some(40 * k)));
    // 340 blocks of 1 KiB = 348160 = Size: the last extent reaches the end of the file.
    assert_eq!(last.flags, "last,eof");
    // The 4096 that used to be assumed is 4× wrong here, and Blockcount says so.
    let wrong = debugfs::parse_stat_map(&text, MapOptions::given(4096)).unwrap();
    assert!(wrong.warnings[0].reason.contains("Blockcount 126"));
}

/// `debugfs -R 'ex'` of a block-mapped ext3 file: debugfs's own message, quoted.
#[test]
fn ext3_1k_ex_quotes_debugfs() {
    let text = fixture("debugfs/ext3-1k-holey-ex.txt");
    let e = parse::parse(Kind::DebugfsEx, &text)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/holey.bin: does not uses extent block maps") && e.contains("line 2"),
        "{e}"
    );
}

// ---------------------------------------------------------------- ext4, depth-1 tree

/// `debugfs ex` of a file with a depth-1 extent tree: Level, Entries and every column.
#[test]
fn ext4_ex_depth_one_every_column() {
    let text = fixture("debugfs/ext4-tree-ex.txt");
    // mke2fs makes 1 KiB blocks on a 64 MiB image (its `small` type): the stat of the
    // same file has Blockcount 226 = 113 blocks × 2 sectors.
    let r = debugfs::parse_ex_map(&text, MapOptions::given(1024)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let f = &r.files[0];
    assert_eq!(
        (f.rows, f.depth, f.leaves, f.index_rows, f.data_blocks),
        (14, Some(1), 13, 1, 12 * 4 + 64)
    );
    //  0/ 1   1/  1     0 -   263  8451            264
    let i = &r.rows[0];
    assert_eq!(
        (i.level, i.max_depth, i.entry, i.entries),
        (Some(0), Some(1), Some(1), Some(1))
    );
    assert_eq!(tool(i), (Some(0), Some(263), Some(8451), None, Some(264)));
    assert_eq!(i.flags, "metadata,etb0");
    assert_eq!(i.physical_bytes, Some(8451 * 1024));
    assert_eq!(i.length_bytes, Some(1024), "a tree block is one block");
    // The 13 leaves: ` 1/ 1   N/ 13   L0 -  L1  P0 -  P1  LEN [Uninit]`
    let leaves: Vec<[u64; 4]> = vec![
        [0, 3, 8705, 8708],
        [8, 11, 9217, 9220],
        [16, 19, 4389, 4392],
        [24, 27, 4397, 4400],
        [32, 35, 4405, 4408],
        [40, 43, 4413, 4416],
        [48, 51, 4421, 4424],
        [56, 59, 4429, 4432],
        [64, 67, 4437, 4440],
        [72, 75, 4445, 4448],
        [80, 83, 4453, 4456],
        [88, 91, 4461, 4464],
        [200, 263, 8513, 8576],
    ];
    for (n, (row, l)) in r.rows[1..].iter().zip(&leaves).enumerate() {
        let len = l[1] - l[0] + 1;
        assert_eq!(
            (row.level, row.max_depth, row.entry, row.entries),
            (Some(1), Some(1), Some(n as u32 + 1), Some(13))
        );
        assert_eq!(
            tool(row),
            (Some(l[0]), Some(l[1]), Some(l[2]), Some(l[3]), Some(len))
        );
        assert_eq!(
            bytes(row),
            (Some(l[0] * 1024), Some(l[2] * 1024), Some(len * 1024))
        );
        assert_eq!(row.index, n as u64);
    }
    let u = r.rows.last().unwrap();
    assert_eq!(u.tool_flags.as_deref(), Some("Uninit"));
    assert_eq!(u.flags, "last,unwritten");

    // Without a block size: the table as printed, bytes null, one warning.
    let r = debugfs::parse_ex_map(&text, MapOptions::default()).unwrap();
    assert_eq!(r.warnings.len(), 1);
    assert!(r
        .rows
        .iter()
        .all(|x| x.length_bytes.is_none() && x.length.is_some()));
}

/// The same file's `stat` (ETB0 first, then the leaves), `filefrag -v -k` and
/// `filefrag -v -b512`: one set of byte extents in three units.
#[test]
fn ext4_tree_stat_and_filefrag_units_agree() {
    let text = fixture("debugfs/ext4-tree-stat.txt");
    // A 4096 guess (the old default) is caught: Blockcount 226 sectors ≠ 113 × 4096.
    let wrong = debugfs::parse_stat_map(&text, MapOptions::given(4096)).unwrap();
    assert!(
        wrong.warnings[0].reason.contains("Blockcount 226"),
        "{:?}",
        wrong.warnings
    );
    let stat = debugfs::parse_stat_map(&text, MapOptions::given(1024)).unwrap();
    assert!(stat.warnings.is_empty(), "{:?}", stat.warnings);
    let s = &stat.files[0];
    assert_eq!(
        (s.inode, s.flags, s.size_bytes, s.blockcount),
        (Some(12), Some(0x80000), Some(270336), Some(226))
    );
    assert_eq!(s.version.as_deref(), Some("0x00000000:0000000e"));
    assert_eq!(
        (s.atime_ns, s.ctime_ns),
        (Some(0x7d29874c >> 2), Some(0xa072bb50 >> 2))
    );
    assert_eq!(s.checksum, Some(0x5c94f04f));
    assert_eq!((s.map.as_str(), s.total_blocks), ("extents", None));
    // (ETB0):8451
    assert_eq!(stat.rows[0].flags, "metadata,etb0");
    assert_eq!(stat.rows[0].level, Some(0));
    assert_eq!(tool(&stat.rows[0]).2, Some(8451));
    // (200-263[u]):8513-8576
    let u = stat.rows.last().unwrap();
    assert_eq!(
        tool(u),
        (Some(200), Some(263), Some(8513), Some(8576), Some(64))
    );
    assert_eq!(u.tool_flags.as_deref(), Some("[u]"));
    assert_eq!(u.flags, "last,unwritten,eof");

    let k = filefrag::parse_report(&fixture("filefrag/ext4-tree-k.txt")).unwrap();
    let b = filefrag::parse_report(&fixture("filefrag/ext4-tree-b512.txt")).unwrap();
    assert!(k.warnings.is_empty() && b.warnings.is_empty());
    // File size of mnt/tree.bin is 270336 (264 blocks of 1024 bytes) / (528 blocks of 512 bytes)
    // mnt/tree.bin: 4 extents found
    for (r, blocks, unit) in [(&k, 264, 1024), (&b, 528, 512)] {
        let f = &r.files[0];
        assert_eq!(f.path, "mnt/tree.bin");
        assert_eq!(f.fs_type.as_deref(), Some("ef53"));
        assert_eq!(
            (
                f.size_bytes,
                f.blocks,
                f.block_size,
                f.extents_found,
                f.rows
            ),
            (Some(270336), Some(blocks), Some(unit), Some(4), 13)
        );
        assert_eq!(f.block_size_source, BlockSizeSource::Stated);
        assert!(r.rows.iter().all(|x| x.unit_bytes == Some(unit)));
    }
    //    1:        8..      11:       9217..      9220:      4:       8713:
    let r1 = &k.rows[1];
    assert_eq!(r1.ext, Some(1));
    assert_eq!(
        tool(r1),
        (Some(8), Some(11), Some(9217), Some(9220), Some(4))
    );
    assert_eq!(r1.expected, Some(8713));
    //   12:      400..     527:      17026..     17153:    128:       9146: last,unwritten,eof
    let r12 = &b.rows[12];
    assert_eq!(
        tool(r12),
        (Some(400), Some(527), Some(17026), Some(17153), Some(128))
    );
    assert_eq!(r12.expected, Some(9146));
    assert_eq!(r12.tool_flags.as_deref(), Some("last,unwritten,eof"));
    assert_eq!(k.rows[0].expected, None);

    // Bytes: debugfs (1 KiB fs blocks) = filefrag -k (1 KiB) = filefrag -b512, row by row.
    let data: Vec<_> = stat
        .rows
        .iter()
        .filter(|x| !x.has_flag("metadata"))
        .map(bytes)
        .collect();
    assert_eq!(data.len(), 13);
    assert_eq!(k.rows.iter().map(bytes).collect::<Vec<_>>(), data);
    assert_eq!(b.rows.iter().map(bytes).collect::<Vec<_>>(), data);

    // Plain `filefrag` prints only the count: a file record, no rows.
    let plain =
        parse::parse_json(Kind::Filefrag, &fixture("filefrag/ext4-tree-plain.txt")).unwrap();
    let doc = plain.json_document();
    assert_eq!(doc[0]["extents_found"], json!(4));
    assert_eq!(doc[0]["extents"], json!([]));
}

// ---------------------------------------------------------------- XFS, sparse file

/// `xfs_bmap -v` of a sparse file: holes are rows, AG and AG-OFFSET kept, TOTAL as
/// printed, file totals.
#[test]
fn xfs_bmap_v_sparse_holes_and_ags() {
    let r = xfs_bmap::parse_bmap_report(&fixture("xfs_bmap/sparse-v.txt")).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // EXT: FILE-OFFSET  BLOCK-RANGE  AG AG-OFFSET  TOTAL
    let rows: Vec<(u64, u64, Option<[u64; 5]>, u64)> = vec![
        (0, 127, Some([704, 831, 0, 704, 831]), 128),
        (128, 2047, None, 1920),
        (2048, 2303, Some([320, 575, 0, 320, 575]), 256),
        (2304, 2431, Some([576, 703, 0, 576, 703]), 128),
        (2432, 4095, None, 1664),
        (4096, 4223, Some([192, 319, 0, 192, 319]), 128),
        (4224, 6143, None, 1920),
        (6144, 6151, Some([832, 839, 0, 832, 839]), 8),
        (6152, 6271, Some([840, 959, 0, 840, 959]), 120),
        (6272, 8191, None, 1920),
    ];
    assert_eq!(r.rows.len(), rows.len());
    let mut data = 0;
    for (n, (row, (l0, l1, place, total))) in r.rows.iter().zip(&rows).enumerate() {
        assert_eq!(row.ext, Some(n as u64));
        assert_eq!(row.unit, Unit::BasicBlock);
        assert_eq!(row.unit_bytes, Some(512));
        assert_eq!((row.logical_start, row.logical_end), (Some(*l0), Some(*l1)));
        assert_eq!(row.length, Some(*total));
        assert_eq!(row.logical_bytes, Some(l0 * 512));
        assert_eq!(row.length_bytes, Some(total * 512));
        assert_eq!(row.index, data);
        match place {
            Some([p0, p1, ag, o0, o1]) => {
                assert_eq!(
                    (row.physical_start, row.physical_end),
                    (Some(*p0), Some(*p1))
                );
                assert_eq!(row.physical_bytes, Some(p0 * 512));
                assert_eq!(
                    (row.ag, row.ag_offset_start, row.ag_offset_end),
                    (Some(*ag), Some(*o0), Some(*o1))
                );
                assert_eq!(row.flags, "");
                data += 1;
            }
            None => {
                assert_eq!(row.flags, "hole");
                assert_eq!(
                    (row.physical_start, row.physical_bytes, row.ag),
                    (None, None, None)
                );
            }
        }
    }
    let f = &r.files[0];
    assert_eq!(f.path, "mnt/sparse");
    assert_eq!((f.rows, f.data_rows, f.holes), (10, 6, 4));
    assert_eq!((f.total, f.hole_total, f.end), (768, 7424, Some(8192)));
    assert_eq!(f.total_bytes, Some(768 * 512));
    assert_eq!(f.ags, Some(1));
    // The old view (extents only) has no holes.
    assert_eq!(r.extents().len(), 6);
}

/// xfsprogs 6.13's `bmap -vp` on two files: the octal FLAGS as printed and named.
#[test]
fn xfs_io_613_bmap_vp_two_files() {
    let p = parse::parse_json(
        Kind::XfsBmap,
        &fixture("xfs_bmap/sparse-two-files-vp-613.txt"),
    )
    .unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let doc = p.json_document();
    assert_eq!(doc.as_array().unwrap().len(), 2);
    assert_eq!(doc[1]["path"], "mnt/other");
    assert_eq!(doc[1]["file"], 1);
    assert_eq!(
        (
            doc[1]["extents"].as_array().unwrap().len(),
            &doc[1]["holes"]
        ),
        (3, &json!(1))
    );
    //    3: [2304..2431]:    576..703          0 (576..703)         128 010000
    let r3 = &doc[0]["extents"][3];
    assert_eq!(r3["tool_flags"], "010000");
    assert_eq!(r3["flags"], "unwritten");
    //    1: [24..199]:       hole                                   176
    let h = &doc[1]["extents"][1];
    assert_eq!(
        (&h["flags"], &h["length"], &h["logical_bytes"]),
        (&json!("hole"), &json!(176), &json!(24 * 512))
    );
    assert_eq!(p.files.unwrap().height(), 2);
}

/// `xfs_io -c 'fiemap -v'` (6.1 and 6.13 print the same) and `filefrag -v` of the same
/// sparse XFS file against `xfs_bmap -v`: the same bytes; filefrag shows no holes and
/// splits where the extent state changes.
#[test]
fn xfs_sparse_three_tools_agree() {
    let bmap = xfs_bmap::parse_bmap_report(&fixture("xfs_bmap/sparse-v.txt")).unwrap();
    let fm = xfs_bmap::parse_fiemap_report(&fixture("xfs_io/sparse-fiemap-v.txt")).unwrap();
    let fm613 = xfs_bmap::parse_fiemap_report(&fixture("xfs_io/sparse-fiemap-v-613.txt")).unwrap();
    assert!(fm.warnings.is_empty(), "{:?}", fm.warnings);
    assert_eq!(fm.rows, fm613.rows);
    //    8: [6152..6271]:    840..959           120 0x801
    assert_eq!(fm.rows[8].tool_flags.as_deref(), Some("0x801"));
    assert_eq!(fm.rows[8].flags, "last,unwritten");
    assert_eq!(fm.rows[1].flags, "hole");
    assert_eq!(fm.rows.len(), 10);
    for (a, b) in bmap.rows.iter().zip(&fm.rows) {
        assert_eq!(bytes(a), bytes(b));
        assert_eq!(a.has_flag("hole"), b.has_flag("hole"));
    }
    // filefrag -v: `File size of mnt/sparse is 4194304 (1024 blocks of 4096 bytes)`.
    let ff = filefrag::parse_report(&fixture("filefrag/xfs-sparse.txt")).unwrap();
    let f = &ff.files[0];
    assert_eq!(f.fs_type.as_deref(), Some("58465342"));
    assert_eq!(
        (
            f.size_bytes,
            f.blocks,
            f.block_size,
            f.extents_found,
            f.rows
        ),
        (Some(4194304), Some(1024), Some(4096), Some(4), 6)
    );
    //    1:      256..     287:         40..        71:     32:        344:
    assert_eq!(
        tool(&ff.rows[1]),
        (Some(256), Some(287), Some(40), Some(71), Some(32))
    );
    assert_eq!(ff.rows[1].expected, Some(344));
    // filefrag's data bytes = xfs_bmap's data bytes (logical offsets and lengths; its
    // physical offsets are those of the data device, xfs_bmap's too).
    let set = |rows: &[MapRow]| -> Vec<(u64, u64, u64)> {
        let mut v: Vec<(u64, u64, u64)> = Vec::new();
        for r in rows.iter().filter(|r| !r.has_flag("hole")) {
            let (l, p, n) = (
                r.logical_bytes.unwrap(),
                r.physical_bytes.unwrap(),
                r.length_bytes.unwrap(),
            );
            // Merge physically and logically contiguous rows, as neither tool must split.
            match v.last_mut() {
                Some(last) if last.0 + last.2 == l && last.1 + last.2 == p => last.2 += n,
                _ => v.push((l, p, n)),
            }
        }
        v
    };
    assert_eq!(set(&ff.rows), set(&bmap.rows));
    // filefrag prints no holes: 6 rows where xfs_bmap prints 6 extents and 4 holes.
    assert_eq!(ff.rows.iter().filter(|r| r.has_flag("hole")).count(), 0);
}

// ---------------------------------------------------------------- seed 001

/// Seed 001's post, as published: both listings (ext3, then ext4) parse to files whose
/// TOTAL is the post's headline numbers, 4058 and 5071, with the block numbers as printed.
#[test]
fn seed_001_post_totals() {
    let post = std::fs::read_to_string(format!(
        "{}/data/published/posts/001_d787de3b9269fe76.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let p = parse::parse_json(Kind::DebugfsStat, &post).unwrap();
    let doc = p.json_document();
    let files = doc.as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["total_blocks"], json!(4058));
    assert_eq!(files[1]["total_blocks"], json!(5071));
    // (0-4):3950592-3950596 and (1-5070):1900546-1905615, in blocks; bytes unknown.
    let first = &files[0]["extents"][0];
    assert_eq!(
        (
            &first["logical_start"],
            &first["logical_end"],
            &first["physical_start"],
            &first["physical_end"]
        ),
        (&json!(0), &json!(4), &json!(3950592), &json!(3950596))
    );
    assert_eq!(first["physical_bytes"], Value::Null);
    let second = &files[1]["extents"][1];
    assert_eq!(
        (
            &second["physical_start"],
            &second["physical_end"],
            &second["length"]
        ),
        (&json!(1900546), &json!(1905615), &json!(5070))
    );
    assert!(p
        .warnings
        .iter()
        .any(|w| w.reason.contains("block size unknown")));
}

// ---------------------------------------------------------------- every number

/// The numbers in `s`: `0x…` as hex, digit runs as decimal (and, with a leading zero, also
/// as octal: `Mode: 0600`).
fn numbers(s: &str) -> Vec<Vec<u64>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"0x") && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit) {
            let j = i
                + 2
                + b[i + 2..]
                    .iter()
                    .take_while(|c| c.is_ascii_hexdigit())
                    .count();
            out.push(vec![u64::from_str_radix(&s[i + 2..j], 16).unwrap()]);
            i = j;
        } else if b[i].is_ascii_digit() {
            let j = i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            let t = &s[i..j];
            let mut alts = vec![t.parse::<u64>().unwrap()];
            if t.len() > 1 && t.starts_with('0') {
                if let Ok(v) = u64::from_str_radix(t, 8) {
                    alts.push(v);
                }
            }
            out.push(alts);
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn collect(v: &Value, into: &mut std::collections::HashSet<u64>) {
    match v {
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                into.insert(u);
            }
        }
        Value::String(s) => {
            for alts in numbers(s) {
                into.extend(alts);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect(x, into)),
        Value::Object(o) => o.values().for_each(|x| collect(x, into)),
        _ => {}
    }
}

/// Acceptance: for every block-map fixture, every number on every line the tool printed
/// for a file or an extent (column headers and banners aside, lines the parser warned
/// about aside) is in `fslab parse KIND --json`'s document. Times are checked as seconds
/// and nanoseconds (`0x6b0e3f00:49a9ef48` → 1796095744 s, 0x49a9ef48 >> 2 ns).
#[test]
fn json_holds_every_number_the_tools_printed() {
    let dirs = [
        ("filefrag", Kind::Filefrag),
        ("xfs_bmap", Kind::XfsBmap),
        ("xfs_io", Kind::XfsIoFiemap),
        ("debugfs", Kind::DebugfsStat),
    ];
    let mut checked = 0;
    for (dir, kind) in dirs {
        let path = format!("{}/tests/fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
        let mut names: Vec<_> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        names.sort();
        for p in names {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let kind = if name.contains("-ex") {
                Kind::DebugfsEx
            } else {
                kind
            };
            let Ok(parsed) = parse::parse_json(kind, &text) else {
                continue; // a tool error message (ext3 `ex`), tested above
            };
            let mut have = std::collections::HashSet::new();
            collect(&parsed.json_document(), &mut have);
            let warned: Vec<usize> = parsed.warnings.iter().map(|w| w.line).collect();
            let mut in_legend = false;
            for (i, line) in text.lines().enumerate() {
                let t = line.trim();
                if t == "FLAG Values:" {
                    in_legend = true;
                }
                let header = t.starts_with("EXT:")
                    || t.starts_with("ext:")
                    || t.starts_with("Level")
                    || (t.starts_with("debugfs ") && t.ends_with(')'))
                    || in_legend;
                if header || warned.contains(&(i + 1)) {
                    continue;
                }
                // Times: seconds and nanoseconds; the date after ` -- ` is derived text.
                let t = t.split(" -- ").next().unwrap();
                let mut toks = numbers(t);
                if let Some((_, v)) = t.split_once("time: 0x") {
                    let (secs, extra) = v.split_once(':').unwrap_or((v, ""));
                    toks = vec![vec![u64::from_str_radix(secs, 16).unwrap()]];
                    if !extra.is_empty() {
                        toks.push(vec![u64::from_str_radix(extra, 16).unwrap() >> 2]);
                    }
                }
                for alts in toks {
                    assert!(
                        alts.iter().any(|a| have.contains(a)),
                        "{name}:{}: {alts:?} of `{line}` is not in the JSON",
                        i + 1
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "{checked} lines checked");
}
