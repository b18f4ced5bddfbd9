//! A scratch filesystem on a loop device for the block-map test and benchmark (as root):
//! owns its directory, the image, the loop device and the mount, and releases all of them
//! on drop, also when the test panics. Shared by `tests/it/blockmap_fiemap.rs` and
//! `benches/blockmap.rs` (`#[path]` module), which make their own filesystems in it. A
//! process that died without unwinding (killed, or aborted) is cleaned up by the next one.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// Run a command; panic with its status and stderr if it fails. Returns stdout.
pub fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `/var/tmp/fslab-test-blockmap/NAME-PID/` with `ext4.img` and `mnt/`.
pub struct LoopFs {
    pub dir: PathBuf,
    pub image: PathBuf,
    pub mnt: PathBuf,
    loopdev: Option<String>,
    mounted: bool,
}

/// Where every LoopFs lives, as `NAME-PID`.
const BASE: &str = "/var/tmp/fslab-test-blockmap";

/// Release what test processes that died without unwinding (killed, aborted) left under
/// [`BASE`]: their mounts, loop devices and directories. Directories of live processes are
/// left alone.
pub fn reclaim_dead() {
    let Ok(entries) = std::fs::read_dir(BASE) else {
        return;
    };
    for e in entries.flatten() {
        let dir = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.rsplit('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        if alive {
            continue;
        }
        let mnt = dir.join("mnt");
        let mounted = fslab::devices::mounts()
            .iter()
            .any(|m| m.mount_point == mnt);
        if mounted {
            let _ = Command::new("umount").arg(&mnt).status();
        }
        for l in fslab::devices::loops_backed_under(&dir) {
            let _ = Command::new("losetup").arg("-d").arg(&l.device).status();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

impl LoopFs {
    pub fn new(name: &str) -> LoopFs {
        reclaim_dead();
        let dir = PathBuf::from(format!("{BASE}/{name}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("mnt")).unwrap();
        LoopFs {
            image: dir.join("ext4.img"),
            mnt: dir.join("mnt"),
            dir,
            loopdev: None,
            mounted: false,
        }
    }

    /// A fresh ext4 of `size` (`truncate -s` syntax) made with `mkfs.ext4 -q -F EXTRA…`,
    /// attached and mounted on `mnt`.
    pub fn ext4(name: &str, size: &str, extra: &[&str]) -> LoopFs {
        let mut g = LoopFs::new(name);
        run("truncate", &["-s", size, g.img()]);
        let mut args = vec!["-q", "-F"];
        args.extend_from_slice(extra);
        args.push(g.img());
        run("mkfs.ext4", &args);
        g.attach_and_mount();
        g
    }

    /// A fresh XFS of `size` made with `mkfs.xfs -q -f EXTRA…` (at least 300 MiB; the
    /// image is sparse), attached and mounted on `mnt`.
    pub fn xfs(name: &str, size: &str, extra: &[&str]) -> LoopFs {
        let mut g = LoopFs::new(name);
        run("truncate", &["-s", size, g.img()]);
        let mut args = vec!["-q", "-f"];
        args.extend_from_slice(extra);
        args.push(g.img());
        run("mkfs.xfs", &args);
        g.attach_and_mount();
        g
    }

    /// The image as a `&str` argument.
    pub fn img(&self) -> &str {
        self.image.to_str().unwrap()
    }

    /// Attach the image to a free loop device and mount it on `mnt`.
    pub fn attach_and_mount(&mut self) {
        let dev = run("losetup", &["--find", "--show", self.img()]);
        self.loopdev = Some(dev.trim().to_string());
        run("mount", &[dev.trim(), self.mnt.to_str().unwrap()]);
        self.mounted = true;
    }

    /// Unmount and detach, keeping the image (for tools that read it, like debugfs).
    pub fn unmount_and_detach_keep_image(&mut self) {
        self.unmount_and_detach();
    }

    pub fn unmount_and_detach(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mnt).status();
            self.mounted = false;
        }
        if let Some(dev) = self.loopdev.take() {
            let _ = Command::new("losetup").args(["-d", &dev]).status();
        }
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        self.unmount_and_detach();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
