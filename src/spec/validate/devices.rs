//! `devices:`: plain names, sizes that parse or use known variables, media.

use super::{suggest, Checker};
use crate::spec::{parse_size, SpecError, Template};

/// Devices: plain names, sizes that parse or use known variables.
pub(super) fn check_devices(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    // Devices: plain names, sizes that parse or use known variables.
    for (name, dev) in &def.devices {
        let block = loc.section("devices").and_then(|r| loc.block(r, name));
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
            return Err(c.fail(
                c.key_in_section("devices", name),
                format!("device name `{name}` is not a plain name"),
                Some("use letters, digits and `_` (it is written `{{dev.NAME}}`)".into()),
            ));
        }
        let size_pos = block
            .clone()
            .and_then(|b| loc.value_in(b, "size"))
            .unwrap_or_else(|| c.key_in_section("devices", name));
        if dev.size.contains("{{") {
            let t = Template::parse(&dev.size).map_err(|m| loc.at_pos(size_pos, m.to_string()))?;
            for n in t.names() {
                if !names.is_var(n) {
                    let pos = block
                        .clone()
                        .and_then(|b| loc.template_use_in(b, n))
                        .unwrap_or(size_pos);
                    return Err(c.fail(
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
            parse_size(&dev.size).map_err(|m| c.fail(size_pos, m.to_string(), None))?;
        }
        let medium_pos = block
            .clone()
            .and_then(|b| loc.value_in(b, "medium"))
            .unwrap_or(size_pos);
        if let Some(crate::spec::media::MediumSpec::Var(t)) = &dev.medium {
            let t = Template::parse(t).map_err(|m| loc.at_pos(medium_pos, m.to_string()))?;
            let undefined = t.names().find(|n| !names.is_var(n)).map(str::to_string);
            if let Some(n) = undefined {
                return Err(c.fail(
                    medium_pos,
                    format!("undefined name `{{{{{n}}}}}` in the medium of device `{name}`"),
                    Some(format!("define `{n}` under `vars:`, e.g. `{n}: hdd-2008`")),
                ));
            }
        }
        if let Some(p) = dev.medium.as_ref().and_then(|m| m.params()) {
            let pos = medium_pos;
            p.validate().map_err(|e| {
                c.fail(
                    pos,
                    format!("medium of device `{name}`: {e}"),
                    Some("see docs/media.md for the model and its parameters".into()),
                )
            })?;
        }
    }
    Ok(())
}
