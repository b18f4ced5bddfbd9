//! The draft's YAML text: the experiment of [`super::draft`] with a comment naming the
//! post line of every item, `# guess:` where the post does not say, draft claims with a
//! `check:` skeleton, and the fallback whose steps are comments (when the full draft does
//! not load).

use super::claims::DraftClaim;
use super::draft::Experiment;
use super::mail::Headers;
use super::naming::trim_float;
use super::step::{Action, Step};

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn scalar(s: &str) -> String {
    if s.parse::<i64>().is_ok() && !(s.len() > 1 && s.starts_with('0')) {
        s.to_string()
    } else {
        q(s)
    }
}

/// A comment on one line, or, past 160 characters, on more lines (each broken at a space,
/// the next under `indent` with `#   `): a long comment's guesses are never cut.
fn comment(s: &str, indent: &str) -> String {
    const WIDTH: usize = 160;
    let one: String = s.chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    let mut out = String::from("# ");
    let mut len = 0;
    for (k, w) in one.split(' ').enumerate() {
        if k > 0 {
            if len >= WIDTH {
                out.push_str(&format!("\n{indent}#   "));
                len = 0;
            } else {
                out.push(' ');
                len += 1;
            }
        }
        out.push_str(w);
        len += w.chars().count();
    }
    out
}

/// A command word: a script of several lines as a literal block (`|-`, each line under
/// `indent`) when YAML can hold it so, else quoted.
fn word(w: &str, indent: &str) -> String {
    let plain = w.contains('\n')
        && !w.starts_with([' ', '\n'])
        && !w.ends_with(['\n', ' '])
        && w.chars()
            .all(|c| c == '\n' || (!c.is_control() && c != '\u{feff}'));
    if !plain {
        return q(w);
    }
    let mut s = String::from("|-");
    for l in w.split('\n') {
        s.push('\n');
        if !l.is_empty() {
            s.push_str(indent);
            s.push_str(l);
        }
    }
    s
}

fn step_yaml(out: &mut String, s: &Step, indent: &str, list: bool) {
    let lead = if list {
        format!("{indent}- ")
    } else {
        indent.to_string()
    };
    let more = if list {
        format!("{indent}  ")
    } else {
        indent.to_string()
    };
    out.push_str(&format!("{indent}{}\n", comment(&s.comment, indent)));
    match &s.action {
        Action::Run {
            name,
            command,
            parse,
        } => {
            out.push_str(&format!("{lead}name: {}\n", q(name)));
            out.push_str(&format!("{more}run: {}\n", q(command)));
            if let Some(p) = parse {
                out.push_str(&format!("{more}parse: {p}\n"));
            }
        }
        Action::Words { name, argv, parse } => {
            out.push_str(&format!("{lead}name: {}\n", q(name)));
            out.push_str(&format!("{more}run:\n"));
            for w in argv {
                out.push_str(&format!("{more}  - {}\n", word(w, &format!("{more}    "))));
            }
            if let Some(p) = parse {
                out.push_str(&format!("{more}parse: {p}\n"));
            }
        }
        Action::Mount { device, options } => match options {
            Some(o) => out.push_str(&format!(
                "{lead}mount: {{ device: {}, options: {} }}\n",
                q(device),
                q(o)
            )),
            None => out.push_str(&format!("{lead}mount: {}\n", q(device))),
        },
        Action::Mkdir(d) => out.push_str(&format!("{lead}mkdir: {}\n", q(d))),
        Action::Sync => out.push_str(&format!("{lead}sync: true\n")),
        Action::DropCaches => out.push_str(&format!("{lead}drop_caches: true\n")),
        Action::Umount => out.push_str(&format!("{lead}umount: \"{{{{mnt}}}}\"\n")),
    }
    if let Some((axis, values)) = &s.when {
        let vals: Vec<String> = values.iter().map(|v| scalar(v)).collect();
        out.push_str(&format!(
            "{more}when: {{ {axis}: [{}] }}\n",
            vals.join(", ")
        ));
    }
    if let Some(t) = s.times {
        out.push_str(&format!("{more}times: {}\n", t.count));
        if t.from != 0 {
            out.push_str(&format!(
                "{more}times_from: {}  # {{{{i}}}} from {}, as the post's loop counts\n",
                t.from, t.from
            ));
        }
    }
    if let Some(r) = s.repeat {
        out.push_str(&format!("{more}repeat: {r}\n"));
    }
}

/// The draft's YAML text.
#[allow(clippy::too_many_arguments)]
pub fn yaml(
    id: &str,
    headers: &Headers,
    source_file: Option<&str>,
    exp: &Experiment,
    claims: &[DraftClaim],
    author: Option<&str>,
    csv_name: &str,
    safe: bool,
) -> String {
    let mut y = String::new();
    let subject = headers
        .subject
        .clone()
        .unwrap_or_else(|| source_file.unwrap_or("a post").to_string());
    y.push_str(&format!(
        "# A DRAFT made by `fslab import` from {}.\n# Every item names the line of the post it comes from; `guess:` marks what the post\n# does not say. The post's numbers are in {csv_name}. See docs/import.md to finish it.\n",
        source_file.unwrap_or("the post")
    ));
    if safe {
        y.push_str("# The full draft did not load (see `fslab import --explain`): its steps are kept as\n# comments below and the workload is a placeholder.\n");
    }
    y.push_str(&format!("id: {}\n", q(id)));
    y.push_str(&format!("title: {}\n", q(&format!("DRAFT: {subject}"))));
    y.push_str(&format!(
        "description: {}\n",
        q(&format!(
            "Imported from \"{subject}\" by fslab import; not yet reviewed."
        ))
    ));
    y.push_str("source:\n");
    y.push_str(&format!("  # line {}: the post's headers\n", headers.line));
    let mut first = true;
    let mut field = |y: &mut String, k: &str, v: &str| {
        y.push_str(&format!(
            "{}{k}: {}\n",
            if first { "  - " } else { "    " },
            q(v)
        ));
        first = false;
    };
    if let Some(a) = &headers.from {
        field(&mut y, "author", a);
    } else if let Some(a) = author {
        field(&mut y, "author", a);
    }
    if let Some(d) = &headers.date {
        let d = chrono::DateTime::parse_from_rfc2822(d)
            .map(|t| t.to_rfc3339())
            .unwrap_or_else(|_| d.clone());
        field(&mut y, "date", &d);
    }
    if let Some(m) = &headers.message_id {
        field(&mut y, "message_id", m);
    }
    let mut note = subject.clone();
    if let Some(r) = &headers.in_reply_to {
        note.push_str(&format!(" (in reply to {r})"));
    }
    field(&mut y, "note", &note);
    if let Some(m) = exp.medium {
        y.push_str(&format!("    medium: {m}\n"));
    }
    if !exp.devices.is_empty() {
        y.push_str("\ndevices:\n");
        for d in &exp.devices {
            let what = if d.path.is_empty() {
                String::new()
            } else {
                format!("line {}: {}; ", d.line, d.path)
            };
            y.push_str(&format!(
                "  {}: {{ size: {} }}  # {what}{}\n",
                d.name,
                q(&d.size),
                d.why
            ));
        }
    }
    if !exp.vars.is_empty() {
        y.push_str("\nvars:\n");
        for (k, v, why) in &exp.vars {
            y.push_str(&format!("  {k}: {}  # {why}\n", scalar(v)));
        }
    }
    if !exp.matrix.is_empty() {
        y.push_str("\nmatrix:\n");
        for a in &exp.matrix {
            let vals: Vec<String> = a.values.iter().map(|v| scalar(v)).collect();
            y.push_str(&format!(
                "  {}: [{}]  # line {}: {}\n",
                a.name,
                vals.join(", "),
                a.line,
                a.why
            ));
        }
    }
    if !exp.exclude.is_empty() {
        y.push_str("exclude:\n");
        for ex in &exp.exclude {
            let entries: Vec<String> = ex
                .entries
                .iter()
                .map(|(k, vs)| {
                    let vals: Vec<String> = vs.iter().map(|v| scalar(v)).collect();
                    format!("{k}: [{}]", vals.join(", "))
                })
                .collect();
            y.push_str(&format!(
                "  - {{ {} }}  # line {}: {}\n",
                entries.join(", "),
                ex.line,
                ex.why
            ));
        }
    }
    if !exp.candidates.is_empty() {
        y.push_str(if exp.matrix.is_empty() { "\n" } else { "" });
        y.push_str("# matrix axes the prose suggests (guess: move one into `matrix:` and use\n# {{name}} in a command to vary it):\n");
        for a in &exp.candidates {
            let vals: Vec<String> = a.values.iter().map(|v| scalar(v)).collect();
            y.push_str(&comment(
                &format!(
                    "  {}: [{}]  # line {}: {}",
                    a.name,
                    vals.join(", "),
                    a.line,
                    a.why
                ),
                "",
            ));
            y.push('\n');
        }
    }
    if !exp.tools.is_empty() && !safe {
        y.push_str("\ntools:\n");
        for t in &exp.tools {
            y.push_str(&format!("  {}:  # line {}: `{}` is not a program fslab knows; `fslab doctor` reports it when missing\n", t.name, t.line, t.program));
            y.push_str(&format!(
                "    description: {}\n",
                q(&format!("{}, as the post runs it", t.program))
            ));
            y.push_str(&format!("    choices: [{}]\n", q(&t.program)));
        }
    }
    let section = |y: &mut String, name: &str, steps: &[Step]| {
        if steps.is_empty() {
            return;
        }
        y.push_str(&format!("\n{name}:\n"));
        for s in steps {
            if safe {
                let mut tmp = String::new();
                step_yaml(&mut tmp, s, "  ", true);
                for l in tmp.lines() {
                    y.push_str(&format!("  # {}\n", l.trim_start()));
                }
            } else {
                step_yaml(y, s, "  ", true);
            }
        }
        if safe {
            y.push_str("  []\n");
        }
    };
    section(&mut y, "setup", &exp.setup);
    y.push_str(&format!(
        "\n{}workload:\n",
        super::replies::header(exp.scripts.as_ref())
    ));
    match (&exp.workload, safe) {
        (Some(w), false) => step_yaml(&mut y, w, "  ", false),
        (w, _) => {
            if let Some(w) = w {
                y.push_str(&format!(
                    "  # the post's workload, line {}: {}\n",
                    w.line, w.comment
                ));
            }
            y.push_str("  # guess: a placeholder; replace with the post's timed command\n  name: placeholder\n  run: \"true\"\n");
        }
    }
    if !exp.workload_variants.is_empty() {
        y.push_str(
            "\n# the timed command of each `case` branch: a point runs the one whose `when:` holds",
        );
    }
    section(&mut y, "workload_variants", &exp.workload_variants);
    section(&mut y, "capture", &exp.capture);
    section(&mut y, "teardown", &exp.teardown);
    y.push_str(&super::replies::comments(exp.scripts.as_ref()));
    if !claims.is_empty() {
        y.push_str("\nclaims:\n");
        for c in claims {
            let by = c.stated_by.as_deref().or(author).unwrap_or("the author");
            y.push_str(&format!("  # line {}: {by}\n", c.line));
            y.push_str(&format!("  - id: {}\n", q(&c.id)));
            y.push_str(&format!("    text: {}\n", q(&c.quote)));
            y.push_str(&format!("    quote: {}\n", q(&c.quote)));
            y.push_str("    draft: true\n");
            if let (Some((v, unit)), Some(axis)) =
                (&c.bound, exp.matrix.iter().find(|a| a.values.len() == 2))
            {
                let bound = if unit == "%" { 1.0 + v / 100.0 } else { *v };
                y.push_str(&format!(
                    "    # check skeleton (fill in and uncomment once the claim is read):\n    # check: {{ kind: ratio, metric: wall_s, numerator: {{ {a}: {}, iteration: 1 }}, denominator: {{ {a}: {}, iteration: 1 }}, expect: {{ max: {} }} }}\n",
                    scalar(&axis.values[1]),
                    scalar(&axis.values[0]),
                    trim_float((bound * 1000.0).round() / 1000.0),
                    a = axis.name,
                ));
            }
        }
    }
    y
}
