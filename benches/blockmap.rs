//! Block-map benchmark (harness = false; `cargo bench --bench blockmap`, as root).
//!
//! (a) `fslab blockmap MNT --no-dirs -o out.parquet` over 20,000 small files on a
//!     loop-mounted ext4, against `find MNT -type f -print0 | xargs -0 filefrag -v >/dev/null`,
//!     alternating in the same run, several repetitions, medians and their ratio;
//! (b) parse throughput (MB/s) of the `filefrag -v` and `debugfs stat` dumps of the
//!     26,524-extent file in tests/fixtures.
//!
//! Environment: FSLAB_BENCH_FILES (default 20000), FSLAB_BENCH_REPS (default 7),
//! FSLAB_BIN (default: the `fslab` binary cargo built with this bench).
//! Prints a Markdown report on stdout.

use fslab::parse::{debugfs, filefrag};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../tests/it/loopfs.rs"]
mod loopfs;
use loopfs::{run, LoopFs};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// CPU time (user + system) of all waited-for children so far, in seconds.
fn children_cpu() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0.0, |u| {
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 * 1e-6;
        t(u.user_time()) + t(u.system_time())
    })
}

/// (wall seconds, CPU seconds of the command and all its descendants).
fn time_cmd(cmd: &str, args: &[&str]) -> (f64, f64) {
    let c0 = children_cpu();
    let t = Instant::now();
    run(cmd, args);
    (t.elapsed().as_secs_f64(), children_cpu() - c0)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fixture(rel: &str) -> String {
    let p = format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// CPU time (user + system) of the calling thread, in seconds.
fn thread_cpu() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_THREAD).map_or(0.0, |u| {
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 * 1e-6;
        t(u.user_time()) + t(u.system_time())
    })
}

/// Throughput of `f` over `text`: repeat for at least `min` per sample, `samples` samples.
/// Returns medians of (MB/s by wall clock, MB/s by thread CPU time, ms per call by wall).
fn throughput(
    text: &str,
    samples: usize,
    min: Duration,
    mut f: impl FnMut(&str),
) -> (f64, f64, f64) {
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut per_call = Vec::new();
    for _ in 0..samples {
        let c0 = thread_cpu();
        let t = Instant::now();
        let mut n = 0u32;
        while t.elapsed() < min || n == 0 {
            f(text);
            n += 1;
        }
        let s = t.elapsed().as_secs_f64() / f64::from(n);
        let c = (thread_cpu() - c0) / f64::from(n);
        per_call.push(s);
        wall.push(text.len() as f64 / s / 1e6);
        cpu.push(text.len() as f64 / c.max(1e-9) / 1e6);
    }
    (median(&mut wall), median(&mut cpu), median(&mut per_call))
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let files = env_usize("FSLAB_BENCH_FILES", 20_000);
    let reps = env_usize("FSLAB_BENCH_REPS", 7);
    let profile = if cfg!(debug_assertions) {
        "debug (unoptimised) build"
    } else {
        "optimised build"
    };

    println!("## Machine\n");
    println!("- nproc: {}", run("nproc", &[]).trim());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("?", |(_, m)| m.trim());
    println!("- CPU: {model}");
    println!("- kernel: {}", run("uname", &["-r"]).trim());
    let ff_version = Command::new("filefrag")
        .arg("-V")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout).trim().to_string()
                + String::from_utf8_lossy(&o.stderr).trim()
        })
        .unwrap_or_default();
    println!("- {ff_version}");
    println!("- fslab built as: {profile}\n");

    // ------------------------------------------------------------ (b) parse throughput
    let part = std::env::var("FSLAB_BENCH_PART").unwrap_or_default();
    if part.is_empty() || part == "parse" {
        parse_throughput();
    }
    if !(part.is_empty() || part == "blockmap") {
        return;
    }

    // ------------------------------------------------------------ (a) blockmap vs filefrag
    if !nix::unistd::geteuid().is_root() {
        println!("## (a) skipped: needs root (loop device, mount)");
        return;
    }
    let bin = std::env::var("FSLAB_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_fslab").into());
    let help = run(&bin, &["blockmap", "--help"]);
    assert!(
        help.contains("--debugfs"),
        "{bin} has no `blockmap` subcommand"
    );

    let g = LoopFs::ext4("bench", "1G", &["-b", "4096"]);
    let (dir, mnt) = (g.dir.clone(), g.mnt.clone());

    // 20,000 small files (1–16 KiB) in 100 directories.
    let t = Instant::now();
    for i in 0..files {
        let d = mnt.join(format!("d{:03}", i % 100));
        if i < 100 {
            std::fs::create_dir(&d).unwrap();
        }
        let size = 1024 * (1 + (i * 7919) % 16);
        std::fs::write(d.join(format!("f{i:05}")), vec![(i % 251) as u8; size]).unwrap();
    }
    run("sync", &["-f", mnt.to_str().unwrap()]);
    let setup = t.elapsed().as_secs_f64();

    let out = dir.join("extents.parquet");
    let m = mnt.to_str().unwrap();
    let o = out.to_str().unwrap();
    let fslab_args = ["blockmap", m, "--no-dirs", "-o", o];
    let filefrag_script = format!("find {m} -type f -print0 | xargs -0 filefrag -v >/dev/null");
    // Warm both (dentry and inode caches, the binaries), and check the work is the same.
    time_cmd(&bin, &fslab_args);
    time_cmd("bash", &["-c", &filefrag_script]);
    let rows = run(&bin, &["blockmap", m, "--no-dirs", "--summary", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&rows).unwrap();
    let mapped_files = v[0]["files"].as_u64().unwrap_or(0);
    assert_eq!(
        mapped_files as usize, files,
        "fslab mapped {mapped_files} files"
    );
    let parquet_bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);

    let (mut a, mut b, mut ac, mut bc) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let (w, c) = time_cmd(&bin, &fslab_args);
        a.push(w);
        ac.push(c);
        let (w, c) = time_cmd("bash", &["-c", &filefrag_script]);
        b.push(w);
        bc.push(c);
    }
    let ma = median(&mut a.clone());
    let mb = median(&mut b.clone());
    let mac = median(&mut ac.clone());
    let mbc = median(&mut bc.clone());
    println!("## (a) {files} small files on a loop-mounted ext4 (warm caches)\n");
    println!("Setup (write + sync): {setup:.1} s. Parquet written: {parquet_bytes} bytes, {mapped_files} files.\n");
    println!("| command | wall per run (s) | median wall (s) | median CPU, user+sys of the process tree (s) |");
    println!("|---|---|---:|---:|");
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "| `fslab blockmap MNT --no-dirs -o extents.parquet` | {} | {ma:.3} | {mac:.3} |",
        fmt(&a)
    );
    println!(
        "| `find MNT -type f -print0 \\| xargs -0 filefrag -v >/dev/null` | {} | {mb:.3} | {mbc:.3} |",
        fmt(&b)
    );
    println!(
        "\nRatio filefrag / fslab, medians: wall **{:.2}×**, CPU **{:.2}×**",
        mb / ma,
        mbc / mac
    );
    drop(g);
}

/// Median wall time (s) of `awk PROGRAM FILE >/dev/null` over `reps` runs: the shell way
/// of pulling the same numbers out of the same dump (process start included).
fn awk_time(program: &str, file: &str, reps: usize) -> f64 {
    let mut v = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        let st = Command::new("awk")
            .args([program, file])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("awk");
        assert!(st.success(), "awk {program} {file}: {st}");
        v.push(t.elapsed().as_secs_f64());
    }
    median(&mut v)
}

fn parse_throughput() {
    println!("## (b) Parse throughput, 26,524-extent file\n");
    let ff = fixture("filefrag/ext4-frag.txt");
    let st = fixture("debugfs/ext4-stat-frag.txt");
    let ex = fixture("debugfs/ext4-ex-frag.txt");
    let min = Duration::from_millis(300);
    println!("| input | bytes | rows | MB/s, wall (median of 7) | MB/s, thread CPU time | ms per parse (wall) |");
    println!("|---|---:|---:|---:|---:|---:|");
    let line = |name: &str, text: &str, rows: usize, f: &dyn Fn(&str)| -> f64 {
        let (w, c, s) = throughput(text, 7, min, f);
        println!(
            "| {name} | {} | {rows} | {w:.1} | {c:.1} | {:.2} |",
            text.len(),
            s * 1e3
        );
        s
    };
    let rows = filefrag::parse(&ff).map(|o| o.rows.len()).unwrap_or(0);
    let ff_s = line("filefrag -v (`filefrag::parse`)", &ff, rows, &|t| {
        std::hint::black_box(filefrag::parse(t).ok());
    });
    let rows = debugfs::parse_stat_with_block_size(&st, 4096)
        .map(|o| o.rows.len())
        .unwrap_or(0);
    let st_s = line(
        "debugfs stat (`debugfs::parse_stat_with_block_size`)",
        &st,
        rows,
        &|t| {
            std::hint::black_box(debugfs::parse_stat_with_block_size(t, 4096).ok());
        },
    );
    let rows = debugfs::parse_ex_with_block_size(&ex, 4096)
        .map(|o| o.rows.len())
        .unwrap_or(0);
    line(
        "debugfs ex (`debugfs::parse_ex_with_block_size`)",
        &ex,
        rows,
        &|t| {
            std::hint::black_box(debugfs::parse_ex_with_block_size(t, 4096).ok());
        },
    );
    let rows = filefrag::parse(&ff).map(|o| o.rows.len()).unwrap_or(0);
    line(
        "filefrag -v to extents DataFrame (`filefrag::parse` + `blockmap::extents_frame`)",
        &ff,
        rows,
        &|t| {
            let out = filefrag::parse(t).ok();
            let df = out.map(|o| fslab::blockmap::extents_frame(&o.rows).ok());
            std::hint::black_box(df);
        },
    );
    line(
        "filefrag -v to DataFrame (`parse::parse`, what `fslab parse` and `parse:` captures run)",
        &ff,
        rows,
        &|t| {
            std::hint::black_box(fslab::parse::parse(fslab::parse::Kind::Filefrag, t).ok());
        },
    );
    println!();

    // The shell baseline: awk printing the same fields, on the same files, in this run.
    let dir = format!("{}/tests/fixtures", env!("CARGO_MANIFEST_DIR"));
    let ff_awk = awk_time(FILEFRAG_AWK, &format!("{dir}/filefrag/ext4-frag.txt"), 15);
    let st_awk = awk_time(STAT_AWK, &format!("{dir}/debugfs/ext4-stat-frag.txt"), 15);
    println!("Against awk printing the same fields from the same dump (median of 15 runs, process start included):\n");
    println!("| input | awk program | awk ms | fslab parser ms | ratio awk / fslab |");
    println!("|---|---|---:|---:|---:|");
    for (name, prog, a, f) in [
        ("filefrag -v", FILEFRAG_AWK, ff_awk, ff_s),
        ("debugfs stat", STAT_AWK, st_awk, st_s),
    ] {
        println!(
            "| {name} | `{}` | {:.2} | {:.2} | **{:.1}×** |",
            prog.replace('|', "\\|"),
            a * 1e3,
            f * 1e3,
            a / f
        );
    }
    println!();
}

/// filefrag -v extent rows: index, logical start, physical start, length.
const FILEFRAG_AWK: &str = "$1 ~ /^[0-9]+:$/ { print $1, $2, $4, $6 }";
/// debugfs stat block-map entries, one per line, numbers split out.
const STAT_AWK: &str = "BEGIN { RS = \", |\\n\" } /^\\(/ { gsub(/[():-]/, \" \"); print }";
