//! Issue 16: on a real loop-mounted ext4 and XFS (made here, released by a guard also on
//! failure), every block-map tool fslab parses and fslab's own FIEMAP walk agree on the
//! byte extents of the same sparse, partly preallocated file, with holes where a tool
//! prints them (needs root, mkfs.ext4, mkfs.xfs, losetup, filefrag, xfs_io, xfs_bmap,
//! debugfs, dumpe2fs).
//!
//! How the tools' rows differ, and what is compared:
//! - `filefrag -v` prints one row per FIEMAP extent (it never prints holes); its
//!   `N extents found` merges rows that are physically contiguous, so it can be lower than
//!   the row count. `xfs_bmap -v` and `xfs_io fiemap -v` print holes as rows, and xfs_bmap
//!   splits or merges at its own record boundaries (unwritten and written parts of one
//!   allocation are separate records). debugfs lists the ext4 extent records, with extent
//!   tree blocks (`ETBn`) among them.
//! - So rows are compared after merging data rows that continue each other both
//!   logically and physically (the union of mapped bytes and where they are): every tool
//!   gives the same runs. Holes are compared with the gaps between those runs.

use fslab::blockmap::walk;
use fslab::parse::map::{MapOptions, MapRow};
use fslab::parse::{self, Kind};
use std::process::Command;

use crate::loopfs::{run, LoopFs};
use crate::require;

/// Without root this test cannot run at all: say so (or fail under FSLAB_REQUIRE_ROOT).
fn require_root() -> bool {
    require::root(module_path!())
}

/// Run a tool and return its stdout (it must succeed).
fn out(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// (logical, physical, length) bytes of data rows, contiguous rows merged.
fn runs<'a>(rows: impl IntoIterator<Item = &'a MapRow>) -> Vec<(u64, u64, u64)> {
    let mut v: Vec<(u64, u64, u64)> = Vec::new();
    for r in rows {
        if r.has_flag("hole") || r.has_flag("metadata") {
            continue;
        }
        let (l, p, n) = (
            r.logical_bytes.expect("logical bytes"),
            r.physical_bytes.expect("physical bytes"),
            r.length_bytes.expect("length bytes"),
        );
        match v.last_mut() {
            Some(last) if last.0 + last.2 == l && last.1 + last.2 == p => last.2 += n,
            _ => v.push((l, p, n)),
        }
    }
    v
}

/// (logical, length) bytes of hole rows, adjacent holes merged.
fn holes<'a>(rows: impl IntoIterator<Item = &'a MapRow>) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = Vec::new();
    for r in rows.into_iter().filter(|r| r.has_flag("hole")) {
        let (l, n) = (r.logical_bytes.unwrap(), r.length_bytes.unwrap());
        match v.last_mut() {
            Some(last) if last.0 + last.1 == l => last.1 += n,
            _ => v.push((l, n)),
        }
    }
    v
}

/// The gaps between runs, up to `end`.
fn gaps(runs: &[(u64, u64, u64)], end: u64) -> Vec<(u64, u64)> {
    let mut at = 0;
    let mut v = Vec::new();
    for &(l, _, n) in runs {
        if l > at {
            v.push((at, l - at));
        }
        at = l + n;
    }
    if end > at {
        v.push((at, end - at));
    }
    v
}

fn rows(kind: Kind, text: &str, opts: MapOptions) -> Vec<MapRow> {
    let p = parse::parse_json_with(kind, text, opts).unwrap();
    assert!(p.warnings.is_empty(), "{kind}: {:?}\n{text}", p.warnings);
    // The rows through the JSON document, as `fslab parse --json` prints them.
    let doc = p.json_document();
    let files = doc.as_array().unwrap();
    assert_eq!(files.len(), 1, "{kind}: one file");
    files[0]["extents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| MapRow {
            flags: r["flags"].as_str().unwrap().to_string().into(),
            logical_bytes: r["logical_bytes"].as_u64(),
            physical_bytes: r["physical_bytes"].as_u64(),
            length_bytes: r["length_bytes"].as_u64(),
            ..Default::default()
        })
        .collect()
}

/// The sparse file: data, a hole, data, preallocated (unwritten) space, data at the end
/// of a trailing hole, and a size beyond the last block.
const MAKE: &str = "pwrite -S 0x61 0 192k; pwrite -S 0x62 1m 256k; falloc 2m 128k; \
                    pwrite -S 0x63 2112k 16k; pwrite -S 0x64 5m 64k; truncate 6m; fsync";

fn make_file(g: &LoopFs) -> String {
    let f = g.mnt.join("sparse");
    let f = f.to_str().unwrap().to_string();
    let mut args = vec!["-f".to_string()];
    for c in MAKE.split("; ") {
        args.push("-c".into());
        args.push(c.to_string());
    }
    args.push(f.clone());
    run(
        "xfs_io",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    run("sync", &[]);
    f
}

fn walk_rows(f: &str) -> Vec<MapRow> {
    let map = walk::map_tree(std::path::Path::new(f), &walk::WalkOptions::default()).unwrap();
    assert!(map.errors.is_empty(), "{:?}", map.errors);
    map.extents
        .iter()
        .map(|e| MapRow {
            flags: e.flags.clone(),
            logical_bytes: Some(e.logical_bytes),
            physical_bytes: e.physical_bytes,
            length_bytes: Some(e.length_bytes),
            ..Default::default()
        })
        .collect()
}

#[test]
fn ext4_filefrag_fiemap_debugfs_and_walk_agree() {
    if !require_root() {
        return;
    }
    // 1 KiB blocks: a block size the old 4096 default got wrong.
    let mut g = LoopFs::ext4("xcheck-ext4", "64M", &["-b", "1024"]);
    let f = make_file(&g);
    let size = 6 << 20;

    let ff_text = out("filefrag", &["-v", &f]);
    let ff = rows(Kind::Filefrag, &ff_text, MapOptions::default());
    let fm = rows(
        Kind::XfsIoFiemap,
        &out("xfs_io", &["-c", "fiemap -v", &f]),
        MapOptions::default(),
    );
    let walk = walk_rows(&f);
    g.unmount_and_detach_keep_image();

    // debugfs does not print the block size: dumpe2fs of the same image does.
    let dumpe2fs = out("dumpe2fs", &["-h", g.img()]);
    let bs = parse::geometry_block_size(Kind::Dumpe2fs, &dumpe2fs).unwrap();
    assert_eq!(bs, 1024);
    let stat_text = out("debugfs", &["-R", "stat /sparse", g.img()]);
    let stat = rows(Kind::DebugfsStat, &stat_text, MapOptions::geometry(bs));
    // Without it, no bytes and a warning, never a guess.
    let unknown = parse::parse(Kind::DebugfsStat, &stat_text).unwrap();
    assert!(unknown
        .warnings
        .iter()
        .any(|w| w.reason.contains("block size unknown")));
    assert_eq!(
        unknown.frame.column("length_bytes").unwrap().null_count(),
        unknown.frame.height()
    );

    let expected = runs(&walk);
    assert!(expected.len() >= 4, "{expected:?}");
    assert_eq!(runs(&ff), expected, "filefrag -v\n{ff_text}");
    assert_eq!(runs(&fm), expected, "xfs_io fiemap -v");
    assert_eq!(runs(&stat), expected, "debugfs stat\n{stat_text}");
    // Holes: xfs_io prints them (on ext4 up to the file size); filefrag and debugfs do not.
    let end = map_end(&fm, &expected);
    assert_eq!(end, size);
    assert_eq!(holes(&fm), gaps(&expected, end));
    assert!(holes(&ff).is_empty() && holes(&stat).is_empty());
}

#[test]
fn xfs_filefrag_bmap_fiemap_and_walk_agree() {
    if !require_root() {
        return;
    }
    let g = LoopFs::xfs("xcheck-xfs", "512M", &[]);
    let f = make_file(&g);
    let bmap_text = out("xfs_bmap", &["-v", &f]);
    let bmap = rows(Kind::XfsBmap, &bmap_text, MapOptions::default());
    let ff = rows(
        Kind::Filefrag,
        &out("filefrag", &["-v", &f]),
        MapOptions::default(),
    );
    let fm = rows(
        Kind::XfsIoFiemap,
        &out("xfs_io", &["-c", "fiemap -v", &f]),
        MapOptions::default(),
    );
    let walk = walk_rows(&f);

    let expected = runs(&walk);
    assert!(expected.len() >= 3, "{expected:?}");
    assert_eq!(runs(&bmap), expected, "xfs_bmap -v\n{bmap_text}");
    assert_eq!(runs(&ff), expected, "filefrag -v");
    assert_eq!(runs(&fm), expected, "xfs_io fiemap -v");
    // xfs_bmap and xfs_io print the holes, up to the file size.
    let end = map_end(&bmap, &expected);
    assert_eq!(end, 6 << 20);
    assert_eq!(holes(&bmap), gaps(&expected, end), "{bmap_text}");
    assert_eq!(holes(&fm), holes(&bmap));
    assert!(holes(&ff).is_empty());
    // AG and AG-OFFSET are there for every data row of xfs_bmap -v, not for holes.
    let p = parse::parse(Kind::XfsBmap, &bmap_text).unwrap();
    let hole_rows = bmap.iter().filter(|r| r.has_flag("hole")).count();
    assert!(hole_rows >= 2);
    for c in ["ag", "ag_offset_start", "ag_offset_end"] {
        assert_eq!(p.frame.column(c).unwrap().null_count(), hole_rows, "{c}");
    }
}

/// Where a listing's rows end: the end of its last hole or data run.
fn map_end(rows: &[MapRow], runs: &[(u64, u64, u64)]) -> u64 {
    let h = holes(rows).last().map_or(0, |h| h.0 + h.1);
    let d = runs.last().map_or(0, |r| r.0 + r.2);
    h.max(d)
}
