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

mod template;
mod value;
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
    /// File name in `shared/seeds/` when the experiment comes from a seed post.
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
    /// Workload only: timed iterations per point (default 1); may be a `{{var}}`.
    #[serde(default)]
    pub repeat: Option<Value>,
    /// Workload only: untimed steps before each iteration (e.g. `drop_caches: true`).
    #[serde(default)]
    pub before_each: Vec<Step>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CommandSpec {
    Line(String),
    Argv(Vec<String>),
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum MountSpec {
    Device(String),
    Full(MountFull),
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

    fn action_count(&self) -> usize {
        [
            self.run.is_some(),
            self.mount.is_some(),
            self.umount.is_some(),
            self.mkdir.is_some(),
            self.drop_caches.is_some(),
            self.sync.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }

    /// The command's words before substitution.
    pub fn argv_templates(&self) -> Result<Vec<Template>, String> {
        let words = match &self.run {
            None => return Ok(Vec::new()),
            Some(CommandSpec::Argv(v)) => v.clone(),
            Some(CommandSpec::Line(line)) => shell_words::split(line)
                .map_err(|e| format!("cannot split command `{line}` into words: {e}"))?,
        };
        words.iter().map(|w| Template::parse(w)).collect()
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

/// Builds located errors against one source text.
struct Locator<'a> {
    file: String,
    text: &'a str,
}

impl<'a> Locator<'a> {
    fn at(&self, line: usize, column: usize, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.clone(),
            line,
            column,
            message: message.into(),
            snippet: (line > 0)
                .then(|| self.text.lines().nth(line - 1).map(str::to_string))
                .flatten(),
            help: None,
        }
    }

    /// Line/column (1-based) of a byte offset.
    fn position(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// The first place `needle` occurs, or the file start.
    fn find(&self, needle: &str) -> (usize, usize) {
        self.text
            .find(needle)
            .map_or((0, 0), |offset| self.position(offset))
    }

    /// Where a mapping key `key:` is written (optionally the first after `after`).
    fn find_key(&self, key: &str, after: Option<&str>) -> (usize, usize) {
        let start = after.and_then(|a| self.find_key_offset(a, 0)).unwrap_or(0);
        self.find_key_offset(key, start)
            .map_or((0, 0), |o| self.position(o))
    }

    /// Offset of `key:` as a mapping key (block or flow style) at or after `from`.
    fn find_key_offset(&self, key: &str, from: usize) -> Option<usize> {
        let text = self.text;
        let mut search = from;
        while let Some(rel) = text.get(search..)?.find(key) {
            let at = search + rel;
            let before = text[..at].chars().next_back();
            let boundary = matches!(
                before,
                None | Some(' ' | '\t' | '\n' | '{' | ',' | '-' | '"' | '\'')
            );
            let after = text[at + key.len()..].trim_start_matches(['"', '\'']);
            if boundary && after.starts_with(':') {
                let quoted = matches!(before, Some('"' | '\''));
                return Some(if quoted { at - 1 } else { at });
            }
            search = at + key.len();
        }
        None
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
        let loc = Locator {
            file: name.to_string(),
            text,
        };
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

fn yaml_error(loc: &Locator<'_>, e: &serde_yaml::Error) -> SpecError {
    let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
    let raw = e.to_string();
    // serde_yaml appends " at line L column C"; the location is reported separately.
    let message = match raw.find(" at line ") {
        Some(i) => raw[..i].to_string(),
        None => raw.clone(),
    };
    let mut err = loc.at(line, column, message.clone());
    err.help = did_you_mean(&message);
    if err.help.is_none() && message.contains("missing field") {
        err.help = Some("see docs/experiment-format.md for the required keys".into());
    }
    err
}

/// From serde's "unknown field `x`, expected one of `a`, `b`" suggest the closest name.
fn did_you_mean(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    let given = rest.split('`').next()?;
    let expected: Vec<&str> = rest
        .split("expected ")
        .nth(1)?
        .split('`')
        .skip(1)
        .step_by(2)
        .collect();
    let best = expected
        .iter()
        .map(|c| (strsim::jaro_winkler(given, c), *c))
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    if best.0 > 0.7 {
        Some(format!("did you mean `{}`?", best.1))
    } else {
        Some(format!("valid keys here: {}", expected.join(", ")))
    }
}

/// Device paths an experiment may name literally (they are not storage).
const HARMLESS_DEV_PATHS: &[&str] = &[
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

fn validate(def: &ExperimentDef, loc: &Locator<'_>) -> Result<(), SpecError> {
    let key_err = |key: &str, after: Option<&str>, msg: String, help: Option<String>| {
        let (l, c) = loc.find_key(key, after);
        let mut e = loc.at(l, c, msg);
        e.help = help;
        e
    };
    if def.id.is_empty()
        || !def
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(key_err(
            "id",
            None,
            format!("experiment id `{}` is not a plain name", def.id),
            Some("use letters, digits, `-` and `_` only (it names the results directory)".into()),
        ));
    }
    for (name, dev) in &def.devices {
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(key_err(
                name,
                Some("devices"),
                format!("device name `{name}` is not a plain name"),
                Some("use letters, digits and `_`".into()),
            ));
        }
        if !dev.size.contains("{{") {
            parse_size(&dev.size).map_err(|m| key_err("size", Some(name), m, None))?;
        }
    }
    // Variable names: matrix and vars are disjoint.
    for name in def.matrix.keys() {
        if def.vars.contains_key(name) {
            return Err(key_err(
                name,
                Some("vars"),
                format!("`{name}` is both a scalar variable and a matrix axis"),
                Some("keep it in one place: a matrix axis with one value, or a var".into()),
            ));
        }
    }
    for (name, values) in &def.matrix {
        if values.is_empty() {
            return Err(key_err(
                name,
                Some("matrix"),
                format!("matrix axis `{name}` has no values"),
                Some(format!("give at least one value, e.g. `{name}: [a, b]`")),
            ));
        }
        let mut seen = Vec::new();
        for v in values {
            let label = v.label();
            if seen.contains(&label) {
                return Err(key_err(
                    name,
                    Some("matrix"),
                    format!("matrix axis `{name}` lists `{label}` twice, which would make duplicate points"),
                    None,
                ));
            }
            seen.push(label);
        }
    }
    let known_var = |n: &str| def.matrix.contains_key(n) || def.vars.contains_key(n);
    let var_names = || {
        def.matrix
            .keys()
            .chain(def.vars.keys())
            .map(String::as_str)
            .collect::<Vec<_>>()
    };
    for (i, ex) in def.exclude.iter().enumerate() {
        for k in ex.keys() {
            if !def.matrix.contains_key(k) {
                return Err(key_err(
                    k,
                    Some("exclude"),
                    format!(
                        "exclude entry {} names `{k}`, which is not a matrix axis",
                        i + 1
                    ),
                    suggest(k, def.matrix.keys().map(String::as_str)),
                ));
            }
        }
    }
    for (pname, settings) in &def.profiles {
        for k in settings.keys() {
            if !known_var(k) {
                return Err(key_err(
                    k,
                    Some(pname),
                    format!(
                        "profile `{pname}` sets `{k}`, which is neither a var nor a matrix axis"
                    ),
                    suggest(k, var_names().into_iter()),
                ));
            }
        }
    }
    if let Some(p) = &def.default_profile {
        if !def.profiles.contains_key(p) {
            return Err(key_err(
                "default_profile",
                None,
                format!("default_profile `{p}` is not defined under `profiles`"),
                suggest(p, def.profiles.keys().map(String::as_str)),
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
            let what = if section == "workload" {
                "the workload".to_string()
            } else {
                format!("{section} step {}", i + 1)
            };
            match step.action_count() {
                1 => {}
                0 => {
                    return Err(key_err(
                        section,
                        None,
                        format!("{what} has no action"),
                        Some("give one of: run, mount, umount, mkdir, drop_caches, sync".into()),
                    ))
                }
                _ => {
                    return Err(key_err(
                        section,
                        None,
                        format!("{what} has more than one action"),
                        Some("split it into one step per action".into()),
                    ))
                }
            }
            if section != "workload" && (step.repeat.is_some() || !step.before_each.is_empty()) {
                let key = if step.repeat.is_some() {
                    "repeat"
                } else {
                    "before_each"
                };
                return Err(key_err(
                    key,
                    Some(section),
                    format!("{what}: `{key}` belongs to the workload only"),
                    Some("move it under `workload:`".into()),
                ));
            }
            if section == "workload" && step.run.is_none() {
                return Err(key_err(
                    "workload",
                    None,
                    "the workload must be a `run:` command (it is what is timed)".into(),
                    None,
                ));
            }
            if let Some(kind) = &step.parse {
                if kind != "blockmap" && kind.parse::<Kind>().is_err() {
                    let known: Vec<&str> = Kind::ALL
                        .iter()
                        .map(|k| k.name())
                        .chain(["blockmap"])
                        .collect();
                    let (l, c) = loc.find(&format!("parse: {kind}"));
                    let mut e = loc.at(l, c, format!("{what}: unknown parse kind `{kind}`"));
                    e.help = suggest(kind, known.iter().copied())
                        .or(Some(format!("known kinds: {}", known.join(", "))));
                    return Err(e);
                }
            }
            for k in step.when.keys() {
                if !known_var(k) {
                    return Err(key_err(
                        k,
                        Some(section),
                        format!(
                            "{what}: `when` names `{k}`, which is neither a var nor a matrix axis"
                        ),
                        suggest(k, var_names().into_iter()),
                    ));
                }
            }
            let templates = step.templates().map_err(|m| {
                let (l, c) = loc.find_key(section, None);
                loc.at(l, c, format!("{what}: {m}"))
            })?;
            for t in &templates {
                check_names(t, def, section, loc)?;
                if let Some(lit) = t.literal_prefix() {
                    if lit.starts_with("/dev/")
                        && !HARMLESS_DEV_PATHS.iter().any(|h| lit.starts_with(h))
                    {
                        let (l, c) = loc.find(&lit);
                        let mut e =
                            loc.at(l, c, format!("{what} names the device `{lit}` directly"));
                        e.help = Some(
                            "experiment files name logical devices only: declare one under `devices:` and write `{{dev.NAME}}`; \
                             a real device can only be mapped by the user (`fslab run --device NAME=/dev/...` plus the local config)"
                                .into(),
                        );
                        return Err(e);
                    }
                }
            }
        }
    }
    match &def.workload.repeat {
        None | Some(Value::Int(1..)) => {}
        Some(Value::Str(s)) => {
            let t = Template::parse(s).map_err(|m| {
                let (l, c) = loc.find_key("repeat", Some("workload"));
                loc.at(l, c, m)
            })?;
            check_names(&t, def, "workload", loc)?;
        }
        Some(other) => {
            let (l, c) = loc.find_key("repeat", Some("workload"));
            let mut e = loc.at(
                l,
                c,
                format!(
                    "`repeat` must be a whole number ≥ 1 or a `{{{{var}}}}`, not `{}`",
                    other.label()
                ),
            );
            e.help = Some("e.g. `repeat: 10`".into());
            return Err(e);
        }
    }
    Ok(())
}

fn check_names(
    t: &Template,
    def: &ExperimentDef,
    section: &str,
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    for name in t.names() {
        let ok = if let Some(dev) = name
            .strip_prefix("dev.")
            .or_else(|| name.strip_prefix("image."))
        {
            def.devices.contains_key(dev)
        } else if name == "iteration" {
            section == "workload" || section == "before_each"
        } else {
            def.matrix.contains_key(name)
                || def.vars.contains_key(name)
                || BUILTIN_NAMES.iter().any(|(b, _)| *b == name)
        };
        if !ok {
            let (l, c) = find_template_use(loc, name);
            let mut e = loc.at(
                l,
                c,
                format!("undefined name `{{{{{name}}}}}` in {section}"),
            );
            let mut candidates: Vec<String> =
                def.matrix.keys().chain(def.vars.keys()).cloned().collect();
            candidates.extend(def.devices.keys().map(|d| format!("dev.{d}")));
            candidates.extend(BUILTIN_NAMES.iter().map(|(b, _)| b.to_string()));
            e.help = if name == "iteration" {
                Some("`{{iteration}}` exists only in the workload and before_each".into())
            } else {
                suggest(name, candidates.iter().map(String::as_str)).or_else(|| {
                    Some(format!(
                        "define it under `vars:` or `matrix:`, or use one of: {}",
                        candidates.join(", ")
                    ))
                })
            };
            return Err(e);
        }
    }
    Ok(())
}

fn find_template_use(loc: &Locator<'_>, name: &str) -> (usize, usize) {
    let mut offset = 0;
    while let Some(i) = loc.text[offset..].find("{{") {
        let start = offset + i;
        if let Some(end) = loc.text[start..].find("}}") {
            if loc.text[start + 2..start + end].trim() == name {
                return loc.position(start);
            }
            offset = start + end;
        } else {
            break;
        }
    }
    (0, 0)
}

fn suggest<'a>(given: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    candidates
        .map(|c| (strsim::jaro_winkler(given, c), c))
        .filter(|(s, _)| *s > 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!("did you mean `{c}`?"))
}

/// Parse a size such as `512MiB`, `1 GiB`, `300M` or `4096` (bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("`{s}` is not a size ({e}); write e.g. `512MiB` or `2GiB`"))
}

#[cfg(test)]
mod tests;
