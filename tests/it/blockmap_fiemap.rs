//! FIEMAP in process against `filefrag -v` and against debugfs, on a real loop-mounted
//! ext4 image with a fragmented file (needs root, mkfs.ext4, losetup, filefrag, debugfs,
//! xfs_io). The loop device and the mount are released by a guard, also on failure.

use fslab::blockmap::{debugfs, summary, walk, Extent};
use fslab::parse::filefrag;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::loopfs::{run, LoopFs};
use crate::require;

fn sh(script: &str) {
    run("bash", &["-euo", "pipefail", "-c", script]);
}

/// Without root this test cannot run at all: say so (or fail under FSLAB_REQUIRE_ROOT).
fn require_root() -> bool {
    require::root(module_path!())
}

type Key = (u64, u64, Option<u64>, u64, String);

fn key(e: &Extent) -> Key {
    (
        e.index,
        e.logical_bytes,
        e.physical_bytes,
        e.length_bytes,
        e.flags.to_string(),
    )
}

#[test]
fn fiemap_frame_equals_filefrag_and_debugfs_agrees() {
    if !require_root() {
        return;
    }
    let mut g = LoopFs::ext4("fiemap", "96M", &["-b", "4096", "-m", "0"]);
    let m = g.mnt.to_str().unwrap().to_string();

    // A fragmented file G: fill the fs with F, punch every other block of F's first 6000,
    // write G into the single-block holes until ENOSPC. Plus a few other kinds of file.
    sh(&format!(
        "cd {m}
         mkdir -p d/sub
         for i in $(seq 1 400); do echo $i > d/entry-with-a-long-name-$i; done
         fallocate -l 4M d/sub/prealloc && dd if=/dev/urandom of=d/sub/prealloc bs=64k count=3 conv=notrunc status=none
         dd if=/dev/urandom of=sparse bs=4k count=2 seek=50 status=none
         : > empty
         dd if=/dev/zero of=F bs=1M status=none 2>/dev/null || true
         sync -f .
         for ((b = 1; b < 6000; b += 2)); do echo \"fpunch $((b * 4096)) 4096\"; done | xfs_io F
         sync -f .
         dd if=/dev/zero of=G bs=4k status=none 2>/dev/null || true
         sync -f ."
    ));

    // FIEMAP, in process, over the whole tree.
    let map = walk::map_tree(&g.mnt, &walk::WalkOptions::default()).unwrap();
    assert!(map.errors.is_empty(), "{:?}", map.errors);
    let g_rows: Vec<&Extent> = map
        .extents
        .iter()
        .filter(|e| e.path.ends_with("/G"))
        .collect();
    assert!(g_rows.len() > 2000, "G has only {} extents", g_rows.len());

    // The runner's entry point gives the same rows as frames.
    let cap = fslab::blockmap::capture_mounted(&g.mnt, &walk::WalkOptions::default()).unwrap();
    assert_eq!(cap.extents.height(), map.extents.len());
    assert_eq!(cap.per_file.height(), map.files.len());
    assert_eq!(cap.filesystem.height(), 1);

    // filefrag -v on the same paths, parsed.
    let mut args: Vec<&str> = vec!["-v"];
    args.extend(map.files.iter().map(|f| f.path.as_str()));
    let text = run("filefrag", &args);
    let ff = filefrag::parse_report(&text).unwrap();
    assert!(ff.warnings.is_empty(), "{:?}", ff.warnings);
    assert!(!ff.partial);
    assert_eq!(ff.files.len(), map.files.len());

    // Extent by extent: the frames are equal (filefrag has no inode column).
    let mut fiemap_df = map.extents_frame().unwrap();
    let _ = fiemap_df.drop_in_place("inode").unwrap();
    let mut ff_df = fslab::blockmap::extents_frame(&ff.extents).unwrap();
    let _ = ff_df.drop_in_place("inode").unwrap();
    assert_eq!(fiemap_df.shape(), ff_df.shape());
    assert_eq!(fiemap_df.get_column_names(), ff_df.get_column_names());
    if fiemap_df != ff_df {
        for (a, b) in map.extents.iter().zip(&ff.extents) {
            assert_eq!(
                (&a.path, key(a)),
                (&b.path, key(b)),
                "first differing extent"
            );
        }
        panic!("frames differ");
    }

    // Per file, the summary's fragments are filefrag's `N extents found`.
    let per_file = summary::per_file_with(&map.files, &map.extents);
    for (s, f) in per_file.iter().zip(&ff.files) {
        assert_eq!(s.path, f.path);
        assert_eq!(Some(s.fragments), f.extents_found, "{}", s.path);
        assert_eq!(s.size_bytes, f.size_bytes, "{}", s.path);
    }
    let g_sum = per_file.iter().find(|s| s.path.ends_with("/G")).unwrap();
    assert!(g_sum.fragments > 2000);
    assert!(g_sum.contiguous_fraction.unwrap() < 0.1);

    // Unmounted: debugfs sees the same data extents, file by file.
    g.unmount_and_detach();
    let img = debugfs::map_image_tree(&g.image, &["/"]).unwrap();
    let cap_img = fslab::blockmap::capture_image(&g.image, &["/"]).unwrap();
    assert_eq!(cap_img.extents.height(), img.extents.len());
    assert_eq!(cap_img.per_file.height(), map.files.len());
    assert!(img.errors.is_empty(), "{:?}", img.errors);
    assert!(img.warnings.is_empty(), "{:?}", img.warnings);
    assert_eq!(img.block_size, 4096);
    let by_path = |rows: &[Extent], strip: &str| -> BTreeMap<String, Vec<Key>> {
        let mut m: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for e in rows.iter().filter(|e| !e.flags.contains("metadata")) {
            let p = e.path.strip_prefix(strip).unwrap_or(&e.path);
            let p = if p.is_empty() { "/" } else { p };
            m.entry(p.to_string()).or_default().push(key(e));
        }
        m
    };
    let from_fiemap = by_path(&map.extents, &m);
    let from_debugfs = by_path(&img.extents, "");
    assert_eq!(
        from_fiemap.keys().collect::<Vec<_>>(),
        from_debugfs.keys().collect::<Vec<_>>()
    );
    for (path, rows) in &from_fiemap {
        let d = &from_debugfs[path];
        assert_eq!(rows.len(), d.len(), "extent count of {path}");
        assert_eq!(rows, d, "extents of {path}");
    }
    // G's extent tree needs index blocks, which only debugfs shows.
    let g_meta = img
        .extents
        .iter()
        .filter(|e| &*e.path == "/G" && e.flags.contains("metadata,etb"))
        .count();
    assert!(g_meta > 0);
    let paths_walked: Vec<&str> = map.files.iter().map(|f| f.path.as_str()).collect();
    let paths_image: Vec<String> = img
        .files
        .iter()
        .map(|f| format!("{m}{}", if f.path == "/" { "" } else { &f.path }))
        .collect();
    assert_eq!(paths_walked, paths_image, "same files in the same order");
    eprintln!(
        "G: {} extents, {} fragments; {} files; {} FIEMAP rows",
        g_rows.len(),
        g_sum.fragments,
        map.files.len(),
        map.extents.len()
    );
    let dir = g.dir.clone();
    drop(g);
    assert_no_leftovers(&dir);
}

/// The walk stays on the root's filesystem: a filesystem mounted below it is not mapped.
#[test]
fn walk_does_not_cross_into_other_filesystems() {
    if !require_root() {
        return;
    }
    let g = LoopFs::ext4("xdev", "32M", &[]);
    let m = g.mnt.to_str().unwrap().to_string();
    sh(&format!("mkdir {m}/inner && echo hi > {m}/outer.txt"));
    // A tmpfs over `inner` with a file in it.
    run(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=1M",
            "none",
            &format!("{m}/inner"),
        ],
    );
    struct Umount(String);
    impl Drop for Umount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _inner = Umount(format!("{m}/inner"));
    sh(&format!(
        "echo x > {m}/inner/hidden.txt && sync -f {m}/inner"
    ));
    let map = walk::map_tree(&g.mnt, &walk::WalkOptions::default()).unwrap();
    let paths: Vec<&str> = map.files.iter().map(|f| f.path.as_str()).collect();
    assert!(paths.iter().any(|p| p.ends_with("/outer.txt")), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains("/inner")), "{paths:?}");
}

/// A 1,000-level chain of directories, siblings whose names sort around `/`, a symlink and a
/// FIFO: every file and directory is mapped once, in depth-first, by-name order, and the
/// symlink and FIFO are left out.
#[test]
fn walk_maps_deep_trees_in_order() {
    if !require_root() {
        return;
    }
    let g = LoopFs::ext4("deep", "64M", &[]);
    let m = g.mnt.to_str().unwrap().to_string();
    sh(&format!(
        "cd {m} && mkdir -p a 'a b' a-c a.d B && echo 1 > a/x && echo 2 > a-c/x && \
         echo 3 > 'a b/y' && ln -s a/x link && mkfifo fifo && \
         for i in $(seq 1000); do mkdir d && cd d; done && echo deep > bottom && sync -f ."
    ));
    let map = walk::map_tree(&g.mnt, &walk::WalkOptions::default()).unwrap();
    assert!(map.errors.is_empty(), "{:?}", map.errors);
    let paths: Vec<&str> = map.files.iter().map(|f| f.path.as_str()).collect();
    // What find sees, minus the symlink and the FIFO, in walk order.
    let listed = run(
        "find",
        &[
            &m, "-xdev", "(", "-type", "f", "-o", "-type", "d", ")", "-print0",
        ],
    );
    let mut expected: Vec<&str> = listed.split('\0').filter(|p| !p.is_empty()).collect();
    expected.sort_by(|a, b| walk::path_order(Path::new(a), Path::new(b)));
    assert_eq!(paths.len(), expected.len());
    assert_eq!(paths, expected);
    assert_eq!(paths.iter().filter(|p| p.ends_with("/d")).count(), 1000);
    assert!(!paths
        .iter()
        .any(|p| p.ends_with("/link") || p.ends_with("/fifo")));
    // `a/x` comes before `a b`, `a-c` and `a.d` (`/` sorts first), `B` before all of them.
    let at = |s: &str| paths.iter().position(|p| p.ends_with(s)).unwrap();
    assert!(at("/B") < at("/a") && at("/a/x") < at("/a b") && at("/a b/y") < at("/a-c"));
    assert!(at("/a-c/x") < at("/a.d"));
    // The whole chain, bottom file included, before the next sibling of its top.
    assert_eq!(at("/d/bottom") + 1, at("/lost+found"));
    // The deep file's one block (1 KiB blocks on a filesystem this small).
    let bottom: Vec<_> = map
        .extents
        .iter()
        .filter(|e| e.path.ends_with("/d/bottom"))
        .collect();
    assert_eq!(bottom.len(), 1);
    assert_eq!(bottom[0].length_bytes, 1024);
    assert!(bottom[0].physical_bytes.is_some() && bottom[0].flags.contains("last"));
}

/// A symlink given as a root is followed (a directory is walked, a file is mapped) and is
/// named as given; below the root, symlinks are not followed.
#[test]
fn a_symlink_given_as_root_is_followed() {
    if !require_root() {
        return;
    }
    let g = LoopFs::ext4("link", "32M", &[]);
    let m = g.mnt.to_str().unwrap().to_string();
    sh(&format!(
        "cd {m} && mkdir real && echo a > real/f && ln -s real dirlink && ln -s real/f filelink \
         && ln -s ../filelink real/inner && sync -f ."
    ));
    let map = walk::map_tree(&g.mnt.join("dirlink"), &walk::WalkOptions::default()).unwrap();
    assert!(map.errors.is_empty(), "{:?}", map.errors);
    let paths: Vec<&str> = map.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, [format!("{m}/dirlink"), format!("{m}/dirlink/f")]);
    let map = walk::map_tree(&g.mnt.join("filelink"), &walk::WalkOptions::default()).unwrap();
    assert_eq!(map.files.len(), 1);
    assert_eq!(map.files[0].path, format!("{m}/filelink"));
    assert!(!map.files[0].is_dir && map.extents.len() == 1);
}

/// A test process that died without unwinding leaves its loop device, mount and directory;
/// the next LoopFs releases them (and leaves live processes' alone).
#[test]
fn a_dead_test_processs_loop_fs_is_reclaimed() {
    if !require_root() {
        return;
    }
    // A PID that is certainly dead: a child that has exited and been waited for.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    // Set up under this (live) process's name, so that a LoopFs of a test running at the
    // same time leaves it alone, then give it the dead process's name.
    let base = PathBuf::from("/var/tmp/fslab-test-blockmap");
    let setup = base.join(format!("setup-{}", std::process::id()));
    std::fs::create_dir_all(setup.join("mnt")).unwrap();
    let img = setup.join("ext4.img");
    run("truncate", &["-s", "16M", img.to_str().unwrap()]);
    run("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()]);
    let dev = run("losetup", &["--find", "--show", img.to_str().unwrap()]);
    run("mount", &[dev.trim(), setup.join("mnt").to_str().unwrap()]);
    let dir = base.join(format!("dead-{dead}"));
    std::fs::rename(&setup, &dir).unwrap();
    let live = LoopFs::new("alive"); // reclaims first
    assert!(!dir.exists(), "{} is still there", dir.display());
    // `losetup -d` of a device something (udev) still holds completes when it is closed.
    for _ in 0..50 {
        if !run("losetup", &["-a"]).contains(dir.to_str().unwrap()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_no_leftovers(&dir);
    assert!(live.dir.exists(), "a live process's directory was removed");
}

fn assert_no_leftovers(base: &Path) {
    let loops = run("losetup", &["-a"]);
    assert!(
        !loops.contains(base.to_str().unwrap()),
        "loop devices left: {loops}"
    );
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(base.to_str().unwrap()), "mounts left");
}

/// `fslab ARGS…`: its status, stdout and stderr.
fn fslab(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// XFS has no FIEMAP for directories, and without rmapbt (the default of Debian 12's
/// xfsprogs 6.1) no GETFSMAP either: the files are mapped, the directories are counted
/// apart and said once, and the map is not an error.
#[test]
fn xfs_without_rmapbt_maps_the_files_and_counts_the_directories() {
    if !require_root() {
        return;
    }
    let g = LoopFs::xfs("normap", "512M", &["-m", "rmapbt=0"]);
    let m = g.mnt.to_str().unwrap().to_string();
    sh(&format!(
        "cd {m} && mkdir -p a/b c && for f in a/1 a/b/2 c/3 4; do \
         dd if=/dev/urandom of=$f bs=64k count=2 status=none; done && sync -f ."
    ));
    let files = ["4", "a/1", "a/b/2", "c/3"].map(|f| format!("{m}/{f}"));
    // The mount point and a, a/b, c.
    let directories = 4;

    // The library: no errors; the directories are in the summary's own count.
    let cap = fslab::blockmap::capture_mounted(&g.mnt, &walk::WalkOptions::default()).unwrap();
    assert!(cap.errors.is_empty(), "{:?}", cap.errors);
    let count = |c: &str| {
        cap.filesystem
            .column(c)
            .unwrap()
            .get(0)
            .unwrap()
            .try_extract::<u64>()
            .unwrap()
    };
    assert_eq!(
        (
            count("files"),
            count("directories"),
            count("directories_unmapped")
        ),
        (4, 0, directories)
    );
    let mut mapped: Vec<String> = cap
        .extents
        .column("path")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|p| p.unwrap().to_string())
        .collect();
    mapped.dedup();
    assert_eq!(mapped, files);
    let map = walk::map_tree(&g.mnt, &walk::WalkOptions::default()).unwrap();
    assert!(map.errors.is_empty(), "{:?}", map.errors);
    let dirs = ["", "/a", "/a/b", "/c"].map(|d| format!("{m}{d}"));
    assert_eq!(map.unmapped_directories, dirs);

    // The command: exit 0, one line on stderr for all the directories, the files mapped.
    for args in [vec!["blockmap", &m], vec!["blockmap", &m, "--summary"]] {
        let (ok, out, err) = fslab(&args);
        assert!(ok, "{args:?}: {err}");
        assert!(!err.contains("EOPNOTSUPP"), "{err}");
        let said: Vec<&str> = err.lines().filter(|l| l.contains("not mapped")).collect();
        assert_eq!(said.len(), 1, "{err}");
        assert!(
            said[0].contains(&format!("{directories} directories not mapped"))
                && said[0].contains("no FIEMAP for directories"),
            "{err}"
        );
        if args.contains(&"--summary") {
            let line = out
                .lines()
                .find(|l| l.starts_with("directories_unmapped"))
                .unwrap_or_else(|| panic!("{out}"));
            assert_eq!(
                line.split_whitespace().nth(1),
                Some(directories.to_string().as_str()),
                "{out}"
            );
        }
    }
    let (ok, out, err) = fslab(&["blockmap", &m, "--json"]);
    assert!(ok, "{err}");
    let rows: Vec<Extent> = serde_json::from_str(&out).unwrap();
    let mut paths: Vec<&str> = rows.iter().map(|e| &*e.path).collect();
    paths.dedup();
    assert_eq!(paths, files);
    // A root that does not exist is still an error.
    let (ok, _, err) = fslab(&["blockmap", &format!("{m}/nonexistent")]);
    assert!(!ok, "{err}");
}
