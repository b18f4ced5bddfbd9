//! From what was found to a draft experiment: devices, matrix (loops over values,
//! script arguments, a table's header for a variable the post never sets), the
//! workload (the timed command) with `repeat:`/`times:`, setup and capture steps,
//! `tools:` for programs fslab does not know. Its writers are [`super::yaml`] (the draft's
//! text) and [`super::csv`] (the published CSV).

pub use super::axis::Axis;
use super::branches::{place, variants_default, workload_variants, When};
use super::commands::{Block, BlockKind};
use super::excludes;
use super::heredocs::{self, Rewrite};
use super::naming::{
    axis_name, format_size, is_device, parse_kind, positional_args, replace_path, shows_a_script,
    tool_name, trim_float,
};
use super::nested;
use super::pick;
use super::programs::Program;
use super::replies;
use super::shell::{built_in_unread_loop, perf, unquote, vars_in, walk, Cmd, Loop, LoopKind};
use super::step::{Action, Step};
use super::tables::Table;
use super::workdir;
use super::{Note, NoteKind};

/// A device of the draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub name: String,
    pub path: String,
    pub line: usize,
    /// `Some((size, why))` from the post, else a stated default.
    pub size: String,
    pub size_from_post: bool,
    pub why: String,
}

/// A `tools:` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub program: String,
    pub line: usize,
}

/// The experiment part of a draft.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Experiment {
    pub devices: Vec<Device>,
    pub matrix: Vec<Axis>,
    /// Axes the prose suggests (`ranges`): written as comments, never run by themselves.
    pub candidates: Vec<Axis>,
    pub vars: Vec<(String, String, String)>,
    pub setup: Vec<Step>,
    pub workload: Option<Step>,
    /// The timed commands of a `case`'s branches, each with its `when:` (the workload's
    /// branch among them): each point runs its branch's, as the post does.
    pub workload_variants: Vec<Step>,
    /// Points left out: those an axis made inside one `case` branch would add to the others.
    pub exclude: Vec<excludes::Exclude>,
    pub capture: Vec<Step>,
    pub teardown: Vec<Step>,
    pub tools: Vec<Tool>,
    pub medium: Option<&'static str>,
    /// The post's scripts at several quote depths: the one kept, the others as comments.
    pub scripts: Option<replies::Split>,
}

/// The default size of a device whose size the post does not give.
pub const DEFAULT_SIZE: &str = "4GiB";

/// Commands of the experiment, each with its loops (outermost first).
struct Located<'a> {
    cmd: &'a Cmd,
    loops: Vec<&'a Loop>,
    inline: bool,
    /// Where a `case` branch's command runs.
    when: Option<(String, Vec<String>)>,
}

/// Build the experiment from the blocks.
pub fn build(
    blocks: &[Block],
    tables: &[Table],
    line_numbers: &[usize],
    device_sizes: &[(String, u64, usize)],
    prose_sizes: &[(f64, String, String, usize)],
    evidence: &pick::Evidence,
    notes: &mut Vec<Note>,
) -> Option<Experiment> {
    let mut exp = Experiment::default();
    let scripts: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Script)
        .collect();
    // script invocations from prompts: positional values
    let mut positional: Vec<(usize, Vec<String>, usize)> = Vec::new(); // ($N, values, line)
    let mut invocation_lines = Vec::new();
    if !scripts.is_empty() {
        for b in blocks.iter().filter(|b| b.kind == BlockKind::Prompt) {
            walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
                let argv = c.argv();
                let args: &[String] = match c.program() {
                    Program::Script(_) => &argv[1..],
                    Program::Util | Program::Other(_)
                        if matches!(argv[0].as_str(), "sh" | "bash") =>
                    {
                        argv.get(2..).unwrap_or(&[])
                    }
                    _ => return,
                };
                invocation_lines.push(c.line);
                for (i, a) in args.iter().enumerate() {
                    match positional.iter_mut().find(|p| p.0 == i + 1) {
                        Some(p) => {
                            if !p.1.contains(a) {
                                p.1.push(a.clone())
                            }
                        }
                        None => positional.push((i + 1, vec![a.clone()], c.line)),
                    }
                }
            });
        }
    }
    // the experiment's commands: every block the post shows, in its order (several
    // scripts, a setup and a test script, a before/after pair, become steps of one draft)
    let real: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.kind != BlockKind::Inline)
        .collect();
    // a reply that shows scripts at several quote depths: the least-quoted one
    let (real, split) = replies::prefer(real, notes);
    if scripts.len() > 1 && split.is_none() {
        let at: Vec<String> = scripts.iter().map(|b| b.line.to_string()).collect();
        notes.push(Note::new(
            scripts[1].line,
            NoteKind::Recognised,
            &format!(
                "{} scripts in the post (lines {}): their commands are steps of one draft, in the post's order",
                scripts.len(),
                at.join(", ")
            ),
        ));
    }
    let use_inline = real.iter().all(|b| b.nodes.is_empty());
    let chosen: Vec<&Block> = if use_inline {
        blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Inline)
            .collect()
    } else {
        real
    };
    let mut located: Vec<Located> = Vec::new();
    let mut seen: Vec<(usize, String)> = Vec::new();
    for b in &chosen {
        let inline = b.kind == BlockKind::Inline;
        walk(&b.nodes, &mut Vec::new(), &mut |c, loops| {
            if invocation_lines.contains(&c.line) && !inline {
                return;
            }
            if shows_a_script(c) && !scripts.is_empty() {
                notes.push(Note::new(
                    c.line,
                    NoteKind::Recognised,
                    &format!(
                        "`{}` shows or prepares the post's script: not a step",
                        c.text()
                    ),
                ));
                return;
            }
            // the same command in two `case` branches, or fed two texts, is two steps
            let mut key = match &c.case {
                Some(k) => format!("{} [{} {}]", c.text(), k.line, k.head()),
                None => c.text(),
            };
            if let Some(d) = &c.heredoc {
                key.push_str(&format!(" <<{:?}", d.text()));
            }
            if let Some(first) = seen.iter().find(|s| s.1 == key) {
                notes.push(Note::new(
                    c.line,
                    NoteKind::Recognised,
                    &format!(
                        "the same command as line {}: one step (the post runs it again)",
                        first.0
                    ),
                ));
                return;
            }
            seen.push((c.line, key));
            if let Some(why) = &c.per_branch {
                if !notes.iter().any(|n| n.line == c.line && n.what == *why) {
                    notes.push(Note::new(c.line, NoteKind::Recognised, why));
                }
            }
            located.push(Located {
                cmd: c,
                loops: loops.to_vec(),
                inline,
                when: None,
            });
        });
    }
    if !use_inline {
        for b in blocks.iter().filter(|b| b.kind == BlockKind::Inline) {
            notes.push(Note::new(b.line, NoteKind::Unmapped, "a command named in a sentence; the post's command blocks are the experiment, so it is not a step"));
        }
    }
    if located.is_empty() {
        return None;
    }
    if use_inline {
        // order by role: mkfs, mount, the rest
        located.sort_by_key(|l| match l.cmd.program() {
            Program::Mkfs(_) => 0,
            Program::Mount => 1,
            _ => 2,
        });
    }

    // devices
    let mut devices: Vec<Device> = Vec::new();
    let add_device = |path: &str, role: Option<&str>, line: usize, devices: &mut Vec<Device>| {
        if devices.iter().any(|d| d.path == path) {
            return;
        }
        let name = match role {
            Some(r) if !devices.iter().any(|d| d.name == r) => r.to_string(),
            _ if devices.is_empty() => "data".to_string(),
            _ => format!("dev{}", devices.len() + 1),
        };
        devices.push(Device {
            name,
            path: path.to_string(),
            line,
            size: DEFAULT_SIZE.into(),
            size_from_post: false,
            why: String::new(),
        });
    };
    // mkfs targets first (data), then role options, then mount devices
    for l in &located {
        let argv = l.cmd.argv();
        if matches!(l.cmd.program(), Program::Mkfs(_)) {
            if let Some(dev) = argv.iter().skip(1).rev().find(|w| is_device(w)) {
                add_device(dev, Some("data"), l.cmd.line, &mut devices);
            }
        }
    }
    for l in &located {
        for w in l.cmd.argv() {
            for part in w.split(',') {
                for (key, role) in [("rtdev=", "rt"), ("logdev=", "log")] {
                    if let Some(p) = part.trim_start_matches("-o").strip_prefix(key) {
                        if is_device(p) {
                            add_device(p, Some(role), l.cmd.line, &mut devices);
                        }
                    }
                }
            }
        }
    }
    let mut mount_point: Option<String> = None;
    for l in &located {
        let argv = l.cmd.argv();
        if l.cmd.program() == Program::Mount {
            let pos: Vec<&String> = positional_args(&argv);
            if pos.len() >= 2 {
                if is_device(pos[0]) {
                    add_device(pos[0], Some("data"), l.cmd.line, &mut devices);
                }
                mount_point.get_or_insert(pos[1].clone());
            }
        }
        if matches!(
            l.cmd.program(),
            Program::Fsck | Program::Debugfs | Program::Dumpe2fs
        ) {
            if let Some(dev) = argv.iter().skip(1).find(|w| is_device(w)) {
                add_device(dev, Some("data"), l.cmd.line, &mut devices);
            }
        }
    }
    // Any other device a command writes or reads (`sfdisk /dev/sdb`, `dd of=/dev/sdc`): a
    // device of its own, so that the step names `{{dev.X}}`, never a real path.
    for l in &located {
        for w in l.cmd.argv().iter().skip(1) {
            let p = w.split_once('=').map_or(w.as_str(), |(_, v)| v);
            if is_device(p) {
                add_device(p, None, l.cmd.line, &mut devices);
            }
        }
    }
    let mkfs_present = located
        .iter()
        .any(|l| matches!(l.cmd.program(), Program::Mkfs(_)));
    if devices.is_empty() && mkfs_present {
        let line = located
            .iter()
            .find(|l| matches!(l.cmd.program(), Program::Mkfs(_)))
            .map_or(0, |l| l.cmd.line);
        devices.push(Device {
            name: "data".into(),
            path: String::new(),
            line,
            size: DEFAULT_SIZE.into(),
            size_from_post: false,
            why: String::new(),
        });
        notes.push(Note::new(
            line,
            NoteKind::Guess,
            "mkfs names no device: the draft makes one, `data`",
        ));
    }
    for d in &mut devices {
        if let Some((_, bytes, line)) = device_sizes.iter().find(|(n, _, _)| *n == d.name) {
            d.size = format_size(*bytes);
            d.size_from_post = true;
            d.why = format!("line {line}: the mkfs output's blocks × bsize");
        } else if let Some((v, unit, printed, line)) =
            prose_sizes.first().filter(|_| d.name == "data")
        {
            d.size = format!("{}{}", trim_float(*v), unit);
            d.size_from_post = true;
            d.why = format!("line {line}: \"{printed}\"");
        } else {
            d.why = format!(
                "guess: the post does not give the size of {}; {DEFAULT_SIZE} is a default",
                if d.path.is_empty() {
                    "the device"
                } else {
                    &d.path
                }
            );
            notes.push(Note::new(d.line, NoteKind::Guess, &d.why));
        }
        if d.path.contains("pmem") {
            exp.medium = Some("pmem");
        } else if d.path.starts_with("/dev/ram") {
            exp.medium = Some("ramdisk");
        } else if d.path.contains("nvme") {
            exp.medium = Some("ssd");
        }
    }
    if exp.medium.is_none() && !devices.is_empty() {
        exp.medium = Some("unknown");
    }

    // matrix: script arguments
    let cmds: Vec<&Cmd> = located.iter().map(|l| l.cmd).collect();
    let mut axes: Vec<Axis> = Vec::new();
    let mut rename: Vec<(String, String)> = Vec::new(); // $var → {{axis}}
    for (n, values, line) in &positional {
        let var = n.to_string();
        let name = axis_name(&cmds, &var).unwrap_or_else(|| format!("arg{n}"));
        rename.push((var, name.clone()));
        axes.push(Axis {
            name,
            values: values.clone(),
            line: *line,
            why: format!("the script's ${n} in the post's runs of it"),
        });
    }
    // list loops
    for l in &located {
        for lp in &l.loops {
            if let LoopKind::List(values) = &lp.kind {
                if rename.iter().any(|r| r.0 == lp.var) {
                    continue;
                }
                let mut name = axis_name(&cmds, &lp.var).unwrap_or_else(|| lp.var.clone());
                if axes.iter().any(|a| a.name == name) {
                    name = format!("{name}_{}", lp.var); // `-b size=$j -n size=${i}k`
                }
                rename.push((lp.var.clone(), name.clone()));
                let why = if lp.head.starts_with("guess:") {
                    notes.push(Note::new(
                        lp.line,
                        NoteKind::Guess,
                        &format!("matrix axis `{name}`: {}", lp.head),
                    ));
                    lp.head.clone()
                } else {
                    format!("`{}`", lp.head)
                };
                axes.push(Axis {
                    name,
                    values: values.clone(),
                    line: lp.line,
                    why,
                });
            }
        }
    }
    // unbound variables: a table header of that name, else a var to fill in
    let loop_vars: Vec<String> = located
        .iter()
        .flat_map(|l| l.loops.iter().map(|lp| lp.var.clone()))
        .collect();
    for l in &located {
        for w in &l.cmd.words {
            for v in vars_in(w) {
                if rename.iter().any(|r| r.0 == v) || loop_vars.contains(&v) {
                    continue;
                }
                if let Some(t) = tables.iter().find(|t| {
                    t.axis
                        .as_deref()
                        .is_some_and(|a| a.eq_ignore_ascii_case(&v))
                }) {
                    let name = tool_name(&v);
                    let line = t
                        .header
                        .and_then(|h| line_numbers.get(h).copied())
                        .unwrap_or(l.cmd.line);
                    rename.push((v.clone(), name.clone()));
                    axes.push(Axis {
                        name,
                        values: t.columns.clone(),
                        line,
                        why: format!(
                            "the post never sets ${v}; its table's header `{}` gives the values",
                            t.axis.clone().unwrap_or_default()
                        ),
                    });
                } else {
                    let name = tool_name(&v);
                    rename.push((v.clone(), name.clone()));
                    let built = blocks
                        .iter()
                        .find_map(|b| built_in_unread_loop(&b.nodes, &v));
                    let (said, why) = match built {
                        Some(w) => (w.clone(), w),
                        None => (
                            format!("${v} is never set in the post"),
                            format!("the post uses ${v} without giving its value"),
                        ),
                    };
                    notes.push(Note::new(
                        l.cmd.line,
                        NoteKind::Unmapped,
                        &format!("{said}: var `{name}` is left to fill in"),
                    ));
                    exp.vars.push((
                        name,
                        "FILL_IN".into(),
                        format!("line {}: guess: {why}", l.cmd.line),
                    ));
                }
            }
        }
    }
    exp.matrix = axes;

    // `case` branches: where each runs (`when:`), or not at all, or the draft cannot say
    let arms: Vec<_> = located
        .iter()
        .map(|l| (l.cmd.case.as_deref(), l.cmd.line, l.cmd.text()))
        .collect();
    let placed = place(&arms, &rename, &exp.matrix, notes);
    let located: Vec<Located> = located
        .into_iter()
        .zip(placed)
        .filter_map(|(mut l, p)| {
            p.map(|when| {
                l.when = when;
                l
            })
        })
        .collect();
    if located.is_empty() {
        notes.push(Note::new(
            0,
            NoteKind::Unmapped,
            "every command of the post is in a `case` branch the draft cannot place",
        ));
        return None;
    }

    let uses: Vec<excludes::Use> = (located.iter())
        .map(|l| {
            (
                l.loops.iter().map(|lp| lp.var.as_str()).collect(),
                l.when.as_ref(),
            )
        })
        .collect();
    exp.exclude = excludes::within_branches(&uses, &rename, &exp.matrix, notes);
    // the workload
    let picks: Vec<(&Cmd, bool)> = located.iter().map(|l| (l.cmd, l.inline)).collect();
    let workload_idx = pick::workload(&picks, evidence);
    let flags: Vec<_> = located
        .iter()
        .map(|l| {
            let measured = l.cmd.timed || evidence.reported.contains(&l.cmd.line);
            (measured, l.cmd.case.as_deref(), l.when.is_some())
        })
        .collect();
    let variants = workload_variants(&flags, workload_idx);
    let timed_here = |idx: usize| idx == workload_idx || variants.contains(&idx);
    // the directory the post measured in when it mounts nothing (the workload's, from a
    // `cd` or its prompt): the filesystem the draft makes (`host_paths`), at `{{mnt}}`
    let mut measured: Option<String> = None;
    let mut measured_cwd = None;
    if mount_point.is_none() && !located.iter().any(|l| l.cmd.program() == Program::Mount) {
        if let Some(cwd) = workdir::measured(located[workload_idx].cmd, blocks) {
            notes.push(Note::new(
                cwd.line,
                NoteKind::Guess,
                &format!(
                    "the workload runs in `{}` (line {}: `{}`): the draft runs it on its own device's filesystem, at {{{{mnt}}}}",
                    cwd.dir, cwd.line, cwd.text
                ),
            ));
            if cwd.absolute() {
                mount_point = Some(cwd.dir.clone());
            } else {
                measured = Some(cwd.dir.clone());
            }
            measured_cwd = Some(cwd.clone());
        }
    }

    let subst_paths = |w: &str| -> String {
        let mut s = w.to_string();
        for d in &devices {
            if !d.path.is_empty() {
                s = replace_path(&s, &d.path, &format!("{{{{dev.{}}}}}", d.name));
            }
        }
        if let Some(mp) = &mount_point {
            s = replace_path(&s, mp, "{{mnt}}");
        }
        s
    };
    let subst = |w: &str, loop_var: Option<&str>| -> String {
        let mut s = subst_paths(w);
        for (v, name) in &rename {
            for form in [format!("${{{v}}}"), format!("${v}")] {
                s = s.replace(&form, &format!("{{{{{name}}}}}"));
            }
        }
        if let Some(v) = loop_var {
            for form in [format!("${{{v}}}"), format!("${v}")] {
                s = s.replace(&form, "{{i}}");
            }
        }
        s
    };

    let mut mounted = false;
    let mut tools: Vec<Tool> = Vec::new();
    for (idx, l) in located.iter().enumerate() {
        let c = l.cmd;
        let p = c.program();
        let count_loop = l
            .loops
            .iter()
            .rev()
            .find(|lp| !matches!(lp.kind, LoopKind::List(_)));
        // loops outside the timed region repeat the workload, those inside are its `times:`
        let [outer, inner] = nested::split(&l.loops, timed_here(idx), c.timed);
        let times_loop = inner.last().copied();
        let times = times_loop.and_then(Loop::count);
        let nest = times_loop.and_then(|_| nested::nest(&inner, &c.words));
        let times = nested::times(nest.as_ref(), times);
        let loop_var = times_loop
            .filter(|_| nest.is_none())
            .map(|lp| lp.var.as_str());
        let perf = c.perf_stat();
        let repeat = if timed_here(idx) {
            perf::repeat(nested::runs(&outer), perf.as_ref())
        } else {
            None
        };
        let argv = c.argv();
        let mut comment = format!("line {}: {}", c.line, c.text());
        if let Some(lp) = count_loop {
            comment.push_str(&format!(" (in `{}`)", lp.head));
        }
        if let Some(p) = &perf {
            perf::note(p, timed_here(idx), c.line, &mut comment, notes);
        }
        if let Some(cond) = &c.cond {
            let why = format!("guess: the post runs it only under {cond}; the draft always does");
            comment.push_str(&format!("; {why}"));
            notes.push(Note::new(c.line, NoteKind::Guess, &why));
        }
        if c.timed && !timed_here(idx) && located[workload_idx].cmd.timed {
            notes.push(Note::new(
                c.line,
                NoteKind::Unmapped,
                &format!(
                    "also timed in the post; the draft's workload is line {}'s, this one is a {} step",
                    located[workload_idx].cmd.line,
                    if exp.workload.is_some() { "capture" } else { "setup" }
                ),
            ));
        }
        let mut action = match &p {
            Program::Umount if !timed_here(idx) => {
                if mounted && exp.workload.is_some() {
                    // after the workload: the teardown unmounts (a setup step would run
                    // before the workload)
                    notes.push(Note::new(
                        c.line,
                        NoteKind::Recognised,
                        "umount after the workload: the draft's teardown",
                    ));
                } else if mounted {
                    exp.setup.push(Step {
                        line: c.line,
                        action: Action::Umount,
                        times: None,
                        repeat: None,
                        when: None,
                        comment,
                    });
                    mounted = false;
                } else {
                    notes.push(Note::new(
                        c.line,
                        NoteKind::Recognised,
                        "umount before mkfs: fslab starts each point on a fresh device",
                    ));
                }
                continue;
            }
            Program::Mount => {
                let dev = positional_args(&argv)
                    .first()
                    .and_then(|d| devices.iter().find(|x| x.path == **d))
                    .map_or("data".to_string(), |d| d.name.clone());
                let mut opts: Vec<String> = Vec::new();
                let mut i = 1;
                while i < argv.len() {
                    let a = &argv[i];
                    if a == "-o" {
                        opts.extend(argv.get(i + 1).map(|o| subst(o, None)));
                        i += 1;
                    } else if let Some(o) = a.strip_prefix("-o") {
                        opts.push(subst(o, None));
                    } else if a == "-t" {
                        i += 1;
                    }
                    i += 1;
                }
                let opts: Vec<String> = opts
                    .iter()
                    .flat_map(|o| o.split(',').map(str::to_string).collect::<Vec<_>>())
                    .filter(|o| o != "loop" && !o.is_empty())
                    .collect();
                mounted = true;
                Action::Mount {
                    device: dev,
                    options: (!opts.is_empty()).then(|| opts.join(",")),
                }
            }
            Program::Mkdir
                if mount_point
                    .as_ref()
                    .is_some_and(|mp| argv.last().is_some_and(|a| a.starts_with(mp.as_str()))) =>
            {
                Action::Mkdir(subst(argv.last().map_or("", String::as_str), None))
            }
            Program::Sync => Action::Sync,
            Program::Util if c.drops_caches() => Action::DropCaches,
            _ => {
                let mut words: Vec<String> = c.words[c.program_index()..]
                    .iter()
                    .map(|w| subst(w, loop_var))
                    .collect();
                if matches!(p, Program::Other(_)) || p.is_benchmark() {
                    let prog = unquote(&c.words[c.program_index()]);
                    let name = tool_name(prog.rsplit('/').next().unwrap_or(&prog));
                    if !tools.iter().any(|t| t.name == name) {
                        tools.push(Tool {
                            name: name.clone(),
                            program: prog.clone(),
                            line: c.line,
                        });
                        notes.push(Note::new(c.line, NoteKind::Recognised, &format!("`{prog}`: a `tools:` entry `{name}` (`fslab doctor` reports it when it is missing)")));
                    }
                    words[0] = format!("{{{{{name}}}}}");
                }
                if matches!(
                    p,
                    Program::Fsck | Program::Debugfs | Program::Dumpe2fs | Program::Mkfs(_)
                ) && !words.iter().any(|w| w.contains("{{dev."))
                    && !devices.is_empty()
                {
                    words.push("{{dev.data}}".into());
                    comment.push_str("; guess: the post names no device, {{dev.data}} added");
                    notes.push(Note::new(
                        c.line,
                        NoteKind::Guess,
                        "the command names no device: {{dev.data}} added",
                    ));
                }
                if l.inline && matches!(p, Program::Fsck) {
                    // e2fsck on a mounted filesystem is refused: umount before it
                    if mounted {
                        exp.setup.push(Step {
                            line: c.line,
                            action: Action::Umount,
                            times: None,
                            repeat: None,
                            when: None,
                            comment: format!(
                                "line {}: guess: fsck runs on the unmounted filesystem",
                                c.line
                            ),
                        });
                        mounted = false;
                    }
                }
                if l.inline
                    && !mounted
                    && idx != workload_idx
                    && !matches!(
                        p,
                        Program::Mkfs(_) | Program::Fsck | Program::Debugfs | Program::Dumpe2fs
                    )
                    && devices.iter().any(|d| d.name == "data")
                {
                    exp.setup.push(Step {
                        line: c.line,
                        action: Action::Mount { device: "data".into(), options: None },
                        times: None,
                        repeat: None,
                        when: None,
                        comment: format!("line {}: guess: the post does not show the mount; {} runs on the filesystem", c.line, argv[0]),
                    });
                    mounted = true;
                }
                let name = match &p {
                    Program::Mkfs(_) => "mkfs".to_string(),
                    _ => tool_name(argv[0].rsplit('/').next().unwrap_or(&argv[0])),
                };
                Action::Run {
                    name,
                    command: words.join(" "),
                    parse: parse_kind(&p),
                }
            }
        };
        if let (
            Some(doc),
            Action::Run {
                name,
                command,
                parse,
            },
        ) = (&c.heredoc, &action)
        {
            // a here-document: the text the command reads, kept in a `sh -c` script
            let body = |s: &str| {
                if doc.quoted {
                    subst_paths(s)
                } else {
                    subst(s, loop_var)
                }
            };
            let fio = p == Program::Fio;
            action = match heredocs::rewrite(c, doc, &argv, command, fio, &body, notes) {
                Rewrite::Script {
                    name: Some(write),
                    argv,
                } => Action::Words {
                    name: write,
                    argv,
                    parse: None,
                },
                Rewrite::Script { name: None, argv } => Action::Words {
                    name: name.clone(),
                    argv,
                    parse: *parse,
                },
                Rewrite::Job {
                    name: write,
                    argv,
                    command,
                } => {
                    exp.setup.push(Step {
                        line: c.line,
                        action: Action::Words {
                            name: write,
                            argv,
                            parse: None,
                        },
                        times: None,
                        repeat: None,
                        when: l.when.clone(),
                        comment: format!(
                            "line {}: the job of `{}` ({})",
                            c.line,
                            c.text(),
                            heredocs::span(doc)
                        ),
                    });
                    Action::Run {
                        name: name.clone(),
                        command,
                        parse: *parse,
                    }
                }
            };
        }
        nested::wrap(nest.as_ref(), &inner, &mut action, &mut comment);
        nested::iterate(&outer, &mut action, &mut comment);
        let mp = mount_point.as_deref().or(measured.as_deref());
        let cwd = c
            .cwd
            .as_ref()
            .or(measured_cwd.as_ref().filter(|_| idx == workload_idx));
        workdir::place(cwd, mp, &mut action, &mut comment, notes);
        let when = l.when.clone();
        if idx == workload_idx && variants.is_empty() {
            if let Some((axis, values)) = &when {
                let why = format!("guess: the post runs the workload only where {axis} is {}; the draft's workload runs at every point", values.join(" or "));
                comment.push_str(&format!("; {why}"));
                notes.push(Note::new(c.line, NoteKind::Guess, &why));
            }
        }
        // last in the comment: the shell the step does not carry (`> log`, `| tee LOG`)
        if let Some(why) = c.not_carried().filter(|_| !c.drops_caches()) {
            comment.push_str(&format!("; {why}"));
            notes.push(Note::new(c.line, NoteKind::Guess, &why));
        }
        let step = Step {
            line: c.line,
            action,
            times: nested::counted(times, times_loop.filter(|_| nest.is_none()), &c.words),
            repeat,
            when: if timed_here(idx) { None } else { when.clone() },
            comment,
        };
        if timed_here(idx) && !variants.is_empty() {
            let mut v = step.clone();
            v.when.clone_from(&when);
            if let Some((axis, values)) = &when {
                notes.push(Note::new(c.line, NoteKind::Recognised, &format!("a timed command in a `case` branch: a `workload_variants` entry with `when: {{ {axis}: [{}] }}`", values.join(", "))));
            }
            exp.workload_variants.push(v);
        }
        if idx == workload_idx {
            exp.workload = Some(step);
        } else if timed_here(idx) {
            // a variant only
        } else if exp.workload.is_some() && !matches!(p, Program::Mkfs(_)) {
            // after the workload: captures (xfs_bmap, filefrag, xfs_info, …) and the rest
            exp.capture.push(step);
        } else {
            exp.setup.push(step);
        }
    }
    if let Some(w) = exp.workload.as_mut().filter(|_| !variants.is_empty()) {
        let whens: Vec<&When> = exp.workload_variants.iter().map(|v| &v.when).collect();
        w.comment.push_str(&variants_default(&whens, &exp.matrix));
    }
    if mounted {
        exp.teardown.push(Step {
            line: 0,
            action: Action::Umount,
            times: None,
            repeat: None,
            when: None,
            comment: "the draft unmounts what it mounted".into(),
        });
    }
    replies::say(split.as_ref(), exp.workload.as_ref(), notes);
    exp.scripts = split;
    exp.tools = tools;
    exp.devices = devices;
    Some(exp)
}
