//! Which executable a requirement is checked against (`--set`, a tool's chosen
//! alternative, a provisioned tool, PATH), and `fslab tools`, end to end (as root).

use crate::common::{strings, text, Scratch};
use fslab::doctor::{Host, ProbingHost, Version};
use fslab::tools::{Input, Provenance, SourceKind};
use std::path::{Path, PathBuf};
use std::process::Output;

/// The mkfs.xfs on PATH (not a provisioned one) and its version.
fn system_mkfs_xfs() -> (PathBuf, Version) {
    let path = ["/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("xfsprogs is installed (scripts/install-deps.sh)");
    let v = ProbingHost::default()
        .version_line(&path)
        .as_deref()
        .and_then(Version::find_in)
        .unwrap();
    (path, v)
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A build of one's own: says 6.13.0 for `-V`, forwards to the real mkfs.xfs otherwise.
fn fake_build(dir: &Path, real: &Path) -> PathBuf {
    let script = dir.join("mkfs").join("mkfs.xfs");
    write_script(
        &script,
        &format!(
            "#!/bin/sh\nif [ \"$1\" = \"-V\" ]; then echo \"mkfs.xfs version 6.13.0\"; exit 0; fi\nexec {} \"$@\"\n",
            real.display()
        ),
    );
    script
}

/// fslab with its own (empty unless filled) tools directory.
fn fslab(s: &Scratch, tools: &Path, args: &[&str]) -> Output {
    s.fslab()
        .env("FSLAB_TOOLS_DIR", tools)
        .args(args)
        .output()
        .unwrap()
}

fn doctor_json(s: &Scratch, tools: &Path, extra: &[&str]) -> (serde_json::Value, Output) {
    let mut args = vec!["doctor", "xfs-parent-pointers", "--json"];
    args.extend(extra);
    let o = fslab(s, tools, &args);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", text(&o)));
    (v, o)
}

fn problems_of<'a>(report: &'a serde_json::Value, id: &str) -> &'a Vec<serde_json::Value> {
    report["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no point {id} in {report}"))["problems"]
        .as_array()
        .unwrap()
}

fn notes_of(report: &serde_json::Value, id: &str) -> Vec<String> {
    report["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap()["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// A small run of one point: the bundle.
fn run_point(s: &Scratch, tools: &Path, extra: &[&str]) -> (fslab::Bundle, Output) {
    let mut args = vec![
        "run",
        "xfs-parent-pointers",
        "--quiet",
        "--set",
        "parent=1",
        "--set",
        "link=1",
        "--set",
        "n=200",
        "--set",
        "runs=2",
    ];
    args.extend(extra);
    let o = fslab(s, tools, &args);
    let path = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let b = fslab::Bundle::open(&path).unwrap_or_else(|e| panic!("{e}\n{}", text(&o)));
    assert!(
        s.loops().is_empty() && s.mounts().is_empty(),
        "{:?} {:?}",
        s.loops(),
        s.mounts()
    );
    (b, o)
}

#[test]
fn a_build_given_with_set_is_the_one_whose_version_is_checked() {
    let s = Scratch::new("fslab-test-tools-set-");
    let tools = s.root.join("tools");
    let (real, real_version) = system_mkfs_xfs();
    let script = fake_build(&s.root.join("x"), &real);
    let set = format!(
        "mkfs_xfs=[{}, -n, 'parent={{{{parent}}}}']",
        script.display()
    );

    // The doctor asks the build given with --set: every point can run.
    let (report, o) = doctor_json(&s, &tools, &["--set", &set]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for id in ["parent=1,link=1", "parent=1,link=0"] {
        assert!(problems_of(&report, id).is_empty(), "{report}");
        let want = format!(
            "asked {} (given with --set mkfs_xfs): version 6.13.0",
            script.display()
        );
        assert!(
            notes_of(&report, id).iter().any(|n| n.contains(&want)),
            "{report}"
        );
    }
    // So does the run's preflight; the manifest names the executable and its version.
    let (b, o) = run_point(&s, &tools, &["--set", &set]);
    let m = b.manifest();
    let p = &m.points[0];
    assert_ne!(p.status, "unsupported", "{p:?}\n{}", text(&o));
    assert!(
        p.reason.as_deref().is_none_or(|r| !r.contains("too old")),
        "{p:?}"
    );
    let t = &m.tools["mkfs_xfs"];
    assert_eq!(t.program, script.display().to_string());
    assert!(t.version.contains("6.13.0"), "{t:?}");
    let e = &m.executables[&script.display().to_string()];
    assert_eq!(e.path, script.display().to_string());
    assert!(e.version.contains("6.13.0"), "{e:?}");
    assert_eq!(e.via, "given with --set mkfs_xfs");
    assert!(e.provenance.is_none());

    // The same build on neither --set nor PATH: PATH's mkfs.xfs is asked.
    if real_version >= Version(vec![6, 10]) {
        eprintln!("PATH's mkfs.xfs is {real_version}: the unsupported half cannot be shown here");
        return;
    }
    let (report, o) = doctor_json(&s, &tools, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    for id in ["parent=1,link=1", "parent=1,link=0"] {
        let problems = problems_of(&report, id);
        assert_eq!(problems.len(), 1, "{report}");
        let msg = problems[0]["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("version {real_version}; ≥ 6.10 is needed"))
                && msg.contains("(chosen for mkfs_xfs)"),
            "{msg}"
        );
        assert_eq!(
            problems[0]["fix"].as_str().unwrap(),
            "run `fslab tools install xfsprogs`, or install xfsprogs ≥ 6.10 from a newer distribution, backports or a source build"
        );
    }
    let (b, _) = run_point(&s, &tools, &[]);
    let p = &b.manifest().points[0];
    assert_eq!(p.status, "unsupported", "{p:?}");
    assert!(
        p.reason.as_deref().unwrap().contains("≥ 6.10 is needed"),
        "{p:?}"
    );
}

/// A fake provisioned xfsprogs: its mkfs.xfs says 6.13.0 and forwards to `real`.
fn fake_provisioned(tools: &Path, real: &Path) -> PathBuf {
    let dir = tools.join("xfsprogs-6.13.0");
    let mkfs = fake_build(&dir.join("x"), real);
    std::fs::create_dir_all(dir.join("sbin")).unwrap();
    std::fs::rename(&mkfs, dir.join("sbin/mkfs.xfs")).unwrap();
    Provenance {
        name: "xfsprogs".into(),
        version: "6.13.0".into(),
        source: SourceKind::DebianSource,
        origin: "Debian source package xfsprogs 6.13.0-2+deb13u1 (trixie)".into(),
        debian_version: Some("6.13.0-2+deb13u1".into()),
        apt_source: None,
        inputs: vec![Input {
            name: "xfsprogs_6.13.0.orig.tar.xz".into(),
            sha256: "00".into(),
            bytes: 1,
        }],
        patches: Vec::new(),
        build_commands: vec!["make -j2".into()],
        compiler: "gcc".into(),
        build_dependencies: Vec::new(),
        build_dependency_versions: Vec::new(),
        prefix: dir.display().to_string(),
        built_on: "test".into(),
        built_at: "2026-12-01T00:00:00Z".into(),
        log: "build.log".into(),
    }
    .write(&dir)
    .unwrap();
    dir.join("sbin/mkfs.xfs")
}

#[test]
fn a_provisioned_tool_comes_before_path_and_is_not_rebuilt() {
    let s = Scratch::new("fslab-test-tools-prov-");
    let tools = s.root.join("tools");
    let (real, _) = system_mkfs_xfs();
    let provisioned = fake_provisioned(&tools, &real);

    // Installing the version that is there does nothing: no apt state, no build tree.
    let o = fslab(&s, &tools, &["tools", "install", "xfsprogs"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("already installed: xfsprogs 6.13.0 (Debian source package xfsprogs 6.13.0-2+deb13u1 (trixie))"),
        "{out}"
    );
    assert!(!tools.join(".apt").exists() && !tools.join(".build").exists());
    let o = fslab(&s, &tools, &["tools", "install", "xfsprogs=6.13.0"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("already installed"));

    // The plan's tool choice and the doctor take the provisioned mkfs.xfs.
    let (report, o) = doctor_json(&s, &tools, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let want = format!(
        "asked {} (chosen for mkfs_xfs): version 6.13.0",
        provisioned.display()
    );
    assert!(
        notes_of(&report, "parent=1,link=1")
            .iter()
            .any(|n| n.contains(&want)),
        "{report}"
    );
    let o = fslab(&s, &tools, &["plan", "xfs-parent-pointers"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("mkfs.xfs -n 'parent=1'"), "{out}");

    // `fslab tools list`: what is provisioned, and what the requirements would use.
    let o = fslab(&s, &tools, &["tools", "list"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("xfsprogs 6.13.0: Debian source package xfsprogs 6.13.0-2+deb13u1 (trixie)"),
        "{out}"
    );
    assert!(out.contains("programs: mkfs.xfs"), "{out}");
    assert!(out.contains("xfs-parent-pointers ("), "{out}");
    assert!(
        out.contains(&format!(
            "requirement `mkfs.xfs` ≥ 6.10 (mkfs.xfs -n parent=1 (parent pointers) is new in xfsprogs 6.10): asked {} (chosen for mkfs_xfs): version 6.13.0 [parent=1,link=1; parent=1,link=0]",
            provisioned.display()
        )),
        "{out}"
    );

    // The run records the provisioned executable with its provenance.
    let (b, o) = run_point(&s, &tools, &[]);
    let m = b.manifest();
    assert_ne!(m.points[0].status, "unsupported", "{}", text(&o));
    let e = &m.executables["mkfs.xfs"];
    assert_eq!(e.path, provisioned.display().to_string());
    assert!(e.version.contains("6.13.0"), "{e:?}");
    let prov = e.provenance.as_ref().unwrap();
    assert_eq!(prov.debian_version.as_deref(), Some("6.13.0-2+deb13u1"));
    assert!(
        m.tools["mkfs_xfs"]
            .version
            .contains("provisioned by fslab: xfsprogs 6.13.0"),
        "{:?}",
        m.tools
    );
}

/// Every file under /etc/apt, by path and content.
fn hash_tree(dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .map(|e| e.path().to_path_buf())
        .collect();
    files.sort();
    for f in files {
        h.update(f.display().to_string().as_bytes());
        if let Ok(meta) = std::fs::symlink_metadata(&f) {
            h.update(
                format!(
                    "{:o}",
                    std::os::unix::fs::PermissionsExt::mode(&meta.permissions())
                )
                .as_bytes(),
            );
        }
        if f.is_file() {
            h.update(std::fs::read(&f).unwrap_or_default());
        }
    }
    hex::encode(h.finalize())
}

#[test]
fn the_debian_source_comes_through_fslabs_own_apt_state() {
    let s = Scratch::new("fslab-test-tools-apt-");
    let tools = s.root.join("tools");
    let before = hash_tree(Path::new("/etc/apt"));
    let o = fslab(
        &s,
        &tools,
        &["tools", "install", "xfsprogs", "--download-only"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(hash_tree(Path::new("/etc/apt")), before, "/etc/apt changed");
    let out = String::from_utf8_lossy(&o.stdout);
    // The .dsc, the upstream tarball and Debian's packaging, each with its sha256.
    for name in [".dsc", ".orig.tar.", ".debian.tar."] {
        assert!(
            out.lines()
                .any(|l| l.contains(name) && l.trim_start().len() > 64 + 2),
            "{name}: {out}"
        );
    }
    let sources = std::fs::read_to_string(tools.join(".apt/sources.list")).unwrap();
    assert_eq!(
        sources,
        "deb-src http://deb.debian.org/debian trixie main\n"
    );
    // Nothing counts as installed after a download.
    assert!(fslab::tools::installed_in(&tools).is_empty());
    // A version the suite does not have: said, with the other ways to get it.
    let o = fslab(
        &s,
        &tools,
        &["tools", "install", "xfsprogs=6.99.0", "--download-only"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("trixie's source package xfsprogs is 6.13.0-")
            && err.contains("not version 6.99.0; build 6.99.0 with --tarball FILE --sha256 HEX or --git URL --ref TAG"),
        "{err}"
    );
    assert_eq!(hash_tree(Path::new("/etc/apt")), before, "/etc/apt changed");
}

#[test]
fn bad_tools_install_requests_say_what_is_wrong() {
    let s = Scratch::new("fslab-test-tools-bad-");
    let tools = s.root.join("tools");
    let o = fslab(&s, &tools, &["tools", "install", "e2fsprogs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("fslab has no recipe for `e2fsprogs`; known: xfsprogs"),
        "{}",
        text(&o)
    );
    let tarball = s.root.join("xfsprogs-6.13.0.tar.xz");
    std::fs::write(&tarball, b"not a tarball").unwrap();
    let o = fslab(
        &s,
        &tools,
        &[
            "tools",
            "install",
            "xfsprogs",
            "--tarball",
            &tarball.display().to_string(),
            "--sha256",
            "0000",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("sha256 is ") && err.contains(", expected 0000"),
        "{err}"
    );
    assert!(fslab::tools::installed_in(&tools).is_empty());
}

/// The xfsprogs that `scripts/install-deps.sh` provisions.
fn provisioned_xfsprogs() -> fslab::tools::Installed {
    fslab::tools::installed()
        .into_iter()
        .find(|i| {
            i.name == "xfsprogs"
                && Version::parse(&i.version).is_some_and(|v| v >= Version(vec![6, 10]))
        })
        .unwrap_or_else(|| {
            panic!(
                "no provisioned xfsprogs ≥ 6.10 in {}: run scripts/install-deps.sh (it runs `fslab tools install xfsprogs`)",
                fslab::tools::tools_dir().display()
            )
        })
}

#[test]
fn the_provisioned_xfsprogs_runs_the_parent_1_points() {
    let x = provisioned_xfsprogs();
    let tools = fslab::tools::tools_dir();
    let s = Scratch::new("fslab-test-tools-real-");
    let (report, o) = doctor_json(&s, &tools, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for id in ["parent=1,link=1", "parent=1,link=0"] {
        assert!(problems_of(&report, id).is_empty(), "{report}");
    }
    let (b, o) = run_point(&s, &tools, &[]);
    let m = b.manifest();
    assert_eq!(m.points[0].status, "ok", "{:?}\n{}", m.points[0], text(&o));
    let e = &m.executables["mkfs.xfs"];
    assert!(e.path.starts_with(&x.dir.display().to_string()), "{e:?}");
    assert!(e.version.contains(&x.version), "{e:?}");
    assert_eq!(e.provenance.as_ref(), Some(&x.provenance));
    // mkfs.xfs -n parent=1 made parent pointers, and the kernel mounted it.
    let geo = b.table("geometry").unwrap();
    let col = |n: &str| strings(&geo, n);
    let (kinds, keys, values) = (col("kind"), col("key"), col("value"));
    for kind in ["mkfs.xfs", "xfs_info"] {
        assert!(
            (0..keys.len()).any(|i| kinds[i] == kind && keys[i] == "parent" && values[i] == "1"),
            "no parent=1 from {kind}: {geo}"
        );
    }
}

/// A tiny source tree shaped like xfsprogs: `make include/builddefs` configures (from
/// `$LOCAL_CONFIGURE_OPTIONS`), `make` builds, `make install DIST_ROOT=…` installs.
/// With `fail_configure`, configure fails the way a missing uuid-dev makes it fail.
fn fake_source(dir: &Path, version: &str, fail_configure: bool) -> PathBuf {
    let src = dir.join(format!("xfsprogs-{version}"));
    std::fs::create_dir_all(src.join("include")).unwrap();
    std::fs::write(src.join("include/README"), "headers\n").unwrap();
    let configure = if fail_configure {
        "\t@echo 'checking for uuid.h... no'\n\t@echo 'configure: error: could not find a valid UUID header.'\n\t@exit 1\n".to_string()
    } else {
        "\techo \"prefix = $(patsubst --prefix=%,%,$(filter --prefix=%,$(LOCAL_CONFIGURE_OPTIONS)))\" > include/builddefs\n".to_string()
    };
    let makefile = format!(
        "-include include/builddefs\n\
         default: mkfs/mkfs.xfs\n\
         include/builddefs:\n{configure}\
         mkfs/mkfs.xfs: mkfs/main.c\n\
         \t@echo '    [CC]     main.o'\n\
         \tprintf '#!/bin/sh\\necho \"mkfs.xfs version {version}\"\\n' > $@\n\
         \t@echo '    [LD]     mkfs.xfs'\n\
         install: default\n\
         \tmkdir -p $(DIST_ROOT)$(prefix)/sbin\n\
         \tinstall -m 755 mkfs/mkfs.xfs $(DIST_ROOT)$(prefix)/sbin/mkfs.xfs\n"
    );
    std::fs::write(src.join("Makefile"), makefile).unwrap();
    std::fs::create_dir_all(src.join("mkfs")).unwrap();
    std::fs::write(src.join("mkfs/main.c"), "int main(void) { return 0; }\n").unwrap();
    src
}

fn sha256_hex(path: &Path) -> String {
    fslab::tools::build::sha256_file(path).unwrap().0
}

/// `fake_source` of `version` as a tarball under the scratch directory, and its sha256.
fn fake_tarball(s: &Scratch, version: &str, fail_configure: bool) -> (PathBuf, String) {
    fake_source(&s.root.join("src"), version, fail_configure);
    let tarball = s.root.join(format!("xfsprogs-{version}.tar.gz"));
    let o = std::process::Command::new("tar")
        .args(["-czf", &tarball.display().to_string(), "-C"])
        .arg(s.root.join("src"))
        .arg(format!("xfsprogs-{version}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let sha = sha256_hex(&tarball);
    (tarball, sha)
}

/// `fslab tools install xfsprogs --tarball TARBALL --sha256 SHA`, then `extra`.
fn install_tarball(s: &Scratch, tools: &Path, tarball: &Path, sha: &str, extra: &[&str]) -> Output {
    let tarball = tarball.display().to_string();
    let mut args = vec![
        "tools",
        "install",
        "xfsprogs",
        "--tarball",
        &tarball,
        "--sha256",
        sha,
    ];
    args.extend(extra);
    fslab(s, tools, &args)
}

#[test]
fn a_tarball_builds_installs_with_provenance_and_is_not_rebuilt() {
    let s = Scratch::new("fslab-test-tools-tar-");
    let tools = s.root.join("tools");
    let (tarball, sha) = fake_tarball(&s, "9.9.9", false);
    let o = install_tarball(&s, &tools, &tarball, &sha, &["--jobs", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    // Progress: each step, and make's compile/link lines.
    assert!(
        err.contains("==> configure: LOCAL_CONFIGURE_OPTIONS="),
        "{err}"
    );
    assert!(err.contains("==> make -j2: make -j2"), "{err}");
    assert!(err.contains("linked mkfs.xfs"), "{err}");
    let installed = fslab::tools::find_installed(&tools, "xfsprogs", "9.9.9").unwrap();
    let p = &installed.provenance;
    assert_eq!(p.source, SourceKind::Tarball);
    let abs = std::fs::canonicalize(&tarball).unwrap();
    assert_eq!(p.inputs[0].name, abs.display().to_string());
    assert_eq!(p.inputs[0].sha256, sha);
    assert!(
        p.build_commands.iter().any(|c| c.ends_with("make -j2)")),
        "{p:?}"
    );
    assert!(
        p.compiler.contains("gcc") || p.compiler.starts_with("cc"),
        "{p:?}"
    );
    assert!(installed.dir.join("build.log").is_file());
    // It runs from its install directory and the doctor takes it before PATH.
    let mkfs = installed.dir.join("sbin/mkfs.xfs");
    let o = std::process::Command::new(&mkfs).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "mkfs.xfs version 9.9.9\n"
    );
    let (report, _) = doctor_json(&s, &tools, &[]);
    assert!(
        notes_of(&report, "parent=1,link=1")
            .iter()
            .any(|n| n.contains(&format!(
                "asked {} (chosen for mkfs_xfs): version 9.9.9",
                mkfs.display()
            ))),
        "{report}"
    );
    // The build tree is gone; a second install does nothing.
    assert!(!tools.join(".build/xfsprogs-9.9.9").exists());
    let o = install_tarball(&s, &tools, &tarball, &sha, &["--jobs", "2"]);
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .starts_with("already installed: xfsprogs 9.9.9 (upstream tarball"),
        "{}",
        text(&o)
    );
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("==>"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_git_checkout_builds_at_its_tag() {
    let s = Scratch::new("fslab-test-tools-git-");
    let tools = s.root.join("tools");
    let src = fake_source(&s.root, "9.9.8", false);
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&src)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "v9.9.8"]);
    git(&["tag", "v9.9.8"]);
    let commit = git(&["rev-parse", "HEAD"]);
    let url = format!("file://{}", src.display());
    let o = fslab(
        &s,
        &tools,
        &[
            "tools", "install", "xfsprogs", "--git", &url, "--ref", "v9.9.8",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let installed = fslab::tools::find_installed(&tools, "xfsprogs", "9.9.8").unwrap();
    assert_eq!(installed.provenance.source, SourceKind::Git);
    assert_eq!(
        installed.provenance.inputs[0].sha256,
        format!("git commit {commit}")
    );
    assert!(
        installed.provenance.origin.contains(&url),
        "{:?}",
        installed.provenance
    );
}

#[test]
fn a_failed_build_names_the_step_and_the_missing_dependency() {
    let s = Scratch::new("fslab-test-tools-fail-");
    let tools = s.root.join("tools");
    let (tarball, sha) = fake_tarball(&s, "9.9.7", true);
    let o = install_tarball(&s, &tools, &tarball, &sha, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("configure (exit status 2) failed; missing build dependency: uuid-dev (could not find a valid UUID header.)"),
        "{err}"
    );
    assert!(err.contains("full log: "), "{err}");
    // Nothing counts as installed.
    assert!(fslab::tools::installed_in(&tools).is_empty());
    assert!(!tools.join("xfsprogs-9.9.7").exists());
}
