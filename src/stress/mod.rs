//! `fslab stress`: a built-in, fsstress-compatible metadata workload.
//!
//! Debian has no fsstress package, so fslab carries its own: the same flags (`-n` ops per
//! process, `-p` processes, `-s` seed, `-z` and `-f op=freq`, `-d` dir, `-v`, `-c`), the
//! same layout (process `p` works in `DIR/p<p in hex>`, names `d<n>`, `f<n>`, `c<n>`,
//! `l<n>` numbered by a per-process counter), the same choice rules (new entries go into a
//! random existing directory of the process, or its top directory while it has none;
//! `unlink`/`link` pick a random non-directory, `rmdir` a random directory, `rename` any
//! entry), and the same "no cleanup unless `-c`". It is deterministic: process `p` seeds a
//! ChaCha8 generator with `seed + p`, so the same seed gives the same operation sequence and
//! the same tree. It is not the real fsstress: the random streams differ, so the trees
//! differ from fsstress's for the same seed, and it implements a subset of the operations
//! ([`Op::ALL`]); without `-z` it runs only those, with fsstress's default weights.
//!
//! Cost: each process keeps its own list of the names it created (type lists + parent
//! links), so picking a random entry is O(1) and building a path O(depth); operations are
//! `*at` system calls relative to the process directory. fsstress instead scans its lists
//! to resolve parent ids and to fix up children after a directory rename.
//!
//! Processes: [`Workers::Threads`] runs them as threads of the caller (the library
//! default); [`Workers::Processes`] re-executes `fslab stress --worker ID …` once per
//! process, like fsstress's fork, so each has its own file table and CPU accounting.
//!
//! ```no_run
//! use fslab::stress::{self, Config};
//! let cfg = Config::from_args(&["-n", "1000", "-p", "4", "-z", "-f",
//!     "creat=1,mkdir=1,mknod=1,rmdir=1,unlink=1,link=1,rename=1", "-d", "/mnt/foo", "-s", "1"])?;
//! let summary = stress::run(&cfg)?;
//! print!("{summary}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod config;
mod names;
mod worker;

pub use config::{Config, ConfigError, Delay, Workers};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The name recorded as the implementation in summaries (and bundles).
pub const IMPLEMENTATION: &str = "fslab-stress";

/// Prefix of the line that carries a worker's summary (JSON) on its stdout.
pub const WORKER_SUMMARY_PREFIX: &str = "fslab-stress-summary ";

/// The operations of the built-in workload (fsstress names), in fsstress's table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Creat,
    Fsync,
    Link,
    Mkdir,
    Mknod,
    Rename,
    Rmdir,
    Symlink,
    Truncate,
    Unlink,
    Write,
}

impl Op {
    pub const ALL: &'static [Op] = &[
        Op::Creat,
        Op::Fsync,
        Op::Link,
        Op::Mkdir,
        Op::Mknod,
        Op::Rename,
        Op::Rmdir,
        Op::Symlink,
        Op::Truncate,
        Op::Unlink,
        Op::Write,
    ];

    /// The fsstress name (`creat`, `mkdir`, …).
    pub fn name(self) -> &'static str {
        match self {
            Op::Creat => "creat",
            Op::Fsync => "fsync",
            Op::Link => "link",
            Op::Mkdir => "mkdir",
            Op::Mknod => "mknod",
            Op::Rename => "rename",
            Op::Rmdir => "rmdir",
            Op::Symlink => "symlink",
            Op::Truncate => "truncate",
            Op::Unlink => "unlink",
            Op::Write => "write",
        }
    }

    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// fsstress's default frequency (used without `-z`).
    pub fn default_freq(self) -> u32 {
        match self {
            Op::Creat | Op::Write => 4,
            Op::Mkdir | Op::Mknod | Op::Rename | Op::Symlink | Op::Truncate => 2,
            Op::Fsync | Op::Link | Op::Rmdir | Op::Unlink => 1,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Counts for one operation. `attempted = succeeded + failed + skipped`; `skipped` counts
/// draws that found nothing to act on (e.g. `rmdir` with no directory), as fsstress's
/// "no filename"; `errors` counts failures by errno name (`EEXIST`, `ENOTEMPTY`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpStats {
    pub op: Op,
    pub attempted: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub skipped: u64,
    pub errors: BTreeMap<String, u64>,
}

impl OpStats {
    fn add(&mut self, other: &OpStats) {
        self.attempted += other.attempted;
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.skipped += other.skipped;
        for (e, n) in &other.errors {
            *self.errors.entry(e.clone()).or_insert(0) += n;
        }
    }
}

/// What a run did, summed over its processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Always [`IMPLEMENTATION`]: bundles record which fsstress ran.
    pub implementation: String,
    /// fslab's version.
    pub version: String,
    /// The seed used (the one picked from the clock when none was given).
    pub seed: u64,
    pub procs: u32,
    pub ops_per_proc: u64,
    /// The non-zero operation frequencies the run used.
    pub freqs: BTreeMap<Op, u32>,
    /// `threads` or `processes`.
    pub workers: String,
    /// Wall-clock seconds of the whole run (not deterministic; everything else is).
    pub elapsed_s: f64,
    /// Per operation, in [`Op::ALL`] order: every op with a non-zero frequency.
    pub ops: Vec<OpStats>,
    /// The injected delay (`--delay-pct`), in percent of the work; None without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_pct: Option<f64>,
    /// Seconds the processes busy-waited for it, summed over the processes.
    #[serde(default)]
    pub delayed_s: f64,
}

impl Summary {
    fn empty(cfg: &Config, seed: u64, workers: &str) -> Summary {
        Summary {
            implementation: IMPLEMENTATION.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            seed,
            procs: cfg.procs,
            ops_per_proc: cfg.ops_per_proc,
            freqs: cfg
                .freqs
                .iter()
                .filter(|(_, &f)| f > 0)
                .map(|(&op, &f)| (op, f))
                .collect(),
            workers: workers.into(),
            elapsed_s: 0.0,
            ops: Vec::new(),
            delay_pct: cfg.delay.map(Delay::pct),
            delayed_s: 0.0,
        }
    }

    fn merge_ops(&mut self, ops: &[OpStats]) {
        for o in ops {
            match self.ops.iter_mut().find(|m| m.op == o.op) {
                Some(m) => m.add(o),
                None => self.ops.push(o.clone()),
            }
        }
        self.ops.sort_by_key(|o| o.op);
    }

    /// All operations drawn (= `ops_per_proc × procs` for a complete run).
    pub fn total_attempted(&self) -> u64 {
        self.ops.iter().map(|o| o.attempted).sum()
    }
    pub fn total_succeeded(&self) -> u64 {
        self.ops.iter().map(|o| o.succeeded).sum()
    }
    pub fn total_failed(&self) -> u64 {
        self.ops.iter().map(|o| o.failed).sum()
    }
    pub fn total_skipped(&self) -> u64 {
        self.ops.iter().map(|o| o.skipped).sum()
    }

    /// The stats of one op, if it ran.
    pub fn op(&self, op: Op) -> Option<&OpStats> {
        self.ops.iter().find(|o| o.op == op)
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} {}: {} process(es) × {} ops, seed {}, {}, {:.3} s",
            self.implementation,
            self.version,
            self.procs,
            self.ops_per_proc,
            self.seed,
            self.workers,
            self.elapsed_s
        )?;
        if let Some(p) = self.delay_pct {
            writeln!(
                f,
                "injected delay: {p} % of the work, {:.3} s of busy-waiting",
                self.delayed_s
            )?;
        }
        writeln!(
            f,
            "{:<10} {:>10} {:>10} {:>10} {:>10}  errors",
            "op", "attempted", "succeeded", "failed", "skipped"
        )?;
        for o in &self.ops {
            let errors = o
                .errors
                .iter()
                .map(|(e, n)| format!("{e}:{n}"))
                .collect::<Vec<_>>()
                .join(" ");
            writeln!(
                f,
                "{:<10} {:>10} {:>10} {:>10} {:>10}  {}",
                o.op.name(),
                o.attempted,
                o.succeeded,
                o.failed,
                o.skipped,
                errors
            )?;
        }
        writeln!(
            f,
            "{:<10} {:>10} {:>10} {:>10} {:>10}",
            "total",
            self.total_attempted(),
            self.total_succeeded(),
            self.total_failed(),
            self.total_skipped()
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StressError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start worker {exe}: {source}")]
    Spawn {
        exe: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("worker {id}: {message}")]
    Worker { id: u32, message: String },
}

/// Run the workload: all `procs` processes, as `cfg.workers` says; returns the summed
/// summary. Failed operations are counted, not errors; errors are setup failures (the
/// directory cannot be made), and workers that die or say nothing.
pub fn run(cfg: &Config) -> Result<Summary, StressError> {
    check(cfg)?;
    let seed = resolve_seed(cfg);
    let start = Instant::now();
    let mut summary = match &cfg.workers {
        Workers::Threads => run_threads(cfg, seed)?,
        Workers::Processes { exe } => run_processes(cfg, seed, exe)?,
    };
    summary.elapsed_s = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// Run process `id` only, in the calling thread (what `fslab stress --worker ID` does).
/// `cfg.seed` must be set (the parent passes the resolved seed).
pub fn run_worker(cfg: &Config, id: u32, log: &mut dyn Write) -> Result<Summary, StressError> {
    check(cfg)?;
    let seed = resolve_seed(cfg);
    let start = Instant::now();
    let (ops, delayed) = worker::run_proc(cfg, seed, id, log)?;
    let mut summary = Summary::empty(cfg, seed, "worker");
    summary.procs = 1;
    summary.merge_ops(&ops);
    summary.delayed_s = delayed;
    summary.elapsed_s = start.elapsed().as_secs_f64();
    Ok(summary)
}

fn check(cfg: &Config) -> Result<(), StressError> {
    if cfg.dir.as_os_str().is_empty() {
        return Err(ConfigError::MissingDir.into());
    }
    if cfg.procs == 0 {
        return Err(ConfigError::NoProcs.into());
    }
    if cfg.freq_total() == 0 {
        return Err(ConfigError::NoOps.into());
    }
    Ok(())
}

/// fsstress: no seed (or 0) → `tv_sec ^ tv_usec`.
fn resolve_seed(cfg: &Config) -> u64 {
    cfg.seed.unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (now.as_secs() ^ u64::from(now.subsec_micros())).max(1)
    })
}

fn run_threads(cfg: &Config, seed: u64) -> Result<Summary, StressError> {
    let results: Vec<Result<(Vec<OpStats>, f64), StressError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.procs)
            .map(|id| {
                s.spawn(move || {
                    let mut out = std::io::stdout();
                    worker::run_proc(cfg, seed, id, &mut out)
                })
            })
            .collect();
        join_all(handles, "thread panicked")
    });
    let mut summary = Summary::empty(cfg, seed, "threads");
    for r in results {
        let (ops, delayed) = r?;
        summary.merge_ops(&ops);
        summary.delayed_s += delayed;
    }
    Ok(summary)
}

/// Join worker threads in order; a panicked one becomes that worker's error.
fn join_all<T>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<T, StressError>>>,
    what: &str,
) -> Vec<Result<T, StressError>> {
    handles
        .into_iter()
        .enumerate()
        .map(|(id, h)| {
            h.join().unwrap_or_else(|_| {
                Err(StressError::Worker {
                    id: id as u32,
                    message: what.to_string(),
                })
            })
        })
        .collect()
}

fn run_processes(cfg: &Config, seed: u64, exe: &PathBuf) -> Result<Summary, StressError> {
    let mut worker_cfg = cfg.clone();
    worker_cfg.seed = Some(seed);
    let args = worker_cfg.to_args();
    let mut children = Vec::new();
    for id in 0..cfg.procs {
        let spawned = Command::new(exe)
            .arg("stress")
            .arg("--worker")
            .arg(id.to_string())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn();
        match spawned {
            Ok(child) => children.push((id, child)),
            Err(source) => {
                for (_, mut c) in children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(StressError::Spawn {
                    exe: exe.clone(),
                    source,
                });
            }
        }
    }
    // Read every child's stdout concurrently: verbose lines pass through, the summary
    // line is kept.
    let results: Vec<Result<(Vec<OpStats>, f64), StressError>> = std::thread::scope(|s| {
        let handles: Vec<_> = children
            .into_iter()
            .map(|(id, mut child)| {
                s.spawn(move || {
                    let mut found = None;
                    if let Some(out) = child.stdout.take() {
                        for line in BufReader::new(out).lines() {
                            let Ok(line) = line else { break };
                            match line.strip_prefix(WORKER_SUMMARY_PREFIX) {
                                Some(json) => found = Some(json.to_string()),
                                None => println!("{line}"),
                            }
                        }
                    }
                    let status = child.wait().map_err(|e| StressError::Worker {
                        id,
                        message: format!("wait: {e}"),
                    })?;
                    if !status.success() {
                        return Err(StressError::Worker {
                            id,
                            message: format!("exited with {status}"),
                        });
                    }
                    let json = found.ok_or_else(|| StressError::Worker {
                        id,
                        message: "printed no summary".into(),
                    })?;
                    let s: Summary =
                        serde_json::from_str(&json).map_err(|e| StressError::Worker {
                            id,
                            message: format!("bad summary: {e}"),
                        })?;
                    Ok((s.ops, s.delayed_s))
                })
            })
            .collect();
        join_all(handles, "reader thread panicked")
    });
    let mut summary = Summary::empty(cfg, seed, "processes");
    for r in results {
        let (ops, delayed) = r?;
        summary.merge_ops(&ops);
        summary.delayed_s += delayed;
    }
    Ok(summary)
}

/// The line a worker prints for its parent: [`WORKER_SUMMARY_PREFIX`] + JSON.
pub fn worker_summary_line(summary: &Summary) -> String {
    let json = serde_json::to_string(summary).unwrap_or_else(|_| "{}".into());
    format!("{WORKER_SUMMARY_PREFIX}{json}")
}
