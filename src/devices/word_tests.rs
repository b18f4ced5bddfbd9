//! The runner's last check on each word it runs: the point's own devices pass; any
//! other device, under `/dev/` or not (a symbolic link, a node made elsewhere), is
//! refused. On a real loop device, as root.

use super::{test_needs_root, PointResources, WorkDir};
use crate::spec::{Backing, DevicePlan};
use std::path::PathBuf;

#[test]
fn check_word_refuses_every_device_but_the_points_own() {
    if !test_needs_root("devices::word_tests::check_word_refuses_every_device_but_the_points_own") {
        return;
    }
    let root = PathBuf::from(format!("/var/tmp/fslab-test-words-{}", std::process::id()));
    let work = WorkDir::open(&root).unwrap();
    let dir = work.points().join("p");
    let plans = [DevicePlan {
        name: "data".into(),
        size_bytes: 16 << 20,
        backing: Backing::File,
        medium: None,
        throttle: None,
    }];
    let mut devs = PointResources::provision(&work, dir.clone(), &plans).unwrap();
    let own = devs.device("data").unwrap().device.display().to_string();
    // A block node outside /dev and links to it and to the point's own device.
    let node = root.join("node");
    nix::sys::stat::mknod(
        &node,
        nix::sys::stat::SFlag::S_IFBLK,
        nix::sys::stat::Mode::from_bits_truncate(0o600),
        nix::sys::stat::makedev(7, 255),
    )
    .unwrap();
    let link = root.join("link");
    std::os::unix::fs::symlink(&node, &link).unwrap();
    let own_link = root.join("own");
    std::os::unix::fs::symlink(&own, &own_link).unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for ok in [
            own.clone(),
            format!("of={own}"),
            format!("-r rtdev={own}"),
            own_link.display().to_string(),
            "of=/dev/null".into(),
            "plain".into(),
        ] {
            assert!(devs.check_word(&ok).is_ok(), "{ok} refused");
        }
        for bad in [
            "/dev/vda".to_string(),
            "of=/dev/nvme0n1".into(),
            format!("rtdev={own},logdev=/dev/sdb"),
            "/dev/null/../sda".into(),
            node.display().to_string(),
            format!("if={}", link.display()),
        ] {
            assert!(devs.check_word(&bad).is_err(), "{bad} passed");
        }
    }));
    devs.release().unwrap();
    std::fs::remove_dir_all(&root).unwrap();
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
