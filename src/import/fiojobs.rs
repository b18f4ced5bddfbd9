//! fio in a post, beyond its JSON (`output::fio_json`): a job file shown in the post
//! (`[global]` and `[job]` sections of `key=value` lines), whose options become the fio
//! command's options in the draft (`fio job.fio` → `fio --bs=4k … --name=job --rw=…`, the
//! options before the first `--name` global, as fio reads them); and fio's normal output,
//! fio 3's `write: IOPS=412k, BW=1609MiB/s (…)` and fio 2's `write: io=…, bw=…, iops=…,
//! runt=…`, under its job's header (`randwrite: (groupid=0, jobs=16): err= 0: …`), whose
//! name labels the rows (`job`), with the job's `rw`, `bs`, `iodepth` and `numjobs` when
//! the post shows its job file; the latency, percentile and sample lines under a direction
//! line (`fiolat`) are rows of it too. The header and fio's summary lines are output, not
//! prose.

use super::commands::{Block, BlockKind, Commands};
use super::fiolat::{self, Detail};
use super::mail::{Post, PostLine};
use super::numbers::token_quantity;
use super::output::Found;
use super::programs::Program;
use super::shell::{walk, Cmd, Loop, LoopKind, Node};
use super::{Category, Note, NoteKind, Row};

/// Options that make a `[section]` of `key=value` lines a fio job.
const FIO_KEYS: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "iodepth",
    "ioengine",
    "numjobs",
    "direct",
    "filename",
    "directory",
    "size",
    "runtime",
    "time_based",
    "fsync",
    "rwmixread",
    "bssplit",
];

/// The lines fio prints under a direction line.
/// (White space collapsed: a mail client may send fio's runs of spaces as non-breaking
/// ones.) The latency and sample lines are read by `fiolat`; those it cannot read are
/// still fio's.
const FIO_DETAIL: &[&str] = &[
    "slat (",
    "clat (",
    "clat prio",
    "lat (",
    "clat percentiles",
    "bw (",
    "iops :",
    "cpu :",
    "IO depths",
    "submit :",
    "complete :",
    "issued",
    "latency :",
];

/// The job options copied onto the rows of a job's results.
const ROW_KEYS: &[&str] = &["rw", "bs", "iodepth", "numjobs"];

/// One option: `key=value`, or a bare `key` (`time_based`).
pub type Opt = (String, Option<String>);

/// A fio job file shown in the post.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    /// The post indices of its lines.
    pub lines: Vec<usize>,
    /// The post line of its first section.
    pub line: usize,
    pub global: Vec<Opt>,
    /// Each job section: its name and options.
    pub jobs: Vec<(String, Vec<Opt>)>,
    /// Options whose comment lists other values of the same kind (`numjobs=1 # 2 4`):
    /// the key, every value in order (the option's first), the post line.
    pub tried: Vec<(String, Vec<String>, usize)>,
}

impl JobFile {
    /// fio's command-line form: the global options, then `--name=` and each job's own.
    pub fn args(&self) -> Vec<String> {
        let opt = |(k, v): &Opt| match v {
            Some(v) => format!("--{k}={v}"),
            None => format!("--{k}"),
        };
        let mut out: Vec<String> = self.global.iter().map(opt).collect();
        for (name, opts) in &self.jobs {
            out.push(format!("--name={name}"));
            out.extend(opts.iter().map(opt));
        }
        out
    }

    /// Option `key` of job `name` (its own, else the global one).
    fn option(&self, name: &str, key: &str) -> Option<String> {
        let find = |opts: &[Opt]| {
            opts.iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.clone())
        };
        self.jobs
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, o)| find(o))
            .or_else(|| find(&self.global))
    }
}

fn section(t: &str) -> Option<&str> {
    let name = t.strip_prefix('[')?.strip_suffix(']')?;
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')))
    .then_some(name)
}

/// A line's text and its comment (fio's `#` or `;` after a blank, as fio cuts it).
fn comment(t: &str) -> (&str, Option<&str>) {
    let cut = [" #", "\t#", " ;", "\t;"]
        .iter()
        .filter_map(|c| t.find(c))
        .min();
    match cut {
        Some(i) => (t[..i].trim_end(), Some(t[i + 2..].trim())),
        None => (t, None),
    }
}

/// The other values a comment lists for an option (`numjobs=1 # 2 4`, `bs=4k ; 64k 1m`):
/// words of the value's kind only (counts, or sizes with a unit letter), each new;
/// prose (`size=4G # 2x RAM`) lists none.
fn other_values(value: &str, comment: &str) -> Option<Vec<String>> {
    let kind = |w: &str| {
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let unit = &w[digits.len()..];
        (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) && unit.len() <= 1)
            .then_some(unit.is_empty())
    };
    let want = kind(value)?;
    let words: Vec<&str> = comment
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let ok = !words.is_empty() && words.iter().all(|w| kind(w) == Some(want) && *w != value);
    ok.then(|| {
        std::iter::once(value)
            .chain(words)
            .map(str::to_string)
            .collect()
    })
}

fn option(t: &str) -> Option<Opt> {
    let t = comment(t).0;
    let (k, v) = match t.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
        None => (t, None),
    };
    (!k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| (k.to_string(), v))
}

/// The job files in the post, outside the lines `skip` says are taken (here-documents).
pub fn job_files(lines: &[PostLine], skip: &dyn Fn(usize) -> bool) -> Vec<JobFile> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if skip(k) || section(lines[k].text.trim()).is_none() {
            k += 1;
            continue;
        }
        let mut job = JobFile {
            lines: Vec::new(),
            line: lines[k].n,
            global: Vec::new(),
            jobs: Vec::new(),
            tried: Vec::new(),
        };
        let mut m = k;
        let mut cur: Option<String> = None;
        while m < lines.len() {
            let t = lines[m].text.trim();
            if let Some(name) = section(t) {
                cur = Some(name.to_string());
                if name != "global" {
                    job.jobs.push((name.to_string(), Vec::new()));
                }
            } else if t.is_empty() {
                // a blank line goes on only to another section
                let next = lines[m + 1..].iter().find(|l| !l.text.trim().is_empty());
                if next.is_none_or(|l| section(l.text.trim()).is_none()) {
                    break;
                }
            } else if t.starts_with([';', '#']) {
                // a comment
            } else if let Some(o) = option(t).filter(|_| cur.is_some()) {
                if let (Some(v), (_, Some(c))) = (&o.1, comment(t)) {
                    if let Some(vals) = other_values(v, c) {
                        job.tried.push((o.0.clone(), vals, lines[m].n));
                    }
                }
                match (cur.as_deref(), job.jobs.last_mut()) {
                    (Some("global"), _) => job.global.push(o),
                    (_, Some(j)) => j.1.push(o),
                    _ => {}
                }
            } else {
                break;
            }
            job.lines.push(m);
            m += 1;
        }
        let known = job
            .global
            .iter()
            .chain(job.jobs.iter().flat_map(|j| j.1.iter()))
            .any(|(key, _)| FIO_KEYS.contains(&key.as_str()));
        if known {
            out.push(job);
        }
        k = m.max(k + 1);
    }
    out
}

/// The post lines of the here-documents in the blocks (a job file there is the command's).
pub fn heredoc_lines(blocks: &[Block]) -> Vec<usize> {
    let mut out = Vec::new();
    for b in blocks {
        walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
            if let Some(d) = &c.heredoc {
                out.extend(d.body.iter().map(|(n, _)| *n));
            }
        });
    }
    out
}

/// Give the job files to the commands: each `fio FILE` gets the options of the nearest
/// job file above it (else the first), in place of FILE; the blocks a job file's lines
/// made (its `key=value` lines read as assignments) leave; a post that shows a job file
/// and no fio command gets one, said as a guess. The job's lines are the post's commands,
/// not its numbers.
pub fn apply(jobs: &[JobFile], lines: &[PostLine], cmds: &mut Commands, notes: &mut Vec<Note>) {
    let Some(first) = jobs.first() else {
        return;
    };
    let job_lines: Vec<usize> = jobs
        .iter()
        .flat_map(|j| j.lines.iter().map(|k| lines[*k].n))
        .collect();
    cmds.blocks
        .retain(|b| b.kind == BlockKind::Inline || !job_lines.contains(&b.line));
    for j in jobs {
        for &k in &j.lines {
            if let Some(c) = cmds.command_lines.get_mut(k) {
                *c = true;
            }
        }
    }
    let mut used = false;
    for b in &mut cmds.blocks {
        for_each_cmd(&mut b.nodes, &mut |c| {
            if c.program() != Program::Fio || c.heredoc.is_some() {
                return;
            }
            let pi = c.program_index();
            let Some(f) = (pi + 1..c.words.len())
                .find(|i| !c.words[*i].starts_with('-') && !c.words[*i].contains('='))
            else {
                return;
            };
            let job = jobs.iter().rev().find(|j| j.line < c.line).unwrap_or(first);
            notes.push(Note::new(
                job.line,
                NoteKind::Recognised,
                &format!(
                    "a fio job file: its options are the options of `{}` (line {}) in the draft",
                    c.text(),
                    c.line
                ),
            ));
            c.words.splice(f..=f, job.args());
            used = true;
        });
    }
    if !used {
        let mut c = Cmd::new(first.line, vec!["fio".to_string()]);
        c.words.extend(first.args());
        notes.push(Note::new(
            first.line,
            NoteKind::Guess,
            "guess: the post shows a fio job file but no fio command: the draft runs fio with the job's options",
        ));
        cmds.blocks.push(Block {
            kind: BlockKind::Bare,
            line: first.line,
            nodes: vec![Node::Cmd(c)],
            depth: lines
                .iter()
                .find(|l| l.n == first.line)
                .map_or(0, |l| l.depth),
        });
        cmds.blocks.sort_by_key(|b| b.line);
    }
    for b in &mut cmds.blocks {
        tried_loops(&mut b.nodes, jobs);
    }
}

/// A fio command run with a job whose comment lists other values of an option
/// (`numjobs=1 # 2 4`): a loop over them around it, the option `--numjobs=$numjobs`, as
/// if the post had written `for numjobs in 1 2 4; do fio …`.
fn tried_loops(nodes: &mut [Node], jobs: &[JobFile]) {
    for n in nodes.iter_mut() {
        let lp = match n {
            Node::Loop(l) => {
                tried_loops(&mut l.body, jobs);
                continue;
            }
            Node::Cmd(c) if c.program() == Program::Fio => {
                let Some(job) = jobs.iter().rev().find(|j| j.line < c.line).or(jobs.first()) else {
                    continue;
                };
                let mut c = c.clone();
                let mut wrap: Option<Loop> = None;
                for (key, vals, line) in job.tried.iter().rev() {
                    let opt = format!("--{key}={}", vals[0]);
                    let Some(w) = c.words.iter().position(|w| *w == opt) else {
                        continue;
                    };
                    c.words[w] = format!("--{key}=${key}");
                    let body = match wrap.take() {
                        Some(inner) => vec![Node::Loop(inner)],
                        None => vec![Node::Cmd(c.clone())],
                    };
                    wrap = Some(Loop {
                        line: *line,
                        var: key.clone(),
                        kind: LoopKind::List(vals.clone()),
                        head: format!(
                            "guess: line {line}: the job file's comment lists the other values the post ran, `{key}={} # {}`",
                            vals[0],
                            vals[1..].join(" ")
                        ),
                        body,
                        timed: false,
                    });
                }
                // (each loop's body holds the command with every option made a variable)
                if let Some(l) = &mut wrap {
                    set_innermost(l, &c);
                }
                wrap
            }
            _ => None,
        };
        if let Some(l) = lp {
            *n = Node::Loop(l);
        }
    }
}

fn set_innermost(l: &mut Loop, c: &Cmd) {
    match l.body.first_mut() {
        Some(Node::Loop(inner)) => set_innermost(inner, c),
        _ => l.body = vec![Node::Cmd(c.clone())],
    }
}

fn for_each_cmd(nodes: &mut [Node], f: &mut dyn FnMut(&mut Cmd)) {
    for n in nodes {
        match n {
            Node::Cmd(c) => f(c),
            Node::Loop(l) => for_each_cmd(&mut l.body, f),
            _ => {}
        }
    }
}

/// `randwrite: (groupid=0, jobs=16): err= 0: …`: the job's name.
fn job_header(t: &str) -> Option<&str> {
    let (name, rest) = t.split_once(": (groupid=")?;
    (!name.is_empty() && !name.contains(' ') && rest.contains("jobs=")).then_some(name)
}

/// One number of a direction line: quantity, value, unit, as printed.
type Number = (&'static str, f64, String, String);

/// fio 3's `read: IOPS=12.3k, BW=48.1MiB/s (…)` or fio 2's `read : io=…, bw=…, iops=…,
/// runt=…`: the direction and its numbers.
fn direction_line(t: &str) -> Option<(&str, Vec<Number>)> {
    let (dir, rest) = t.split_once(':')?;
    let dir = dir.trim();
    if !matches!(dir, "read" | "write" | "trim" | "mixed") {
        return None;
    }
    let rest = rest.trim();
    let mut out = Vec::new();
    let count = |s: &str| match s.strip_suffix('k') {
        Some(v) => v.parse::<f64>().ok().map(|v| v * 1000.0),
        None => s.parse::<f64>().ok(),
    };
    let field = |key: &str| {
        rest.split(',').find_map(|f| {
            f.trim()
                .strip_prefix(key)
                .map(|v| v.split(" (").next().unwrap_or(v).trim().to_string())
        })
    };
    if let Some(iops) = field("IOPS=").or_else(|| field("iops=")) {
        if let Some(v) = count(&iops) {
            let key = if rest.starts_with("IOPS=") {
                "IOPS"
            } else {
                "iops"
            };
            out.push(("iops", v, "IOPS".to_string(), format!("{key}={iops}")));
        }
    }
    if let Some(bw) = field("BW=").or_else(|| field("bw=")) {
        let key = if rest.contains("BW=") { "BW" } else { "bw" };
        let joined: String = bw.split_whitespace().collect();
        let bytes = joined
            .strip_suffix("B/s")
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| (v, "B/s".to_string()));
        if let Some((v, u)) =
            bytes.or_else(|| token_quantity(&joined).map(|q| (q.0.value, q.0.unit)))
        {
            out.push(("bandwidth", v, u, format!("{key}={bw}")));
        }
    }
    if let Some(runt) = field("runt=") {
        if let Some(ms) = runt
            .strip_suffix("msec")
            .and_then(|v| v.trim().parse().ok())
        {
            out.push(("runtime", ms, "ms".to_string(), format!("runt={runt}")));
        }
    }
    (!out.is_empty()).then_some((dir, out))
}

/// Settings of rows, `(key, value)`.
type Settings = Vec<(String, String)>;

type RowOf<'a> = dyn Fn(&str, &fiolat::Num, &[(String, String)], &str) -> Row + 'a;

/// The rows of a priority's line (`clat prio 1/0`), added to the direction line's `found`
/// (`cur`) with the priority as settings; false when there is no direction line above.
fn prio_rows(
    found: &mut [Found],
    cur: &Option<(usize, Vec<(String, String)>)>,
    k: usize,
    quantity: &str,
    nums: &[fiolat::Num],
    prio: &fiolat::Prio,
    row: &RowOf,
) -> bool {
    let Some((fi, settings)) = cur else {
        return false;
    };
    let settings = [settings.as_slice(), prio.settings().as_slice()].concat();
    let f = &mut found[*fi];
    f.rows.extend(
        nums.iter()
            .map(|n| row(quantity, n, &settings, "statistic")),
    );
    f.lines.push(k);
    true
}

fn orphan(notes: &mut Vec<Note>, line: usize, what: &str) {
    notes.push(Note::new(
        line,
        NoteKind::Unmapped,
        &format!("fio's `{what}` line has no `read:`/`write:` line above it: not read"),
    ));
}

/// fio's normal output (fio 3 and fio 2): one [`Found`] per direction line, its rows
/// labelled with the direction and, under a job header, the job (and the job file's
/// options when the post shows it); the latency, percentile and sample lines under it
/// (`fiolat`) add their rows to it, each with its `statistic` or `percentile`; the header,
/// fio's other lines and summary lines are taken with it. What fio printed that is not
/// read (the latency distribution, a line whose numbers cannot be read) is said in `notes`.
pub fn fio_text(post: &Post, jobs: &[JobFile], notes: &mut Vec<Note>) -> Vec<Found> {
    let lines = &post.lines;
    let mut found: Vec<Found> = Vec::new();
    let mut job: Option<String> = None;
    let mut extra: Vec<usize> = Vec::new();
    let mut summary = false;
    // the direction line the lines below it belong to: its `found` index and settings
    let mut cur: Option<(usize, Vec<(String, String)>)> = None;
    // inside a percentile block: its quantity, unit and settings (a priority's)
    let mut pct: Option<(String, String, Settings)> = None;
    let mut prev_dist = false;
    // under a percentile head that could not be read: its `|` lines are fio's, not read
    let mut skip_block = false;
    for (k, l) in lines.iter().enumerate() {
        let t = l.text.trim();
        if skip_block {
            if t.starts_with('|') {
                extra.push(k);
                continue;
            }
            skip_block = false;
        }
        let indented = l.text.starts_with(char::is_whitespace);
        let row = |q: &str, n: &fiolat::Num, settings: &[(String, String)], key: &str| Row {
            line: l.n,
            group: "fio".into(),
            quantity: q.into(),
            settings: settings
                .iter()
                .cloned()
                .chain([(key.to_string(), n.stat.clone())])
                .collect(),
            value: n.value,
            unit: n.unit.clone(),
            printed: n.printed.clone(),
            approx: false,
            category: Category::Measurement,
            stated_by: l.quoted_author.clone(),
            note: "fio output".into(),
        };
        if let Some((q, u, more)) = pct.clone() {
            match fiolat::percentiles(t, &u) {
                Some(Ok(nums)) => {
                    match &cur {
                        Some((fi, settings)) => {
                            let f = &mut found[*fi];
                            let settings = [settings.as_slice(), &more].concat();
                            f.rows
                                .extend(nums.iter().map(|n| row(&q, n, &settings, "percentile")));
                            f.lines.push(k);
                        }
                        None => extra.push(k),
                    }
                    continue;
                }
                Some(Err(why)) => {
                    notes.push(Note::new(
                        l.n,
                        NoteKind::Unmapped,
                        &format!("{why}: not read"),
                    ));
                    extra.push(k);
                    continue;
                }
                None => pct = None,
            }
        }
        let dist = prev_dist;
        prev_dist = false;
        if let Some(name) = job_header(t) {
            job = Some(name.to_string());
            cur = None;
            extra.push(k);
            continue;
        }
        if preamble(t) {
            extra.push(k);
            continue;
        }
        if t.starts_with("fsync/fdatasync/sync_file_range:") {
            // the job's fsync latencies: no direction's
            if let Some((_, settings)) = &mut cur {
                settings.retain(|(k, _)| k != "direction");
            }
            extra.push(k);
            continue;
        }
        if let Some(d) = fiolat::detail(t) {
            let what = t.split(':').next().unwrap_or(t).trim().to_string();
            match d {
                Detail::Stats { quantity, nums } | Detail::Samples { quantity, nums } => match &cur
                {
                    Some((fi, settings)) => {
                        let f = &mut found[*fi];
                        f.rows.extend(
                            nums.iter()
                                .map(|n| row(&quantity, n, settings, "statistic")),
                        );
                        f.lines.push(k);
                    }
                    None => {
                        notes.push(Note::new(
                                l.n,
                                NoteKind::Unmapped,
                                &format!("fio's `{what}` line has no `read:`/`write:` line above it: not read"),
                            ));
                        extra.push(k);
                    }
                },
                Detail::PercentileHead { quantity, unit } => {
                    if cur.is_none() {
                        notes.push(Note::new(
                            l.n,
                            NoteKind::Unmapped,
                            &format!(
                                "fio's `{what}` have no `read:`/`write:` line above them: not read"
                            ),
                        ));
                    }
                    pct = Some((quantity, unit, Vec::new()));
                    match &cur {
                        Some((fi, _)) => found[*fi].lines.push(k),
                        None => extra.push(k),
                    }
                }
                // `clat prio 1/0 (msec): …`, `clat prio 1/0 (10.01% of IOs) percentiles`,
                // fio 3.18-3.29's `high prio_clat (msec): …`, `high prio (10.01%) clat
                // percentiles`: rows like the others', with the priority as settings
                Detail::PrioStats {
                    quantity,
                    prio,
                    nums,
                } => {
                    if !prio_rows(&mut found, &cur, k, &quantity, &nums, &prio, &row) {
                        orphan(notes, l.n, &what);
                        extra.push(k);
                    }
                }
                Detail::PrioPercentileHead {
                    quantity,
                    unit,
                    prio,
                    share,
                } => {
                    let share: Vec<fiolat::Num> = share.into_iter().collect();
                    if !prio_rows(&mut found, &cur, k, "io_share", &share, &prio, &row) {
                        orphan(notes, l.n, &what);
                        extra.push(k);
                    }
                    pct = Some((quantity, unit, prio.settings()));
                }
                Detail::Distribution { .. } => {
                    if !dist {
                        notes.push(Note::new(
                            l.n,
                            NoteKind::Unmapped,
                            &format!("fio's latency distribution (`{what} : N=P%`, the share of I/Os per latency bucket) is not read"),
                        ));
                    }
                    prev_dist = true;
                    extra.push(k);
                }
                Detail::Unread(why) => {
                    notes.push(Note::new(
                        l.n,
                        NoteKind::Unmapped,
                        &format!("{why}: not read"),
                    ));
                    extra.push(k);
                }
                Detail::UnreadBlock(why) => {
                    notes.push(Note::new(
                        l.n,
                        NoteKind::Unmapped,
                        &format!("{why}: the block is not read"),
                    ));
                    skip_block = true;
                    extra.push(k);
                }
            }
            continue;
        }
        let norm = t.split_whitespace().collect::<Vec<_>>().join(" ");
        if FIO_DETAIL.iter().any(|d| norm.starts_with(d)) {
            // cpu, depths: fio's, not the post's numbers
            extra.push(k);
            continue;
        }
        if t.starts_with("Run status group") || t.starts_with("Disk stats (read/write)") {
            summary = true;
            cur = None;
            extra.push(k);
            continue;
        }
        cur = None;
        if !indented {
            job = None;
            summary = false;
        } else if summary {
            extra.push(k);
            continue;
        }
        let Some((dir, nums)) = direction_line(t) else {
            continue;
        };
        let mut settings = vec![("direction".to_string(), dir.to_string())];
        if let Some(j) = job.as_deref().filter(|_| indented) {
            settings.push(("job".into(), j.to_string()));
            for key in ROW_KEYS {
                if let Some(v) = jobs.iter().find_map(|f| f.option(j, key)) {
                    settings.push((key.to_string(), v));
                }
            }
        }
        let rows = nums
            .into_iter()
            .map(|(q, v, u, p)| Row {
                line: l.n,
                group: "fio".into(),
                quantity: q.into(),
                settings: settings.clone(),
                value: v,
                unit: u,
                printed: p,
                approx: false,
                category: Category::Measurement,
                stated_by: l.quoted_author.clone(),
                note: "fio output".into(),
            })
            .collect();
        let mut taken = std::mem::take(&mut extra);
        taken.push(k);
        found.push(Found {
            tool: "fio",
            first: k,
            rows,
            lines: taken,
            device_bytes: Vec::new(),
        });
        cur = Some((found.len() - 1, settings));
    }
    if let Some(last) = found.last_mut() {
        last.lines.extend(extra);
    }
    found
}

/// fio's lines before its results: the job line (`randrw: (g=0): rw=randrw, bs=…`), the
/// version (`fio-3.12`), `Starting 3 processes`, laying out files, the status line
/// (`Jobs: 1 (f=1): [w(1)][100.0%][w=1047KiB/s][w=2095 IOPS][eta 00m:00s]`).
fn preamble(t: &str) -> bool {
    let version = t
        .strip_prefix("fio-")
        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()) && !v.contains(' '));
    version
        || (t.contains(": (g=") && t.contains("rw="))
        || (t.starts_with("Starting ") && (t.contains(" process") || t.contains(" thread")))
        || (t.starts_with("Jobs: ") && t.contains("(f="))
        || t.contains(": Laying out IO file")
}

#[cfg(test)]
mod tests {
    use super::{comment, direction_line, fio_text, job_files, other_values};
    use crate::import::mail;

    #[test]
    fn fio_normal_output_of_fio_3_and_fio_2() {
        let p = mail::read(
            "Subject: x\n\n  read: IOPS=12.3k, BW=48.1MiB/s (50.4MB/s)(2886MiB/60001msec)\n"
                .as_bytes(),
        )
        .unwrap();
        let f = fio_text(&p, &[], &mut Vec::new());
        assert_eq!(f[0].rows[0].value, 12300.0);
        assert_eq!(
            (f[0].rows[1].value, f[0].rows[1].unit.as_str()),
            (48.1, "MiB/s")
        );
        let (dir, nums) =
            direction_line("write: io=102680KB, bw=622133 B/s, iops=151 , runt=169006msec")
                .unwrap();
        assert_eq!(dir, "write");
        let got: Vec<(&str, f64, &str)> = nums.iter().map(|n| (n.0, n.1, n.2.as_str())).collect();
        assert_eq!(
            got,
            [
                ("iops", 151.0, "IOPS"),
                ("bandwidth", 622133.0, "B/s"),
                ("runtime", 169006.0, "ms")
            ]
        );
        assert!(direction_line("read the docs: it is fast").is_none());
    }

    #[test]
    fn a_comment_that_lists_other_values_of_an_option() {
        assert_eq!(comment("numjobs=1 # 2 4"), ("numjobs=1", Some("2 4")));
        assert_eq!(comment("bs=4k"), ("bs=4k", None));
        assert_eq!(
            other_values("1", "2 4"),
            Some(vec!["1".into(), "2".into(), "4".into()])
        );
        assert_eq!(
            other_values("4k", "64k, 1m"),
            Some(vec!["4k".into(), "64k".into(), "1m".into()])
        );
        // prose, another kind of value, the same value: none
        assert_eq!(other_values("4G", "2x RAM"), None);
        assert_eq!(other_values("32", "4k"), None);
        assert_eq!(other_values("1", "1"), None);
        assert_eq!(other_values("randwrite", "randread"), None);
    }

    #[test]
    fn job_files_and_their_command_line() {
        let p = mail::read(
            "Subject: x\n\n[global]\nioengine=libaio\ndirect=1\n; a comment\n\n[seq-read]\nrw=read\ntime_based\n\n[rand]\nrw=randread\n\nThat is all.\n[not a job]\n"
                .as_bytes(),
        )
        .unwrap();
        let j = job_files(&p.lines, &|_| false);
        assert_eq!(j.len(), 1);
        assert_eq!(
            j[0].args(),
            [
                "--ioengine=libaio",
                "--direct=1",
                "--name=seq-read",
                "--rw=read",
                "--time_based",
                "--name=rand",
                "--rw=randread"
            ]
        );
        assert_eq!(j[0].line, 3);
        // a section of options fio does not have is no job file
        let p = mail::read("Subject: x\n\n[core]\neditor=vim\n".as_bytes()).unwrap();
        assert!(job_files(&p.lines, &|_| false).is_empty());
    }
}
