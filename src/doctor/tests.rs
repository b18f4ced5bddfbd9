//! The doctor's verdicts against a made-up machine.

use super::{
    check, tool_words, ConfigValue, Host, Plan, Point, PointCheck, Probe, ProbeResult, Problem,
    ProblemKind, Report, Version,
};
use crate::plan::parse_override;
use crate::spec::Experiment;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Default)]
struct FakeHost {
    /// program → version line (None: installed, prints no version)
    tools: HashMap<String, Option<String>>,
    config: HashMap<String, ConfigValue>,
    config_readable: bool,
    filesystems: Vec<String>,
    probe: Probe,
    probe_result: Option<ProbeResult>,
    probes: std::cell::Cell<usize>,
}

impl FakeHost {
    fn with(tools: &[(&str, Option<&str>)]) -> FakeHost {
        FakeHost {
            tools: tools
                .iter()
                .map(|(n, v)| (n.to_string(), v.map(str::to_string)))
                .collect(),
            config_readable: true,
            filesystems: vec!["xfs".into(), "ext4".into(), "ext3".into()],
            ..Default::default()
        }
    }
}

impl Host for FakeHost {
    fn which(&self, program: &str) -> Option<PathBuf> {
        let name = Path::new(program).file_name()?.to_str()?;
        if name == "fslab" {
            return Some(PathBuf::from(program));
        }
        self.tools
            .contains_key(program)
            .then(|| PathBuf::from(program))
            .or_else(|| {
                self.tools
                    .contains_key(name)
                    .then(|| PathBuf::from(format!("/usr/sbin/{name}")))
            })
    }
    fn version_line(&self, path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?;
        self.tools
            .get(&path.display().to_string())
            .or_else(|| self.tools.get(name))
            .cloned()
            .flatten()
    }
    fn kernel_release(&self) -> String {
        "6.99.0-test".into()
    }
    fn kernel_config(&self, key: &str) -> (ConfigValue, String) {
        if !self.config_readable {
            return (ConfigValue::Unknown, "no kernel configuration found".into());
        }
        (
            self.config.get(key).cloned().unwrap_or(ConfigValue::NotSet),
            "/boot/config-test".into(),
        )
    }
    fn filesystems(&self) -> Vec<String> {
        self.filesystems.clone()
    }
    fn fs_module(&self, _fstype: &str) -> bool {
        false
    }
    fn probe_mode(&self) -> Probe {
        self.probe
    }
    fn probe_xfs_rt(&self) -> ProbeResult {
        self.probes.set(self.probes.get() + 1);
        self.probe_result
            .clone()
            .unwrap_or(ProbeResult::Inconclusive("no probe".into()))
    }
}

const EXP: &str = r#"
id: t
title: T
devices:
  data: { size: 1GiB }
vars:
  n: 10
matrix:
  parent: [0, 1]
tools:
  fsstress:
    choices:
      - fsstress
      - run: "{{fslab}} stress"
        stand_in: the built-in workload
  mkfs_xfs:
    choices:
      - run: [mkfs.xfs, -n, "parent={{parent}}"]
        requires: [{ tool: mkfs.xfs, min_version: "6.10" }]
      - mkfs.xfs
requires:
  - { kernel: "fs:xfs" }
setup:
  - run: "{{mkfs_xfs}} -f {{dev.data}}"
    requires:
      - { tool: mkfs.xfs, min_version: "6.10", package: xfsprogs, when: { parent: 1 }, reason: parent pointers }
  - mount: data
  - run: fs_mark -d {{mnt}} -n {{n}}
workload:
  run: "{{fsstress}} -n {{n}} -d {{mnt}}"
"#;

fn plan(host: &FakeHost, sets: &[&str]) -> Plan {
    let exp = Experiment::from_str_named(EXP, "t.yaml").unwrap();
    let overrides: Vec<_> = sets.iter().map(|s| parse_override(s).unwrap()).collect();
    Plan::with_host(&exp, None, &overrides, host).unwrap()
}

fn words(p: &Point, name: &str) -> Vec<String> {
    tool_words(p, name)
}

#[test]
fn versions_parse_compare_and_are_found_in_tool_output() {
    let v = |s: &str| Version::parse(s).unwrap();
    assert!(v("6.10") > v("6.9"));
    assert!(v("6.1.0") < v("6.10"));
    assert_eq!(v("6.1"), v("6.1.0"));
    assert!(Version::parse("6.x").is_none());
    assert!(Version::parse("").is_none());
    assert_eq!(
        Version::find_in("mkfs.xfs version 6.1.0")
            .unwrap()
            .to_string(),
        "6.1.0"
    );
    assert_eq!(
        Version::find_in("mke2fs 1.47.0 (5-Feb-2023)")
            .unwrap()
            .to_string(),
        "1.47.0"
    );
    assert_eq!(
        Version::find_in("btrfs-progs v6.2").unwrap().to_string(),
        "6.2"
    );
    assert!(Version::find_in("fs_mark: no version").is_none());
}

#[test]
fn old_xfsprogs_makes_parent_1_unsupported_and_parent_0_plain_mkfs() {
    let host = FakeHost::with(&[
        ("mkfs.xfs", Some("mkfs.xfs version 6.1.0")),
        ("fs_mark", None),
    ]);
    let plan = plan(&host, &[]);
    // The tool choices: no fsstress → the stand-in; old mkfs.xfs → the plain command.
    let fsstress = &plan.tools["fsstress"];
    assert_eq!(fsstress.choice, Some(1));
    assert!(fsstress.stand_in.is_some());
    assert_eq!(words(&plan.points[0], "fsstress")[1], "stress");
    assert!(words(&plan.points[0], "fsstress")[0].ends_with("fslab"));
    assert_eq!(plan.tools["mkfs_xfs"].choice, Some(1));
    assert_eq!(words(&plan.points[1], "mkfs_xfs"), ["mkfs.xfs"]);
    assert!(plan.tools["mkfs_xfs"].notes[0].contains("6.1.0; ≥ 6.10 is needed"));

    let report = check(&plan, &host);
    assert!(report.points[0].runnable(), "{report}");
    let p1 = &report.points[1];
    assert_eq!(p1.problems.len(), 1, "{report}");
    assert_eq!(p1.problems[0].kind, ProblemKind::OldTool);
    let reason = p1.reason().unwrap();
    assert!(
        reason.contains("`mkfs.xfs` is version 6.1.0; ≥ 6.10 is needed (parent pointers)"),
        "{reason}"
    );
    assert!(reason.contains("install xfsprogs ≥ 6.10"), "{reason}");
    assert!(p1
        .notes
        .iter()
        .any(|n| n == "fsstress: fslab stress (stand-in)"));
    let df = report.to_frame().unwrap();
    assert_eq!(df.height(), 2);
    assert_eq!(
        df.column("runnable").unwrap().bool().unwrap().get(1),
        Some(false)
    );
}

#[test]
fn new_xfsprogs_and_a_real_fsstress_are_taken() {
    let host = FakeHost::with(&[
        ("mkfs.xfs", Some("mkfs.xfs version 6.12.0")),
        ("fs_mark", None),
        ("fsstress", None),
    ]);
    let plan = plan(&host, &[]);
    assert_eq!(plan.tools["fsstress"].choice, Some(0));
    assert!(plan.tools["fsstress"].stand_in.is_none());
    assert_eq!(
        words(&plan.points[1], "mkfs_xfs"),
        ["mkfs.xfs", "-n", "parent=1"]
    );
    assert_eq!(
        words(&plan.points[0], "mkfs_xfs"),
        ["mkfs.xfs", "-n", "parent=0"]
    );
    let report = check(&plan, &host);
    assert_eq!(report.runnable(), 2, "{report}");
}

#[test]
fn set_picks_a_tool_command() {
    let host = FakeHost::with(&[("mkfs.xfs", Some("6.1.0")), ("fs_mark", None)]);
    let plan = plan(&host, &["fsstress=/opt/xfstests/ltp/fsstress -v"]);
    let t = &plan.tools["fsstress"];
    assert_eq!(t.choice, None);
    assert!(!t.found);
    assert_eq!(
        words(&plan.points[0], "fsstress"),
        ["/opt/xfstests/ltp/fsstress", "-v"]
    );
    // Not installed: the doctor says so for every point.
    let report = check(&plan, &host);
    assert_eq!(report.runnable(), 0, "{report}");
    assert!(report.points[0]
        .reason()
        .unwrap()
        .contains("missing tool: `/opt/xfstests/ltp/fsstress` is not installed; fix: Debian has no fsstress package"));
}

#[test]
fn a_missing_tool_names_its_debian_package() {
    let host = FakeHost::with(&[("mkfs.xfs", Some("6.12"))]);
    let report = check(&plan(&host, &[]), &host);
    let reason = report.points[0].reason().unwrap();
    assert!(
        reason.contains(
            "missing tool: `fs_mark` is not installed; fix: install it: apt-get install fsmark"
        ),
        "{reason}"
    );
}

fn rt_plan(host: &FakeHost) -> Plan {
    let exp = Experiment::from_str_named(
        r#"
id: rt
title: RT
matrix:
  layout: [rt, data]
requires:
  - { kernel: xfs_rt, when: { layout: rt } }
  - { kernel: "fs:ext3", when: { layout: data } }
workload:
  run: "true"
"#,
        "rt.yaml",
    )
    .unwrap();
    Plan::with_host(&exp, None, &[], host).unwrap()
}

#[test]
fn realtime_xfs_from_the_kernel_configuration() {
    let mut host = FakeHost::with(&[("true", None)]);
    let report = check(&rt_plan(&host), &host);
    let reason = report.points[0].reason().unwrap();
    assert!(
        reason.contains("missing kernel feature: kernel 6.99.0-test cannot mount XFS with a realtime device: CONFIG_XFS_RT is not set in /boot/config-test"),
        "{reason}"
    );
    assert!(reason.contains("ENOSYS"), "{reason}");
    assert!(report.points[1].runnable(), "{report}");
    assert_eq!(host.probes.get(), 0, "a readable config needs no probe");

    host.config
        .insert("CONFIG_XFS_RT".into(), ConfigValue::BuiltIn);
    assert!(check(&rt_plan(&host), &host).points[0].runnable());
}

#[test]
fn realtime_xfs_is_probed_when_the_configuration_is_unreadable() {
    let mut host = FakeHost::with(&[("true", None)]);
    host.config_readable = false;
    host.probe = Probe::IfUnknown;
    host.probe_result = Some(ProbeResult::Fails("mount: Function not implemented".into()));
    let report = check(&rt_plan(&host), &host);
    assert!(report.points[0]
        .reason()
        .unwrap()
        .contains("a probe mount failed: mount: Function not implemented"));
    assert_eq!(host.probes.get(), 1);

    host.probe_result = Some(ProbeResult::Works);
    assert!(check(&rt_plan(&host), &host).points[0].runnable());

    // Without probing, an unknown kernel is a note and the point runs.
    host.probe = Probe::Never;
    let report = check(&rt_plan(&host), &host);
    assert!(report.points[0].runnable());
    assert!(report.points[0].notes[0]
        .contains("cannot tell whether kernel 6.99.0-test has CONFIG_XFS_RT"));
}

#[test]
fn a_filesystem_the_kernel_lacks() {
    let mut host = FakeHost::with(&[("true", None)]);
    host.filesystems = vec!["xfs".into()];
    host.config
        .insert("CONFIG_XFS_RT".into(), ConfigValue::BuiltIn);
    let report = check(&rt_plan(&host), &host);
    assert!(report.points[0].runnable());
    let reason = report.points[1].reason().unwrap();
    assert!(
        reason.contains("kernel 6.99.0-test has no ext3 filesystem (CONFIG_EXT3_FS is not set"),
        "{reason}"
    );
    host.config
        .insert("CONFIG_EXT3_FS".into(), ConfigValue::Module);
    let report = check(&rt_plan(&host), &host);
    assert!(report.points[1].runnable());
    // ext3 on a kernel ≥ 4.3 is the ext4 driver: said at the point that needs ext3.
    assert!(
        report.points[1]
            .notes
            .iter()
            .any(|n| n.starts_with("ext3 is mounted by the ext4 driver here (kernel 6.99.0-test")),
        "{report}"
    );
    assert!(!report.points[0]
        .notes
        .iter()
        .any(|n| n.contains("ext4 driver")));
}

#[test]
fn requirement_errors_are_located() {
    let bad = EXP.replace(r#"- { kernel: "fs:xfs" }"#, r#"- { kernel: xfs_realtime }"#);
    let e = Experiment::from_str_named(&bad, "t.yaml").unwrap_err();
    assert!(
        e.message.contains("unknown kernel feature `xfs_realtime`"),
        "{e}"
    );
    let bad = EXP.replace(
        r#"min_version: "6.10", package"#,
        r#"min_version: "six", package"#,
    );
    let e = Experiment::from_str_named(&bad, "t.yaml").unwrap_err();
    assert!(e.message.contains("is not a version"), "{e}");
    let bad = EXP.replace(
        r#"- { kernel: "fs:xfs" }"#,
        r#"- { kernel: "fs:xfs", tool: mkfs.xfs }"#,
    );
    let e = Experiment::from_str_named(&bad, "t.yaml").unwrap_err();
    assert!(e.message.contains("exactly one of"), "{e}");
    let bad = EXP.replace("  fsstress:\n", "  n:\n");
    let e = Experiment::from_str_named(&bad, "t.yaml").unwrap_err();
    assert!(e.message.contains("tool `n` is also a var"), "{e}");
    let bad = EXP.replace("\"{{fslab}} stress\"", "\"{{mnt}}/stress\"");
    let e = Experiment::from_str_named(&bad, "t.yaml").unwrap_err();
    assert!(e.message.contains("undefined name `{{mnt}}`"), "{e}");
}

const MEDIA: &str = r#"
id: m
title: M
devices:
  data: { size: 1GiB, medium: hdd-2008 }
workload:
  run: /bin/true
  trace: io
"#;

#[test]
fn media_and_traces_need_fuse_and_tracefs() {
    let exp = Experiment::from_str_named(MEDIA, "m.yaml").unwrap();
    let mut host = FakeHost::with(&[("/bin/true", None)]);
    host.filesystems = vec!["fuse".into(), "tracefs".into()];
    let plan = Plan::with_host(&exp, None, &[], &host).unwrap();
    let r = check(&plan, &host);
    assert!(r.points[0].runnable(), "{:?}", r.points[0].problems);
    assert!(
        r.points[0]
            .notes
            .iter()
            .any(|n| n.contains("medium hdd-2008 is a model served through FUSE")),
        "{:?}",
        r.points[0].notes
    );
    host.filesystems = vec!["ext4".into()];
    let r = check(&plan, &host);
    let subjects: Vec<&str> = r.points[0]
        .problems
        .iter()
        .map(|p| p.subject.as_str())
        .collect();
    assert_eq!(subjects, ["fuse", "tracefs"]);
    let throttled = MEDIA.replace("medium: hdd-2008", "throttle: { read_iops: 100 }");
    let exp = Experiment::from_str_named(&throttled, "m.yaml").unwrap();
    host.filesystems = vec!["fuse".into(), "tracefs".into()];
    let plan = Plan::with_host(&exp, None, &[], &host).unwrap();
    let r = check(&plan, &host);
    // Throttling depends on this machine's cgroups (the doctor reads them itself).
    match crate::devices::throttle::host_hierarchy() {
        Some(_) => assert!(
            r.points[0]
                .notes
                .iter()
                .any(|n| n.contains("throttle through cgroup")),
            "{:?}",
            r.points[0].notes
        ),
        None => assert_eq!(r.points[0].problems[0].subject, "throttle"),
    }
}

#[test]
fn a_requirement_is_checked_against_the_program_given_with_set() {
    // PATH has an old mkfs.xfs; the --set command names a newer build.
    let host = FakeHost::with(&[
        ("mkfs.xfs", Some("mkfs.xfs version 6.1.0")),
        ("/opt/x/mkfs.xfs", Some("mkfs.xfs version 6.13.0")),
        ("fs_mark", None),
    ]);
    let p = plan(
        &host,
        &["mkfs_xfs=[/opt/x/mkfs.xfs, -n, 'parent={{parent}}']"],
    );
    let report = check(&p, &host);
    assert_eq!(report.runnable(), 2, "{report}");
    let p1 = &report.points[1];
    assert!(
        p1.notes.iter().any(|n| n.contains(
            "requirement `mkfs.xfs` ≥ 6.10 (parent pointers): asked /opt/x/mkfs.xfs (given with --set mkfs_xfs): version 6.13.0"
        )),
        "{report}"
    );

    // An old build given with --set fails, and the fix says how to give another.
    let host = FakeHost::with(&[
        ("mkfs.xfs", Some("mkfs.xfs version 6.13.0")),
        ("/opt/old/mkfs.xfs", Some("mkfs.xfs version 6.2.0")),
        ("fs_mark", None),
    ]);
    let p = plan(
        &host,
        &["mkfs_xfs=[/opt/old/mkfs.xfs, -n, 'parent={{parent}}']"],
    );
    let report = check(&p, &host);
    let reason = report.points[1].reason().unwrap();
    assert!(
        reason.contains("`mkfs.xfs` is version 6.2.0; ≥ 6.10 is needed (parent pointers); asked /opt/old/mkfs.xfs (given with --set mkfs_xfs)"),
        "{reason}"
    );
    assert!(
        reason.contains("give a build ≥ 6.10 with --set mkfs_xfs=…, or leave --set out and run `fslab tools install xfsprogs`"),
        "{reason}"
    );
}

#[test]
fn a_failed_min_version_prints_the_tools_install_command() {
    let host = FakeHost::with(&[
        ("mkfs.xfs", Some("mkfs.xfs version 6.1.0")),
        ("fs_mark", None),
    ]);
    let report = check(&plan(&host, &[]), &host);
    let reason = report.points[1].reason().unwrap();
    assert!(
        reason.contains("asked mkfs.xfs (chosen for mkfs_xfs)"),
        "{reason}"
    );
    assert!(
        reason.contains("fix: run `fslab tools install xfsprogs`"),
        "{reason}"
    );
}

#[test]
fn a_requirement_for_a_program_the_point_never_runs_is_not_checked() {
    // xfs_repair is not installed and no step runs it: a note, not a problem.
    let exp = EXP.replace(
        r#"- { kernel: "fs:xfs" }"#,
        r#"- { kernel: "fs:xfs" }
  - { tool: xfs_repair, min_version: "6.10" }"#,
    );
    let host = FakeHost::with(&[
        ("mkfs.xfs", Some("mkfs.xfs version 6.13.0")),
        ("fs_mark", None),
    ]);
    let exp = Experiment::from_str_named(&exp, "t.yaml").unwrap();
    let plan = Plan::with_host(&exp, None, &[], &host).unwrap();
    let report = check(&plan, &host);
    assert_eq!(report.runnable(), 2, "{report}");
    assert!(
        report.points[0].notes.iter().any(|n| n
            == "requirement `xfs_repair` ≥ 6.10: no step of this point runs `xfs_repair`; not checked"),
        "{report}"
    );
}

#[test]
fn points_that_share_a_reason_print_it_once() {
    let rt = Problem {
        kind: ProblemKind::MissingKernelFeature,
        subject: "xfs_rt".into(),
        message: "realtime XFS: a probe mount failed".into(),
        fix: None,
    };
    let point = |index: usize, id: &str, problems: Vec<Problem>| PointCheck {
        index,
        id: id.into(),
        problems,
        notes: vec!["tool mkfs_xfs: mkfs.xfs".into()],
    };
    let report = Report {
        experiment: "x".into(),
        profile: None,
        kernel: "6.1".into(),
        tools: Vec::new(),
        points: vec![
            point(0, "rt,8k", vec![rt.clone()]),
            point(1, "data,8k", Vec::new()),
            point(2, "rt,16k", vec![rt.clone()]),
            point(3, "data,16k", Vec::new()),
        ],
    };
    let text = report.to_string();
    assert_eq!(text.matches("a probe mount failed").count(), 1, "{text}");
    assert_eq!(text.matches("tool mkfs_xfs").count(), 2, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1..],
        [
            "  unsupported 0 [rt,8k]",
            "              2 [rt,16k]",
            "      ✗ missing kernel feature: realtime XFS: a probe mount failed",
            "      · tool mkfs_xfs: mkfs.xfs",
            "  ok          1 [data,8k]",
            "              3 [data,16k]",
            "      · tool mkfs_xfs: mkfs.xfs",
        ],
        "{text}"
    );
}
