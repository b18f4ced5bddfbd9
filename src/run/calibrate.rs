//! `fslab calibrate`: one point of a plan run as two sides, A and B, in pairs, through
//! the ordinary runner, with a known slowdown injected into B when asked.
//!
//! - **The plan.** The point is copied twice, with a `side` axis (`A`, `B`) added to its
//!   matrix and its variables, each copy with `pairs` replicates. The runner's randomised
//!   blocks (`run::order`) then run block r as replicate r of A and of B in a random
//!   order, each on fresh loop devices with its own setup: pairs interleaved, so that the
//!   host's drift falls on both sides alike.
//! - **The injection** is applied to side B's copy only: its workload step is a workload
//!   variant (the experiment's own step with `when: { side: B }` added and the injecting
//!   arguments appended), or its device's `throttle:`. What is injected is recorded in the
//!   manifest (`calibration.design.injection`), in side B's notes, and in every row of the
//!   `calibration` table.
//! - **As it runs.** A [`RunHook`] computes each comparison as soon as its block of
//!   `per_side` pairs has run (`analysis::calibration::compare_block`), appends its row to
//!   the `calibration` table through the run's writer, and updates the manifest's record:
//!   what finished is on disk before the next pair starts.

use super::{run, RunError, RunHook, RunOptions};
use crate::analysis::calibration::{self, CalibrationRow};
use crate::plan::{Plan, Point};
use crate::spec::media::{DiskParams, Medium, Throttle};
use crate::spec::{CommandSpec, DevicePlan, Step, Value};
use crate::store::{runs_frame, Bundle, BundleWriter, CalibrationDesign, Injection, PointStatus};
use std::sync::{Arc, Mutex};

/// The axis and variable that names a point's side.
pub const SIDE_VAR: &str = "side";

/// What to calibrate and how.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// The point's id; None: the plan must have exactly one point.
    pub point: Option<String>,
    /// Pairs: replicates a side.
    pub pairs: u32,
    /// Replicates a side per comparison; None: the point's own `replicates` when it has
    /// at least 3, else 3 (the tier rule's minimum).
    pub per_side: Option<u32>,
    pub injection: Option<Injection>,
    pub metric: String,
    /// Warm-up iterations of each replicate; None: the point's adaptive warm-up when it
    /// has one, else 1 when it repeats, else 0.
    pub warmup: Option<usize>,
    pub alpha: f64,
    pub threshold_pct: f64,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        CalibrateOptions {
            point: None,
            pairs: 200,
            per_side: None,
            injection: None,
            metric: "wall_s".into(),
            warmup: None,
            alpha: 0.05,
            threshold_pct: crate::analysis::DEFAULT_THRESHOLD_PCT,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrateError {
    #[error("--point {given}: the plan has no such point; its points: {known}")]
    NoSuchPoint { given: String, known: String },
    #[error("the plan has {n} points ({known}); name one with --point")]
    WhichPoint { n: usize, known: String },
    #[error("the experiment already has a variable or axis `{SIDE_VAR}`, which calibration uses to name its two sides")]
    SideTaken,
    #[error("{pairs} pairs make no comparison of {per_side} replicates a side: ask for at least {per_side} pairs")]
    TooFewPairs { pairs: u32, per_side: u32 },
    #[error(
        "{what} injection needs a workload run by {needs}; this point's workload runs `{runs}`"
    )]
    WrongWorkload {
        what: &'static str,
        needs: &'static str,
        runs: String,
    },
    #[error("{what} injection: the point has no device `{device}`; its devices: {known}")]
    NoSuchDevice {
        what: &'static str,
        device: String,
        known: String,
    },
    #[error("medium injection on `{device}`: the device has no disk model (`medium:` a named model or parameters, not `none`) at this point, so there is nothing to slow down; give it one in the experiment")]
    NoMedium { device: String },
    #[error("throttle injection on `{device}`: give at least one of read_iops, write_iops, read_bps, write_bps")]
    EmptyThrottle { device: String },
    #[error("a calibration needs at least 2 replicates a side per comparison (got {0})")]
    PerSide(u32),
}

/// The calibration plan of `plan`'s point, and the design the manifest records.
pub fn calibration_plan(
    plan: &Plan,
    o: &CalibrateOptions,
) -> Result<(Plan, CalibrationDesign), CalibrateError> {
    let known = || {
        plan.points
            .iter()
            .map(|p| p.id.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let point =
        match &o.point {
            Some(id) => plan.points.iter().find(|p| &p.id == id).ok_or_else(|| {
                CalibrateError::NoSuchPoint {
                    given: id.clone(),
                    known: known(),
                }
            })?,
            None if plan.points.len() == 1 => &plan.points[0],
            None => {
                return Err(CalibrateError::WhichPoint {
                    n: plan.points.len(),
                    known: known(),
                })
            }
        };
    if point.vars.contains_key(SIDE_VAR) || plan.experiment.def.matrix.contains_key(SIDE_VAR) {
        return Err(CalibrateError::SideTaken);
    }
    let per_side = o.per_side.unwrap_or(if point.replicates >= 3 {
        point.replicates
    } else {
        3
    });
    if per_side < 2 {
        return Err(CalibrateError::PerSide(per_side));
    }
    if o.pairs < per_side {
        return Err(CalibrateError::TooFewPairs {
            pairs: o.pairs,
            per_side,
        });
    }
    let side = |name: &str, index: usize| {
        let mut p = point.clone();
        p.index = index;
        p.replicates = o.pairs;
        p.matrix.insert(SIDE_VAR.into(), Value::Str(name.into()));
        p.vars.insert(SIDE_VAR.into(), Value::Str(name.into()));
        p.id = if point.id.is_empty() {
            format!("{SIDE_VAR}={name}")
        } else {
            format!("{},{SIDE_VAR}={name}", point.id)
        };
        p
    };
    let (a, mut b) = (side("A", 0), side("B", 1));
    let mut out = plan.clone();
    let injection = match &o.injection {
        Some(inj) => Some(inject(&mut out, &mut b, inj)?),
        None => None,
    };
    let warmup = o.warmup.unwrap_or(if point.target_cv_pct.is_some() {
        point.repeat_warmup as usize
    } else if point.repeat > 1 {
        1
    } else {
        0
    });
    let design = CalibrationDesign {
        point: point.id.clone(),
        side_a: a.id.clone(),
        side_b: b.id.clone(),
        pairs: o.pairs,
        per_side,
        metric: o.metric.clone(),
        warmup,
        alpha: o.alpha,
        threshold_pct: o.threshold_pct,
        injection,
    };
    out.points = vec![a, b];
    Ok((out, design))
}

/// The words of a step's command as written (templates unrendered).
fn words(step: &Step) -> Vec<String> {
    match &step.run {
        Some(CommandSpec::Line(l)) => shell_words::split(l).unwrap_or_default(),
        Some(CommandSpec::Argv(v)) => v.clone(),
        None => Vec::new(),
    }
}

/// A step's command with `extra` words after it.
fn with_words(step: &Step, extra: &[String]) -> Option<CommandSpec> {
    match &step.run {
        Some(CommandSpec::Line(l)) => Some(CommandSpec::Line(format!(
            "{l} {}",
            shell_words::join(extra)
        ))),
        Some(CommandSpec::Argv(v)) => {
            Some(CommandSpec::Argv(v.iter().chain(extra).cloned().collect()))
        }
        None => None,
    }
}

/// The program words a step starts with, a `{{tool}}` replaced by the tool's command.
fn program_words(plan: &Plan, step: &Step) -> Vec<String> {
    let w = words(step);
    let tool = w
        .first()
        .and_then(|f| f.strip_prefix("{{"))
        .and_then(|f| f.strip_suffix("}}"))
        .and_then(|name| plan.tools.get(name.trim()));
    match tool {
        Some(t) => t.command.iter().chain(w.iter().skip(1)).cloned().collect(),
        None => w,
    }
}

/// A step's command with `prefix` words before it.
fn with_prefix(step: &Step, prefix: &[String]) -> Option<CommandSpec> {
    match &step.run {
        Some(CommandSpec::Line(l)) => Some(CommandSpec::Line(format!(
            "{} {l}",
            shell_words::join(prefix)
        ))),
        Some(CommandSpec::Argv(v)) => {
            Some(CommandSpec::Argv(prefix.iter().chain(v).cloned().collect()))
        }
        None => None,
    }
}

/// The words that run a command under `fslab delay` (see [`delayed`]), `--cpu` for a
/// wait in CPU time.
fn delay_prefix(pct: f64, cpu: bool) -> Vec<String> {
    let mut w: Vec<String> = vec!["{{fslab}}".into(), "delay".into()];
    if cpu {
        w.push("--cpu".into());
    }
    w.extend(["--pct".into(), pct.to_string(), "--".into()]);
    w
}

/// A disk model that charges every request `s` times as long: seeks × s, the rotation
/// speed and the media rate ÷ s (the settle time, derived from the two seek times, scales
/// with them; the read-ahead buffer's size is bytes and stays).
fn slower(p: DiskParams, s: f64) -> DiskParams {
    DiskParams {
        seek_avg_ms: p.seek_avg_ms * s,
        seek_full_ms: p.seek_full_ms * s,
        rpm: p.rpm / s,
        mb_per_s: p.mb_per_s / s,
        cache_mb: p.cache_mb,
    }
}

/// Side B's device `device`, for the `what` injection; a located error naming the
/// point's devices when it has none of that name.
fn device_of<'a>(
    b: &'a mut Point,
    device: &str,
    what: &'static str,
) -> Result<&'a mut DevicePlan, CalibrateError> {
    let known = b
        .devices
        .iter()
        .map(|d| d.name.clone())
        .collect::<Vec<_>>()
        .join(", ");
    b.devices
        .iter_mut()
        .find(|d| d.name == device)
        .ok_or_else(|| CalibrateError::NoSuchDevice {
            what,
            device: device.to_string(),
            known,
        })
}

/// Put `inj` into side `b` of `plan`; the injection as the manifest records it.
fn inject(plan: &mut Plan, b: &mut Point, inj: &Injection) -> Result<Injection, CalibrateError> {
    if let Injection::Delay { pct } | Injection::CpuDelay { pct } = inj {
        let cpu = matches!(inj, Injection::CpuDelay { .. });
        // Both sides run the wrapper, side A with no delay, so that its start is on
        // both sides alike.
        let step = plan.experiment.def.workload_at(&b.vars).clone();
        if step.run.is_none() {
            return Err(CalibrateError::WrongWorkload {
                what: "delay",
                needs: "a command (`run:`)",
                runs: "nothing".into(),
            });
        }
        for (side, p) in [("A", 0.0), ("B", *pct)] {
            let mut variant = step.clone();
            variant.run = with_prefix(&step, &delay_prefix(p, cpu));
            variant
                .when
                .insert(SIDE_VAR.into(), Value::Str(side.into()));
            plan.experiment.def.workload_variants.insert(0, variant);
        }
        return Ok(inj.clone());
    }
    if let Injection::Medium { device, pct } = inj {
        let d = device_of(b, device, "medium")?;
        let p = d
            .medium
            .and_then(|m| m.params())
            .ok_or_else(|| CalibrateError::NoMedium {
                device: device.clone(),
            })?;
        d.medium = Some(Medium::Explicit(slower(p, 1.0 + pct / 100.0)));
        return Ok(inj.clone());
    }
    let extra: Vec<String> = match inj {
        Injection::Delay { .. } | Injection::CpuDelay { .. } | Injection::Medium { .. } => {
            unreachable!("handled above")
        }
        Injection::Throttle {
            device,
            read_iops,
            write_iops,
            read_bps,
            write_bps,
        } => {
            let t = Throttle {
                read_iops: *read_iops,
                write_iops: *write_iops,
                read_bps: *read_bps,
                write_bps: *write_bps,
            };
            if t.is_empty() {
                return Err(CalibrateError::EmptyThrottle {
                    device: device.clone(),
                });
            }
            let d = device_of(b, device, "throttle")?;
            d.throttle = Some(t);
            return Ok(inj.clone());
        }
        Injection::StressDelay { pct } => vec!["--delay-pct".into(), pct.to_string()],
        Injection::FioSpin { usec, blocks, .. } => vec![
            format!("--thinktime={usec}"),
            format!("--thinktime_spin={usec}"),
            format!("--thinktime_blocks={blocks}"),
        ],
    };
    let step = plan.experiment.def.workload_at(&b.vars).clone();
    let prog = program_words(plan, &step);
    let runs = prog.join(" ");
    let fits = match inj {
        Injection::StressDelay { .. } => {
            prog.first().map(String::as_str) == Some("{{fslab}}")
                && prog.get(1).map(String::as_str) == Some("stress")
        }
        _ => prog
            .first()
            .is_some_and(|p| p == "fio" || p.ends_with("/fio")),
    };
    if !fits {
        let (what, needs) = match inj {
            Injection::StressDelay { .. } => ("stress-delay", "`{{fslab}} stress`"),
            _ => ("fio-spin", "fio"),
        };
        return Err(CalibrateError::WrongWorkload { what, needs, runs });
    }
    let mut variant = step.clone();
    variant.run = with_words(&step, &extra);
    variant.when.insert(SIDE_VAR.into(), Value::Str("B".into()));
    plan.experiment.def.workload_variants.insert(0, variant);
    Ok(inj.clone())
}

/// What [`delayed`] did: the command's exit status, the time it took, the time waited.
#[derive(Debug)]
pub struct Delayed {
    pub status: std::process::ExitStatus,
    pub worked: std::time::Duration,
    pub waited: std::time::Duration,
}

/// Run `argv` (stdio inherited) and, when it has exited, wait `pct` % of the time it
/// took before returning: a sleep to 200 µs before the deadline, then a busy-wait to
/// it, so the wait is `pct` % of the command's time to within the clock's resolution
/// (the busy-wait's last check; a preempted busy-wait still ends at the deadline, or
/// later only by the time until the next run of this process). `fslab delay`.
pub fn delayed(argv: &[String], pct: f64) -> std::io::Result<Delayed> {
    delayed_in(argv, pct, false)
}

/// The CPU time of this process (`cpu: false`) or of its waited-for children.
fn cpu_time(children: bool) -> std::time::Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    let who = if children {
        UsageWho::RUSAGE_CHILDREN
    } else {
        UsageWho::RUSAGE_SELF
    };
    getrusage(who).map_or(std::time::Duration::ZERO, |u| {
        let t = |v: nix::sys::time::TimeVal| {
            std::time::Duration::new(v.tv_sec().max(0) as u64, (v.tv_usec().max(0) as u32) * 1000)
        };
        t(u.user_time()) + t(u.system_time())
    })
}

/// [`delayed`], or with `cpu` a busy-wait until this process's own CPU time has grown by
/// `pct` % of the command's CPU time (user + system of its whole process tree, from
/// `getrusage(RUSAGE_CHILDREN)`; the clock is read through `getrusage(RUSAGE_SELF)`,
/// whose resolution is the kernel's accounting, microseconds here). `worked` and
/// `waited` are then CPU times.
pub fn delayed_in(argv: &[String], pct: f64, cpu: bool) -> std::io::Result<Delayed> {
    use std::time::{Duration, Instant};
    if cpu {
        let (program, args) = argv.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "no command to run")
        })?;
        let before = cpu_time(true);
        let status = std::process::Command::new(program).args(args).status()?;
        let worked = cpu_time(true).saturating_sub(before);
        let wait = worked.mul_f64(pct.max(0.0) / 100.0);
        let start = cpu_time(false);
        while cpu_time(false).saturating_sub(start) < wait {
            std::hint::spin_loop();
        }
        return Ok(Delayed {
            status,
            worked,
            waited: cpu_time(false).saturating_sub(start),
        });
    }
    let (program, args) = argv.split_first().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "no command to run")
    })?;
    let start = Instant::now();
    let status = std::process::Command::new(program).args(args).status()?;
    let worked = start.elapsed();
    let wait = worked.mul_f64(pct.max(0.0) / 100.0);
    let deadline = Instant::now() + wait;
    let slack = Duration::from_micros(200);
    if wait > slack {
        std::thread::sleep(wait - slack);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
    Ok(Delayed {
        status,
        worked,
        waited: Instant::now().duration_since(deadline - wait),
    })
}

/// Computes each comparison when its pairs have run, and keeps the record current.
struct Hook {
    design: CalibrationDesign,
    rows: Mutex<Vec<CalibrationRow>>,
}

impl Hook {
    /// Comparisons whose pairs have all run `ok`, counted from the first.
    fn complete(&self, writer: &BundleWriter) -> u32 {
        let Some(order) = &writer.manifest().run_order else {
            return 0;
        };
        let ok = |point: usize, r: u32| {
            order
                .pairs
                .iter()
                .any(|e| e.point_index == point && e.replicate == r && e.status == PointStatus::Ok)
        };
        let k = self.design.per_side;
        let mut c = 0;
        while (c + 1) * k <= self.design.pairs
            && (c * k + 1..=(c + 1) * k).all(|r| ok(0, r) && ok(1, r))
        {
            c += 1;
        }
        c
    }

    fn update(&self, writer: &mut BundleWriter) -> Result<(), RunError> {
        let hook = |source: Box<dyn std::error::Error + Send + Sync>| RunError::Hook {
            what: "calibration",
            source,
        };
        let complete = self.complete(writer);
        let mut rows = self
            .rows
            .lock()
            .map_err(|_| hook("the calibration's rows were poisoned by a panic".into()))?;
        if complete as usize <= rows.len() {
            return Ok(());
        }
        let mut runs = runs_frame(writer.runs())?;
        if let Some((table, _)) = calibration::table_metric(&self.design.metric) {
            writer.write_pending()?;
            let t = Bundle::open(writer.dir())?.table(table)?;
            runs = calibration::with_table_metric(&runs, &self.design.metric, &t)
                .map_err(|e| hook(e.into()))?;
        }
        let truth = calibration::truth(&runs, &self.design).map_err(|e| hook(e.into()))?;
        let mut new = Vec::new();
        for c in rows.len() as u32 + 1..=complete {
            new.push(
                calibration::compare_block(&runs, &self.design, c, truth.0)
                    .map_err(|e| hook(e.into()))?,
            );
        }
        let df = calibration::rows_frame(&new).map_err(|e| hook(e.into()))?;
        writer.append_table("calibration", df)?;
        rows.extend(new);
        // Coverage is counted against the latest truth (for an added number of seconds
        // it is estimated from side A, and gets better as side A grows).
        let recounted: Vec<CalibrationRow> = rows
            .iter()
            .cloned()
            .map(|mut r| {
                r.covers = truth
                    .0
                    .zip(r.ratio_lo.zip(r.ratio_hi))
                    .map(|(t, (lo, hi))| lo <= t && t <= hi);
                r
            })
            .collect();
        writer.manifest_mut().calibration =
            Some(calibration::record(&self.design, &recounted, truth));
        writer.save_manifest()?;
        Ok(())
    }
}

impl RunHook for Hook {
    fn started(&self, writer: &mut BundleWriter) -> Result<(), RunError> {
        let m = writer.manifest_mut();
        m.calibration = Some(calibration::record(&self.design, &[], (None, None)));
        if let Some(inj) = &self.design.injection {
            if let Some(p) = m.points.iter_mut().find(|p| p.id == self.design.side_b) {
                p.notes.push(format!("calibration: {inj}"));
            }
        }
        writer.save_manifest()?;
        Ok(())
    }

    fn replicate_done(&self, writer: &mut BundleWriter) -> Result<(), RunError> {
        self.update(writer)
    }
}

/// Run the calibration of `plan`'s point: the two-sided plan through [`run`], with the
/// hook that writes the comparisons as they complete.
pub fn calibrate(
    plan: &Plan,
    o: &CalibrateOptions,
    mut opts: RunOptions,
) -> Result<Bundle, RunError> {
    let (cal, design) = calibration_plan(plan, o)?;
    opts.hook = Some(Arc::new(Hook {
        design,
        rows: Mutex::new(Vec::new()),
    }));
    run(&cal, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Experiment;

    const EXP: &str = r#"
id: cal
title: t
devices:
  data: { size: 64MiB }
vars:
  n: 100
matrix:
  fs: [ext4, xfs]
setup:
  - mount: data
workload:
  run: "{{fslab}} stress -n {{n}} -p 1 -z -f creat=1 -d {{mnt}}/s -s 1 --threads"
  repeat: 3
  replicates: 4
teardown:
  - umount: "{{mnt}}"
"#;

    fn plan() -> Plan {
        let exp = Experiment::from_str_named(EXP, "cal.yaml").unwrap();
        Plan::new(&exp, None, &[]).unwrap()
    }

    fn opts(point: &str) -> CalibrateOptions {
        CalibrateOptions {
            point: Some(point.into()),
            pairs: 8,
            ..Default::default()
        }
    }

    #[test]
    fn two_sides_of_one_point_with_a_side_axis() {
        let (cal, d) = calibration_plan(&plan(), &opts("fs=xfs")).unwrap();
        let ids: Vec<&str> = cal.points.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["fs=xfs,side=A", "fs=xfs,side=B"]);
        assert!(cal.points.iter().all(|p| p.replicates == 8));
        assert_eq!(cal.points[1].index, 1);
        assert_eq!(cal.points[0].vars["fs"], Value::Str("xfs".into()));
        // The point's own 4 replicates become the comparison's size; 3 iterations, so
        // one warm-up.
        assert_eq!((d.per_side, d.warmup, d.pairs), (4, 1, 8));
        assert_eq!(d.injection, None);
        // Both sides run the same workload.
        let w = |p: &Point| cal.experiment.def.workload_at(&p.vars).run.clone();
        assert_eq!(
            format!("{:?}", w(&cal.points[0])),
            format!("{:?}", w(&cal.points[1]))
        );
    }

    #[test]
    fn the_injection_goes_into_side_b_only() {
        let mut o = opts("fs=ext4");
        o.injection = Some(Injection::StressDelay { pct: 2.0 });
        let (cal, d) = calibration_plan(&plan(), &o).unwrap();
        let w = |p: &Point| match &cal.experiment.def.workload_at(&p.vars).run {
            Some(CommandSpec::Line(l)) => l.clone(),
            other => panic!("{other:?}"),
        };
        assert!(!w(&cal.points[0]).contains("--delay-pct"));
        assert!(
            w(&cal.points[1]).ends_with("--threads --delay-pct 2"),
            "{}",
            w(&cal.points[1])
        );
        assert_eq!(d.injection, o.injection);
        // A throttle on a device of side B.
        o.injection = Some(Injection::Throttle {
            device: "data".into(),
            read_iops: Some(100),
            write_iops: None,
            read_bps: None,
            write_bps: None,
        });
        let (cal, _) = calibration_plan(&plan(), &o).unwrap();
        assert_eq!(cal.points[0].devices[0].throttle, None);
        assert_eq!(
            cal.points[1].devices[0].throttle.unwrap().read_iops,
            Some(100)
        );
    }

    #[test]
    fn a_delay_wraps_both_sides_and_delays_side_b_only() {
        let mut o = opts("fs=xfs");
        o.injection = Some(Injection::Delay { pct: 2.0 });
        let (cal, d) = calibration_plan(&plan(), &o).unwrap();
        let w = |p: &Point| match &cal.experiment.def.workload_at(&p.vars).run {
            Some(CommandSpec::Line(l)) => l.clone(),
            other => panic!("{other:?}"),
        };
        assert!(
            w(&cal.points[0]).starts_with("{{fslab}} delay --pct 0 -- {{fslab}} stress -n"),
            "{}",
            w(&cal.points[0])
        );
        assert!(
            w(&cal.points[1]).starts_with("{{fslab}} delay --pct 2 -- {{fslab}} stress -n"),
            "{}",
            w(&cal.points[1])
        );
        assert_eq!(
            d.injection.unwrap().expected(),
            crate::store::Expected::Ratio(1.02)
        );
    }

    #[test]
    fn delayed_waits_at_least_its_share_and_keeps_the_status() {
        let argv: Vec<String> = ["sh", "-c", "exit 3"].map(String::from).to_vec();
        let d = delayed(&argv, 100.0).unwrap();
        assert_eq!(d.status.code(), Some(3));
        // The busy-wait ends at the deadline or after it, never before.
        assert!(d.waited >= d.worked, "{d:?}");
        assert!(delayed(&[], 1.0).is_err());
    }

    #[test]
    fn a_slower_disk_model_charges_every_stream_exactly_pct_more() {
        use crate::devices::medium::{Access, DiskModel, NamedMedium};
        let p = NamedMedium::Hdd2008.params().unwrap();
        let cap = 8_000_000_000u64;
        // Sequential reads (read-ahead), short forward skips, random reads and writes.
        let mut trace = Vec::new();
        let mut x: u64 = 12345;
        for i in 0..600u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (a, off, len) = match i % 4 {
                0 => (Access::Read, i * 131_072, 131_072),
                1 => (Access::Read, i * 131_072 + 65_536, 4096),
                2 => (Access::Read, (x >> 11) % (cap - 4096), 4096),
                _ => (Access::Write, (x >> 7) % (cap - 65_536), 65_536),
            };
            trace.push((a, off, len));
        }
        let base = DiskModel::replay(p, cap, trace.clone()).unwrap();
        let slow = DiskModel::replay(slower(p, 1.02), cap, trace).unwrap();
        assert!(base > 1.0, "{base}");
        assert!((slow / base - 1.02).abs() < 1e-9, "{slow} / {base}");
    }

    #[test]
    fn a_medium_injection_slows_side_b_model_only_and_needs_a_model() {
        let exp = EXP.replace(
            "data: { size: 64MiB }",
            "data: { size: 64MiB, medium: hdd-2008 }",
        );
        let e = Experiment::from_str_named(&exp, "cal.yaml").unwrap();
        let p = Plan::new(&e, None, &[]).unwrap();
        let mut o = opts("fs=ext4");
        o.injection = Some("medium:device=data,pct=2".parse().unwrap());
        let (cal, d) = calibration_plan(&p, &o).unwrap();
        let hdd = crate::spec::media::NamedMedium::Hdd2008.params().unwrap();
        assert_eq!(cal.points[0].devices[0].medium.unwrap().params(), Some(hdd));
        let b = cal.points[1].devices[0].medium.unwrap().params().unwrap();
        assert!((b.seek_avg_ms - 8.5 * 1.02).abs() < 1e-12 && (b.rpm - 7200.0 / 1.02).abs() < 1e-9);
        assert_eq!(
            d.injection.unwrap().expected(),
            crate::store::Expected::Ratio(1.02)
        );
        // Without a model there is nothing to slow down: said, not ignored.
        let e = calibration_plan(&plan(), &o).unwrap_err();
        assert!(e.to_string().contains("has no disk model"), "{e}");
    }

    #[test]
    fn what_cannot_be_calibrated_is_said() {
        let p = plan();
        let none = CalibrateOptions {
            pairs: 8,
            ..Default::default()
        };
        assert!(matches!(
            calibration_plan(&p, &none),
            Err(CalibrateError::WhichPoint { n: 2, .. })
        ));
        assert!(matches!(
            calibration_plan(&p, &opts("fs=btrfs")),
            Err(CalibrateError::NoSuchPoint { .. })
        ));
        let mut few = opts("fs=xfs");
        few.pairs = 3;
        assert_eq!(
            calibration_plan(&p, &few).err(),
            Some(CalibrateError::TooFewPairs {
                pairs: 3,
                per_side: 4
            })
        );
        let mut fio = opts("fs=xfs");
        fio.injection = Some(Injection::FioSpin {
            usec: 10,
            blocks: 8,
            ios: 100,
        });
        let e = calibration_plan(&p, &fio).unwrap_err();
        assert!(e.to_string().contains("runs `{{fslab}} stress -n"), "{e}");
        let mut dev = opts("fs=xfs");
        dev.injection = Some(Injection::Throttle {
            device: "log".into(),
            read_iops: Some(1),
            write_iops: None,
            read_bps: None,
            write_bps: None,
        });
        assert!(matches!(
            calibration_plan(&p, &dev),
            Err(CalibrateError::NoSuchDevice { .. })
        ));
    }
}
