//! Finishing an interrupted bundle: the plan it was started with, whether this plan may
//! finish it, and the resumed run.

use super::*;

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
    let preflight = crate::doctor::check(plan, &*opts.target.host(opts.probe, work.path()));
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
