//! Running the points: their (point, replicate) pairs in the run order, each
//! replicate's setup, iterations, captures and teardown.

use super::context::{with_keys, Ctx, StepFailure};
use super::resolved::PointSteps;
use super::target::Replicate;
use super::{now, vars_json, Event, RunError, RunOptions, StepError};
use crate::analysis::{should_continue, Decision, RepeatPolicy, StopReason, Warmup};
use crate::devices::{self, policy::MappedDevice};
use crate::plan::{Phase, Plan, Point};
use crate::spec::Step;
use crate::store::{
    short_id, Bundle, BundleStatus, BundleWriter, Manifest, OrderEntry, PointStatus, RepeatStop,
    RunRow, RunStatus,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Run the pending (point, replicate) pairs of the bundle's run order, one after the
/// other. A point is running from its first replicate to its last; after a replicate
/// that does not succeed, the point's later replicates are skipped and say so. Each
/// replicate's rows and tables are on disk, and its entry in the order says how it
/// ended, before the next one starts.
pub(super) fn run_points(
    plan: &Plan,
    opts: &RunOptions,
    work: &devices::WorkDir,
    writer: &mut BundleWriter,
    mapped: &[MappedDevice],
) -> Result<Bundle, RunError> {
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
    let order = writer.manifest().run_order.clone().unwrap_or_default();
    let todo: Vec<usize> = order
        .pairs
        .iter()
        .enumerate()
        .filter(|(_, e)| e.status == PointStatus::Pending)
        .filter(|(_, e)| plan.points.get(e.point_index).is_some())
        .map(|(n, _)| n)
        .collect();
    // Pairs left to run, per point: the point is finished when they are.
    let mut remaining: BTreeMap<usize, usize> = BTreeMap::new();
    for &n in &todo {
        *remaining.entry(order.pairs[n].point_index).or_default() += 1;
    }
    opts.emit(Event::Started {
        bundle: writer.dir().to_path_buf(),
        points: remaining.len(),
        replicates: todo.len(),
        iterations: todo
            .iter()
            .filter_map(|&n| plan.points.get(order.pairs[n].point_index))
            .map(|p| u64::from(p.repeat))
            .sum(),
        order: order.order,
        seed: order.seed,
    });
    let mut started: BTreeSet<usize> = BTreeSet::new();
    let mut interrupted = false;
    let mut stopped = false;
    for (position, &n) in todo.iter().enumerate() {
        if opts.cancelled() {
            interrupted = true;
            break;
        }
        let (index, replicate) = (order.pairs[n].point_index, order.pairs[n].replicate);
        let Some(point) = plan.points.get(index) else {
            continue;
        };
        // Skipped meanwhile: an earlier replicate of its point failed.
        if entry(writer, n).is_none_or(|e| e.status != PointStatus::Pending) {
            continue;
        }
        if started.insert(index) {
            opts.emit(Event::PointStarted {
                index,
                id: point.id.clone(),
            });
            if let Some(p) = writer.manifest_mut().points.get_mut(index) {
                p.status = PointStatus::Running;
                p.reason = None;
            }
        }
        opts.emit(Event::ReplicateStarted {
            index,
            id: point.id.clone(),
            replicate,
            replicates: point.replicates.max(1),
            position: position + 1,
            of: todo.len(),
        });
        if let Some(e) = entry(writer, n) {
            e.status = PointStatus::Running;
            e.started_at = Some(now());
        }
        writer.save_manifest()?;
        // Short paths: some tools limit them (fs_mark: directory names under 40 bytes).
        // The ownership record and the logs say which run and point a directory was.
        let mut short = short_id();
        if point.replicates > 1 {
            short.push_str(&format!("r{replicate}"));
        }
        let dir = work.points().join(short);
        let outcome = run_replicate(plan, point, opts, work, writer, dir, mapped, replicate);
        // The replicate's rows and tables as parquet, before its status says it is done.
        writer.flush()?;
        let (status, reason, iterations, stop) = match outcome {
            Ok(o) => (o.status, o.reason, o.iterations, o.stop),
            Err(e) => (PointStatus::Failed, Some(e.to_string()), 0, None),
        };
        finish_replicate(
            writer,
            n,
            point,
            ReplicateOutcome {
                status,
                reason: reason.clone(),
                iterations,
                stop,
            },
        );
        let left = remaining.entry(index).or_default();
        *left = left.saturating_sub(1);
        if status != PointStatus::Ok && status != PointStatus::Interrupted {
            // The point's later replicates are not run: it failed.
            let why = format!("replicate {replicate} of the point ended {status}");
            for e in writer
                .manifest_mut()
                .run_order
                .iter_mut()
                .flat_map(|o| o.pairs.iter_mut())
                .filter(|e| e.point_index == index && e.status == PointStatus::Pending)
            {
                e.status = PointStatus::Skipped;
                e.reason = Some(why.clone());
            }
            *left = 0;
        }
        if *left == 0 || status == PointStatus::Interrupted {
            let reason = reason.map(|m| {
                if point.replicates > 1 {
                    format!("replicate {replicate}: {m}")
                } else {
                    m
                }
            });
            let status = if status == PointStatus::Ok {
                point_status(writer.manifest(), index)
            } else {
                status
            };
            if let Some(p) = writer.manifest_mut().points.get_mut(index) {
                p.status = status;
                p.reason = reason.clone();
            }
            opts.emit(Event::PointFinished {
                index,
                id: point.id.clone(),
                status,
                reason,
            });
        }
        writer.save_manifest()?;
        if let Some(h) = &opts.hook {
            h.replicate_done(writer)?;
        }
        if status == PointStatus::Interrupted || opts.cancelled() {
            interrupted = true;
            break;
        }
        if opts.fail_fast && status != PointStatus::Ok {
            stopped = true;
            break;
        }
    }
    // Points with replicates still to run: said, and left for a resume.
    for (&index, &left) in &remaining {
        if left == 0 || !started.contains(&index) {
            continue;
        }
        let Some(p) = writer.manifest_mut().points.get_mut(index) else {
            continue;
        };
        if p.status != PointStatus::Running {
            continue;
        }
        let why = if interrupted {
            "interrupted"
        } else if stopped {
            "--fail-fast stopped the run"
        } else {
            "the run stopped"
        };
        p.status = if interrupted {
            PointStatus::Interrupted
        } else {
            PointStatus::Pending
        };
        p.reason = Some(format!(
            "{why} with {left} of its replicates still to run (`fslab run --resume` runs them)"
        ));
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

/// Entry `n` of the bundle's run order.
fn entry(writer: &mut BundleWriter, n: usize) -> Option<&mut OrderEntry> {
    writer
        .manifest_mut()
        .run_order
        .as_mut()
        .and_then(|o| o.pairs.get_mut(n))
}

/// Record how replicate entry `n` ended: in its entry, and in its point's iterations
/// and stop reasons (one per replicate, in replicate order).
fn finish_replicate(writer: &mut BundleWriter, n: usize, point: &Point, o: ReplicateOutcome) {
    let replicate = entry(writer, n).map_or(1, |e| {
        e.status = o.status;
        e.reason = o.reason.clone();
        e.iterations = o.iterations;
        e.finished_at = Some(now());
        e.replicate
    });
    let Some(p) = writer.manifest_mut().points.get_mut(point.index) else {
        return;
    };
    p.iterations += o.iterations;
    if let Some(why) = o.stop {
        p.repeat_stops.retain(|s| s.replicate != replicate);
        p.repeat_stops.push(RepeatStop {
            replicate,
            warmup: point.repeat_warmup as usize,
            reason: why,
        });
        p.repeat_stops.sort_by_key(|s| s.replicate);
    }
    p.repeat_stop = repeat_stop_text(&p.repeat_stops, point.replicates);
}

/// The stop reasons as text: one clause per replicate when there are several.
pub(super) fn repeat_stop_text(stops: &[RepeatStop], replicates: u32) -> Option<String> {
    let text: Vec<String> = stops
        .iter()
        .map(|s| {
            if replicates > 1 {
                format!("replicate {}: {}", s.replicate, s.reason)
            } else {
                s.reason.to_string()
            }
        })
        .collect();
    (!text.is_empty()).then(|| text.join("; "))
}

/// The status of a point all of whose pairs have run: `ok` when every replicate was,
/// else the first that was not.
fn point_status(m: &Manifest, index: usize) -> PointStatus {
    m.run_order
        .iter()
        .flat_map(|o| o.of_point(index))
        .map(|e| e.status)
        .find(|s| *s != PointStatus::Ok)
        .unwrap_or(PointStatus::Ok)
}

/// What one replicate of a point gave.
pub(super) struct ReplicateOutcome {
    pub(super) status: PointStatus,
    pub(super) reason: Option<String>,
    pub(super) iterations: u32,
    pub(super) stop: Option<StopReason>,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_replicate(
    plan: &Plan,
    point: &Point,
    opts: &RunOptions,
    work: &devices::WorkDir,
    writer: &mut BundleWriter,
    dir: PathBuf,
    mapped: &[MappedDevice],
    replicate: u32,
) -> Result<ReplicateOutcome, RunError> {
    let steps = PointSteps::new(plan, point);
    let log_dir = writer.log_dir(point.index, &point.id)?;
    let mut session = opts.target.open(Replicate {
        point,
        opts,
        work,
        dir,
        mapped,
        log_dir: log_dir.clone(),
        replicate,
    })?;
    let ctx = Ctx {
        plan,
        point,
        opts,
        session: &*session,
        log_dir,
        replicate,
        io: Default::default(),
        block_sizes: Default::default(),
    };
    let mut ending = Ending::default();
    let mut iterations = 0u32;
    let mut repeat_stop: Option<StopReason> = None;
    let warn = |m: String| opts.emit(Event::Warning(m));

    let setup_ok = run_phase(&ctx, writer, &SETUP, &steps.setup, None, &mut ending);

    // Timed iterations.
    if setup_ok {
        let policy = RepeatPolicy {
            min: point.repeat as usize,
            max: point.repeat_max as usize,
            target_cv_pct: point.target_cv_pct,
            warmup: Warmup::First(point.repeat_warmup as usize),
        };
        let mut samples: Vec<f64> = Vec::new();
        // `counters:`: resolved now that setup has mounted the point's filesystems.
        let point_counters = steps.counters().map(|c| session.counters(&c.sources));
        // What could not be counted as asked is said, and kept with the point (once,
        // whatever the number of replicates): a missing source has no rows, never zeros.
        for n in point_counters.iter().flat_map(|c| &c.notes) {
            warn(format!("{}: {n}", point.id));
            if let Some(p) = writer.manifest_mut().points.get_mut(point.index) {
                if !p.notes.contains(n) {
                    p.notes.push(n.clone());
                }
            }
        }
        // `counters: { sync: true }`: what an iteration queued is written before its
        // counters are read. A failed flush is said: the deltas then miss that part.
        let counters_sync = steps.counters().is_some_and(|c| c.sync);
        let settle = |when: &str, it: u32| {
            if counters_sync {
                if let Err(e) = session.sync_own() {
                    warn(format!(
                        "{}: iteration {it}: flushing before the counters were read {when} failed, so they may miss what the iteration queued: {e}",
                        point.id
                    ));
                }
            }
        };
        for it in 1..=point.repeat_max {
            let before = &steps.before_each;
            if !run_phase(&ctx, writer, &BEFORE_EACH, before, Some(it), &mut ending) {
                break;
            }
            let Some(step) = steps.workload else { break };
            let label = format!("{}-it{it:02}", ctx.label(Phase::Workload, 0, step));
            let started_at = now();
            settle("before", it);
            let counted_from = point_counters.as_ref().map(|c| session.read_counters(c));
            let stepped = ctx.step(step, &label, Some(it));
            settle("after", it);
            let counted = point_counters
                .as_ref()
                .zip(counted_from)
                .map(|(c, from)| c.rows(&from, &session.read_counters(c)));
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
                ending.record(f);
                break;
            }
            if let Decision::Stop(why) = should_continue(&samples, &policy) {
                repeat_stop = Some(why);
                break;
            }
        }
    }

    // Captures (also after a failed iteration: they often explain it), unless interrupted.
    if setup_ok && ending.status != PointStatus::Interrupted {
        run_phase(&ctx, writer, &CAPTURE, &steps.capture, None, &mut ending);
    }
    // Teardown always runs (not after an interrupt: release handles that).
    if ending.status != PointStatus::Interrupted {
        run_phase(&ctx, writer, &TEARDOWN, &steps.teardown, None, &mut ending);
    }
    drop(ctx);
    // The point was measured: its rows stand whatever happens now. A release that
    // fails (a process that would not die, a busy mount) is said, and its record stays
    // for `fslab cleanup`.
    if let Err(e) = session.release() {
        warn(format!(
            "{}: could not release its devices: {e}; run `fslab cleanup` once what holds them is gone",
            point.id
        ));
    }
    Ok(ReplicateOutcome {
        status: ending.status,
        reason: ending.reason,
        iterations,
        stop: repeat_stop,
    })
}

/// How the replicate treats the steps of a phase other than the timed workload. What
/// differs between the phases is said here once; `run_phase` is their one loop.
struct PhaseRule {
    phase: Phase,
    /// A step that succeeded has its output parsed into its table (`parse:`).
    parses: bool,
    /// A step that failed or timed out ends the replicate with that status, or, with
    /// `Some(word)`, is a warning (`<point>: <word> <message>`) and the phase goes on.
    tolerates: Option<&'static str>,
    /// A cancelled step ends the replicate as interrupted; in teardown it does not
    /// (the release handles what an interrupt leaves).
    cancel_ends: bool,
}

/// Setup: the first failure ends the replicate before any iteration.
const SETUP: PhaseRule = PhaseRule {
    phase: Phase::Setup,
    parses: true,
    tolerates: None,
    cancel_ends: true,
};

/// Before each iteration (labels `…-itNN`): a failure ends the iterations.
const BEFORE_EACH: PhaseRule = PhaseRule {
    phase: Phase::BeforeEach,
    parses: false,
    tolerates: None,
    cancel_ends: true,
};

/// Captures: a failed capture is said and the others still run.
const CAPTURE: PhaseRule = PhaseRule {
    phase: Phase::Capture,
    parses: true,
    tolerates: Some("capture"),
    cancel_ends: true,
};

/// Teardown: every step runs, whatever the others did.
const TEARDOWN: PhaseRule = PhaseRule {
    phase: Phase::Teardown,
    parses: false,
    tolerates: Some("teardown"),
    cancel_ends: false,
};

/// How a replicate is ending: `ok` until its first failure, which it keeps.
struct Ending {
    status: PointStatus,
    reason: Option<String>,
}

impl Default for Ending {
    fn default() -> Ending {
        Ending {
            status: PointStatus::Ok,
            reason: None,
        }
    }
}

impl Ending {
    /// A step's failure; only the first one counts.
    fn record(&mut self, f: StepFailure) {
        let (status, reason) = match f {
            StepFailure::Failed(m) => (PointStatus::Failed, m),
            StepFailure::TimedOut(m) => (PointStatus::Timeout, m),
            StepFailure::Cancelled => (PointStatus::Interrupted, "interrupted by signal".into()),
        };
        if self.status == PointStatus::Ok {
            self.status = status;
            self.reason = Some(reason);
        }
    }
}

/// Run one phase's steps in order, as its rule says (`it`: the iteration a
/// `before_each` step belongs to). False when a step ended the replicate (its failure is
/// in `ending`); the phase's later steps then do not run.
fn run_phase(
    ctx: &Ctx,
    writer: &mut BundleWriter,
    rule: &PhaseRule,
    steps: &[&Step],
    it: Option<u32>,
    ending: &mut Ending,
) -> bool {
    let warn = |m: String| {
        ctx.opts
            .emit(Event::Warning(format!("{}: {m}", ctx.point.id)))
    };
    for (n, step) in steps.iter().copied().enumerate() {
        let mut label = ctx.label(rule.phase, n, step);
        if let Some(it) = it {
            label.push_str(&format!("-it{it:02}"));
        }
        let failure = match ctx.step(step, &label, it) {
            Ok(_) => {
                if rule.parses {
                    if let Err(m) = ctx.parse_capture(writer, step, &label, it) {
                        warn(m.to_string());
                    }
                }
                continue;
            }
            Err((f, _)) => f,
        };
        match (&failure, rule.tolerates) {
            (StepFailure::Cancelled, _) if !rule.cancel_ends => {}
            (StepFailure::Failed(m) | StepFailure::TimedOut(m), Some(word)) => {
                warn(format!("{word} {m}"))
            }
            _ => {
                ending.record(failure);
                return false;
            }
        }
    }
    true
}
