//! Experiment files: the YAML schema, loading, and located errors.
//!
//! An experiment names logical devices, a parameter matrix, profiles, and the steps to
//! run at each matrix point. Loading checks everything that can be checked without
//! touching the system: unknown keys, types, `{{name}}` references, empty matrix axes,
//! profiles naming unknown variables, literal device paths. Every error carries the
//! file, line and column of the offending text.

use crate::parse::Kind;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

mod locate;
mod template;
mod value;
use locate::{closest, suggest, yaml_error, Locator};
pub use template::{Piece, Template};
pub use value::Value;

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
    ("i", "the repetition index of a step with `times:`, 0-based"),
    (
        "fslab",
        "the fslab executable itself (e.g. `{{fslab}} stress`); see `plan::fslab_executable`",
    ),
];

/// A loaded, validated experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Experiment {
    #[serde(flatten)]
    pub def: ExperimentDef,
    /// Where it was loaded from (None when loaded from a string).
    pub file: Option<PathBuf>,
    /// The exact text it was loaded from.
    pub source_text: String,
}

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
    #[serde(default)]
    pub setup: Vec<Step>,
    /// The timed command; `repeat` and `before_each` apply here only.
    pub workload: Step,
    #[serde(default)]
    pub capture: Vec<Step>,
    #[serde(default)]
    pub teardown: Vec<Step>,
    /// Claims the source makes, checked against results (see `analysis`).
    #[serde(default)]
    pub claims: Vec<Claim>,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DevicePlan {
    pub name: String,
    pub size_bytes: u64,
    pub backing: Backing,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// e.g. `512MiB`, `2GiB`; may be a `{{var}}`.
    pub size: String,
    #[serde(default)]
    pub backing: Backing,
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
    /// Workload only: untimed steps before each iteration (e.g. `drop_caches: true`).
    #[serde(default)]
    pub before_each: Vec<Step>,
    /// What this step needs from the machine, checked for every point the step runs at.
    #[serde(default)]
    pub requires: Vec<Requirement>,
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

impl CommandSpec {
    /// The command's words before substitution.
    pub fn templates(&self) -> Result<Vec<Template>, String> {
        let words = match self {
            CommandSpec::Argv(v) => v.clone(),
            CommandSpec::Line(line) => shell_words::split(line)
                .map_err(|e| format!("cannot split command `{line}` into words: {e}"))?,
        };
        words.iter().map(|w| Template::parse(w)).collect()
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
    /// The checkable statement; interpreted by `analysis::claims`.
    #[serde(default)]
    pub check: Option<serde_yaml::Value>,
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
    pub fn argv_templates(&self) -> Result<Vec<Template>, String> {
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

    /// Every template string in the step (for checking names).
    pub fn templates(&self) -> Result<Vec<Template>, String> {
        let mut out = self.argv_templates()?;
        let mut push = |s: &str| -> Result<(), String> {
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

/// A problem in an experiment file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub file: String,
    /// 1-based; 0 when unknown.
    pub line: usize,
    /// 1-based; 0 when unknown.
    pub column: usize,
    pub message: String,
    /// The offending line of the file.
    pub snippet: Option<String>,
    /// What would be right.
    pub help: Option<String>,
}

impl std::error::Error for SpecError {}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )?;
        } else {
            write!(f, "{}: {}", self.file, self.message)?;
        }
        if let Some(snippet) = &self.snippet {
            let gutter = self.line.to_string();
            write!(f, "\n {gutter} | {snippet}")?;
            if self.column > 0 {
                let pad = " ".repeat(gutter.len());
                let caret_pad: String = snippet
                    .chars()
                    .take(self.column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                write!(f, "\n {pad} | {caret_pad}^")?;
            }
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl Experiment {
    /// Load and validate an experiment file.
    pub fn load(path: impl AsRef<Path>) -> Result<Experiment, SpecError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            file: path.display().to_string(),
            line: 0,
            column: 0,
            message: format!("cannot read experiment file: {e}"),
            snippet: None,
            help: None,
        })?;
        let mut exp = Self::from_str_named(&text, &path.display().to_string())?;
        exp.file = Some(path.to_path_buf());
        Ok(exp)
    }

    /// Load from text; `name` is used in error messages in place of a file name.
    pub fn from_str_named(text: &str, name: &str) -> Result<Experiment, SpecError> {
        let loc = Locator::new(name, text);
        let def: ExperimentDef = serde_yaml::from_str(text).map_err(|e| yaml_error(&loc, &e))?;
        validate(&def, &loc)?;
        Ok(Experiment {
            def,
            file: None,
            source_text: text.to_string(),
        })
    }

    pub fn id(&self) -> &str {
        &self.def.id
    }

    pub fn title(&self) -> &str {
        &self.def.title
    }

    /// The profile used when none is named.
    pub fn default_profile(&self) -> Option<&str> {
        self.def
            .default_profile
            .as_deref()
            .or_else(|| self.def.profiles.contains_key("quick").then_some("quick"))
    }

    /// Every program the experiment runs (first word of each `run`), for version capture.
    pub fn programs(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for step in self.all_steps() {
            if let Ok(argv) = step.argv_templates() {
                if let Some(Some(lit)) = argv.first().map(Template::literal) {
                    if !out.contains(&lit) {
                        out.push(lit);
                    }
                }
            }
        }
        out
    }

    /// All steps in run order.
    pub fn all_steps(&self) -> impl Iterator<Item = &Step> {
        let d = &self.def;
        d.setup
            .iter()
            .chain(d.workload.before_each.iter())
            .chain(std::iter::once(&d.workload))
            .chain(d.capture.iter())
            .chain(d.teardown.iter())
    }

    pub fn display_name(&self) -> String {
        self.file
            .as_ref()
            .map_or_else(|| "<experiment>".to_string(), |p| p.display().to_string())
    }
}

/// Device paths an experiment may name literally (they are not storage).
pub const HARMLESS_DEV_PATHS: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/",
    "/dev/shm",
];

/// A name that can be written as `{{name}}` and used as a table column.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A value as it is written in YAML, for messages.
fn yaml_text(v: &Value) -> String {
    match v {
        Value::List(items) => format!(
            "[{}]",
            items.iter().map(yaml_text).collect::<Vec<_>>().join(", ")
        ),
        Value::Str(s) if s.parse::<f64>().is_ok() || s.is_empty() => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// Where a step is written: its block (the workload's section, or the item of its
/// sequence) when it can be found.
fn step_range(loc: &Locator<'_>, section: &str, index: usize) -> Option<std::ops::Range<usize>> {
    match section {
        "workload" => loc.section("workload"),
        "before_each" => loc
            .section("workload")
            .and_then(|w| loc.block(w, "before_each"))
            .and_then(|b| loc.item(b, index)),
        s => loc.section(s).and_then(|r| loc.item(r, index)),
    }
}

/// What the experiment's names are, for checks and suggestions.
struct Names<'d> {
    def: &'d ExperimentDef,
}

impl Names<'_> {
    fn is_var(&self, n: &str) -> bool {
        self.def.matrix.contains_key(n) || self.def.vars.contains_key(n)
    }

    fn vars(&self) -> Vec<&str> {
        self.def
            .matrix
            .keys()
            .chain(self.def.vars.keys())
            .map(String::as_str)
            .collect()
    }

    /// Can `{{n}}` be a list here (a list var, a list-valued axis value, or a profile
    /// that sets a var to a list)?
    fn may_be_list(&self, n: &str) -> bool {
        let d = self.def;
        matches!(d.vars.get(n), Some(Value::List(_)))
            || d.matrix
                .get(n)
                .is_some_and(|vs| vs.iter().any(|v| matches!(v, Value::List(_))))
            || (d.vars.contains_key(n)
                && d.profiles
                    .values()
                    .any(|p| matches!(p.get(n), Some(Value::List(_)))))
    }

    /// Every name a command may use, for "did you mean".
    fn all(&self) -> Vec<String> {
        let mut c: Vec<String> = self.vars().into_iter().map(str::to_string).collect();
        c.extend(self.def.devices.keys().map(|d| format!("dev.{d}")));
        c.extend(self.def.tools.keys().cloned());
        c.extend(BUILTIN_NAMES.iter().map(|(b, _)| b.to_string()));
        c
    }
}

/// A count (`repeat`, `times`): a whole number ≥ 1, or a `{{var}}` whose values are.
fn check_count(
    v: &Value,
    what: &str,
    names: &Names<'_>,
    pos: (usize, usize),
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    let bad = |shown: String, help: String| {
        let mut e = loc.at_pos(
            pos,
            format!("`{what}` must be a whole number ≥ 1 or a `{{{{var}}}}`, not {shown}"),
        );
        e.help = Some(help);
        e
    };
    let whole = |v: &Value| match v {
        Value::Int(n) => *n >= 1 && *n <= i64::from(u32::MAX),
        Value::Str(s) => s.trim().parse::<u32>().is_ok_and(|n| n >= 1),
        _ => false,
    };
    match v {
        Value::Str(s) if s.contains("{{") => {
            let t = Template::parse(s).map_err(|m| loc.at_pos(pos, m))?;
            // A single reference to a var or an axis: check the values it can take.
            if let [Piece::Var(n)] = t.pieces.as_slice() {
                let d = names.def;
                let mut values: Vec<(String, &Value)> = Vec::new();
                if let Some(x) = d.vars.get(n) {
                    values.push((format!("vars.{n}"), x));
                }
                if let Some(axis) = d.matrix.get(n) {
                    values.extend(axis.iter().map(|x| (format!("matrix.{n}"), x)));
                }
                for (p, settings) in &d.profiles {
                    if let Some(x) = settings.get(n) {
                        values.push((format!("profile `{p}`"), x));
                    }
                }
                for (whence, x) in values {
                    let list_ok = d.matrix.contains_key(n)
                        && matches!(x, Value::List(items) if items.iter().all(&whole));
                    if !whole(x) && !list_ok {
                        return Err(bad(
                            format!(
                                "`{}` ({whence} gives `{{{{{n}}}}}` that value)",
                                yaml_text(x)
                            ),
                            format!("give `{n}` a whole number ≥ 1"),
                        ));
                    }
                }
            }
            Ok(())
        }
        v if whole(v) => Ok(()),
        Value::List(_) => Err(bad(
            format!("the list `{}`", yaml_text(v)),
            format!(
                "e.g. `{what}: 10`; a count per point comes from a `{{{{var}}}}` or a matrix axis"
            ),
        )),
        other => Err(bad(
            format!("`{}`", yaml_text(other)),
            format!("e.g. `{what}: 10`"),
        )),
    }
}

fn validate(def: &ExperimentDef, loc: &Locator<'_>) -> Result<(), SpecError> {
    let names = Names { def };
    let fail = |pos: (usize, usize), msg: String, help: Option<String>| {
        let mut e = loc.at_pos(pos, msg);
        e.help = help;
        e
    };
    let section_start = |s: &str| loc.section(s).map(|r| loc.start_of(&r)).unwrap_or((0, 0));
    let key_in_section = |s: &str, key: &str| -> (usize, usize) {
        loc.section(s)
            .and_then(|r| loc.key_in(r, key))
            .unwrap_or_else(|| loc.find_key(key, Some(s)))
    };
    let value_in_section = |s: &str, key: &str| -> (usize, usize) {
        loc.section(s)
            .and_then(|r| loc.value_in(r, key))
            .unwrap_or_else(|| section_start(s))
    };

    if !plain_name(&def.id) {
        return Err(fail(
            value_in_section("id", "id"),
            format!("experiment id `{}` is not a plain name", def.id),
            Some("use letters, digits, `-` and `_` only (it names the results directory)".into()),
        ));
    }

    // Devices: plain names, sizes that parse or use known variables.
    for (name, dev) in &def.devices {
        let block = loc.section("devices").and_then(|r| loc.block(r, name));
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
            return Err(fail(
                key_in_section("devices", name),
                format!("device name `{name}` is not a plain name"),
                Some("use letters, digits and `_` (it is written `{{dev.NAME}}`)".into()),
            ));
        }
        let size_pos = block
            .clone()
            .and_then(|b| loc.value_in(b, "size"))
            .unwrap_or_else(|| key_in_section("devices", name));
        if dev.size.contains("{{") {
            let t = Template::parse(&dev.size).map_err(|m| loc.at_pos(size_pos, m))?;
            for n in t.names() {
                if !names.is_var(n) {
                    let pos = block
                        .clone()
                        .and_then(|b| loc.template_use_in(b, n))
                        .unwrap_or(size_pos);
                    return Err(fail(
                        pos,
                        format!("undefined name `{{{{{n}}}}}` in the size of device `{name}`"),
                        suggest(n, names.vars().into_iter()).or_else(|| {
                            Some(format!(
                                "a size may use vars and matrix axes; define `{n}` under `vars:`, e.g. `{n}: 1GiB`"
                            ))
                        }),
                    ));
                }
            }
        } else {
            parse_size(&dev.size).map_err(|m| fail(size_pos, m, None))?;
        }
    }

    // Variable and axis names.
    for (kind, section, keys) in [
        (
            "matrix axis",
            "matrix",
            def.matrix.keys().collect::<Vec<_>>(),
        ),
        ("variable", "vars", def.vars.keys().collect::<Vec<_>>()),
    ] {
        for name in keys {
            let pos = key_in_section(section, name);
            if !plain_name(name) {
                return Err(fail(
                    pos,
                    format!("{kind} name `{name}` is not a plain name"),
                    Some("use letters, digits, `_` and `-` (it is written `{{NAME}}` and names a column)".into()),
                ));
            }
            if let Some((_, what)) = BUILTIN_NAMES.iter().find(|(b, _)| *b == name.as_str()) {
                return Err(fail(
                    pos,
                    format!("{kind} `{name}` has the name of one fslab provides: {what}"),
                    Some(format!("rename it, e.g. `my_{name}`")),
                ));
            }
            if crate::store::RUN_COLUMNS.contains(&name.as_str()) {
                return Err(fail(
                    pos,
                    format!(
                        "{kind} `{name}` has the name of a column fslab writes in runs.parquet"
                    ),
                    Some(format!(
                        "rename it, e.g. `my_{name}`; fslab's own columns are {}",
                        crate::store::RUN_COLUMNS.join(", ")
                    )),
                ));
            }
        }
    }
    for name in def.matrix.keys() {
        if def.vars.contains_key(name) {
            return Err(fail(
                key_in_section("vars", name),
                format!("`{name}` is both a variable and a matrix axis"),
                Some("keep it in one place: a matrix axis with one value, or a var".into()),
            ));
        }
    }
    for (name, values) in &def.matrix {
        let block = loc.section("matrix").and_then(|r| loc.block(r, name));
        if values.is_empty() {
            return Err(fail(
                key_in_section("matrix", name),
                format!("matrix axis `{name}` has no values"),
                Some(format!("give at least one value, e.g. `{name}: [a, b]`")),
            ));
        }
        for (i, v) in values.iter().enumerate() {
            let label = v.label();
            if let Some(first) = values[..i].iter().find(|w| w.label() == label) {
                let pos = block
                    .clone()
                    .and_then(|b| {
                        let from = loc
                            .value_in(b.clone(), name)
                            .map_or(b.start, |(l, c)| loc.offset(l, c));
                        loc.token_in(from..b.end, &label, 1)
                    })
                    .unwrap_or_else(|| key_in_section("matrix", name));
                let same = if first == v {
                    String::new()
                } else {
                    format!(
                        " (`{}` and `{}` make the same point)",
                        yaml_text(first),
                        yaml_text(v)
                    )
                };
                return Err(fail(
                    pos,
                    format!("matrix axis `{name}` lists `{label}` twice{same}, which would make duplicate points"),
                    Some("remove one: a point is named by its values' text".into()),
                ));
            }
        }
    }
    // Tools: plain names of their own, each choice a command using vars, axes and
    // `{{fslab}}` only.
    let tools_section = loc.section("tools");
    for name in def.tools.keys() {
        let clash = if def.vars.contains_key(name) {
            Some("a var")
        } else if def.matrix.contains_key(name) {
            Some("a matrix axis")
        } else if BUILTIN_NAMES.iter().any(|(b, _)| b == name) {
            Some("a built-in name")
        } else {
            None
        };
        if let Some(what) = clash {
            return Err(fail(
                key_in_section("tools", name),
                format!("tool `{name}` is also {what}"),
                Some("give the tool its own name".into()),
            ));
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(fail(
                key_in_section("tools", name),
                format!("tool name `{name}` is not a plain name"),
                Some("use letters, digits and `_` (it is written `{{NAME}}`)".into()),
            ));
        }
    }
    for (name, tool) in &def.tools {
        let tool_block = tools_section.clone().and_then(|r| loc.block(r, name));
        let tool_pos = key_in_section("tools", name);
        let choices_block = tool_block.clone().and_then(|b| loc.block(b, "choices"));
        if tool.choices.is_empty() {
            return Err(fail(
                tool_block
                    .clone()
                    .and_then(|b| loc.value_in(b, "choices"))
                    .unwrap_or(tool_pos),
                format!("tool `{name}` has no choices"),
                Some("list at least one command under `choices:`".into()),
            ));
        }
        for (i, choice) in tool.choices.iter().enumerate() {
            let what = format!("tool `{name}` choice {}", i + 1);
            let item = choices_block.clone().and_then(|b| loc.item(b, i));
            let item_pos = item
                .as_ref()
                .map(|r| loc.start_of(r))
                .or_else(|| tool_block.clone().and_then(|b| loc.key_in(b, "choices")))
                .unwrap_or(tool_pos);
            let Some(cmd) = choice.command() else {
                return Err(fail(
                    item_pos,
                    format!("{what} has no `run:` command"),
                    Some("give the choice a command: `- run: PROGRAM ARGS`, or just `- PROGRAM ARGS`".into()),
                ));
            };
            let cmd_pos = match choice {
                ToolChoiceDef::Full(_) => item
                    .clone()
                    .and_then(|r| loc.value_in(r, "run"))
                    .unwrap_or(item_pos),
                ToolChoiceDef::Command(_) => item_pos,
            };
            if let CommandSpec::Line(line) = cmd {
                if let Err((_, m)) = Template::parse_at(line) {
                    return Err(fail(
                        cmd_pos,
                        format!("{what}: {m}"),
                        Some(template_help(&m)),
                    ));
                }
            }
            let templates = cmd.templates().map_err(|m| {
                fail(
                    cmd_pos,
                    format!("{what}: {m}"),
                    Some("quotes pair up as in a shell (no shell runs); give the command as a list of words".into()),
                )
            })?;
            if templates.is_empty() {
                return Err(fail(
                    cmd_pos,
                    format!("{what} is an empty command"),
                    Some("give the program to run, e.g. `- fsstress`".into()),
                ));
            }
            for t in &templates {
                for n in t.names() {
                    if !(names.is_var(n) || n == "fslab") {
                        let pos = item
                            .clone()
                            .and_then(|r| loc.template_use_in(r, n))
                            .unwrap_or(cmd_pos);
                        return Err(fail(
                            pos,
                            format!("{what}: undefined name `{{{{{n}}}}}`"),
                            suggest(n, names.vars().into_iter().chain(["fslab"])).or_else(|| Some(
                                "tool choices are resolved when the plan is made: they may use vars, matrix axes and `{{fslab}}` only"
                                    .into(),
                            )),
                        ));
                    }
                }
            }
            let requires = item.clone().and_then(|r| loc.block(r, "requires"));
            for (j, r) in choice.requires().iter().enumerate() {
                let at = requires.clone().and_then(|b| loc.item(b, j));
                validate_requirement(r, &what, &names, at, item_pos, loc)?;
            }
        }
    }
    let requires = loc.section("requires");
    for (i, r) in def.requires.iter().enumerate() {
        let at = requires.clone().and_then(|b| loc.item(b, i));
        validate_requirement(
            r,
            &format!("requires entry {}", i + 1),
            &names,
            at,
            section_start("requires"),
            loc,
        )?;
    }
    for (i, ex) in def.exclude.iter().enumerate() {
        let item = loc.section("exclude").and_then(|r| loc.item(r, i));
        for k in ex.keys() {
            if !def.matrix.contains_key(k) {
                let pos = item
                    .clone()
                    .and_then(|r| loc.key_in(r, k))
                    .unwrap_or_else(|| key_in_section("exclude", k));
                return Err(fail(
                    pos,
                    format!(
                        "exclude entry {} names `{k}`, which is not a matrix axis",
                        i + 1
                    ),
                    suggest(k, def.matrix.keys().map(String::as_str)).or_else(|| {
                        Some(format!(
                            "matrix axes: {}",
                            def.matrix.keys().cloned().collect::<Vec<_>>().join(", ")
                        ))
                    }),
                ));
            }
        }
    }
    for (pname, settings) in &def.profiles {
        let block = loc.section("profiles").and_then(|r| loc.block(r, pname));
        for k in settings.keys() {
            if !names.is_var(k) {
                let pos = block
                    .clone()
                    .and_then(|b| loc.key_in(b, k))
                    .unwrap_or_else(|| key_in_section("profiles", k));
                return Err(fail(
                    pos,
                    format!(
                        "profile `{pname}` sets `{k}`, which is neither a var nor a matrix axis"
                    ),
                    suggest(k, names.vars().into_iter()).or_else(|| {
                        Some(format!(
                            "a profile sets existing names: {}",
                            names.vars().join(", ")
                        ))
                    }),
                ));
            }
        }
    }
    if let Some(p) = &def.default_profile {
        if !def.profiles.contains_key(p) {
            let known = def.profiles.keys().cloned().collect::<Vec<_>>().join(", ");
            return Err(fail(
                value_in_section("default_profile", "default_profile"),
                format!("default_profile `{p}` is not defined under `profiles`"),
                suggest(p, def.profiles.keys().map(String::as_str)).or_else(|| {
                    Some(if known.is_empty() {
                        "define it under `profiles:`, or remove `default_profile`".into()
                    } else {
                        format!("profiles: {known}")
                    })
                }),
            ));
        }
    }

    let sections: [(&str, &[Step]); 5] = [
        ("setup", &def.setup),
        ("before_each", &def.workload.before_each),
        ("workload", std::slice::from_ref(&def.workload)),
        ("capture", &def.capture),
        ("teardown", &def.teardown),
    ];
    for (section, steps) in sections {
        for (i, step) in steps.iter().enumerate() {
            validate_step(step, section, i, &names, loc)?;
        }
    }
    if let Some(r) = &def.workload.repeat {
        let workload = loc.section("workload");
        let pos = workload
            .clone()
            .and_then(|w| loc.value_in(w, "repeat"))
            .unwrap_or_else(|| section_start("workload"));
        match r {
            RepeatSpec::Count(v) => check_count(v, "repeat", &names, pos, loc)?,
            RepeatSpec::Adaptive(a) => {
                let block = workload.and_then(|w| loc.block(w, "repeat"));
                let at = |k: &str| {
                    block
                        .clone()
                        .and_then(|b| loc.value_in(b, k))
                        .unwrap_or(pos)
                };
                check_count(&a.min, "min", &names, at("min"), loc)?;
                check_count(&a.max, "max", &names, at("max"), loc)?;
                if let (Some(min), Some(max)) = (a.min.as_u64(), a.max.as_u64()) {
                    if min > max {
                        return Err(fail(
                            at("max"),
                            format!("`repeat`: `max` ({max}) is below `min` ({min})"),
                            Some("e.g. `repeat: { min: 3, max: 20, target_cv: 2 }`".into()),
                        ));
                    }
                }
                if !(a.target_cv > 0.0 && a.target_cv.is_finite()) {
                    return Err(fail(
                        at("target_cv"),
                        format!(
                            "`repeat`: `target_cv` is a percentage above 0, not {}",
                            a.target_cv
                        ),
                        Some(
                            "e.g. `target_cv: 2` (stop once the steady-state CV is at most 2%)"
                                .into(),
                        ),
                    ));
                }
                if let Some(m) = &a.metric {
                    const METRICS: [&str; 3] = ["wall_s", "user_s", "sys_s"];
                    if !METRICS.contains(&m.as_str()) {
                        return Err(fail(
                            at("metric"),
                            format!(
                                "`repeat`: `metric` must be wall_s, user_s or sys_s, not `{m}`"
                            ),
                            suggest(m, METRICS.iter().copied()),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

const ACTIONS: &str = "run, mount, umount, mkdir, drop_caches, sync";

fn validate_step(
    step: &Step,
    section: &str,
    i: usize,
    names: &Names<'_>,
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    let def = names.def;
    let what = if section == "workload" {
        "the workload".to_string()
    } else {
        format!("{section} step {}", i + 1)
    };
    let range = step_range(loc, section, i);
    let fallback = loc
        .section(if section == "before_each" {
            "workload"
        } else {
            section
        })
        .map(|r| loc.start_of(&r))
        .unwrap_or((0, 0));
    let step_pos = range.as_ref().map_or(fallback, |r| loc.start_of(r));
    let key_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.key_in(r, k))
            .unwrap_or(step_pos)
    };
    let value_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.value_in(r, k))
            .unwrap_or(step_pos)
    };
    let fail = |pos: (usize, usize), msg: String, help: Option<String>| {
        let mut e = loc.at_pos(pos, msg);
        e.help = help;
        e
    };
    let actions: Vec<&str> = [
        ("run", step.run.is_some()),
        ("mount", step.mount.is_some()),
        ("umount", step.umount.is_some()),
        ("mkdir", step.mkdir.is_some()),
        ("drop_caches", step.drop_caches.is_some()),
        ("sync", step.sync.is_some()),
    ]
    .into_iter()
    .filter(|(_, b)| *b)
    .map(|(a, _)| a)
    .collect();
    match actions.as_slice() {
        [_] => {}
        [] => {
            return Err(fail(
                step_pos,
                format!("{what} has no action"),
                Some(format!("give it one of: {ACTIONS}")),
            ))
        }
        [.., last] => {
            let listed = actions[..actions.len() - 1]
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(fail(
                key_pos(last),
                format!(
                    "{what} has {} actions, {listed} and `{last}`",
                    actions.len()
                ),
                Some("a step does one thing: split it into one step per action".into()),
            ));
        }
    }
    if section != "workload" && (step.repeat.is_some() || !step.before_each.is_empty()) {
        let key = if step.repeat.is_some() {
            "repeat"
        } else {
            "before_each"
        };
        return Err(fail(
            key_pos(key),
            format!("{what}: `{key}` belongs to the workload only"),
            Some(if key == "repeat" {
                "move it under `workload:`; to run a step several times use `times:`".into()
            } else {
                "move it under `workload:`".into()
            }),
        ));
    }
    if section == "workload" && step.run.is_none() {
        return Err(fail(
            key_pos(actions.first().copied().unwrap_or("workload")),
            format!(
                "the workload must be a `run:` command (it is what is timed), not `{}`",
                step.action()
            ),
            Some("e.g. `run: fs_mark -d {{mnt}} -n 1000`; mounts and other preparation go under `setup:`".into()),
        ));
    }
    if let Some(t) = step.timeout {
        if !(t.is_finite() && t > 0.0) {
            return Err(fail(
                value_pos("timeout"),
                format!("{what}: `timeout` must be a number of seconds > 0, not `{t}`"),
                Some("e.g. `timeout: 600`".into()),
            ));
        }
    }
    if let Some(kind) = &step.parse {
        if kind != "blockmap" && kind.parse::<Kind>().is_err() {
            let known: Vec<&str> = Kind::ALL
                .iter()
                .map(|k| k.name())
                .chain(["blockmap"])
                .collect();
            return Err(fail(
                value_pos("parse"),
                format!("{what}: unknown parse kind `{kind}`"),
                suggest(kind, known.iter().copied())
                    .or(Some(format!("known kinds: {}", known.join(", ")))),
            ));
        }
    }
    for k in step.when.keys() {
        if !names.is_var(k) {
            return Err(fail(
                key_pos(k),
                format!("{what}: `when` names `{k}`, which is neither a var nor a matrix axis"),
                suggest(k, names.vars().into_iter()),
            ));
        }
    }
    if let Some(t) = &step.times {
        check_count(t, "times", names, value_pos("times"), loc)?;
    }
    // A mount names a declared device (or `{{dev.NAME}}`).
    let mounted = match &step.mount {
        Some(MountSpec::Device(d)) => Some((d, value_pos("mount"))),
        Some(MountSpec::Full(f)) => Some((&f.device, value_pos("device"))),
        None => None,
    };
    if let Some((d, pos)) = mounted {
        if !d.contains("{{") && !def.devices.contains_key(d) {
            let declared: Vec<&str> = def.devices.keys().map(String::as_str).collect();
            return Err(fail(
                pos,
                format!("{what} mounts `{d}`, which is not a device declared under `devices:`"),
                suggest(d, declared.iter().copied()).or_else(|| {
                    Some(if declared.is_empty() {
                        "declare it, e.g. `devices: { data: { size: 1GiB } }`".into()
                    } else {
                        format!("declared devices: {}", declared.join(", "))
                    })
                }),
            ));
        }
    }
    // Template syntax over the whole command line first: `{{a + 1}}` would otherwise be
    // split into words and reported as a stray `{{`.
    if let Some(CommandSpec::Line(line)) = &step.run {
        if let Err((at, m)) = Template::parse_at(line) {
            let pos = range
                .clone()
                .and_then(|r| {
                    let snippet: String = line[at..].chars().take(24).collect();
                    loc.find_in(r.clone(), &snippet)
                        .or_else(|| loc.find_in(r, "{{"))
                })
                .unwrap_or(step_pos);
            return Err(fail(pos, format!("{what}: {m}"), Some(template_help(&m))));
        }
    }
    let templates = step.templates().map_err(|m| {
        fail(
            value_pos("run"),
            format!("{what}: {m}"),
            Some("quotes pair up as in a shell (no shell runs); put a lone `'` inside double quotes, or give the command as a list of words".into()),
        )
    })?;
    for t in &templates {
        for name in t.names() {
            let ok = if let Some(dev) = name
                .strip_prefix("dev.")
                .or_else(|| name.strip_prefix("image."))
            {
                def.devices.contains_key(dev)
            } else if name == "iteration" {
                section == "workload" || section == "before_each"
            } else {
                names.is_var(name)
                    || def.tools.contains_key(name)
                    || BUILTIN_NAMES.iter().any(|(b, _)| *b == name)
            };
            let pos = range
                .clone()
                .and_then(|r| loc.template_use_in(r, name))
                .unwrap_or(step_pos);
            if !ok {
                let candidates = names.all();
                let help = if name == "iteration" {
                    Some("`{{iteration}}` exists only in the workload and before_each".into())
                } else if let Some(dev) = name
                    .strip_prefix("dev.")
                    .or_else(|| name.strip_prefix("image."))
                {
                    let declared: Vec<&str> = def.devices.keys().map(String::as_str).collect();
                    suggest(dev, declared.iter().copied())
                        .map(|_| {
                            let c = closest(dev, declared.iter().copied()).unwrap_or_default();
                            format!("did you mean `{}{c}`?", &name[..name.len() - dev.len()])
                        })
                        .or_else(|| {
                            Some(format!(
                                "declare it under `devices:`, e.g. `{dev}: {{ size: 1GiB }}`"
                            ))
                        })
                } else {
                    suggest(name, candidates.iter().map(String::as_str)).or_else(|| {
                        Some(format!(
                            "define it under `vars:` or `matrix:`, or use one of: {}",
                            candidates.join(", ")
                        ))
                    })
                };
                return Err(fail(
                    pos,
                    format!("undefined name `{{{{{name}}}}}` in {section}"),
                    help,
                ));
            }
            let whole_word = matches!(t.pieces.as_slice(), [Piece::Var(_)]);
            if !whole_word && names.may_be_list(name) {
                return Err(fail(
                    pos,
                    format!(
                        "{what}: `{{{{{name}}}}}` is a list and can only stand as a whole word, not inside `{}`",
                        t.raw
                    ),
                    Some(format!(
                        "write `{{{{{name}}}}}` as its own word (it becomes one argument per item), or make `{name}` a single value"
                    )),
                ));
            }
        }
        for piece in &t.pieces {
            let Piece::Lit(lit) = piece else { continue };
            let mut rest = lit.as_str();
            while let Some(i) = rest.find("/dev/") {
                let tail = &rest[i..];
                let end = tail
                    .find([',', ' ', ':', ';', '=', '"', '\''])
                    .unwrap_or(tail.len());
                let path = &tail[..end];
                if !HARMLESS_DEV_PATHS.iter().any(|h| path.starts_with(h)) {
                    let pos = range
                        .clone()
                        .and_then(|r| loc.find_in(r, path))
                        .unwrap_or(step_pos);
                    return Err(fail(
                        pos,
                        format!("{what} names the device `{path}` directly"),
                        Some(
                            "experiment files name logical devices only: declare one under `devices:` and write `{{dev.NAME}}`; \
                             a real device can only be mapped by the user (`fslab run --device NAME=/dev/...` plus the local config)"
                                .into(),
                        ),
                    ));
                }
                rest = &tail[end.max(1)..];
            }
        }
    }
    let requires = range.clone().and_then(|r| loc.block(r, "requires"));
    for (j, r) in step.requires.iter().enumerate() {
        let at = requires.clone().and_then(|b| loc.item(b, j));
        validate_requirement(r, &what, names, at, key_pos("requires"), loc)?;
    }
    Ok(())
}

/// A `requires:` entry: exactly one of `tool:` (a program, with a version that parses)
/// or `kernel:` (a known feature or `fs:TYPE`); `when:` names vars and axes. `range` is
/// the entry's item when it can be found; `fallback` where to point otherwise.
fn validate_requirement(
    r: &Requirement,
    what: &str,
    names: &Names<'_>,
    range: Option<std::ops::Range<usize>>,
    fallback: (usize, usize),
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    let def = names.def;
    let start = range.as_ref().map_or(fallback, |r| loc.start_of(r));
    let key_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.key_in(r, k))
            .unwrap_or(start)
    };
    let value_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.value_in(r, k))
            .unwrap_or(start)
    };
    let fail = |pos: (usize, usize), msg: String, help: Option<String>| {
        let mut e = loc.at_pos(pos, format!("{what}: {msg}"));
        e.help = help;
        e
    };
    match (&r.tool, &r.kernel) {
        (Some(_), Some(_)) => {
            return Err(fail(
                key_pos("kernel"),
                "a requirement names exactly one of `tool:` or `kernel:`, this one both".into(),
                Some("split it into two entries".into()),
            ))
        }
        (None, None) => {
            return Err(fail(
                start,
                "a requirement names exactly one of `tool:` or `kernel:`".into(),
                Some(
                    "e.g. `{ tool: mkfs.xfs, min_version: \"6.10\" }` or `{ kernel: xfs_rt }`"
                        .into(),
                ),
            ))
        }
        (None, Some(k)) => {
            for key in ["min_version", "package"] {
                let given = if key == "package" {
                    r.package.is_some()
                } else {
                    r.min_version.is_some()
                };
                if given {
                    return Err(fail(
                        key_pos(key),
                        format!("`kernel: {k}` takes no `{key}`"),
                        Some("`min_version` and `package` belong to a `tool:` requirement".into()),
                    ));
                }
            }
            let known = KERNEL_FEATURES.iter().any(|(n, _)| n == k)
                || k.strip_prefix("fs:").is_some_and(|t| {
                    !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                });
            if !known {
                let features: Vec<&str> = KERNEL_FEATURES.iter().map(|(n, _)| *n).collect();
                return Err(fail(
                    value_pos("kernel"),
                    format!("unknown kernel feature `{k}`"),
                    suggest(k, features.iter().copied()).or_else(|| {
                        Some(format!(
                            "known: {}, or fs:TYPE (e.g. fs:xfs)",
                            features.join(", ")
                        ))
                    }),
                ));
            }
        }
        (Some(t), None) => {
            let tpl = Template::parse(t).map_err(|m| fail(value_pos("tool"), m, None))?;
            for n in tpl.names() {
                if !(def.tools.contains_key(n) || names.is_var(n) || n == "fslab") {
                    let known: Vec<&str> = def
                        .tools
                        .keys()
                        .map(String::as_str)
                        .chain(names.vars())
                        .chain(["fslab"])
                        .collect();
                    return Err(fail(
                        range
                            .clone()
                            .and_then(|r| loc.template_use_in(r, n))
                            .unwrap_or_else(|| value_pos("tool")),
                        format!(
                            "`tool: {t}` names `{{{{{n}}}}}`, which is not a tool, var or matrix axis"
                        ),
                        suggest(n, known.iter().copied()),
                    ));
                }
            }
            if let Some(v) = &r.min_version {
                if crate::host::Version::parse(v).is_none() {
                    return Err(fail(
                        value_pos("min_version"),
                        format!("`min_version: {v}` is not a version"),
                        Some("write it as numbers and dots, quoted: \"6.10\"".into()),
                    ));
                }
            }
        }
    }
    for k in r.when.keys() {
        if !names.is_var(k) {
            let pos = range
                .clone()
                .and_then(|r| loc.block(r.clone(), "when").or(Some(r)))
                .and_then(|r| loc.key_in(r, k))
                .unwrap_or(start);
            return Err(fail(
                pos,
                format!("`when` names `{k}`, which is neither a var nor a matrix axis"),
                suggest(k, names.vars().into_iter()),
            ));
        }
    }
    Ok(())
}

/// Help for a `{{...}}` syntax error.
fn template_help(message: &str) -> String {
    if message.contains("integer format") {
        "an integer format is an optional `0`, an optional width and `d`, `x` or `X`: `{{i:02x}}`, `{{i:04d}}`".into()
    } else {
        "write a reference as `{{name}}`; fslab has no expressions (an integer can be formatted: `{{name:02x}}`)".into()
    }
}

/// Parse a size such as `512MiB`, `1 GiB`, `300M` or `4096` (bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|_| {
            format!("`{s}` is not a size; write e.g. `512MiB`, `2GiB` or a number of bytes")
        })
}

#[cfg(test)]
mod tests;
