//! Issue 15 part 3: on a real loop-mounted XFS with the reverse-mapping btree, the block
//! map made from one GETFSMAP stream (+ BULKSTAT + a getdents walk) equals the FIEMAP
//! walk's, frame for frame, on fragmented, sparse, preallocated, hard-linked, reflinked,
//! empty and attribute-carrying files in several directories; `--method auto` picks
//! GETFSMAP only where it can and says which it used (needs root, mkfs.xfs, losetup,
//! xfs_io, cp --reflink, python3).

use fslab::blockmap::{self, getfsmap, walk};
use polars::prelude::{ParquetReader, SerReader};
use std::path::Path;
use std::process::Command;

mod loopfs;
use loopfs::{run, LoopFs};

fn sh(script: &str) {
    run("bash", &["-euo", "pipefail", "-c", script]);
}

fn require_root() -> bool {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: blockmap_getfsmap needs root (loop devices, mount)");
        return false;
    }
    true
}

/// Files of every kind the two methods must agree on.
fn populate(m: &str) {
    sh(&format!(
        "cd {m} && mkdir -p a/b/c d e && \
         for i in $(seq 40); do head -c 8192 /dev/urandom > a/f$i; done && \
         for i in $(seq 5); do echo $i > a/b/c/g$i; done && \
         : > d/empty && truncate -s 1M d/hole-only && \
         xfs_io -f -c 'pwrite -S 1 0 64k' -c 'pwrite -S 2 1m 64k' -c 'falloc 4m 1m' \
                   -c 'pwrite -S 3 6m 4k' -c 'truncate 8m' -c fsync d/sparse >/dev/null && \
         for i in $(seq 12); do \
           xfs_io -f -c \"pwrite $((i*8192)) 4k\" -c fsync d/frag >/dev/null; \
           xfs_io -f -c \"pwrite $((i*8192)) 4k\" -c fsync d/frag2 >/dev/null; \
         done && \
         ln a/f1 e/hard && cp --reflink=always a/f2 e/reflinked && \
         python3 -c \"import os; os.setxattr('a/f3', 'user.big', b'x' * 3000)\" && \
         sync -f ."
    ));
}

fn opts(include_dirs: bool) -> walk::WalkOptions {
    walk::WalkOptions {
        include_dirs,
        ..Default::default()
    }
}

#[test]
fn getfsmap_and_fiemap_give_the_same_frames_on_xfs() {
    if !require_root() {
        return;
    }
    let g = LoopFs::xfs("fsmap-eq", "512M", &["-m", "rmapbt=1,reflink=1"]);
    let m = g.mnt.to_str().unwrap().to_string();
    populate(&m);
    assert_eq!(getfsmap::probe(&g.mnt), Ok(()));
    // `auto`'s memory bound counts the inodes in use (populate made more than 10).
    match getfsmap::probe_within(&g.mnt, 10) {
        Err(getfsmap::Unusable::TooManyInodes { inodes, limit: 10 }) => assert!(inodes > 10),
        other => panic!("{other:?}"),
    }
    assert_eq!(getfsmap::probe_within(&g.mnt, 1_000_000), Ok(()));
    let roots = [g.mnt.clone()];

    // Files only: FIEMAP cannot map XFS directories (EOPNOTSUPP), so the frames are
    // compared without them, and must be equal in every column and row.
    let fie = blockmap::capture_items(walk::stream(&roots, &opts(false)).unwrap()).unwrap();
    let fsm = blockmap::capture_items(getfsmap::stream(&roots, &opts(false)).unwrap()).unwrap();
    assert!(fie.errors.is_empty(), "{:?}", fie.errors);
    assert!(fsm.errors.is_empty(), "{:?}", fsm.errors);
    assert!(fie.extents.height() > 60, "{}", fie.extents);
    assert_eq!(
        fie.extents, fsm.extents,
        "\n{}\n{}",
        fie.extents, fsm.extents
    );
    assert_eq!(fie.per_file, fsm.per_file);
    assert_eq!(fie.filesystem, fsm.filesystem);

    // The cases are there: fragments, holes, unwritten, shared, a hard link twice, eof.
    let map = walk::map_tree(&g.mnt, &opts(false)).unwrap();
    let rows = |suffix: &str| -> Vec<&blockmap::Extent> {
        map.extents
            .iter()
            .filter(|e| e.path.ends_with(suffix))
            .collect()
    };
    let per = blockmap::summary::per_file_with(&map.files, &map.extents);
    let frag = per.iter().find(|s| s.path.ends_with("/d/frag")).unwrap();
    assert!(frag.fragments > 1, "{frag:?}");
    let sparse = rows("/d/sparse");
    assert!(
        sparse.iter().any(|e| e.flags.contains("unwritten")),
        "{sparse:?}"
    );
    assert!(
        sparse.iter().any(|e| e.logical_bytes == 6 << 20),
        "{sparse:?}"
    );
    assert!(rows("/e/reflinked")[0].flags.contains("shared"));
    assert_eq!(rows("/e/hard")[0].inode, rows("/a/f1")[0].inode);
    assert!(rows("/d/hole-only").is_empty() && rows("/d/empty").is_empty());
    assert!(map.files.iter().any(|f| f.path.ends_with("/d/hole-only")));

    // With directories: GETFSMAP maps them too; FIEMAP reports each as an error; the
    // files' rows stay the same.
    let fie_d = walk::map_tree(&g.mnt, &opts(true)).unwrap();
    let fsm_d = blockmap::capture_items(getfsmap::stream(&roots, &opts(true)).unwrap()).unwrap();
    let dirs = ["", "/a", "/a/b", "/a/b/c", "/d", "/e"];
    assert_eq!(fie_d.errors.len(), dirs.len(), "{:?}", fie_d.errors);
    assert!(fie_d.errors.iter().all(|e| e.error.contains("EOPNOTSUPP")));
    assert!(fsm_d.errors.is_empty(), "{:?}", fsm_d.errors);
    let paths: Vec<String> = fsm_d
        .per_file
        .column("path")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|p| p.unwrap().to_string())
        .collect();
    for d in dirs {
        let want = format!("{m}{d}");
        assert!(paths.contains(&want), "{want}");
    }
    let files_only = fsm_d
        .extents
        .filter(
            &fsm_d
                .extents
                .column("path")
                .unwrap()
                .str()
                .unwrap()
                .iter()
                .map(|p| {
                    let p = p.unwrap();
                    !dirs.iter().any(|d| p == format!("{m}{d}"))
                })
                .collect(),
        )
        .unwrap();
    assert_eq!(files_only, fie.extents);
}

#[test]
fn bulkstat_by_allocation_group_finds_every_inode_and_its_size() {
    if !require_root() {
        return;
    }
    // Eight allocation groups, read by one thread per CPU (several groups each); XFS
    // puts new directories in different groups, so the files are spread over them.
    let g = LoopFs::xfs("fsmap-ags", "2G", &["-m", "rmapbt=1", "-d", "agcount=8"]);
    let m = g.mnt.to_str().unwrap().to_string();
    sh(&format!(
        "cd {m} && for d in $(seq 16); do mkdir d$d; \
           for f in $(seq 20); do head -c $((d * 1000 + f)) /dev/zero > d$d/f$f; done; done && \
         sync -f ."
    ));
    let sizes = getfsmap::inode_sizes(&g.mnt).unwrap();
    // What the tree holds, every directory and file (the root included).
    let mut want: Vec<(u64, u64)> = Vec::new();
    let mut pending = vec![g.mnt.clone()];
    while let Some(p) = pending.pop() {
        let md = std::fs::symlink_metadata(&p).unwrap();
        want.push((
            std::os::unix::fs::MetadataExt::ino(&md),
            std::os::unix::fs::MetadataExt::size(&md),
        ));
        if md.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                pending.push(e.unwrap().path());
            }
        }
    }
    want.sort_unstable();
    assert_eq!(want.len(), 1 + 16 + 16 * 20);
    assert_eq!(sizes, want);
    // The groups are really several: inode numbers carry the group in their high bits.
    let groups: std::collections::BTreeSet<u64> = sizes.iter().map(|(i, _)| i >> 20).collect();
    assert!(groups.len() > 2, "{groups:?}");
}

fn fslab(args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The `fslab.blockmap.method` of a parquet file.
fn method_of(path: &Path) -> String {
    let mut r = ParquetReader::new(std::fs::File::open(path).unwrap());
    let md = r.get_metadata().unwrap();
    md.key_value_metadata()
        .as_ref()
        .unwrap()
        .iter()
        .find(|kv| kv.key == "fslab.blockmap.method")
        .and_then(|kv| kv.value.clone())
        .unwrap()
}

#[test]
fn auto_uses_getfsmap_only_where_it_can_and_says_so() {
    if !require_root() {
        return;
    }
    let with = LoopFs::xfs("fsmap-auto", "512M", &["-m", "rmapbt=1"]);
    let without = LoopFs::xfs("fsmap-no", "512M", &["-m", "rmapbt=0"]);
    for g in [&with, &without] {
        populate(g.mnt.to_str().unwrap());
    }
    let out = with.dir.join("x.parquet");
    let o = out.to_str().unwrap();

    let (ok, err) = fslab(&["blockmap", with.mnt.to_str().unwrap(), "--no-dirs", "-o", o]);
    assert!(ok, "{err}");
    assert!(err.contains("method getfsmap (auto"), "{err}");
    assert_eq!(method_of(&out), "getfsmap");
    let via_fsmap = ParquetReader::new(std::fs::File::open(&out).unwrap());
    let via_fsmap = SerReader::finish(via_fsmap).unwrap();

    let (ok, err) = fslab(&[
        "blockmap",
        with.mnt.to_str().unwrap(),
        "--no-dirs",
        "--method",
        "fiemap",
        "-o",
        o,
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("method fiemap (asked for)"), "{err}");
    assert_eq!(method_of(&out), "fiemap");
    let via_fiemap = ParquetReader::new(std::fs::File::open(&out).unwrap());
    assert_eq!(SerReader::finish(via_fiemap).unwrap(), via_fsmap);

    // No reverse map: auto falls back to FIEMAP and says why; getfsmap is refused.
    let (ok, err) = fslab(&[
        "blockmap",
        without.mnt.to_str().unwrap(),
        "--no-dirs",
        "-o",
        o,
    ]);
    assert!(ok, "{err}");
    assert!(
        err.contains("method fiemap (auto: not getfsmap:") && err.contains("rmapbt"),
        "{err}"
    );
    assert_eq!(method_of(&out), "fiemap");
    let (ok, err) = fslab(&[
        "blockmap",
        without.mnt.to_str().unwrap(),
        "--method",
        "getfsmap",
        "-o",
        o,
    ]);
    assert!(!ok);
    assert!(
        err.contains("cannot use GETFSMAP") && err.contains("rmapbt=1"),
        "{err}"
    );
}
