//! `--device` approval: mappings of experiment devices to existing block devices,
//! checked against the device policy, and the devices a manifest records.

use super::{RunError, RunOptions};
use crate::devices::policy::{self, MappedDevice, ScratchList};
use crate::devices::{self, DeviceError};
use crate::plan::Plan;
use crate::store::DeviceInfo;

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

/// The plan's devices for the manifest; `in_guest`: they are a guest's ubd disks.
pub(super) fn device_infos(
    plan: &Plan,
    mapped: &[MappedDevice],
    in_guest: bool,
) -> Vec<DeviceInfo> {
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
                backing: if in_guest {
                    format!(
                        "{:?} (a guest's ubd disk on a sparse image file)",
                        d.backing
                    )
                } else {
                    format!("{:?} (loop device on a sparse image file)", d.backing)
                }
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
