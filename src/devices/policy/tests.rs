use super::config::check_config_permissions;
use super::sysfs::identify;
use super::{
    check_size, config_path, match_listed, parse_config, parse_env_list, parse_mapping, InUse,
    MappedDevice, Path, PathBuf, Refusal, ScratchList, ENV_LIST,
};

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;

#[test]
fn config_lists_absolute_paths_and_refuses_anything_else() {
    let l = parse_config("scratch_devices: [/dev/sdb, /dev/disk/by-id/x]\n", "c.yaml").unwrap();
    assert_eq!(
        l.iter().map(|x| x.path.clone()).collect::<Vec<_>>(),
        [
            PathBuf::from("/dev/sdb"),
            PathBuf::from("/dev/disk/by-id/x")
        ]
    );
    assert_eq!(l[0].origin, "c.yaml");
    assert!(parse_config("", "c").unwrap().is_empty());
    assert!(parse_config("# nothing yet\n", "c").unwrap().is_empty());
    assert!(parse_config("scratch_devices: []\n", "c")
        .unwrap()
        .is_empty());
    let e = parse_config("scratch_device: [/dev/sdb]\n", "c").unwrap_err();
    assert!(
        e.to_string().contains("unknown field `scratch_device`"),
        "{e}"
    );
    let e = parse_config("scratch_devices: [sdb]\n", "c").unwrap_err();
    assert!(e.to_string().contains("not an absolute path"), "{e}");
    let e = parse_config("scratch_devices: /dev/sdb\n", "c").unwrap_err();
    assert!(
        e.to_string()
            .contains("expected `scratch_devices: [/dev/sdX"),
        "{e}"
    );
    assert!(parse_config("scratch_devices: [/dev/sdb\n", "c").is_err());
}

#[test]
fn env_list_is_colon_separated() {
    let l = parse_env_list("/dev/sdb::/dev/sdc: ").unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[1].path, PathBuf::from("/dev/sdc"));
    assert_eq!(l[1].origin, ENV_LIST);
    assert!(parse_env_list("").unwrap().is_empty());
    assert!(parse_env_list("/dev/sdb:sdc").is_err());
}

#[test]
fn config_path_prefers_explicit_then_xdg_then_home() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(a, _)| *a == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let all = env(&[
        ("FSLAB_CONFIG", "/etc/x.yaml"),
        ("XDG_CONFIG_HOME", "/x"),
        ("HOME", "/home/u"),
    ]);
    assert_eq!(
        config_path(&all),
        Some((PathBuf::from("/etc/x.yaml"), true))
    );
    let xdg = env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/home/u")]);
    assert_eq!(
        config_path(&xdg),
        Some((PathBuf::from("/x/fslab/config.yaml"), false))
    );
    // A relative XDG_CONFIG_HOME is ignored, as the spec says.
    let rel = env(&[("XDG_CONFIG_HOME", "x"), ("HOME", "/home/u")]);
    assert_eq!(
        config_path(&rel),
        Some((PathBuf::from("/home/u/.config/fslab/config.yaml"), false))
    );
    assert_eq!(config_path(&env(&[("FSLAB_CONFIG", "")])), None);
}

fn fake_fs() -> impl Fn(&Path) -> Option<PathBuf> {
    let links: HashMap<&str, &str> = [
        ("/dev/sdb", "/dev/sdb"),
        ("/dev/sdc", "/dev/sdc"),
        ("/dev/disk/by-id/usb-x", "/dev/sdb"),
        ("/dev/disk/by-id/usb-y", "/dev/sdb"),
        ("/tmp/evil", "/dev/sda"),
        ("/dev/sda", "/dev/sda"),
    ]
    .into_iter()
    .collect();
    move |p: &Path| links.get(p.to_str()?).map(PathBuf::from)
}

#[test]
fn matching_resolves_both_sides() {
    let canon = fake_fs();
    let list = ScratchList::from_paths(&[Path::new("/dev/disk/by-id/usb-x")]);
    // A listed symlink matches its target, and another name of the same node.
    assert_eq!(
        match_listed(Path::new("/dev/sdb"), &list, &canon),
        Ok(PathBuf::from("/dev/sdb"))
    );
    assert_eq!(
        match_listed(Path::new("/dev/disk/by-id/usb-y"), &list, &canon),
        Ok(PathBuf::from("/dev/sdb"))
    );
    // A different device is refused, naming what is listed.
    let e = match_listed(Path::new("/dev/sdc"), &list, &canon).unwrap_err();
    assert!(e.to_string().contains("not a listed scratch device"), "{e}");
    assert!(
        e.to_string().contains("/dev/disk/by-id/usb-x (→ /dev/sdb)"),
        "{e}"
    );
    // A symlink to an unlisted device names where it leads.
    let list = ScratchList::from_paths(&[Path::new("/dev/sdb")]);
    let e = match_listed(Path::new("/tmp/evil"), &list, &canon).unwrap_err();
    assert!(
        e.to_string()
            .contains("resolves through symlinks to /dev/sda"),
        "{e}"
    );
    // Missing paths and empty lists.
    let e = match_listed(Path::new("/dev/sdz"), &list, &canon).unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    let e = match_listed(Path::new("/dev/sdb"), &ScratchList::default(), &canon).unwrap_err();
    assert!(
        e.to_string().contains("no scratch devices are listed"),
        "{e}"
    );
    // A listed entry that does not exist matches nothing.
    let list = ScratchList::from_paths(&[Path::new("/dev/gone")]);
    let e = match_listed(Path::new("/dev/sdb"), &list, &canon).unwrap_err();
    assert!(e.to_string().contains("/dev/gone (missing)"), "{e}");
}

#[test]
fn a_mapped_device_must_hold_what_the_experiment_declares() {
    let m = MappedDevice {
        name: "data".into(),
        given: "/dev/sdb".into(),
        device: "/dev/sdb".into(),
        devno: (8, 16),
        size_bytes: 1 << 30,
        listed: "/dev/sdb".into(),
        diskseq: None,
    };
    assert!(check_size(&m, 1 << 30).is_ok());
    let e = check_size(&m, 2 << 30).unwrap_err();
    assert!(
        e.to_string().contains("holds 1.0 GiB") && e.to_string().contains("`data`"),
        "{e}"
    );
    let empty = MappedDevice { size_bytes: 0, ..m };
    assert!(check_size(&empty, 0)
        .unwrap_err()
        .to_string()
        .contains("no capacity"));
}

#[test]
fn a_config_others_can_write_is_not_trusted() {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(check_config_permissions(f.path()).is_ok());
    std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let e = check_config_permissions(f.path()).unwrap_err().to_string();
    assert!(
        e.to_string()
            .contains("writable by group or others (mode 666)"),
        "{e}"
    );
}

#[test]
fn mappings_parse() {
    assert_eq!(
        parse_mapping("data=/dev/sdb").unwrap(),
        ("data".to_string(), PathBuf::from("/dev/sdb"))
    );
    assert!(parse_mapping("data").is_err());
    assert!(parse_mapping("=/dev/sdb").is_err());
    assert!(parse_mapping("data=sdb").is_err());
    assert!(parse_mapping("da ta=/dev/sdb").is_err());
}

#[test]
fn regular_files_and_char_devices_are_not_block_devices() {
    let e = identify(Path::new("/dev/null")).unwrap_err();
    assert!(
        e.to_string()
            .contains("not a block device (a character device)"),
        "{e}"
    );
    let f = tempfile::NamedTempFile::new().unwrap();
    let e = identify(f.path()).unwrap_err();
    assert!(e.to_string().contains("a regular file"), "{e}");
}

#[test]
fn holders_are_named_with_their_kind_once() {
    let why = InUse::Holders {
        partition: None,
        holders: vec!["dm-0".into(), "md127".into(), "bcache0".into()],
    };
    assert_eq!(
        Refusal::InUse(why).to_string(),
        "it has holders: dm-0 (device-mapper: LVM, crypt, multipath), md127 (md RAID), bcache0"
    );
}
