//! A mock target: runs nothing, so that the run loop can be tested without root.
//!
//! Each command is answered by a script (its exit code and what it prints); built-ins are recorded; a fake `/proc/vmstat` counts the commands, so
//! `counters: [vmstat]` has something to difference. The replicate's directory is made
//! and removed as the local target does, so a test can check that nothing stays.

use super::{Builtin, IoTrace, Replicate, Resources, Session, Target};
use crate::devices::WorkDir;
use crate::doctor::{ConfigValue, Host, Probe};
use crate::plan::Plan;
use crate::run::counters::PointCounters;
use crate::run::exec::ExecOutcome;
use crate::run::{RunError, RunOptions, StepError};
use crate::spec::media::{CounterSource, TraceKind};
use crate::spec::Value;
use crate::store::{Environment, ExecutableRecord};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How a scripted command ends.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) code: i32,
    pub(crate) stdout: String,
}

/// What the mock was asked to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    Open { point: String },
    Exec(Vec<String>),
    Builtin(Builtin),
    Release { point: String },
}

/// Answers a command (its argv).
pub(crate) type Script = Box<dyn Fn(&[String]) -> Reply + Send + Sync>;

/// The mock target.
pub(crate) struct MockTarget {
    script: Script,
    /// Holds the fake `proc/vmstat`.
    root: PathBuf,
    pub(crate) calls: Mutex<Vec<Call>>,
}

impl MockTarget {
    /// A mock whose fake kernel files live under `root` (an existing directory).
    pub(crate) fn new(root: &Path, script: Script) -> MockTarget {
        let _ = std::fs::create_dir_all(root.join("proc"));
        let _ = std::fs::create_dir_all(root.join("sys"));
        let _ = std::fs::write(root.join("proc/vmstat"), "pgpgin 0\n");
        MockTarget {
            script,
            root: root.to_path_buf(),
            calls: Mutex::new(Vec::new()),
        }
    }

    fn log(&self, c: Call) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(c);
        }
    }

    fn execs(&self) -> usize {
        self.calls
            .lock()
            .map(|c| c.iter().filter(|c| matches!(c, Call::Exec(_))).count())
            .unwrap_or(0)
    }
}

/// The mock's host: every program is installed, every kernel option built in.
struct MockHost;

impl Host for MockHost {
    fn which(&self, program: &str) -> Option<PathBuf> {
        Some(Path::new("/mock/bin").join(program))
    }
    fn version_line(&self, _path: &Path) -> Option<String> {
        Some("mock 1.0".into())
    }
    fn kernel_release(&self) -> String {
        "mock".into()
    }
    fn kernel_config(&self, _key: &str) -> (ConfigValue, String) {
        (ConfigValue::BuiltIn, "the mock target".into())
    }
    fn filesystems(&self) -> Vec<String> {
        vec!["xfs".into(), "ext4".into()]
    }
    fn fs_module(&self, _fstype: &str) -> bool {
        true
    }
}

impl Target for MockTarget {
    fn prepare(&self, opts: &RunOptions) -> Result<WorkDir, RunError> {
        Ok(WorkDir::open(&opts.work_dir)?)
    }

    fn host(&self, _probe: Probe, _work: &Path) -> Box<dyn Host> {
        Box::new(MockHost)
    }

    fn environment(&self, programs: &[String]) -> Environment {
        Environment {
            kernel: "mock".into(),
            tools: programs
                .iter()
                .map(|p| (p.clone(), "mock 1.0".to_string()))
                .collect(),
            ..Default::default()
        }
    }

    fn tool_version(&self, _program: &str) -> String {
        "mock 1.0".into()
    }

    fn executables(&self, _plan: &Plan) -> BTreeMap<String, ExecutableRecord> {
        BTreeMap::new()
    }

    fn open<'a>(&'a self, r: Replicate<'a>) -> Result<Box<dyn Session + 'a>, RunError> {
        for d in ["mnt", "work"] {
            std::fs::create_dir_all(r.dir.join(d))?;
        }
        self.log(Call::Open {
            point: r.point.id.clone(),
        });
        Ok(Box::new(MockSession {
            target: self,
            point: r.point.id.clone(),
            devices: r.point.devices.iter().map(|d| d.name.clone()).collect(),
            dir: r.dir,
            released: false,
        }))
    }
}

struct MockSession<'a> {
    target: &'a MockTarget,
    point: String,
    devices: Vec<String>,
    dir: PathBuf,
    released: bool,
}

impl MockSession<'_> {
    fn device(&self, name: &str) -> Option<String> {
        self.devices
            .iter()
            .any(|d| d == name)
            .then(|| format!("/dev/mock-{name}"))
    }
}

/// Mock devices (`/dev/mock-NAME`, an image beside them) and the replicate's directory;
/// every word may be used.
impl Resources for MockSession<'_> {
    fn var(&self, name: &str) -> Option<Value> {
        if let Some(dev) = name.strip_prefix("dev.") {
            return self.device(dev).map(Value::Str);
        }
        if let Some(dev) = name.strip_prefix("image.") {
            return self
                .device(dev)
                .map(|_| Value::Str(self.dir.join(format!("{dev}.img")).display().to_string()));
        }
        match name {
            "mnt" => Some(Value::Str(Resources::mnt(self).display().to_string())),
            "work" => Some(Value::Str(self.dir.join("work").display().to_string())),
            _ => None,
        }
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn mnt(&self) -> PathBuf {
        self.dir.join("mnt")
    }

    fn check_word(&self, _word: &str) -> Result<(), StepError> {
        Ok(())
    }
}

impl Session for MockSession<'_> {
    fn resources(&self) -> &dyn Resources {
        self
    }

    fn exec(
        &self,
        argv: &[String],
        stdout: &Path,
        _stderr: &Path,
        _timeout: Option<Duration>,
        cancel: &AtomicBool,
    ) -> Result<ExecOutcome, StepError> {
        self.target.log(Call::Exec(argv.to_vec()));
        let vmstat = self.target.root.join("proc/vmstat");
        std::fs::write(
            &vmstat,
            format!("pgpgin {}\n", 10 * self.target.execs() as u64),
        )
        .map_err(StepError::Spawn)?;
        let reply = (self.target.script)(argv);
        if !reply.stdout.is_empty() {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(stdout)
                .and_then(|mut f| f.write_all(reply.stdout.as_bytes()))
                .map_err(StepError::Spawn)?;
        }
        Ok(ExecOutcome {
            exit_code: Some(reply.code),
            wall: Duration::from_millis(10),
            user: Duration::from_millis(4),
            sys: Duration::from_millis(2),
            cancelled: cancel.load(Ordering::SeqCst),
            ..Default::default()
        })
    }

    fn builtin(&self, builtin: &Builtin) -> Result<(), StepError> {
        self.target.log(Call::Builtin(builtin.clone()));
        Ok(())
    }

    fn sync_own(&self) -> Result<(), StepError> {
        Ok(())
    }

    fn counters(&self, sources: &[CounterSource]) -> PointCounters {
        let root = &self.target.root;
        PointCounters::resolve_in(sources, &[], &root.join("sys"), &root.join("proc"))
    }

    fn start_trace(&self, _kind: TraceKind) -> Result<Box<dyn IoTrace + '_>, StepError> {
        Err(StepError::TraceUnsupported("the mock target".into()))
    }

    fn release(&mut self) -> Result<(), RunError> {
        if !self.released {
            self.released = true;
            std::fs::remove_dir_all(&self.dir)?;
            self.target.log(Call::Release {
                point: self.point.clone(),
            });
        }
        Ok(())
    }
}

impl Drop for MockSession<'_> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}
