//! A `kernel` axis: the points of one plan run on several kernels, side by side (as
//! mmtests' compare-kernels puts them). A point whose `kernel` variable is `host` (or
//! that has none) runs on this machine ([`LocalTarget`]); one whose `kernel` names a
//! provisioned kernel runs in a guest of it ([`UmlTarget`]).
//!
//! ```yaml
//! matrix:
//!   kernel: [host, uml-bookworm, uml-trixie]
//! ```

use super::uml::{GuestError, UmlTarget};
use super::{LocalTarget, Replicate, Session, Target};
use crate::devices::WorkDir;
use crate::doctor::{Host, Probe, Report};
use crate::plan::{Plan, Point};
use crate::run::{RunError, RunOptions};
use crate::spec::Value;
use crate::store::{Environment, ExecutableRecord, GuestInfo};
use std::collections::BTreeMap;
use std::path::Path;

/// The variable that names a point's kernel.
pub const KERNEL_VAR: &str = "kernel";
/// Its value for the host's own kernel.
pub const HOST: &str = "host";

/// The guest kernel a point names in its `kernel` variable (None: the host's).
pub fn guest_kernel(point: &Point) -> Option<&str> {
    match point.vars.get(KERNEL_VAR) {
        Some(Value::Str(s)) if s != HOST => Some(s.as_str()),
        _ => None,
    }
}

/// The target of a plan whose points name kernels in a `kernel` variable (a matrix axis,
/// or `vars:`); None when no point names one other than `host`. Guests get `mem_bytes`
/// of memory each.
pub fn for_plan(plan: &Plan, mem_bytes: u64) -> Result<Option<KernelAxis>, GuestError> {
    let mut guests = BTreeMap::new();
    for p in &plan.points {
        if let Some(name) = guest_kernel(p) {
            if !guests.contains_key(name) {
                guests.insert(name.to_string(), UmlTarget::new(name, mem_bytes)?);
            }
        }
    }
    Ok((!guests.is_empty()).then_some(KernelAxis { guests }))
}

/// Points on the host and in guests, by their `kernel` value.
#[derive(Debug)]
pub struct KernelAxis {
    guests: BTreeMap<String, UmlTarget>,
}

impl KernelAxis {
    fn guest(&self, point: &Point) -> Option<&UmlTarget> {
        guest_kernel(point).and_then(|k| self.guests.get(k))
    }

    fn target(&self, point: &Point) -> &dyn Target {
        match self.guest(point) {
            Some(g) => g,
            None => &LocalTarget,
        }
    }
}

impl Target for KernelAxis {
    /// The host's preparation, then one boot of each guest kernel.
    fn prepare(&self, opts: &RunOptions) -> Result<WorkDir, RunError> {
        if !opts.device_map.is_empty() {
            return Err(GuestError::Mapped.into());
        }
        let work = LocalTarget.prepare(opts)?;
        for g in self.guests.values() {
            g.ensure_probed(&work)?;
        }
        Ok(work)
    }

    /// The host's (the report's kernel is the host's; each point is checked against its
    /// own kernel by [`preflight`](Self::preflight)).
    fn host(&self, probe: Probe, work: &Path) -> Box<dyn Host> {
        LocalTarget.host(probe, work)
    }

    fn preflight(&self, plan: &Plan, probe: Probe, work: &Path) -> Report {
        let host = LocalTarget.host(probe, work);
        let guests: BTreeMap<&str, Box<dyn Host>> = self
            .guests
            .iter()
            .map(|(n, g)| (n.as_str(), Box::new(g.guest_host()) as Box<dyn Host>))
            .collect();
        crate::doctor::check_by(plan, &*host, &|p: &Point| match guest_kernel(p)
            .and_then(|k| guests.get(k))
        {
            Some(h) => &**h,
            None => &*host,
        })
    }

    /// The host's environment (its kernel), with every guest.
    fn environment(&self, programs: &[String]) -> Environment {
        let mut e = LocalTarget.environment(programs);
        e.guests = self.guests.values().map(UmlTarget::guest_info).collect();
        e
    }

    fn tool_version(&self, program: &str) -> String {
        LocalTarget.tool_version(program)
    }

    fn executables(&self, plan: &Plan) -> BTreeMap<String, ExecutableRecord> {
        LocalTarget.executables(plan)
    }

    fn guest_of(&self, point: &Point) -> Option<GuestInfo> {
        self.guest(point).map(UmlTarget::guest_info)
    }

    fn open<'a>(&'a self, r: Replicate<'a>) -> Result<Box<dyn Session + 'a>, RunError> {
        self.target(r.point).open(r)
    }
}
