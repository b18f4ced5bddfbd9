//! `vars:` and `matrix:`: plain names, not both a var and an axis, values of one kind.

use super::{plain_name, yaml_text, Checker};
use crate::spec::{SpecError, BUILTIN_NAMES};

/// Variable and axis names, and the matrix axes' values.
pub(super) fn check_names(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc) = (c.def, c.loc);
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
            let pos = c.key_in_section(section, name);
            if !plain_name(name) {
                return Err(c.fail(
                    pos,
                    format!("{kind} name `{name}` is not a plain name"),
                    Some("use letters, digits, `_` and `-` (it is written `{{NAME}}` and names a column)".into()),
                ));
            }
            if let Some((_, what)) = BUILTIN_NAMES.iter().find(|(b, _)| *b == name.as_str()) {
                return Err(c.fail(
                    pos,
                    format!("{kind} `{name}` has the name of one fslab provides: {what}"),
                    Some(format!("rename it, e.g. `my_{name}`")),
                ));
            }
            if crate::store::RUN_COLUMNS.contains(&name.as_str()) {
                return Err(c.fail(
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
            return Err(c.fail(
                c.key_in_section("vars", name),
                format!("`{name}` is both a variable and a matrix axis"),
                Some("keep it in one place: a matrix axis with one value, or a var".into()),
            ));
        }
    }
    for (name, values) in &def.matrix {
        let block = loc.section("matrix").and_then(|r| loc.block(r, name));
        if values.is_empty() {
            return Err(c.fail(
                c.key_in_section("matrix", name),
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
                    .unwrap_or_else(|| c.key_in_section("matrix", name));
                let same = if first == v {
                    String::new()
                } else {
                    format!(
                        " (`{}` and `{}` make the same point)",
                        yaml_text(first),
                        yaml_text(v)
                    )
                };
                return Err(c.fail(
                    pos,
                    format!("matrix axis `{name}` lists `{label}` twice{same}, which would make duplicate points"),
                    Some("remove one: a point is named by its values' text".into()),
                ));
            }
        }
    }
    Ok(())
}
