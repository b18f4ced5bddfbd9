//! `requires:` (of the experiment and of a step): a tool with a version, or a kernel
//! feature.

use super::{suggest, Checker, Locator, Names};
use crate::spec::{Requirement, SpecError, Template, KERNEL_FEATURES};

/// The experiment-wide `requires:`.
pub(super) fn check_requires(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    let requires = loc.section("requires");
    for (i, r) in def.requires.iter().enumerate() {
        let at = requires.clone().and_then(|b| loc.item(b, i));
        validate_requirement(
            r,
            &format!("requires entry {}", i + 1),
            names,
            at,
            c.section_start("requires"),
            loc,
        )?;
    }
    Ok(())
}

/// A `requires:` entry: exactly one of `tool:` (a program, with a version that parses)
/// or `kernel:` (a known feature or `fs:TYPE`); `when:` names vars and axes. `range` is
/// the entry's item when it can be found; `fallback` where to point otherwise.
pub(super) fn validate_requirement(
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
            let tpl =
                Template::parse(t).map_err(|m| fail(value_pos("tool"), m.to_string(), None))?;
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
