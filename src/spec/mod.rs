//! Experiment files: the YAML schema, loading, and located errors.
//!
//! An experiment names logical devices, a parameter matrix, profiles, and the steps to
//! run at each matrix point. Loading checks everything that can be checked without
//! touching the system: unknown keys, types, `{{name}}` references, empty matrix axes,
//! profiles naming unknown variables, literal device paths. Every error carries the
//! file, line and column of the offending text.

//!
//! - [`schema`]: the types an experiment file deserialises into;
//! - [`validate`](mod@validate): the checks after deserialising;
//! - [`claim`]: the `check:` of a claim, checked at load;
//! - [`SpecError`]: a located error;
//! - `locate`, `template`, `value`: positions in the YAML text, `{{name}}` templates,
//!   and variable values.

pub mod claim;
pub mod devpath;
mod error;
mod locate;
pub mod media;
pub mod schema;
mod template;
mod truncate_need;
mod validate;
mod value;

pub use devpath::HARMLESS_DEV_PATHS;
pub use error::SpecError;
pub use schema::*;
pub use template::{Piece, Template, TemplateError};
pub use value::{NotAScalar, Value};

use locate::{yaml_error, Locator};
use serde::Serialize;
use std::path::{Path, PathBuf};

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
        let mut def: ExperimentDef =
            serde_yaml::from_str(text).map_err(|e| yaml_error(&loc, &e))?;
        validate::kernel_key(&mut def, &loc)?;
        validate::validate(&def, &loc)?;
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
            if let Some(lit) = step.program(&|_| None) {
                if !out.contains(&lit) {
                    out.push(lit);
                }
            }
        }
        out
    }

    /// Where a step of this experiment is (found by identity): `the workload`, `setup
    /// step 2`, … and `file:line:column` of its first line (the file alone when it
    /// cannot be found), for messages made after the experiment loaded.
    pub fn step_place(&self, step: &Step) -> (String, String) {
        let d = &self.def;
        let name = self
            .file
            .as_ref()
            .map_or_else(|| format!("{}.yaml", d.id), |f| f.display().to_string());
        let loc = Locator::new(&name, &self.source_text);
        let at = |section: &str, i: usize, what: String| {
            let pos = validate::step_range(&loc, section, i).map(|r| loc.start_of(&r));
            let place = match pos {
                Some((l, c)) => format!("{name}:{l}:{c}"),
                None => name.clone(),
            };
            (what, place)
        };
        let same = |s: &Step| std::ptr::eq(s, step);
        if same(&d.workload) {
            return at("workload", 0, "the workload".into());
        }
        for (section, steps) in [
            ("setup", &d.setup),
            ("before_each", &d.workload.before_each),
            ("capture", &d.capture),
            ("teardown", &d.teardown),
        ] {
            if let Some(i) = steps.iter().position(same) {
                return at(section, i, format!("{section} step {}", i + 1));
            }
        }
        for (v, variant) in d.workload_variants.iter().enumerate() {
            let block = loc
                .section("workload_variants")
                .and_then(|r| loc.item(r, v));
            let (what, range) = if same(variant) {
                (format!("workload variant {}", v + 1), block)
            } else if let Some(i) = variant.before_each.iter().position(same) {
                (
                    format!("before_each step {} of workload variant {}", i + 1, v + 1),
                    block
                        .and_then(|b| loc.block(b, "before_each"))
                        .and_then(|b| loc.item(b, i)),
                )
            } else {
                continue;
            };
            let place = match range.map(|r| loc.start_of(&r)) {
                Some((l, c)) => format!("{name}:{l}:{c}"),
                None => name.clone(),
            };
            return (what, place);
        }
        ("a step".into(), name)
    }

    /// All steps in run order (the workload variants and their `before_each` after the
    /// workload).
    pub fn all_steps(&self) -> impl Iterator<Item = &Step> {
        let d = &self.def;
        d.setup
            .iter()
            .chain(d.workload.before_each.iter())
            .chain(std::iter::once(&d.workload))
            .chain(
                d.workload_variants
                    .iter()
                    .flat_map(|v| v.before_each.iter().chain(std::iter::once(v))),
            )
            .chain(d.capture.iter())
            .chain(d.teardown.iter())
    }

    pub fn display_name(&self) -> String {
        self.file
            .as_ref()
            .map_or_else(|| "<experiment>".to_string(), |p| p.display().to_string())
    }
}

/// Parse a size such as `512MiB`, `1 GiB`, `300M` or `4096` (bytes).
pub fn parse_size(s: &str) -> Result<u64, BadSize> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|_| BadSize(s.to_string()))
}

/// Text that is not a size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a size; write e.g. `512MiB`, `2GiB` or a number of bytes")]
pub struct BadSize(pub String);

#[cfg(test)]
mod tests;
