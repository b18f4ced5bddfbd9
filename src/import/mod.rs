//! `fslab import`: a mailing-list post (mbox, `.eml`, a lore page saved as text, a
//! commit message, plain text) becomes a draft experiment and the post's numbers in the
//! published-data schema, every item traced to its line in the post. Pure: bytes in, a
//! [`Draft`] out; the CLI writes the files.
//!
//! - [`mail`]: headers, quoted-printable/base64, `>` quoting, quoted authors;
//! - [`commands`]: prompts, scripts, continuations, commands named in sentences;
//! - [`shell`]: a block read as shell (loops, `if`, `case`, functions, here-documents,
//!   `time`, variables); [`programs`]: what each program is;
//! - [`output`]: tool output in the post, read with `crate::parse`; [`blocks`]: block
//!   listings (debugfs, filefrag) as rows of the `dir_blocks` schema; [`fiojobs`]: fio
//!   job files (their options the fio command's) and fio's normal output ([`fiolat`]:
//!   its latency, percentile and sample lines); [`perfstat`]: `perf stat` output
//!   ([`perfcsv`]: its CSV, `-x,`);
//! - [`numbers`]: tables and numbers in sentences; [`rowlabels`]: a result label on the
//!   line above its numbers;
//! - [`params`]: numbers in commands (options, loop counts);
//! - [`ranges`]: ranges, before/after changes and axes said in prose; `sequences`: the
//!   same commands run again with other arguments, as a matrix axis;
//! - [`claims`]: comparison sentences → draft claims;
//! - [`draft`]: the experiment (devices, matrix, steps, tools); [`branches`]: where a
//!   `case` branch's steps run; [`excludes`]: the `exclude:` of an axis made inside one
//!   `case` branch; [`heredocs`]: a here-document in the draft; `naming`:
//!   device paths, tool names, sizes; `unread`: what the draft leaves out, said;
//! - [`yaml`]: the draft's YAML text; [`csv`]: the published CSV.

pub mod axis;
pub mod block;
pub mod blocks;
pub mod branches;
pub mod checklist;
pub mod claims;
pub mod commands;
mod comparison;
pub mod csv;
pub mod draft;
pub mod excludes;
mod filesystems;
mod fioargs;
pub mod fiojobs;
pub mod fiolat;
mod fs_rows;
mod grid;
pub mod heredocs;
mod host_paths;
pub mod mail;
mod namedrows;
mod naming;
pub mod nested;
pub mod numbers;
pub mod output;
pub mod params;
pub mod perfcsv;
pub mod perfstat;
mod pick;
pub mod programs;
pub mod ranges;
pub mod replies;
pub mod rowlabels;
mod sections;
mod sequences;
pub mod shell;
pub mod sidebyside;
pub mod step;
mod tablecmds;
pub mod tables;
pub mod units;
mod unread;
mod versus;
pub mod workdir;
pub mod yaml;

use commands::BlockKind;
use programs::Program;
use shell::{walk, Node};

/// What kind of number a row is (the `category` column of the published CSVs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Measurement,
    Parameter,
    Geometry,
    Claim,
    Context,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Measurement => "measurement",
            Category::Parameter => "parameter",
            Category::Geometry => "geometry",
            Category::Claim => "claim",
            Category::Context => "context",
        }
    }
}

/// One published number, with the post line it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub line: usize,
    pub group: String,
    pub quantity: String,
    pub settings: Vec<(String, String)>,
    pub value: f64,
    pub unit: String,
    /// The text of the post the value comes from, verbatim.
    pub printed: String,
    pub approx: bool,
    pub category: Category,
    /// Someone the post quotes; None for the post's author.
    pub stated_by: Option<String>,
    pub note: String,
}

/// What a trace message says about a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// Read and put into the draft or the CSV.
    Recognised,
    /// Seen but not put anywhere.
    Unmapped,
    /// The draft assumes something the post does not say.
    Guess,
}

impl NoteKind {
    pub fn label(self) -> &'static str {
        match self {
            NoteKind::Recognised => "recognised",
            NoteKind::Unmapped => "not mapped",
            NoteKind::Guess => "guess",
        }
    }
}

/// One message of the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub line: usize,
    pub kind: NoteKind,
    pub what: String,
}

impl Note {
    pub fn new(line: usize, kind: NoteKind, what: &str) -> Note {
        Note {
            line,
            kind,
            what: what.to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("the input is empty")]
    Empty,
    #[error("the input is binary, not a mail or text")]
    Binary,
}

/// The result of importing a post.
#[derive(Debug, Clone)]
pub struct Draft {
    pub id: String,
    pub headers: mail::Headers,
    /// The draft experiment's YAML; None when the post has no command to draft from.
    pub yaml: Option<String>,
    /// Whether `yaml` is the fallback (steps as comments) because the full draft did not load.
    pub fallback: bool,
    pub experiment: Option<draft::Experiment>,
    pub rows: Vec<Row>,
    pub csv: String,
    /// Block listings of the post (debugfs `BLOCKS:`, `filefrag -v`), one row per range.
    pub blocks: Vec<blocks::BlockRow>,
    /// Their CSV (the schema of `data/published/001_dir_blocks.csv`); None without listings.
    pub blocks_csv: Option<String>,
    pub claims: Vec<claims::DraftClaim>,
    /// The trace, in line order.
    pub notes: Vec<Note>,
    /// What to check before `fslab run`: the draft's guesses, FILL_IN values, host paths
    /// replaced and what it left out, each with its post line (also at the end of `yaml`).
    pub checks: Vec<checklist::Check>,
}

/// Import a post. `file_name` (without directories) names the source and, when there
/// is no subject, the id.
pub fn import(bytes: &[u8], file_name: Option<&str>) -> Result<Draft, ImportError> {
    let post = mail::read(bytes)?;
    let mut notes: Vec<Note> = post
        .notes
        .iter()
        .map(|(l, w)| Note::new(*l, NoteKind::Recognised, w))
        .collect();
    let h = &post.headers;
    if h.subject.is_some() || h.from.is_some() {
        notes.push(Note::new(
            h.line,
            NoteKind::Recognised,
            &format!(
                "headers: {} / {} / {} → `source:`",
                h.from.as_deref().unwrap_or("-"),
                h.date.as_deref().unwrap_or("-"),
                h.subject.as_deref().unwrap_or("-")
            ),
        ));
    }
    let lines = &post.lines;
    let mut cmds = commands::find(lines);
    // a fio job file shown in the post: its options are the fio command's
    let in_heredoc = fiojobs::heredoc_lines(&cmds.blocks);
    let jobs = fiojobs::job_files(lines, &|k| in_heredoc.contains(&lines[k].n));
    fiojobs::apply(&jobs, lines, &mut cmds, &mut notes);
    fioargs::rewrite_blocks(&mut cmds.blocks, &mut notes);
    let mut taken: Vec<bool> = cmds.command_lines.clone();

    // settings of script invocations: `# ./dumb.sh 0` binds $1=0, named like the axis
    let invocations: Vec<(usize, Vec<String>)> = {
        let mut v = Vec::new();
        for b in cmds.blocks.iter().filter(|b| b.kind == BlockKind::Prompt) {
            walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
                if matches!(c.program(), programs::Program::Script(_)) {
                    if let Some(k) = lines.iter().position(|l| l.n == c.line) {
                        v.push((k, c.argv()[1..].to_vec()));
                    }
                }
            });
        }
        v
    };

    // tool output first (it takes its lines), then tables, then prose
    let mut rows: Vec<Row> = Vec::new();
    let axis_names = positional_axis_names(&cmds.blocks);
    let settings_at = |k: usize| -> Vec<(String, String)> {
        invocations
            .iter()
            .rev()
            .find(|(i, _)| *i < k)
            .map(|(_, args)| {
                args.iter()
                    .enumerate()
                    .map(|(n, a)| {
                        (
                            axis_names
                                .get(n)
                                .cloned()
                                .flatten()
                                .unwrap_or_else(|| format!("arg{}", n + 1)),
                            a.clone(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut found = Vec::new();
    found.extend(output::xfs_geometry(&post, &settings_at));
    found.extend(output::ext_geometry(&post, &settings_at));
    found.extend(output::e2fsck_passes(&post));
    found.extend(output::filefrag_lines(&post));
    found.extend(output::fio_json(&post));
    found.extend(perfstat::blocks(&post, &cmds.command_lines, &mut notes));
    found.extend(perfcsv::blocks(&post, &cmds.command_lines, &mut notes));
    found.extend(fiojobs::fio_text(&post, &jobs, &mut notes));
    found.extend(output::summary_rows(&post, &cmds.command_lines));
    found.extend(output::time_rows(&post, &cmds.command_lines, &settings_at));
    found.extend(sidebyside::blocks(&post));
    for f in &found {
        for &k in &f.lines {
            taken[k] = true;
        }
    }
    let label_taken = taken.clone();
    let label = |k: usize| -> String {
        output::label_above(lines, k, &|i| label_taken[i], &|_| false)
            .map(|l| l.0)
            .unwrap_or_default()
    };
    let block_rows = blocks::listings(&post, &label);
    for (n, first) in block_rows
        .iter()
        .enumerate()
        .filter(|(i, r)| *i == 0 || block_rows[i - 1].listing != r.listing)
    {
        let count = block_rows[n..]
            .iter()
            .take_while(|r| r.listing == first.listing)
            .count();
        notes.push(Note::new(
            first.line,
            NoteKind::Recognised,
            &format!(
                "a {} block listing{}: {count} rows of the `dir_blocks` schema",
                first.tool,
                if first.fs.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", first.fs)
                }
            ),
        ));
    }
    let blocks = output::debugfs_blocks(&post, &label);
    for f in &blocks {
        for &k in &f.lines {
            taken[k] = true;
        }
    }
    found.extend(blocks);
    // a short label on the line above a `time` block, a fio line or perf stat output
    // (`parent=0:`, `Without the patch:`) heads its rows
    // (fio's own lines above a result are passed over, a command above it is not: the
    // text above the command that printed it is no label of fio's rows)
    let fio_lines: Vec<usize> = found
        .iter()
        .filter(|f| f.tool == "fio")
        .flat_map(|f| f.lines.iter().copied())
        .collect();
    for f in found.iter_mut().filter(|f| {
        matches!(
            f.tool,
            "time" | "fio" | "perf stat" | "dd" | "dbench" | "hdparm"
        )
    }) {
        let fio = f.tool == "fio";
        let skip = |i: usize| {
            if fio {
                fio_lines.contains(&i)
            } else {
                taken[i]
            }
        };
        if let Some(label) = rowlabels::heading(lines, f.first, &skip) {
            rowlabels::apply(&mut f.rows, &label);
        }
    }
    let mut device_sizes = Vec::new();
    found.sort_by_key(|f| f.first);
    for f in &found {
        let line = lines.get(f.first).map_or(0, |l| l.n);
        notes.push(Note::new(
            line,
            NoteKind::Recognised,
            &format!("{} output: {} published rows", f.tool, f.rows.len()),
        ));
        rows.extend(f.rows.iter().cloned());
        device_sizes.extend(f.device_bytes.iter().cloned());
    }

    // tables
    let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    let tables = tables::find_tables(&texts, &taken);
    let table_cmds = tablecmds::add(&tables, lines, &mut cmds.blocks);
    for (ti, t) in tables.iter().enumerate() {
        let first = t.header.unwrap_or(t.rows[0].0);
        // the title above, earlier tables taken (`Wall time:` / `System time:`)
        let title = output::label_above(lines, first, &|i| taken[i], &|_| false)
            .map(|l| l.0)
            .unwrap_or_default();
        let stated_by = lines[t.rows[0].0].quoted_author.clone();
        let mut trows = tables::table_rows(t, &|k| lines[k].n, &title, stated_by.as_deref());
        // the command that printed the table (`# fs_mark …` right above its header)
        if let Some(cmd) = output::command_above(lines, first, &cmds.command_lines) {
            trows
                .iter_mut()
                .for_each(|r| output::add_command(&mut r.settings, &cmd));
        }
        if let Some(when) = versus::side(&tables, ti, &texts) {
            trows
                .iter_mut()
                .for_each(|r| r.settings.push(("change".into(), when.into())));
        }
        let short = title.trim_end_matches(':').trim();
        let sentence_words = [
            "i", "we", "you", "this", "these", "here", "see", "got", "is", "are",
        ];
        if title.ends_with(':')
            && !short.is_empty()
            && short.split_whitespace().count() <= 4
            && !short
                .split_whitespace()
                .any(|w| sentence_words.contains(&w.to_ascii_lowercase().as_str()))
        {
            for r in &mut trows {
                r.settings.insert(0, ("table".into(), short.to_string()));
            }
        }
        notes.push(Note::new(
            lines[first].n,
            NoteKind::Recognised,
            &format!(
                "a table of {} rows × {} columns: {} published rows",
                t.rows.len(),
                t.columns.len(),
                trows.len()
            ),
        ));
        rows.extend(trows);
        if let Some(h) = t.header {
            taken[h] = true;
        }
        for (k, _, _) in &t.rows {
            taken[*k] = true;
        }
    }

    // command parameters
    for b in &cmds.blocks {
        walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
            let mut r = params::command_rows(c);
            let by = lines
                .iter()
                .find(|l| l.n == c.line)
                .and_then(|l| l.quoted_author.clone());
            for x in &mut r {
                x.stated_by = by.clone();
            }
            rows.extend(r);
        });
        loop_rows(&b.nodes, &mut rows);
    }

    // prose numbers and claims
    let sentences = claims::sentences(lines, &taken);
    let mut timed_sentences = Vec::new();
    let mut prose_sizes = Vec::new();
    let mut candidates: Vec<draft::Axis> = Vec::new();
    // side-by-side `time` columns headed `parent=0 parent=1`: an axis the post compares
    for f in found.iter().filter(|f| f.tool == "time (side by side)") {
        let mut axes: Vec<(String, Vec<String>)> = Vec::new();
        for (k, v) in f.rows.iter().flat_map(|r| r.settings.iter()) {
            match axes.iter_mut().find(|a| a.0 == *k) {
                Some(a) if !a.1.contains(v) => a.1.push(v.clone()),
                Some(_) => {}
                None => axes.push((k.clone(), vec![v.clone()])),
            }
        }
        for (name, values) in axes
            .into_iter()
            .filter(|a| a.0 != "column" && a.1.len() > 1)
        {
            candidates.push(draft::Axis {
                name,
                values,
                line: lines.get(f.first).map_or(0, |l| l.n),
                why: "guess: the columns of the post's side-by-side `time` output".into(),
            });
        }
    }
    // the row each line's numbers were given (from its own colon or the line above)
    let mut row_heads: Vec<Option<String>> = vec![None; lines.len()];
    for (k, l) in lines.iter().enumerate() {
        if taken[k] || mail::is_furniture(&l.text) || l.text.trim().is_empty() {
            continue;
        }
        let sentence = sentences
            .iter()
            .rfind(|(s, _)| *s <= k)
            .map_or(l.text.trim().to_string(), |s| s.1.clone());
        let following = lines
            .get(k + 1)
            .filter(|n| n.depth == l.depth && !taken[k + 1])
            .map_or("", |n| n.text.as_str());
        let mut prose = numbers::prose_rows(
            l.n,
            &l.text,
            following,
            l.quoted_author.as_deref(),
            &sentence,
        );
        // `Without 3a8b36f: 16.01 reqs/sec`, `a) without patch: (*SPEED* : 451.01Kb/sec)`:
        // a result line names its row before the colon
        // (or before ` -- `: `Without the stripe cache -- 2.1MB/s`, or a `With …` label)
        // (`f2fs: IOPS=41.2k, BW=161MiB/s`: the row of each field of the list after it)
        if let Some(head) = rowlabels::line_head(&l.text, &mut prose) {
            row_heads[k] = Some(head);
        }
        // `Without the patch:` / `a) without patch: (…)` on the line above a result line
        if row_heads[k].is_none()
            && !prose.is_empty()
            && rowlabels::result_like(&l.text)
            && !prose
                .iter()
                .any(|r| r.settings.iter().any(|s| s.0 == "row"))
        {
            let above = k
                .checked_sub(1)
                .filter(|&i| lines[i].depth == l.depth && !lines[i].text.trim().is_empty());
            if let Some(label) = above.and_then(|i| {
                rowlabels::short_label(&lines[i].text).or_else(|| row_heads[i].clone())
            }) {
                rowlabels::apply(&mut prose, &label);
                row_heads[k] = Some(label);
            }
        }
        for f in ranges::read(l.n, &l.text, following) {
            let f = ranges::iops_change(f, &sentence, &mut prose);
            match f {
                ranges::Finding::Change {
                    before,
                    after,
                    unit,
                } => {
                    // what changed: "the maximum latency is reduced from 7.667s to 1.728"
                    let what = ranges::changed(&l.text, &before.printed);
                    for (p, when) in [(before, "before"), (after, "after")] {
                        let row = mark(&mut prose, &p, ("change", when), &unit);
                        if !row {
                            prose.push(Row {
                                line: l.n,
                                group: "prose".into(),
                                quantity: units::quantity_name(&unit).into(),
                                settings: vec![("change".into(), when.into())],
                                value: p.quantity.value,
                                unit: unit.clone(),
                                printed: p.printed.clone(),
                                approx: p.approx,
                                category: Category::Measurement,
                                stated_by: l.quoted_author.clone(),
                                note: sentence.clone(),
                            });
                        }
                        let change = ("change".to_string(), when.to_string());
                        if let (Some(w), Some(r)) = (
                            &what,
                            prose
                                .iter_mut()
                                .rfind(|r| r.printed == p.printed && r.settings.contains(&change)),
                        ) {
                            r.settings.insert(0, ("of".into(), w.clone()));
                        }
                    }
                }
                ranges::Finding::Range { axis, from, to } => {
                    for (p, end) in [(from, "from"), (to, "to")] {
                        let unit = p.quantity.unit.clone();
                        mark(&mut prose, &p, ("range", end), &unit);
                    }
                    candidates.push(axis);
                }
                ranges::Finding::Unnamed { .. } => {}
            }
        }
        // `** the bandwidth …` under `* 32 concurrent processes performing random reads`
        if let Some(case) = rowlabels::list_parent(lines, k) {
            prose
                .iter_mut()
                .for_each(|r| r.settings.insert(0, ("case".into(), case.clone())));
        }
        candidates.extend(ranges::axes(l.n, &l.text));
        for r in &prose {
            if matches!(r.unit.as_str(), "s" | "min" | "ms") {
                timed_sentences.push(l.n);
            }
            let low = sentence.to_ascii_lowercase();
            if matches!(r.unit.as_str(), "TB" | "GB" | "TiB" | "GiB" | "MB" | "MiB")
                && [
                    "drive",
                    "disk",
                    "ssd",
                    "hdd",
                    "device",
                    "partition",
                    "lun",
                    "ramdisk",
                    "nvme",
                ]
                .iter()
                .any(|w| low.contains(w))
                && !numbers::transferred(&l.text, &r.printed)
            {
                prose_sizes.push((r.value, r.unit.clone(), r.printed.clone(), l.n));
            }
        }
        rows.extend(prose);
    }
    namedrows::label_blocks(lines, &mut rows);
    sections::label_rows(lines, &taken, &mut rows);
    // flags said in words: `flex_bg off`, `without uninit_bg`, `neither A nor B`
    for (k, l) in lines.iter().enumerate() {
        if !taken[k] && !mail::is_furniture(&l.text) {
            rows.extend(feature_flags(l));
        }
    }
    // a line numbered in a quoted sentence counts with the line the sentence starts on
    timed_sentences.extend(
        sentences
            .iter()
            .filter(|(_, s)| s.contains(" takes ") || s.contains(" took "))
            .map(|(k, _)| lines[*k].n),
    );

    let draft_claims = claims::find(lines, &taken);
    for c in &draft_claims {
        notes.push(Note::new(
            c.line,
            NoteKind::Recognised,
            &format!("claim draft `{}`: \"{}\"", c.id, c.quote),
        ));
    }

    let stem = file_name.map(|f| {
        f.rsplit('/')
            .next()
            .unwrap_or(f)
            .split('.')
            .next()
            .unwrap_or(f)
            .to_string()
    });
    let id = mail::id_from(post.headers.subject.as_deref(), stem.as_deref());
    let seed = stem
        .as_deref()
        .filter(|s| {
            s.len() > 3
                && s.as_bytes()[..3].iter().all(u8::is_ascii_digit)
                && s.as_bytes()[3] == b'_'
        })
        .map_or(id.clone(), |s| s[..3].to_string());
    let source_file = file_name
        .map(|f| f.rsplit('/').next().unwrap_or(f).to_string())
        .unwrap_or_else(|| "-".into());
    rows.sort_by_key(|r| r.line);
    let csv = csv::csv(&rows, &seed, &source_file, &post.headers);
    let blocks_csv = (!block_rows.is_empty())
        .then(|| csv::blocks_csv(&block_rows, &seed, &source_file, &post.headers));

    for b in &cmds.blocks {
        let what = match b.kind {
            BlockKind::Script => "a #! script",
            BlockKind::Prompt => "a command at a prompt",
            BlockKind::Bare => "command lines",
            BlockKind::Inline => "a command named in a sentence",
        };
        notes.push(Note::new(b.line, NoteKind::Recognised, what));
        unread::loops_and_branches(&b.nodes, &mut notes);
    }
    unread::uncalled_functions(&cmds.blocks, &mut notes);
    let line_numbers: Vec<usize> = lines.iter().map(|l| l.n).collect();
    // the commands whose output the post shows with numbers
    let mut output_lines = vec![false; lines.len()];
    for f in found.iter().filter(|f| !f.rows.is_empty()) {
        for &k in &f.lines {
            output_lines[k] = true;
        }
    }
    let evidence = pick::Evidence {
        reported: pick::reported(
            &cmds.command_lines,
            &output_lines,
            &lines
                .iter()
                .map(|l| !commands::looks_like_prose(l.text.trim()))
                .collect::<Vec<_>>(),
            &line_numbers,
        )
        .into_iter()
        .chain(table_cmds)
        .collect(),
        timed_sentences,
    };
    let experiment = draft::build(
        &cmds.blocks,
        &tables,
        &line_numbers,
        &device_sizes,
        &prose_sizes,
        &evidence,
        &mut notes,
    );
    let mut experiment = experiment;
    if let Some(exp) = &mut experiment {
        host_paths::contain(exp, post.headers.subject.as_deref(), lines, &mut notes);
        fs_rows::promote(exp, &mut candidates, &rows, &mut notes);
        for c in candidates {
            if exp.matrix.iter().any(|a| a.name == c.name)
                || exp.candidates.iter().any(|a| a.name == c.name)
            {
                continue;
            }
            notes.push(Note::new(
                c.line,
                NoteKind::Guess,
                &format!(
                    "a matrix axis candidate `{}: [{}]` from the prose, written as a comment ({})",
                    c.name,
                    c.values.join(", "),
                    c.why
                ),
            ));
            exp.candidates.push(c);
        }
    }
    let author = post.author_name();
    let csv_name = format!("{id}.published.csv");
    let (yaml, fallback) = match &experiment {
        None => {
            notes.push(Note::new(
                0,
                NoteKind::Unmapped,
                "no command in the post: nothing to draft an experiment from",
            ));
            (None, false)
        }
        Some(exp) => {
            let full = yaml::yaml(
                &id,
                &post.headers,
                file_name,
                exp,
                &draft_claims,
                author.as_deref(),
                &csv_name,
                false,
            );
            match crate::spec::Experiment::from_str_named(&full, &format!("{id}.yaml")) {
                Ok(_) => (Some(full), false),
                Err(e) => {
                    notes.push(Note::new(e.line, NoteKind::Unmapped, &format!("the full draft does not load ({}): writing the fallback with its steps as comments", e.message)));
                    let safe = yaml::yaml(
                        &id,
                        &post.headers,
                        file_name,
                        exp,
                        &draft_claims,
                        author.as_deref(),
                        &csv_name,
                        true,
                    );
                    match crate::spec::Experiment::from_str_named(&safe, &format!("{id}.yaml")) {
                        Ok(_) => (Some(safe), true),
                        Err(e) => {
                            notes.push(Note::new(
                                e.line,
                                NoteKind::Unmapped,
                                &format!("no draft loads: {}", e.message),
                            ));
                            (None, true)
                        }
                    }
                }
            }
        }
    };
    if let Some(exp) = &experiment {
        if let Some(w) = &exp.workload {
            notes.push(Note::new(
                w.line,
                NoteKind::Recognised,
                &format!("workload: {}", w.comment),
            ));
        }
        for a in &exp.matrix {
            notes.push(Note::new(
                a.line,
                NoteKind::Recognised,
                &format!("matrix axis `{}`: {:?} ({})", a.name, a.values, a.why),
            ));
        }
    }
    notes.sort_by_key(|n| n.line);
    // what to check before running, at the end of the draft (comments: it loads as before)
    let (yaml, checks) = checklist::finish(yaml, experiment.as_ref(), fallback, &notes, &id);
    Ok(Draft {
        id,
        headers: post.headers.clone(),
        yaml,
        fallback,
        experiment,
        rows,
        csv,
        blocks: block_rows,
        blocks_csv,
        claims: draft_claims,
        notes,
        checks,
    })
}

/// Give the prose row printed as `p` (the first without this setting) the setting, and
/// the unit said once for both numbers of a change; whether there was such a row.
fn mark(rows: &mut [Row], p: &numbers::ProseNumber, setting: (&str, &str), unit: &str) -> bool {
    let Some(r) = rows
        .iter_mut()
        .find(|r| r.printed == p.printed && !r.settings.iter().any(|s| s.0 == setting.0))
    else {
        return false;
    };
    r.settings.push((setting.0.into(), setting.1.into()));
    if r.unit.is_empty() && !unit.is_empty() {
        r.unit = unit.to_string();
        r.quantity = units::quantity_name(unit).into();
    }
    if setting.0 == "range" {
        r.category = Category::Parameter;
    }
    true
}

fn loop_rows(nodes: &[Node], rows: &mut Vec<Row>) {
    for n in nodes {
        if let Node::Loop(l) = n {
            rows.extend(params::loop_row(l));
            loop_rows(&l.body, rows);
        }
    }
}

/// For each positional parameter `$N` of the post's script, the axis name its use gives
/// (`-n parent=$1` → `parent`).
fn positional_axis_names(blocks: &[commands::Block]) -> Vec<Option<String>> {
    let mut names = vec![None; 9];
    for b in blocks.iter().filter(|b| b.kind == BlockKind::Script) {
        walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
            for w in &c.words {
                for (n, slot) in names.iter_mut().enumerate() {
                    let f = format!("=${}", n + 1);
                    if let Some(i) = w.find(&f) {
                        let key = w[..i].rsplit([',', '-', ' ']).next().unwrap_or("");
                        if !key.is_empty() && slot.is_none() {
                            *slot = Some(key.to_string());
                        }
                    }
                }
            }
        });
    }
    names
}

/// `flex_bg off`, `with uninit_bg`, `without uninit_bg`, `neither flex_bg nor uninit_bg`.
fn feature_flags(l: &mail::PostLine) -> Vec<Row> {
    let words: Vec<String> = l
        .text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                .to_string()
        })
        .collect();
    // (a program is no feature: "done with fs_mark, fio and ffsb")
    let feature = |w: &str| {
        w.contains('_')
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && w.len() > 3
            && matches!(Program::of(w), Program::Other(_))
    };
    let mut out = Vec::new();
    let mut push = |f: &str, v: f64, printed: String| {
        out.push(Row {
            line: l.n,
            group: "setup".into(),
            quantity: f.to_string(),
            settings: Vec::new(),
            value: v,
            unit: "flag".into(),
            printed,
            approx: false,
            category: Category::Parameter,
            stated_by: l.quoted_author.clone(),
            note: l.text.trim().to_string(),
        })
    };
    for i in 0..words.len() {
        let w = words[i].to_ascii_lowercase();
        let next = words.get(i + 1).map(String::as_str).unwrap_or("");
        match w.as_str() {
            "neither" if feature(next) => {
                push(next, 0.0, format!("neither {next}"));
                if words.get(i + 2).is_some_and(|x| x == "nor") {
                    if let Some(b) = words.get(i + 3).filter(|b| feature(b)) {
                        push(b, 0.0, format!("nor {b}"));
                    }
                }
            }
            "without" | "no" if feature(next) => push(next, 0.0, format!("{} {next}", words[i])),
            "with" if feature(next) => push(next, 1.0, format!("with {next}")),
            _ if feature(&words[i]) && matches!(next, "off" | "disabled") => {
                push(&words[i], 0.0, format!("{} {next}", words[i]))
            }
            _ if feature(&words[i])
                && matches!(next, "on" | "enabled")
                && words.get(i + 2).is_none_or(|x| x != "the") =>
            {
                push(&words[i], 1.0, format!("{} {next}", words[i]))
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;
