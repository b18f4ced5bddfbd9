//! The `local` target: points run on the machine fslab runs on, as root, on loop
//! devices (or mapped real devices) in the point's cgroups.

use super::{Builtin, IoTrace, Replicate, Resources, Session, Target};
use crate::devices::trace::{BlockTrace, TraceText};
use crate::devices::{self, PointResources, WorkDir};
use crate::doctor::{Host, Probe, ProbingHost};
use crate::plan::Plan;
use crate::run::counters::PointCounters;
use crate::run::exec::{self, ExecOutcome};
use crate::run::spawner::Spawner;
use crate::run::{env, executables, Event, RunError, RunOptions, StepError};
use crate::spec::media::{CounterSource, TraceKind};
use crate::store::{Environment, ExecutableRecord};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Per-CPU ring buffer of a step's trace: about 250,000 events per CPU.
const TRACE_BUFFER_KB: u64 = 16 * 1024;

/// The machine fslab runs on.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalTarget;

impl Target for LocalTarget {
    /// Check for root, open (create, resolve, check) the work directory and reclaim
    /// what killed runs left there.
    fn prepare(&self, opts: &RunOptions) -> Result<WorkDir, RunError> {
        let uid = nix::unistd::Uid::effective();
        if !uid.is_root() {
            return Err(RunError::NotRoot { uid: uid.as_raw() });
        }
        let work = WorkDir::open(&opts.work_dir)?;
        let reclaimed = devices::reclaim(&work)?;
        for w in reclaimed.kept.iter().chain(&reclaimed.ignored) {
            opts.emit(Event::Warning(w.clone()));
        }
        if !reclaimed.is_empty() {
            opts.emit(Event::Reclaimed(reclaimed));
        }
        Ok(work)
    }

    fn host(&self, probe: Probe, work: &Path) -> Box<dyn Host> {
        Box::new(ProbingHost::new(probe, work.to_path_buf()))
    }

    fn environment(&self, programs: &[String]) -> Environment {
        env::capture_environment(programs)
    }

    fn tool_version(&self, program: &str) -> String {
        env::tool_version(program)
    }

    fn executables(&self, plan: &Plan) -> BTreeMap<String, ExecutableRecord> {
        executables::record(plan)
    }

    fn open<'a>(&'a self, r: Replicate<'a>) -> Result<Box<dyn Session + 'a>, RunError> {
        let devs = PointResources::provision_mapped(r.work, r.dir, &r.point.devices, r.mapped)?;
        Ok(Box::new(LocalSession {
            spawner: RefCell::new(SpawnerSlot::Idle),
            devs,
            opts: r.opts,
            point_id: &r.point.id,
        }))
    }
}

/// One replicate on the local machine: its devices and the process that starts its
/// commands. The spawner is declared first, so that it is gone before the devices are
/// released when a session is dropped without [`Session::release`].
struct LocalSession<'a> {
    spawner: RefCell<SpawnerSlot>,
    devs: PointResources,
    opts: &'a RunOptions,
    point_id: &'a str,
}

/// The replicate's spawner: not started yet, running, or not available (commands are
/// then started by fslab itself, each joining the cgroups before `exec`).
enum SpawnerSlot {
    Idle,
    Up(Spawner),
    Off,
}

impl Session for LocalSession<'_> {
    fn resources(&self) -> &dyn Resources {
        &self.devs
    }

    /// Run one command in the point's cgroups: through the replicate's spawner
    /// (started with the first command), or, when it cannot start, from fslab itself.
    fn exec(
        &self,
        argv: &[String],
        stdout: &Path,
        stderr: &Path,
        timeout: Option<Duration>,
        cancel: &AtomicBool,
    ) -> Result<ExecOutcome, StepError> {
        let mut slot = self.spawner.borrow_mut();
        if matches!(*slot, SpawnerSlot::Idle) {
            *slot = match Spawner::start(self.devs.cgroup()) {
                Ok(s) => SpawnerSlot::Up(s),
                Err(e) => {
                    self.opts.emit(Event::Warning(format!(
                        "{}: {e}; fslab starts each command itself (slower per command, same measurements)",
                        self.point_id
                    )));
                    SpawnerSlot::Off
                }
            };
        }
        let cwd = self.devs.work();
        if let SpawnerSlot::Up(s) = &mut *slot {
            match s.run(argv, &cwd, stdout, stderr, timeout, cancel) {
                Ok(o) => return Ok(o),
                Err(e) => {
                    // Whether the command ran is unknown: the step fails, and the next
                    // command is started by fslab itself.
                    *slot = SpawnerSlot::Off;
                    return Err(e.into());
                }
            }
        }
        exec::exec(
            argv,
            &cwd,
            stdout,
            stderr,
            timeout,
            cancel,
            Some(self.devs.cgroup()),
        )
        .map_err(StepError::Spawn)
    }

    fn builtin(&self, builtin: &Builtin) -> Result<(), StepError> {
        match builtin {
            Builtin::Mount {
                device,
                at,
                fstype,
                options,
            } => Ok(self
                .devs
                .mount(device, at, fstype.as_deref(), options.as_deref())?),
            Builtin::Unmount(p) => Ok(devices::unmount(p)?),
            Builtin::Mkdir(p) => std::fs::create_dir_all(p).map_err(|source| StepError::Mkdir {
                path: p.clone(),
                source,
            }),
            // Only the point's own filesystems are flushed (see PointResources::sync_own).
            Builtin::DropCaches => {
                self.devs.sync_own()?;
                std::fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(StepError::DropCaches)
            }
            Builtin::Sync => self.sync_own(),
        }
    }

    fn sync_own(&self) -> Result<(), StepError> {
        self.devs.sync_own()?;
        Ok(())
    }

    fn counters(&self, sources: &[CounterSource]) -> PointCounters {
        PointCounters::resolve(sources, &self.devs)
    }

    fn start_trace(&self, kind: TraceKind) -> Result<Box<dyn IoTrace + '_>, StepError> {
        match kind {
            TraceKind::Io => {
                let numbers = self
                    .devs
                    .devices()
                    .iter()
                    .map(|d| devices::throttle::device_numbers(&d.device))
                    .collect::<Result<Vec<_>, _>>()?;
                if numbers.is_empty() {
                    return Err(StepError::TraceNoDevices);
                }
                Ok(Box::new(BlockTrace::start(&numbers, TRACE_BUFFER_KB)?))
            }
        }
    }

    fn release(&mut self) -> Result<(), RunError> {
        // The spawner (and anything it still runs) goes before the devices.
        *self.spawner.get_mut() = SpawnerSlot::Off;
        Ok(self.devs.release()?)
    }
}

impl IoTrace for BlockTrace {
    fn finish(self: Box<Self>) -> Result<TraceText, StepError> {
        Ok(BlockTrace::finish(*self)?)
    }
}
