//! The tools directory: what counts as installed, and which program a name resolves to.

use super::{
    find_installed, installed_in, provided_in, recipe, version_key, Input, Path, Provenance,
    SourceKind,
};
fn fake_install(root: &Path, name: &str, version: &str, programs: &[&str], complete: bool) {
    let dir = root.join(format!("{name}-{version}"));
    std::fs::create_dir_all(dir.join("sbin")).unwrap();
    for p in programs {
        std::fs::write(dir.join("sbin").join(p), "#!/bin/sh\n").unwrap();
    }
    if complete {
        Provenance {
            name: name.into(),
            version: version.into(),
            source: SourceKind::Tarball,
            origin: format!("upstream tarball /x/{name}-{version}.tar.xz"),
            debian_version: None,
            apt_source: None,
            inputs: vec![Input {
                name: format!("/x/{name}-{version}.tar.xz"),
                sha256: "00".into(),
                bytes: 1,
            }],
            patches: Vec::new(),
            build_commands: vec!["make -j2".into()],
            compiler: "gcc 12".into(),
            build_dependencies: Vec::new(),
            build_dependency_versions: Vec::new(),
            prefix: dir.display().to_string(),
            built_on: "test".into(),
            built_at: "2026-12-01T00:00:00Z".into(),
            log: "build.log".into(),
        }
        .write(&dir)
        .unwrap();
    }
}

#[test]
fn only_complete_installs_count_and_the_newest_provides() {
    let t = tempfile::tempdir().unwrap();
    assert!(installed_in(t.path()).is_empty());
    assert!(provided_in(t.path(), "mkfs.xfs").is_none());

    fake_install(
        t.path(),
        "xfsprogs",
        "6.10.1",
        &["mkfs.xfs", "xfs_io"],
        true,
    );
    fake_install(t.path(), "xfsprogs", "6.13.0", &["mkfs.xfs"], true);
    // Without provenance.json an install is unfinished (a killed build), never used.
    fake_install(t.path(), "xfsprogs", "6.14.0", &["mkfs.xfs"], false);
    // The apt state and build trees are not tools.
    std::fs::create_dir_all(t.path().join(".build/xfsprogs-6.15.0/sbin")).unwrap();

    let all = installed_in(t.path());
    let versions: Vec<&str> = all.iter().map(|i| i.version.as_str()).collect();
    assert_eq!(versions, ["6.13.0", "6.10.1"]);

    let (path, owner) = provided_in(t.path(), "mkfs.xfs").unwrap();
    assert_eq!(path, t.path().join("xfsprogs-6.13.0/sbin/mkfs.xfs"));
    assert_eq!(owner.version, "6.13.0");
    // Only the older install has xfs_io: it provides it.
    let (path, _) = provided_in(t.path(), "xfs_io").unwrap();
    assert_eq!(path, t.path().join("xfsprogs-6.10.1/sbin/xfs_io"));
    // Paths are never redirected; unknown programs are not provided.
    assert!(provided_in(t.path(), "/usr/sbin/mkfs.xfs").is_none());
    assert!(provided_in(t.path(), "mkfs.ext4").is_none());
    assert_eq!(all[0].programs(), ["mkfs.xfs"]);
    assert!(all[0]
        .describe()
        .contains("upstream tarball /x/xfsprogs-6.13.0.tar.xz"));
    assert!(find_installed(t.path(), "xfsprogs", "6.14.0").is_none());
}

#[test]
fn recipes_know_their_programs_and_the_install_command() {
    assert_eq!(recipe::providing("mkfs.xfs").unwrap().name, "xfsprogs");
    assert_eq!(recipe::providing("/opt/x/xfs_io").unwrap().name, "xfsprogs");
    assert!(recipe::providing("mkfs.ext4").is_none());
    assert_eq!(
        recipe::install_command("mkfs.xfs", "6.10").as_deref(),
        Some("fslab tools install xfsprogs")
    );
    // The pinned version is too old for this: no command to offer.
    assert_eq!(recipe::install_command("mkfs.xfs", "7.0"), None);
    assert!(version_key("6.13.0") > version_key("6.9"));
}
