//! The `uml` target: each replicate of a point runs in its own User-Mode Linux guest,
//! booted from a kernel `fslab kernels install` provisioned (`fslab run --kernel
//! uml-bookworm`). See docs/kernels.md.
//!
//! - **Devices** are the replicate's image files, attached as the guest's ubd disks:
//!   `{{dev.X}}` is `/dev/ubda`, `/dev/ubdb`, … inside the guest. No host loop device
//!   is made.
//! - **Files:** the guest's root is the host's `/` through hostfs, read-only, so host
//!   tools (and provisioned ones, and fslab itself) run in it. `/tmp` and `/run` are
//!   tmpfs; the replicate's directory (`{{mnt}}`, `{{work}}`, the step output) is the
//!   only writable host path, at the same path as on the host.
//! - **Steps** run through fslab's agent, the guest's init ([`agent`]), over the
//!   guest's second console ([`protocol`]). Timings, exit codes and CPU times are the
//!   guest's; the manifest says so ([`crate::store::GuestInfo`]), and so does every
//!   verdict (a substitution).
//! - **Safety:** the kernel runs in the point's cgroup (the ownership record names it,
//!   so `fslab cleanup` kills a guest whose fslab was SIGKILLed), and is powered off
//!   or killed when the replicate ends, whatever the reason ([`guest`]).

pub mod agent;
mod guest;
pub mod protocol;
pub mod xstate;

use super::{Builtin, IoTrace, Replicate, Resources, Session, Target};
use crate::devices::trace::TraceText;
use crate::devices::{PointResources, WorkDir};
use crate::doctor::{ConfigValue, Host, Probe};
use crate::host::LocalHost;
use crate::kernels::{self, InstalledKernel};
use crate::plan::{Plan, Point};
use crate::run::counters::{PointCounters, Snapshot};
use crate::run::exec::ExecOutcome;
use crate::run::target::LocalTarget;
use crate::run::{env, executables, RunError, RunOptions, StepError};
use crate::spec::media::{CounterSource, TraceKind};
use crate::store::{Environment, ExecutableRecord, GuestInfo};
use guest::{Boot, Guest, REQUEST_TIMEOUT};
use protocol::{Reply, Request};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;
use std::time::Duration;

/// The guest's memory unless `--guest-mem` says otherwise; recorded in the manifest.
pub const DEFAULT_GUEST_MEM: u64 = 1 << 30;

/// What a measurement in a User-Mode Linux guest cannot show (measured: docs/kernels.md).
pub const UML_CAVEATS: &[&str] = &[
    "system calls cost about 40× and a process start 13–19× what they cost on the host",
    "system CPU time is not measured: UML charges it to user time (sys_s stays 0)",
    "fsync and flush latency are not measured: guest flushes never reach the host's disk",
    "devices are ubd disks over image files: anything the medium decides is the host's page cache, not a disk",
];

/// Why a guest could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    #[error("kernel `{name}` is not installed (installed: {installed}); run `fslab kernels install {name}`")]
    NotInstalled { name: String, installed: String },
    #[error(
        "kernel `{name}` is unknown (known: {known}; `fslab kernels build {name} --source …` builds one by that name); `fslab kernels list` shows what is installed and built"
    )]
    Unknown { name: String, known: String },
    #[error("a guest cannot use {0}: its path must be absolute, without spaces, commas or quotes (hostfs and the kernel command line take it as it is)")]
    Path(PathBuf),
    #[error("guest: {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the guest stopped: {why}; {console}")]
    Stopped { why: String, console: String },
    #[error("the guest did not answer in time and was killed; {console}")]
    Hung { console: String },
    #[error("the guest agent: {0}")]
    Protocol(String),
    #[error("in the guest: {0}")]
    Failed(String),
    #[error("`--device` maps host block devices; a point in a guest has image files only")]
    Mapped,
    #[error(
        "the point has {0} devices; a User-Mode Linux guest has at most {MAX_DISKS} ubd disks"
    )]
    TooManyDisks(usize),
    #[error("fslab cannot find its own program for the guest's agent: {0}")]
    NoAgent(std::io::Error),
    #[error(
        "this host's XSAVE area is {host_bytes} bytes (AVX-512 or AMX), more than a UML kernel's {} byte FP buffer, so its guests need fslab's ptrace shim, which could not be compiled: {why}; install a C compiler (`apt-get install gcc`; scripts/install-deps.sh does)",
        xstate::UML_FP_BYTES
    )]
    Shim { host_bytes: u32, why: String },
}

impl GuestError {
    pub(super) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> GuestError {
        let what = what.into();
        move |source| GuestError::Io { what, source }
    }
}

/// How many ubd disks a UML kernel has (`MAX_DEV` in its ubd driver).
pub const MAX_DISKS: usize = 16;

/// The guest's name for its `n`th disk: `/dev/ubda`, `/dev/ubdb`, … (`n` below
/// [`MAX_DISKS`]).
pub fn ubd(n: usize) -> PathBuf {
    let letter = char::from(b'a' + (n % MAX_DISKS) as u8);
    PathBuf::from(format!("/dev/ubd{letter}"))
}

/// What the first guest of a run said about its kernel.
#[derive(Debug, Clone)]
struct Probed {
    release: String,
    filesystems: Vec<String>,
    boot: Duration,
}

/// Points run in User-Mode Linux guests of one installed kernel.
pub struct UmlTarget {
    kernel: InstalledKernel,
    mem_bytes: u64,
    agent: PathBuf,
    /// Host directories the guest's steps read: the agent's (also `{{fslab}}`'s) and the
    /// provisioned tools' (mounted back when the guest's `/tmp` or `/run` hides them).
    host_dirs: Vec<PathBuf>,
    /// The ptrace shim the kernel process preloads on this host, if it needs one.
    shim: Option<xstate::Shim>,
    probed: OnceLock<Probed>,
}

impl std::fmt::Debug for UmlTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UmlTarget")
            .field("kernel", &self.kernel.provenance.name)
            .field("mem_bytes", &self.mem_bytes)
            .finish_non_exhaustive()
    }
}

impl UmlTarget {
    /// The installed kernel `name` (in [`kernels::kernels_dir`]), with `mem_bytes` of
    /// guest memory; the agent is fslab's program ([`crate::plan::fslab_executable`]).
    pub fn new(name: &str, mem_bytes: u64) -> Result<UmlTarget, GuestError> {
        Self::in_dir(name, &kernels::kernels_dir(), mem_bytes)
    }

    /// As [`new`](Self::new), with the kernels in `dir`.
    pub fn in_dir(name: &str, dir: &Path, mem_bytes: u64) -> Result<UmlTarget, GuestError> {
        let installed = kernels::installed_in(dir);
        let Some(kernel) = installed
            .iter()
            .find(|k| k.provenance.name == name)
            .cloned()
        else {
            if kernels::known(name).is_none() {
                return Err(GuestError::Unknown {
                    name: name.to_string(),
                    known: kernels::KNOWN
                        .iter()
                        .map(|k| k.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            let names: Vec<&str> = installed
                .iter()
                .map(|k| k.provenance.name.as_str())
                .collect();
            return Err(GuestError::NotInstalled {
                name: name.to_string(),
                installed: if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                },
            });
        };
        // fslab's own program, which `{{fslab}}` names too (`$FSLAB_BIN`, else this
        // program when it is fslab, else `fslab` beside it): in a notebook or a test the
        // running program is not fslab, and a guest whose init is not fslab stops.
        let agent = crate::plan::fslab_executable();
        if !agent.is_absolute() || !agent.is_file() {
            return Err(GuestError::NoAgent(std::io::Error::other(format!(
                "`{}` is not a file; set FSLAB_BIN to fslab's executable",
                agent.display()
            ))));
        }
        let host_dirs = agent
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .chain([crate::tools::tools_dir()])
            .filter(|p| p.is_absolute())
            .collect();
        let shim = xstate::for_this_host()?;
        Ok(UmlTarget {
            kernel,
            mem_bytes,
            agent,
            host_dirs,
            shim,
            probed: OnceLock::new(),
        })
    }

    /// The kernel's name (`uml-bookworm`).
    pub fn name(&self) -> &str {
        &self.kernel.provenance.name
    }

    fn boot(
        &self,
        devs: &PointResources,
        console: &Path,
        disks: &[PathBuf],
    ) -> Result<Guest, GuestError> {
        let kernel_env: Vec<(String, String)> = self
            .kernel
            .kernel_env()
            .into_iter()
            .chain(self.shim.iter().map(xstate::Shim::env))
            .collect();
        Guest::boot(&Boot {
            kernel: &self.kernel.binary(),
            kernel_env: &kernel_env,
            mem_bytes: self.mem_bytes,
            disks,
            dir: devs.dir(),
            console,
            agent: &self.agent,
            host_dirs: &self.host_dirs,
            cgroup: Some(devs.cgroup()),
        })
    }

    /// Boot one guest (once per target) to learn its kernel, unless done already.
    pub(super) fn ensure_probed(&self, work: &WorkDir) -> Result<(), RunError> {
        if self.probed.get().is_none() {
            let p = self.probe(work)?;
            let _ = self.probed.set(p);
        }
        Ok(())
    }

    /// The doctor's view of this guest.
    pub(super) fn guest_host(&self) -> UmlHost {
        UmlHost {
            local: LocalHost::new(),
            kernel: self.kernel.clone(),
            probed: self.probed.get().cloned(),
        }
    }

    /// Boot one guest with no disks: its kernel release and filesystems, for the
    /// doctor and the manifest.
    fn probe(&self, work: &WorkDir) -> Result<Probed, RunError> {
        let dir = work
            .points()
            .join(format!("probe{}", crate::store::short_id()));
        let mut devs = PointResources::provision_images(work, dir, &[], &ubd)?;
        let console = devs.dir().join("console.log");
        let result = (|| {
            let mut g = self.boot(&devs, &console, &[])?;
            let filesystems = match g.request(
                &Request::Read {
                    path: "/proc/filesystems".into(),
                },
                REQUEST_TIMEOUT,
                None,
            )? {
                Reply::Done { text } => text
                    .lines()
                    .filter_map(|l| l.split_whitespace().last())
                    .map(str::to_string)
                    .collect(),
                other => return Err(GuestError::Protocol(format!("{other:?}"))),
            };
            g.power_off()?;
            Ok(Probed {
                release: g.release.clone(),
                filesystems,
                boot: g.boot,
            })
        })();
        devs.release()?;
        Ok(result?)
    }

    /// The guest's description for the manifest.
    pub(super) fn guest_info(&self) -> GuestInfo {
        let p = &self.kernel.provenance;
        GuestInfo {
            kind: p.kind.describe().to_string(),
            name: p.name.clone(),
            release: self
                .probed
                .get()
                .map_or_else(|| p.release.clone(), |x| x.release.clone()),
            memory_bytes: self.mem_bytes,
            boot_s: self.probed.get().map(|x| x.boot.as_secs_f64()),
            provenance: serde_json::to_value(p).unwrap_or_default(),
            caveats: UML_CAVEATS
                .iter()
                .map(|c| c.to_string())
                .chain(self.shim.iter().map(xstate::Shim::caveat))
                .collect(),
        }
    }
}

impl Target for UmlTarget {
    /// As the local target (root, the work directory, reclaiming what killed runs left,
    /// their guests among it), then boot one guest to learn its kernel.
    fn prepare(&self, opts: &RunOptions) -> Result<WorkDir, RunError> {
        if !opts.device_map.is_empty() {
            return Err(GuestError::Mapped.into());
        }
        let work = LocalTarget.prepare(opts)?;
        self.ensure_probed(&work)?;
        Ok(work)
    }

    fn host(&self, _probe: Probe, _work: &Path) -> Box<dyn Host> {
        Box::new(self.guest_host())
    }

    /// The host's environment (its CPU, distribution, tools: the guest runs the host's
    /// programs), with the guest's kernel and the guest itself.
    fn environment(&self, programs: &[String]) -> Environment {
        let mut e = env::capture_environment(programs);
        let info = self.guest_info();
        e.kernel = info.release.clone();
        e.guests = vec![info];
        e
    }

    fn tool_version(&self, program: &str) -> String {
        env::tool_version(program)
    }

    fn executables(&self, plan: &Plan) -> BTreeMap<String, ExecutableRecord> {
        executables::record(plan)
    }

    fn guest_of(&self, _point: &Point) -> Option<GuestInfo> {
        Some(self.guest_info())
    }

    fn open<'a>(&'a self, r: Replicate<'a>) -> Result<Box<dyn Session + 'a>, RunError> {
        if !r.mapped.is_empty() {
            return Err(GuestError::Mapped.into());
        }
        if r.point.devices.len() > MAX_DISKS {
            return Err(GuestError::TooManyDisks(r.point.devices.len()).into());
        }
        let devs = PointResources::provision_images(r.work, r.dir, &r.point.devices, &ubd)?;
        let io = devs.dir().join("guest-io");
        std::fs::create_dir_all(&io)
            .map_err(GuestError::io(format!("creating {}", io.display())))?;
        let disks: Vec<PathBuf> = devs.devices().iter().map(|d| d.image.clone()).collect();
        let console = r.log_dir.join(if r.point.replicates > 1 {
            format!("r{:02}-guest-console.log", r.replicate)
        } else {
            "guest-console.log".to_string()
        });
        let guest = self.boot(&devs, &console, &disks)?;
        Ok(Box::new(UmlSession {
            guest: RefCell::new(Some(guest)),
            io,
            devs,
            opts: r.opts,
            target: self,
        }))
    }
}

/// One replicate in its guest. The guest is declared first: it is stopped before the
/// devices (and the cgroup it runs in) are released when a session is dropped.
struct UmlSession<'a> {
    guest: RefCell<Option<Guest>>,
    /// Where the agent writes a command's output (in the replicate's directory).
    io: PathBuf,
    devs: PointResources,
    opts: &'a RunOptions,
    target: &'a UmlTarget,
}

impl UmlSession<'_> {
    /// The guest's names of the point's disks (`/dev/ubda`, …).
    fn disks(&self) -> Vec<PathBuf> {
        self.devs
            .devices()
            .iter()
            .map(|d| d.device.clone())
            .collect()
    }

    fn ask(
        &self,
        req: &Request,
        timeout: Duration,
        cancel: Option<&AtomicBool>,
    ) -> Result<Reply, GuestError> {
        let mut slot = self.guest.borrow_mut();
        let Some(g) = slot.as_mut() else {
            return Err(GuestError::Stopped {
                why: "the replicate was released".into(),
                console: String::new(),
            });
        };
        g.request(req, timeout, cancel)
    }

    /// A request that succeeds or fails, with nothing to return.
    fn act(&self, req: Request) -> Result<(), StepError> {
        match self.ask(&req, REQUEST_TIMEOUT, None)? {
            Reply::Done { .. } => Ok(()),
            Reply::Failed { message } => Err(GuestError::Failed(message).into()),
            other => Err(GuestError::Protocol(format!("{other:?} to {req:?}")).into()),
        }
    }
}

/// The configuration a guest kernel needs for `trace: io`: tracefs and the block
/// request tracepoints.
const TRACE_CONFIG: [&str; 3] = [
    "CONFIG_TRACING",
    "CONFIG_EVENT_TRACING",
    "CONFIG_TRACEPOINTS",
];

/// A guest's per-CPU trace buffer, as the host's (`LocalTarget`).
const TRACE_BUFFER_KB: u64 = 16 * 1024;

/// A block trace running in the guest (its agent holds it).
struct GuestTrace<'s, 'a> {
    session: &'s UmlSession<'a>,
    /// Where the agent writes the trace's text (in the replicate's directory).
    out: PathBuf,
    finished: bool,
}

impl IoTrace for GuestTrace<'_, '_> {
    fn finish(mut self: Box<Self>) -> Result<TraceText, StepError> {
        self.finished = true;
        let req = Request::TraceStop {
            out: Some(self.out.clone()),
        };
        match self.session.ask(&req, REQUEST_TIMEOUT, None)? {
            Reply::Traced { start_mono_ns } => {
                let text = std::fs::read_to_string(&self.out).map_err(|source| StepError::Log {
                    path: self.out.clone(),
                    source,
                })?;
                let _ = std::fs::remove_file(&self.out);
                Ok(TraceText {
                    text,
                    start_mono: start_mono_ns as f64 / 1e9,
                })
            }
            Reply::Failed { message } => Err(GuestError::Failed(message).into()),
            other => Err(GuestError::Protocol(format!("{other:?} to {req:?}")).into()),
        }
    }
}

impl Drop for GuestTrace<'_, '_> {
    /// A trace that was not finished (its step failed) is switched off in the guest.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self
                .session
                .ask(&Request::TraceStop { out: None }, REQUEST_TIMEOUT, None);
        }
    }
}

/// Append `from` (the agent's output file) to `to`, creating it.
fn append(from: &Path, to: &Path) -> Result<(), StepError> {
    let io = |source: std::io::Error| StepError::Log {
        path: to.to_path_buf(),
        source,
    };
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(to)
        .map_err(io)?;
    if let Ok(mut f) = std::fs::File::open(from) {
        std::io::copy(&mut f, &mut out).map_err(io)?;
    }
    out.flush().map_err(io)
}

impl Session for UmlSession<'_> {
    fn resources(&self) -> &dyn Resources {
        &self.devs
    }

    fn exec(
        &self,
        argv: &[String],
        stdout: &Path,
        stderr: &Path,
        timeout: Option<Duration>,
        cancel: &AtomicBool,
    ) -> Result<ExecOutcome, StepError> {
        // A bare name a provisioned tool provides runs from there, as on the host.
        let mut argv = argv.to_vec();
        if let Some(first) = argv.first_mut() {
            if let Some((p, _)) = crate::tools::provided(first) {
                *first = p.display().to_string();
            }
        }
        let (out, err) = (self.io.join("stdout"), self.io.join("stderr"));
        let req = Request::Exec {
            argv,
            cwd: self.devs.work(),
            stdout: out.clone(),
            stderr: err.clone(),
            timeout_ms: timeout.map(|t| t.as_millis() as u64),
        };
        let reply = self.ask(&req, Guest::deadline_for(timeout), Some(cancel))?;
        append(&out, stdout)?;
        append(&err, stderr)?;
        match reply {
            Reply::Exited(e) => Ok(ExecOutcome {
                exit_code: e.exit_code,
                signal: e.signal,
                wall: Duration::from_nanos(e.wall_ns),
                user: Duration::from_nanos(e.user_ns),
                sys: Duration::from_nanos(e.sys_ns),
                timed_out: e.timed_out,
                cancelled: e.cancelled,
                spawn_error: e.spawn_error,
                cgroup_join: Duration::ZERO,
                spawn: Duration::ZERO,
            }),
            Reply::Failed { message } => Err(GuestError::Failed(message).into()),
            other => Err(GuestError::Protocol(format!("{other:?} to a command")).into()),
        }
    }

    fn builtin(&self, builtin: &Builtin) -> Result<(), StepError> {
        let req = match builtin {
            Builtin::Mount {
                device,
                at,
                fstype,
                options,
            } => {
                // The guest's own disks only (as on the host: the point's devices).
                if !self.devs.owns_device(device) {
                    self.devs.check_word(&device.display().to_string())?;
                    return Err(StepError::Device(crate::devices::DeviceError::Refused {
                        device: device.display().to_string(),
                        reason: Box::new(crate::devices::policy::Refusal::NotThisPointsDevice),
                    }));
                }
                Request::Mount {
                    device: device.clone(),
                    at: at.clone(),
                    fstype: fstype.clone(),
                    options: options.clone(),
                }
            }
            Builtin::Unmount(p) => Request::Umount { at: p.clone() },
            Builtin::Mkdir(p) => Request::Mkdir { path: p.clone() },
            Builtin::DropCaches => Request::DropCaches,
            Builtin::Sync => Request::Sync,
        };
        self.act(req)
    }

    fn sync_own(&self) -> Result<(), StepError> {
        self.act(Request::Sync)
    }

    /// Resolved by the agent, in the guest: its `/sys`, `/proc` and tracefs, for its ubd
    /// disks. A source the guest cannot give is said in the notes, as on the host.
    fn counters(&self, sources: &[CounterSource]) -> PointCounters {
        if sources.is_empty() {
            return PointCounters::elsewhere(Vec::new(), Vec::new());
        }
        let req = Request::CountersOpen {
            sources: sources.to_vec(),
            devices: self.disks(),
        };
        match self.ask(&req, REQUEST_TIMEOUT, None) {
            Ok(Reply::CountersOpened { origins, notes }) => {
                PointCounters::elsewhere(origins, notes)
            }
            Ok(other) => PointCounters::unavailable(
                sources,
                &format!("counters: the guest's agent answered {other:?}; no counters rows"),
            ),
            Err(e) => PointCounters::unavailable(
                sources,
                &format!("counters: the guest could not resolve them ({e}); no counters rows"),
            ),
        }
    }

    /// The guest's agent reads its own counters. A failed read is said, and gives no
    /// rows for that iteration.
    fn read_counters(&self, counters: &PointCounters) -> Snapshot {
        if counters.is_empty() {
            return Snapshot::default();
        }
        match self.ask(&Request::CountersRead, REQUEST_TIMEOUT, None) {
            Ok(Reply::Snapshot { snapshot }) => snapshot,
            other => {
                self.opts.emit(crate::run::Event::Warning(format!(
                    "{}: reading the guest's counters failed ({}); no counters rows for this iteration",
                    self.devs.dir().display(),
                    match other {
                        Ok(r) => format!("{r:?}"),
                        Err(e) => e.to_string(),
                    }
                )));
                Snapshot::default()
            }
        }
    }

    /// The guest's block tracepoints, through its tracefs: a kernel whose configuration
    /// has no event tracing (Debian's `user-mode-linux` packages) cannot, and says so.
    fn start_trace(&self, kind: TraceKind) -> Result<Box<dyn IoTrace + '_>, StepError> {
        match kind {
            TraceKind::Io => {}
        }
        let k = &self.target.kernel;
        let missing: Vec<&str> = TRACE_CONFIG
            .iter()
            .copied()
            .filter(|o| k.config(o) != ConfigValue::BuiltIn)
            .collect();
        if !missing.is_empty() {
            return Err(StepError::TraceUnsupported(format!(
                "a User-Mode Linux guest of `{}` (the kernel's configuration lacks {}: no tracefs or no block tracepoints; a kernel made by `fslab kernels build` has them)",
                k.provenance.name,
                missing.join(", ")
            )));
        }
        if self.devs.devices().is_empty() {
            return Err(StepError::TraceNoDevices);
        }
        let req = Request::TraceStart {
            devices: self.disks(),
            buffer_kb: TRACE_BUFFER_KB,
        };
        match self.ask(&req, REQUEST_TIMEOUT, None)? {
            Reply::Done { .. } => Ok(Box::new(GuestTrace {
                session: self,
                out: self.io.join("trace"),
                finished: false,
            })),
            Reply::Failed { message } => Err(StepError::TraceUnsupported(format!(
                "the User-Mode Linux guest of `{}`: {message}",
                k.provenance.name
            ))),
            other => Err(GuestError::Protocol(format!("{other:?} to {req:?}")).into()),
        }
    }

    fn release(&mut self) -> Result<(), RunError> {
        let stopped = match self.guest.get_mut().take() {
            Some(mut g) => g.power_off(),
            None => Ok(()),
        };
        self.devs.release()?;
        if let Err(e) = stopped {
            self.opts.emit(crate::run::Event::Warning(format!(
                "{}: {e}",
                self.devs.dir().display()
            )));
        }
        Ok(())
    }
}

/// The doctor's view of a guest: the host's programs (the guest runs them through
/// hostfs), the guest kernel's release, configuration and filesystems.
pub(super) struct UmlHost {
    local: LocalHost,
    kernel: InstalledKernel,
    probed: Option<Probed>,
}

impl Host for UmlHost {
    fn which(&self, program: &str) -> Option<PathBuf> {
        self.local.which(program)
    }

    fn version_line(&self, path: &Path) -> Option<String> {
        self.local.version_line(path)
    }

    fn kernel_release(&self) -> String {
        self.probed.as_ref().map_or_else(
            || self.kernel.provenance.release.clone(),
            |p| p.release.clone(),
        )
    }

    fn kernel_config(&self, key: &str) -> (ConfigValue, String) {
        (
            self.kernel.config(key),
            format!(
                "the configuration of guest kernel {} ({})",
                self.kernel.provenance.name,
                self.kernel.dir.join("config").display()
            ),
        )
    }

    /// What a booted guest listed in `/proc/filesystems`; before one booted (`fslab
    /// doctor`), the filesystems its configuration builds in.
    fn filesystems(&self) -> Vec<String> {
        if let Some(p) = &self.probed {
            return p.filesystems.clone();
        }
        let built_in = |key: &str| self.kernel.config(key) == ConfigValue::BuiltIn;
        let mut out: Vec<String> = Vec::new();
        for (key, fs) in [
            ("CONFIG_XFS_FS", &["xfs"][..]),
            ("CONFIG_EXT4_FS", &["ext4", "ext3"][..]),
            ("CONFIG_EXT4_USE_FOR_EXT2", &["ext2"][..]),
            ("CONFIG_EXT2_FS", &["ext2"][..]),
            ("CONFIG_BTRFS_FS", &["btrfs"][..]),
            ("CONFIG_TMPFS", &["tmpfs"][..]),
        ] {
            for f in fs.iter().filter(|_| built_in(key)) {
                if !out.iter().any(|o| o == f) {
                    out.push(f.to_string());
                }
            }
        }
        out
    }

    /// Everything the guest has is built in (`/proc/filesystems` of a booted guest).
    fn fs_module(&self, _fstype: &str) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disks_are_named_as_the_guest_kernel_names_them() {
        assert_eq!(ubd(0), PathBuf::from("/dev/ubda"));
        assert_eq!(ubd(1), PathBuf::from("/dev/ubdb"));
        assert_eq!(ubd(MAX_DISKS - 1), PathBuf::from("/dev/ubdp"));
    }

    #[test]
    fn an_unknown_kernel_names_the_known_ones() {
        let d = tempfile::tempdir().unwrap();
        let e = UmlTarget::in_dir("uml-nowhere", d.path(), DEFAULT_GUEST_MEM).unwrap_err();
        assert!(matches!(e, GuestError::Unknown { .. }), "{e}");
        let e = UmlTarget::in_dir("uml-trixie", d.path(), DEFAULT_GUEST_MEM).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `uml-trixie` is not installed (installed: none); run `fslab kernels install uml-trixie`"
        );
    }
}
