//! The step context: everything a step needs to render its command and run it, and
//! what its outputs become (parsed frames joined to `runs.parquet`).

use super::exec::ExecOutcome;
use super::target::{Builtin, Session};
use super::{blocksize, trace, Event, RunOptions, StepError};
use crate::parse::Kind;
use crate::plan::{step_times, Phase, Plan, Point};
use crate::spec::{CommandSpec, MountSpec, Step, Template, Value};
use crate::store::BundleWriter;
use polars::prelude::{Column, DataFrame, PolarsResult};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything a step needs to render and run.
pub(super) struct Ctx<'a> {
    pub(super) plan: &'a Plan,
    pub(super) point: &'a Point,
    pub(super) opts: &'a RunOptions,
    /// The replicate, opened on the run's target: where commands and built-ins run.
    pub(super) session: &'a dyn Session,
    pub(super) log_dir: PathBuf,
    /// The replicate being run (from 1).
    pub(super) replicate: u32,
    /// The block trace of the last step with `trace: io`, until it is stored.
    pub(super) io: std::cell::RefCell<Option<trace::Captured>>,
    /// Block sizes from this point's geometry captures, for debugfs block maps.
    pub(super) block_sizes: std::cell::RefCell<blocksize::Known>,
}

/// Why a step did not succeed.
pub(super) enum StepFailure {
    Failed(String),
    TimedOut(String),
    Cancelled,
}

impl Ctx<'_> {
    pub(super) fn lookup(
        &self,
        name: &str,
        iteration: Option<u32>,
        i: Option<i64>,
    ) -> Option<Value> {
        // Devices, images, `mnt` and `work` are the target's to name.
        if name.starts_with("dev.") || name.starts_with("image.") || matches!(name, "mnt" | "work")
        {
            return self.session.var(name);
        }
        match name {
            "point" => Some(Value::Str(self.point.id.clone())),
            "iteration" => iteration.map(|n| Value::Int(i64::from(n))),
            "i" => Some(Value::Int(i.unwrap_or(0))),
            _ => self.point.vars.get(name).cloned(),
        }
    }

    pub(super) fn render(
        &self,
        t: &str,
        iteration: Option<u32>,
        i: Option<i64>,
    ) -> Result<String, StepError> {
        Template::parse(t)?
            .render(&|n| self.lookup(n, iteration, i))
            .map(|w| w.join(" "))
            .map_err(StepError::from)
    }

    pub(super) fn argv(
        &self,
        step: &Step,
        iteration: Option<u32>,
        i: Option<i64>,
    ) -> Result<Vec<String>, StepError> {
        let mut argv = Vec::new();
        for t in step.argv_templates()? {
            argv.extend(t.render(&|n| self.lookup(n, iteration, i))?);
        }
        for w in &argv {
            self.session.check_word(w)?;
        }
        Ok(argv)
    }

    /// Paths that builtins touch must stay inside the point's directory.
    pub(super) fn inside(&self, path: &str) -> Result<PathBuf, StepError> {
        let p = PathBuf::from(path);
        let normal = p
            .components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
        if p.is_absolute() && normal && p.starts_with(self.session.dir()) {
            Ok(p)
        } else {
            Err(StepError::OutsidePoint(path.to_string()))
        }
    }

    pub(super) fn label(&self, phase: Phase, n: usize, step: &Step) -> String {
        let what = step.name.clone().unwrap_or_else(|| match &step.run {
            Some(CommandSpec::Line(l)) => l.split_whitespace().next().unwrap_or("run").to_string(),
            Some(CommandSpec::Argv(v)) => v.first().cloned().unwrap_or_else(|| "run".into()),
            None => step.action().to_string(),
        });
        let base = std::path::Path::new(&what)
            .file_name()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or(what);
        let safe: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if self.point.replicates > 1 {
            format!(
                "r{:02}-{}-{:02}-{}",
                self.replicate,
                phase.name(),
                n + 1,
                safe
            )
        } else {
            format!("{}-{:02}-{}", phase.name(), n + 1, safe)
        }
    }

    /// Run one step (all of its `times:`), returning its cost; a failure carries the cost
    /// too (a failed iteration is still a row). Internal and called once per command, so
    /// the large error variant costs nothing worth boxing.
    #[allow(clippy::result_large_err)]
    pub(super) fn step(
        &self,
        step: &Step,
        label: &str,
        iteration: Option<u32>,
    ) -> Result<ExecOutcome, (StepFailure, ExecOutcome)> {
        self.opts.emit(Event::Step {
            index: self.point.index,
            label: label.to_string(),
        });
        let fail = |m: StepError| {
            (
                StepFailure::Failed(format!("{label}: {m}")),
                ExecOutcome::default(),
            )
        };
        let stdout = self.log_dir.join(format!("{label}.stdout"));
        let stderr = self.log_dir.join(format!("{label}.stderr"));
        let times = step_times(step, self.point).ok_or_else(|| {
            (
                StepFailure::Failed(format!("{label}: `times` is not a whole number ≥ 1")),
                ExecOutcome::default(),
            )
        })?;
        let mut total = ExecOutcome {
            exit_code: Some(0),
            ..Default::default()
        };
        // A trace of a step whose tables were never stored (a before_each step) is dropped.
        self.io.borrow_mut().take();
        let tracer = trace::start(step, self.session).map_err(fail)?;
        for i in 0..times {
            if self.opts.cancelled() {
                return Err((StepFailure::Cancelled, total));
            }
            let one = if step.run.is_some() {
                let argv = self
                    .argv(step, iteration, Some(step.index_of(i)))
                    .map_err(fail)?;
                let timeout = step.timeout.map(Duration::from_secs_f64);
                self.exec(&argv, &stdout, &stderr, timeout).map_err(fail)?
            } else {
                self.builtin(step, iteration, i).map_err(fail)?;
                ExecOutcome {
                    exit_code: Some(0),
                    ..Default::default()
                }
            };
            total.accumulate(&one);
            if one.cancelled {
                return Err((StepFailure::Cancelled, total));
            }
            if one.timed_out {
                let m = format!(
                    "{label}: timed out after {}s; its process tree was killed",
                    step.timeout.unwrap_or_default()
                );
                return Err((StepFailure::TimedOut(m), total));
            }
            if !one.success() && !step.ignore_errors {
                let why = match (&one.spawn_error, one.exit_code, one.signal) {
                    (Some(e), _, _) => e.clone(),
                    (None, Some(c), _) => format!("exited with status {c}"),
                    (None, None, Some(s)) => format!("killed by signal {s}"),
                    _ => "failed".into(),
                };
                let gist = stderr_gist(&stderr, 5);
                let m = if gist.is_empty() {
                    why
                } else {
                    format!("{why}: {gist}")
                };
                return Err((StepFailure::Failed(format!("{label}: {m}")), total));
            }
        }
        if let Some(t) = tracer {
            *self.io.borrow_mut() = Some(trace::finish(t, total.wall).map_err(fail)?);
        }
        Ok(total)
    }

    /// Run one command in the point's cgroups, its output appended to `stdout` and
    /// `stderr` — files that exist only if it (or an earlier command of the step) wrote
    /// something. While it runs, its output goes to `running.stdout` and
    /// `running.stderr` in the point's log directory, which are moved (or appended) to
    /// the step's files when it ends: a 10,000-iteration micro-benchmark then creates no
    /// file per iteration (creating two cost more than the command itself on a
    /// filesystem busy with deletions, where ext4 skips recently freed inodes).
    fn exec(
        &self,
        argv: &[String],
        stdout: &Path,
        stderr: &Path,
        timeout: Option<Duration>,
    ) -> Result<ExecOutcome, StepError> {
        let (out, err) = self.running_logs();
        let result = self.exec_to(argv, &out, &err, timeout);
        // The command's process tree is gone: nothing writes to them any more.
        keep_output(&out, stdout)?;
        keep_output(&err, stderr)?;
        result
    }

    /// Where the running command's output goes.
    fn running_logs(&self) -> (PathBuf, PathBuf) {
        (
            self.log_dir.join(RUNNING_STDOUT),
            self.log_dir.join(RUNNING_STDERR),
        )
    }

    /// Run one command where the point runs (the target's session).
    fn exec_to(
        &self,
        argv: &[String],
        stdout: &Path,
        stderr: &Path,
        timeout: Option<Duration>,
    ) -> Result<ExecOutcome, StepError> {
        self.session
            .exec(argv, stdout, stderr, timeout, &self.opts.cancel)
    }

    pub(super) fn builtin(
        &self,
        step: &Step,
        iteration: Option<u32>,
        i: u32,
    ) -> Result<(), StepError> {
        let r = |t: &str| self.render(t, iteration, Some(step.index_of(i)));
        let builtin = if let Some(m) = &step.mount {
            let (device, at, options, fstype) = match m {
                MountSpec::Device(d) => (d.clone(), None, None, None),
                MountSpec::Full(f) => (
                    f.device.clone(),
                    f.at.clone(),
                    f.options.clone(),
                    f.fstype.clone(),
                ),
            };
            let device = match self.session.var(&format!("dev.{device}")) {
                Some(Value::Str(path)) => PathBuf::from(path),
                _ => PathBuf::from(r(&device)?),
            };
            let at = match at {
                Some(a) => self.inside(&r(&a)?)?,
                None => self.session.mnt(),
            };
            let options = options.map(|o| r(&o)).transpose()?;
            let fstype = fstype.map(|o| r(&o)).transpose()?;
            Builtin::Mount {
                device,
                at,
                fstype,
                options,
            }
        } else if let Some(u) = &step.umount {
            Builtin::Unmount(self.inside(&r(u)?)?)
        } else if let Some(d) = &step.mkdir {
            Builtin::Mkdir(self.inside(&r(d)?)?)
        } else if step.drop_caches == Some(true) {
            Builtin::DropCaches
        } else if step.sync == Some(true) {
            Builtin::Sync
        } else {
            return Ok(());
        };
        self.session.builtin(&builtin)
    }

    /// Parse a step's output into its bundle table.
    pub(super) fn parse_capture(
        &self,
        writer: &mut BundleWriter,
        step: &Step,
        label: &str,
        iteration: Option<u32>,
    ) -> Result<(), StepError> {
        let captured = self.io.borrow_mut().take();
        if let Some(c) = captured {
            let (io, summary, warnings) = trace::frames(&c)?;
            for w in warnings {
                self.opts
                    .emit(Event::Warning(format!("{} {label}: {w}", self.point.id)));
            }
            let id = self.plan.experiment.id();
            for (table, df) in [("io", io), ("io_summary", summary)] {
                let df = with_keys(df, id, self.point, (self.replicate, iteration), label, "io")?;
                writer.append_table(table, df)?;
            }
        }
        let Some(kind_name) = &step.parse else {
            return Ok(());
        };
        if let Ok(Kind::Blockmap) = kind_name.parse::<Kind>() {
            return self.capture_blockmap(writer, label, iteration);
        }
        let stdout = std::fs::read_to_string(self.log_dir.join(format!("{label}.stdout")))
            .unwrap_or_default();
        let text = if stdout.trim().is_empty() {
            std::fs::read_to_string(self.log_dir.join(format!("{label}.stderr")))
                .unwrap_or_default()
        } else {
            stdout
        };
        writer.save_capture(self.point.index, &self.point.id, label, &text)?;
        let kind: Kind = kind_name.parse().map_err(StepError::Kind)?;
        let words = self
            .argv(step, iteration, Some(step.index_of(0)))
            .unwrap_or_default();
        let opts = match self.block_sizes.borrow().for_command(&words) {
            Some(bs) if kind.is_block_map() => crate::parse::map::MapOptions::geometry(bs),
            _ => crate::parse::map::MapOptions::default(),
        };
        let parsed =
            crate::parse::parse_with(kind, &text, opts).map_err(|source| StepError::Parse {
                label: label.to_string(),
                source,
            })?;
        if let Some(bs) = crate::parse::geometry_block_size(kind, &text) {
            self.block_sizes.borrow_mut().add(words, bs);
        }
        for w in &parsed.warnings {
            self.opts.emit(Event::Warning(format!(
                "{} {label}: line {}: {} ({})",
                self.point.id, w.line, w.reason, w.text
            )));
        }
        let id = self.plan.experiment.id();
        let keys = (self.replicate, iteration);
        if let Some(files) = parsed.files {
            // Block maps: one record per file, joined with `extents` on the keys + `file`.
            let df = with_keys(files, id, self.point, keys, label, kind.name())?;
            writer.append_table("files", df)?;
        }
        let df = with_keys(parsed.frame, id, self.point, keys, label, kind.name())?;
        Ok(writer.append_table(kind.table(), df)?)
    }
}

impl Ctx<'_> {
    /// `parse: blockmap`, in bounded memory: the log file is copied to `captures/` as
    /// it is, then parsed as a stream, each batch of rows written to the bundle as a
    /// part as it fills ([`BundleWriter::stage_part`]); the capture's rows are
    /// committed together once the whole map was read, and dropped on a parse error.
    fn capture_blockmap(
        &self,
        writer: &mut BundleWriter,
        label: &str,
        iteration: Option<u32>,
    ) -> Result<(), StepError> {
        use crate::parse::blockmap::{parse_stream, MapTable, StreamError};
        let stdout = self.log_dir.join(format!("{label}.stdout"));
        let source = if has_text(&stdout) {
            stdout
        } else {
            self.log_dir.join(format!("{label}.stderr"))
        };
        writer.save_capture_file(self.point.index, &self.point.id, label, &source)?;
        let input: Box<dyn std::io::Read> = match std::fs::File::open(&source) {
            Ok(f) => Box::new(f),
            Err(_) => Box::new(std::io::empty()),
        };
        let id = self.plan.experiment.id();
        let keys = (self.replicate, iteration);
        let mut tx = writer.begin_parts()?;
        let streamed = parse_stream(input, capture_batch_rows(), &mut |table,
                                                                       df|
         -> Result<
            (),
            StepError,
        > {
            let df = with_keys(df, id, self.point, keys, label, Kind::Blockmap.name())?;
            let name = match table {
                MapTable::Rows => Kind::Blockmap.table(),
                MapTable::Files => "files",
            };
            Ok(writer.stage_part(&mut tx, name, df)?)
        });
        match streamed {
            Ok(()) => Ok(writer.commit_parts(tx)?),
            Err(StreamError::Parse(source)) => Err(StepError::Parse {
                label: label.to_string(),
                source,
            }),
            Err(StreamError::Sink(e)) => Err(e),
        }
    }
}

/// Rows per batch of a streamed capture: [`crate::parse::blockmap::BATCH_ROWS`], or
/// `FSLAB_CAPTURE_BATCH_ROWS` (internal: lets tests make several batches of a small map).
fn capture_batch_rows() -> usize {
    std::env::var("FSLAB_CAPTURE_BATCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(crate::parse::blockmap::BATCH_ROWS)
}

/// The file has a byte that is not ASCII whitespace (read up to the first such byte).
fn has_text(path: &Path) -> bool {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut buf = [0u8; 8192];
    loop {
        match f.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => {
                if buf[..n]
                    .iter()
                    .any(|b| !b.is_ascii_whitespace() && *b != 0x0b)
                {
                    return true;
                }
            }
        }
    }
}

/// The names of the running command's output files in a point's log directory.
const RUNNING_STDOUT: &str = "running.stdout";
const RUNNING_STDERR: &str = "running.stderr";

/// Move what a command wrote to `running` onto the end of `kept`: a rename when `kept`
/// does not exist yet (the next command creates `running` again), else an append, after
/// which `running` is emptied. Nothing happens when it wrote nothing.
fn keep_output(running: &Path, kept: &Path) -> Result<(), StepError> {
    let io = |source: std::io::Error| StepError::Log {
        path: kept.to_path_buf(),
        source,
    };
    let len = match std::fs::metadata(running) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    if len == 0 {
        return Ok(());
    }
    match std::fs::symlink_metadata(kept) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return std::fs::rename(running, kept).map_err(io);
        }
        Err(e) => return Err(io(e)),
        Ok(_) => {}
    }
    let mut from = std::fs::File::open(running).map_err(io)?;
    let mut to = std::fs::OpenOptions::new()
        .append(true)
        .open(kept)
        .map_err(io)?;
    std::io::copy(&mut from, &mut to).map_err(io)?;
    std::fs::OpenOptions::new()
        .write(true)
        .open(running)
        .and_then(|f| f.set_len(0))
        .map_err(io)
}

impl Drop for Ctx<'_> {
    /// The running command's files are empty between commands: none stays in the bundle.
    fn drop(&mut self) {
        let (out, err) = self.running_logs();
        for p in [out, err] {
            if std::fs::metadata(&p).is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
}

/// Prefix a parsed frame with the columns that join it to `runs.parquet`.
pub(super) fn with_keys(
    df: DataFrame,
    experiment: &str,
    point: &Point,
    (replicate, iteration): (u32, Option<u32>),
    capture: &str,
    kind: &str,
) -> PolarsResult<DataFrame> {
    let h = df.height();
    const KEYS: [&str; 7] = [
        "experiment",
        "point_id",
        "point_index",
        "iteration",
        "replicate",
        "capture",
        "kind",
    ];
    let mut cols = vec![
        Column::new("experiment".into(), vec![experiment; h]),
        Column::new("point_id".into(), vec![point.id.as_str(); h]),
        Column::new("point_index".into(), vec![point.index as i64; h]),
        Column::new("iteration".into(), vec![iteration.map(i64::from); h]),
        Column::new("replicate".into(), vec![i64::from(replicate); h]),
        Column::new("capture".into(), vec![capture; h]),
        Column::new("kind".into(), vec![kind; h]),
    ];
    // A parsed column named like a key column (e2fsck rows have their own `kind`) is
    // kept as `row_<name>`.
    cols.extend(df.columns().iter().map(|c| {
        if KEYS.contains(&c.name().as_str()) {
            let mut c = c.clone();
            c.rename(format!("row_{}", c.name()).into());
            c
        } else {
            c.clone()
        }
    }));
    DataFrame::new_infer_height(cols)
}

/// The gist of a failing command's stderr: its first lines (where most tools say what
/// went wrong) and, when longer, its last line.
pub(super) fn stderr_gist(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let v: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if v.len() <= lines {
        return v.join(" | ");
    }
    let mut out: Vec<&str> = v[..lines - 1].to_vec();
    out.push("…");
    out.push(v[v.len() - 1]);
    out.join(" | ")
}
