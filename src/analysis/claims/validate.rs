//! Claims' `check:` blocks checked when an experiment is loaded, with file:line:col: the
//! spec keeps `check:` as raw YAML (its schema is here, downstream), so the loader that
//! the CLI uses is [`load`] = `Experiment::load` + [`validate`].

use super::*;
use crate::spec::{Experiment, SpecError};
use std::path::Path;

/// Load an experiment file and check every claim's `check:` against its schema.
pub fn load(path: impl AsRef<Path>) -> Result<Experiment, SpecError> {
    let exp = Experiment::load(path)?;
    validate(&exp)?;
    Ok(exp)
}

/// Every claim's `check:` must read as one of the kinds and satisfy that kind's rules.
pub fn validate(exp: &Experiment) -> Result<(), SpecError> {
    for (i, claim) in exp.def.claims.iter().enumerate() {
        let Some(raw) = &claim.check else { continue };
        let check: Check = serde_yaml::from_value(raw.clone()).map_err(|e| {
            let msg = e.to_string();
            exp.claim_check_error(
                i,
                first_quoted(&msg),
                format!("claim `{}`: its check cannot be read: {msg}", claim.id),
                Some(format!(
                    "`kind` is one of {}; see docs/experiment-format.md (claims)",
                    KINDS.join(", ")
                )),
            )
        })?;
        check.validate().map_err(|(word, msg, help)| {
            exp.claim_check_error(
                i,
                word.as_deref(),
                format!("claim `{}`: {msg}", claim.id),
                Some(help),
            )
        })?;
    }
    Ok(())
}

/// The kinds a `check:` may have.
pub const KINDS: [&str; 5] = ["ratio", "first_vs_rest", "flat", "layout", "io_summary"];

/// The first `word` serde names in backquotes (the unknown field or variant).
fn first_quoted(msg: &str) -> Option<&str> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    Some(&msg[start..start + len]).filter(|w| !w.is_empty())
}
