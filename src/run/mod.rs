//! The runner: provisions each point's devices, runs its steps, times the workload,
//! keeps every output, and writes the bundle as it goes.
//!
//! One noun per file: [`RunOptions`] and [`Event`]s (`options`), why a run stops
//! (`error`), `--device` approval (`approve`), finishing an interrupted bundle
//! (`resume`), the step context that renders and runs one step (`context`), the order
//! of the (point, replicate) pairs (`order`), running those pairs (`point`), and one
//! point run as two sides for `fslab calibrate` (`calibrate`), and the looks and added
//! blocks of `fslab run --until-decided` (`until`). This file holds [`run`]
//! and re-exports.

mod approve;
mod blocksize;
pub mod calibrate;
mod context;
mod counters;
pub mod env;
mod error;
pub mod exec;
pub mod executables;
pub mod jupyter;
mod options;
pub mod order;
mod point;
mod resolved;
mod resume;
pub mod spawner;
mod step_error;
pub mod target;
mod trace;
pub mod until;
pub use step_error::StepError;

pub use crate::store::RunOrder;
pub use approve::approve_mappings;
pub use error::RunError;
pub use options::{Event, EventSink, RunHook, RunOptions};
pub use resume::{plan_of_bundle, resume};

use approve::device_infos;
use point::run_points;

use crate::devices;
use crate::plan::{Phase, Plan, Point};
use crate::store::merge::ShardInfo;
use crate::store::{
    Bundle, BundleStatus, BundleWriter, ExperimentInfo, Manifest, OrderEntry, PointRecord,
    PointStatus, RunOrderRecord, ToolRecord,
};
use sha2::{Digest, Sha256};
use std::path::Path;

pub use crate::host::default_work_dir;

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

/// Open the work directory on the run's target (for the local target: check for root,
/// open it and reclaim what killed runs left there).
fn prepare(opts: &RunOptions) -> Result<devices::WorkDir, RunError> {
    opts.target.prepare(opts)
}

/// Run every point of `plan`. Returns the bundle, also when some points failed (their
/// status says so); returns an error only when nothing sensible can continue.
pub fn run(plan: &Plan, opts: &RunOptions) -> Result<Bundle, RunError> {
    let work = prepare(opts)?;
    // After reclaiming: a mapped device that a killed run left mounted is free again.
    let mapped = approve_mappings(plan, opts)?;
    let exp = &plan.experiment;
    let target = &*opts.target;
    let preflight = target.preflight(plan, opts.probe, work.path());
    let mut environment = target.environment(&programs(plan));
    let mut tools = std::collections::BTreeMap::new();
    for (name, t) in &plan.tools {
        let version = target.tool_version(&t.program);
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
    let in_guest =
        !plan.points.is_empty() && plan.points.iter().all(|p| target.guest_of(p).is_some());
    environment.devices = device_infos(plan, &mapped, in_guest);
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
                    notes: check
                        .map(|c| c.notes.clone())
                        .unwrap_or_default()
                        .into_iter()
                        .chain(target.guest_of(p).as_ref().map(guest_note))
                        .collect(),
                }
            })
            .collect(),
        tools,
        shard: None,
        merged: None,
        executables: target.executables(plan),
        run_order: None,
        calibration: None,
        sequential: None,
    };
    let mut manifest = mark_shard(manifest, opts.shard);
    manifest.run_order = Some(draw_order(plan, &manifest, opts.order, opts.seed));
    let mut writer = BundleWriter::create(&opts.results_dir, manifest)?;
    if let Some(h) = &opts.hook {
        h.started(&mut writer)?;
    }
    run_points(plan, opts, &work, &mut writer, &mapped)
}

/// What a point measured in a guest says: which kernel, and what a guest cannot show.
pub fn guest_note(g: &crate::store::GuestInfo) -> String {
    format!(
        "measured in a {} guest (kernel {}, `{}`): {}",
        g.kind,
        g.release,
        g.name,
        g.caveats.join("; ")
    )
}

/// The run order of a new bundle: the pairs of the points it runs (not the other
/// shards' nor those the preflight found unsupported), all pending. A random order
/// without a seed gets a fresh one.
fn draw_order(plan: &Plan, m: &Manifest, how: RunOrder, seed: Option<u64>) -> RunOrderRecord {
    let runs: Vec<(usize, u32)> = plan
        .points
        .iter()
        .filter(|p| {
            m.points
                .get(p.index)
                .is_some_and(|r| r.status == PointStatus::Pending)
        })
        .map(|p| (p.index, p.replicates.max(1)))
        .collect();
    let seed = match how {
        RunOrder::Random => Some(seed.unwrap_or_else(order::fresh_seed)),
        RunOrder::Fixed => None,
    };
    RunOrderRecord {
        order: how,
        seed,
        pairs: order::pairs(&runs, how, seed.unwrap_or(0))
            .into_iter()
            .map(|(index, replicate)| OrderEntry {
                point_index: index,
                point_id: plan
                    .points
                    .get(index)
                    .map(|p| p.id.clone())
                    .unwrap_or_default(),
                replicate,
                status: PointStatus::Pending,
                ..OrderEntry::default()
            })
            .collect(),
    }
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
