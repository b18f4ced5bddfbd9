//! Issue 15 part 3: on a real loop-mounted XFS with the reverse-mapping btree, the block
//! map made from one GETFSMAP stream (+ BULKSTAT + a getdents walk) equals the FIEMAP
//! walk's, frame for frame, on fragmented, sparse, preallocated, hard-linked, reflinked,
//! empty and attribute-carrying files in several directories; `--method auto` picks
//! GETFSMAP only where it can and says which it used; inode sizes read from the block
//! device after a freeze-and-thaw barrier equal the kernel's, also for files changed just
//! before, and a filesystem that a killed fslab left frozen is thawed by the next one
//! (needs root, mkfs.xfs, losetup, xfs_io, cp --reflink, python3, fsfreeze).

use fslab::blockmap::getfsmap::{Sizes, SizesRead};
use fslab::blockmap::{self, getfsmap, walk};
use polars::prelude::{ParquetReader, SerReader};
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::process::Command;

use crate::loopfs::{run, LoopFs};
use crate::require;

/// Thaws its filesystem when dropped (a failed test must not leave it frozen: its
/// unmount would wait forever).
struct ThawOnDrop(std::path::PathBuf);

impl Drop for ThawOnDrop {
    fn drop(&mut self) {
        let _ = Command::new("fsfreeze").arg("-u").arg(&self.0).output();
    }
}

/// Whether the filesystem at `mnt` is frozen: a second freeze says EBUSY (`fsfreeze -f`
/// fails) when it is; when it is not, that freeze is undone at once.
fn is_frozen(mnt: &Path) -> bool {
    let o = Command::new("fsfreeze")
        .arg("-f")
        .arg(mnt)
        .output()
        .unwrap();
    if o.status.success() {
        run("fsfreeze", &["-u", mnt.to_str().unwrap()]);
        return false;
    }
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("busy"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    true
}

fn sh(script: &str) {
    run("bash", &["-euo", "pipefail", "-c", script]);
}

/// Without root this test cannot run at all: say so (or fail under FSLAB_REQUIRE_ROOT).
fn require_root() -> bool {
    require::root(module_path!())
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
    assert!(fie.errors.is_empty(), "{:?}", fie.errors);
    assert!(fie.extents.height() > 60, "{}", fie.extents);
    // With sizes from BULKSTAT and from the device alike.
    for sizes in [Sizes::Bulkstat, Sizes::Device] {
        let (walk, read) = getfsmap::stream(&roots, &opts(false), sizes).unwrap();
        let fsm = blockmap::capture_items(walk).unwrap();
        match (sizes, &read[..]) {
            (Sizes::Bulkstat, [(_, SizesRead::Bulkstat { why: None })]) => {}
            (Sizes::Device, [(_, SizesRead::Device { rejected: 0, .. })]) => {}
            other => panic!("{other:?}"),
        }
        assert!(fsm.errors.is_empty(), "{:?}", fsm.errors);
        assert_eq!(
            fie.extents, fsm.extents,
            "{sizes:?}\n{}\n{}",
            fie.extents, fsm.extents
        );
        assert_eq!(fie.per_file, fsm.per_file);
        assert_eq!(fie.filesystem, fsm.filesystem);
    }

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

    // With directories: GETFSMAP maps them too; FIEMAP cannot (counted apart, not an
    // error); the files' rows stay the same.
    let fie_d = walk::map_tree(&g.mnt, &opts(true)).unwrap();
    let fsm_d = getfsmap::stream(&roots, &opts(true), Sizes::Auto)
        .unwrap()
        .0;
    let fsm_d = blockmap::capture_items(fsm_d).unwrap();
    let dirs = ["", "/a", "/a/b", "/a/b/c", "/d", "/e"];
    assert!(fie_d.errors.is_empty(), "{:?}", fie_d.errors);
    let unmapped: Vec<String> = dirs.iter().map(|d| format!("{m}{d}")).collect();
    assert_eq!(fie_d.unmapped_directories, unmapped);
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

/// An XFS of eight allocation groups with 16 directories of 20 files of different
/// sizes (XFS puts new directories in different groups, so the files are spread over
/// them), synced.
fn eight_groups(name: &str) -> LoopFs {
    let g = LoopFs::xfs(name, "2G", &["-m", "rmapbt=1", "-d", "agcount=8"]);
    let m = g.mnt.to_str().unwrap().to_string();
    sh(&format!(
        "cd {m} && for d in $(seq 16); do mkdir d$d; \
           for f in $(seq 20); do head -c $((d * 1000 + f)) /dev/zero > d$d/f$f; done; done && \
         sync -f ."
    ));
    g
}

#[test]
fn every_allocation_group_is_read_by_bulkstat_and_by_getfsmap() {
    if !require_root() {
        return;
    }
    // Read by one thread per CPU (several groups each).
    let g = eight_groups("fsmap-ags");
    let (sizes, how) = getfsmap::inode_sizes_from(&g.mnt, Sizes::Bulkstat).unwrap();
    assert!(matches!(how, SizesRead::Bulkstat { why: None }), "{how:?}");
    // What the tree holds, every directory and file (the root included).
    let want = tree_sizes(&g.mnt);
    assert_eq!(want.len(), 1 + 16 + 16 * 20);
    assert_eq!(sizes, want);
    // The groups are really several: inode numbers carry the group in their high bits.
    let groups: std::collections::BTreeSet<u64> = sizes.iter().map(|(i, _)| i >> 20).collect();
    assert!(groups.len() > 2, "{groups:?}");

    // GETFSMAP reads the groups' reverse maps on several threads (runs of groups by
    // address): the frame is FIEMAP's, every group's extents included.
    let roots = [g.mnt.clone()];
    let fie = blockmap::capture_items(walk::stream(&roots, &opts(false)).unwrap()).unwrap();
    let fsm = getfsmap::stream(&roots, &opts(false), Sizes::Auto)
        .unwrap()
        .0;
    let fsm = blockmap::capture_items(fsm).unwrap();
    assert!(fsm.errors.is_empty(), "{:?}", fsm.errors);
    assert_eq!(fie.extents, fsm.extents);
    let physical: std::collections::BTreeSet<i64> = fsm
        .extents
        .column("physical_bytes")
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .flatten()
        .map(|p| p / (2i64 << 30 >> 3)) // 8 groups of 256 MiB
        .collect();
    assert!(physical.len() > 4, "extents in groups {physical:?}");
}

/// Every inode of the tree below `root` (the root included) with its size, by `lstat`.
fn tree_sizes(root: &Path) -> Vec<(u64, u64)> {
    let mut want: Vec<(u64, u64)> = Vec::new();
    let mut pending = vec![root.to_path_buf()];
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
    want
}

#[test]
fn sizes_read_from_the_device_are_the_kernels_even_just_after_a_change() {
    if !require_root() {
        return;
    }
    let g = eight_groups("fsmap-dev");
    let m = g.mnt.to_str().unwrap().to_string();
    // Then, just before the map, half of the files grown or cut and new ones made: their
    // inodes are logged but not yet written back in place, so the device holds the old
    // cores until the barrier writes them.
    sh(&format!(
        "cd {m} && sleep 1 && \
         for d in $(seq 1 2 16); do for f in $(seq 10); do \
           head -c 777 /dev/zero >> d$d/f$f; truncate -s $((f * 3)) d$((d + 1))/f$f; done; \
           mkdir -p new$d && head -c 4242 /dev/zero > new$d/n; done && sync -f ."
    ));
    let want = tree_sizes(&g.mnt);
    assert_eq!(want.len(), 1 + 16 + 16 * 20 + 8 * 2);
    let (from_device, how) = getfsmap::inode_sizes_from(&g.mnt, Sizes::Device).unwrap();
    match &how {
        SizesRead::Device {
            rejected: 0,
            barrier: fslab::devices::freeze::Barrier::Made { .. },
            ..
        } => {}
        other => panic!("{other:?}"),
    }
    assert!(
        how.to_string().contains("inode sizes from /dev/loop"),
        "{how}"
    );
    // Mapped again at once, nothing changed: the log's head has not moved, no barrier.
    // (Reading the tree's directories would: their access times are logged.)
    let (again, how) = getfsmap::inode_sizes_from(&g.mnt, Sizes::Device).unwrap();
    assert!(
        matches!(
            how,
            SizesRead::Device {
                barrier: fslab::devices::freeze::Barrier::Unchanged,
                rejected: 0,
                ..
            }
        ),
        "{how:?}"
    );
    assert_eq!(again, from_device);
    // The device also holds inodes outside the tree (the realtime bitmap and summary);
    // every inode of the tree is there with the size `stat` gives.
    let of_tree: Vec<(u64, u64)> = from_device
        .iter()
        .filter(|(i, _)| want.binary_search_by_key(i, |(w, _)| *w).is_ok())
        .copied()
        .collect();
    assert_eq!(of_tree, want);
    let (bulk, _) = getfsmap::inode_sizes_from(&g.mnt, Sizes::Bulkstat).unwrap();
    for (ino, size) in &bulk {
        assert_eq!(
            from_device.binary_search(&(*ino, *size)).map(|_| ()),
            Ok(()),
            "inode {ino}: BULKSTAT says {size}"
        );
    }
    // The barrier thawed the filesystem, and left no record naming it (other fslab
    // processes' records may come and go meanwhile).
    assert!(!is_frozen(&g.mnt));
    let dev = std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(&g.mnt).unwrap());
    let ours = format!(
        "{}:{}\n",
        nix::sys::stat::major(dev),
        nix::sys::stat::minor(dev)
    );
    let records: Vec<_> = std::fs::read_dir(fslab::devices::freeze::record_dir())
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with("clean-"))
        .filter(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t == ours))
        .map(|e| e.file_name())
        .collect();
    assert!(records.is_empty(), "{records:?}");

    // One file changed: the head moves, so the barrier is made again, and the new size
    // is read (without the barrier the device would still hold the old one).
    let victim = g.mnt.join("d3/f4");
    std::fs::write(&victim, vec![1u8; 12345]).unwrap();
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&victim).unwrap());
    let (after, how) = getfsmap::inode_sizes_from(&g.mnt, Sizes::Device).unwrap();
    assert!(
        matches!(
            how,
            SizesRead::Device {
                barrier: fslab::devices::freeze::Barrier::Made { .. },
                rejected: 0,
                ..
            }
        ),
        "{how:?}"
    );
    assert!(after.binary_search(&(ino, 12345)).is_ok(), "{after:?}");
}

#[test]
fn a_filesystem_frozen_by_someone_else_is_read_and_left_frozen() {
    if !require_root() {
        return;
    }
    // 1 KiB blocks: two inodes a block (the other tests: 4 KiB blocks, 8 or 4 inodes).
    let g = LoopFs::xfs(
        "fsmap-frozen",
        "512M",
        &["-m", "rmapbt=1", "-b", "size=1024"],
    );
    populate(g.mnt.to_str().unwrap());
    let want = tree_sizes(&g.mnt);
    let _thaw = ThawOnDrop(g.mnt.clone());
    run("fsfreeze", &["-f", g.mnt.to_str().unwrap()]);
    let (sizes, how) = getfsmap::inode_sizes_from(&g.mnt, Sizes::Device).unwrap();
    assert!(
        matches!(
            how,
            SizesRead::Device {
                barrier: fslab::devices::freeze::Barrier::AlreadyFrozen,
                rejected: 0,
                ..
            }
        ),
        "{how:?}"
    );
    assert!(is_frozen(&g.mnt), "someone else's freeze was undone");
    for w in &want {
        assert!(sizes.binary_search(w).is_ok(), "{w:?}");
    }
}

#[test]
fn a_filesystem_that_a_killed_fslab_left_frozen_is_thawed_by_the_next() {
    if !require_root() {
        return;
    }
    let g = LoopFs::xfs("fsmap-killed", "512M", &["-m", "rmapbt=1"]);
    let _thaw = ThawOnDrop(g.mnt.clone());
    // What a SIGKILL between FIFREEZE and FITHAW leaves: the filesystem frozen and the
    // record of a process that is gone (pid 4194305 is above any pid_max).
    // In a record directory of its own: other fslab processes (tests run in parallel)
    // reclaim the records of dead processes in the shared one, which would thaw this
    // filesystem before the `fslab cleanup` under test.
    let dev = std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(&g.mnt).unwrap());
    let dir = &g.dir.join("freeze-records");
    std::fs::DirBuilder::new().mode(0o700).create(dir).unwrap();
    let record = dir.join("4194305-1-0");
    std::fs::write(
        &record,
        format!(
            "{}:{}\n",
            nix::sys::stat::major(dev),
            nix::sys::stat::minor(dev)
        ),
    )
    .unwrap();
    run("fsfreeze", &["-f", g.mnt.to_str().unwrap()]);
    assert!(is_frozen(&g.mnt));
    let work = g.dir.join("work");
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(["cleanup", "--work-dir", work.to_str().unwrap()])
        .env("FSLAB_FREEZE_RECORDS", dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains(&format!("thawed {}", g.mnt.display())),
        "{out}"
    );
    assert!(!is_frozen(&g.mnt));
    assert!(!record.exists());
    // A record whose process lives is not touched (this test's own process).
    let own = dir.join(format!("{}-0-0", std::process::id()));
    std::fs::write(&own, "1:1\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(["cleanup", "--work-dir", work.to_str().unwrap()])
        .env("FSLAB_FREEZE_RECORDS", dir)
        .output()
        .unwrap();
    assert!(o.status.success());
    let kept = own.exists();
    std::fs::remove_file(&own).unwrap();
    assert!(kept, "the record of a live process was removed");
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
    meta_of(path, "fslab.blockmap.method")
}

/// A parquet file's frame.
fn frame_of(path: &Path) -> polars::prelude::DataFrame {
    SerReader::finish(ParquetReader::new(std::fs::File::open(path).unwrap())).unwrap()
}

/// A key's value in a parquet file's metadata.
fn meta_of(path: &Path, key: &str) -> String {
    let mut r = ParquetReader::new(std::fs::File::open(path).unwrap());
    let md = r.get_metadata().unwrap();
    md.key_value_metadata()
        .as_ref()
        .unwrap()
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone())
        .unwrap_or_else(|| panic!("no {key}"))
}

#[test]
fn auto_uses_getfsmap_only_where_it_can_and_says_so() {
    if !require_root() {
        return;
    }
    // 1 KiB inodes (four a block).
    let with = LoopFs::xfs("fsmap-auto", "512M", &["-m", "rmapbt=1", "-i", "size=1024"]);
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
    // On a loop device, auto reads the inode sizes from the device, and says so.
    assert!(
        err.contains("inode sizes from /dev/loop")
            && err.contains("barrier")
            && !err.contains("not believed"),
        "{err}"
    );
    assert_eq!(meta_of(&out, "fslab.blockmap.sizes"), "device");
    let via_fsmap = frame_of(&out);

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
    assert_eq!(frame_of(&out), via_fsmap);

    // BULKSTAT when asked for; the same frame.
    let (ok, err) = fslab(&[
        "blockmap",
        with.mnt.to_str().unwrap(),
        "--no-dirs",
        "--sizes-from",
        "bulkstat",
        "-o",
        o,
    ]);
    assert!(ok, "{err}");
    assert!(err.contains(": inode sizes from BULKSTAT\n"), "{err}");
    assert_eq!(meta_of(&out, "fslab.blockmap.sizes"), "bulkstat");
    assert_eq!(frame_of(&out), via_fsmap);
    let (ok, err) = fslab(&["blockmap", o, "--sizes-from", "kernel"]);
    assert!(!ok && err.contains("bulkstat, device or auto"), "{err}");

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
