//! Block throttling through a cgroup, on a real loop device (as root, cgroup v1 blkio or
//! v2 io). The cgroup is made here for the test and removed afterwards.
//!
//! The one timed check is a lower bound that the throttle itself sets (200 reads at 100
//! IOPS cannot take less than ~2 s); nothing asserts an upper bound on time. Which writes
//! the throttle catches is checked by counting, from the cgroup's own statistics.

use fslab::devices::throttle::{self, Throttle, ThrottleInterface};
use fslab::devices::{attach, detach};
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::require;
use require::Need;

const SIZE: u64 = 256 << 20;

struct Setup {
    dir: PathBuf,
    cgroup: PathBuf,
    device: PathBuf,
}

impl Setup {
    fn new(tag: &str) -> Option<Setup> {
        let (root, iface) = throttle::host_hierarchy()?;
        assert_eq!(throttle::interface(&root), Some(iface));
        let n = rand::random::<u32>() & 0xffff;
        let dir = PathBuf::from(format!("/var/tmp/fslab-thr-{tag}-{n:x}"));
        std::fs::create_dir_all(&dir).unwrap();
        let image = dir.join("data.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(SIZE)
            .unwrap();
        let lo = attach(&image).unwrap();
        let cgroup = root.join(format!("fslab-test-thr-{}-{n:x}", std::process::id()));
        std::fs::create_dir(&cgroup).unwrap();
        Some(Setup {
            dir,
            cgroup,
            device: lo.device,
        })
    }

    /// Run the child side (`mode`) inside the cgroup: the test `test` (the caller) again,
    /// in a process of its own, which [`child_side`] turns into the child. Returns its
    /// elapsed seconds.
    fn child(&self, test: &str, mode: &str) -> f64 {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &test_name(test), "--nocapture"])
            .env(
                "FSLAB_THROTTLE_CHILD",
                format!("{}|{}|{mode}", self.cgroup.display(), self.device.display()),
            )
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text.lines()
            .find_map(|l| l.strip_prefix("elapsed="))
            .unwrap_or_else(|| panic!("no elapsed in {text}"))
            .trim()
            .parse()
            .unwrap()
    }

    /// The cgroup's count of `op` ("Read"/"Write") requests on our device.
    fn serviced(&self, op: &str) -> u64 {
        let (maj, min) = throttle::device_numbers(&self.device).unwrap();
        let file = match throttle::interface(&self.cgroup).unwrap() {
            ThrottleInterface::V1Blkio => "blkio.throttle.io_serviced",
            ThrottleInterface::V2IoMax => "io.stat",
        };
        let text = std::fs::read_to_string(self.cgroup.join(file)).unwrap();
        let key = format!("{maj}:{min}");
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.first() != Some(&key.as_str()) {
                continue;
            }
            if f.get(1) == Some(&op) {
                return f[2].parse().unwrap();
            }
            // v2: "MAJ:MIN rbytes=.. wbytes=.. rios=N wios=N ..."
            let want = if op == "Read" { "rios=" } else { "wios=" };
            if let Some(v) = f.iter().find_map(|w| w.strip_prefix(want)) {
                return v.parse().unwrap();
            }
        }
        0
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.cgroup);
        if let Some(id) = fslab::devices::backing_id(&self.device) {
            let _ = detach(&self.device, id);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn offsets(n: usize) -> Vec<u64> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    (0..n)
        .map(|_| rng.random_range(0..SIZE / 4096) * 4096)
        .collect()
}

fn aligned_page() -> Vec<u8> {
    // A Vec<u8> is not aligned for O_DIRECT: carve an aligned 4 KiB out of 8 KiB.
    vec![0u8; 8192]
}

fn aligned(buf: &mut [u8]) -> &mut [u8] {
    let off = buf.as_ptr().align_offset(4096);
    &mut buf[off..off + 4096]
}

/// The name libtest knows this module's test `f` by: `f` in a binary of its own,
/// `module::f` when the test is a module of a larger binary.
fn test_name(f: &str) -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{f}"),
        None => f.to_string(),
    }
}

/// In a child started by [`Setup::child`] (`FSLAB_THROTTLE_CHILD` set): join the cgroup,
/// do the I/O of the mode, print the elapsed time and return true; the test then returns.
/// Elsewhere false. The child is not a test of its own, so nothing passes without testing.
fn child_side() -> bool {
    let Ok(spec) = std::env::var("FSLAB_THROTTLE_CHILD") else {
        return false;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let (cgroup, device, mode) = (Path::new(parts[0]), Path::new(parts[1]), parts[2]);
    std::fs::write(cgroup.join("cgroup.procs"), std::process::id().to_string()).unwrap();
    let mut raw = aligned_page();
    let buf = aligned(&mut raw);
    let t = Instant::now();
    match mode {
        "randread" => {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(nix::fcntl::OFlag::O_DIRECT.bits())
                .open(device)
                .unwrap();
            for o in offsets(200) {
                f.read_at(buf, o).unwrap();
            }
        }
        "directwrite" => {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::fcntl::OFlag::O_DIRECT.bits())
                .open(device)
                .unwrap();
            for o in offsets(50) {
                f.write_at(buf, o).unwrap();
            }
        }
        "bufwrite" | "syncwrite" => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(device)
                .unwrap();
            for o in offsets(50) {
                f.write_at(buf, o).unwrap();
            }
            f.flush().unwrap();
            if mode == "syncwrite" {
                f.sync_all().unwrap();
            }
        }
        other => panic!("unknown mode {other}"),
    }
    println!("elapsed={}", t.elapsed().as_secs_f64());
    true
}

/// No cgroup hierarchy to throttle through: say so (or fail under FSLAB_REQUIRE_THROTTLE).
fn no_hierarchy() {
    require::skip(
        Need::Throttle,
        module_path!(),
        "no cgroup blkio/io hierarchy on this host: nothing to throttle",
    );
}

#[test]
fn read_iops_cap_slows_cold_random_reads() {
    if child_side() {
        return;
    }
    let Some(s) = Setup::new("rd") else {
        no_hierarchy();
        return;
    };
    let dev = throttle::device_numbers(&s.device).unwrap();
    let t = Throttle {
        read_iops: Some(100),
        ..Throttle::default()
    };
    throttle::apply(&s.cgroup, dev, &t).unwrap();
    fslab::devices::medium::flush_device_cache(&s.device).unwrap();
    let elapsed = s.child("read_iops_cap_slows_cold_random_reads", "randread");
    // 200 reads at 100 per second: the first second's budget is spent at once, the rest
    // waits; the cap's own lower bound is (200 − 100 × slice) / 100 ≥ 1.6 s.
    assert!(elapsed >= 1.6, "200 capped reads took {elapsed:.2} s");
    assert!(
        s.serviced("Read") >= 200,
        "the reads went through the cgroup"
    );
}

/// The writes test, by name (its children run it again).
const WRITES: &str = "direct_and_synchronous_writes_are_caught_buffered_writeback_escapes";

#[test]
fn direct_and_synchronous_writes_are_caught_buffered_writeback_escapes() {
    if child_side() {
        return;
    }
    let Some(s) = Setup::new("wr") else {
        no_hierarchy();
        return;
    };
    let iface = throttle::interface(&s.cgroup).unwrap();
    let dev = throttle::device_numbers(&s.device).unwrap();
    throttle::apply(
        &s.cgroup,
        dev,
        &Throttle {
            write_iops: Some(1000),
            ..Throttle::default()
        },
    )
    .unwrap();
    s.child(WRITES, "directwrite");
    let direct = s.serviced("Write");
    assert!(direct >= 50, "O_DIRECT writes are the cgroup's: {direct}");

    // The last close of a block device writes its dirty pages back in the closer's context
    // (and so in its cgroup): hold the device open here, as a mounted filesystem would, so
    // that the child leaves its pages dirty and someone else writes them back.
    let holder = std::fs::File::open(&s.device).unwrap();
    s.child(WRITES, "bufwrite");
    nix::unistd::sync();
    drop(holder);
    let after_buffered = s.serviced("Write");
    if iface == ThrottleInterface::V1Blkio {
        assert_eq!(
            after_buffered, direct,
            "v1: buffered writeback is not charged to the writer's cgroup"
        );
    }

    s.child(WRITES, "syncwrite");
    let after_sync = s.serviced("Write");
    assert!(
        after_sync > after_buffered,
        "fsync in the task writes back in the task's cgroup: {after_buffered} → {after_sync}"
    );
}
