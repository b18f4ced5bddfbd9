//! The spawner on this machine: commands born in a point's cgroups, what they leave
//! killed, their signals, descriptors, exit codes, timeouts and paths.

use super::*;
use crate::devices::cgroup::planned_dirs;

fn words(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A point cgroup and a spawner in it, removed at the end.
struct Fixture {
    dir: tempfile::TempDir,
    cg: PointCgroup,
    name: String,
    no: AtomicBool,
}

impl Fixture {
    fn new(tag: &str) -> Fixture {
        let name = format!("spawner-{tag}-{}", std::process::id());
        let cg = PointCgroup::create(&planned_dirs(&name)).unwrap();
        assert!(!cg.dirs().is_empty(), "no cgroup hierarchy: run as root");
        Fixture {
            dir: tempfile::tempdir().unwrap(),
            cg,
            name,
            no: AtomicBool::new(false),
        }
    }
    fn out(&self) -> std::path::PathBuf {
        self.dir.path().join("o")
    }
    fn err(&self) -> std::path::PathBuf {
        self.dir.path().join("e")
    }
    fn run(&self, s: &mut Spawner, argv: &[&str], timeout: Option<Duration>) -> ExecOutcome {
        s.run(
            &words(argv),
            self.dir.path(),
            &self.out(),
            &self.err(),
            timeout,
            &self.no,
        )
        .unwrap()
    }
    fn read(&self, p: &Path) -> String {
        std::fs::read_to_string(p).unwrap_or_default()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.cg.remove();
    }
}

#[test]
fn commands_are_born_in_the_point_cgroups_with_their_output_and_cpu() {
    let f = Fixture::new("born");
    let mut s = Spawner::start(&f.cg).unwrap();
    // Born there where the kernel can (5.7 and later, with a v2 hierarchy).
    assert_eq!(s.born_in_cgroup(), f.cg.v2_index().is_some());
    let r = f.run(&mut s, &["cat", "/proc/self/cgroup"], None);
    assert!(r.success(), "{r:?}");
    assert_eq!(r.cgroup_join, Duration::ZERO);
    let groups = f.read(&f.out());
    // Every hierarchy the point uses (unified, and v1 blkio where mounted).
    let lines: Vec<&str> = groups.lines().filter(|l| l.ends_with(&f.name)).collect();
    assert_eq!(lines.len(), f.cg.dirs().len(), "{groups}");
    // The CPU time of a grandchild counts; stdout and stderr are appended.
    let r = f.run(
        &mut s,
        &[
            "sh",
            "-c",
            "sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; echo out; echo err >&2",
        ],
        None,
    );
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert!(r.user + r.sys > Duration::from_millis(50), "{r:?}");
    assert!(r.wall > Duration::ZERO && r.spawn > Duration::ZERO, "{r:?}");
    assert!(f.read(&f.out()).ends_with("\nout\n"));
    assert_eq!(f.read(&f.err()), "err\n");
}

#[test]
fn what_a_command_leaves_is_killed_and_the_spawner_serves_on() {
    let f = Fixture::new("left");
    let mut s = Spawner::start(&f.cg).unwrap();
    let r = f.run(
        &mut s,
        &["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!"],
        None,
    );
    assert!(r.success(), "{r:?}");
    let pid: i32 = f.read(&f.out()).trim().parse().unwrap();
    // Killed and reaped before the answer came back.
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "sleep {pid} survived"
    );
    assert_eq!(f.cg.pids(), vec![s.pid()]);
    assert!(f.run(&mut s, &["true"], None).success());
}

#[test]
fn commands_get_default_signals_their_own_group_and_no_descriptor_of_fslab() {
    let f = Fixture::new("sig");
    // A descriptor fslab holds (close-on-exec, as all of Rust's are) must not stay
    // open in the spawner, and its working directory is `/` between commands.
    let held = std::fs::File::open("/proc/self/status").unwrap();
    let mut s = Spawner::start(&f.cg).unwrap();
    let fds: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", s.pid()))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(fds.len(), 4, "stdin/out/err and the socket only: {fds:?}");
    drop(held);
    // With SIGPIPE ignored (as fslab's parent shells sometimes leave it), `yes`
    // would say "Broken pipe" on stderr; at its default it just dies.
    let r = f.run(&mut s, &["sh", "-c", "yes | head -c 1 >/dev/null"], None);
    assert!(r.success(), "{r:?}");
    assert_eq!(f.read(&f.err()), "");
    // Its own process group, not fslab's.
    let r = f.run(&mut s, &["sh", "-c", "ps -o pgid= -p $$"], None);
    assert!(r.success(), "{r:?}");
    let pgid: i32 = f.read(&f.out()).trim().parse().unwrap();
    assert_ne!(pgid, nix::unistd::getpgrp().as_raw());
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", s.pid())).unwrap();
    assert_eq!(cwd, Path::new("/"));
}

#[test]
fn exit_codes_timeouts_cancellation_and_what_cannot_start() {
    let f = Fixture::new("codes");
    let mut s = Spawner::start(&f.cg).unwrap();
    assert_eq!(
        f.run(&mut s, &["sh", "-c", "exit 3"], None).exit_code,
        Some(3)
    );
    let r = f.run(&mut s, &["sleep", "30"], Some(Duration::from_millis(200)));
    assert!(r.timed_out && r.signal == Some(15), "{r:?}");
    assert!(r.wall < Duration::from_secs(10), "{r:?}");
    let r = f.run(&mut s, &["/nonexistent/prog"], None);
    assert!(
        r.spawn_error.as_deref().unwrap().contains("No such file"),
        "{r:?}"
    );
    assert_eq!(r.code_for_table(), 127);
    let r = s
        .run(
            &words(&["true"]),
            &f.dir.path().join("missing"),
            &f.out(),
            &f.err(),
            None,
            &f.no,
        )
        .unwrap();
    assert!(
        r.spawn_error.as_deref().unwrap().contains("cannot enter"),
        "{r:?}"
    );
    let r = f.run(&mut s, &["echo", "a\0b"], None);
    assert!(r.spawn_error.as_deref().unwrap().contains("NUL"), "{r:?}");
    // No shell in between: an argument is one word.
    let marker = f.dir.path().join("pwned");
    let evil = format!("1; touch {}", marker.display());
    assert!(f.run(&mut s, &["echo", &evil], None).success());
    assert!(!marker.exists());
    let yes = AtomicBool::new(true);
    let r = s
        .run(
            &words(&["sleep", "30"]),
            f.dir.path(),
            &f.out(),
            &f.err(),
            None,
            &yes,
        )
        .unwrap();
    assert!(r.cancelled && r.signal == Some(15), "{r:?}");
    // Still serving after all of that.
    assert!(f.run(&mut s, &["true"], None).success());
}

#[test]
fn relative_paths_are_fslabs_not_the_spawners() {
    let f = Fixture::new("rel");
    let mut s = Spawner::start(&f.cg).unwrap();
    // A directory below fslab's working directory, named relatively.
    let here = tempfile::tempdir_in(".").unwrap();
    let rel = Path::new(".").join(here.path().file_name().unwrap());
    let r = s
        .run(
            &words(&["sh", "-c", "pwd; echo e >&2"]),
            &rel,
            &rel.join("o"),
            &rel.join("e"),
            None,
            &f.no,
        )
        .unwrap();
    assert!(r.success(), "{r:?}");
    let out = std::fs::read_to_string(here.path().join("o")).unwrap();
    assert_eq!(Path::new(out.trim()), here.path().canonicalize().unwrap());
    assert_eq!(
        std::fs::read_to_string(here.path().join("e")).unwrap(),
        "e\n"
    );
}

#[test]
fn dropping_the_spawner_ends_it() {
    let f = Fixture::new("drop");
    let s = Spawner::start(&f.cg).unwrap();
    let pid = s.pid();
    assert_eq!(f.cg.pids(), vec![pid]);
    drop(s);
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    assert!(f.cg.pids().is_empty());
}
