//! The text parsers against real outputs from outside this repository
//! (tests/fixtures/world/<tool>/): other versions of the tools, other option sets, output
//! quoted in mails and documents. Each directory's SOURCE says where every fixture comes
//! from. The values asserted are the ones a person reads off the fixture text.

use crate::parse_fixtures::{fixture_in, geo};
use fslab::parse::{e2fsck, ext, filefrag, fio, fsmark, perf_stat, time, xfs, xfs_bmap, Kind};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/world")
}

fn fixture(tool: &str, name: &str) -> String {
    fixture_in(&dir(), tool, name)
}

/// Every fixture is named in its directory's SOURCE, with where it comes from.
#[test]
fn every_world_fixture_names_its_source() {
    let mut count = 0;
    for tool in std::fs::read_dir(dir()).unwrap() {
        let tool = tool.unwrap().path();
        let source = std::fs::read_to_string(tool.join("SOURCE"))
            .unwrap_or_else(|_| panic!("{} has no SOURCE", tool.display()));
        for f in std::fs::read_dir(&tool).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "txt") {
                let name = f.file_name().unwrap().to_string_lossy().to_string();
                assert!(
                    source.lines().any(|l| l.trim() == name),
                    "{} is not named in {}/SOURCE",
                    f.display(),
                    tool.display()
                );
                count += 1;
            }
        }
    }
    assert!(count >= 8, "only {count} fixtures");
}

// ------------------------------------------------------------------------ e2fsck

/// e2fsck 1.42.5 prints the statistics of passes 1B-1D as `Pass 1b:` … `Pass 1d:`
/// (e2fsck/pass1b.c): they belong to the `Pass 1B:` … rows, not to warnings.
#[test]
fn e2fsck_1_42_lower_case_sub_passes() {
    let out = e2fsck::parse(&fixture("e2fsck", "e2fsck-1.42.5-cDftty-1b")).unwrap();
    assert!(!out.partial);
    let passes: Vec<_> = out
        .rows
        .iter()
        .filter(|r| r.kind == "pass")
        .map(|r| r.pass.clone().unwrap())
        .collect();
    assert_eq!(passes, ["1", "1B", "1C", "1D", "2", "3", "3A", "4", "5"]);
    let pass = |p: &str| {
        out.rows
            .iter()
            .find(|r| r.kind == "pass" && r.pass.as_deref() == Some(p))
            .unwrap()
    };
    // Pass 1b: Memory used: 1564k/20016k (1374k/191k), time:  4.65/ 4.61/ 0.03
    // Pass 1b: I/O read: 163MB, write: 0MB, rate: 35.04MB/s
    let b = pass("1B");
    assert_eq!(
        b.name.as_deref(),
        Some("Rescanning for multiply-claimed blocks")
    );
    assert_eq!(
        (
            b.memory_kib,
            b.memory_mmap_kib,
            b.memory_in_use_kib,
            b.memory_free_kib
        ),
        (Some(1564), Some(20016), Some(1374), Some(191))
    );
    assert_eq!(
        (b.real_s, b.user_s, b.sys_s),
        (Some(4.65), Some(4.61), Some(0.03))
    );
    assert_eq!(
        (b.read_mib, b.write_mib, b.rate_mib_s),
        (Some(163), Some(0), Some(35.04))
    );
    assert_eq!(b.pass_number, Some(1));
    // Pass 1d: … time: 39.08/17.99/ 0.03 ; I/O read: 1MB, write: 0MB, rate: 0.03MB/s
    let d = pass("1D");
    assert_eq!(
        d.name.as_deref(),
        Some("Reconciling multiply-claimed blocks")
    );
    assert_eq!((d.memory_in_use_kib, d.real_s), (Some(1377), Some(39.08)));
    assert_eq!(d.rate_mib_s, Some(0.03));
    assert_eq!(pass("1C").real_s, Some(9.0));
    // Pass 1: … time: 126.06/49.57/ 0.51 ; I/O read: 459MB, write: 1MB
    let p1 = pass("1");
    assert_eq!(
        (p1.real_s, p1.read_mib, p1.write_mib),
        (Some(126.06), Some(459), Some(1))
    );
    let a = pass("3A");
    assert_eq!((a.memory_kib, a.write_mib), (Some(3668), Some(145)));
    let peak = out.rows.iter().find(|r| r.kind == "peak").unwrap();
    assert_eq!(peak.real_s, Some(19692.12));
    let s = out.rows.iter().find(|r| r.kind == "summary").unwrap();
    assert_eq!(s.device.as_deref(), Some("WD3"));
    assert_eq!(
        (s.files_used, s.files_total),
        (Some(380_711), Some(111_616_000))
    );
    assert_eq!(
        (s.blocks_used, s.blocks_total),
        (Some(430_786_244), Some(446_432_285))
    );
    assert_eq!(s.noncontiguous_pct, Some(1.9));
    assert_eq!(s.status.as_deref(), Some("FILE SYSTEM WAS MODIFIED"));
    let t = out.rows.iter().find(|r| r.kind == "total").unwrap();
    assert_eq!(
        (t.real_s, t.user_s, t.sys_s),
        (Some(19773.82), Some(117.5), Some(1.1))
    );
    assert_eq!(
        (t.read_mib, t.write_mib, t.rate_mib_s),
        (Some(878), Some(197), Some(0.05))
    );
    // Only prose is left to the warnings: no statistics line among them.
    assert!(
        out.warnings.iter().all(|w| !w.text.contains("Memory used")
            && !w.text.contains("I/O read")
            && !w.text.starts_with("Pass ")),
        "{:?}",
        out.warnings
    );
}

/// After `Restarting e2fsck from the beginning...` the passes are new rows: the first
/// start's passes 1 and 2, then 1 to 5.
#[test]
fn e2fsck_restart_gives_new_pass_rows() {
    let out = e2fsck::parse(&fixture("e2fsck", "e2fsprogs-tests-f_uninit_restart_fsck")).unwrap();
    let passes: Vec<_> = out
        .rows
        .iter()
        .filter(|r| r.kind == "pass")
        .map(|r| r.pass.clone().unwrap())
        .collect();
    assert_eq!(passes, ["1", "2", "1", "2", "3", "4", "5"]);
    assert!(
        out.warnings
            .iter()
            .all(|w| !w.reason.contains("named twice")),
        "{:?}",
        out.warnings
    );
    let restart = out
        .warnings
        .iter()
        .find(|w| w.text == "Restarting e2fsck from the beginning...")
        .unwrap();
    assert_eq!(restart.line, 15);
    let s = out.rows.last().unwrap();
    assert_eq!(s.kind, "summary");
    assert_eq!(
        (s.files_used, s.files_total, s.blocks_used),
        (Some(21), Some(7520), Some(2352))
    );
    assert!(!out.partial);
}

/// e2fsck -v prints its statistics block instead of the `DEV: used/total files` line:
/// the block is the summary row (e2fsprogs 1.47, `out of N`, singular forms).
#[test]
fn e2fsck_v_statistics_are_the_summary_1_47() {
    let out = e2fsck::parse(&fixture("e2fsck", "e2fsprogs-tests-f_extent_htree")).unwrap();
    assert!(!out.partial, "{:?}", out.rows);
    let passes: Vec<_> = out
        .rows
        .iter()
        .filter(|r| r.kind == "pass")
        .map(|r| r.pass.clone().unwrap())
        .collect();
    assert_eq!(passes, ["1", "2", "3", "3A", "4", "5"]);
    let s: Vec<_> = out.rows.iter().filter(|r| r.kind == "summary").collect();
    assert_eq!(s.len(), 1, "{:?}", out.rows);
    let s = s[0];
    //          352 inodes used (29.53%, out of 1192)
    assert_eq!((s.files_used, s.files_total), (Some(352), Some(1192)));
    //          778 blocks used (65.38%, out of 1190)
    assert_eq!((s.blocks_used, s.blocks_total), (Some(778), Some(1190)));
    //            0 non-contiguous files (0.0%) / 1 non-contiguous directory (0.3%)
    assert_eq!(
        (s.noncontiguous_files, s.noncontiguous_dirs),
        (Some(0), Some(1))
    );
    // Only the file and directory shares are printed, not the total the summary line
    // has: no number is made up for it.
    assert_eq!(s.noncontiguous_pct, None);
    assert_eq!(s.device, None);
    assert_eq!(s.status.as_deref(), Some("FILE SYSTEM WAS MODIFIED"));
    // The block's inventory lines are recognised; only the test suite's own line is left.
    let w: Vec<_> = out.warnings.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(w, ["Exit status is 0"]);
}

/// e2fsck 1.41's -v block: `%8u` columns, no `out of N`, a `--------` rule. The totals
/// it does not print stay None.
#[test]
fn e2fsck_v_statistics_1_41() {
    let out = e2fsck::parse(&fixture("e2fsck", "e2fsck-1.41.14-v-forum")).unwrap();
    assert!(!out.partial);
    assert_eq!(out.rows.iter().filter(|r| r.kind == "pass").count(), 5);
    let s = out.rows.last().unwrap();
    assert_eq!(s.kind, "summary");
    //   228363 inodes used (2.03%)
    assert_eq!((s.files_used, s.files_total), (Some(228_363), None));
    //  1791776 blocks used (3.99%)
    assert_eq!((s.blocks_used, s.blocks_total), (Some(1_791_776), None));
    assert_eq!(
        (s.noncontiguous_files, s.noncontiguous_dirs),
        (Some(143), Some(282))
    );
    assert_eq!(s.status, None);
    // The shell prompt and fsck's own banner; nothing of the block.
    let lines: Vec<usize> = out.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 2], "{:?}", out.warnings);
}

// ---------------------------------------------------------------------- dumpe2fs

/// `MMP_block:` and its indented fields are rows, not warnings.
#[test]
fn dumpe2fs_mmp_block() {
    let out = ext::parse(
        Kind::Dumpe2fs,
        &fixture("dumpe2fs", "e2fsprogs-tests-m_mmp"),
    )
    .unwrap();
    assert!(!out.partial);
    let r = &out.rows;
    assert_eq!(
        geo(r, "superblock", "mmp_block_number").number,
        Some(2073.0)
    );
    let interval = geo(r, "superblock", "mmp_update_interval");
    assert_eq!(
        (interval.number, interval.unit.as_deref()),
        (Some(5.0), Some("s"))
    );
    assert_eq!(
        geo(r, "superblock", "mmp_magic").number,
        Some(f64::from(0x4d4d50))
    );
    assert_eq!(geo(r, "superblock", "mmp_check_interval").number, Some(5.0));
    assert_eq!(geo(r, "superblock", "mmp_sequence").value, "0xff4d4d50");
    assert_eq!(geo(r, "superblock", "mmp_node_name").value, "test_node");
    assert_eq!(geo(r, "superblock", "mmp_device_name").value, "test.img");
    assert_eq!(geo(r, "superblock", "block_count").number, Some(65536.0));
    assert_eq!(geo(r, "superblock", "block_size").number, Some(4096.0));
    assert!(r.iter().all(|x| x.key != "mmp_block"));
    // The one warning counts the group descriptors after the header.
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(out.warnings[0].reason.contains("group descriptors"));
}

/// `Journal users:` prints one user a line: the later ones are indented, and belong to
/// the same value.
#[test]
fn dumpe2fs_journal_users_list() {
    let out = ext::parse(
        Kind::Dumpe2fs,
        &fixture("dumpe2fs", "e2fsprogs-tests-d_corrupt_journal_nr_users"),
    )
    .unwrap();
    let r = &out.rows;
    assert_eq!(
        geo(r, "superblock", "journal_number_of_users").number,
        Some(9999.0)
    );
    let users = geo(r, "superblock", "journal_users");
    let list: Vec<&str> = users.value.split(", ").collect();
    assert_eq!(list.len(), 48, "JBD2_USERS_MAX users are printed");
    assert!(list.iter().all(|u| *u == "<none>"));
    assert_eq!(users.number, None);
    assert_eq!(
        geo(r, "superblock", "total_journal_blocks").number,
        Some(1024.0)
    );
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(!out.partial);
}

// ------------------------------------------------------------------------ mke2fs

#[test]
fn mke2fs_mmp_and_huge_files() {
    let mmp = ext::parse(Kind::Mke2fs, &fixture("mke2fs", "e2fsprogs-tests-m_mmp")).unwrap();
    assert!(mmp.warnings.is_empty(), "{:?}", mmp.warnings);
    assert!(!mmp.partial);
    let i = geo(&mmp.rows, "mke2fs", "mmp_update_interval");
    assert_eq!((i.number, i.unit.as_deref()), (Some(5.0), Some("s")));
    assert_eq!(
        geo(&mmp.rows, "mke2fs", "block_count").number,
        Some(65536.0)
    );

    let huge = ext::parse(
        Kind::Mke2fs,
        &fixture("mke2fs", "e2fsprogs-tests-m_hugefile_slack"),
    )
    .unwrap();
    assert!(huge.warnings.is_empty(), "{:?}", huge.warnings);
    assert!(!huge.partial);
    assert_eq!(geo(&huge.rows, "mke2fs", "huge_files").number, Some(6368.0));
    let b = geo(&huge.rows, "mke2fs", "huge_file_blocks");
    // 117 blocks of the `Creating filesystem with 786432 1k blocks` filesystem.
    assert_eq!((b.number, b.bytes), (Some(117.0), Some(117 * 1024)));
    assert_eq!(
        geo(&huge.rows, "mke2fs", "journal_blocks").number,
        Some(16384.0)
    );
}

// --------------------------------------------------------------------------- XFS

/// A V4 filesystem (crc=0, ftype=0) of xfsprogs 3.2, in a mail: the mail's text is
/// warnings, the geometry is rows.
#[test]
fn xfs_v4_geometry_in_a_mail() {
    let out = xfs::parse(&fixture("xfs", "mkfs-4.x-crc0-in-mail")).unwrap();
    assert!(!out.partial);
    let r = &out.rows;
    assert_eq!(geo(r, "meta-data", "device").value, "/dev/ram0");
    assert_eq!(geo(r, "meta-data", "isize").bytes, Some(256));
    assert_eq!(geo(r, "meta-data", "crc").number, Some(0.0));
    assert_eq!(geo(r, "meta-data", "agsize").bytes, Some(256_000 * 4096));
    assert_eq!(geo(r, "data", "blocks").bytes, Some(1_024_000 * 4096));
    assert_eq!(geo(r, "naming", "ftype").number, Some(0.0));
    assert_eq!(geo(r, "log", "device").value, "internal log");
    assert_eq!(geo(r, "log", "blocks").bytes, Some(12800 * 4096));
    assert_eq!(r.len(), 28, "{r:?}");
    // Headers, prose, the commands and fsx's first line.
    assert_eq!(out.warnings.len(), 13, "{:?}", out.warnings);
}

/// Output quoted with an indent (a Markdown code block, a mail) is still geometry.
#[test]
fn xfs_growfs_indented() {
    let out = xfs::parse(&fixture("xfs", "growfs-indented-in-doc")).unwrap();
    assert!(!out.partial);
    let r = &out.rows;
    assert_eq!(
        geo(r, "meta-data", "device").value,
        "/dev/mapper/volgroup00-lvol0"
    );
    assert_eq!(geo(r, "meta-data", "agcount").number, Some(5.0));
    assert_eq!(geo(r, "meta-data", "finobt").number, Some(0.0));
    assert_eq!(geo(r, "data", "blocks").bytes, Some(9_169_920 * 4096));
    assert_eq!(geo(r, "log", "device").value, "internal");
    assert_eq!(geo(r, "log", "blocks").number, Some(3837.0));
    assert_eq!(geo(r, "realtime", "device").value, "none");
    // Only the `# xfs_growfs …` command line is not geometry.
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert_eq!(out.warnings[0].line, 1);
}

// ---------------------------------------------------------------------- filefrag

/// e2fsprogs 1.41's `filefrag -v`: `(B blocks, blocksize S)` and the table of first
/// blocks and lengths, the expected column blank on the first row.
#[test]
fn filefrag_1_41_table() {
    let r = filefrag::parse_report(&fixture("filefrag", "filefrag-1.41-v-forum")).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(!r.partial);
    let f = &r.files[0];
    assert_eq!(f.path, "geomat24-hw.html");
    assert_eq!(f.fs_type.as_deref(), Some("ef53"));
    assert_eq!(
        (f.size_bytes, f.blocks, f.block_size),
        (Some(53262), Some(14), Some(4096))
    );
    assert_eq!(
        (f.extents_found, f.perfection, f.rows),
        (Some(2), Some(1), 2)
    );
    assert_eq!(f.cylinder_groups, Some(448));
    //    0       0  1580089              12 merged
    let a = &r.rows[0];
    assert_eq!(
        (a.ext, a.logical_start, a.logical_end),
        (Some(0), Some(0), Some(11))
    );
    assert_eq!(
        (a.physical_start, a.physical_end),
        (Some(1_580_089), Some(1_580_100))
    );
    assert_eq!((a.length, a.expected), (Some(12), None));
    assert_eq!(a.tool_flags.as_deref(), Some("merged"));
    assert_eq!(
        (a.logical_bytes, a.physical_bytes, a.length_bytes),
        (Some(0), Some(1_580_089 * 4096), Some(12 * 4096))
    );
    //    1      12  1580102  1580100      2 merged,eof
    let b = &r.rows[1];
    assert_eq!((b.logical_start, b.logical_end), (Some(12), Some(13)));
    assert_eq!(
        (b.physical_start, b.expected, b.length),
        (Some(1_580_102), Some(1_580_100), Some(2))
    );
    assert_eq!(b.flags, "merged,eof");
    assert_eq!(b.length_bytes, Some(2 * 4096));
    // 12 + 2 blocks: the file's 14.
    let blocks: u64 = r.rows.iter().map(|x| x.length.unwrap()).sum();
    assert_eq!(Some(blocks), f.blocks);
}

/// e2fsprogs 1.40's FIBMAP output: the block size comes on the line before `File size
/// of`, the table is `Discontinuity:` lines (warnings), the counts are kept.
#[test]
fn filefrag_1_40_fibmap() {
    let r = filefrag::parse_report(&fixture("filefrag", "filefrag-1.40-v-swapfile-forum")).unwrap();
    assert!(!r.partial);
    assert_eq!(r.files.len(), 1);
    let f = &r.files[0];
    assert_eq!(f.path, "/swapfile");
    assert_eq!(
        (f.size_bytes, f.blocks),
        (Some(2_147_483_648), Some(524_288))
    );
    assert_eq!(
        (f.block_size, f.fibmap_block_size),
        (Some(4096), Some(4096))
    );
    assert_eq!(
        (f.first_block, f.last_block),
        (Some(120_832), Some(1_570_599))
    );
    assert_eq!((f.extents_found, f.perfection), (Some(794), Some(17)));
    assert_eq!((f.cylinder_groups, f.rows), (Some(67), 0));
    assert!(r.rows.is_empty());
    // The shell command, four `Discontinuity:` lines and the poster's `......`.
    let lines: Vec<usize> = r.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 9, 10, 11, 12, 13], "{:?}", r.warnings);
}

// -------------------------------------------------------------------------- time

/// BusyBox's `time` in a kernel patch's commit message: `real\t0m 16.62s`.
#[test]
fn time_busybox_in_a_patch_mail() {
    let out = time::parse(&fixture("time", "busybox-zram-patch-mail")).unwrap();
    assert!(!out.partial);
    type Seen<'a> = (u64, &'a str, Option<f64>, Option<f64>, Option<f64>);
    let got: Vec<Seen> = out
        .rows
        .iter()
        .map(|r| (r.line, r.format.as_str(), r.real_s, r.user_s, r.sys_s))
        .collect();
    let b = "busybox";
    assert_eq!(
        got,
        [
            (9, b, Some(16.62), Some(0.0), Some(5.98)),
            (13, b, Some(15.38), Some(0.0), Some(5.31)),
            (17, b, Some(15.58), Some(0.0), Some(5.49)),
            (22, b, Some(1.36), Some(0.0), Some(1.13)),
            (26, b, Some(1.36), Some(0.0), Some(1.11)),
            (30, b, Some(1.39), Some(0.0), Some(1.16)),
        ]
    );
    // The prose, the four commands, the two labels and the sign-off.
    assert_eq!(out.warnings.len(), 9, "{:?}", out.warnings);
}

/// zsh's `time` is another format: an error naming the line, not a guess.
#[test]
fn time_of_zsh_is_an_error_naming_the_line() {
    // Two lines of a blog post (rkj, 2011-07-05, parsing an OpenStreetMap dump), found
    // through the code search index: zsh's default TIMEFMT, the total as m:ss.cc.
    let text = "Parsing whole file ran for a little over 250 seconds:\n\n    ruby parse-osm.rb poland.osm poi.json  247.94s user 3.07s system 99% cpu 4:13.08 total\n";
    match time::parse(text) {
        Err(fslab::parse::ParseError::Malformed { line, message, .. }) => {
            assert_eq!(line, 3, "{message}");
            assert!(message.contains("zsh"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

// ----------------------------------------------------------------------- fs_mark

/// fs_mark 3.1's tables have no `App Overhead` column: the rows are read from the
/// header, the overhead is None (not 0).
#[test]
fn fs_mark_3_1_without_app_overhead() {
    let out = fsmark::parse(&fixture("fs_mark", "fs_mark-3.1-readme")).unwrap();
    assert!(!out.partial);
    assert_eq!(out.rows.len(), 2, "{:?}", out.warnings);
    //      3         1000        10240       44.6
    let a = &out.rows[0];
    assert_eq!((a.fsuse_pct, a.count, a.size_bytes), (3, 1000, 10240));
    assert_eq!((a.files_per_sec, a.app_overhead_us), (44.6, None));
    assert_eq!(a.version.as_deref(), Some("3.1"));
    assert_eq!((a.threads, a.io_size_bytes), (Some(1), Some(16384)));
    assert_eq!(a.sync_method.as_deref(), Some("INBAND FSYNC"));
    assert_eq!(a.creat_min_us, None);
    //      3  1000  10240  43.5  24 111 17113  23 48 2937  14281 22811 219942  0 0 0  1 2 21  34 50 1180
    let b = &out.rows[1];
    assert_eq!(
        (b.index, b.files_per_sec, b.app_overhead_us),
        (1, 43.5, None)
    );
    assert_eq!(
        (b.creat_min_us, b.creat_avg_us, b.creat_max_us),
        (Some(24), Some(111), Some(17113))
    );
    assert_eq!(
        (b.write_min_us, b.write_avg_us, b.write_max_us),
        (Some(23), Some(48), Some(2937))
    );
    assert_eq!(
        (b.fsync_min_us, b.fsync_avg_us, b.fsync_max_us),
        (Some(14281), Some(22811), Some(219_942))
    );
    assert_eq!(
        (b.sync_min_us, b.sync_avg_us, b.sync_max_us),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(
        (b.close_min_us, b.close_avg_us, b.close_max_us),
        (Some(1), Some(2), Some(21))
    );
    assert_eq!(
        (b.unlink_min_us, b.unlink_avg_us, b.unlink_max_us),
        (Some(34), Some(50), Some(1180))
    );
    // The two shell prompts and the README's sentence between the runs.
    assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
}

// ---------------------------------------------------------------------- xfs_bmap

/// `(logical_start, logical_end, physical_start, flags)` of every row, holes included
/// (physical None).
fn map_rows(
    r: &fslab::parse::map::MapReport<xfs_bmap::BmapFile>,
    file: u64,
) -> Vec<(u64, u64, Option<u64>, String)> {
    r.rows
        .iter()
        .filter(|x| x.file == file)
        .map(|x| {
            (
                x.logical_start.unwrap(),
                x.logical_end.unwrap(),
                x.physical_start,
                x.flags.to_string(),
            )
        })
        .collect()
}

/// `xfs_bmap -vp` of an fallocated file and of a reflinked pair: octal 010000 is
/// unwritten, 100000 shared; the rewritten block of the clone is not shared.
#[test]
fn xfs_bmap_unwritten_and_shared_extents() {
    let r = xfs_bmap::parse_bmap_report(&fixture("xfs_bmap", "unwritten-reflink-vp")).unwrap();
    assert!(r.warnings.is_empty() && !r.partial, "{:?}", r.warnings);
    let paths: Vec<_> = r.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["mnt/unwritten", "mnt/orig", "mnt/clone"]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        map_rows(&r, 0),
        [
            (0, 127, Some(832), s("")),
            (128, 2047, Some(960), s("unwritten")),
        ]
    );
    assert_eq!(
        map_rows(&r, 1),
        [
            (0, 127, Some(8640), s("shared")),
            (128, 135, Some(8768), s("")),
            (136, 511, Some(8776), s("shared")),
        ]
    );
    assert_eq!(
        map_rows(&r, 2),
        [
            (0, 127, Some(8640), s("shared")),
            (128, 135, Some(9664), s("")),
            (136, 511, Some(8776), s("shared")),
        ]
    );
    // `falloc 0 1m`: 1 MiB in all, 64 KiB of it written.
    let f = &r.files[0];
    assert_eq!((f.total, f.total_bytes), (2048, Some(1 << 20)));
    assert_eq!(r.rows[0].length_bytes, Some(64 << 10));
    assert_eq!(r.rows[1].physical_bytes, Some(960 * 512));
    assert_eq!(r.rows[1].tool_flags.as_deref(), Some("010000"));
    assert_eq!(r.files[2].total_bytes, Some(256 << 10));
    // `fiemap -v` of the same files says the same in FIEMAP flags.
    let fm = xfs_bmap::parse_fiemap_report(&fixture("xfs_io", "xfs-unwritten-reflink-fiemap-v"))
        .unwrap();
    assert!(fm.warnings.is_empty() && !fm.partial, "{:?}", fm.warnings);
    assert_eq!(
        map_rows(&fm, 0),
        [
            (0, 127, Some(832), s("")),
            (128, 2047, Some(960), s("last,unwritten")),
        ]
    );
    assert_eq!(
        map_rows(&fm, 1),
        [
            (0, 127, Some(8640), s("shared")),
            (128, 135, Some(9664), s("")),
            (136, 511, Some(8776), s("last,shared")),
        ]
    );
}

/// Files in allocation groups 0, 1 and 2 of a 512 MiB XFS (4 AGs of 128 MiB = 262144
/// basic blocks): the AG columns are read, and each data row's block number is its AG's
/// start plus its AG offset.
#[test]
fn xfs_bmap_three_allocation_groups() {
    let r = xfs_bmap::parse_bmap_report(&fixture("xfs_bmap", "three-ags-v")).unwrap();
    assert!(r.warnings.is_empty() && !r.partial, "{:?}", r.warnings);
    assert_eq!(r.files.len(), 3);
    let data: Vec<_> = r.rows.iter().filter(|x| !x.has_flag("hole")).collect();
    assert_eq!(data.len(), 6);
    for x in &data {
        assert_eq!(
            x.physical_start,
            Some(x.ag.unwrap() * 262_144 + x.ag_offset_start.unwrap()),
            "{x:?}"
        );
    }
    let ags: Vec<_> = data.iter().map(|x| x.ag.unwrap()).collect();
    assert_eq!(ags, [0, 0, 1, 1, 2, 2]);
    //    0: [0..63]:         655552..655615    2 (131264..131327)    64
    let d3 = data[4];
    assert_eq!(
        (d3.ag_offset_start, d3.ag_offset_end, d3.length),
        (Some(131_264), Some(131_327), Some(64))
    );
    assert!(r.files.iter().all(|f| f.ags == Some(1) && f.holes == 1));
    assert!(r
        .files
        .iter()
        .all(|f| f.hole_total == 960 && f.total == 128));
}

/// A file of 27 rows (14 extents, 13 holes): two-digit extent numbers, plain and -vp
/// alike, and fiemap the same.
#[test]
fn xfs_bmap_many_extents_every_form_agrees() {
    let vp = xfs_bmap::parse_bmap_report(&fixture("xfs_bmap", "many-extents-vp")).unwrap();
    let plain = xfs_bmap::parse_bmap_report(&fixture("xfs_bmap", "many-extents-plain")).unwrap();
    let fm = xfs_bmap::parse_fiemap_report(&fixture("xfs_io", "xfs-many-fiemap")).unwrap();
    for r in [&vp, &plain, &fm] {
        assert!(r.warnings.is_empty() && !r.partial, "{:?}", r.warnings);
        assert_eq!(r.rows.len(), 27);
        let f = &r.files[0];
        assert_eq!((f.data_rows, f.holes), (14, 13));
        assert_eq!(
            (f.total, f.hole_total, f.end),
            (14 * 128, 13 * 128, Some(3456))
        );
        let ext: Vec<u64> = r.rows.iter().map(|x| x.ext.unwrap()).collect();
        assert_eq!(ext, (0..27).collect::<Vec<_>>());
        // Every other 64 KiB: data at even rows, holes at odd ones.
        for (i, x) in r.rows.iter().enumerate() {
            assert_eq!(x.logical_start, Some(i as u64 * 128));
            assert_eq!(x.has_flag("hole"), i % 2 == 1, "{x:?}");
        }
    }
    let strip = |v: Vec<(u64, u64, Option<u64>, String)>| {
        v.into_iter()
            .map(|(a, b, c, _)| (a, b, c))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(map_rows(&vp, 0)), strip(map_rows(&plain, 0)));
    assert_eq!(strip(map_rows(&vp, 0)), strip(map_rows(&fm, 0)));
    //   26: [3328..3455]:    5312..5439        0 (5312..5439)       128 000000
    let last = vp.rows.last().unwrap();
    assert_eq!(
        (last.physical_start, last.physical_end),
        (Some(5312), Some(5439))
    );
    assert_eq!(vp.rows[24].physical_start, Some(5952));
}

/// xfs_bmap on ext4 prints one line and exits 0: an error quoting it, not an empty map.
#[test]
fn xfs_bmap_on_ext4_is_an_error_quoting_the_tool() {
    match xfs_bmap::parse_bmap_report(&fixture("xfs_bmap", "ext4-foreign")) {
        Err(fslab::parse::ParseError::Malformed { line, message, .. }) => {
            assert_eq!(line, 1);
            assert!(message.contains("foreign file active"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------- xfs_io fiemap

/// ext4 through `xfs_io -c "fiemap -v"`: unwritten extents (0x800), holes, and an
/// inline-data file whose one extent is shorter than a basic block. xfs_io prints that
/// extent's ends wrapped (`[0..18446744073709551615]: 590..589`): a warning naming it,
/// no row with a made-up length, and the listing is not cut.
#[test]
fn fiemap_ext4_unwritten_holes_and_inline_data() {
    let r = xfs_bmap::parse_fiemap_report(&fixture("xfs_io", "ext4-fiemap-v")).unwrap();
    assert!(!r.partial);
    let paths: Vec<_> = r.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["e4/unwritten", "e4/holes", "e4/inline"]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        map_rows(&r, 0),
        [
            (0, 127, Some(32770), s("")),
            (128, 1023, Some(32898), s("unwritten")),
            (1024, 1039, Some(33794), s("")),
            (1040, 2047, Some(33810), s("last,unwritten")),
        ]
    );
    assert_eq!(
        map_rows(&r, 1),
        [
            (0, 127, Some(20482), s("")),
            (128, 2047, None, s("hole")),
            (2048, 2175, Some(22530), s("")),
            (2176, 8191, None, s("hole")),
            (8192, 8447, Some(24578), s("last")),
        ]
    );
    assert_eq!(r.files[2].rows, 0);
    assert_eq!(r.files[2].total_bytes, Some(0));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert_eq!(w.line, 16);
    assert!(w.reason.contains("shorter than one 512-byte unit"), "{w:?}");
    // The plain listing of e4/holes has the same rows, without flags.
    let plain = xfs_bmap::parse_fiemap_report(&fixture("xfs_io", "ext4-holes-fiemap")).unwrap();
    assert!(plain.warnings.is_empty() && !plain.partial);
    let no_flags = |v: Vec<(u64, u64, Option<u64>, String)>| {
        v.into_iter()
            .map(|(a, b, c, _)| (a, b, c))
            .collect::<Vec<_>>()
    };
    assert_eq!(no_flags(map_rows(&plain, 0)), no_flags(map_rows(&r, 1)));
}

/// ext2's indirect-block files: the kernel flags their extents merged (0x1000).
#[test]
fn fiemap_ext2_indirect_blocks_are_merged() {
    let r = xfs_bmap::parse_fiemap_report(&fixture("xfs_io", "ext2-indirect-fiemap-v")).unwrap();
    assert!(r.warnings.is_empty() && !r.partial, "{:?}", r.warnings);
    let s = |x: &str| x.to_string();
    assert_eq!(
        map_rows(&r, 0),
        [
            (0, 31, Some(1572), s("merged")),
            (32, 127, Some(2658), s("merged")),
            (128, 2047, None, s("hole")),
            (2048, 2175, Some(10178), s("last,merged")),
        ]
    );
    assert_eq!(r.files[0].total_bytes, Some(128 * 1024));
}

// --------------------------------------------------------------------------- fio

/// fio 2.2.10's JSON: `io_bytes` is KiB there (fio made it bytes in 2.21), latencies
/// are µs, and the unused percentile slots are `"0.00" : 0`, not a 0th percentile.
#[test]
fn fio_2_json_kib_and_microseconds() {
    let out = fio::parse_json(&fixture("fio", "fio-2.2.10-json-perfkit-doc")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // read and trim did nothing.
    assert_eq!(out.rows.len(), 1, "{:?}", out.rows);
    let w = &out.rows[0];
    assert_eq!(
        (w.jobname.as_str(), w.direction.as_str()),
        ("test", "write")
    );
    assert_eq!(w.fio_version.as_deref(), Some("fio-2.2.10"));
    assert_eq!(w.total_ios, Some(9_374_944));
    // "io_bytes" : 37500272, in KiB: 4 KiB for each of the 9374944 writes (read as
    // bytes it would be 4 bytes a write).
    assert_eq!(w.io_bytes, 37_500_272 * 1024);
    let per_io = w.io_bytes as f64 / w.total_ios.unwrap() as f64;
    assert!((per_io - 4096.0).abs() < 1.0, "{per_io}");
    // "bw" : 62499 (KiB/s) over "runtime" : 600008 ms is the same amount.
    assert_eq!(w.bw_bytes_per_s, 62_499.0 * 1024.0);
    assert_eq!((w.iops, w.runtime_ms), (15_624.70, 600_008));
    assert_eq!(
        (w.slat_min_ns, w.slat_max_ns),
        (Some(17_000.0), Some(9_602_000.0))
    );
    // "mean" : 32.18 and 8151.19 µs.
    assert!((w.slat_mean_ns.unwrap() - 32_180.0).abs() < 1e-6);
    assert!((w.clat_mean_ns.unwrap() - 8_151_190.0).abs() < 1e-6);
    assert_eq!(w.lat_max_ns, Some(261_142_000.0));
    let p = &w.clat_percentiles;
    assert_eq!(p.len(), 17, "{p:?}");
    assert!(!p.contains_key("clat_p0_ns"));
    assert_eq!(p["clat_p1_ns"], 1_752_000.0);
    assert_eq!(p["clat_p99_ns"], 8_640_000.0);
    assert_eq!(p["clat_p99_99_ns"], 150_528_000.0);
}

/// fio 3.29's JSON of two `cmdprio_percentage` jobs (made here, see SOURCE): the
/// per-priority objects (`clat_high_prio`, `clat_low_prio`; `lat_high_prio`,
/// `lat_low_prio` with `lat_percentiles=1`) are kept by no column: each is a warning at
/// its line, naming the job and direction; the rows read as without them.
#[test]
fn fio_3_29_json_per_priority_latencies_are_warnings() {
    let out = fio::parse_json(&fixture("fio", "fio-3.29-json-cmdprio")).unwrap();
    let got: Vec<(usize, &str)> = out
        .warnings
        .iter()
        .map(|w| (w.line, w.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (77, r#""clat_high_prio" : {"#),
            (103, r#""clat_low_prio" : {"#),
            (191, r#""clat_high_prio" : {"#),
            (217, r#""clat_low_prio" : {"#),
            (464, r#""lat_high_prio" : {"#),
            (490, r#""lat_low_prio" : {"#),
        ]
    );
    assert!(out.warnings[4].reason.contains("job `lat`, `read`"));
    let rows: Vec<(&str, &str, Option<f64>)> = out
        .rows
        .iter()
        .map(|r| (r.jobname.as_str(), r.direction.as_str(), r.clat_min_ns))
        .collect();
    assert_eq!(
        rows,
        [
            ("mixed", "read", Some(4179.0)),
            ("mixed", "write", Some(2430.0)),
            ("lat", "read", Some(14416.0))
        ]
    );
}

/// fio 2.0.15's terse v3 line (no disk-util fields): KiB, KiB/s, µs.
#[test]
fn fio_2_0_terse_v3() {
    let out = fio::parse_terse(&fixture("fio", "fio-2.0.15-terse-cloudbench")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let dirs: Vec<_> = out.rows.iter().map(|r| r.direction.as_str()).collect();
    assert_eq!(dirs, ["read", "write"]);
    let (r, w) = (&out.rows[0], &out.rows[1]);
    assert_eq!(r.fio_version.as_deref(), Some("fio-2.0.15"));
    assert_eq!(r.jobname, "cloudbench-test");
    // 3;fio-2.0.15;cloudbench-test;0;0;506416;25319;1582;20001;0;0;0.000000;0.000000;3;26586;420.649806;529.499685;…
    assert_eq!(r.io_bytes, 506_416 * 1024);
    assert_eq!(
        (r.bw_bytes_per_s, r.iops, r.runtime_ms),
        (25_319.0 * 1024.0, 1582.0, 20_001)
    );
    assert_eq!(
        (r.clat_min_ns, r.clat_max_ns),
        (Some(3_000.0), Some(26_586_000.0))
    );
    assert!((r.clat_mean_ns.unwrap() - 420_649.806).abs() < 1e-6);
    assert!((r.lat_mean_ns.unwrap() - 420_892.105).abs() < 1e-6);
    assert_eq!(r.clat_percentiles.len(), 17);
    assert_eq!(r.clat_percentiles["clat_p50_ns"], 334_000.0);
    assert_eq!(r.clat_percentiles["clat_p99_99_ns"], 14_272_000.0);
    // …;501760;25086;1567;20001;0;0;0.000000;0.000000;119;18453;205.181728;…
    assert_eq!(w.io_bytes, 501_760 * 1024);
    assert_eq!((w.iops, w.clat_min_ns), (1567.0, Some(119_000.0)));
    assert_eq!(w.clat_percentiles["clat_p99_99_ns"], 14_144_000.0);
}

/// fio's normal output is no format of these parsers: both say so rather than read it.
#[test]
fn fio_normal_output_is_not_json_or_terse() {
    for name in ["fio-2.0.15-normal-cloudbench", "fio-3.33-normal"] {
        let text = fixture("fio", name);
        assert!(
            matches!(
                fio::parse_json(&text),
                Err(fslab::parse::ParseError::NothingRecognised { .. })
            ),
            "{name}"
        );
        assert!(
            matches!(
                fio::parse_terse(&text),
                Err(fslab::parse::ParseError::NothingRecognised { .. })
            ),
            "{name}"
        );
    }
}

/// `got` is `want` up to the rounding of a decimal × 1000 (µs printed, ns kept).
#[track_caller]
fn near(got: Option<f64>, want: f64) {
    let g = got.unwrap_or_else(|| panic!("no value, want {want}"));
    assert!((g - want).abs() < 1e-6, "{g} != {want}");
}

/// (job, jobname, groupid, direction, io_bytes, total_ios) of a row.
type FioJob<'a> = (u64, &'a str, i64, &'a str, u64, Option<u64>);

/// The rows of fio-3.33's two jobs as [`FioJob`]s.
fn fio_jobs(rows: &[fio::FioRow]) -> Vec<FioJob<'_>> {
    rows.iter()
        .map(|r| {
            (
                r.job,
                r.jobname.as_str(),
                r.groupid,
                r.direction.as_str(),
                r.io_bytes,
                r.total_ios,
            )
        })
        .collect()
}

const FIO_333_JOBS: [FioJob<'static>; 3] = [
    (0, "randrw", 0, "read", 5_840_896, Some(1426)),
    (0, "randrw", 0, "write", 2_547_712, Some(622)),
    (1, "seqwrite", 1, "write", 16_777_216, Some(4096)),
];

/// fio 3.33's json and json+ (ns latencies, bytes) of a randrw job and a two-process
/// group_reporting job; options are the job's over the global ones.
#[test]
fn fio_3_33_json_and_json_plus() {
    let out = fio::parse_json(&fixture("fio", "fio-3.33-json")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(fio_jobs(&out.rows), FIO_333_JOBS);
    let r = &out.rows[0];
    assert_eq!(r.fio_version.as_deref(), Some("fio-3.33"));
    assert_eq!((r.bw_bytes_per_s, r.runtime_ms), (57_263_686.0, 102));
    assert_eq!(r.clat_mean_ns, Some(48_293.921_459));
    assert_eq!(r.clat_percentiles["clat_p99_ns"], 126_464.0);
    assert_eq!(r.lat_max_ns, Some(7_482_567.0));
    assert_eq!(
        (
            r.rw.as_deref(),
            r.bs.as_deref(),
            r.ioengine.as_deref(),
            r.numjobs.as_deref()
        ),
        (Some("randrw"), Some("4k"), Some("psync"), None)
    );
    let s = &out.rows[2];
    assert_eq!(
        (s.rw.as_deref(), s.numjobs.as_deref(), s.direct.as_deref()),
        (Some("write"), Some("2"), Some("1"))
    );
    assert_eq!(s.bw_bytes_per_s, 108_240_103.0);

    let plus = fio::parse_json(&fixture("fio", "fio-3.33-jsonplus")).unwrap();
    assert!(plus.warnings.is_empty(), "{:?}", plus.warnings);
    assert_eq!(fio_jobs(&plus.rows), FIO_333_JOBS);
    assert_eq!(plus.rows[0].clat_percentiles["clat_p99_ns"], 7_962_624.0);
    assert_eq!(plus.rows[2].clat_mean_ns, Some(122_930.072_51));
}

/// `--output-format=normal,json`: fio prints its header, the JSON, then the normal
/// results. The document's rows are read; the text around it is warnings.
#[test]
fn fio_3_33_normal_and_json_together() {
    let out = fio::parse_json(&fixture("fio", "fio-3.33-normal-json")).unwrap();
    assert_eq!(fio_jobs(&out.rows), FIO_333_JOBS);
    assert_eq!(out.rows[0].bw_bytes_per_s, 10_999_804.0);
    assert_eq!(out.rows[2].runtime_ms, 117);
    // 5 lines before the document, 53 after it.
    assert_eq!(out.warnings.len(), 5 + 53);
    assert_eq!(out.warnings[0].line, 1);
    let after = &out.warnings[5];
    assert_eq!(after.line, 542);
    assert!(
        after.text.starts_with("randrw: (groupid=0, jobs=1)"),
        "{after:?}"
    );
}

/// fio 3.33's terse v3: the seqwrite group wrote only.
#[test]
fn fio_3_33_terse() {
    let out = fio::parse_terse(&fixture("fio", "fio-3.33-terse")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let got: Vec<_> = fio_jobs(&out.rows)
        .into_iter()
        .map(|(j, n, g, d, b, _)| (j, n, g, d, b))
        .collect();
    let want: Vec<_> = FIO_333_JOBS
        .iter()
        .map(|&(j, n, g, d, b, _)| (j, n, g, d, b))
        .collect();
    assert_eq!(got, want);
    // 3;fio-3.33;randrw;0;0;5704;6481;1620;880;0;0;0.000000;0.000000;16;15109;434.148961;…
    let r = &out.rows[0];
    assert_eq!(
        (r.bw_bytes_per_s, r.iops, r.runtime_ms),
        (6481.0 * 1024.0, 1620.0, 880)
    );
    assert_eq!(
        (r.clat_min_ns, r.clat_max_ns),
        (Some(16_000.0), Some(15_109_000.0))
    );
    assert_eq!(r.clat_percentiles["clat_p1_ns"], 17_000.0);
    // The seqwrite line's write part: 16384;54072;13518;303 … clat 16;19477.
    let s = &out.rows[2];
    assert_eq!(
        (s.iops, s.runtime_ms, s.clat_max_ns),
        (13_518.0, 303, Some(19_477_000.0))
    );
    assert_eq!(s.clat_percentiles["clat_p1_ns"], 18_000.0);
}

/// Terse version 5 (`--terse-version=5`) of the same job file: every direction has 6
/// more fields (bandwidth samples; IOPS min, max, mean, stddev, samples), and a trim
/// block follows write. Each row's numbers are the ones its own block prints.
#[test]
fn fio_3_33_terse_v5() {
    let out = fio::parse_terse(&fixture("fio", "fio-3.33-terse-v5")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let got: Vec<_> = fio_jobs(&out.rows)
        .into_iter()
        .map(|(j, n, g, d, b, _)| (j, n, g, d, b))
        .collect();
    let want: Vec<_> = FIO_333_JOBS
        .iter()
        .map(|&(j, n, g, d, b, _)| (j, n, g, d, b))
        .collect();
    assert_eq!(got, want);
    // 5;fio-3.33;randrw;0;0;5704;62000;15500;92;0;0;0.000000;0.000000;11;6317;45.794795;364.534812;…
    let r = &out.rows[0];
    assert_eq!(
        (r.bw_bytes_per_s, r.iops, r.runtime_ms),
        (62_000.0 * 1024.0, 15_500.0, 92)
    );
    assert_eq!(
        (r.clat_min_ns, r.clat_max_ns),
        (Some(11_000.0), Some(6_317_000.0))
    );
    near(r.clat_mean_ns, 45_794.795);
    assert_eq!(r.clat_percentiles["clat_p1_ns"], 11_000.0);
    assert_eq!(r.clat_percentiles["clat_p99_99_ns"], 6_324_000.0);
    near(r.lat_stddev_ns, 364_543.962);
    // The write block starts 47 fields later: 2488;27043;6760;92;0;0;…;12;2628;39.264667;…
    let w = &out.rows[1];
    assert_eq!(
        (w.bw_bytes_per_s, w.iops, w.runtime_ms),
        (27_043.0 * 1024.0, 6760.0, 92)
    );
    assert_eq!(
        (w.clat_min_ns, w.clat_max_ns),
        (Some(12_000.0), Some(2_628_000.0))
    );
    assert_eq!(w.clat_percentiles["clat_p1_ns"], 13_000.0);
    near(w.lat_mean_ns, 39_382.195);
    // seqwrite: read and trim are all zeros; write 16384;41689;10422;393 … clat 12;11000.
    let s = &out.rows[2];
    assert_eq!((s.iops, s.runtime_ms), (10_422.0, 393));
    assert_eq!(
        (s.clat_min_ns, s.clat_max_ns),
        (Some(12_000.0), Some(11_000_000.0))
    );
    assert_eq!(s.clat_percentiles["clat_p99_99_ns"], 10_944_000.0);
    assert_eq!(s.lat_max_ns, Some(11_001_000.0));
}

/// Terse version 4 from a blktests report (fio-3.36): read, write and a trim block of
/// zeros, error 28, no disk utilisation fields after the latency buckets.
#[test]
fn fio_3_36_terse_v4_from_a_mail() {
    let out = fio::parse_terse(&fixture("fio", "fio-3.36-terse-v4-blktests-mail")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let dirs: Vec<_> = out.rows.iter().map(|r| r.direction.as_str()).collect();
    assert_eq!(dirs, ["read", "write"]);
    let (r, w) = (&out.rows[0], &out.rows[1]);
    assert_eq!(r.fio_version.as_deref(), Some("fio-3.36"));
    assert_eq!((r.jobname.as_str(), r.groupid, r.error), ("verify", 0, 28));
    // 700416;364610;91152;1921;3;110;9.283027;2.078678;2;1234;159.304360;28.925367;
    assert_eq!(r.io_bytes, 700_416 * 1024);
    assert_eq!(
        (r.bw_bytes_per_s, r.iops, r.runtime_ms),
        (364_610.0 * 1024.0, 91_152.0, 1921)
    );
    assert_eq!(
        (r.slat_min_ns, r.slat_max_ns),
        (Some(3_000.0), Some(110_000.0))
    );
    near(r.slat_mean_ns, 9_283.027);
    assert_eq!(
        (r.clat_min_ns, r.clat_max_ns),
        (Some(2_000.0), Some(1_234_000.0))
    );
    near(r.clat_stddev_ns, 28_925.367);
    assert_eq!(r.clat_percentiles.len(), 17);
    assert_eq!(r.clat_percentiles["clat_p1_ns"], 23_000.0);
    assert_eq!(r.clat_percentiles["clat_p50_ns"], 160_000.0);
    assert_eq!(r.clat_percentiles["clat_p99_99_ns"], 428_000.0);
    // 10;1243;168.587388;28.998837
    assert_eq!(
        (r.lat_min_ns, r.lat_max_ns),
        (Some(10_000.0), Some(1_243_000.0))
    );
    near(r.lat_mean_ns, 168_587.388);
    // 700416;191789;47951;3652;4;5023;17.928978;27.794189;1;5446;303.143928;124.069601;
    assert_eq!(w.io_bytes, 700_416 * 1024);
    assert_eq!(
        (w.bw_bytes_per_s, w.iops, w.runtime_ms),
        (191_789.0 * 1024.0, 47_951.0, 3652)
    );
    assert_eq!(
        (w.slat_min_ns, w.slat_max_ns),
        (Some(4_000.0), Some(5_023_000.0))
    );
    assert_eq!(
        (w.clat_min_ns, w.clat_max_ns),
        (Some(1_000.0), Some(5_446_000.0))
    );
    assert_eq!(w.clat_percentiles["clat_p1_ns"], 59_000.0);
    assert_eq!(w.clat_percentiles["clat_p99_99_ns"], 1_011_000.0);
    assert_eq!(
        (w.lat_min_ns, w.lat_max_ns),
        (Some(17_000.0), Some(5_452_000.0))
    );
    near(w.lat_stddev_ns, 125_717.726);
}

/// `unified_rw_reporting`: with `1`, fio ≥ 3.27 prints one block, `mixed`; with
/// `both`, the separate directions and then `mixed`. The block count comes from where
/// the CPU usage (`…%`) starts, so the CPU fields are never read as a direction.
#[test]
fn fio_3_33_terse_unified_rw_reporting() {
    let dirs = |name: &str| {
        let out = fio::parse_terse(&fixture("fio", name)).unwrap();
        assert!(out.warnings.is_empty(), "{name}: {:?}", out.warnings);
        out.rows
            .iter()
            .map(|r| (r.direction.clone(), r.io_bytes, r.runtime_ms))
            .collect::<Vec<_>>()
    };
    let s = |d: &str, kib: u64, ms: u64| (d.to_string(), kib * 1024, ms);
    // 3;fio-3.33;mixed;0;0;8192;182044;45511;45;… then 4.545455%;4.545455%;13;0;11
    assert_eq!(
        dirs("fio-3.33-terse-v3-unified-mixed"),
        [s("mixed", 8192, 45)]
    );
    // 3976;265066;66266;15 | 4216;281066;70266;15 | 8192;546133;136533;15
    assert_eq!(
        dirs("fio-3.33-terse-v3-unified-both"),
        [
            s("read", 3976, 15),
            s("write", 4216, 15),
            s("mixed", 8192, 15)
        ]
    );
    // v4: read, write, trim (zeros: no row), mixed.
    assert_eq!(
        dirs("fio-3.33-terse-v4-unified-both"),
        [
            s("read", 3976, 14),
            s("write", 4216, 14),
            s("mixed", 8192, 14)
        ]
    );
    let out = fio::parse_terse(&fixture("fio", "fio-3.33-terse-v4-unified-both")).unwrap();
    // The mixed block: 8192;585142;146285;14;0;0;0.000000;0.000000;0;161;1.747214;3.883591
    let m = &out.rows[2];
    assert_eq!((m.iops, m.clat_max_ns), (146_285.0, Some(161_000.0)));
    assert_eq!(m.clat_percentiles["clat_p99_99_ns"], 162_000.0);
    // v5: 5;fio-3.33;mixed;0;0;8192;512000;128000;16;…;0.000000%;26.666667%;18;0;12
    assert_eq!(
        dirs("fio-3.33-terse-v5-unified-mixed"),
        [s("mixed", 8192, 16)]
    );
    let out = fio::parse_terse(&fixture("fio", "fio-3.33-terse-v5-unified-mixed")).unwrap();
    assert_eq!(out.rows[0].clat_max_ns, Some(813_000.0));
    near(out.rows[0].lat_mean_ns, 2_417.727);
}

/// `unified_rw_reporting=1`: the job's only direction is `mixed`; it is a row, not a
/// job silently without one.
#[test]
fn fio_3_33_unified_rw_reporting_is_mixed() {
    let out = fio::parse_json(&fixture("fio", "fio-3.33-unified-rw-json")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let got: Vec<_> = fio_jobs(&out.rows);
    // --size=1m in 4 KiB blocks.
    assert_eq!(got, [(0, "mixedjob", 0, "mixed", 1 << 20, Some(256))]);
}

// -------------------------------------------------------------------- perf stat

/// perf 6.x CSV on a hybrid CPU: `cpu_atom` events counted, `cpu_core` ones
/// `<not counted>`, `:u` modifiers kept in the event name; the TopdownL1 metric lines
/// have no counter value and are warnings, not rows.
#[test]
fn perf_stat_hybrid_csv_with_topdown_metrics() {
    use perf_stat::CounterStatus;
    let out = perf_stat::parse(&fixture("perf_stat", "perf-6.x-hybrid-topdown-csv-mail")).unwrap();
    let events: Vec<_> = out.rows.iter().map(|r| r.event.as_str()).collect();
    assert_eq!(
        events,
        [
            "task-clock:u",
            "context-switches:u",
            "cpu-migrations:u",
            "page-faults:u",
            "cpu_atom/cycles/u",
            "cpu_core/cycles/u",
            "cpu_atom/instructions/u",
            "cpu_core/instructions/u",
            "cpu_atom/branches/u",
            "cpu_core/branches/u",
            "cpu_atom/branch-misses/u",
            "cpu_core/branch-misses/u",
        ]
    );
    // 0.65,msec,task-clock:u,648266,100.00,0.534,CPUs utilized
    let t = &out.rows[0];
    assert_eq!((t.value, t.unit.as_deref()), (Some(0.65), Some("msec")));
    assert_eq!((t.run_time_ns, t.run_pct), (Some(648_266), Some(100.0)));
    assert_eq!(
        (t.metric_value, t.metric_unit.as_deref()),
        (Some(0.534), Some("CPUs utilized"))
    );
    // 775564,,cpu_atom/cycles/u,276334,42.00,1.196,GHz
    let c = &out.rows[4];
    assert_eq!((c.value, c.unit.as_deref()), (Some(775_564.0), None));
    assert_eq!((c.run_time_ns, c.run_pct), (Some(276_334), Some(42.0)));
    assert_eq!(
        (c.metric_value, c.metric_unit.as_deref()),
        (Some(1.196), Some("GHz"))
    );
    // <not counted>,,cpu_core/cycles/u,0,0.00,,
    let n = &out.rows[5];
    assert_eq!((n.status, n.value), (CounterStatus::NotCounted, None));
    assert_eq!(
        (n.run_time_ns, n.run_pct, n.metric_value),
        (Some(0), Some(0.0), None)
    );
    let not_counted = out
        .rows
        .iter()
        .filter(|r| r.status == CounterStatus::NotCounted)
        .count();
    assert_eq!(not_counted, 4);
    assert!(out
        .rows
        .iter()
        .all(|r| r.time_s.is_none() && r.cpu.is_none()));
    // The prompt, `perf.data` (ls's output) and the six metric lines.
    let lines: Vec<usize> = out.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 2, 15, 16, 17, 18, 19, 20], "{:?}", out.warnings);
}

/// `-x, --per-socket` and `-I 1000 -x, --per-socket`: with an interval the time stamp
/// comes before the socket. Each field is read from its place; the metric-only lines
/// (the bug the mail fixes, and the fixed form) are warnings, never rows of shifted
/// fields.
#[test]
fn perf_stat_per_socket_with_and_without_interval() {
    let out = perf_stat::parse(&fixture("perf_stat", "perf-per-socket-interval-csv-mail")).unwrap();
    // 8 lines before the patch, 3 in interval mode, 8 after the patch.
    assert_eq!(out.rows.len(), 19, "{:?}", out.rows);
    assert!(out
        .rows
        .iter()
        .all(|r| r.cpu.as_deref() == Some("S0") && r.cpus == Some(1)));
    let timed: Vec<_> = out.rows.iter().filter(|r| r.time_s.is_some()).collect();
    let events: Vec<_> = timed.iter().map(|r| r.event.as_str()).collect();
    assert_eq!(events, ["cpu-clock", "context-switches", "instructions"]);
    // 0.001813453,S0,1,2,,context-switches,1868028,100.00,1.070,K/sec
    let cs = timed[1];
    assert_eq!((cs.time_s, cs.value), (Some(0.001813453), Some(2.0)));
    assert_eq!(
        (cs.unit.as_deref(), cs.run_time_ns),
        (None, Some(1_868_028))
    );
    assert_eq!(
        (cs.metric_value, cs.metric_unit.as_deref()),
        (Some(1.070), Some("K/sec"))
    );
    // 0.001813453,S0,1,1.87,msec,cpu-clock,1872052,100.00,0.002,CPUs utilized
    assert_eq!(
        (timed[0].value, timed[0].unit.as_deref()),
        (Some(1.87), Some("msec"))
    );
    // S0,1,875807,,cycles,1769826,100.00,0.491,GHz
    let cycles = &out.rows[4];
    assert_eq!(
        (cycles.event.as_str(), cycles.value),
        ("cycles", Some(875_807.0))
    );
    assert_eq!(cycles.metric_unit.as_deref(), Some("GHz"));
    // No row is made of a time stamp, a socket or a count taken for an event.
    let known = [
        "cpu-clock",
        "context-switches",
        "cpu-migrations",
        "page-faults",
        "cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
        "instructions",
    ];
    assert!(
        out.rows.iter().all(|r| known.contains(&r.event.as_str())),
        "{:?}",
        out.rows
    );
    let metric_lines: Vec<_> = out
        .warnings
        .iter()
        .filter(|w| w.text.contains(",stalled cycles per insn"))
        .map(|w| w.line)
        .collect();
    assert_eq!(metric_lines, [14, 28, 79]);
}

/// perf's human format is not `-x` output: the CSV kind refuses it (not numbers read
/// from `76,337,010`); the human kind reads it.
#[test]
fn perf_stat_human_hybrid_slots() {
    use perf_stat::CounterStatus::{Counted, NotCounted, NotSupported};
    let text = fixture("perf_stat", "perf-human-hybrid-slots-mail");
    assert!(matches!(
        perf_stat::parse(&text),
        Err(fslab::parse::ParseError::NothingRecognised { .. })
    ));
    let out = perf_stat::parse_human(&text).unwrap();
    let rows: Vec<_> = out
        .rows
        .iter()
        .map(|r| (r.event.as_str(), r.value, r.status))
        .collect();
    assert_eq!(
        rows,
        [
            ("cpu_core/instructions/", None, NotCounted),
            ("cpu_core/slots/", None, NotCounted),
            ("cpu_core/topdown-retiring/", None, NotSupported),
            ("seconds time elapsed", Some(1.002871801), Counted),
            ("cpu_core/slots/", Some(76_337_010.0), Counted),
            ("cpu_core/instructions/", Some(10_416_809.0), Counted),
            ("cpu_core/topdown-retiring/", Some(11_692_372.0), Counted),
            ("seconds time elapsed", Some(1.002805453), Counted),
        ]
    );
    assert!(out
        .rows
        .iter()
        .all(|r| r.unit.is_none() || r.unit.as_deref() == Some("s")));
    // The two command lines and the prose between the outputs.
    let lines: Vec<usize> = out.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 11, 12, 14, 15, 17, 19, 21]);
}

/// perf of 2009 (2.6.31): `task-clock-msecs` with 6 decimals and no unit column, no
/// thousands separators, two blocks in one mail.
#[test]
fn perf_stat_human_2_6_31_mail() {
    let out =
        perf_stat::parse_human(&fixture("perf_stat", "perf-2.6.31-task-clock-msecs-mail")).unwrap();
    assert_eq!(out.rows.len(), 18, "{:?}", out.warnings);
    let t = &out.rows[0];
    // 7188177.405648  task-clock-msecs         #     23.926 CPUs
    assert_eq!(
        (t.event.as_str(), t.value, t.unit.as_deref()),
        ("task-clock-msecs", Some(7_188_177.405_648), None)
    );
    assert_eq!(
        (t.metric_value, t.metric_unit.as_deref()),
        (Some(23.926), Some("CPUs"))
    );
    // 5900210219604  cycles                   #    820.821 M/sec
    let c = &out.rows[4];
    assert_eq!(
        (c.event.as_str(), c.value),
        ("cycles", Some(5_900_210_219_604.0))
    );
    assert_eq!(
        (c.metric_value, c.metric_unit.as_deref()),
        (Some(820.821), Some("M/sec"))
    );
    assert_eq!(out.rows[5].metric_unit.as_deref(), Some("IPC"));
    let e = &out.rows[8];
    assert_eq!(
        (e.event.as_str(), e.value, e.unit.as_deref()),
        ("seconds time elapsed", Some(300.431591843), Some("s"))
    );
    // Without Patch: 28498113  page-faults
    let f = &out.rows[12];
    assert_eq!(
        (f.event.as_str(), f.value),
        ("page-faults", Some(28_498_113.0))
    );
    assert_eq!(out.rows[17].value, Some(300.485365680));
    assert!(out
        .rows
        .iter()
        .all(|r| r.runs.is_none() && r.variance_pct.is_none()));
    let lines: Vec<usize> = out.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 16]);
}

/// perf 6.4-era on Skylake: multiplexed and `<not counted>` counters, an event name
/// wider than its column, and TopdownL1's metric-only lines (warnings, as in the CSV).
#[test]
fn perf_stat_human_6_x_topdown_mail() {
    use perf_stat::CounterStatus;
    let out =
        perf_stat::parse_human(&fixture("perf_stat", "perf-6.x-skippable-topdown-mail")).unwrap();
    // 14 counters and 3 times in each of the two outputs.
    assert_eq!(out.rows.len(), 34, "{:?}", out.warnings);
    let r = &out.rows;
    // 1.26 msec task-clock:u                     #    0.389 CPUs utilized
    assert_eq!(
        (r[0].event.as_str(), r[0].value, r[0].unit.as_deref()),
        ("task-clock:u", Some(1.26), Some("msec"))
    );
    assert_eq!(
        (r[0].metric_value, r[0].metric_unit.as_deref(), r[0].run_pct),
        (Some(0.389), Some("CPUs utilized"), None)
    );
    // 264,719      cycles:u                         #    0.210 GHz                         (78.34%)
    assert_eq!(
        (r[4].event.as_str(), r[4].value, r[4].unit.as_deref()),
        ("cycles:u", Some(264_719.0), None)
    );
    assert_eq!(
        (r[4].metric_value, r[4].run_pct),
        (Some(0.210), Some(78.34))
    );
    // 2,526      branch-misses:u                  #    8.95% of all branches
    assert_eq!(
        (r[7].value, r[7].metric_value, r[7].metric_unit.as_deref()),
        (Some(2526.0), Some(8.95), Some("of all branches"))
    );
    // <not counted>      CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE:u        (0.00%)
    assert_eq!(
        (
            r[10].event.as_str(),
            r[10].status,
            r[10].value,
            r[10].run_pct
        ),
        (
            "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE:u",
            CounterStatus::NotCounted,
            None,
            Some(0.0)
        )
    );
    let times: Vec<_> = r[14..17]
        .iter()
        .map(|r| (r.event.as_str(), r.value))
        .collect();
    assert_eq!(
        times,
        [
            ("seconds time elapsed", Some(0.003238907)),
            ("seconds user", Some(0.0)),
            ("seconds sys", Some(0.003412)),
        ]
    );
    // 1,232.99 msec task-clock:u
    assert_eq!(r[17].value, Some(1232.99));
    // 1,640,825,583      instructions:u                   #    2.09  insn per cycle              (60.01%)
    assert_eq!(
        (
            r[22].value,
            r[22].metric_value,
            r[22].metric_unit.as_deref(),
            r[22].run_pct
        ),
        (
            Some(1_640_825_583.0),
            Some(2.09),
            Some("insn per cycle"),
            Some(60.01)
        )
    );
    // 5,373,764      CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE:u #    4.358 M/sec     (39.98%)
    let wide = &r[27];
    assert_eq!(
        (
            wide.event.as_str(),
            wide.value,
            wide.metric_value,
            wide.run_pct
        ),
        (
            "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE:u",
            Some(5_373_764.0),
            Some(4.358),
            Some(39.98)
        )
    );
    assert_eq!(r[30].event, "UOPS_ISSUED.ANY:u");
    assert_eq!(r[33].value, Some(0.959892));
    let tma: Vec<usize> = out
        .warnings
        .iter()
        .filter(|w| w.text.contains("tma_"))
        .map(|w| w.line)
        .collect();
    assert_eq!(tma, [54, 55, 56, 57]);
    // Nothing else of the prose or of perf bench's output is a row.
    assert!(out
        .warnings
        .iter()
        .all(|w| !w.text.contains("Performance counter")));
    assert_eq!(out.warnings.len(), 4 + 17, "{:#?}", out.warnings);
}

/// `--repeat 10`: the `(10 runs)` header, each counter's variance and the trailer's
/// `11.1575 +- 0.0207 seconds time elapsed  ( +-  0.19% )`.
#[test]
fn perf_stat_human_repeat_10_mail() {
    let out = perf_stat::parse_human(&fixture("perf_stat", "perf-6.x-repeat-10-mail")).unwrap();
    assert_eq!(out.rows.len(), 16, "{:?}", out.warnings);
    assert!(out.rows.iter().all(|r| r.runs == Some(10)));
    let r = &out.rows;
    // 814,886,355      cycles:u                  #    0.073 GHz                      ( +-  1.79% )
    assert_eq!(
        (r[0].event.as_str(), r[0].value, r[0].variance_pct),
        ("cycles:u", Some(814_886_355.0), Some(1.79))
    );
    assert_eq!((r[0].metric_value, r[0].run_pct), (Some(0.073), None));
    // 11,112.19 msec task-clock:u              #    0.996 CPUs utilized            ( +-  0.18% )
    assert_eq!(
        (r[2].value, r[2].unit.as_deref(), r[2].variance_pct),
        (Some(11_112.19), Some("msec"), Some(0.18))
    );
    assert_eq!(
        (r[3].event.as_str(), r[3].value, r[3].variance_pct),
        ("seconds time elapsed", Some(11.1575), Some(0.19))
    );
    // The fourth block: 849,621,311 cycles ( +-  0.50% ); 11.0716 +- 0.0149 … ( +-  0.13% )
    assert_eq!(
        (r[12].value, r[12].variance_pct),
        (Some(849_621_311.0), Some(0.5))
    );
    assert_eq!(
        (r[15].value, r[15].variance_pct),
        (Some(11.0716), Some(0.13))
    );
    // The titles and their underlines.
    assert_eq!(out.warnings.len(), 8);
}

/// perf 4.x's `task-clock (msec)`, in a mail that wrapped each counter line before its
/// variance: the variance on the next line belongs to the row above.
#[test]
fn perf_stat_human_4_x_wrapped_mail() {
    let out = perf_stat::parse_human(&fixture("perf_stat", "perf-4.x-msec-wrapped-mail")).unwrap();
    // The two labels.
    assert_eq!(out.warnings.len(), 2, "{:?}", out.warnings);
    let r = &out.rows;
    assert_eq!(r.len(), 12);
    // 7269.033478      task-clock (msec)         #    0.998 CPUs utilized
    //       ( +-  0.06% )
    assert_eq!(
        (r[0].event.as_str(), r[0].value, r[0].unit.as_deref()),
        ("task-clock", Some(7269.033478), Some("msec"))
    );
    assert_eq!(
        (r[0].metric_value, r[0].variance_pct),
        (Some(0.998), Some(0.06))
    );
    // 165,132,201      branch-misses             #    1.69% of all branches
    //       ( +-  0.12% )
    assert_eq!(
        (r[4].value, r[4].metric_value, r[4].variance_pct),
        (Some(165_132_201.0), Some(1.69), Some(0.12))
    );
    assert_eq!(r[2].metric_unit.as_deref(), Some("insns per cycle"));
    // 7.287011656 seconds time elapsed /  ( +-  0.10% )
    assert_eq!(
        (r[5].value, r[5].variance_pct),
        (Some(7.287011656), Some(0.10))
    );
    // After: 31,107,548,846 cycles ( +-  0.12% ); 7.389068145 … ( +-  0.13% )
    assert_eq!(
        (r[7].value, r[7].variance_pct),
        (Some(31_107_548_846.0), Some(0.12))
    );
    assert_eq!(
        (r[11].value, r[11].variance_pct),
        (Some(7.389068145), Some(0.13))
    );
    assert!(r.iter().all(|r| r.runs == Some(10) && r.run_pct.is_none()));
}

/// A German locale: `.` groups thousands and `,` is the decimal point, in the values,
/// the metrics, the share counted and the trailer.
#[test]
fn perf_stat_human_german_locale() {
    let out =
        perf_stat::parse_human(&fixture("perf_stat", "perf-de-locale-zig-qoi-readme")).unwrap();
    assert_eq!(out.rows.len(), 13, "{:?}", out.warnings);
    let r = &out.rows;
    // 9.665,11 msec task-clock:u              #    0,997 CPUs utilized
    assert_eq!(
        (r[0].value, r[0].unit.as_deref(), r[0].metric_value),
        (Some(9665.11), Some("msec"), Some(0.997))
    );
    // 21.066      page-faults:u             #    0,002 M/sec
    assert_eq!(
        (r[3].event.as_str(), r[3].value),
        ("page-faults:u", Some(21_066.0))
    );
    // 29.757.225.002      cycles:u                  #    3,079 GHz                      (83,33%)
    assert_eq!(
        (r[4].value, r[4].metric_value, r[4].run_pct),
        (Some(29_757_225_002.0), Some(3.079), Some(83.33))
    );
    // 317.453.390      stalled-cycles-frontend:u #    1,07% frontend cycles idle     (83,33%)
    assert_eq!(
        (
            r[5].event.as_str(),
            r[5].value,
            r[5].metric_value,
            r[5].metric_unit.as_deref()
        ),
        (
            "stalled-cycles-frontend:u",
            Some(317_453_390.0),
            Some(1.07),
            Some("frontend cycles idle")
        )
    );
    // 18.947.655.057      branches:u                # 1960,417 M/sec                    (83,31%)
    assert_eq!(
        (r[8].value, r[8].metric_value),
        (Some(18_947_655_057.0), Some(1960.417))
    );
    let times: Vec<_> = r[10..]
        .iter()
        .map(|r| (r.event.as_str(), r.value))
        .collect();
    assert_eq!(
        times,
        [
            ("seconds time elapsed", Some(9.693303129)),
            ("seconds user", Some(9.553127)),
            ("seconds sys", Some(0.112001)),
        ]
    );
    // The prompt, the benchmark's two lines and the second metric of instructions.
    let lines: Vec<usize> = out.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 2, 3, 15]);
}

/// A Swiss locale: thousands grouped with `’` (U+2019), the decimal point `.`; the
/// program's own `39` and `36` are not counters.
#[test]
fn perf_stat_human_apostrophe_grouping() {
    let out = perf_stat::parse_human(&fixture("perf_stat", "perf-apostrophe-grouping-lab-report"))
        .unwrap();
    assert_eq!(out.rows.len(), 26, "{:?}", out.warnings);
    let r = &out.rows;
    // 0      context-switches:u               #      0.0 cs/sec  cs_per_second
    assert_eq!(
        (r[0].value, r[0].metric_value, r[0].metric_unit.as_deref()),
        (Some(0.0), Some(0.0), Some("cs/sec  cs_per_second"))
    );
    // 408.18 msec task-clock:u                     #      8.1 CPUs  CPUs_utilized
    assert_eq!(
        (r[3].value, r[3].unit.as_deref()),
        (Some(408.18), Some("msec"))
    );
    // 51’850      L1-dcache-load-misses:u          #      4.6 %  l1d_miss_rate            (37.68%)
    assert_eq!(
        (
            r[4].event.as_str(),
            r[4].value,
            r[4].metric_value,
            r[4].metric_unit.as_deref(),
            r[4].run_pct
        ),
        (
            "L1-dcache-load-misses:u",
            Some(51_850.0),
            Some(4.6),
            Some("%  l1d_miss_rate"),
            Some(37.68)
        )
    );
    // 1’605’971’741      cpu-cycles:u
    assert_eq!(
        (r[8].event.as_str(), r[8].value),
        ("cpu-cycles:u", Some(1_605_971_741.0))
    );
    assert_eq!(r[10].value, Some(0.041198934));
    // Second run: 2’438’371’896      instructions:u
    assert_eq!(r[22].value, Some(2_438_371_896.0));
    let lines: Vec<usize> = out.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [1, 2, 3, 4, 25]);
}

/// perf 6.1 on this machine: the default events with dd's own lines, `-r 3`, `-I`
/// with `-A`, `--per-socket`, `--per-core`.
#[test]
fn perf_stat_human_6_1_layouts() {
    use perf_stat::CounterStatus;
    let out = perf_stat::parse_human(&fixture("perf_stat", "perf-6.1-human-default-dd")).unwrap();
    assert_eq!(out.rows.len(), 11);
    assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
    let r = &out.rows;
    assert_eq!((r[0].value, r[0].metric_value), (Some(4.83), Some(0.950)));
    assert_eq!(
        (r[3].event.as_str(), r[3].value, r[3].metric_unit.as_deref()),
        ("page-faults", Some(81.0), Some("K/sec"))
    );
    assert_eq!(
        (r[4].event.as_str(), r[4].status),
        ("cycles", CounterStatus::NotSupported)
    );
    assert_eq!(
        (r[10].event.as_str(), r[10].value),
        ("seconds sys", Some(0.0))
    );

    let r = perf_stat::parse_human(&fixture("perf_stat", "perf-6.1-human-repeat-3"))
        .unwrap()
        .rows;
    assert_eq!(r.len(), 9);
    assert!(r.iter().all(|r| r.runs == Some(3)));
    // 1      context-switches                 #  211.098 /sec                     ( +- 57.74% )
    assert_eq!(
        (r[1].value, r[1].metric_value, r[1].variance_pct),
        (Some(1.0), Some(211.098), Some(57.74))
    );
    assert_eq!(r[2].variance_pct, None);
    // 0.00364 +- 0.00128 seconds time elapsed  ( +- 35.25% )
    assert_eq!(
        (r[8].value, r[8].variance_pct),
        (Some(0.00364), Some(35.25))
    );

    let out =
        perf_stat::parse_human(&fixture("perf_stat", "perf-6.1-human-interval-per-cpu")).unwrap();
    assert_eq!(out.rows.len(), 18);
    assert_eq!(out.warnings.len(), 1);
    let r = &out.rows;
    // 0.100322006 CPU1                   100.41 msec task-clock
    assert_eq!(
        (r[1].time_s, r[1].cpu.as_deref(), r[1].cpus, r[1].value),
        (Some(0.100322006), Some("CPU1"), None, Some(100.41))
    );
    // 0.200894737 CPU1                       44      context-switches
    assert_eq!(
        (
            r[9].time_s,
            r[9].cpu.as_deref(),
            r[9].event.as_str(),
            r[9].value
        ),
        (
            Some(0.200894737),
            Some("CPU1"),
            "context-switches",
            Some(44.0)
        )
    );
    assert_eq!(
        (r[17].status, r[17].time_s),
        (CounterStatus::NotSupported, Some(0.251041165))
    );

    let r = perf_stat::parse_human(&fixture("perf_stat", "perf-6.1-human-per-socket"))
        .unwrap()
        .rows;
    assert_eq!(r.len(), 4);
    // S0        2               4413      page-faults
    assert_eq!(
        (
            r[2].cpu.as_deref(),
            r[2].cpus,
            r[2].event.as_str(),
            r[2].value
        ),
        (Some("S0"), Some(2), "page-faults", Some(4413.0))
    );
    let r = perf_stat::parse_human(&fixture("perf_stat", "perf-6.1-human-per-core"))
        .unwrap()
        .rows;
    assert_eq!(r.len(), 5);
    // S0-D0-C1           1                141      context-switches
    assert_eq!(
        (
            r[3].cpu.as_deref(),
            r[3].cpus,
            r[3].value,
            r[3].metric_unit.as_deref()
        ),
        (Some("S0-D0-C1"), Some(1), Some(141.0), Some("K/sec"))
    );
}

/// `-G` and `--for-each-cgroup`: the cgroup follows the event, in the human format
/// (where perf 6.1 pads counted and not counted events differently) and in the CSV
/// (also with `-r` and with `-I -A`).
#[test]
fn perf_stat_cgroups_human_and_csv() {
    use perf_stat::CounterStatus;
    for name in ["perf-6.1-human-cgroup", "perf-6.1-human-for-each-cgroup"] {
        let out = perf_stat::parse_human(&fixture("perf_stat", name)).unwrap();
        assert!(out.warnings.is_empty(), "{name}: {:?}", out.warnings);
        let r: Vec<_> = out
            .rows
            .iter()
            .map(|r| {
                (
                    r.unit.as_deref(),
                    r.event.as_str(),
                    r.cgroup.as_deref(),
                    r.status,
                )
            })
            .collect();
        assert_eq!(
            r,
            [
                (
                    Some("msec"),
                    "task-clock",
                    Some("/"),
                    CounterStatus::Counted
                ),
                (
                    None,
                    "context-switches",
                    Some("/"),
                    CounterStatus::NotCounted
                ),
                (
                    Some("s"),
                    "seconds time elapsed",
                    None,
                    CounterStatus::Counted
                ),
            ],
            "{name}"
        );
    }
    let r = perf_stat::parse_human(&fixture("perf_stat", "perf-6.1-human-cgroup"))
        .unwrap()
        .rows;
    assert_eq!((r[0].value, r[0].metric_value), (Some(402.39), Some(2.0)));

    // 402.32,msec,task-clock,/,418096127,100.00,2.000,CPUs utilized
    let out = perf_stat::parse(&fixture("perf_stat", "perf-6.1-csv-cgroup")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let t = &out.rows[0];
    assert_eq!(
        (
            t.value,
            t.event.as_str(),
            t.cgroup.as_deref(),
            t.run_time_ns,
            t.run_pct
        ),
        (
            Some(402.32),
            "task-clock",
            Some("/"),
            Some(418_096_127),
            Some(100.0)
        )
    );
    assert_eq!(
        (t.metric_value, t.metric_unit.as_deref()),
        (Some(2.0), Some("CPUs utilized"))
    );
    assert_eq!(
        (out.rows[1].status, out.rows[1].cgroup.as_deref()),
        (CounterStatus::NotCounted, Some("/"))
    );

    // 32,,context-switches,/,5.80%,1670,100.00,158.310,/sec
    let r = perf_stat::parse(&fixture("perf_stat", "perf-6.1-csv-cgroup-repeat-3"))
        .unwrap()
        .rows;
    assert_eq!(r.len(), 3);
    assert_eq!(
        (
            r[1].value,
            r[1].cgroup.as_deref(),
            r[1].variance_pct,
            r[1].run_time_ns
        ),
        (Some(32.0), Some("/"), Some(5.80), Some(1670))
    );
    assert_eq!(
        (r[1].metric_value, r[1].metric_unit.as_deref()),
        (Some(158.310), Some("/sec"))
    );
    assert_eq!(
        (r[0].variance_pct, r[0].run_time_ns),
        (Some(0.02), Some(203_847_766))
    );

    // 0.151009408,CPU1,<not counted>,msec,task-clock,/,0,100.00,,
    let r = perf_stat::parse(&fixture(
        "perf_stat",
        "perf-6.1-csv-cgroup-interval-per-cpu",
    ))
    .unwrap()
    .rows;
    assert_eq!(r.len(), 4);
    assert_eq!(
        (
            r[3].time_s,
            r[3].cpu.as_deref(),
            r[3].unit.as_deref(),
            r[3].cgroup.as_deref()
        ),
        (Some(0.151009408), Some("CPU1"), Some("msec"), Some("/"))
    );
    assert_eq!(
        (r[3].status, r[3].run_time_ns),
        (CounterStatus::NotCounted, Some(0))
    );

    let r = perf_stat::parse(&fixture("perf_stat", "perf-6.1-csv-for-each-cgroup"))
        .unwrap()
        .rows;
    assert_eq!(
        (r[0].value, r[0].cgroup.as_deref(), r[0].run_time_ns),
        (Some(202.38), Some("/"), Some(219_850_104))
    );
    // Without a cgroup column there is no cgroup.
    let r = perf_stat::parse(&fixture("perf_stat", "perf-6.x-hybrid-topdown-csv-mail"))
        .unwrap()
        .rows;
    assert!(r.iter().all(|r| r.cgroup.is_none()));
}
