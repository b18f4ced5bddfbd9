//! Finishing an interrupted bundle: the plan it was started with, whether this plan may
//! finish it, and the resumed run.

use super::approve::device_infos;
use super::point::{repeat_stop_text, run_points};
use super::{approve_mappings, order, prepare, RunError, RunOptions, RunOrder};
use crate::plan::Plan;
use crate::spec::Value;
use crate::store::{
    Bundle, BundleStatus, BundleWriter, Manifest, OrderEntry, PointStatus, RunOrderRecord,
};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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
pub(super) fn check_resumable(plan: &Plan, m: &Manifest, dir: &Path) -> Result<(), RunError> {
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

pub(super) fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// Finish a bundle whose run was interrupted (or killed), in its recorded run order:
/// replicates that ended `ok` are kept as they are, points that are settled (ok,
/// skipped, unsupported, other shard) too; every other replicate is run again from its
/// setup, in the order the bundle recorded. A replicate's iterations share one
/// filesystem made by its setup, so a replicate is measured whole or not at all: its
/// partial rows are dropped (its old logs are kept aside in
/// `logs/<point>.interrupted-N/`), and each iteration appears exactly once. A bundle
/// from before the order was recorded ran point by point, and is finished so.
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
    // The rest of a bundle is measured where its start was: on the host, or in a guest
    // of the same kernel.
    let kernels_of = |g: &[crate::store::GuestInfo]| {
        let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
        if names.is_empty() {
            "host".to_string()
        } else {
            names.join(", ")
        }
    };
    let (here, there) = (
        kernels_of(&opts.target.environment(&[]).guests),
        kernels_of(&writer.manifest().environment.guests),
    );
    if here != there {
        return Err(RunError::Resume {
            bundle: bundle_dir.to_path_buf(),
            message: format!(
                "it was measured on kernel `{there}` and this run's is `{here}`; resume on the same kernels (`--kernel NAME`)"
            ),
        });
    }
    reset_unfinished(plan, &mut writer)?;
    let preflight = opts.target.preflight(plan, opts.probe, work.path());
    for p in &mut writer.manifest_mut().points {
        if p.status == PointStatus::Pending {
            if let Some(reason) = preflight.point(p.index).and_then(|c| c.reason()) {
                p.status = PointStatus::Unsupported;
                p.reason = Some(reason);
            }
        }
    }
    let unsupported: Vec<usize> = writer
        .manifest()
        .points
        .iter()
        .filter(|p| p.status == PointStatus::Unsupported)
        .map(|p| p.index)
        .collect();
    for e in writer
        .manifest_mut()
        .run_order
        .iter_mut()
        .flat_map(|o| o.pairs.iter_mut())
        .filter(|e| e.status == PointStatus::Pending && unsupported.contains(&e.point_index))
    {
        e.status = PointStatus::Skipped;
        e.reason = Some("its point is unsupported here".into());
    }
    writer.manifest_mut().status = BundleStatus::Running;
    writer.manifest_mut().finished_at = None;
    if !mapped.is_empty() {
        writer.manifest_mut().environment.devices = device_infos(plan, &mapped, false);
    }
    run_points(plan, opts, &work, &mut writer, &mapped)
}

/// Make what remains of the bundle's run order pending again: the replicates that did
/// not end `ok` of every point that is not settled lose their rows, their logs are set
/// aside, and their entries are reset; their points are pending, with the iterations
/// and stop reasons of the replicates kept.
fn reset_unfinished(plan: &Plan, writer: &mut BundleWriter) -> Result<(), RunError> {
    if writer.manifest().run_order.is_none() {
        let legacy = legacy_order(plan, writer.manifest());
        writer.manifest_mut().run_order = Some(legacy);
    }
    let m = writer.manifest().clone();
    let order = m.run_order.clone().unwrap_or_default();
    let settled = |index: usize| m.points.get(index).is_some_and(|p| p.status.is_settled());
    let mut done: BTreeSet<(usize, u32)> = BTreeSet::new();
    for p in &plan.points {
        if settled(p.index) {
            done.extend((1..=p.replicates.max(1)).map(|r| (p.index, r)));
        }
    }
    done.extend(
        order
            .pairs
            .iter()
            .filter(|e| e.status == PointStatus::Ok)
            .map(|e| (e.point_index, e.replicate)),
    );
    writer.retain_replicates(&done)?;
    // Reset the rest.
    let mut redo: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    if let Some(o) = writer.manifest_mut().run_order.as_mut() {
        for e in &mut o.pairs {
            if settled(e.point_index) || done.contains(&(e.point_index, e.replicate)) {
                continue;
            }
            redo.entry(e.point_index).or_default().push(e.replicate);
            *e = OrderEntry {
                point_index: e.point_index,
                point_id: e.point_id.clone(),
                replicate: e.replicate,
                status: PointStatus::Pending,
                ..OrderEntry::default()
            };
        }
    }
    for point in &plan.points {
        if settled(point.index) {
            continue;
        }
        let kept: Vec<(u32, u32)> = order
            .of_point(point.index)
            .filter(|e| done.contains(&(e.point_index, e.replicate)))
            .map(|e| (e.replicate, e.iterations))
            .collect();
        if let Some(p) = writer.manifest_mut().points.get_mut(point.index) {
            if p.status == PointStatus::OtherShard {
                continue;
            }
            p.status = PointStatus::Pending;
            p.reason = None;
            p.iterations = kept.iter().map(|&(_, n)| n).sum();
            p.repeat_stops
                .retain(|s| kept.iter().any(|&(r, _)| r == s.replicate));
            p.repeat_stop = repeat_stop_text(&p.repeat_stops, point.replicates);
        }
        let Some(reps) = redo.get(&point.index) else {
            // Every replicate ended ok: the point is done (its status was not saved).
            if !kept.is_empty() {
                if let Some(p) = writer.manifest_mut().points.get_mut(point.index) {
                    p.status = PointStatus::Ok;
                }
            }
            continue;
        };
        if point.replicates <= 1 || kept.is_empty() {
            writer.set_aside_logs(point.index, &point.id)?;
        } else {
            // Only the redone replicates' files (their labels start `r02-`), and what a
            // killed command was writing.
            let mut prefixes: Vec<String> = reps.iter().map(|r| format!("r{r:02}-")).collect();
            prefixes.push("running.".into());
            writer.set_aside_replicate_logs(point.index, &point.id, &prefixes)?;
        }
    }
    writer.save_manifest()?;
    Ok(())
}

/// The order of a bundle written before the order was recorded: point by point, as it
/// ran; the pairs of its settled points as their points ended.
fn legacy_order(plan: &Plan, m: &Manifest) -> RunOrderRecord {
    let runs: Vec<(usize, u32)> = plan
        .points
        .iter()
        .filter(|p| {
            m.points.get(p.index).is_some_and(|r| {
                !matches!(r.status, PointStatus::Unsupported | PointStatus::OtherShard)
            })
        })
        .map(|p| (p.index, p.replicates.max(1)))
        .collect();
    RunOrderRecord {
        order: RunOrder::Fixed,
        seed: None,
        pairs: order::pairs(&runs, RunOrder::Fixed, 0)
            .into_iter()
            .map(|(index, replicate)| {
                let status = m.points.get(index).map_or(PointStatus::Pending, |p| {
                    if matches!(p.status, PointStatus::Ok | PointStatus::Skipped) {
                        p.status
                    } else {
                        PointStatus::Pending
                    }
                });
                OrderEntry {
                    point_index: index,
                    point_id: m
                        .points
                        .get(index)
                        .map(|p| p.id.clone())
                        .unwrap_or_default(),
                    replicate,
                    status,
                    ..OrderEntry::default()
                }
            })
            .collect(),
    }
}
