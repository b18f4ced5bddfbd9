//! Block-request tracing on a real loop device (as root): the trace agrees with the
//! device's own counters, sees only the traced device, and leaves no instance behind.

use fslab::devices::throttle::device_numbers;
use fslab::devices::trace::{reclaim_dead_instances, BlockTrace};
use fslab::devices::{attach, detach, mounts};
use fslab::parse::block_trace::{parse, IoOp, IoSummary};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Loop {
    dir: PathBuf,
    device: PathBuf,
}

impl Loop {
    fn new(tag: &str) -> Loop {
        let dir = PathBuf::from(format!(
            "/var/tmp/fslab-bt-{tag}-{:x}",
            rand::random::<u32>() & 0xffff
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let image = dir.join("data.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(128 << 20)
            .unwrap();
        let device = attach(&image).unwrap().device;
        Loop { dir, device }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(id) = fslab::devices::backing_id(&self.device) {
            let _ = detach(&self.device, id);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// (requests, sectors) completed so far: reads + writes, from /sys/block/loopN/stat.
fn stat(device: &Path) -> (u64, u64) {
    let name = device.file_name().unwrap().to_str().unwrap();
    let text = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    (f[0] + f[4], f[2] + f[6])
}

fn dd(args: &[&str]) {
    let out = Command::new("dd").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn within(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.max(1.0)
}

#[test]
fn trace_agrees_with_the_devices_counters() {
    let lo = Loop::new("acc");
    let other = Loop::new("oth");
    let dev = device_numbers(&lo.device).unwrap();
    let d = lo.device.display().to_string();
    let o = other.device.display().to_string();
    let (req0, sec0) = stat(&lo.device);
    let trace = BlockTrace::start(&[dev], 8192).unwrap();
    let instance = trace.instance().to_path_buf();
    assert!(instance.is_dir());
    // A step: direct reads in two places (a seek between), direct writes, and I/O on
    // another device that must not show.
    dd(&[
        &format!("if={d}"),
        "of=/dev/null",
        "iflag=direct",
        "bs=4k",
        "count=300",
    ]);
    dd(&[
        &format!("if={d}"),
        "of=/dev/null",
        "iflag=direct",
        "bs=64k",
        "count=50",
        "skip=1000",
    ]);
    dd(&[
        "if=/dev/zero",
        &format!("of={d}"),
        "oflag=direct",
        "bs=8k",
        "count=40",
        "seek=3000",
    ]);
    dd(&[
        &format!("if={o}"),
        "of=/dev/null",
        "iflag=direct",
        "bs=4k",
        "count=100",
    ]);
    let text = trace.finish().unwrap();
    let (req1, sec1) = stat(&lo.device);
    assert!(!instance.exists(), "the instance is removed");

    let out = parse(&text.text, text.start_mono);
    assert!(!out.partial, "{:?}", out.warnings);
    let want = format!("{}:{}", dev.0, dev.1);
    assert!(out.rows.iter().all(|r| r.device == want), "only our device");
    let data: Vec<_> = out.rows.iter().filter(|r| r.op.moves_data()).collect();
    let bytes: u64 = data.iter().map(|r| r.bytes).sum();
    let (dreq, dsec) = (req1 - req0, sec1 - sec0);
    assert!(dreq >= 390, "the device saw the step's requests: {dreq}");
    assert!(
        within(data.len() as f64, dreq as f64, 0.05),
        "requests: trace {} vs stat {dreq}",
        data.len()
    );
    assert!(
        within(bytes as f64, (dsec * 512) as f64, 0.05),
        "bytes: trace {bytes} vs stat {}",
        dsec * 512
    );
    assert!(out.rows.iter().any(|r| r.op == IoOp::Write));
    assert!(data.iter().all(|r| r.t_s >= 0.0));
    let matched = data.iter().filter(|r| r.latency_s.is_some()).count();
    assert!(
        matched * 100 >= data.len() * 95,
        "completions matched: {matched}"
    );
    let s = IoSummary::from_rows(&out.rows, 1.0);
    assert!(s.seeks >= 2, "{s:?}");
    assert!(s.seek_distance_bytes >= 1000 * 65536 - 300 * 4096);
}

#[test]
fn a_dead_runs_instance_is_reclaimed() {
    // A live trace keeps tracefs mounted (privately, if the system has no mount) while
    // the instance a SIGKILLed fslab would leave is made beside it: the name of a pid that
    // cannot exist.
    let trace = BlockTrace::start(&[(7, 0)], 64).unwrap();
    let root = trace.instance().parent().unwrap().to_path_buf();
    let dead = root.join("fslab-4194305-12-0");
    std::fs::create_dir(&dead).unwrap();
    let n = reclaim_dead_instances().unwrap();
    assert!(n >= 1);
    assert!(!dead.exists(), "the dead run's instance is removed");
    assert!(trace.instance().exists(), "a live run's instance stays");
    let live = trace.instance().to_path_buf();
    // tracefs is mounted at `<mount>/instances/<instance>`: this trace's own private
    // mount, if it made one (other tests of this process may hold theirs meanwhile).
    let own = root.parent().unwrap().to_path_buf();
    drop(trace);
    assert!(!live.exists());
    if own.display().to_string().starts_with("/run/fslab-tracefs-") {
        assert!(
            !mounts().iter().any(|m| m.mount_point == own),
            "{} stayed mounted",
            own.display()
        );
    }
}
