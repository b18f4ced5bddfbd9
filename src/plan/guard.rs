//! The plan's device guard: every word every step of every point will run, once vars,
//! matrix values, profiles, `--set` and `when:` are resolved, is read for devices and
//! host paths. A device under `/dev/` or a path that is a block device on this host is
//! refused, naming where its value came from; a host data directory (`/mnt/…`,
//! `/opt/…`) outside the point's `{{mnt}}` and `{{work}}` is a warning. The loader
//! refuses what the file itself says; this catches `--set`, and values that only make a
//! device together. The runner checks the words again as it runs them.

use super::{Phase, Plan, PlanError, Point};
use crate::host::{Host, PathKind};
use crate::spec::devpath::{absolute_paths, device_paths, in_host_data_dir, LOGICAL_DEVICES_ONLY};
use crate::spec::{Step, Value};
use serde::Serialize;
use std::path::Path;

/// A step that reaches a host path outside its point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostPathWarning {
    /// `file:line:column` of the step.
    pub at: String,
    /// `the workload`, `setup step 2`, …
    pub what: String,
    /// The first point it happens at.
    pub point: String,
    pub path: String,
    /// Where the word's value came from (`the matrix axis \`dir\``), or `the step itself`.
    pub via: String,
}

impl std::fmt::Display for HostPathWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: warning: {} uses the host path `{}` (at point `{}`, from {}), outside the point's own \
             filesystem: benchmark on `{{{{mnt}}}}/…` of a declared device, and keep scratch files in `{{{{work}}}}/…`",
            self.at, self.what, self.path, self.point, self.via
        )
    }
}

/// A resolved word that names a device the point did not provision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceRefusal {
    /// `file:line:column` of the step.
    pub at: String,
    /// `the workload`, `setup step 2`, …
    pub what: String,
    pub point: String,
    /// The word as the point would run it.
    pub word: String,
    pub device: String,
    /// Why it is a device, when not for its `/dev/` path (`, a block device on this host,`).
    pub why: String,
    /// Where the value came from.
    pub via: String,
}

impl std::fmt::Display for DeviceRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} at point `{}` names the device `{}`{} in the word `{}`, from {}; {LOGICAL_DEVICES_ONLY}",
            self.at, self.what, self.point, self.device, self.why, self.word, self.via
        )
    }
}

/// Where the value of `name` came from in this plan.
fn origin(plan: &Plan, name: &str) -> String {
    let def = &plan.experiment.def;
    if let Some(v) = plan.overrides.get(name) {
        return format!("`--set {name}={}`", v.label());
    }
    if let Some(p) = &plan.profile {
        if def.profiles.get(p).is_some_and(|s| s.contains_key(name)) {
            return format!("profile `{p}`, which sets `{name}`");
        }
    }
    if def.matrix.contains_key(name) {
        format!("the matrix axis `{name}`")
    } else if def.vars.contains_key(name) {
        format!("`vars.{name}`")
    } else if def.tools.contains_key(name) {
        format!("the tool `{name}`")
    } else {
        format!("`{{{{{name}}}}}`")
    }
}

/// The names of a step word whose values contain `needle`, as origins.
fn via(plan: &Plan, point: &Point, names: &[String], needle: &str) -> String {
    let has = |v: &Value| match v {
        Value::List(items) => items.iter().any(|i| i.label().contains(needle)),
        other => other.label().contains(needle),
    };
    let mut from: Vec<String> = names
        .iter()
        .filter(|n| point.vars.get(*n).is_some_and(has))
        .map(|n| origin(plan, n))
        .collect();
    if from.is_empty() {
        from = names
            .iter()
            .filter(|n| point.vars.contains_key(*n))
            .map(|n| origin(plan, n))
            .collect();
    }
    if from.is_empty() {
        "the step itself".into()
    } else {
        from.join(" and ")
    }
}

/// Check every resolved word of every step of every point; the warnings, one per step
/// and path, or the first refusal.
pub fn check(plan: &Plan, host: &dyn Host) -> Result<Vec<HostPathWarning>, PlanError> {
    let mut warnings: Vec<HostPathWarning> = Vec::new();
    for point in &plan.points {
        for phase in Phase::ALL {
            for step in plan.steps(point, phase) {
                check_step(plan, point, step, host, &mut warnings)?;
            }
        }
    }
    Ok(warnings)
}

fn check_step(
    plan: &Plan,
    point: &Point,
    step: &Step,
    host: &dyn Host,
    warnings: &mut Vec<HostPathWarning>,
) -> Result<(), PlanError> {
    let Ok(templates) = step.templates() else {
        return Ok(());
    };
    let look = |n: &str| point.vars.get(n).cloned();
    let mut first_word = step.run.is_some();
    for t in &templates {
        let names: Vec<String> = t.names().map(str::to_string).collect();
        for word in t.render_partial(&look) {
            let program = std::mem::take(&mut first_word);
            let refuse = |device: &str, why: &str| {
                let (what, at) = plan.experiment.step_place(step);
                PlanError::DeviceInStep(Box::new(DeviceRefusal {
                    at,
                    what,
                    point: point.id.clone(),
                    word: word.clone(),
                    device: device.to_string(),
                    why: why.to_string(),
                    via: via(plan, point, &names, device),
                }))
            };
            if let Some(device) = device_paths(&word).into_iter().next() {
                return Err(refuse(device, ""));
            }
            for path in absolute_paths(&word) {
                let kind = host.path_kind(Path::new(path));
                if kind == PathKind::BlockDevice {
                    return Err(refuse(path, ", a block device on this host,"));
                }
                let a_program = program || kind == PathKind::Program;
                if !a_program && in_host_data_dir(path) {
                    let (what, at) = plan.experiment.step_place(step);
                    if !warnings.iter().any(|w| w.at == at && w.path == path) {
                        warnings.push(HostPathWarning {
                            at,
                            what,
                            point: point.id.clone(),
                            path: path.to_string(),
                            via: via(plan, point, &names, path),
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::LocalHost;
    use crate::plan::parse_override;
    use crate::spec::Experiment;

    const DD: &str = r#"id: dd
title: dd
devices:
  data: { size: 64MiB }
vars:
  bs: 1M
  src: test-data
  prefix: /de
  rest: zero
tools:
  copy:
    choices:
      - dd
matrix:
  filename: [test-data, other]
profiles:
  quick: { bs: 2M }
setup:
  - run: mkfs.ext4 -F {{dev.data}}
  - mount: data
workload:
  run: "{{copy}} if={{filename}} of={{mnt}}/out bs={{bs}} count=1"
"#;

    fn exp(text: &str) -> Experiment {
        Experiment::from_str_named(text, "dd.yaml").unwrap()
    }

    fn refusal(text: &str, set: &[&str], host: &dyn Host) -> String {
        let sets: Vec<_> = set.iter().map(|s| parse_override(s).unwrap()).collect();
        match Plan::with_host(&exp(text), None, &sets, host) {
            Err(e @ PlanError::DeviceInStep(_)) => e.to_string(),
            Err(other) => panic!("another error: {other}"),
            Ok(_) => panic!("planned: {set:?}"),
        }
    }

    #[test]
    fn a_set_value_that_names_a_device_is_refused_naming_the_set() {
        let host = LocalHost::new();
        Plan::with_host(&exp(DD), None, &[], &host).unwrap();
        let e = refusal(DD, &["filename=/dev/vda"], &host);
        assert!(e.starts_with("dd.yaml:21:1: the workload at point `filename=/dev/vda` names the device `/dev/vda`"), "{e}");
        assert!(e.contains("`--set filename=/dev/vda`"), "{e}");
        assert!(e.contains("logical devices only"), "{e}");
        let e = refusal(DD, &["bs=1M of=/dev/sda"], &host);
        assert!(e.contains("`--set bs=1M of=/dev/sda`"), "{e}");
        // A list given to an axis, and a tool's command given with --set.
        let e = refusal(DD, &["filename=[test-data, /dev/nvme0n1]"], &host);
        assert!(e.contains("/dev/nvme0n1"), "{e}");
        let e = refusal(DD, &["copy=dd of=/dev/sdb"], &host);
        assert!(e.contains("`--set copy=dd of=/dev/sdb`"), "{e}");
    }

    #[test]
    fn values_that_name_a_device_only_together_are_refused() {
        let text = DD.replace("if={{filename}}", "if={{prefix}}v/{{rest}}");
        let host = LocalHost::new();
        // `/dev/zero` is harmless.
        Plan::with_host(&exp(&text), None, &[], &host).unwrap();
        let e = refusal(&text, &["rest=vda"], &host);
        assert!(e.contains("names the device `/dev/vda`"), "{e}");
        assert!(
            e.contains("`vars.prefix`") && e.contains("`--set rest=vda`"),
            "{e}"
        );
    }

    #[test]
    fn a_profile_that_sets_a_device_through_set_is_named() {
        let host = LocalHost::new();
        let sets = [parse_override("src=/dev/sdc").unwrap()];
        let text = DD.replace("if={{filename}}", "if={{src}}");
        let e = Plan::with_host(&exp(&text), Some("quick"), &sets, &host).unwrap_err();
        assert!(e.to_string().contains("`--set src=/dev/sdc`"), "{e}");
    }

    /// A host that says one path outside /dev is a block device (a symbolic link to
    /// a disk, a node made elsewhere).
    struct OneDisk(LocalHost, &'static str);

    impl Host for OneDisk {
        fn which(&self, p: &str) -> Option<std::path::PathBuf> {
            self.0.which(p)
        }
        fn version_line(&self, p: &Path) -> Option<String> {
            self.0.version_line(p)
        }
        fn kernel_release(&self) -> String {
            self.0.kernel_release()
        }
        fn kernel_config(&self, k: &str) -> (crate::host::ConfigValue, String) {
            self.0.kernel_config(k)
        }
        fn filesystems(&self) -> Vec<String> {
            self.0.filesystems()
        }
        fn fs_module(&self, f: &str) -> bool {
            self.0.fs_module(f)
        }
        fn path_kind(&self, path: &Path) -> PathKind {
            if path == Path::new(self.1) {
                PathKind::BlockDevice
            } else {
                self.0.path_kind(path)
            }
        }
    }

    #[test]
    fn a_path_that_is_a_block_device_on_this_host_is_refused() {
        let host = OneDisk(LocalHost::new(), "/srv/disk-link");
        let e = refusal(DD, &["filename=/srv/disk-link"], &host);
        assert!(
            e.contains("names the device `/srv/disk-link`, a block device on this host,"),
            "{e}"
        );
    }

    #[test]
    fn a_host_data_directory_is_a_located_warning() {
        let host = LocalHost::new();
        let text = DD
            .replace("of={{mnt}}/out", "of={{out}}/x")
            .replace("  bs: 1M", "  bs: 1M\n  out: /mnt/hdd-ext4");
        let plan = Plan::with_host(&exp(&text), None, &[], &host).unwrap();
        let w: Vec<String> = plan.warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "dd.yaml:22:1: warning: the workload uses the host path `/mnt/hdd-ext4/x`"
            ),
            "{w:?}"
        );
        assert!(w[0].contains("`vars.out`"), "{w:?}");
        // The point's own paths are not.
        assert!(Plan::with_host(&exp(DD), None, &[], &host)
            .unwrap()
            .warnings
            .is_empty());
    }
}
