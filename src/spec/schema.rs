//! The experiment file's schema: what each key means and how it deserialises.

use super::{value, Template, TemplateError, Value};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Names every experiment can use in its commands besides its own variables.
pub const BUILTIN_NAMES: &[(&str, &str)] = &[
    ("mnt", "the point's mount directory (created by fslab)"),
    (
        "work",
        "a scratch directory for the point (created by fslab)",
    ),
    ("point", "the point id, e.g. `fs=ext4`"),
    (
        "iteration",
        "the workload iteration, 1-based (workload and before_each only)",
    ),
    (
        "i",
        "the repetition index of a step with `times:`, from 0 (or `times_from:`)",
    ),
    (
        "fslab",
        "the fslab executable itself (e.g. `{{fslab}} stress`); see `plan::fslab_executable`",
    ),
];

/// The document as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentDef {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub source: Vec<Citation>,
    #[serde(default)]
    pub devices: IndexMap<String, DeviceSpec>,
    /// Scalar variables (defaults that profiles and `--set` may change).
    #[serde(default)]
    pub vars: IndexMap<String, Value>,
    /// Variable → values; the points are the cartesian product.
    #[serde(default)]
    pub matrix: IndexMap<String, Vec<Value>>,
    /// Combinations to leave out: each entry matches points whose variables equal all given values.
    #[serde(default)]
    pub exclude: Vec<IndexMap<String, Value>>,
    #[serde(default)]
    pub profiles: IndexMap<String, IndexMap<String, Value>>,
    /// Programs with alternatives (`{{name}}` becomes the first available choice's words).
    #[serde(default)]
    pub tools: IndexMap<String, ToolDef>,
    /// What the machine must have for a point to run (checked by `fslab doctor` and
    /// before `fslab run`); each entry may carry its own `when:`.
    #[serde(default)]
    pub requires: Vec<Requirement>,
    /// Profile used when none is given (defaults to `quick` when it exists).
    #[serde(default)]
    pub default_profile: Option<String>,
    /// The kernel every point runs on: `host` (this machine's) or an installed kernel
    /// (`fslab kernels list`), e.g. `kernel: uml-bookworm`. Shorthand for `vars: { kernel:
    /// NAME }`, which it becomes at load (so `--set kernel=` and profiles can change it);
    /// refused beside a `kernel` var or matrix axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default)]
    pub setup: Vec<Step>,
    /// The timed command; `repeat` and `before_each` apply here only.
    pub workload: Step,
    /// Other timed commands, each with a `when:`: at a point where a variant's `when:`
    /// holds (the first such), the variant is the point's whole workload (its `run`,
    /// `times`, `before_each`, `repeat`, `replicates`, …) instead of `workload:`. E.g. a
    /// loop of processes as the post ran it, and the same operations inside one process
    /// on a matrix axis beside it.
    #[serde(default)]
    pub workload_variants: Vec<Step>,
    #[serde(default)]
    pub capture: Vec<Step>,
    #[serde(default)]
    pub teardown: Vec<Step>,
    /// Claims the source makes, checked against results (see `analysis`).
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// The claims measured at several scales of one variable: bundles of one profile
    /// that differ in it are read together, and a claim below the published scale is
    /// decided from its trend over them (`analysis::claims`, issue 28).
    #[serde(default)]
    pub scale_check: Option<crate::spec::claim::ScaleCheck>,
    /// How the scale is judged beyond the variables one by one: derived totals and the
    /// filesystem's measured fill (`analysis::claims`, issue 28).
    #[serde(default)]
    pub scale: Option<crate::spec::claim::ScaleSpec>,
    /// The values of variables under which the workload runs as the post's own tools most
    /// likely ran its command (seed 000: `{ fsstress_f: first }`, the post's fsstress kept
    /// only the first `-f` suboption). A bundle that ran with all of them is the post's
    /// reading of the workload, one that did not the other reading; between otherwise
    /// equal evidence, the claims' summary (`fslab claims --summary`) takes the post's
    /// (`analysis::claims::summary`).
    #[serde(default)]
    pub post_reading: Option<IndexMap<String, Value>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Citation {
    #[serde(default)]
    pub author: Option<String>,
    #[serde(default)]
    pub date: Option<String>,
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// File name of the seed post (`data/published/posts/`) the experiment comes from.
    #[serde(default)]
    pub seed: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    /// The storage the post measured on, when it says (`hdd`, `ssd`, `pmem`, `ramdisk`,
    /// `unknown`). A run on anything else (a loop device on an image, a disk model) is a
    /// substitution that verdicts name.
    #[serde(default)]
    pub medium: Option<PostMedium>,
}

/// The storage a post measured on.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PostMedium {
    /// A rotating disk.
    Hdd,
    /// A flash disk.
    Ssd,
    /// Persistent memory (`/dev/pmem*`).
    Pmem,
    /// A RAM disk (`brd`, `/dev/ram*`).
    Ramdisk,
    /// The post names a device but not what it is.
    Unknown,
}

impl PostMedium {
    pub fn label(self) -> &'static str {
        match self {
            PostMedium::Hdd => "a rotating disk (HDD)",
            PostMedium::Ssd => "an SSD",
            PostMedium::Pmem => "persistent memory (pmem)",
            PostMedium::Ramdisk => "a RAM disk",
            PostMedium::Unknown => "a device the post does not describe",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    /// A sparse image file in the work directory (default).
    #[default]
    File,
    /// An image file on a tmpfs that fslab mounts for the point.
    Tmpfs,
}

/// One device a point asks for: the experiment's `devices:` entry with its size
/// resolved at the point (what `plan` makes and `devices` provides).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DevicePlan {
    pub name: String,
    pub size_bytes: u64,
    pub backing: Backing,
    /// Served through the disk model (docs/media.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medium: Option<super::media::Medium>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle: Option<super::media::Throttle>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// e.g. `512MiB`, `2GiB`; may be a `{{var}}`.
    pub size: String,
    #[serde(default)]
    pub backing: Backing,
    /// A modelled disk (`hdd-2008`, `laptop-5400`, `none`, or explicit parameters): the
    /// image is served through fslab's FUSE model (docs/media.md).
    #[serde(default)]
    pub medium: Option<super::media::MediumSpec>,
    /// Block throttling of this device for the point's cgroup.
    #[serde(default)]
    pub throttle: Option<super::media::Throttle>,
}

/// One step. Exactly one action key (`run`, `mount`, `umount`, `mkdir`, `drop_caches`, `sync`).
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// A label for logs (default: the program's name).
    #[serde(default)]
    pub name: Option<String>,
    /// A command: a string split like a shell would split words (no shell runs), or a list.
    #[serde(default)]
    pub run: Option<CommandSpec>,
    /// Mount a device at `{{mnt}}` (or `at`).
    #[serde(default)]
    pub mount: Option<MountSpec>,
    /// Unmount a path (usually `{{mnt}}`).
    #[serde(default)]
    pub umount: Option<String>,
    /// Create a directory (and its parents).
    #[serde(default)]
    pub mkdir: Option<String>,
    /// `sync` then drop page, dentry and inode caches.
    #[serde(default)]
    pub drop_caches: Option<bool>,
    /// `sync(2)`.
    #[serde(default)]
    pub sync: Option<bool>,
    /// Run only at points whose variables match (value or list of values).
    #[serde(default)]
    pub when: IndexMap<String, Value>,
    /// Run the step this many times (`{{i}}` counts from 0); may be a `{{var}}`.
    #[serde(default)]
    pub times: Option<Value>,
    /// With `times`: the first `{{i}}` (default 0), so that `times: 1000` with
    /// `times_from: 1` counts `{{i}}` 1 … 1000, like a post's `for i in $(seq 1 1000)`.
    #[serde(default)]
    pub times_from: Option<Value>,
    /// Kill the step's process tree after this many seconds.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Parse the step's stdout (and stderr) as this tool's output into a bundle table.
    #[serde(default)]
    pub parse: Option<String>,
    /// Keep going when the command fails.
    #[serde(default)]
    pub ignore_errors: bool,
    /// Workload only: timed iterations per point (default 1): a count (or `{{var}}`), or
    /// `{min, max, target_cv}` to repeat until the steady-state coefficient of variation
    /// is at most `target_cv` percent.
    #[serde(default)]
    pub repeat: Option<RepeatSpec>,
    /// Workload only: independent replicates per point (default 1): a count (or
    /// `{{var}}`). Each replicate runs the point afresh (new devices, setup, the
    /// iterations, captures, teardown), so each has its own filesystem; statistics then
    /// take the replicate as the unit.
    #[serde(default)]
    pub replicates: Option<Value>,
    /// Workload only: untimed steps before each iteration (e.g. `drop_caches: true`).
    #[serde(default)]
    pub before_each: Vec<Step>,
    /// What this step needs from the machine, checked for every point the step runs at.
    #[serde(default)]
    pub requires: Vec<Requirement>,
    /// Record while the step runs: `io` = every block request of the point's devices.
    #[serde(default)]
    pub trace: Option<super::media::TraceKind>,
    /// Kernel counters read before and after every timed iteration (workload only):
    /// `counters: all` or `counters: [xfs, diskstats, vmstat, ext4]`.
    #[serde(default)]
    pub counters: Option<super::media::Counters>,
}

/// A need of an experiment, a step or a tool choice: one of `tool:` or `kernel:`.
///
/// ```yaml
/// requires:
///   - { tool: mkfs.xfs, min_version: "6.10", package: xfsprogs, when: { parent: 1 },
///       reason: "mkfs.xfs -n parent= (parent pointers) is new in xfsprogs 6.10" }
///   - { kernel: xfs_rt }
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// A program (name on PATH, path, or `{{tool}}`) that must be installed.
    #[serde(default)]
    pub tool: Option<String>,
    /// The lowest version of `tool` that works (compared numerically, `6.10` > `6.9`).
    #[serde(default)]
    pub min_version: Option<String>,
    /// The Debian package that provides `tool` (defaults to fslab's table).
    #[serde(default)]
    pub package: Option<String>,
    /// A kernel feature: `xfs_rt` (CONFIG_XFS_RT), or `fs:TYPE` (e.g. `fs:ext3`).
    #[serde(default)]
    pub kernel: Option<String>,
    /// Why it is needed, shown with the verdict.
    #[serde(default)]
    pub reason: Option<String>,
    /// Only at points whose variables match (as a step's `when:`).
    #[serde(default)]
    pub when: IndexMap<String, Value>,
}

impl Requirement {
    /// Does it apply at a point with these variables?
    pub fn applies(&self, vars: &IndexMap<String, Value>) -> bool {
        self.when
            .iter()
            .all(|(k, cond)| vars.get(k).is_some_and(|v| v.matches(cond)))
    }
}

/// Kernel features a requirement can name besides `fs:TYPE`.
pub const KERNEL_FEATURES: &[(&str, &str)] = &[
    (
        "xfs_rt",
        "XFS realtime devices (CONFIG_XFS_RT); without it mounting with rtdev= fails with ENOSYS",
    ),
    ("loop", "loop devices (CONFIG_BLK_DEV_LOOP)"),
];

/// A program with alternatives, e.g. the real `fsstress` or fslab's built-in stand-in.
///
/// ```yaml
/// tools:
///   fsstress:
///     description: the fsstress metadata workload
///     choices:
///       - fsstress
///       - run: "{{fslab}} stress"
///         stand_in: fslab's built-in fsstress-compatible workload
/// ```
/// The plan takes the first choice whose program is installed and whose `requires:`
/// hold; `--set NAME=COMMAND` picks a command instead.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    #[serde(default)]
    pub description: Option<String>,
    pub choices: Vec<ToolChoiceDef>,
}

/// One alternative: a command (string or list), or the long form.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ToolChoiceDef {
    Command(CommandSpec),
    Full(ToolChoiceFull),
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ToolChoiceFull {
    pub run: Option<CommandSpec>,
    /// Set when this choice is not the program the source used: says what it is instead.
    /// Claim verdicts mention it.
    #[serde(default)]
    pub stand_in: Option<String>,
    /// A note recorded in the bundle when this choice is taken.
    #[serde(default)]
    pub note: Option<String>,
    /// This choice is taken only when these hold (e.g. a minimum version).
    #[serde(default)]
    pub requires: Vec<Requirement>,
}

impl ToolChoiceDef {
    pub fn command(&self) -> Option<&CommandSpec> {
        match self {
            ToolChoiceDef::Command(c) => Some(c),
            ToolChoiceDef::Full(f) => f.run.as_ref(),
        }
    }
    pub fn stand_in(&self) -> Option<&str> {
        match self {
            ToolChoiceDef::Command(_) => None,
            ToolChoiceDef::Full(f) => f.stand_in.as_deref(),
        }
    }
    pub fn note(&self) -> Option<&str> {
        match self {
            ToolChoiceDef::Command(_) => None,
            ToolChoiceDef::Full(f) => f.note.as_deref(),
        }
    }
    pub fn requires(&self) -> &[Requirement] {
        match self {
            ToolChoiceDef::Command(_) => &[],
            ToolChoiceDef::Full(f) => &f.requires,
        }
    }
}

/// A command that cannot be split into words, or one of whose words is not a template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("cannot split command `{line}` into words: {reason}")]
    Split { line: String, reason: String },
    #[error(transparent)]
    Template(#[from] TemplateError),
}

impl CommandSpec {
    /// The command's words before substitution.
    pub fn templates(&self) -> Result<Vec<Template>, CommandError> {
        let words = match self {
            CommandSpec::Argv(v) => v.clone(),
            CommandSpec::Line(line) => {
                shell_words::split(line).map_err(|e| CommandError::Split {
                    line: line.clone(),
                    reason: e.to_string(),
                })?
            }
        };
        Ok(words
            .iter()
            .map(|w| Template::parse(w))
            .collect::<Result<_, _>>()?)
    }
}

/// How many timed iterations a point gets.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RepeatSpec {
    Adaptive(AdaptiveRepeat),
    Count(Value),
}

/// Repeat until the steady state is stable enough (as the Phoronix suite does).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveRepeat {
    /// At least this many iterations (count or `{{var}}`).
    pub min: Value,
    /// At most this many.
    pub max: Value,
    /// Target coefficient of variation of the steady-state iterations, in percent.
    pub target_cv: f64,
    /// The runs column it is computed on (`wall_s`, `user_s`, `sys_s`; default `wall_s`).
    #[serde(default)]
    pub metric: Option<String>,
    /// Leading iterations left out of the CV (default 1).
    #[serde(default)]
    pub warmup: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum CommandSpec {
    Line(String),
    Argv(Vec<String>),
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum MountSpec {
    Device(String),
    Full(MountFull),
}

// Hand-written so that a mistake gets a message about what was written rather than
// serde's "did not match any variant of untagged enum".
impl<'de> Deserialize<'de> for CommandSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_yaml::Value::deserialize(d)?;
        match v {
            serde_yaml::Value::String(s) => Ok(CommandSpec::Line(s)),
            serde_yaml::Value::Sequence(items) => items
                .iter()
                .map(|i| match i {
                    serde_yaml::Value::String(s) => Ok(s.clone()),
                    serde_yaml::Value::Number(n) => Ok(n.to_string()),
                    serde_yaml::Value::Bool(b) => Ok(b.to_string()),
                    other => Err(D::Error::custom(format!(
                        "a command word must be text, not {}",
                        value::yaml_kind(other)
                    ))),
                })
                .collect::<Result<_, _>>()
                .map(CommandSpec::Argv),
            other => Err(D::Error::custom(format!(
                "invalid type: {}, expected a command: a line of words (`run: mkfs.xfs -f {{{{dev.data}}}}`) or a list of words",
                value::yaml_kind(&other)
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for MountSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_yaml::Value::deserialize(d)?;
        match v {
            serde_yaml::Value::String(s) => Ok(MountSpec::Device(s)),
            serde_yaml::Value::Mapping(_) => MountFull::deserialize(v)
                .map(MountSpec::Full)
                .map_err(|e| D::Error::custom(strip_yaml_location(&e.to_string()))),
            other => Err(D::Error::custom(format!(
                "invalid type: {}, expected a device name (`mount: data`) or a mapping with `device`, `at`, `options`, `type`",
                value::yaml_kind(&other)
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for ToolChoiceDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_yaml::Value::deserialize(d)?;
        match v {
            serde_yaml::Value::Mapping(_) => ToolChoiceFull::deserialize(v)
                .map(ToolChoiceDef::Full)
                .map_err(|e| D::Error::custom(strip_yaml_location(&e.to_string()))),
            serde_yaml::Value::String(_) | serde_yaml::Value::Sequence(_) => {
                CommandSpec::deserialize(v)
                    .map(ToolChoiceDef::Command)
                    .map_err(|e| D::Error::custom(strip_yaml_location(&e.to_string())))
            }
            other => Err(D::Error::custom(format!(
                "invalid type: {}, expected a tool choice: a command (`- fsstress -n 100`) or a mapping with `run`, `stand_in`, `note`, `requires`",
                value::yaml_kind(&other)
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for RepeatSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_yaml::Value::deserialize(d)?;
        match v {
            serde_yaml::Value::Mapping(_) => AdaptiveRepeat::deserialize(v)
                .map(RepeatSpec::Adaptive)
                .map_err(|e| D::Error::custom(strip_yaml_location(&e.to_string()))),
            other => Value::from_yaml(&other)
                .map(RepeatSpec::Count)
                .map_err(D::Error::custom),
        }
    }
}

/// serde_yaml's message without its trailing " at line L column C".
fn strip_yaml_location(raw: &str) -> String {
    match raw.find(" at line ") {
        Some(i) => raw[..i].to_string(),
        None => raw.to_string(),
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MountFull {
    pub device: String,
    #[serde(default)]
    pub at: Option<String>,
    #[serde(default)]
    pub options: Option<String>,
    #[serde(default, rename = "type")]
    pub fstype: Option<String>,
}

/// A claim made by the source, with a checkable form.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    /// The claim in words, as the source makes it.
    pub text: String,
    /// Where in the source it is made (quote or section).
    #[serde(default)]
    pub quote: Option<String>,
    /// The checkable statement; interpreted by `analysis::claims`, its schema checked
    /// when the experiment is loaded.
    #[serde(default)]
    pub check: Option<crate::spec::claim::CheckSpec>,
    /// Why this claim cannot be measured by a run here (e.g. it compares two kernels):
    /// the verdict is `not applicable` with this reason; the published number is still
    /// computed from `check:`.
    #[serde(default)]
    pub not_measured: Option<String>,
    /// What the claim's mechanism needs, checked in the bundle: when it is absent the
    /// claim is `not applicable: mechanism absent`, with the evidence.
    #[serde(default)]
    pub needs: Option<crate::spec::claim::Needs>,
    /// A draft (`fslab import`): the claim as the post words it, not yet read into a
    /// check; `fslab claims` lists it as "draft, not checked" and never evaluates it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub draft: bool,
}

impl Step {
    /// The action key this step uses, for messages.
    pub fn action(&self) -> &'static str {
        if self.run.is_some() {
            "run"
        } else if self.mount.is_some() {
            "mount"
        } else if self.umount.is_some() {
            "umount"
        } else if self.mkdir.is_some() {
            "mkdir"
        } else if self.drop_caches.is_some() {
            "drop_caches"
        } else if self.sync.is_some() {
            "sync"
        } else {
            "none"
        }
    }

    /// The command's words before substitution.
    pub fn argv_templates(&self) -> Result<Vec<Template>, CommandError> {
        match &self.run {
            None => Ok(Vec::new()),
            Some(c) => c.templates(),
        }
    }

    /// The program a `run:` step starts, its first word rendered with `lookup`; None for
    /// other steps and when it is not known before the run (e.g. `{{dev.data}}`).
    pub fn program(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Option<String> {
        let argv = self.argv_templates().ok()?;
        let w = argv.first()?.render_partial(lookup).into_iter().next()?;
        (!w.contains("{{") && !w.is_empty()).then_some(w)
    }

    /// `{{i}}` of the step's `k`-th run (from 0): `k` plus `times_from`.
    pub fn index_of(&self, k: u32) -> i64 {
        let from = match &self.times_from {
            Some(Value::Int(n)) => *n,
            _ => 0,
        };
        from.saturating_add(i64::from(k))
    }

    /// Every template string in the step (for checking names).
    pub fn templates(&self) -> Result<Vec<Template>, CommandError> {
        let mut out = self.argv_templates()?;
        let mut push = |s: &str| -> Result<(), CommandError> {
            out.push(Template::parse(s)?);
            Ok(())
        };
        if let Some(m) = &self.mount {
            match m {
                MountSpec::Device(d) => push(d)?,
                MountSpec::Full(f) => {
                    push(&f.device)?;
                    if let Some(a) = &f.at {
                        push(a)?;
                    }
                    if let Some(o) = &f.options {
                        push(o)?;
                    }
                }
            }
        }
        for s in [&self.umount, &self.mkdir].into_iter().flatten() {
            push(s)?;
        }
        if let Some(Value::Str(s)) = &self.times {
            push(s)?;
        }
        Ok(out)
    }
}

impl ExperimentDef {
    /// The workload at a point with these variables: the first of `workload_variants`
    /// whose `when:` holds, else `workload`.
    pub fn workload_at(&self, vars: &IndexMap<String, Value>) -> &Step {
        self.workload_variants
            .iter()
            .find(|s| {
                !s.when.is_empty()
                    && s.when
                        .iter()
                        .all(|(k, cond)| vars.get(k).is_some_and(|v| v.matches(cond)))
            })
            .unwrap_or(&self.workload)
    }
}
