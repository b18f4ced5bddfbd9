//! Running the points: each point's replicates, each replicate's setup, iterations,
//! captures and teardown.

use super::*;

pub(super) fn run_points(
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
        if let Some(p) = writer.manifest_mut().points.get_mut(point.index) {
            p.repeat_stop = repeat_stop;
            p.repeat_stops = repeat_stops;
        }
        set_point(writer, point.index, status, reason.clone(), iterations)?;
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

pub(super) fn set_point(
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

pub(super) struct PointOutcome {
    pub(super) status: PointStatus,
    pub(super) reason: Option<String>,
    pub(super) iterations: u32,
    pub(super) repeat_stop: Option<String>,
    pub(super) repeat_stops: Vec<RepeatStop>,
}

/// Run a point: each of its replicates afresh (new devices, setup, iterations,
/// captures, teardown), stopping at the first replicate that does not succeed.
pub(super) fn run_point(
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
    let mut session = opts.target.open(Replicate {
        point,
        opts,
        work,
        dir,
        mapped,
    })?;
    let log_dir = writer.log_dir(point.index, &point.id)?;
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
    for (n, step) in steps.setup.iter().copied().enumerate() {
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
        let policy = RepeatPolicy {
            min: point.repeat as usize,
            max: point.repeat_max as usize,
            target_cv_pct: point.target_cv_pct,
            warmup: Warmup::First(point.repeat_warmup as usize),
        };
        let mut samples: Vec<f64> = Vec::new();
        // `counters:`: resolved now that setup has mounted the point's filesystems.
        let point_counters = steps.counters().map(|c| session.counters(&c.sources));
        for n in point_counters.iter().flat_map(|c| &c.notes) {
            warn(format!("{}: {n}", point.id));
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
        'iterations: for it in 1..=point.repeat_max {
            for (n, step) in steps.before_each.iter().copied().enumerate() {
                let label = format!("{}-it{it:02}", ctx.label(Phase::BeforeEach, n, step));
                if let Err((f, _)) = ctx.step(step, &label, Some(it)) {
                    record(f, &mut status, &mut reason);
                    break 'iterations;
                }
            }
            let Some(step) = steps.workload else { break };
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
        for (n, step) in steps.capture.iter().copied().enumerate() {
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
        for (n, step) in steps.teardown.iter().copied().enumerate() {
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
    if let Err(e) = session.release() {
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
