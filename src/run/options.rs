//! How to run (`RunOptions`) and what the runner reports while it works (`Event`).

use super::{default_work_dir, target, RunError, RunOrder};
use crate::devices::{self, policy::ScratchList};
use crate::doctor::Probe;
use crate::store::{BundleWriter, PointStatus};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the runner reports while it works (the CLI draws a progress bar from these).
#[derive(Debug, Clone)]
pub enum Event {
    Reclaimed(devices::Reclaimed),
    Started {
        bundle: PathBuf,
        points: usize,
        /// (point, replicate) pairs to run.
        replicates: usize,
        iterations: u64,
        order: RunOrder,
        /// The seed of a random order.
        seed: Option<u64>,
    },
    /// The point's first replicate starts (its others may come later, between other
    /// points' replicates).
    PointStarted {
        index: usize,
        id: String,
    },
    /// One replicate of a point starts: pair `position` (from 1) of the `of` pairs
    /// this run does.
    ReplicateStarted {
        index: usize,
        id: String,
        replicate: u32,
        replicates: u32,
        position: usize,
        of: usize,
    },
    Step {
        index: usize,
        label: String,
    },
    Iteration {
        index: usize,
        iteration: u32,
        repeat: u32,
        wall_s: f64,
        ok: bool,
    },
    PointFinished {
        index: usize,
        id: String,
        status: PointStatus,
        reason: Option<String>,
    },
    Warning(String),
}

pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

/// What a caller adds to the bundle as the run goes, through the run's own writer (so
/// it is written the way everything else is: atomically, and before the next pair
/// starts). `fslab calibrate` records its design and, after each pair, the comparisons
/// that pair completed.
pub trait RunHook: Send + Sync {
    /// Once, after the bundle is created and before the first pair runs.
    fn started(&self, writer: &mut BundleWriter) -> Result<(), RunError>;
    /// After each (point, replicate) pair, once its rows, tables and run-order entry
    /// are on disk.
    fn replicate_done(&self, writer: &mut BundleWriter) -> Result<(), RunError>;
}

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    /// Where bundles go (`<results>/<experiment>/<stamp>-<id>/`).
    pub results_dir: PathBuf,
    /// Where images, mount points and the ownership records live.
    pub work_dir: PathBuf,
    /// Stop at the first failing point.
    pub fail_fast: bool,
    /// Set to stop (SIGINT/SIGTERM handlers set it).
    pub cancel: Arc<AtomicBool>,
    /// How the preflight may probe kernel features (see [`crate::doctor`]).
    pub probe: Probe,
    /// Logical device → real block device (`--device NAME=PATH`). Each must be listed
    /// as a scratch device and pass [`devices::policy`]'s checks.
    pub device_map: Vec<(String, PathBuf)>,
    /// The scratch device list; None: read it from the environment and the user's
    /// config ([`ScratchList::from_env`]) when `device_map` is not empty.
    pub scratch: Option<ScratchList>,
    /// Run only this shard's points (`--shard K/N`, see [`crate::shard`]); the others are
    /// recorded as `other-shard`.
    pub shard: Option<crate::shard::Shard>,
    /// Where the points run: [`target::LocalTarget`] (this machine) unless a caller
    /// gives another.
    pub target: Arc<dyn target::Target>,
    /// The order of the (point, replicate) pairs (`--order`): randomised blocks of
    /// replicates by default, or point by point. A resume keeps the bundle's order.
    pub order: RunOrder,
    /// The seed of a random order (`--seed`); None: a fresh one. The manifest records
    /// the seed either way.
    pub seed: Option<u64>,
    pub on_event: Option<EventSink>,
    /// Called as the run goes (see [`RunHook`]); None for a plain run.
    pub hook: Option<Arc<dyn RunHook>>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("results_dir", &self.results_dir)
            .field("work_dir", &self.work_dir)
            .field("fail_fast", &self.fail_fast)
            .field("device_map", &self.device_map)
            .field("shard", &self.shard)
            .field("order", &self.order)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            results_dir: std::env::var_os("FSLAB_RESULTS_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("results")),
            work_dir: default_work_dir(),
            fail_fast: false,
            cancel: Arc::new(AtomicBool::new(false)),
            probe: Probe::default(),
            device_map: Vec::new(),
            scratch: None,
            shard: None,
            target: Arc::new(target::LocalTarget),
            order: RunOrder::default(),
            seed: None,
            on_event: None,
            hook: None,
        }
    }
}

impl RunOptions {
    /// SIGINT and SIGTERM set `cancel`: the runner then stops the running command,
    /// releases every device and mount, and returns [`RunError::Interrupted`](super::RunError::Interrupted).
    pub fn with_signal_handlers(self) -> std::io::Result<Self> {
        // SIGHUP too: a closed terminal or ssh session must not leave devices behind.
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(sig, Arc::clone(&self.cancel))?;
        }
        Ok(self)
    }

    pub fn with_events(mut self, sink: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(sink));
        self
    }

    pub(super) fn emit(&self, e: Event) {
        if let Some(s) = &self.on_event {
            s(&e);
        }
    }

    pub(super) fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }
}
