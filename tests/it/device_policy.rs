//! The device policy on real block devices (as root). Loop devices that the test
//! attaches itself stand in for the user's "real disks": fslab did not create them, so
//! they are exactly what `--device NAME=PATH` maps.

use crate::common::{fixture, text, Scratch};
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const IMAGES: &str = "/var/tmp/fslab-test-hardening";

fn sh(program: &str, args: &[&str]) -> String {
    let o = Command::new(program).args(args).output().unwrap();
    assert!(o.status.success(), "{program} {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// An image file attached to a loop device by the test; detached and deleted on drop,
/// after unmounting anything mounted from it.
struct TestDisk {
    image: PathBuf,
    device: PathBuf,
}

impl TestDisk {
    fn new(tag: &str, mib: u64) -> TestDisk {
        std::fs::create_dir_all(IMAGES).unwrap();
        let image = Path::new(IMAGES).join(format!("{tag}-{:08x}.img", rand::random::<u32>()));
        {
            // Distinct content at both ends, so that a checksum means something.
            let mut f = std::fs::File::create(&image).unwrap();
            f.set_len(mib << 20).unwrap();
            use std::io::Write;
            let pattern: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + 3) as u8).collect();
            f.write_all(&pattern).unwrap();
            f.seek(SeekFrom::End(-(1 << 20))).unwrap();
            f.write_all(&pattern).unwrap();
        }
        let dev = sh("losetup", &["--find", "--show", image.to_str().unwrap()]);
        TestDisk {
            image,
            device: PathBuf::from(dev),
        }
    }

    /// Another loop device on the same image file.
    fn second_loop(&self) -> TestDisk {
        let dev = sh(
            "losetup",
            &["--find", "--show", self.image.to_str().unwrap()],
        );
        TestDisk {
            image: self.image.clone(),
            device: PathBuf::from(dev),
        }
    }

    fn path(&self) -> &str {
        self.device.to_str().unwrap()
    }

    fn attached(&self) -> bool {
        fslab::devices::loop_backing_file(&self.device).is_some_and(|b| b == self.image)
    }
}

impl Drop for TestDisk {
    fn drop(&mut self) {
        for m in fslab::devices::mounts()
            .into_iter()
            .filter(|m| Path::new(&m.source) == self.device)
        {
            let _ = fslab::devices::unmount(&m.mount_point);
        }
        if self.attached() {
            let _ = Command::new("losetup").arg("-d").arg(&self.device).status();
        }
        // The last of several loop devices on one image deletes it.
        if !fslab::devices::loops_backed_under(Path::new(IMAGES))
            .iter()
            .any(|l| l.image == self.image)
        {
            let _ = std::fs::remove_file(&self.image);
        }
    }
}

/// A mount made by the test, unmounted on drop.
struct TestMount(PathBuf);

impl TestMount {
    /// Mounted read-only: fslab must refuse a mounted device either way, and a read-only
    /// mount is never written by the kernel itself (a `sync` run by any concurrent test
    /// rewrites a mounted ext2's superblock time, which the checksums would see).
    fn new(device: &str, tag: &str) -> TestMount {
        let at = Path::new(IMAGES).join(format!("mnt-{tag}-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(&at).unwrap();
        sh("mount", &["-o", "ro", device, at.to_str().unwrap()]);
        TestMount(at)
    }
}

impl Drop for TestMount {
    fn drop(&mut self) {
        let _ = fslab::devices::unmount(&self.0);
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// sha256 of the first and of the last MiB; None when the kernel will not let even root
/// open the device (then nothing can write it either).
fn ends(device: &str) -> Option<(String, String)> {
    let mut f = match std::fs::File::open(device) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return None,
        Err(e) => panic!("open {device}: {e}"),
    };
    let size = f.seek(SeekFrom::End(0)).unwrap();
    let mut hash_at = |offset: u64| {
        let mut buf = vec![0u8; (1u64 << 20).min(size) as usize];
        f.seek(SeekFrom::Start(offset)).unwrap();
        f.read_exact(&mut buf).unwrap();
        hex::encode(Sha256::digest(&buf))
    };
    let first = hash_at(0);
    let last = hash_at(size.saturating_sub(1 << 20));
    Some((first, last))
}

/// How fslab sees the user's configuration in these tests: nothing from the real
/// home directory.
fn fslab(s: &Scratch, list: &str) -> Command {
    let mut c = s.fslab();
    c.env_remove("FSLAB_CONFIG")
        .env("HOME", &s.root)
        .env("XDG_CONFIG_HOME", s.root.join("config"))
        .env("FSLAB_SCRATCH_DEVICES", list);
    c
}

fn run_mapped(c: &mut Command, device: &str) -> Output {
    c.args([
        "run",
        fixture("mapped.yaml").to_str().unwrap(),
        "--quiet",
        // Point by point, so that the last point's label is the one left on the device.
        "--order",
        "fixed",
        "--device",
        &format!("data={device}"),
    ])
    .output()
    .unwrap()
}

/// fslab refuses `device` (listed as `list`) naming `reason`, creating no bundle and
/// leaving the first and last MiB of `real` (the node `device` leads to) unchanged.
fn assert_refused(s: &Scratch, list: &str, device: &str, real: &str, reason: &str) {
    let before = ends(real);
    let o = run_mapped(&mut fslab(s, list), device);
    let after = ends(real);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("refusing to use {device}: ")) && err.contains(reason),
        "expected the reason `{reason}`:\n{err}"
    );
    assert_eq!(before, after, "{device}: first or last MiB changed");
    if before.is_none() {
        eprintln!("note: {real} cannot be opened even by root here; checksums skipped");
    }
    assert!(s.bundles("mapped").is_empty(), "a bundle was started");
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

#[test]
fn a_listed_unused_device_is_formatted_used_and_left_attached_and_unmounted() {
    let s = Scratch::new("dp");
    let disk = TestDisk::new("ok", 24);
    // Listed in the config file through a symlink: matched by what it resolves to.
    let link = s.root.join("scratch-link");
    std::os::unix::fs::symlink(&disk.device, &link).unwrap();
    let cfg = s.root.join("config/fslab/config.yaml");
    std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
    std::fs::write(&cfg, format!("scratch_devices: [{}]\n", link.display())).unwrap();
    let before = ends(disk.path()).unwrap();

    let o = run_mapped(&mut fslab(&s, ""), disk.path());
    assert!(o.status.success(), "{}", text(&o));
    let bundle = fslab::Bundle::open(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    let m = bundle.manifest();
    assert_eq!(m.status, "complete");
    assert_eq!(bundle.runs().unwrap().height(), 4);
    assert_eq!(m.environment.devices.len(), 1);
    assert_eq!(
        m.environment.devices[0].backing,
        format!("mapped {}", disk.path())
    );
    assert_eq!(m.environment.devices[0].size_bytes, 24 << 20);

    // mkfs ran on it (the last point's label), it is still the user's loop device, and
    // nothing is mounted from it.
    assert_ne!(ends(disk.path()).unwrap().0, before.0);
    assert_eq!(
        sh("blkid", &["-o", "value", "-s", "LABEL", disk.path()]),
        "fslab2"
    );
    assert!(disk.attached(), "fslab detached the user's device");
    assert!(
        !fslab::devices::mounts()
            .iter()
            .any(|m| Path::new(&m.source) == disk.device),
        "still mounted"
    );
    // What the workload wrote is on it.
    let mnt = TestMount::new(disk.path(), "check");
    assert!(mnt.0.join("f2-1").exists() && mnt.0.join("f2-2").exists());
    drop(mnt);
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

#[test]
fn an_unlisted_block_device_is_refused() {
    let s = Scratch::new("dp");
    let disk = TestDisk::new("unlisted", 8);
    let other = TestDisk::new("listed", 8);
    assert_refused(
        &s,
        other.path(),
        disk.path(),
        disk.path(),
        "it is not a listed scratch device",
    );
    // Nothing listed at all.
    assert_refused(
        &s,
        "",
        disk.path(),
        disk.path(),
        "no scratch devices are listed",
    );
}

#[test]
fn a_listed_but_mounted_device_is_refused() {
    let s = Scratch::new("dp");
    let disk = TestDisk::new("mounted", 16);
    sh("mkfs.ext2", &["-F", "-q", disk.path()]);
    let _m = TestMount::new(disk.path(), "m");
    // An explicit config path this time.
    let cfg = s.root.join("explicit.yaml");
    std::fs::write(&cfg, format!("scratch_devices:\n  - {}\n", disk.path())).unwrap();
    let before = ends(disk.path());
    let o = run_mapped(fslab(&s, "").env("FSLAB_CONFIG", &cfg), disk.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "refusing to use {}: it is mounted at {IMAGES}/mnt-m-",
            disk.path()
        )),
        "{err}"
    );
    assert_eq!(before, ends(disk.path()));
    assert!(s.bundles("mapped").is_empty());
}

#[test]
fn a_listed_loop_device_whose_backing_file_is_mounted_through_another_loop_is_refused() {
    let s = Scratch::new("dp");
    let first = TestDisk::new("shared", 16);
    sh("mkfs.ext2", &["-F", "-q", first.path()]);
    let _m = TestMount::new(first.path(), "shared");
    let second = first.second_loop();
    assert_ne!(first.device, second.device);
    assert_refused(
        &s,
        second.path(),
        second.path(),
        second.path(),
        &format!(
            "which is also attached as {}, and that is mounted at",
            first.path()
        ),
    );
}

#[test]
fn the_root_disk_is_refused() {
    let s = Scratch::new("dp");
    let root = sh("findmnt", &["-n", "-o", "SOURCE", "/"]);
    // A machine whose / is not on a block device (a container's overlay) cannot show
    // this refusal: the test fails there rather than pass without checking anything.
    assert!(
        root.starts_with("/dev/"),
        "/ is on `{root}`, not a block device: this test needs a machine whose root filesystem is on one"
    );
    assert_refused(&s, &root, &root, &root, "it holds the root filesystem (/)");
}

#[test]
fn a_symlink_to_an_unlisted_device_is_refused() {
    let s = Scratch::new("dp");
    let listed = TestDisk::new("listed", 8);
    let target = TestDisk::new("target", 8);
    let link = s.root.join("looks-fine");
    std::os::unix::fs::symlink(&target.device, &link).unwrap();
    assert_refused(
        &s,
        listed.path(),
        link.to_str().unwrap(),
        target.path(),
        &format!(
            "it resolves through symlinks to {}, which is not a listed scratch device",
            target.path()
        ),
    );
}

#[test]
fn a_regular_file_and_a_device_the_experiment_does_not_declare_are_refused() {
    let s = Scratch::new("dp");
    let file = s.root.join("not-a-disk.img");
    std::fs::write(&file, vec![7u8; 4 << 20]).unwrap();
    let f = file.to_str().unwrap();
    let o = run_mapped(&mut fslab(&s, f), f);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("it is not a block device (a regular file)"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 4 << 20]);
    let disk = TestDisk::new("name", 8);
    let o = fslab(&s, disk.path())
        .args([
            "run",
            fixture("mapped.yaml").to_str().unwrap(),
            "--device",
            &format!("dta={}", disk.path()),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("mapped has no device `dta`; did you mean `data`?"),
        "{}",
        text(&o)
    );
}

fn mounted_from(disk: &TestDisk) -> bool {
    fslab::devices::mounts()
        .iter()
        .any(|m| Path::new(&m.source) == disk.device)
}

#[test]
fn a_mapped_device_left_mounted_by_a_killed_run_is_unmounted_by_the_next_run_not_detached() {
    let s = Scratch::new("dp");
    let disk = TestDisk::new("killed", 24);
    let mut child = fslab(&s, disk.path())
        .args([
            "run",
            fixture("mapped.yaml").to_str().unwrap(),
            "--quiet",
            "--set",
            "nap=30",
            "--device",
            &format!("data={}", disk.path()),
        ])
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !mounted_from(&disk) {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "never mounted"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        mounted_from(&disk),
        "SIGKILL left nothing: the test proves nothing"
    );

    let o = run_mapped(&mut fslab(&s, disk.path()), disk.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("left by a killed run"),
        "{}",
        text(&o)
    );
    assert!(!mounted_from(&disk), "still mounted");
    assert!(disk.attached(), "fslab detached the user's device");
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

#[test]
fn a_list_entry_that_now_names_another_device_is_refused_before_the_point() {
    use fslab::devices::policy::{approve, recheck, Listed, ScratchList};
    let a = TestDisk::new("relist-a", 16);
    let b = TestDisk::new("relist-b", 16);
    // The list names a stable link (like /dev/disk/by-id/…), the user gives the node.
    let link = Path::new(IMAGES).join(format!("by-id-{:08x}", rand::random::<u32>()));
    std::os::unix::fs::symlink(&a.device, &link).unwrap();
    let list = ScratchList {
        entries: vec![Listed {
            path: link.clone(),
            origin: "test".into(),
        }],
        consulted: vec!["test".into()],
    };
    let m = approve("data", &a.device, &list).unwrap();
    assert_eq!(m.listed, link);
    assert!(
        m.diskseq.is_some(),
        "this kernel reports diskseq for loop devices"
    );
    recheck(&m).unwrap();
    // The disk behind the link changed: the node the user gave is no longer the one
    // the list allows.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&b.device, &link).unwrap();
    let e = recheck(&m).unwrap_err().to_string();
    assert!(e.contains("scratch list's entry"), "{e}");
    // Another medium behind the same device number (detached and reattached): the
    // disk sequence number says so.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&a.device, &link).unwrap();
    sh("losetup", &["-d", a.path()]);
    sh("losetup", &[a.path(), b.image.to_str().unwrap()]);
    let e = recheck(&m).unwrap_err().to_string();
    sh("losetup", &["-d", a.path()]);
    assert!(e.contains("disk sequence number changed"), "{e}");
    let _ = std::fs::remove_file(&link);
}

/// The device hole: a `--set` value that names the user's real disk never reaches a
/// step, even when the disk is listed as a scratch device (the list allows
/// `--device NAME=PATH`, never a value in a command). `plan`, `doctor` and `run` refuse
/// it before anything is made, and the disk is unchanged. Through a symbolic link
/// outside /dev too: the plan sees that the path is a block device.
#[test]
fn a_set_value_that_names_a_real_disk_never_reaches_a_step() {
    let s = Scratch::new("dp");
    let disk = TestDisk::new("set", 8);
    let link = s.root.join("plain-name");
    std::os::unix::fs::symlink(&disk.device, &link).unwrap();
    let exp = s.root.join("dd.yaml");
    std::fs::write(
        &exp,
        "id: dd\ntitle: dd onto a file\ndevices:\n  data: { size: 32MiB }\nmatrix:\n  filename: [test-data]\n\
         setup:\n  - run: mkfs.ext4 -q -F {{dev.data}}\n  - mount: data\n\
         workload:\n  run: dd if=/dev/zero of={{filename}} bs=64k count=16 conv=notrunc\n",
    )
    .unwrap();
    let before = ends(disk.path());
    for value in [disk.path().to_string(), link.display().to_string()] {
        for cmd in [&["plan"][..], &["doctor"][..], &["run", "--quiet"][..]] {
            let mut c = fslab(&s, disk.path());
            c.args(cmd)
                .arg(&exp)
                .args(["--set", &format!("filename={value}")]);
            let o = c.output().unwrap();
            assert!(!o.status.success(), "{cmd:?} {value}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(&format!("names the device `{value}`"))
                    && err.contains(&format!("from `--set filename={value}`"))
                    && err.contains("dd.yaml:10:1:"),
                "{cmd:?}: {err}"
            );
        }
    }
    assert_eq!(before, ends(disk.path()), "the disk changed");
    assert!(s.bundles("dd").is_empty(), "a bundle was started");
    assert!(s.loops().is_empty() && s.mounts().is_empty());
    // The same experiment with its own value runs.
    let o = fslab(&s, "")
        .args(["run", "--quiet"])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}
