//! `fslab kernels build`, for real, on Debian's `linux-source-6.12` in fslab's own
//! kernels directory (the source tarball is fetched once into its cache; root):
//!
//! - a patch that does not apply, and a fragment option that `make olddefconfig` drops,
//!   are errors that name the patch and hunk, or the option and why; they come before
//!   `make`, on a real unpacked tree, and leave no kernel and no staging tree behind;
//! - Ctrl-C during `make` stops the build and leaves nothing;
//! - the test kernel scripts/install-deps.sh builds from tests/fixtures/kernel-build/
//!   (`uml-fslab-test`: a fragment, an mbox and a diff) is a cache hit when built again,
//!   boots with both patches' marks (its release, its kernel log), and a run on it records
//!   its build provenance in the manifest. Without that kernel the test says SKIPPED;
//!   `FSLAB_REQUIRE_KERNEL_BUILD=1` (scripts/test.sh) makes it fail instead.

use crate::common::{text, Scratch};
use crate::require::{root, skip, test_kernel, test_kernel_inputs, Need, TEST_KERNEL};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn kernels_dir() -> PathBuf {
    fslab::kernels::kernels_dir()
}

fn fslab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fslab"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn build(name: &str, args: &[&str]) -> Output {
    fslab()
        .args([
            "kernels",
            "build",
            name,
            "--source",
            "linux-source-6.12",
            "-j",
            "2",
        ])
        .args(args)
        .output()
        .unwrap()
}

/// Nothing of a failed or interrupted build of `name` stays: no kernel, no staging tree.
fn assert_nothing_left(name: &str) {
    let dir = kernels_dir();
    assert!(!dir.join(name).exists(), "{name} was cached");
    assert!(
        !dir.join(".build").join(format!("built-{name}")).exists(),
        "the staging tree of {name} stayed"
    );
    assert!(
        fslab::kernels::installed()
            .iter()
            .all(|k| k.provenance.name != name),
        "{name} is listed"
    );
}

/// The kernel name of one test (fixed: two runs of a test at once wait for each other
/// on its build lock, and no lock file per run accumulates).
fn name(tag: &str) -> String {
    format!("fslab-test-{tag}")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/kernel-build")
        .join(name)
}

/// A diff whose context is not in 6.12's xfs_super.c.
const BAD_DIFF: &str = "\
--- a/fs/xfs/xfs_super.c
+++ b/fs/xfs/xfs_super.c
@@ -2375,6 +2375,7 @@ init_xfs_fs(void)
 \tint\t\t\terror;
 
 \txfs_check_no_such_function();
+\tpr_info(\"never\\n\");
 
 \terror = xfs_dahash_test();
 \tif (error)
";

/// An mbox of two messages: the second changes a line 6.12's Makefile does not have.
const BAD_MBOX: &str = "\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: fslab tests <fslab@example.invalid>
Date: Wed, 2 Dec 2026 00:00:00 +0000
Subject: [PATCH 1/2] a new file

---
diff --git a/fslab-new-file b/fslab-new-file
new file mode 100644
--- /dev/null
+++ b/fslab-new-file
@@ -0,0 +1 @@
+new
-- 
2.47.3

From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: fslab tests <fslab@example.invalid>
Date: Wed, 2 Dec 2026 00:00:00 +0000
Subject: [PATCH 2/2] Makefile: a line that is not there

---
diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,3 +1,3 @@
 # SPDX-License-Identifier: GPL-2.0
 VERSION = 6
-PATCHLEVEL = 99
+PATCHLEVEL = 98
-- 
2.47.3

";

#[test]
fn a_diff_that_does_not_apply_names_the_patch_and_the_hunk() {
    if !root("a_diff_that_does_not_apply_names_the_patch_and_the_hunk") {
        return;
    }
    let s = Scratch::new("kbd");
    let bad = s.root.join("bad.diff");
    std::fs::write(&bad, BAD_DIFF).unwrap();
    let n = name("diff");
    let o = build(
        &n,
        &[
            "--patch",
            fixture("localversion.mbox").to_str().unwrap(),
            "--patch",
            bad.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    // The first patch applied; the second names itself and its failed hunk.
    assert!(
        err.contains("patch 1/2: applied (mbox, 1 message(s))"),
        "{err}"
    );
    assert!(
        err.contains(&format!("patch 2/2 {} does not apply", bad.display())),
        "{err}"
    );
    assert!(
        err.contains("fs/xfs/xfs_super.c: hunk #1 FAILED at line 2375"),
        "{err}"
    );
    assert!(!err.contains("make: make ARCH=um"), "{err}");
    assert_nothing_left(&n);
}

#[test]
fn an_mbox_that_does_not_apply_names_the_message_and_the_file() {
    if !root("an_mbox_that_does_not_apply_names_the_message_and_the_file") {
        return;
    }
    let s = Scratch::new("kbm");
    let bad = s.root.join("series.mbox");
    std::fs::write(&bad, BAD_MBOX).unwrap();
    let n = name("mbox");
    let o = build(&n, &["-q", "--patch", bad.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "patch 1/1 {} (message 2/2: \"Makefile: a line that is not there\") does not apply: git apply:",
            bad.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("patch failed: Makefile:1") && err.contains("Makefile: patch does not apply"),
        "{err}"
    );
    // -q: only the error.
    assert!(!err.contains("==>"), "{err}");
    assert_nothing_left(&n);
}

#[test]
fn a_fragment_option_that_olddefconfig_drops_is_named_with_why() {
    if !root("a_fragment_option_that_olddefconfig_drops_is_named_with_why") {
        return;
    }
    let s = Scratch::new("kbf");
    let frag = s.root.join("frag.config");
    std::fs::write(
        &frag,
        "# kept, dropped (a dependency is off), unknown\nCONFIG_XFS_RT=y\n\
         CONFIG_XFS_ONLINE_REPAIR=y\nCONFIG_FSLAB_NO_SUCH_OPTION=y\n",
    )
    .unwrap();
    let n = name("frag");
    let o = build(&n, &["--config", frag.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{}: `make olddefconfig` dropped 2 options",
            frag.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "CONFIG_XFS_ONLINE_REPAIR=y (line 3) became not set: its dependencies are not met"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "CONFIG_FSLAB_NO_SUCH_OPTION=y (line 4) became not set: no Kconfig of this source defines it"
        ),
        "{err}"
    );
    assert!(!err.contains("CONFIG_XFS_RT=y (line"), "{err}");
    assert!(!err.contains("make: make ARCH=um"), "{err}");
    assert_nothing_left(&n);

    // A line that is not an option is refused before anything is fetched.
    std::fs::write(&frag, "XFS_RT=y\n").unwrap();
    let o = build(&n, &["--config", frag.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{}:1: `XFS_RT=y` is not a configuration line",
            frag.display()
        )),
        "{err}"
    );
}

/// Processes whose working directory is under `dir`.
fn processes_in(dir: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
        })
        .collect()
}

#[test]
fn ctrl_c_during_make_leaves_no_kernel_and_no_make() {
    if !root("ctrl_c_during_make_leaves_no_kernel_and_no_make") {
        return;
    }
    let n = name("int");
    let mut child = fslab()
        .args([
            "kernels",
            "build",
            &n,
            "--source",
            "linux-source-6.12",
            "-j",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let staging = kernels_dir().join(".build").join(format!("built-{n}"));
    let mut seen = Vec::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.contains("] make: make ARCH=um -j1 linux") {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("make: make ARCH=um")),
        "{seen:?}"
    );
    // make is at work in the staging tree.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !processes_in(&staging).is_empty(),
        "no make in {}",
        staging.display()
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{rest:?}");
    assert!(
        rest.iter()
            .any(|l| l.contains("interrupted during make") && l.contains("nothing was cached")),
        "{rest:?}"
    );
    assert_eq!(processes_in(&staging), Vec::<u32>::new());
    assert_nothing_left(&n);
}

#[test]
fn the_built_test_kernel_is_cached_boots_patched_and_its_provenance_is_in_the_manifest() {
    let test =
        "the_built_test_kernel_is_cached_boots_patched_and_its_provenance_is_in_the_manifest";
    if !Need::KernelBuild.met() {
        skip(
            Need::KernelBuild,
            test,
            "needs root and the kernel scripts/install-deps.sh builds from \
             tests/fixtures/kernel-build (`fslab kernels build uml-fslab-test …`)",
        );
        return;
    }
    let k = test_kernel().unwrap();
    let b = k.provenance.build.clone().unwrap();

    // The same inputs again: a cache hit, at once (the version pinned to the cached one,
    // so that a newer Debian upload does not start a build here).
    let (fragment, patches) = test_kernel_inputs();
    let source = format!("linux-source-6.12={}", k.provenance.package_version);
    let mut args: Vec<String> = vec![
        "kernels".into(),
        "build".into(),
        TEST_KERNEL.into(),
        "--source".into(),
        source,
        "--config".into(),
        fragment.display().to_string(),
    ];
    for p in &patches {
        args.extend(["--patch".into(), p.display().to_string()]);
    }
    // A cache hit builds nothing: the kernel program is the same file, unmodified, and
    // no staging tree is made (the evidence is the file, never how long it took).
    let before = std::fs::metadata(k.binary()).unwrap();
    let staging = kernels_dir()
        .join(".build")
        .join(format!("built-{TEST_KERNEL}"));
    let o = fslab().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let after = std::fs::metadata(k.binary()).unwrap();
    assert_eq!(
        (before.modified().unwrap(), before.len()),
        (after.modified().unwrap(), after.len()),
        "the cached kernel program was rewritten"
    );
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            before.ino(),
            after.ino(),
            "the cached kernel program was replaced"
        );
    }
    assert!(!staging.exists(), "a cache hit made {}", staging.display());
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.starts_with(&format!("cached: {TEST_KERNEL} (kernel 6.12.")),
        "{out}"
    );
    assert!(out.contains(&b.key), "{out}");

    // Its provenance: the source package, both patches in order, the fragment's option
    // as it is in the configuration, the compiler.
    assert_eq!(k.provenance.package, "linux-source-6.12");
    assert!(
        k.provenance.release.ends_with("-fslab-test"),
        "{:?}",
        k.provenance
    );
    let names: Vec<(&str, &str)> = b
        .patches
        .iter()
        .map(|p| (p.file.name.as_str(), p.format.as_str()))
        .collect();
    assert_eq!(
        names,
        [("localversion.mbox", "mbox"), ("xfs-marker.diff", "diff")]
    );
    assert_eq!(
        b.patches[0].subjects,
        ["localversion: mark the release as fslab's test kernel"]
    );
    assert_eq!(b.fragment_options, ["CONFIG_XFS_WARN=y"]);
    assert!(b.compiler.starts_with("gcc"), "{b:?}");

    // `fslab kernels list` shows it with its version and the options experiments ask for.
    let o = fslab().args(["kernels", "list"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    for want in [
        format!("{TEST_KERNEL}: kernel {}", k.provenance.release),
        "built by fslab from linux-source-6.12".into(),
        "CONFIG_XFS_RT=y".into(),
        "CONFIG_BLK_DEV_UBD=y".into(),
        "CONFIG_HOSTFS=y".into(),
        "localversion.mbox (mbox".into(),
    ] {
        assert!(listed.contains(&want), "{want}: {listed}");
    }

    // A run on it: XFS on its ubd disk, `uname -r` captured.
    let s = Scratch::new("kbr");
    let exp = s.root.join("kbuild.yaml");
    std::fs::write(
        &exp,
        "id: kbuild\ntitle: \"a kernel fslab built\"\ndevices:\n  data: { size: 320MiB }\n\
         setup:\n  - run: mkfs.xfs -f {{dev.data}}\n  - mount: { device: data }\n\
         workload:\n  name: touch\n  run: touch {{mnt}}/{{i}}\n  times: 3\n\
         capture:\n  - name: release\n    run: uname -r\nteardown:\n  - umount: \"{{mnt}}\"\n",
    )
    .unwrap();
    let o = s.run(&["run", exp.to_str().unwrap(), "--kernel", TEST_KERNEL, "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let bundles = s.bundles("kbuild");
    assert_eq!(bundles.len(), 1, "{}", text(&o));
    let bundle = fslab::store::Bundle::open(&bundles[0]).unwrap();
    let m = bundle.manifest();
    assert_eq!(m.environment.guests.len(), 1);
    let g = &m.environment.guests[0];
    assert_eq!(g.name, TEST_KERNEL);
    // The first patch (an mbox) is in the release the guest reports.
    assert_eq!(g.release, k.provenance.release);
    assert_eq!(m.environment.kernel, g.release);
    // The build's provenance is in the manifest.
    assert_eq!(g.provenance["package"], "linux-source-6.12");
    assert_eq!(g.provenance["build"]["key"], b.key.as_str());
    assert_eq!(
        g.provenance["build"]["patches"][1]["file"]["name"],
        "xfs-marker.diff"
    );
    assert_eq!(
        g.provenance["build"]["patches"][1]["file"]["sha256"],
        b.patches[1].file.sha256.as_str()
    );
    // Its verdicts name the kernel, its source and its patches.
    let subs = fslab::analysis::tiers::substitutions(m);
    assert!(
        subs.iter().any(|s| s.what.contains(&format!(
            "kernel {} (`{TEST_KERNEL}`, linux-source-6.12 {}, built by fslab with patches \
             localversion.mbox, xfs-marker.diff)",
            k.provenance.release, k.provenance.package_version
        ))),
        "{subs:?}"
    );
    // The point ran in it; the second patch (a diff) printed its mark in the guest's
    // kernel log, kept with the point; `uname -r` in the guest says the release.
    assert_eq!(m.points.len(), 1);
    let p = &m.points[0];
    assert_eq!(p.status, fslab::store::PointStatus::Ok, "{p:?}");
    let logs = bundles[0]
        .join("logs")
        .join(format!("{:02}-{}", p.index, p.id));
    let console = std::fs::read_to_string(logs.join("guest-console.log")).unwrap();
    assert!(
        console.contains("fslab-test: this XFS was patched by fslab kernels build"),
        "{console}"
    );
    assert!(console.contains("XFS (ubda)"), "{console}");
    let release = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with("release.stdout"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .unwrap_or_default();
    assert_eq!(release.trim(), k.provenance.release, "{logs:?}");
}
