//! The execution seam: where a point's steps run.
//!
//! A [`Target`] probes its own host (kernel, config, tools), captures its environment
//! and opens a [`Session`] for each replicate of a point. The session names the
//! template variables that depend on where the point runs (`{{dev.X}}`, `{{image.X}}`,
//! `{{mnt}}`, `{{work}}`), executes a step's commands (returning an [`ExecOutcome`]),
//! runs the built-ins ([`Builtin`]), reads counters, traces, and releases everything it
//! made. This is the shape of hyperfine's `Executor` and nextest's target runner.
//!
//! The runner above the seam (rendering, labels, logs, parsing, the bundle) is the
//! same for every target. [`LocalTarget`] runs on the machine fslab runs on: loop
//! devices, the point's cgroups, the host's `mount`. A mock target (in the tests)
//! runs the loop without root.

mod axis;
mod local;
#[cfg(test)]
pub(super) mod mock;
pub mod uml;

pub use axis::{for_plan, guest_kernel, KernelAxis, KERNEL_VAR};
pub use local::LocalTarget;
pub use uml::{GuestError, UmlTarget};

use super::counters::{PointCounters, Snapshot};
use super::exec::ExecOutcome;
use super::{RunError, RunOptions, StepError};
use crate::devices::policy::MappedDevice;
use crate::devices::trace::TraceText;
use crate::devices::{PointResources, WorkDir};
use crate::doctor::{Host, Probe};
use crate::plan::{Plan, Point};
use crate::spec::media::{CounterSource, TraceKind};
use crate::spec::Value;
use crate::store::{Environment, ExecutableRecord, GuestInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Where a plan's points run.
pub trait Target: Send + Sync {
    /// Check that points can run here and open the work directory (which must be a
    /// trusted directory: see [`WorkDir`]), releasing what killed runs left there.
    fn prepare(&self, opts: &RunOptions) -> Result<WorkDir, RunError>;

    /// The host the doctor checks for this target: its kernel, kernel config and tools.
    fn host(&self, probe: Probe, work: &Path) -> Box<dyn Host>;

    /// The environment the points run in: kernel, distribution, CPU, memory, and the
    /// versions of `programs`.
    fn environment(&self, programs: &[String]) -> Environment;

    /// The version a tool reports here.
    fn tool_version(&self, program: &str) -> String;

    /// Every program the plan's steps start, resolved as this target resolves it.
    fn executables(&self, plan: &Plan) -> BTreeMap<String, ExecutableRecord>;

    /// The preflight: every point of `plan` checked against the host it runs on.
    fn preflight(&self, plan: &Plan, probe: Probe, work: &Path) -> crate::doctor::Report {
        crate::doctor::check(plan, &*self.host(probe, work))
    }

    /// The guest kernel `point` runs in, if it runs in one.
    fn guest_of(&self, _point: &Point) -> Option<GuestInfo> {
        None
    }

    /// Open one replicate of a point: make its directory and devices. Everything the
    /// session made is released by [`Session::release`], or when it is dropped.
    fn open<'a>(&'a self, replicate: Replicate<'a>) -> Result<Box<dyn Session + 'a>, RunError>;
}

/// What a target needs to open one replicate of a point.
pub struct Replicate<'a> {
    pub point: &'a Point,
    pub opts: &'a RunOptions,
    pub work: &'a WorkDir,
    /// The replicate's own directory (`mnt/`, `work/`, images), not yet made.
    pub dir: PathBuf,
    /// Devices the user mapped with `--device`.
    pub mapped: &'a [MappedDevice],
    /// The point's log directory in the bundle (a guest's kernel log goes there).
    pub log_dir: PathBuf,
    /// Which replicate (from 1).
    pub replicate: u32,
}

/// A built-in step, rendered and checked (its paths are inside the point's directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Builtin {
    /// Mount a device (one of the point's, or a rendered path) at `at`.
    Mount {
        device: PathBuf,
        at: PathBuf,
        fstype: Option<String>,
        options: Option<String>,
    },
    Unmount(PathBuf),
    Mkdir(PathBuf),
    /// Flush the point's own filesystems, then drop the page cache.
    DropCaches,
    /// Flush the point's own filesystems.
    Sync,
}

/// A block trace running around a step.
pub trait IoTrace {
    /// Stop tracing and take what was traced.
    fn finish(self: Box<Self>) -> Result<TraceText, StepError>;
}

/// What a session's commands see of what its replicate holds: the template variables
/// of its devices and directories, its directory, its mount point, and the words its
/// commands may not use. The local and `uml` targets answer from their
/// [`PointResources`]; the mock target answers for itself.
pub trait Resources {
    /// The value of a template variable that depends on where the point runs
    /// (`dev.X`, `image.X`, `mnt`, `work`); None for every other name.
    fn var(&self, name: &str) -> Option<Value>;

    /// The replicate's directory: built-ins may only touch paths inside it.
    fn dir(&self) -> &Path;

    /// Where `mount` mounts when it names no place (`{{mnt}}`).
    fn mnt(&self) -> PathBuf;

    /// Refuse a rendered command word that the point may not use (a device path that
    /// is not one of the point's own).
    fn check_word(&self, word: &str) -> Result<(), StepError>;
}

/// One replicate of a point, opened on a target.
pub trait Session {
    /// What the replicate holds; `var`, `dir`, `mnt` and `check_word` ask it.
    fn resources(&self) -> &dyn Resources;

    /// [`Resources::var`] of the replicate.
    fn var(&self, name: &str) -> Option<Value> {
        self.resources().var(name)
    }

    /// [`Resources::dir`] of the replicate.
    fn dir(&self) -> &Path {
        self.resources().dir()
    }

    /// [`Resources::mnt`] of the replicate.
    fn mnt(&self) -> PathBuf {
        self.resources().mnt()
    }

    /// [`Resources::check_word`] of the replicate.
    fn check_word(&self, word: &str) -> Result<(), StepError> {
        self.resources().check_word(word)
    }

    /// Run one command in the point's working directory, appending its output to
    /// `stdout` and `stderr`; stopped at `timeout` or when `cancel` is set.
    fn exec(
        &self,
        argv: &[String],
        stdout: &Path,
        stderr: &Path,
        timeout: Option<Duration>,
        cancel: &AtomicBool,
    ) -> Result<ExecOutcome, StepError>;

    /// Run a built-in step.
    fn builtin(&self, builtin: &Builtin) -> Result<(), StepError>;

    /// Flush what the point's own filesystems hold (before counters are read).
    fn sync_own(&self) -> Result<(), StepError>;

    /// The counters `sources` name for this point, resolved now (its filesystems are
    /// mounted).
    fn counters(&self, sources: &[CounterSource]) -> PointCounters;

    /// Read the point's counters now: here, or where they were resolved (a guest's
    /// agent reads the guest's own). What could not be read has no samples, never zeros.
    fn read_counters(&self, counters: &PointCounters) -> Snapshot {
        counters.read()
    }

    /// Start tracing the point's devices.
    fn start_trace(&self, kind: TraceKind) -> Result<Box<dyn IoTrace + '_>, StepError>;

    /// Release everything the replicate made (processes, mounts, devices, its
    /// directory); safe to call more than once. What fails to be released stays
    /// recorded for `fslab cleanup`.
    fn release(&mut self) -> Result<(), RunError>;
}

/// The point's devices and directories, for the targets that provision them (local and
/// `uml`). A mapped device has no image file.
impl Resources for PointResources {
    fn var(&self, name: &str) -> Option<Value> {
        if let Some(dev) = name.strip_prefix("dev.") {
            return self
                .device(dev)
                .map(|d| Value::Str(d.device.display().to_string()));
        }
        if let Some(dev) = name.strip_prefix("image.") {
            return self
                .device(dev)
                .filter(|d| d.mapped.is_none())
                .map(|d| Value::Str(d.image.display().to_string()));
        }
        match name {
            "mnt" => Some(Value::Str(PointResources::mnt(self).display().to_string())),
            "work" => Some(Value::Str(self.work().display().to_string())),
            _ => None,
        }
    }

    fn dir(&self) -> &Path {
        PointResources::dir(self)
    }

    fn mnt(&self) -> PathBuf {
        PointResources::mnt(self)
    }

    fn check_word(&self, word: &str) -> Result<(), StepError> {
        Ok(PointResources::check_word(self, word)?)
    }
}

#[cfg(test)]
mod mock_run;
