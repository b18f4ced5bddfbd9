//! Points in a User-Mode Linux guest (`fslab run --kernel uml-bookworm`), for real: a
//! guest boots per replicate from the installed kernel, formats XFS with a realtime
//! device on its ubd disks, truncates files; the bundle says where it was measured; and
//! nothing stays behind after success, Ctrl-C or a SIGKILLed fslab.
//!
//! Needs root and `fslab kernels install uml-bookworm` (scripts/install-deps.sh);
//! `FSLAB_REQUIRE_UML=1` turns a missing one into a failure.

use crate::common::{strings, text, walk, Scratch};
use crate::require::{skip, Need};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

pub(crate) fn uml(test: &str) -> bool {
    let met = Need::Uml.met();
    if !met {
        skip(
            Need::Uml,
            test,
            "needs root and the uml-bookworm and uml-trixie kernels (`fslab kernels install NAME`)",
        );
    }
    met
}

/// Two points of realtime XFS (rtextsize 8k and 64k): mkfs, mount, 10 files written
/// before and truncated in the timed workload; xfs_info and xfs_bmap captured.
const RT_EXPERIMENT: &str = r#"
id: uml-rt
title: "realtime XFS in a guest"
devices:
  data: { size: 400MiB }
  rt: { size: 64MiB }
matrix:
  rtextsize: [8k, 64k]
requires:
  - { kernel: xfs_rt }
setup:
  - run: mkfs.xfs -f -m reflink=0,rmapbt=0 -d rtinherit=1 -r rtdev={{dev.rt}},extsize={{rtextsize}} {{dev.data}}
  - mount: { device: data, options: "rtdev={{dev.rt}}" }
workload:
  name: truncate
  run: xfs_io -c "truncate 4k" {{mnt}}/{{i}}
  times: 10
  before_each:
    - run: dd if=/dev/zero of={{mnt}}/{{i}} bs={{rtextsize}} count=1 status=none
      times: 10
    - sync: true
capture:
  - name: xfs_info
    run: xfs_info {{mnt}}
    parse: xfs_info
  - name: bmap
    run: xfs_bmap -v {{mnt}}/0
    parse: xfs_bmap
  - name: release
    run: uname -r
teardown:
  - umount: "{{mnt}}"
"#;

/// Processes running `linux.uml` whose command line names `under`.
fn guests_under(under: &Path) -> Vec<u32> {
    let needle = under.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd);
            cmd.contains("linux.uml") && cmd.contains(&needle)
        })
        .collect()
}

/// Nothing of fslab's stays in the scratch work directory: no point directory, no
/// ownership record, no guest, no mount.
fn assert_clean(s: &Scratch) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !guests_under(&s.root).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(guests_under(&s.root), Vec::<u32>::new(), "a guest stayed");
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
    for sub in ["p", "owned"] {
        let left: Vec<PathBuf> = std::fs::read_dir(s.work().join(sub))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{sub}: {left:?}");
    }
}

/// A fresh scratch directory (`tag`) with `yaml` written in it as `file`.
pub(crate) fn scratch_with(tag: &str, file: &str, yaml: &str) -> (Scratch, PathBuf) {
    let s = Scratch::new(tag);
    let exp = s.root.join(file);
    std::fs::write(&exp, yaml).unwrap();
    (s, exp)
}

/// `fslab run EXP --kernel KERNEL --order fixed -q`, which must succeed.
pub(crate) fn run_in_guest(s: &Scratch, exp: &Path, kernel: &str) {
    let exp = exp.to_str().unwrap();
    let o = s.run(&["run", exp, "--kernel", kernel, "--order", "fixed", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The end of a guest test: nothing stayed, and the scratch directory goes.
pub(crate) fn finish(s: &Scratch) {
    assert_clean(s);
    let _ = std::fs::remove_dir_all(&s.root);
}

#[test]
fn a_realtime_xfs_experiment_runs_in_a_uml_guest_and_says_so() {
    if !uml("a_realtime_xfs_experiment_runs_in_a_uml_guest_and_says_so") {
        return;
    }
    let (s, exp) = scratch_with("uml", "uml-rt.yaml", RT_EXPERIMENT);
    run_in_guest(&s, &exp, "uml-bookworm");
    let bundles = s.bundles("uml-rt");
    assert_eq!(bundles.len(), 1, "{bundles:?}");
    let b = fslab::store::Bundle::open(&bundles[0]).unwrap();
    let m = b.manifest();

    // The kernel measured is the guest's, with where it came from.
    assert_eq!(m.environment.guests.len(), 1);
    let g = &m.environment.guests[0];
    assert_eq!(g.name, "uml-bookworm");
    assert_eq!(g.kind, "User-Mode Linux");
    assert!(g.release.starts_with("6.1."), "{g:?}");
    assert_eq!(m.environment.kernel, g.release);
    assert_eq!(g.provenance["package"], "user-mode-linux");
    assert_eq!(g.memory_bytes, 1 << 30);
    assert!(g.boot_s.is_some_and(|b| b > 0.0 && b < 90.0), "{g:?}");
    assert!(g.caveats.iter().any(|c| c.contains("fsync")), "{g:?}");
    // On a host whose XSAVE area is larger than UML's FP buffer (AVX-512, AMX) the guest
    // ran with fslab's ptrace shim, and the manifest says so; elsewhere it did not.
    use fslab::run::target::uml::xstate;
    let shimmed = g.caveats.iter().any(|c| c.contains("ptrace shim"));
    assert_eq!(
        shimmed,
        xstate::needed(xstate::host_xsave_bytes()),
        "{:?} {g:?}",
        xstate::host_xsave_bytes()
    );
    // Both points ran (the preflight read the guest kernel's CONFIG_XFS_RT), and each
    // says it was measured in a guest.
    assert_eq!(m.points.len(), 2);
    for p in &m.points {
        assert_eq!(p.status, fslab::store::PointStatus::Ok, "{p:?}");
        assert!(
            p.notes
                .iter()
                .any(|n| n.starts_with("measured in a User-Mode Linux guest (kernel 6.1.")),
            "{:?}",
            p.notes
        );
    }
    // Devices: the guest's ubd disks on image files; no loop device anywhere.
    assert_eq!(m.environment.devices.len(), 2);
    assert!(
        m.environment
            .devices
            .iter()
            .all(|d| d.backing.contains("ubd disk")),
        "{:?}",
        m.environment.devices
    );
    // Every verdict names the substitution.
    let subs = fslab::analysis::tiers::substitutions(m);
    assert!(
        subs.iter().any(
            |s| s.kind == fslab::analysis::tiers::SubstitutionKind::Guest
                && s.what
                    .contains("measured in a User-Mode Linux guest: kernel 6.1.")
        ),
        "{subs:?}"
    );

    // Timings: one row per point, measured in the guest.
    let runs = b.runs().unwrap();
    assert_eq!(runs.height(), 2, "{runs}");
    let walls: Vec<f64> = runs
        .column("wall_s")
        .unwrap()
        .f64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    assert!(walls.iter().all(|w| *w > 0.0), "{walls:?}");
    assert_eq!(strings(&runs, "status"), vec!["ok", "ok"]);

    // The geometry's realtime section names the guest's second disk.
    let geo = b.table("geometry").unwrap();
    let sections = strings(&geo, "section");
    let values = strings(&geo, "value");
    let rt_dev: Vec<&String> = sections
        .iter()
        .zip(&values)
        .filter(|(s, v)| s.as_str() == "realtime" && v.starts_with("/dev/"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(rt_dev, vec!["/dev/ubdb", "/dev/ubdb"], "{geo}");
    // 6.1's truncate path: the file keeps one written extent of the whole rt extent
    // (the old data stays past EOF), at 8k and at 64k.
    let ext = b.table("extents").unwrap();
    assert_eq!(ext.height(), 2, "{ext}");

    // The guest's kernel log is kept with each point, and the captured `uname -r` is
    // the guest's.
    for p in &m.points {
        let dir = bundles[0]
            .join("logs")
            .join(format!("{:02}-{}", p.index, p.id));
        let console = std::fs::read_to_string(dir.join("guest-console.log")).unwrap();
        assert!(console.contains("XFS (ubda)"), "{console}");
        let release = std::fs::read_to_string(dir.join("capture-03-release.stdout")).unwrap();
        assert_eq!(release.trim(), g.release);
    }
    finish(&s);
}

#[test]
fn trixie_runs_with_its_own_c_library_and_takes_another_truncate_path() {
    if !uml("trixie_runs_with_its_own_c_library_and_takes_another_truncate_path") {
        return;
    }
    let (s, exp) = scratch_with("umlt", "uml-rt.yaml", RT_EXPERIMENT);
    run_in_guest(&s, &exp, "uml-trixie");
    let b = fslab::store::Bundle::open(&s.bundles("uml-rt")[0]).unwrap();
    let g = b.manifest().environment.guests[0].clone();
    assert!(g.release.starts_with("6.12."), "{g:?}");
    // Trixie's C library came with it, and the kernel ran with it (the host's is too
    // old); the programs in the guest ran with the host's (they would not start else).
    assert_eq!(g.provenance["libc"]["package"], "libc6");
    // 6.12 converts the rest of the rt extent to unwritten: file 0 is two extents
    // ([0..7] written, the rest unwritten) at 8k and at 64k.
    let ext = b.table("extents").unwrap();
    assert_eq!(ext.height(), 4, "{ext}");
    finish(&s);
}

/// One ext4 workload on the host and in a guest, side by side in one bundle.
const AXIS_EXPERIMENT: &str = r#"
id: uml-axis
title: "host and guest side by side"
devices:
  data: { size: 64MiB }
matrix:
  kernel: [host, uml-bookworm]
setup:
  - run: mkfs.ext4 -q {{dev.data}}
  - mount: data
workload:
  run: touch {{mnt}}/f{{i}}
  times: 5
capture:
  - name: release
    run: uname -r
teardown:
  - umount: "{{mnt}}"
claims:
  - id: first-touch-slower
    text: "the first of five touches is at most 1000 times the others"
    quote: "fslab's test claim"
    check: { kind: first_vs_rest, metric: wall_s, expect: { max: 1000 } }
  - id: first-touch-system-time
    text: "the first touch's system time is at most 1000 times the others'"
    quote: "fslab's test claim"
    check: { kind: first_vs_rest, metric: sys_s, expect: { max: 1000 } }
"#;

#[test]
fn a_kernel_axis_puts_the_host_and_a_guest_side_by_side() {
    if !uml("a_kernel_axis_puts_the_host_and_a_guest_side_by_side") {
        return;
    }
    let (s, exp) = scratch_with("umla", "uml-axis.yaml", AXIS_EXPERIMENT);
    let o = s.run(&["run", exp.to_str().unwrap(), "--order", "fixed", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let dir = s.bundles("uml-axis")[0].clone();
    let b = fslab::store::Bundle::open(&dir).unwrap();
    let m = b.manifest();
    // The environment is the host's, with the guest beside it.
    let host_release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(m.environment.kernel, host_release.trim());
    assert_eq!(m.environment.guests.len(), 1);
    assert_eq!(m.environment.guests[0].name, "uml-bookworm");
    let release = |p: &fslab::store::PointRecord| {
        std::fs::read_to_string(
            dir.join("logs")
                .join(format!("{:02}-{}", p.index, p.id))
                .join("capture-01-release.stdout"),
        )
        .unwrap()
        .trim()
        .to_string()
    };
    let host = &m.points[0];
    let guest = &m.points[1];
    assert_eq!(host.id, "kernel=host");
    assert_eq!(guest.id, "kernel=uml-bookworm");
    assert_eq!(release(host), host_release.trim());
    assert!(release(guest).starts_with("6.1."), "{}", release(guest));
    // Only the guest's point says it was measured in a guest, and the substitution
    // names which points.
    assert!(!host.notes.iter().any(|n| n.contains("guest")), "{host:?}");
    assert!(
        guest
            .notes
            .iter()
            .any(|n| n.starts_with("measured in a User-Mode Linux guest")),
        "{guest:?}"
    );
    let subs = fslab::analysis::tiers::substitutions(m);
    assert!(
        subs.iter().any(|s| s
            .what
            .starts_with("points with kernel=uml-bookworm measured in a User-Mode Linux guest")),
        "{subs:?}"
    );
    assert_eq!(b.runs().unwrap().height(), 2);
    // Each claim is checked once per kernel: the host's verdict rests on no guest, the
    // guest's on its own; a claim on system time is untestable in the guest only (UML
    // charges it to user time), not over the whole bundle.
    let o = s.run(&["claims", &dir.display().to_string(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let of = |id: &str, kernel: &str| {
        report["claims"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id && c["kernel"] == kernel)
            .unwrap_or_else(|| panic!("{id} @ kernel={kernel}: {report}"))
            .clone()
    };
    assert_eq!(report["claims"].as_array().unwrap().len(), 4, "{report}");
    let on_host = of("first-touch-slower", "host");
    assert!(
        !on_host["substitutions"].to_string().contains("guest"),
        "{on_host}"
    );
    let in_guest = of("first-touch-slower", "uml-bookworm");
    assert!(
        in_guest["substitutions"]
            .to_string()
            .contains("points with kernel=uml-bookworm measured in a User-Mode Linux guest"),
        "{in_guest}"
    );
    assert_ne!(
        of("first-touch-system-time", "host")["not_applicable"],
        "untestable",
        "{report}"
    );
    assert_eq!(
        of("first-touch-system-time", "uml-bookworm")["not_applicable"],
        "untestable",
        "{report}"
    );
    // `fslab doctor` checks each point against its own kernel: realtime XFS is fine in
    // the guest (its configuration has CONFIG_XFS_RT=y), whatever the host has.
    let rt = s.root.join("uml-rt-axis.yaml");
    std::fs::write(
        &rt,
        RT_EXPERIMENT.replace(
            "matrix:\n  rtextsize: [8k, 64k]",
            "matrix:\n  kernel: [host, uml-bookworm]\n  rtextsize: [8k]",
        ),
    )
    .unwrap();
    let o = s.run(&["doctor", rt.to_str().unwrap(), "--json", "--probe", "never"]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{report}");
    assert_eq!(
        points[1]["id"], "kernel=uml-bookworm,rtextsize=8k",
        "{report}"
    );
    assert_eq!(points[1]["problems"], serde_json::json!([]), "{report}");
    // --kernel with an axis is refused: the axis says each point's kernel.
    let o = s.run(&["run", exp.to_str().unwrap(), "--kernel", "uml-bookworm"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--set kernel=uml-bookworm"),
        "{}",
        text(&o)
    );
    finish(&s);
}

/// A work directory under `/tmp`: the guest's own `/tmp` is a tmpfs, which hid the
/// replicate's directory (the guest's init could not mount it, and the guest stopped
/// before its agent spoke). The replicate's directory is mounted at its own path in the
/// guest's tmpfs, so the point runs, and `{{work}}` and `{{mnt}}` are the same paths.
#[test]
fn a_work_directory_under_tmp_is_seen_by_the_guest() {
    if !uml("a_work_directory_under_tmp_is_seen_by_the_guest") {
        return;
    }
    let s = Scratch {
        root: PathBuf::from(format!(
            "/tmp/fslab-umltmp{:x}",
            rand::random::<u32>() & 0xffff
        )),
    };
    std::fs::create_dir_all(&s.root).unwrap();
    let exp = s.root.join("uml-axis.yaml");
    std::fs::write(
        &exp,
        AXIS_EXPERIMENT.replace(
            "    run: uname -r\n",
            "    run: uname -r\n  - name: where\n    run: sh -c \"pwd; ls {{mnt}}\"\n",
        ),
    )
    .unwrap();
    let o = s.run(&["run", exp.to_str().unwrap(), "--order", "fixed", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let dir = s.bundles("uml-axis")[0].clone();
    let b = fslab::store::Bundle::open(&dir).unwrap();
    let m = b.manifest();
    assert!(m.points.iter().all(|p| p.status == "ok"), "{:?}", m.points);
    let guest = &m.points[1];
    assert_eq!(guest.id, "kernel=uml-bookworm");
    let logs = dir
        .join("logs")
        .join(format!("{:02}-{}", guest.index, guest.id));
    let release = std::fs::read_to_string(logs.join("capture-01-release.stdout")).unwrap();
    assert!(release.starts_with("6.1."), "{release}");
    // The guest worked in the replicate's directory under the host's /tmp, and saw the
    // files its workload made on its disk.
    let whr = std::fs::read_to_string(logs.join("capture-02-where.stdout")).unwrap();
    assert!(whr.starts_with(&s.work().display().to_string()), "{whr}");
    assert!(whr.contains("f1"), "{whr}");
    finish(&s);
}

/// A workload that sleeps in the guest: long enough to be interrupted or killed.
const SLEEP_EXPERIMENT: &str = r#"
id: uml-sleep
title: "a long step in a guest"
devices:
  data: { size: 64MiB }
setup:
  - run: mkfs.ext4 -q {{dev.data}}
  - mount: data
workload:
  run: sleep 600
teardown:
  - umount: "{{mnt}}"
"#;

/// Wait until a guest under the scratch directory runs its workload (the step's label
/// was written to the running output), at most `limit`.
fn wait_for_guest(s: &Scratch, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let booted = !guests_under(&s.root).is_empty()
            && walk(&s.results())
                .iter()
                .any(|p| p.ends_with("guest-console.log") && has(p, "EXT4-fs (ubda)"));
        if booted {
            // The mount is done; the workload starts right after it.
            std::thread::sleep(Duration::from_secs(2));
            return;
        }
        assert!(Instant::now() < deadline, "no guest came up in {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn has(p: &Path, what: &str) -> bool {
    std::fs::read_to_string(p).is_ok_and(|t| t.contains(what))
}

#[test]
fn ctrl_c_and_sigkill_during_a_guest_step_leave_nothing_after_cleanup() {
    if !uml("ctrl_c_and_sigkill_during_a_guest_step_leave_nothing_after_cleanup") {
        return;
    }
    let (s, exp) = scratch_with("umlk", "uml-sleep.yaml", SLEEP_EXPERIMENT);
    let start = || {
        s.fslab()
            .args([
                "run",
                exp.to_str().unwrap(),
                "--kernel",
                "uml-bookworm",
                "-q",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };

    // Ctrl-C: the run stops the step, powers the guest off and releases everything.
    let child = start();
    wait_for_guest(&s, Duration::from_secs(120));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let t = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("interrupted"), "{}", text(&o));
    // The run stopped its step rather than waiting for the step's `sleep 600` to end.
    assert!(
        t.elapsed() < Duration::from_secs(600),
        "the run waited for its step to end: {:?}",
        t.elapsed()
    );
    assert_clean(&s);
    std::fs::remove_dir_all(s.results()).unwrap();

    // SIGKILL: fslab cannot release anything; `fslab cleanup` reaps the guest (through
    // the point's cgroup, which the ownership record names) and its directory.
    let mut child = start();
    wait_for_guest(&s, Duration::from_secs(120));
    child.kill().unwrap();
    child.wait().unwrap();
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    finish(&s);
}

#[test]
fn an_unknown_or_missing_kernel_is_a_clear_error() {
    let s = Scratch::new("umln");
    // smallfiles: no `kernel` variable (seed 003 has one, and refuses --kernel).
    let o = s.run(&["run", "smallfiles", "--kernel", "uml-nowhere"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("kernel `uml-nowhere` is unknown (known: uml-bookworm"),
        "{}",
        text(&o)
    );
    let o = s.run(&["run", "smallfiles", "--guest-mem", "1GiB"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--guest-mem"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&s.root);
}

/// Seed 003's truncate path, measured: the two guest kernels side by side (a `kernel`
/// axis), the post's loop of processes and the one-process variant (`workload_variants`
/// on a `loop` axis), 10 files each at rtextsize 64k, and `fslab files path` after the
/// loop, parsed as `truncate-path`.
const PATH_EXPERIMENT: &str = r#"
id: uml-path
title: "the truncate path of realtime XFS on two guest kernels"
devices:
  data: { size: 400MiB }
  rt: { size: 64MiB }
matrix:
  kernel: [uml-bookworm, uml-trixie]
  loop: [processes, one-process]
requires:
  - { kernel: xfs_rt }
setup:
  - run: mkfs.xfs -f -m reflink=0,rmapbt=0 -d rtinherit=1 -r rtdev={{dev.rt}},extsize=64k {{dev.data}}
  - mount: { device: data, options: "rtdev={{dev.rt}}" }
workload:
  name: truncate
  run: xfs_io -c "truncate 4k" {{mnt}}/{{i}}
  times: 10
  before_each:
    - run: dd if=/dev/zero of={{mnt}}/{{i}} bs=64k count=1 status=none
      times: 10
    - sync: true
    - run: cp /proc/diskstats {{work}}/diskstats-before
workload_variants:
  - name: truncate-one-process
    run: "{{fslab}} files truncate {{mnt}} --count 10 --size 4k"
    when: { loop: one-process }
    before_each:
      - run: "{{fslab}} files write {{mnt}} --count 10 --size 64k"
      - sync: true
      - run: cp /proc/diskstats {{work}}/diskstats-before
capture:
  - name: truncate-path
    run: "{{fslab}} files path {{mnt}} --count 10 --size 4k --device {{dev.rt}} --diskstats-before {{work}}/diskstats-before"
    parse: truncate-path
teardown:
  - umount: "{{mnt}}"
claims:
  - id: one-process-cheaper
    text: "where the kernel converts, one process truncates faster than a process per file"
    quote: "fslab's test claim"
    needs: { truncate_path: converted }
    check:
      kind: ratio
      numerator: { loop: one-process }
      denominator: { loop: processes }
      expect: { max: 100 }
  - id: newer-kernel-against-older
    text: "the post's loop on 6.12 against 6.1: a comparison of kernels, checked once"
    quote: "fslab's test claim"
    check:
      kind: ratio
      numerator: { kernel: uml-trixie, loop: processes }
      denominator: { kernel: uml-bookworm, loop: processes }
      expect: { max: 100 }
"#;

#[test]
fn the_truncate_path_column_and_the_claims_tell_the_two_guest_kernels_apart() {
    if !uml("the_truncate_path_column_and_the_claims_tell_the_two_guest_kernels_apart") {
        return;
    }
    let (s, exp) = scratch_with("umlp", "uml-path.yaml", PATH_EXPERIMENT);
    let o = s.run(&["run", exp.to_str().unwrap(), "--order", "fixed", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let b = fslab::store::Bundle::open(&s.bundles("uml-path")[0]).unwrap();
    assert!(b.manifest().points.iter().all(|p| p.status == "ok"));
    // The one-process variant ran where its `when:` holds: one timed command, not ten.
    let paths = b.table_with_axes("truncate_path").unwrap().unwrap();
    assert_eq!(paths.height(), 4, "{paths}");
    let kernel = strings(&paths, "kernel");
    let path = strings(&paths, "truncate_path");
    let evidence = strings(&paths, "evidence");
    let reason = strings(&paths, "reason");
    for i in 0..4 {
        let (want, flags) = if kernel[i] == "uml-bookworm" {
            // 6.1: the whole 64k rt extent stays written, nothing reached the rt device.
            ("kept_written", "[0..65535] 0x1 last")
        } else {
            // 6.12: [0..4095] written, the rest unwritten (FIEMAP flag 0x800).
            ("converted", "[4096..65535] 0x801 last,unwritten")
        };
        assert_eq!(path[i], want, "{}: {}", kernel[i], reason[i]);
        assert!(evidence[i].contains(flags), "{}", evidence[i]);
        assert!(reason[i].contains("10 file(s) mapped"), "{}", reason[i]);
    }
    let written = paths
        .column("device_written_bytes")
        .unwrap()
        .as_materialized_series()
        .cast(&polars::prelude::DataType::Int64)
        .unwrap();
    assert!(
        written.i64().unwrap().iter().all(|w| w == Some(0)),
        "{paths}"
    );
    // A claim about the converted path is checked once per kernel, each on its own
    // points: on 6.1, which kept the tail written, its mechanism is absent (the verdict
    // names the path with its evidence); on 6.12, which converted it, it is measured.
    // Pooled over both kernels it would be one verdict, `mechanism absent`.
    let dir = b.path().display().to_string();
    let o = s.run(&["claims", &dir, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let claims = report["claims"].as_array().unwrap();
    let of = |id: &str, kernel: Option<&str>| {
        let hits: Vec<&serde_json::Value> = claims
            .iter()
            .filter(|c| c["id"] == id && c["kernel"].as_str() == kernel)
            .collect();
        assert_eq!(hits.len(), 1, "{id} @ {kernel:?}: {report}");
        hits[0].clone()
    };
    assert_eq!(claims.len(), 3, "{report}");
    let old = of("one-process-cheaper", Some("uml-bookworm"));
    assert_eq!(old["not_applicable"], "mechanism_absent", "{old}");
    let why = old["reason"].as_str().unwrap();
    assert!(
        why.contains("about the `converted` truncate path")
            && why.contains("kernel=uml-bookworm,loop=processes took `kept_written`")
            && why.contains("0x1 last")
            && !why.contains("uml-trixie"),
        "{why}"
    );
    let new = of("one-process-cheaper", Some("uml-trixie"));
    assert_ne!(new["not_applicable"], "mechanism_absent", "{new}");
    assert!(new["measured"].as_f64().is_some(), "{new}");
    assert!(
        new["details"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().starts_with(
                "truncate path `converted` at every selected point (2 points, 2 replicates"
            )),
        "{new}"
    );
    // Each rests on its own guest only.
    let subs = |c: &serde_json::Value| c["substitutions"].to_string();
    assert!(
        subs(&new).contains("kernel=uml-trixie") && !subs(&new).contains("kernel=uml-bookworm"),
        "{new}"
    );
    // A claim that pins `kernel` compares the kernels: one verdict, as written, on both
    // guests.
    let across = of("newer-kernel-against-older", None);
    assert!(across["measured"].as_f64().is_some(), "{across}");
    assert!(
        subs(&across).contains("kernel=uml-trixie")
            && subs(&across).contains("kernel=uml-bookworm"),
        "{across}"
    );
    assert_eq!(report["counted_per"], "claim_and_kernel", "{report}");
    let counted: u64 = report["tiers"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(counted, 3, "{report}");
    // The text, the Markdown table and the agreement of two reruns name the kernel, and
    // compare the same (claim, kernel).
    let o = s.run(&["claims", &dir]);
    let out = text(&o);
    assert!(
        out.contains(
            "one-process-cheaper @ kernel=uml-bookworm — NOT APPLICABLE: MECHANISM ABSENT"
        ) && out.contains("one-process-cheaper @ kernel=uml-trixie — ")
            && out.contains("newer-kernel-against-older — ")
            && out.contains("counted per claim and kernel"),
        "{out}"
    );
    let o = s.run(&["claims", "--md", &dir]);
    let out = text(&o);
    assert!(
        out.contains("| **one-process-cheaper @ kernel=uml-trixie**: ")
            && out.contains("| **one-process-cheaper @ kernel=uml-bookworm**: "),
        "{out}"
    );
    let o = s.run(&["claims", "--agree", &dir, &dir]);
    let out = text(&o);
    assert!(
        out.contains("one-process-cheaper @ kernel=uml-trixie — ")
            && out.contains("3 of 3 claims (counted per claim and kernel) give the same tier"),
        "{out}"
    );
    let df = fslab::analysis::claims::claims_frame(&b).unwrap();
    assert_eq!(
        strings(&df, "kernel"),
        ["uml-bookworm", "uml-trixie", ""],
        "{df}"
    );
    assert_clean(&s);
}

/// `--kernel NAME` is refused for an experiment with a `kernel` variable even when its
/// profile pins it to `host` (seed 003's quick profile): the points would be named
/// `kernel=host` and run in the guest. Refused before anything boots.
#[test]
fn kernel_flag_is_refused_when_a_profile_pins_the_kernel_axis_to_host() {
    let pinned = PATH_EXPERIMENT.replace(
        "matrix:\n  kernel: [uml-bookworm, uml-trixie]",
        "profiles:\n  quick: { kernel: host }\nmatrix:\n  kernel: [uml-bookworm, uml-trixie]",
    );
    let (s, exp) = scratch_with("umlk", "pinned.yaml", &pinned);
    let o = s.run(&[
        "run",
        exp.to_str().unwrap(),
        "--kernel",
        "uml-bookworm",
        "-q",
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("choose with --set kernel=uml-bookworm"),
        "{}",
        text(&o)
    );
    assert!(s.bundles("uml-path").is_empty());
}

/// `kernel: uml-bookworm` at the top of an experiment runs its points in that guest,
/// with no `--kernel` and no axis; `--set kernel=host` brings them back to the host.
#[test]
fn a_top_level_kernel_key_runs_the_points_in_that_guest() {
    if !uml("a_top_level_kernel_key_runs_the_points_in_that_guest") {
        return;
    }
    let yaml = AXIS_EXPERIMENT
        .replace("id: uml-axis\n", "id: uml-key\nkernel: uml-bookworm\n")
        .replace("matrix:\n  kernel: [host, uml-bookworm]\n", "");
    let (s, exp) = scratch_with("umlk", "uml-key.yaml", &yaml);
    let o = s.run(&["plan", exp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = s.run(&["run", exp.to_str().unwrap(), "--order", "fixed", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let dir = s.bundles("uml-key")[0].clone();
    let b = fslab::store::Bundle::open(&dir).unwrap();
    let m = b.manifest();
    assert_eq!(m.environment.guests.len(), 1, "{:?}", m.environment.guests);
    assert_eq!(m.environment.guests[0].name, "uml-bookworm");
    assert_eq!(m.points.len(), 1);
    let p = &m.points[0];
    assert_eq!(p.status, "ok", "{p:?}");
    let release = std::fs::read_to_string(
        dir.join("logs")
            .join(format!("{:02}-{}", p.index, p.id))
            .join("capture-01-release.stdout"),
    )
    .unwrap();
    assert!(release.starts_with("6.1."), "{release}");
    assert!(
        p.notes
            .iter()
            .any(|n| n.starts_with("measured in a User-Mode Linux guest")),
        "{p:?}"
    );
    // `--kernel` is refused beside it: the file names the kernel, --set chooses another.
    let o = s.run(&["run", exp.to_str().unwrap(), "--kernel", "uml-trixie", "-q"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("choose with --set kernel=uml-trixie"),
        "{}",
        text(&o)
    );
    finish(&s);
}
