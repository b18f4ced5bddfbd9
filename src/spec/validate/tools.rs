//! `tools:`: plain names, each choice a command over vars, axes and `{{fslab}}`.

use super::{suggest, template_help, validate_requirement, Checker};
use crate::spec::{CommandSpec, SpecError, Template, ToolChoiceDef, BUILTIN_NAMES};

/// Tools: plain names of their own, each choice a command using vars, axes and `{{fslab}}` only.
pub(super) fn check_tools(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
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
            return Err(c.fail(
                c.key_in_section("tools", name),
                format!("tool `{name}` is also {what}"),
                Some("give the tool its own name".into()),
            ));
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(c.fail(
                c.key_in_section("tools", name),
                format!("tool name `{name}` is not a plain name"),
                Some("use letters, digits and `_` (it is written `{{NAME}}`)".into()),
            ));
        }
    }
    for (name, tool) in &def.tools {
        let tool_block = tools_section.clone().and_then(|r| loc.block(r, name));
        let tool_pos = c.key_in_section("tools", name);
        let choices_block = tool_block.clone().and_then(|b| loc.block(b, "choices"));
        if tool.choices.is_empty() {
            return Err(c.fail(
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
                return Err(c.fail(
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
                if let Err(e) = Template::parse(line) {
                    return Err(c.fail(cmd_pos, format!("{what}: {e}"), Some(template_help(&e))));
                }
            }
            let templates = cmd.templates().map_err(|m| {
                c.fail(
                    cmd_pos,
                    format!("{what}: {m}"),
                    Some("quotes pair up as in a shell (no shell runs); give the command as a list of words".into()),
                )
            })?;
            if templates.is_empty() {
                return Err(c.fail(
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
                        return Err(c.fail(
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
                validate_requirement(r, &what, names, at, item_pos, loc)?;
            }
        }
    }
    Ok(())
}
