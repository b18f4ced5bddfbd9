//! The runner: provisions each point's devices, runs its steps, times the workload,
//! keeps every output, and writes the bundle as it goes.

mod blocksize;
mod counters;
pub mod env;
pub mod exec;
pub mod executables;
pub mod notebook;
mod step_error;
mod trace;
pub use step_error::StepError;

use crate::analysis::{should_continue, Decision, RepeatPolicy, StopReason, Warmup};
use crate::devices::policy::{self, MappedDevice, ScratchList};
use crate::devices::{self, DeviceError, PointDevices};
use crate::doctor::{Probe, SystemHost};
use crate::parse::Kind;
use crate::plan::{step_times, Phase, Plan, Point};
use crate::spec::{CommandSpec, MountSpec, Step, Template, Value};
use crate::store::merge::ShardInfo;
use crate::store::RepeatStop;
use crate::store::{
    Bundle, BundleStatus, BundleWriter, DeviceInfo, ExperimentInfo, Manifest, PointRecord,
    PointStatus, RunRow, RunStatus, StoreError, ToolRecord,
};
use exec::ExecOutcome;
use polars::prelude::*;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(
        "fslab run needs root to attach loop devices and mount filesystems (running as uid {uid})"
    )]
    NotRoot { uid: u32 },
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "interrupted; everything fslab attached or mounted was released. Partial results: {bundle}"
    )]
    Interrupted { bundle: PathBuf },
    #[error("{point}: {message}")]
    Step { point: String, message: String },
    #[error("cannot resume {bundle}: {message}")]
    Resume { bundle: PathBuf, message: String },
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What the runner reports while it works (the CLI draws a progress bar from these).
#[derive(Debug, Clone)]
pub enum Event {
    Reclaimed(devices::Reclaimed),
    Started {
        bundle: PathBuf,
        points: usize,
        iterations: u64,
    },
    PointStarted {
        index: usize,
        id: String,
    },
    Step {
        index: usize,
        label: String,
    },
    Iteration {
        index: usize,
        iteration: u32,
        repeat: u32,
        wall_s: f64,
        ok: bool,
    },
    PointFinished {
        index: usize,
        id: String,
        status: PointStatus,
        reason: Option<String>,
    },
    Warning(String),
}

pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    /// Where bundles go (`<results>/<experiment>/<stamp>-<id>/`).
    pub results_dir: PathBuf,
    /// Where images, mount points and the ownership records live.
    pub work_dir: PathBuf,
    /// Stop at the first failing point.
    pub fail_fast: bool,
    /// Set to stop (SIGINT/SIGTERM handlers set it).
    pub cancel: Arc<AtomicBool>,
    /// How the preflight may probe kernel features (see [`crate::doctor`]).
    pub probe: Probe,
    /// Logical device → real block device (`--device NAME=PATH`). Each must be listed
    /// as a scratch device and pass [`devices::policy`]'s checks.
    pub device_map: Vec<(String, PathBuf)>,
    /// The scratch device list; None: read it from the environment and the user's
    /// config ([`ScratchList::from_env`]) when `device_map` is not empty.
    pub scratch: Option<ScratchList>,
    /// Run only this shard's points (`--shard K/N`, see [`crate::shard`]); the others are
    /// recorded as `other-shard`.
    pub shard: Option<crate::shard::Shard>,
    pub on_event: Option<EventSink>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("results_dir", &self.results_dir)
            .field("work_dir", &self.work_dir)
            .field("fail_fast", &self.fail_fast)
            .field("device_map", &self.device_map)
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

pub use crate::host::default_work_dir;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            results_dir: std::env::var_os("FSLAB_RESULTS_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("results")),
            work_dir: default_work_dir(),
            fail_fast: false,
            cancel: Arc::new(AtomicBool::new(false)),
            probe: Probe::default(),
            device_map: Vec::new(),
            scratch: None,
            shard: None,
            on_event: None,
        }
    }
}

impl RunOptions {
    /// SIGINT and SIGTERM set `cancel`: the runner then stops the running command,
    /// releases every device and mount, and returns [`RunError::Interrupted`].
    pub fn with_signal_handlers(self) -> std::io::Result<Self> {
        // SIGHUP too: a closed terminal or ssh session must not leave devices behind.
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(sig, Arc::clone(&self.cancel))?;
        }
        Ok(self)
    }

    pub fn with_events(mut self, sink: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(sink));
        self
    }

    fn emit(&self, e: Event) {
        if let Some(s) = &self.on_event {
            s(&e);
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }
}

/// Release what killed fslab runs left behind under `work_dir` (which must be a
/// trusted directory: see [`devices::WorkDir`]).
pub fn cleanup(work_dir: &Path) -> Result<devices::Reclaimed, RunError> {
    let work = devices::WorkDir::open(work_dir)?;
    Ok(devices::reclaim(&work)?)
}

/// Every program the plan runs (first word of each command at each point).
pub fn programs(plan: &Plan) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for point in &plan.points {
        for phase in Phase::ALL {
            for step in plan.steps(point, phase) {
                if let Some(word) = step.program(&|n| point.vars.get(n).cloned()) {
                    if !out.contains(&word) {
                        out.push(word);
                    }
                }
            }
        }
    }
    out
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn vars_json(point: &Point) -> serde_json::Map<String, serde_json::Value> {
    point
        .matrix
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect()
}

/// Check `--device` mappings: each names a device of the experiment, at most once, no
/// two name the same device, and each passes the device policy.
pub fn approve_mappings(plan: &Plan, opts: &RunOptions) -> Result<Vec<MappedDevice>, RunError> {
    if opts.device_map.is_empty() {
        return Ok(Vec::new());
    }
    let declared: Vec<&str> = plan
        .experiment
        .def
        .devices
        .keys()
        .map(String::as_str)
        .collect();
    let list = match &opts.scratch {
        Some(l) => l.clone(),
        None => ScratchList::from_env()?,
    };
    let mut out: Vec<MappedDevice> = Vec::new();
    for (name, path) in &opts.device_map {
        let given = format!("{name}={}", path.display());
        let bad = |message: String| {
            RunError::Device(DeviceError::Mapping {
                given: given.clone(),
                message,
            })
        };
        if !declared.contains(&name.as_str()) {
            let best = declared
                .iter()
                .map(|c| (strsim::jaro_winkler(name, c), *c))
                .filter(|(s, _)| *s > 0.75)
                .max_by(|a, b| a.0.total_cmp(&b.0));
            return Err(bad(match best {
                Some((_, c)) => format!(
                    "{} has no device `{name}`; did you mean `{c}`?",
                    plan.experiment.id()
                ),
                None if declared.is_empty() => {
                    format!("{} declares no devices", plan.experiment.id())
                }
                None => format!(
                    "{} has no device `{name}`; its devices: {}",
                    plan.experiment.id(),
                    declared.join(", ")
                ),
            }));
        }
        if out.iter().any(|m| &m.name == name) {
            return Err(bad(format!("`{name}` is mapped twice")));
        }
        let m = policy::approve(name, path, &list)?;
        let needed = plan
            .points
            .iter()
            .flat_map(|p| p.devices.iter())
            .filter(|d| &d.name == name)
            .map(|d| d.size_bytes)
            .max()
            .unwrap_or(0);
        if let Err(reason) = policy::check_size(&m, needed) {
            return Err(RunError::Device(DeviceError::Refused {
                device: path.display().to_string(),
                reason: Box::new(reason),
            }));
        }
        if let Some(other) = out.iter().find(|o| o.devno == m.devno) {
            return Err(bad(format!(
                "{} is already mapped to `{}`; each logical device needs its own real device",
                m.device.display(),
                other.name
            )));
        }
        out.push(m);
    }
    Ok(out)
}

fn device_infos(plan: &Plan, mapped: &[MappedDevice]) -> Vec<DeviceInfo> {
    let Some(p) = plan.points.first() else {
        return Vec::new();
    };
    p.devices
        .iter()
        .map(|d| match mapped.iter().find(|m| m.name == d.name) {
            Some(m) => DeviceInfo {
                name: d.name.clone(),
                size_bytes: m.size_bytes,
                backing: format!("mapped {}", m.device.display()),
                medium: None,
                throttle: d.throttle.map(|t| devices::throttle::describe(&t)),
            },
            None => DeviceInfo {
                name: d.name.clone(),
                size_bytes: d.size_bytes,
                backing: format!("{:?} (loop device on a sparse image file)", d.backing)
                    .to_lowercase(),
                medium: d.medium.map(|m| crate::store::MediumRecord {
                    model: m.label().to_string(),
                    params: m.params().and_then(|p| serde_json::to_value(p).ok()),
                    substitution: m.params().is_some(),
                }),
                throttle: d.throttle.map(|t| devices::throttle::describe(&t)),
            },
        })
        .collect()
}

/// Check for root, open (create, resolve, check) the work directory and reclaim what
/// killed runs left there.
fn prepare(opts: &RunOptions) -> Result<devices::WorkDir, RunError> {
    let uid = nix::unistd::Uid::effective();
    if !uid.is_root() {
        return Err(RunError::NotRoot { uid: uid.as_raw() });
    }
    let work = devices::WorkDir::open(&opts.work_dir)?;
    let reclaimed = devices::reclaim(&work)?;
    for w in reclaimed.kept.iter().chain(&reclaimed.ignored) {
        opts.emit(Event::Warning(w.clone()));
    }
    if !reclaimed.is_empty() {
        opts.emit(Event::Reclaimed(reclaimed));
    }
    Ok(work)
}

/// Run every point of `plan`. Returns the bundle, also when some points failed (their
/// status says so); returns an error only when nothing sensible can continue.
pub fn run(plan: &Plan, opts: &RunOptions) -> Result<Bundle, RunError> {
    let work = prepare(opts)?;
    // After reclaiming: a mapped device that a killed run left mounted is free again.
    let mapped = approve_mappings(plan, opts)?;
    let exp = &plan.experiment;
    let preflight = crate::doctor::check(
        plan,
        &SystemHost::new(opts.probe, work.path().to_path_buf()),
    );
    let mut environment = env::capture_environment(&programs(plan));
    let mut tools = std::collections::BTreeMap::new();
    for (name, t) in &plan.tools {
        let version = env::tool_version(&t.program);
        let label = match &t.stand_in {
            Some(si) => format!("{version} — stand-in for {name}: {si}"),
            None => version.clone(),
        };
        environment.tools.insert(name.clone(), label);
        tools.insert(
            name.clone(),
            ToolRecord {
                command: t.command.join(" "),
                program: t.program.clone(),
                version,
                stand_in: t.stand_in.clone(),
                choice: t.choice,
                notes: t.notes.clone(),
            },
        );
    }
    environment.devices = device_infos(plan, &mapped);
    let manifest = Manifest {
        format_version: crate::store::FORMAT_VERSION,
        fslab_version: env!("CARGO_PKG_VERSION").to_string(),
        experiment: ExperimentInfo {
            id: exp.id().to_string(),
            title: exp.title().to_string(),
            file: exp.file.as_ref().map(|p| p.display().to_string()),
            sha256: hex::encode(Sha256::digest(exp.source_text.as_bytes())),
            yaml: exp.source_text.clone(),
        },
        profile: plan.profile.clone(),
        overrides: plan
            .overrides
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json_exact()))
            .collect(),
        matrix_axes: plan.axes(),
        started_at: now(),
        finished_at: None,
        status: BundleStatus::Running,
        environment,
        points: plan
            .points
            .iter()
            .map(|p| {
                let check = preflight.point(p.index);
                let reason = check.and_then(|c| c.reason());
                PointRecord {
                    id: p.id.clone(),
                    index: p.index,
                    vars: vars_json(p),
                    status: if reason.is_some() {
                        PointStatus::Unsupported
                    } else {
                        PointStatus::Pending
                    },
                    reason,
                    iterations: 0,
                    repeat_stop: None,
                    repeat_stops: Vec::new(),
                    notes: check.map(|c| c.notes.clone()).unwrap_or_default(),
                }
            })
            .collect(),
        tools,
        shard: None,
        merged: None,
        executables: executables::record(plan),
    };
    let manifest = mark_shard(manifest, opts.shard);
    let mut writer = BundleWriter::create(&opts.results_dir, manifest)?;
    run_points(plan, opts, &work, &mut writer, &mapped)
}

/// Record the shard in the manifest and mark the other shards' points.
fn mark_shard(mut m: Manifest, shard: Option<crate::shard::Shard>) -> Manifest {
    let Some(shard) = shard else { return m };
    m.shard = Some(ShardInfo::new(
        shard,
        m.points.iter().map(|p| p.id.clone()).collect(),
    ));
    for p in &mut m.points {
        if !shard.owns(p.index) {
            p.status = PointStatus::OtherShard;
            p.reason = Some(format!(
                "runs in shard {}/{}",
                crate::shard::shard_of(p.index, shard.n()),
                shard.n()
            ));
            p.notes.clear();
        }
    }
    m
}

/// The plan a bundle was started with: its saved `experiment.yaml`, profile and
/// overrides (for `fslab run --resume BUNDLE` without naming the experiment).
pub fn plan_of_bundle(bundle_dir: &Path) -> Result<Plan, RunError> {
    let b = Bundle::open(bundle_dir)?;
    let m = b.manifest();
    let name = bundle_dir.join("experiment.yaml").display().to_string();
    let mut exp = crate::Experiment::from_str_named(&m.experiment.yaml, &name)?;
    exp.file = m.experiment.file.as_ref().map(PathBuf::from);
    let mut overrides = Vec::new();
    for (k, v) in &m.overrides {
        let value = Value::from_json(v).ok_or_else(|| RunError::Resume {
            bundle: bundle_dir.to_path_buf(),
            message: format!("the manifest's override `{k}` is `{v}`, not a value"),
        })?;
        overrides.push((k.clone(), value));
    }
    let plan = Plan::new(&exp, m.profile.as_deref(), &overrides)?;
    check_resumable(&plan, m, bundle_dir)?;
    Ok(plan)
}

/// A bundle can only be finished by the plan that started it.
fn check_resumable(plan: &Plan, m: &Manifest, dir: &Path) -> Result<(), RunError> {
    let fail = |message: String| RunError::Resume {
        bundle: dir.to_path_buf(),
        message,
    };
    let sha = hex::encode(Sha256::digest(plan.experiment.source_text.as_bytes()));
    if sha != m.experiment.sha256 {
        return Err(fail(format!(
            "the experiment file differs from the one the bundle was started with (sha256 {} there, {} now); \
             resume without naming the experiment to use the bundle's copy",
            short(&m.experiment.sha256),
            short(&sha)
        )));
    }
    if plan.profile != m.profile {
        return Err(fail(format!(
            "it was started with profile {}, not {}",
            m.profile.as_deref().unwrap_or("(none)"),
            plan.profile.as_deref().unwrap_or("(none)")
        )));
    }
    let ids: Vec<&str> = plan.points.iter().map(|p| p.id.as_str()).collect();
    let theirs: Vec<&str> = m.points.iter().map(|p| p.id.as_str()).collect();
    if ids != theirs {
        return Err(fail(format!(
            "its points are [{}], this plan's are [{}] (different --set or profile?)",
            theirs.join("; "),
            ids.join("; ")
        )));
    }
    let overrides: serde_json::Map<String, serde_json::Value> = plan
        .overrides
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json_exact()))
        .collect();
    let labels = |o: &serde_json::Map<String, serde_json::Value>| -> Vec<(String, String)> {
        o.iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    Value::from_json(v).map(|v| v.label()).unwrap_or_default(),
                )
            })
            .collect()
    };
    if labels(&overrides) != labels(&m.overrides) {
        return Err(fail(format!(
            "it was started with overrides {}, this plan has {}",
            serde_json::Value::Object(m.overrides.clone()),
            serde_json::Value::Object(overrides)
        )));
    }
    Ok(())
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// Finish a bundle whose run was interrupted (or killed): points with all their
/// iterations are kept as they are; every other point is run again from its setup.
/// A point's iterations share one filesystem made by its setup, so a point is measured
/// whole or not at all: its partial rows are dropped (its old logs are kept aside as
/// `logs/<point>.interrupted-N/`), and each iteration appears exactly once.
pub fn resume(plan: &Plan, bundle_dir: &Path, opts: &RunOptions) -> Result<Bundle, RunError> {
    let work = prepare(opts)?;
    {
        let b = Bundle::open(bundle_dir)?;
        check_resumable(plan, b.manifest(), bundle_dir)?;
        let theirs = b.manifest().shard.as_ref().map(|s| s.shard.clone());
        if let Some(mine) = opts.shard {
            if theirs.as_deref() != Some(mine.to_string().as_str()) {
                return Err(RunError::Resume {
                    bundle: bundle_dir.to_path_buf(),
                    message: format!(
                        "it ran {}, not shard {mine}",
                        theirs.map_or("the whole plan".to_string(), |s| format!("shard {s}"))
                    ),
                });
            }
        }
        if b.manifest().status == BundleStatus::Complete {
            return Err(RunError::Resume {
                bundle: bundle_dir.to_path_buf(),
                message: "it is complete; nothing to do".into(),
            });
        }
    }
    // After reclaiming: a mapped device that a killed run left mounted is free again.
    let mapped = approve_mappings(plan, opts)?;
    let mut writer = BundleWriter::reopen(bundle_dir)?;
    writer.retain_complete_points()?;
    for p in writer.manifest().points.clone() {
        if p.status == PointStatus::Pending {
            writer.set_aside_logs(p.index, &p.id)?;
        }
    }
    let preflight = crate::doctor::check(
        plan,
        &SystemHost::new(opts.probe, work.path().to_path_buf()),
    );
    for p in &mut writer.manifest_mut().points {
        if p.status == PointStatus::Pending {
            if let Some(reason) = preflight.point(p.index).and_then(|c| c.reason()) {
                p.status = PointStatus::Unsupported;
                p.reason = Some(reason);
            }
        }
    }
    writer.manifest_mut().status = BundleStatus::Running;
    writer.manifest_mut().finished_at = None;
    if !mapped.is_empty() {
        writer.manifest_mut().environment.devices = device_infos(plan, &mapped);
    }
    run_points(plan, opts, &work, &mut writer, &mapped)
}

fn run_points(
    plan: &Plan,
    opts: &RunOptions,
    work: &devices::WorkDir,
    writer: &mut BundleWriter,
    mapped: &[MappedDevice],
) -> Result<Bundle, RunError> {
    let todo: Vec<&Point> = plan
        .points
        .iter()
        .filter(|p| {
            writer
                .manifest()
                .points
                .get(p.index)
                .is_none_or(|r| !r.status.is_settled())
        })
        .collect();
    for r in writer.manifest().points.clone() {
        if r.status == PointStatus::Unsupported {
            opts.emit(Event::PointFinished {
                index: r.index,
                id: r.id.clone(),
                status: r.status,
                reason: r.reason.clone(),
            });
        }
    }
    opts.emit(Event::Started {
        bundle: writer.dir().to_path_buf(),
        points: todo.len(),
        iterations: todo.iter().map(|p| u64::from(p.repeat)).sum(),
    });
    let mut interrupted = false;
    for point in todo {
        if opts.cancelled() {
            interrupted = true;
            break;
        }
        opts.emit(Event::PointStarted {
            index: point.index,
            id: point.id.clone(),
        });
        set_point(writer, point.index, PointStatus::Running, None, 0)?;
        // Short paths: some tools limit them (fs_mark: directory names under 40 bytes).
        // The ownership record and the logs say which run and point a directory was.
        let short: String = (0..6)
            .map(|_| char::from_digit(rand::random_range(0..16u32), 16).unwrap_or('0'))
            .collect();
        let dir = work.points().join(short);
        let outcome = run_point(plan, point, opts, work, writer, dir, mapped);
        // The point's rows and tables as parquet, before its status says it is done.
        writer.flush()?;
        let (status, reason, iterations, repeat_stop, repeat_stops) = match outcome {
            Ok(o) => (
                o.status,
                o.reason,
                o.iterations,
                o.repeat_stop,
                o.repeat_stops,
            ),
            Err(e) => (
                PointStatus::Failed,
                Some(e.to_string()),
                0,
                None,
                Vec::new(),
            ),
        };
        set_point(writer, point.index, status, reason.clone(), iterations)?;
        if let Some(p) = writer.manifest_mut().points.get_mut(point.index) {
            p.repeat_stop = repeat_stop;
            p.repeat_stops = repeat_stops;
        }
        writer.save_manifest()?;
        opts.emit(Event::PointFinished {
            index: point.index,
            id: point.id.clone(),
            status,
            reason,
        });
        if status == PointStatus::Interrupted || opts.cancelled() {
            interrupted = true;
            break;
        }
        if opts.fail_fast && status != PointStatus::Ok {
            break;
        }
    }
    writer.flush()?;
    let m = writer.manifest_mut();
    m.finished_at = Some(now());
    m.status = if interrupted {
        BundleStatus::Interrupted
    } else if m
        .points
        .iter()
        .all(|p| matches!(p.status, PointStatus::Ok | PointStatus::OtherShard))
    {
        BundleStatus::Complete
    } else {
        BundleStatus::Partial
    };
    writer.save_manifest()?;
    if interrupted {
        return Err(RunError::Interrupted {
            bundle: writer.dir().to_path_buf(),
        });
    }
    Ok(Bundle::open(writer.dir())?)
}

fn set_point(
    writer: &mut BundleWriter,
    index: usize,
    status: PointStatus,
    reason: Option<String>,
    iterations: u32,
) -> Result<(), StoreError> {
    if let Some(p) = writer.manifest_mut().points.get_mut(index) {
        p.status = status;
        p.reason = reason;
        p.iterations = iterations;
    }
    writer.save_manifest()
}

struct PointOutcome {
    status: PointStatus,
    reason: Option<String>,
    iterations: u32,
    repeat_stop: Option<String>,
    repeat_stops: Vec<RepeatStop>,
}

/// Everything a step needs to render and run.
struct Ctx<'a> {
    plan: &'a Plan,
    point: &'a Point,
    opts: &'a RunOptions,
    devs: &'a PointDevices,
    log_dir: PathBuf,
    /// The replicate being run (from 1).
    replicate: u32,
    /// The block trace of the last step with `trace: io`, until it is stored.
    io: std::cell::RefCell<Option<trace::Captured>>,
    /// Block sizes from this point's geometry captures, for debugfs block maps.
    block_sizes: std::cell::RefCell<blocksize::Known>,
}

/// Why a step did not succeed.
enum StepFailure {
    Failed(String),
    TimedOut(String),
    Cancelled,
}

impl Ctx<'_> {
    fn lookup(&self, name: &str, iteration: Option<u32>, i: Option<u32>) -> Option<Value> {
        if let Some(dev) = name.strip_prefix("dev.") {
            return self
                .devs
                .device(dev)
                .map(|d| Value::Str(d.device.display().to_string()));
        }
        if let Some(dev) = name.strip_prefix("image.") {
            // A mapped device has no image file.
            return self
                .devs
                .device(dev)
                .filter(|d| d.mapped.is_none())
                .map(|d| Value::Str(d.image.display().to_string()));
        }
        match name {
            "mnt" => Some(Value::Str(self.devs.mnt().display().to_string())),
            "work" => Some(Value::Str(self.devs.work().display().to_string())),
            "point" => Some(Value::Str(self.point.id.clone())),
            "iteration" => iteration.map(|n| Value::Int(i64::from(n))),
            "i" => Some(Value::Int(i64::from(i.unwrap_or(0)))),
            _ => self.point.vars.get(name).cloned(),
        }
    }

    fn render(&self, t: &str, iteration: Option<u32>, i: Option<u32>) -> Result<String, StepError> {
        Template::parse(t)?
            .render(&|n| self.lookup(n, iteration, i))
            .map(|w| w.join(" "))
            .map_err(StepError::from)
    }

    fn argv(
        &self,
        step: &Step,
        iteration: Option<u32>,
        i: Option<u32>,
    ) -> Result<Vec<String>, StepError> {
        let mut argv = Vec::new();
        for t in step.argv_templates()? {
            argv.extend(t.render(&|n| self.lookup(n, iteration, i))?);
        }
        for w in &argv {
            self.devs.check_word(w)?;
        }
        Ok(argv)
    }

    /// Paths that builtins touch must stay inside the point's directory.
    fn inside(&self, path: &str) -> Result<PathBuf, StepError> {
        let p = PathBuf::from(path);
        let normal = p
            .components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
        if p.is_absolute() && normal && p.starts_with(self.devs.dir()) {
            Ok(p)
        } else {
            Err(StepError::OutsidePoint(path.to_string()))
        }
    }

    fn label(&self, phase: Phase, n: usize, step: &Step) -> String {
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
    fn step(
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
        let tracer = trace::start(step, self.devs).map_err(fail)?;
        for i in 0..times {
            if self.opts.cancelled() {
                return Err((StepFailure::Cancelled, total));
            }
            let one = if step.run.is_some() {
                let argv = self.argv(step, iteration, Some(i)).map_err(fail)?;
                let timeout = step.timeout.map(Duration::from_secs_f64);
                exec::exec(
                    &argv,
                    &self.devs.work(),
                    &stdout,
                    &stderr,
                    timeout,
                    &self.opts.cancel,
                    Some(self.devs.cgroup()),
                )
                .map_err(|e| fail(StepError::Spawn(e)))?
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
                let tail = tail_of(&stderr, 5);
                let m = if tail.is_empty() {
                    why
                } else {
                    format!("{why}: {tail}")
                };
                return Err((StepFailure::Failed(format!("{label}: {m}")), total));
            }
        }
        if let Some(t) = tracer {
            *self.io.borrow_mut() = Some(trace::finish(t, total.wall).map_err(fail)?);
        }
        Ok(total)
    }

    fn builtin(&self, step: &Step, iteration: Option<u32>, i: u32) -> Result<(), StepError> {
        let r = |t: &str| self.render(t, iteration, Some(i));
        if let Some(m) = &step.mount {
            let (device, at, options, fstype) = match m {
                MountSpec::Device(d) => (d.clone(), None, None, None),
                MountSpec::Full(f) => (
                    f.device.clone(),
                    f.at.clone(),
                    f.options.clone(),
                    f.fstype.clone(),
                ),
            };
            let dev_path = match self.devs.device(&device) {
                Some(d) => d.device.clone(),
                None => PathBuf::from(r(&device)?),
            };
            let at = match at {
                Some(a) => self.inside(&r(&a)?)?,
                None => self.devs.mnt(),
            };
            let options = options.map(|o| r(&o)).transpose()?;
            let fstype = fstype.map(|o| r(&o)).transpose()?;
            return self
                .devs
                .mount(&dev_path, &at, fstype.as_deref(), options.as_deref())
                .map_err(StepError::from);
        }
        if let Some(u) = &step.umount {
            let p = self.inside(&r(u)?)?;
            return devices::unmount(&p).map_err(StepError::from);
        }
        if let Some(d) = &step.mkdir {
            let p = self.inside(&r(d)?)?;
            return std::fs::create_dir_all(&p)
                .map_err(|source| StepError::Mkdir { path: p, source });
        }
        // Only the point's own filesystems are flushed (see PointDevices::sync_own).
        if step.drop_caches == Some(true) {
            self.devs.sync_own()?;
            return std::fs::write("/proc/sys/vm/drop_caches", "3\n")
                .map_err(StepError::DropCaches);
        }
        if step.sync == Some(true) {
            self.devs.sync_own()?;
        }
        Ok(())
    }

    /// Parse a step's output into its bundle table.
    fn parse_capture(
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
        let words = self.argv(step, iteration, Some(0)).unwrap_or_default();
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

/// Prefix a parsed frame with the columns that join it to `runs.parquet`.
fn with_keys(
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
fn tail_of(path: &Path, lines: usize) -> String {
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

/// Run a point: each of its replicates afresh (new devices, setup, iterations,
/// captures, teardown), stopping at the first replicate that does not succeed.
fn run_point(
    plan: &Plan,
    point: &Point,
    opts: &RunOptions,
    work: &devices::WorkDir,
    writer: &mut BundleWriter,
    dir: PathBuf,
    mapped: &[MappedDevice],
) -> Result<PointOutcome, RunError> {
    let replicates = point.replicates.max(1);
    let mut out = PointOutcome {
        status: PointStatus::Ok,
        reason: None,
        iterations: 0,
        repeat_stop: None,
        repeat_stops: Vec::new(),
    };
    let mut stop_text = Vec::new();
    for r in 1..=replicates {
        let rdir = if replicates == 1 {
            dir.clone()
        } else {
            let mut name = dir.file_name().unwrap_or_default().to_os_string();
            name.push(format!("r{r}"));
            dir.with_file_name(name)
        };
        let o = run_replicate(plan, point, opts, work, writer, rdir, mapped, r)?;
        out.iterations += o.iterations;
        if let Some(why) = o.stop {
            stop_text.push(if replicates == 1 {
                why.to_string()
            } else {
                format!("replicate {r}: {why}")
            });
            out.repeat_stops.push(RepeatStop {
                replicate: r,
                warmup: point.repeat_warmup as usize,
                reason: why,
            });
        }
        if o.status != PointStatus::Ok {
            out.status = o.status;
            out.reason = match o.reason {
                Some(m) if replicates > 1 => Some(format!("replicate {r}: {m}")),
                other => other,
            };
            break;
        }
    }
    out.repeat_stop = (!stop_text.is_empty()).then(|| stop_text.join("; "));
    Ok(out)
}

/// What one replicate of a point gave.
struct ReplicateOutcome {
    status: PointStatus,
    reason: Option<String>,
    iterations: u32,
    stop: Option<StopReason>,
}

#[allow(clippy::too_many_arguments)]
fn run_replicate(
    plan: &Plan,
    point: &Point,
    opts: &RunOptions,
    work: &devices::WorkDir,
    writer: &mut BundleWriter,
    dir: PathBuf,
    mapped: &[MappedDevice],
    replicate: u32,
) -> Result<ReplicateOutcome, RunError> {
    let mut devs = PointDevices::provision_mapped(work, dir, &point.devices, mapped)?;
    let log_dir = writer.log_dir(point.index, &point.id)?;
    let ctx = Ctx {
        plan,
        point,
        opts,
        devs: &devs,
        log_dir,
        replicate,
        io: Default::default(),
        block_sizes: Default::default(),
    };
    let mut status = PointStatus::Ok;
    let mut reason: Option<String> = None;
    let mut iterations = 0u32;
    let mut repeat_stop: Option<StopReason> = None;
    let record = |f: StepFailure, status: &mut PointStatus, reason: &mut Option<String>| {
        let (s, r) = match f {
            StepFailure::Failed(m) => (PointStatus::Failed, Some(m)),
            StepFailure::TimedOut(m) => (PointStatus::Timeout, Some(m)),
            StepFailure::Cancelled => (
                PointStatus::Interrupted,
                Some("interrupted by signal".into()),
            ),
        };
        if *status == PointStatus::Ok {
            *status = s;
            *reason = r;
        }
    };
    let warn = |m: String| opts.emit(Event::Warning(m));

    // Setup.
    let mut setup_ok = true;
    for (n, step) in plan.steps(point, Phase::Setup).into_iter().enumerate() {
        let label = ctx.label(Phase::Setup, n, step);
        match ctx.step(step, &label, None) {
            Ok(_) => {
                if let Err(m) = ctx.parse_capture(writer, step, &label, None) {
                    warn(format!("{}: {m}", point.id));
                }
            }
            Err((f, _)) => {
                record(f, &mut status, &mut reason);
                setup_ok = false;
                break;
            }
        }
    }

    // Timed iterations.
    if setup_ok {
        let workload = plan.steps(point, Phase::Workload);
        let policy = RepeatPolicy {
            min: point.repeat as usize,
            max: point.repeat_max as usize,
            target_cv_pct: point.target_cv_pct,
            warmup: Warmup::First(point.repeat_warmup as usize),
        };
        let mut samples: Vec<f64> = Vec::new();
        // `counters:`: resolved now that setup has mounted the point's filesystems.
        let point_counters = workload
            .first()
            .and_then(|w| w.counters.as_ref())
            .map(|c| counters::PointCounters::resolve(&c.sources, &devs));
        for n in point_counters.iter().flat_map(|c| &c.notes) {
            warn(format!("{}: {n}", point.id));
        }
        // `counters: { sync: true }`: what an iteration queued is written before its
        // counters are read. A failed flush is said: the deltas then miss that part.
        let counters_sync = workload
            .first()
            .and_then(|w| w.counters.as_ref())
            .is_some_and(|c| c.sync);
        let settle = |when: &str, it: u32| {
            if counters_sync {
                if let Err(e) = devs.sync_own() {
                    warn(format!(
                        "{}: iteration {it}: flushing before the counters were read {when} failed, so they may miss what the iteration queued: {e}",
                        point.id
                    ));
                }
            }
        };
        'iterations: for it in 1..=point.repeat_max {
            for (n, step) in plan.steps(point, Phase::BeforeEach).into_iter().enumerate() {
                let label = format!("{}-it{it:02}", ctx.label(Phase::BeforeEach, n, step));
                if let Err((f, _)) = ctx.step(step, &label, Some(it)) {
                    record(f, &mut status, &mut reason);
                    break 'iterations;
                }
            }
            let Some(step) = workload.first() else { break };
            let label = format!("{}-it{it:02}", ctx.label(Phase::Workload, 0, step));
            let started_at = now();
            settle("before", it);
            let counted_from = point_counters.as_ref().map(|c| c.read());
            let stepped = ctx.step(step, &label, Some(it));
            settle("after", it);
            let counted = point_counters
                .as_ref()
                .zip(counted_from)
                .map(|(c, from)| c.rows(&from, &c.read()));
            let (outcome, failure) = match stepped {
                Ok(o) => (Some(o), None),
                Err((StepFailure::Cancelled, _)) => (None, Some(StepFailure::Cancelled)),
                // A failed or timed-out iteration is still a row, with its status.
                Err((f, o)) => (Some(o), Some(f)),
            };
            if let Some(o) = outcome {
                let row_status = match &failure {
                    None => RunStatus::Ok,
                    Some(StepFailure::TimedOut(_)) => RunStatus::Timeout,
                    Some(_) => RunStatus::Failed,
                };
                writer.append_run(RunRow {
                    experiment: plan.experiment.id().to_string(),
                    point_id: point.id.clone(),
                    point_index: point.index,
                    vars: vars_json(point),
                    iteration: it,
                    replicate,
                    wall_s: o.wall.as_secs_f64(),
                    user_s: o.user.as_secs_f64(),
                    sys_s: o.sys.as_secs_f64(),
                    exit_code: if failure.is_none() {
                        o.code_for_table()
                    } else {
                        o.code_for_table().max(1)
                    },
                    status: row_status,
                    started_at,
                })?;
                if let Some(rows) = counted {
                    let framed = crate::frames::from_records(&rows)
                        .map_err(StepError::from)
                        .and_then(|df| {
                            Ok(with_keys(
                                df,
                                plan.experiment.id(),
                                point,
                                (replicate, Some(it)),
                                &label,
                                "counters",
                            )?)
                        });
                    match framed {
                        Ok(df) => writer.append_table("counters", df)?,
                        Err(e) => warn(format!("{}: counters of iteration {it}: {e}", point.id)),
                    }
                }
                iterations += 1;
                opts.emit(Event::Iteration {
                    index: point.index,
                    iteration: it,
                    repeat: point.repeat,
                    wall_s: o.wall.as_secs_f64(),
                    ok: failure.is_none(),
                });
                if failure.is_none() {
                    if let Err(m) = ctx.parse_capture(writer, step, &label, Some(it)) {
                        warn(format!("{}: {m}", point.id));
                    }
                }
                // A failed iteration counts as run but never as steady state (the
                // warm-up rule of the statistics).
                samples.push(if failure.is_some() {
                    f64::NAN
                } else {
                    match point.repeat_metric.as_str() {
                        "user_s" => o.user.as_secs_f64(),
                        "sys_s" => o.sys.as_secs_f64(),
                        _ => o.wall.as_secs_f64(),
                    }
                });
            }
            if let Some(f) = failure {
                record(f, &mut status, &mut reason);
                break;
            }
            if let Decision::Stop(why) = should_continue(&samples, &policy) {
                repeat_stop = Some(why);
                break;
            }
        }
    }

    // Captures (also after a failed iteration: they often explain it), unless interrupted.
    if setup_ok && status != PointStatus::Interrupted {
        for (n, step) in plan.steps(point, Phase::Capture).into_iter().enumerate() {
            let label = ctx.label(Phase::Capture, n, step);
            match ctx.step(step, &label, None) {
                Ok(_) => {
                    if let Err(m) = ctx.parse_capture(writer, step, &label, None) {
                        warn(format!("{}: {m}", point.id));
                    }
                }
                Err((StepFailure::Cancelled, _)) => {
                    record(StepFailure::Cancelled, &mut status, &mut reason);
                    break;
                }
                Err((StepFailure::Failed(m), _)) | Err((StepFailure::TimedOut(m), _)) => {
                    warn(format!("{}: capture {m}", point.id));
                }
            }
        }
    }

    // Teardown always runs (not after an interrupt: release handles that).
    if status != PointStatus::Interrupted {
        for (n, step) in plan.steps(point, Phase::Teardown).into_iter().enumerate() {
            let label = ctx.label(Phase::Teardown, n, step);
            if let Err((StepFailure::Failed(m), _)) | Err((StepFailure::TimedOut(m), _)) =
                ctx.step(step, &label, None)
            {
                warn(format!("{}: teardown {m}", point.id));
            }
        }
    }
    drop(ctx);
    // The point was measured: its rows stand whatever happens now. A release that
    // fails (a process that would not die, a busy mount) is said, and its record stays
    // for `fslab cleanup`.
    if let Err(e) = devs.release() {
        warn(format!(
            "{}: could not release its devices: {e}; run `fslab cleanup` once what holds them is gone",
            point.id
        ));
    }
    Ok(ReplicateOutcome {
        status,
        reason,
        iterations,
        stop: repeat_stop,
    })
}
