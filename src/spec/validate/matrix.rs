//! `exclude:` and `profiles:`: what they name exists in the matrix or the vars.

use super::{suggest, Checker};
use crate::spec::SpecError;

/// `exclude:` names matrix axes only.
pub(super) fn check_excludes(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc) = (c.def, c.loc);
    for (i, ex) in def.exclude.iter().enumerate() {
        let item = loc.section("exclude").and_then(|r| loc.item(r, i));
        for k in ex.keys() {
            if !def.matrix.contains_key(k) {
                let pos = item
                    .clone()
                    .and_then(|r| loc.key_in(r, k))
                    .unwrap_or_else(|| c.key_in_section("exclude", k));
                return Err(c.fail(
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
    Ok(())
}

/// Profiles set known variables; the default profile exists.
pub(super) fn check_profiles(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    for (pname, settings) in &def.profiles {
        let block = loc.section("profiles").and_then(|r| loc.block(r, pname));
        for k in settings.keys() {
            if !names.is_var(k) {
                let pos = block
                    .clone()
                    .and_then(|b| loc.key_in(b, k))
                    .unwrap_or_else(|| c.key_in_section("profiles", k));
                return Err(c.fail(
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
            return Err(c.fail(
                c.value_in_section("default_profile", "default_profile"),
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
    Ok(())
}
