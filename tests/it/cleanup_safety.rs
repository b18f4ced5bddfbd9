//! Cleanup cannot be turned against the host (issue 19), on real loop devices, as root:
//! a planted record deletes nothing, a symlinked or relative work directory leaks
//! nothing, reclaim never touches a live run, a full results filesystem loses no row,
//! and a SIGKILLed run leaves no process behind.

use crate::common::{text, Scratch};

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn write_exp(s: &Scratch, name: &str, yaml: &str) -> PathBuf {
    let p = s.root.join(format!("{name}.yaml"));
    std::fs::write(&p, yaml).unwrap();
    p
}

/// One point on one tiny loop device: mkfs, mount, a workload, umount.
fn tiny(s: &Scratch, workload: &str) -> PathBuf {
    write_exp(
        s,
        "tiny",
        &format!(
            "id: tiny\ntitle: tiny\ndevices:\n  data: {{ size: 8MiB }}\nsetup:\n  - run: mkfs.ext2 -F -q {{{{dev.data}}}}\n  - mount: data\nworkload:\n  run: {workload}\nteardown:\n  - umount: \"{{{{mnt}}}}\"\n"
        ),
    )
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(st) => {
            let state = st.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill9(child: &mut Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_planted_record_makes_cleanup_delete_nothing() {
    let s = Scratch::new("plant");
    let victim = s.root.join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("precious"), "keep me").unwrap();
    let record = |dir: &Path| {
        format!(
            r#"{{"pid":999999,"start_ticks":0,"dir":"{}","images":[],"loops":[],"tmpfs":[]}}"#,
            dir.display()
        )
    };

    // 1. The reproduction: a work directory made by another user (nobody), with a
    //    record naming the victim. Root's cleanup refuses the directory.
    let foreign = s.root.join("foreign");
    std::fs::create_dir_all(foreign.join("owned")).unwrap();
    std::fs::write(foreign.join("owned/1-0.json"), record(&victim)).unwrap();
    for p in [
        &foreign,
        &foreign.join("owned"),
        &foreign.join("owned/1-0.json"),
    ] {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    }
    let o = s
        .fslab()
        .env("FSLAB_WORK_DIR", &foreign)
        .arg("cleanup")
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("refusing work directory") && err.contains("uid 65534"),
        "{}",
        text(&o)
    );
    assert!(victim.join("precious").exists(), "the victim was deleted");

    // 2. A directory others can write to is refused too, even when root owns it.
    let open = s.root.join("open");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = s
        .fslab()
        .env("FSLAB_WORK_DIR", &open)
        .arg("cleanup")
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("writable by others"),
        "{}",
        text(&o)
    );

    // 3. In root's own work directory, a record that points outside `<work>/p/` is
    //    not believed (whoever wrote it), and says so.
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    let work = std::fs::canonicalize(s.work()).unwrap();
    std::fs::write(work.join("owned/1-0.json"), record(&victim)).unwrap();
    std::fs::write(
        work.join("owned/1-1.json"),
        record(&work.join("p/../../victim")),
    )
    .unwrap();
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1-0.json") && err.contains("not directly under"),
        "{}",
        text(&o)
    );
    assert!(err.contains("1-1.json"), "{}", text(&o));
    assert!(victim.join("precious").exists(), "the victim was deleted");
    // A record as a symlink to a file elsewhere is not read either.
    std::fs::remove_file(work.join("owned/1-0.json")).unwrap();
    std::fs::remove_file(work.join("owned/1-1.json")).unwrap();
    let elsewhere = s.root.join("rec.json");
    std::fs::write(&elsewhere, record(&work.join("p/zz"))).unwrap();
    symlink(&elsewhere, work.join("owned/2-0.json")).unwrap();
    let o = s.run(&["cleanup"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2-0.json"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_symlinked_or_relative_work_dir_leaks_nothing() {
    let s = Scratch::new("link");
    let exp = tiny(&s, "sync");
    let real = s.root.join("real");
    std::fs::create_dir_all(&real).unwrap();
    let link = s.root.join("link");
    symlink(&real, &link).unwrap();

    let o = s
        .fslab()
        .env("FSLAB_WORK_DIR", &link)
        .args(["run", exp.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(s.loops().is_empty(), "loop devices left: {:?}", s.loops());
    assert!(s.mounts().is_empty(), "mounts left: {:?}", s.mounts());

    // Relative, from another directory.
    let o = s
        .fslab()
        .current_dir(&s.root)
        .env_remove("FSLAB_WORK_DIR")
        .args([
            "run",
            exp.to_str().unwrap(),
            "--quiet",
            "--work-dir",
            "rel/w",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(s.loops().is_empty(), "loop devices left: {:?}", s.loops());

    // Killed mid-workload through the symlink, cleaned up through the symlink.
    let exp = tiny(&s, "sleep 600");
    let mut child = s
        .fslab()
        .env("FSLAB_WORK_DIR", &link)
        .args(["run", exp.to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    wait_for("the mount", Duration::from_secs(60), || {
        !s.mounts().is_empty()
    });
    kill9(&mut child);
    assert!(!s.loops().is_empty());
    let o = s
        .fslab()
        .env("FSLAB_WORK_DIR", &link)
        .arg("cleanup")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        s.loops().is_empty() && s.mounts().is_empty(),
        "{}",
        text(&o)
    );
}

#[test]
fn a_sigkilled_run_leaves_no_process_mount_or_loop_behind() {
    let s = Scratch::new("orph");
    let pids = s.root.join("pids");
    // The workload holds a file open on {{mnt}}, and starts a `setsid` escapee that
    // does too; both would outlive fslab without a cgroup.
    let exp = write_exp(
        &s,
        "orphan",
        &format!(
            r#"id: orphan
title: a workload that holds the mount
devices:
  data: {{ size: 8MiB }}
setup:
  - run: mkfs.ext2 -F -q {{{{dev.data}}}}
  - mount: data
workload:
  run: ["sh", "-c", "setsid sh -c 'exec sleep 600 3<>{{{{mnt}}}}/a' & echo $! >> {p}; echo $$ >> {p}; exec sleep 600 3<>{{{{mnt}}}}/b"]
teardown:
  - umount: "{{{{mnt}}}}"
"#,
            p = pids.display()
        ),
    );
    let mut child = s
        .fslab()
        .args(["run", exp.to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    let read_pids = || -> Vec<i32> {
        std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    wait_for("the workload", Duration::from_secs(60), || {
        read_pids().len() >= 2
    });
    std::thread::sleep(Duration::from_millis(300));
    let fslab_pid = child.id();
    kill9(&mut child);
    let tree = read_pids();
    assert!(
        tree.iter().all(|p| alive(*p)),
        "the workload died with fslab: the test proves nothing"
    );
    assert!(!s.mounts().is_empty() && !s.loops().is_empty());

    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    for p in &tree {
        assert!(
            !alive(*p),
            "process {p} of the killed run survived cleanup\n{}",
            text(&o)
        );
    }
    assert!(s.mounts().is_empty(), "mounts left: {:?}", s.mounts());
    assert!(s.loops().is_empty(), "loop devices left: {:?}", s.loops());
    // Its cgroups are gone too.
    for h in fslab::devices::cgroup::hierarchies() {
        let base = match &h {
            fslab::devices::cgroup::Hierarchy::V2(m) => m.join("fslab"),
            fslab::devices::cgroup::Hierarchy::V1 { mount, .. } => mount.join("fslab"),
        };
        let left: Vec<_> = std::fs::read_dir(&base)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            !left
                .iter()
                .any(|n: &String| n.starts_with(&format!("{fslab_pid}-"))),
            "cgroups left in {}: {left:?}",
            base.display()
        );
    }
}

#[test]
fn cleanup_while_another_run_provisions_leaves_that_run_alone() {
    let s = Scratch::new("race");
    // A dead run's mount that stays busy: its reclaim takes seconds and then fails,
    // holding the work directory's lock meanwhile.
    let exp = tiny(&s, "sleep 600");
    let mut child = s
        .fslab()
        .args(["run", exp.to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    wait_for("the dead run's mount", Duration::from_secs(60), || {
        !s.mounts().is_empty()
    });
    kill9(&mut child);
    let dead_mnt = PathBuf::from(s.mounts().pop().unwrap());
    let holder = std::fs::File::create(dead_mnt.join("held")).unwrap();

    // A live run of several points, each provisioning while cleanups run.
    let live = write_exp(
        &s,
        "live",
        "id: live\ntitle: live\ndevices:\n  data: { size: 8MiB }\nmatrix:\n  n: [1, 2, 3]\nsetup:\n  - run: mkfs.ext2 -F -q {{dev.data}}\n  - mount: data\n  - run: touch {{mnt}}/mine\nworkload:\n  run: test -e {{mnt}}/mine\n  repeat: 2\nteardown:\n  - umount: \"{{mnt}}\"\n",
    );
    let mut cleanup = s.fslab().arg("cleanup").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let run = s
        .fslab()
        .args(["run", live.to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    let mut more = Vec::new();
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(700));
        more.push(s.fslab().arg("cleanup").spawn().unwrap());
    }
    let o = run.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let bundle = s.bundles("live").pop().unwrap();
    let m = fslab::Bundle::open(&bundle).unwrap().manifest().clone();
    assert!(
        m.points
            .iter()
            .all(|p| p.status == "ok" && p.iterations == 2),
        "a cleanup disturbed the live run: {:?}",
        m.points
    );
    // The busy dead mount was reported, not lazily detached.
    let first = cleanup.wait().unwrap();
    assert!(!first.success());
    for mut c in more {
        c.wait().unwrap();
    }
    assert!(s.mounts().iter().any(|m| Path::new(m) == dead_mnt));
    drop(holder);
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        s.mounts().is_empty() && s.loops().is_empty(),
        "{}",
        text(&o)
    );
}

#[test]
fn a_full_results_filesystem_loses_no_row_of_an_ok_point() {
    let s = Scratch::new("full");
    let results = s.root.join("res");
    std::fs::create_dir_all(&results).unwrap();
    // A small tmpfs for the results, filled up by the workload of the second point.
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "fslab-test-full"])
        .arg(&results)
        .status()
        .unwrap();
    assert!(st.success());
    let filler = results.join("filler");
    let marker = s.root.join("fill-once");
    std::fs::write(&marker, "").unwrap();
    let exp = write_exp(
        &s,
        "full",
        &format!(
            r#"id: full
title: results filesystem fills up
matrix:
  n: [1, 2, 3]
workload:
  run: ["sh", "-c", "if [ {{{{n}}}} = 2 ] && [ {{{{iteration}}}} = 2 ] && [ -e {m} ]; then rm {m}; cat /dev/zero > {f}; fi; true"]
  repeat: 3
"#,
            m = marker.display(),
            f = filler.display()
        ),
    );
    // The journal grows row by row here (its usual room grown ahead would let this
    // small run finish on the full disk, and there would be nothing to test).
    let o = s
        .fslab()
        .env("FSLAB_RESULTS_DIR", &results)
        .env("FSLAB_JOURNAL_CHUNK", "1")
        .args(["run", exp.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    let bundle = std::fs::read_dir(results.join("full"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let full_ok = !o.status.success();
    std::fs::remove_file(&filler).unwrap();
    assert!(
        full_ok,
        "the run did not notice the full filesystem\n{}",
        text(&o)
    );
    let o = s
        .fslab()
        .env("FSLAB_RESULTS_DIR", &results)
        .args(["run", "--resume", bundle.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    let journal = std::fs::read_to_string(bundle.join("runs.jsonl")).unwrap_or_default();
    // (Scratch's drop unmounts the results tmpfs.)
    assert!(o.status.success(), "{}", text(&o));
    let b = fslab::Bundle::open(&bundle).unwrap();
    let m = b.manifest().clone();
    assert_eq!(m.status, "complete", "{:?}", m.points);
    let runs = b.runs().unwrap();
    for p in &m.points {
        let n = runs
            .column("point_id")
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .filter(|v| *v == Some(p.id.as_str()))
            .count();
        assert_eq!(n, 3, "point {} has {n} rows", p.id);
    }
    assert_eq!(journal.lines().count(), 9, "journal:\n{journal}");
    assert!(journal.ends_with('\n'));
}

#[test]
fn a_setsid_escapee_is_killed_and_its_cpu_counted() {
    let s = Scratch::new("esc");
    let pids = s.root.join("pids");
    // One escapee burns CPU and ends by itself while its parent still runs (its CPU
    // time belongs to the iteration); the other would sleep on after the step.
    let exp = write_exp(
        &s,
        "escape",
        &format!(
            r#"id: escape
title: setsid escapees
workload:
  run: ["sh", "-c", "setsid sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done' & setsid sleep 600 & echo $! > {p}; sleep 3"]
"#,
            p = pids.display()
        ),
    );
    let o = s.run(&["run", exp.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let sleeper: i32 = std::fs::read_to_string(&pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(sleeper), "the setsid sleeper outlived its step");
    let bundle = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let runs = fslab::Bundle::open(&bundle).unwrap().runs().unwrap();
    let cpu: f64 = ["user_s", "sys_s"]
        .iter()
        .map(|c| runs.column(c).unwrap().f64().unwrap().get(0).unwrap())
        .sum();
    // The parent shell and sleep use next to nothing; the busy loop takes a good part
    // of a second of CPU on any machine.
    assert!(cpu > 0.2, "the escapee's CPU time was not counted: {cpu} s");
}

#[test]
fn a_release_that_fails_keeps_the_measured_point_and_its_record() {
    let s = Scratch::new("busy");
    let exp = tiny(&s, "sleep 2");
    let mut child = s
        .fslab()
        .args(["run", exp.to_str().unwrap(), "--quiet"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the mount", Duration::from_secs(60), || {
        !s.mounts().is_empty()
    });
    // The test itself (outside the point's cgroup) holds the mount busy.
    let mnt = PathBuf::from(s.mounts().pop().unwrap());
    let holder = std::fs::File::create(mnt.join("held")).unwrap();
    // The teardown's umount fails (busy): it is a warning, the release fails too.
    let o = {
        let t0 = Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "fslab did not finish"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        child.wait_with_output().unwrap()
    };
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let bundle = s.bundles("tiny").pop().unwrap();
    let m = fslab::Bundle::open(&bundle).unwrap().manifest().clone();
    assert_eq!(m.points[0].status, "ok", "{:?}\n{err}", m.points);
    assert_eq!(m.points[0].iterations, 1);
    assert!(err.contains("could not release"), "{err}");
    assert!(
        !s.loops().is_empty(),
        "the busy mount's loop device was detached anyway"
    );
    drop(holder);
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1 records"),
        "{}",
        text(&o)
    );
    assert!(s.mounts().is_empty() && s.loops().is_empty());
}

#[test]
fn a_tmpfs_a_step_mounted_is_released_and_sighup_is_an_interrupt() {
    let s = Scratch::new("hup");
    let exp = write_exp(
        &s,
        "steptmpfs",
        "id: steptmpfs\ntitle: a step mounts a tmpfs\ndevices:\n  data: { size: 8MiB }\nsetup:\n  - run: mkfs.ext2 -F -q {{dev.data}}\n  - mount: data\n  - mkdir: \"{{mnt}}/t\"\n  - run: mount -t tmpfs fslab-step-tmpfs {{mnt}}/t\n  - run: touch {{mnt}}/t/x\nworkload:\n  run: sleep 600\n",
    );
    let mut child = s
        .fslab()
        .args(["run", exp.to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    wait_for("the step's tmpfs", Duration::from_secs(60), || {
        s.mounts().len() >= 2
    });
    std::thread::sleep(Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let t0 = Instant::now();
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "SIGHUP did not stop fslab"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(st.code(), Some(130), "an interrupted run exits 130: {st:?}");
    assert!(s.mounts().is_empty(), "mounts left: {:?}", s.mounts());
    assert!(s.loops().is_empty(), "loop devices left: {:?}", s.loops());
}

/// A busy loop device only detaches on its last close, and the number is free for the
/// next `losetup --find` at once. Another run that attaches its own image to that
/// number while fslab waits for its detach must keep it: fslab's later attempts check
/// the device's backing file through the descriptor they clear it with.
#[test]
fn a_loop_number_reused_during_a_deferred_detach_stays_with_its_new_owner() {
    use fslab::devices::{attach, backing_id, detach, FileId};
    let s = Scratch::new("reuse");
    let image = |name: &str| {
        let p = s.root.join(name);
        std::fs::File::create(&p).unwrap().set_len(8 << 20).unwrap();
        p
    };
    let (a, b) = (image("a.img"), image("b.img"));
    let lo = attach(&a).unwrap();
    let id_a = FileId::of(&a).unwrap();
    let id_b = FileId::of(&b).unwrap();
    // Someone else holds the device open, so the first detach is deferred.
    let holder = std::fs::File::open(&lo.device).unwrap();
    let dev = lo.device.clone();
    let waiter = std::thread::spawn(move || detach(&dev, id_a));
    let name = lo.device.file_name().unwrap().to_str().unwrap().to_string();
    let autoclear = format!("/sys/block/{name}/loop/autoclear");
    wait_for("the deferred detach", Duration::from_secs(10), || {
        std::fs::read_to_string(&autoclear).is_ok_and(|t| t.trim() == "1")
    });
    // The last close frees the number; another owner takes it at once.
    drop(holder);
    wait_for("the device to be free", Duration::from_secs(10), || {
        backing_id(&lo.device).is_none()
    });
    let o = Command::new("losetup")
        .arg(&lo.device)
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let result = waiter.join().unwrap();
    let kept = backing_id(&lo.device);
    // Leave nothing behind whatever happened.
    let _ = detach(&lo.device, id_b);
    result.unwrap();
    assert_eq!(kept, Some(id_b), "the new owner's device was detached");
}
