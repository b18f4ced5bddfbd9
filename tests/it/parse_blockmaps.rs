//! The filefrag and debugfs parsers against real output of this machine's tools
//! (tests/fixtures/{filefrag,debugfs}/, commands next to each file) and seed 001.

use fslab::blockmap::Extent;
use fslab::parse::map::BlockSizeSource;
use fslab::parse::{self, debugfs, filefrag, Kind};

fn fixture(rel: &str) -> String {
    let p = format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

const K: u64 = 4096;

fn ext(path: &str, index: u64, l: u64, p: Option<u64>, len: u64, flags: &str, bs: u64) -> Extent {
    Extent {
        path: path.into(),
        inode: None,
        index,
        logical_bytes: l * bs,
        physical_bytes: p.map(|p| p * bs),
        length_bytes: len * bs,
        flags: flags.to_string().into(),
    }
}

#[test]
fn filefrag_ext4_files() {
    let r = filefrag::parse_report(&fixture("filefrag/ext4-files.txt")).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(!r.partial);
    let names: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        names,
        [
            "small.txt",
            "empty.txt",
            "seq.bin",
            "prealloc.bin",
            "sparse.bin",
            "delalloc.bin"
        ]
    );
    // File size of sparse.bin is 20484096 (5001 blocks of 4096 bytes) … sparse.bin: 2 extents found
    let sparse = &r.files[4];
    assert_eq!(sparse.size_bytes, Some(20484096));
    assert_eq!(sparse.blocks, Some(5001));
    assert_eq!(sparse.block_size, Some(4096));
    assert_eq!(sparse.extents_found, Some(2));
    assert_eq!(sparse.rows, 3);
    assert_eq!(sparse.fs_type.as_deref(), Some("ef53"));
    assert_eq!(r.files[1].rows, 0);
    assert_eq!(r.files[1].extents_found, Some(0));
    assert_eq!(r.files[3].extents_found, Some(1));
    let want = vec![
        ext("small.txt", 0, 0, Some(33280), 1, "last,eof", K),
        ext("seq.bin", 0, 0, Some(36864), 2048, "", K),
        ext("seq.bin", 1, 2048, Some(39424), 512, "last,eof", K),
        ext("prealloc.bin", 0, 0, Some(34816), 256, "", K),
        ext(
            "prealloc.bin",
            1,
            256,
            Some(35072),
            1792,
            "last,unwritten,eof",
            K,
        ),
        ext("sparse.bin", 0, 0, Some(38912), 3, "", K),
        ext("sparse.bin", 1, 100, Some(39012), 2, "", K),
        ext("sparse.bin", 2, 5000, Some(32833), 1, "last,eof", K),
        ext("delalloc.bin", 0, 0, Some(32896), 64, "last,eof", K),
    ];
    assert_eq!(r.extents, want);
}

#[test]
fn filefrag_delalloc_has_no_location() {
    let out = filefrag::parse(&fixture("filefrag/ext4-delalloc.txt")).unwrap();
    // 0:  0..  63:  0..  0:  0:  last,unknown_loc,delalloc,eof
    assert_eq!(
        out.rows,
        vec![ext(
            "delalloc.bin",
            0,
            0,
            None,
            64,
            "last,unknown_loc,delalloc,eof",
            K
        )]
    );
}

#[test]
fn filefrag_units_follow_the_file_size_line() {
    let out = filefrag::parse(&fixture("filefrag/ext4-blocksize-1k.txt")).unwrap();
    // -b1024: 0: 0..8191: 147456..155647: 8192 — the same bytes as 0..2047: 36864.. in 4 KiB.
    assert_eq!(
        out.rows[0],
        ext("seq.bin", 0, 0, Some(147456), 8192, "", 1024)
    );
    assert_eq!(out.rows[0].physical_bytes, Some(36864 * 4096));
    assert_eq!(
        out.rows[4],
        ext("sparse.bin", 2, 20000, Some(131332), 4, "last,eof", 1024)
    );
    let ext3 = filefrag::parse(&fixture("filefrag/ext3-1k.txt")).unwrap();
    assert_eq!(
        ext3.rows[4],
        ext("f.bin", 4, 256, Some(5889), 144, "last,merged,eof", 1024)
    );
}

#[test]
fn filefrag_inline_is_in_bytes() {
    let out = filefrag::parse(&fixture("filefrag/ext4-inline.txt")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // 0: 0..16: 170792..170808: 17: last,not_aligned,inline,eof
    assert_eq!(
        out.rows,
        vec![
            ext(
                "tiny.txt",
                0,
                0,
                Some(170792),
                17,
                "last,not_aligned,inline,eof",
                1
            ),
            ext(
                "tinydir",
                0,
                0,
                Some(171048),
                60,
                "last,not_aligned,inline,eof",
                1
            ),
        ]
    );
}

#[test]
fn filefrag_ext3_directory_and_tind() {
    let r = filefrag::parse_report(&fixture("filefrag/ext3-files.txt")).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let d1: Vec<&Extent> = r.extents.iter().filter(|e| &*e.path == "d1").collect();
    assert_eq!(d1.len(), 33);
    assert_eq!(*d1[1], ext("d1", 1, 1, Some(34837), 2, "merged", K));
    assert_eq!(
        *d1[32],
        ext("d1", 32, 33, Some(34903), 1, "last,merged,eof", K)
    );
    let tind: Vec<&Extent> = r
        .extents
        .iter()
        .filter(|e| &*e.path == "tind.bin")
        .collect();
    // 0:  1049617.. 1049617:  13329..  13329:  1:  1049617: last,merged,eof
    assert_eq!(
        *tind[0],
        ext("tind.bin", 0, 1049617, Some(13329), 1, "last,merged,eof", K)
    );
    assert_eq!(r.files[1].size_bytes, Some(4299235328));
    assert_eq!(r.files[2].extents_found, Some(33));
}

/// Every row of the 26524-extent file against an independent reading of its line.
#[test]
fn filefrag_fragmented_file_row_by_row() {
    let text = fixture("filefrag/ext4-frag.txt");
    let r = filefrag::parse_report(&text).unwrap();
    assert!(
        r.warnings.is_empty(),
        "{:?}",
        &r.warnings[..r.warnings.len().min(3)]
    );
    assert_eq!(r.files.len(), 1);
    assert_eq!(r.files[0].extents_found, Some(26524));
    assert_eq!(r.files[0].size_bytes, Some(114245632));
    let lines: Vec<&str> = text
        .lines()
        .skip(3)
        .take_while(|l| !l.starts_with("G:"))
        .collect();
    assert_eq!(lines.len(), 26524);
    assert_eq!(r.extents.len(), lines.len());
    for (line, e) in lines.iter().zip(&r.extents) {
        let nums: Vec<u64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(e.index, nums[0], "{line}");
        assert_eq!(e.logical_bytes, nums[1] * K, "{line}");
        assert_eq!(
            e.logical_bytes + e.length_bytes,
            (nums[2] + 1) * K,
            "{line}"
        );
        assert_eq!(e.physical_bytes, Some(nums[3] * K), "{line}");
        assert_eq!(e.length_bytes, nums[5] * K, "{line}");
        assert_eq!(e.flags.is_empty(), !line.contains("last"), "{line}");
    }
}

#[test]
fn filefrag_dispatch_gives_a_frame() {
    let p = parse::parse(Kind::Filefrag, &fixture("filefrag/ext4-files.txt")).unwrap();
    assert_eq!(p.frame.height(), 9);
    let names: Vec<&str> = p
        .frame
        .get_column_names()
        .iter()
        .map(|s| s.as_str())
        .collect();
    // The extents table's long-standing columns come first (after the `file` join
    // key), the tool's own columns after them.
    assert_eq!(
        &names[..8],
        [
            "file",
            "path",
            "inode",
            "index",
            "logical_bytes",
            "physical_bytes",
            "length_bytes",
            "flags"
        ]
    );
    assert!(names.contains(&"expected") && names.contains(&"unit_bytes"));
    assert_eq!(p.files.unwrap().height(), 6);
}

// ---------------------------------------------------------------- debugfs stat

#[test]
fn debugfs_stat_header_fields() {
    let r =
        debugfs::parse_stat_report(&fixture("debugfs/ext4-stat-prealloc.txt"), Some(4096)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let s = &r.inodes[0];
    // Inode: 15   Type: regular    Mode:  0644   Flags: 0x80000
    assert_eq!(s.inode, Some(15));
    assert_eq!(s.file_type.as_deref(), Some("regular"));
    assert_eq!(s.mode, Some(0o644));
    assert_eq!(s.flags, Some(0x80000));
    // Generation: 2813452054    Version: 0x00000000:00000002
    assert_eq!(s.generation, Some(2813452054));
    assert_eq!(s.version.as_deref(), Some("0x00000000:00000002"));
    // User:     0   Group:     0   Project:     0   Size: 8388608
    assert_eq!((s.user, s.group, s.project), (Some(0), Some(0), Some(0)));
    assert_eq!(s.size_bytes, Some(8388608));
    // File ACL: 0 / Links: 1   Blockcount: 16384
    assert_eq!(
        (s.file_acl, s.links, s.blockcount),
        (Some(0), Some(1), Some(16384))
    );
    //  ctime: 0x6b0cad1b:b7c0f6dc / crtime: 0x6b0cad1b:b2fc42d8
    assert_eq!(s.ctime, Some(0x6b0cad1b));
    assert_eq!(s.crtime, Some(0x6b0cad1b));
    assert_eq!(s.extra_isize, Some(32));
    assert_eq!(s.checksum, Some(0x2028f069));
    assert_eq!(s.map, "extents");
    assert_eq!(
        (s.data_extents, s.data_blocks, s.metadata_blocks),
        (2, 2048, 0)
    );
    // 16384 sectors * 512 / 2048 blocks = 4096
    // Given, and checked against Blockcount; Blockcount alone would give the same.
    assert_eq!(
        (s.block_size, s.block_size_source, s.blockcount_block_size),
        (Some(4096), BlockSizeSource::Given, Some(4096))
    );
    // (0-255):34816-35071, (256-2047[u]):35072-36863
    assert_eq!(
        r.extents,
        vec![
            Extent {
                inode: Some(15),
                ..ext("", 0, 0, Some(34816), 256, "", K)
            },
            Extent {
                inode: Some(15),
                ..ext("", 1, 256, Some(35072), 1792, "last,unwritten,eof", K)
            },
        ]
    );
}

#[test]
fn debugfs_stat_ext3_indirect_blocks() {
    let r = debugfs::parse_stat_report(&fixture("debugfs/ext3-stat-big.txt"), Some(4096)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let s = &r.inodes[0];
    assert_eq!(s.map, "blocks");
    assert_eq!(s.total_blocks, Some(2564));
    assert_eq!(
        (s.data_extents, s.data_blocks, s.metadata_blocks),
        (10, 2560, 4)
    );
    assert_eq!(s.block_size, Some(4096));
    let flags: Vec<&str> = r.extents.iter().map(|e| &*e.flags).collect();
    // (0-11):6174-6185, (IND):6686, (12-15):6186-6189, … (512-1035):7680-8203, (DIND):6687,
    // (IND):6848, (1036-2047):8204-9215, (2048-2059):10240-10251, (IND):6849, (2060-2559):10252-10751
    assert_eq!(
        flags,
        [
            "",
            "metadata,ind",
            "",
            "",
            "",
            "",
            "",
            "",
            "metadata,dind",
            "metadata,ind",
            "",
            "",
            "metadata,ind",
            "last,eof"
        ]
    );
    let e = |i: usize| &r.extents[i];
    assert_eq!(
        *e(0),
        Extent {
            inode: Some(12),
            ..ext("", 0, 0, Some(6174), 12, "", K)
        }
    );
    assert_eq!(
        *e(1),
        Extent {
            inode: Some(12),
            ..ext("", 1, 12, Some(6686), 1, "metadata,ind", K)
        }
    );
    assert_eq!(
        *e(8),
        Extent {
            inode: Some(12),
            ..ext("", 7, 1036, Some(6687), 1, "metadata,dind", K)
        }
    );
    assert_eq!(
        *e(9),
        Extent {
            inode: Some(12),
            ..ext("", 7, 1036, Some(6848), 1, "metadata,ind", K)
        }
    );
    assert_eq!(
        *e(10),
        Extent {
            inode: Some(12),
            ..ext("", 7, 1036, Some(8204), 1012, "", K)
        }
    );
    assert_eq!(
        *e(13),
        Extent {
            inode: Some(12),
            ..ext("", 9, 2060, Some(10252), 500, "last,eof", K)
        }
    );
}

#[test]
fn debugfs_stat_tind_and_1k_blocks() {
    let r = debugfs::parse_stat_report(&fixture("debugfs/ext3-stat-tind.txt"), Some(4096)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // (TIND):6850, (DIND):6851, (IND):6852, (1049617):13329 / TOTAL: 4 / Blockcount: 32
    let flags: Vec<&str> = r.extents.iter().map(|e| &*e.flags).collect();
    assert_eq!(
        flags,
        ["metadata,tind", "metadata,dind", "metadata,ind", "last,eof"]
    );
    assert!(r
        .extents
        .iter()
        .all(|e| e.index == 0 && e.logical_bytes == 1049617 * K));
    assert_eq!(r.extents[0].physical_bytes, Some(6850 * K));
    assert_eq!(r.inodes[0].block_size, Some(4096));

    let r = debugfs::parse_stat_report(&fixture("debugfs/ext3-1k-stat.txt"), Some(1024)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // Blockcount: 806 = 403 blocks of 1 KiB (TOTAL: 403)
    assert_eq!(r.inodes[0].block_size, Some(1024));
    assert_eq!(r.inodes[0].total_blocks, Some(403));
    // (256-267):5889-5900, (DIND):5412, (IND):5413, (268-399):5901-6032
    let last = r.extents.last().unwrap();
    assert_eq!(
        *last,
        Extent {
            inode: Some(12),
            ..ext("", 6, 268, Some(5901), 132, "last,eof", 1024)
        }
    );
}

#[test]
fn debugfs_stat_given_block_size_is_used_and_checked() {
    let text = fixture("debugfs/ext3-1k-stat.txt");
    let ok = debugfs::parse_stat_with_block_size(&text, 1024).unwrap();
    assert!(ok.warnings.is_empty());
    let wrong = debugfs::parse_stat_with_block_size(&text, 4096).unwrap();
    assert_eq!(wrong.rows[0].physical_bytes, Some(4899 * 4096));
    assert!(wrong
        .warnings
        .iter()
        .any(|w| w.reason.contains("Blockcount 806")));
    assert!(debugfs::parse_stat_with_block_size(&text, 1000).is_err());
}

#[test]
fn debugfs_stat_directories() {
    let r = debugfs::parse_stat_report(&fixture("debugfs/ext3-stat-dir.txt"), Some(4096)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let s = &r.inodes[0];
    assert_eq!(
        (s.inode, s.file_type.as_deref()),
        (Some(32769), Some("directory"))
    );
    assert_eq!(
        (s.total_blocks, s.data_blocks, s.metadata_blocks),
        (Some(35), 34, 1)
    );
    assert_eq!(s.data_extents, 33);
    let r = debugfs::parse_stat_report(&fixture("debugfs/ext4-stat-dir.txt"), Some(4096)).unwrap();
    // (0):2127, (1-65):2129-2193
    assert_eq!(r.extents.len(), 2);
    assert_eq!(
        r.extents[1],
        Extent {
            inode: Some(8193),
            ..ext("", 1, 1, Some(2129), 65, "last,eof", K)
        }
    );
}

#[test]
fn debugfs_stat_inline_symlink_empty() {
    let r =
        debugfs::parse_stat_report(&fixture("debugfs/ext4-stat-inline.txt"), Some(4096)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.inodes[0].map, "inline");
    assert_eq!(r.inodes[0].inline_size, Some(60));
    assert_eq!(r.extents.len(), 1);
    assert_eq!(r.extents[0].physical_bytes, None);
    assert_eq!(r.extents[0].length_bytes, 60);
    let r =
        debugfs::parse_stat_report(&fixture("debugfs/ext4-stat-fastlink.txt"), Some(4096)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.inodes[0].map, "fast_symlink");
    assert_eq!(r.inodes[0].fast_link_dest.as_deref(), Some("tiny.txt"));
    assert!(r.extents.is_empty());
    let r =
        debugfs::parse_stat_report(&fixture("debugfs/ext4-stat-empty.txt"), Some(4096)).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        (r.inodes[0].map.as_str(), r.inodes[0].size_bytes),
        ("extents", Some(0))
    );
    assert!(r.extents.is_empty());
}

/// The depth-2 extent tree of the 26524-extent file: stat and ex agree with each other and
/// with filefrag (FIEMAP) extent by extent.
#[test]
fn debugfs_fragmented_file_matches_filefrag() {
    let stat =
        debugfs::parse_stat_report(&fixture("debugfs/ext4-stat-frag.txt"), Some(4096)).unwrap();
    assert!(stat.warnings.is_empty(), "{:?}", stat.warnings);
    let s = &stat.inodes[0];
    assert_eq!(s.block_size, Some(4096));
    assert_eq!((s.data_extents, s.data_blocks), (26524, 27892));
    // One ETB0 (root index → level-1 block) and 79 ETB1 (leaf blocks), as `ex` says.
    assert_eq!(s.metadata_blocks, 80);
    assert_eq!(stat.extents[0].flags, "metadata,etb0");
    assert_eq!(stat.extents[0].physical_bytes, Some(36903 * K));
    assert_eq!(stat.extents[1].flags, "metadata,etb1");
    assert_eq!(
        stat.extents[2],
        Extent {
            inode: Some(13),
            ..ext("", 0, 0, Some(4140), 1, "", K)
        }
    );

    let ex = debugfs::parse_ex_with_block_size(&fixture("debugfs/ext4-ex-frag.txt"), 4096).unwrap();
    assert!(ex.warnings.is_empty(), "{:?}", ex.warnings);
    let strip = |v: &[Extent]| -> Vec<Extent> {
        v.iter()
            .map(|e| Extent {
                inode: None,
                path: "".into(),
                flags: e.flags.replace(",eof", "").replace("eof", "").into(),
                ..e.clone()
            })
            .collect()
    };
    assert_eq!(strip(&stat.extents), strip(&ex.rows));

    let ff = filefrag::parse(&fixture("filefrag/ext4-frag.txt")).unwrap();
    let data: Vec<&Extent> = stat
        .extents
        .iter()
        .filter(|e| !e.flags.contains("metadata"))
        .collect();
    assert_eq!(data.len(), ff.rows.len());
    for (d, f) in data.iter().zip(&ff.rows) {
        assert_eq!(
            (
                d.index,
                d.logical_bytes,
                d.physical_bytes,
                d.length_bytes,
                &*d.flags
            ),
            (
                f.index,
                f.logical_bytes,
                f.physical_bytes,
                f.length_bytes,
                &*f.flags
            )
        );
    }
}

#[test]
fn debugfs_ex_tables() {
    let rows = debugfs::parse_ex_rows(&fixture("debugfs/ext4-ex-prealloc.txt")).unwrap();
    assert!(rows.warnings.is_empty());
    //  0/ 0   2/  2   256 -  2047  35072 -  36863   1792 Uninit
    let r = &rows.rows[1];
    assert_eq!((r.level, r.max_depth, r.entry, r.entries), (0, 0, 2, 2));
    assert_eq!((r.logical_first, r.logical_last), (256, 2047));
    assert_eq!((r.physical_first, r.physical_last), (35072, Some(36863)));
    assert_eq!((r.length, r.uninit, r.leaf), (1792, true, true));
    let frag = debugfs::parse_ex_rows(&fixture("debugfs/ext4-ex-frag.txt")).unwrap();
    //  0/ 2   1/  1     0 - 27891 36903          27892
    let root = &frag.rows[0];
    assert_eq!(
        (
            root.leaf,
            root.logical_last,
            root.physical_first,
            root.length
        ),
        (false, 27891, 36903, 27892)
    );
    assert_eq!(frag.rows.iter().filter(|r| !r.leaf).count(), 80);
    let out =
        debugfs::parse_ex_with_block_size(&fixture("debugfs/ext4-ex-sparse.txt"), 4096).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.rows[2], ext("", 2, 5000, Some(32833), 1, "last", K));
}

/// Seed 001: Eric Sandeen's ext3 directory (4052 blocks listed as TOTAL: 4058 with its
/// indirect blocks) and the ext4 one (5071 blocks, 2 pieces).
#[test]
fn debugfs_seed_001_block_lists() {
    let r = debugfs::parse_stat_report(&fixture("debugfs/seed001-blocks.txt"), Some(4096)).unwrap();
    assert_eq!(r.inodes.len(), 1);
    let s = &r.inodes[0];
    assert_eq!(s.total_blocks, Some(4058));
    // The mail elides the middle: one warning for the elision line, one for the count.
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(r.warnings[0].text.contains("ad naseum"));
    assert!(r.warnings[1].reason.contains("TOTAL: 4058"));
    // (0-4):3950592-3950596 first, (4051-4052):4943314-4943315 last, one (IND) shown.
    assert_eq!(r.extents[0], ext("", 0, 0, Some(3950592), 5, "", K));
    let last = r.extents.last().unwrap();
    assert_eq!(
        (last.logical_bytes, last.physical_bytes, last.length_bytes),
        (4051 * K, Some(4943314 * K), 2 * K)
    );
    assert_eq!(s.metadata_blocks, 1);
    let r = debugfs::parse_stat_report(&fixture("debugfs/seed001-ext4-blocks.txt"), Some(4096))
        .unwrap();
    assert_eq!(r.inodes[0].total_blocks, Some(5071));
    assert_eq!(r.inodes[0].data_blocks, 5071);
    assert_eq!(r.extents[1], ext("", 1, 1, Some(1900546), 5070, "last", K));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn debugfs_truncated_stat_is_partial() {
    let text = fixture("debugfs/ext3-stat-big.txt");
    let cut = &text[..text.find("(1036-2047)").unwrap() + 7];
    let r = debugfs::parse_stat_report(cut, Some(4096)).unwrap();
    assert!(r.partial);
    let cut = &text[..text.find("TOTAL").unwrap()];
    assert!(debugfs::parse_stat_report(cut, Some(4096)).unwrap().partial);
    let cut = &text[..text.find("BLOCKS").unwrap()];
    assert!(debugfs::parse_stat_report(cut, Some(4096)).unwrap().partial);
    assert!(
        !debugfs::parse_stat_report(&text, Some(4096))
            .unwrap()
            .partial
    );
}

#[test]
fn debugfs_dispatch_gives_frames() {
    let p = parse::parse(Kind::DebugfsStat, &fixture("debugfs/ext3-stat-big.txt")).unwrap();
    assert_eq!(p.frame.height(), 14);
    let p = parse::parse(Kind::DebugfsEx, &fixture("debugfs/ext4-ex-sparse.txt")).unwrap();
    assert_eq!(p.frame.height(), 3);
}

/// The summary's `fragments` rule reproduces filefrag's `N extents found` on every fixture.
#[test]
fn summary_fragments_equal_filefrag_counts() {
    use fslab::blockmap::summary;
    let mut checked = 0;
    for f in [
        "ext4-files",
        "ext4-delalloc",
        "ext4-dir",
        "ext4-blocksize-1k",
        "ext4-inline",
        "ext3-files",
        "ext3-1k",
        "ext4-frag",
        "xfs-reflink",
        "btrfs-compressed",
    ] {
        let r = filefrag::parse_report(&fixture(&format!("filefrag/{f}.txt"))).unwrap();
        let per = summary::per_file(&r.extents);
        for file in r.files.iter().filter(|f| f.rows > 0) {
            let s = per.iter().find(|s| s.path == file.path).unwrap();
            assert_eq!(Some(s.fragments), file.extents_found, "{f}: {}", file.path);
            checked += 1;
        }
    }
    assert_eq!(checked, 19);
    // And debugfs's view of the fragmented file: 26524 pieces, ETB blocks apart.
    let stat =
        debugfs::parse_stat_with_block_size(&fixture("debugfs/ext4-stat-frag.txt"), 4096).unwrap();
    let s = &summary::per_file(&stat.rows)[0];
    assert_eq!(
        (s.extents, s.fragments, s.metadata_blocks),
        (26524, 26524, 80)
    );
}

#[test]
fn filefrag_shared_and_encoded_flags() {
    let r = filefrag::parse_report(&fixture("filefrag/xfs-reflink.txt")).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.files[0].fs_type.as_deref(), Some("58465342"));
    // clone  1:       64..      79:        280..       295:     16:         88:
    assert_eq!(r.extents[4], ext("clone", 1, 64, Some(280), 16, "", K));
    assert_eq!(
        r.extents[5],
        ext("clone", 2, 80, Some(104), 176, "last,shared,eof", K)
    );
    let r = filefrag::parse_report(&fixture("filefrag/btrfs-compressed.txt")).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.files[0].fs_type.as_deref(), Some("9123683e"));
    assert_eq!(r.extents.len(), 8);
    assert_eq!(
        r.extents[1],
        ext("text", 1, 32, Some(3329), 32, "encoded", K)
    );
    assert_eq!(
        r.extents[7],
        ext("text", 7, 224, Some(3335), 32, "last,encoded,eof", K)
    );
}
