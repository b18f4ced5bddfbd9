//! `fslab reply`: a bundle's answer to the post it reruns, as a plain-text block to
//! paste into a reply on the list: lines of at most 72 columns ([`MAIL_COLUMNS`]), no
//! Markdown, in this order:
//!
//! 1. with `--post`, an `In-Reply-To:` header line quoting the post's `Message-ID` (a
//!    mail without one is said so; none is made up);
//! 2. what ran: the experiment, fslab's version, the profile and `--set` values, the
//!    points and replicates;
//! 3. with `--compare BASE`, the comparison in the lists' lkp style: per metric and
//!    point, the base's mean `± σ%` and replicate count, the `%change` with its
//!    significance mark, the same for this bundle (`analysis::compare_runs`);
//! 4. one line per claim of the post: its words (shortened), the post's number, the
//!    number here with its 95 % interval, the tier (`analysis::claims`); fslab's own
//!    variants are counted on one line; with a rerun as base, whether the two agree;
//! 5. what differed from the post (stand-ins and other substitutions, the scale, the
//!    kernel, the tools), in at most three lines;
//! 6. the command that reruns it, and the bundle's content hash
//!    ([`crate::store::content_hash`]) with the shell line that recomputes it.
//!
//! Everything is computed before ([`super::reply_content`]); this only renders.

use super::reply_content::{ClaimsSaid, ExperimentNow, PostRef, Reply};
use super::wrap::{shorten, width, wrap, wrap_command, MAIL_COLUMNS};
use crate::analysis::claims::{ClaimVerdict, Inapplicable, Replication, SampleUnit};
use crate::analysis::fmt_sig;
use crate::analysis::tiers::{SubstitutionKind, Tier};
use crate::spec::PostMedium;
use crate::store::{Manifest, CONTENT_HASH_COMMAND, HASHED_FILES};

/// The most lines "what differed from the post" takes.
pub const DIFFERS_LINES: usize = 3;

/// The narrowest the quote column of a claim line gets before the numbers move to a
/// line of their own.
const MIN_QUOTE: usize = 24;

/// A number as the verdicts write it: 4 significant digits, no trailing zeros.
fn num(v: f64) -> String {
    let s = fmt_sig(v, 4);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `s` padded with spaces to `cols` columns (left-aligned).
pub(super) fn pad(s: &str, cols: usize) -> String {
    format!("{s}{}", " ".repeat(cols.saturating_sub(width(s))))
}

/// `s` right-aligned in `cols` columns.
pub(super) fn rpad(s: &str, cols: usize) -> String {
    format!("{}{s}", " ".repeat(cols.saturating_sub(width(s))))
}

/// A paragraph wrapped to the mail's columns.
pub(super) fn para(out: &mut Vec<String>, text: &str) {
    out.extend(wrap(text, MAIL_COLUMNS, "", ""));
}

/// Render the reply (see the module docs).
pub fn render(r: &Reply) -> String {
    let mut out: Vec<String> = Vec::new();
    if let Some(post) = &r.post {
        match post {
            PostRef::MessageId(id) if width(id) + 13 <= MAIL_COLUMNS => {
                out.push(format!("In-Reply-To: {id}"));
            }
            // A folded header: a Message-ID is never cut.
            PostRef::MessageId(id) => {
                out.push("In-Reply-To:".into());
                out.push(format!(" {id}"));
            }
            PostRef::NoMessageId { file } => para(
                &mut out,
                &format!("[no In-Reply-To line: {file} has no Message-ID header]"),
            ),
        }
        out.push(String::new());
    }
    para(&mut out, &what_ran(r));
    if let Some(t) = &r.table {
        out.push(String::new());
        super::reply_table::table(&mut out, t, r);
    }
    out.push(String::new());
    claims(&mut out, r);
    out.push(String::new());
    out.extend(differs(r));
    out.push(String::new());
    rerun(&mut out, r);
    out.push(String::new());
    hash(&mut out, r);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The file name of a bundle path (`data/reruns/000` → `000`).
pub(super) fn short_name(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(path)
}

/// A `--set` value as the command line writes it (YAML; a string that YAML would read
/// as something else is quoted).
fn set_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => match serde_yaml::from_str::<serde_yaml::Value>(s) {
            Ok(serde_yaml::Value::String(t)) if &t == s => s.clone(),
            _ => serde_json::to_string(s).unwrap_or_else(|_| s.clone()),
        },
        other => other.to_string(),
    }
}

fn sets(m: &Manifest) -> Vec<String> {
    m.overrides
        .iter()
        .map(|(k, v)| format!("{k}={}", set_value(v)))
        .collect()
}

/// Replicates a point ran: `3`, `1–8`, or None when the bundle does not record them.
fn replicates(m: &Manifest) -> Option<(usize, usize)> {
    let counts: Vec<usize> = m
        .points
        .iter()
        .map(|p| p.repeat_stops.len())
        .filter(|n| *n > 0)
        .collect();
    Some((*counts.iter().min()?, *counts.iter().max()?))
}

fn what_ran(r: &Reply) -> String {
    let m = &r.manifest;
    let ok = m
        .points
        .iter()
        .filter(|p| p.status == crate::store::PointStatus::Ok)
        .count();
    let mut s = format!(
        "A rerun of {} ({}), fslab {}, profile {}",
        m.experiment.id,
        short_name(&r.bundle),
        m.fslab_version,
        m.profile.as_deref().unwrap_or("(none)")
    );
    let sets = sets(m);
    if !sets.is_empty() {
        s.push_str(&format!(" with {}", sets.join(", ")));
    }
    s.push_str(&format!(": {ok} of {} points ran", m.points.len()));
    match replicates(m) {
        Some((a, b)) if a == b => s.push_str(&format!(
            ", {a} replicate{} (fresh filesystem{}) each",
            if a == 1 { "" } else { "s" },
            if a == 1 { "" } else { "s" }
        )),
        Some((a, b)) => s.push_str(&format!(", {a}–{b} replicates (fresh filesystems) each")),
        None => s.push_str(", replicates not recorded"),
    }
    s.push('.');
    s
}

/// The tier in a claim line: the tier's own words, shortened where a legend says them.
fn tier_short(v: &ClaimVerdict) -> &'static str {
    match (v.tier, v.not_applicable) {
        (Tier::Reproduced, _) => "reproduced",
        (Tier::ReproducedWithSubstitutes, _) => "reproduced*",
        (Tier::NotReproduced, _) => "not reproduced",
        (Tier::Inconclusive, _) => "inconclusive",
        (Tier::NotApplicable, Some(Inapplicable::ReducedScale)) => "n/a: scale",
        (Tier::NotApplicable, Some(Inapplicable::MechanismAbsent)) => "n/a: absent",
        (Tier::NotApplicable, Some(Inapplicable::MechanismUnshown)) => "n/a: unshown",
        (Tier::NotApplicable, _) => "n/a",
    }
}

/// What the short tiers in use mean.
fn tier_legend(shown: &[&'static str]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let has = |p: &str| shown.iter().any(|s| s.starts_with(p));
    if has("reproduced*") {
        out.push("reproduced*: reproduced with substitutes (below)");
    }
    if has("n/a") {
        out.push("n/a: not applicable");
    }
    if has("n/a: scale") {
        out.push("scale: below the published scale");
    }
    if has("n/a: absent") {
        out.push("absent: the mechanism is absent here");
    }
    if has("n/a: unshown") {
        out.push("unshown: the mechanism is not shown by this bundle");
    }
    out
}

/// `3`, `3/8` (numerator over denominator) for a line's replicate count.
fn n_cell(r: &Replication) -> String {
    let (a, b) = r.replicates;
    let n = if a == b {
        a.to_string()
    } else {
        format!("{a}/{b}")
    };
    match r.unit {
        SampleUnit::Iteration => format!("{n} (it)"),
        _ => n,
    }
}

fn here_cell(v: &ClaimVerdict) -> String {
    match (v.measured, v.interval) {
        (Some(m), Some(i)) => format!("{} [{}, {}]", num(m), num(i.lo), num(i.hi)),
        (Some(m), None) => format!("{} (no CI)", num(m)),
        (None, _) => "—".to_string(),
    }
}

/// Each claim's words, quoted and shortened to `cols` columns. Claims whose shortened
/// words are the same (two claims on one sentence of the post) are told apart by what
/// their ids do not share (`(first-run)`, `(later-runs)`), their words shortened alike.
fn quote_cells(words: &[&str], ids: &[String], cols: &[usize]) -> Vec<String> {
    let quoted = |w: &str, room: usize| format!("\"{}\"", shorten(w, room.saturating_sub(2)));
    let plain: Vec<String> = words.iter().zip(cols).map(|(w, c)| quoted(w, *c)).collect();
    let twins = |i: usize| -> Vec<usize> {
        (0..plain.len())
            .filter(|j| plain[*j] == plain[i] && cols[*j] == cols[i])
            .collect()
    };
    // A twin's tag: its id after the words all the twins' ids begin with.
    let tail = |i: usize| -> String {
        let group = twins(i);
        let parts = |j: usize| ids[j].split('-').collect::<Vec<_>>();
        let mine = parts(i);
        let common = (0..mine.len())
            .take_while(|k| group.iter().all(|j| parts(*j).get(*k) == mine.get(*k)))
            .count();
        let tail = mine[common..].join("-");
        if tail.is_empty() {
            ids[i].clone()
        } else {
            tail
        }
    };
    (0..plain.len())
        .map(|i| {
            let group = twins(i);
            if group.len() < 2 {
                return plain[i].clone();
            }
            // The tag takes at most half the room; the cell never more than all of it.
            let tag_of = |j: usize| format!(" ({})", shorten(&tail(j), cols[i] / 2));
            let widest = group.iter().map(|j| width(&tag_of(*j))).max().unwrap_or(0);
            let cell = format!(
                "{}{}",
                quoted(words[i], cols[i].saturating_sub(widest)),
                tag_of(i)
            );
            shorten(&cell, cols[i])
        })
        .collect()
}

fn claims(out: &mut Vec<String>, r: &Reply) {
    let verdicts = match &r.claims {
        ClaimsSaid::None => {
            para(out, "The experiment states no claims to check.");
            return;
        }
        ClaimsSaid::Unchecked(why) => {
            para(out, &format!("The claims could not be checked: {why}"));
            return;
        }
        ClaimsSaid::Checked(v) => v,
    };
    let post: Vec<&ClaimVerdict> = verdicts.iter().filter(|v| !v.variant).collect();
    let variants: Vec<&ClaimVerdict> = verdicts.iter().filter(|v| v.variant).collect();
    let mut reps: Vec<Replication> = Vec::new();
    for rep in post.iter().filter_map(|v| v.replication) {
        if !reps.contains(&rep) {
            reps.push(rep);
        }
    }
    let one_unit = reps.len() <= 1;
    let level = post
        .iter()
        .find_map(|v| v.interval)
        .map_or(95.0, |i| (i.level * 100.0).round());
    let unit = match reps.as_slice() {
        [] => String::new(),
        [rep] => format!("; {}", rep.label()),
        _ if reps.iter().any(|r| r.unit == SampleUnit::Iteration) => {
            "; n: replicates a side, (it): the interval is over the iterations of one filesystem, for orientation only".to_string()
        }
        _ => "; n: replicates a side".to_string(),
    };
    para(
        out,
        &format!("The post's claims, its number and the number here ({level} % interval{unit}):"),
    );
    let rows: Vec<[String; 5]> = post
        .iter()
        .map(|v| {
            [
                v.quote.clone().unwrap_or_else(|| v.text.clone()),
                v.published.map_or_else(|| "—".to_string(), num),
                here_cell(v),
                if one_unit {
                    String::new()
                } else {
                    v.replication.as_ref().map_or_else(|| "-".into(), n_cell)
                },
                tier_short(v).to_string(),
            ]
        })
        .collect();
    let w = |i: usize, head: &str| {
        rows.iter()
            .map(|c| width(&c[i]))
            .chain([width(head)])
            .max()
            .unwrap_or(0)
    };
    let (post_w, here_w, tier_w) = (w(1, "post"), w(2, "here"), w(4, "tier"));
    let n_w = if one_unit { 0 } else { w(3, "n") + 2 };
    let fixed = 1 + post_w + 2 + here_w + n_w + 2 + tier_w;
    let quote_w = MAIL_COLUMNS.saturating_sub(fixed + 1);
    let numbers = |c: &[String; 5]| {
        let n = if one_unit {
            String::new()
        } else {
            format!("  {}", rpad(&c[3], n_w - 2))
        };
        format!(
            "{}  {}{n}  {}",
            rpad(&c[1], post_w),
            pad(&c[2], here_w),
            c[4]
        )
        .trim_end()
        .to_string()
    };
    let one_line = quote_w >= MIN_QUOTE;
    // A claim checked once per kernel: its words once, then a line per kernel.
    let mut entries: Vec<(usize, usize)> = Vec::new();
    for (i, v) in post.iter().enumerate() {
        match entries.last_mut() {
            Some((start, end)) if v.kernel.is_some() && post[*start].id == v.id => *end = i + 1,
            _ => entries.push((i, i + 1)),
        }
    }
    let grouped = |(a, b): (usize, usize)| post[a].kernel.is_some() || b - a > 1;
    let rooms: Vec<usize> = entries
        .iter()
        .map(|e| {
            if one_line && !grouped(*e) {
                quote_w
            } else {
                MAIL_COLUMNS
            }
        })
        .collect();
    let words: Vec<&str> = entries.iter().map(|(a, _)| rows[*a][0].as_str()).collect();
    let ids: Vec<String> = entries.iter().map(|(a, _)| post[*a].id.clone()).collect();
    let quotes = quote_cells(&words, &ids, &rooms);
    if one_line {
        let head: [String; 5] = ["", "post", "here", "n", "tier"].map(str::to_string);
        out.push(format!(
            "{} {}",
            pad("the post's words", quote_w + 1),
            numbers(&head)
        ));
    }
    for ((a, b), q) in entries.iter().zip(&quotes) {
        if one_line && !grouped((*a, *b)) {
            out.push(format!("{} {}", pad(q, quote_w + 1), numbers(&rows[*a])));
            continue;
        }
        out.push(q.clone());
        for i in *a..*b {
            let kernel = post[i].kernel.as_deref().map(|k| format!("{k}:"));
            let kernel = kernel.unwrap_or_default();
            let lead = format!("  {kernel} ");
            let line = if one_line {
                let lead = format!("  {}", shorten(&kernel, quote_w.saturating_sub(2)));
                format!("{} {}", pad(&lead, quote_w + 1), numbers(&rows[i]))
            } else {
                format!("{lead}{}", numbers(&rows[i]))
            };
            if width(&line) <= MAIL_COLUMNS {
                out.push(line);
            } else {
                out.extend(wrap(&line, MAIL_COLUMNS, "", "    "));
            }
        }
    }
    if post.is_empty() {
        para(
            out,
            "(every claim is fslab's own variant; none quotes the post)",
        );
    }
    let shown: Vec<&'static str> = post.iter().map(|v| tier_short(v)).collect();
    let legend = tier_legend(&shown);
    if !legend.is_empty() {
        para(out, &format!("{}.", legend.join("; ")));
    }
    if !variants.is_empty() {
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        for v in &variants {
            match counts.iter_mut().find(|(t, _)| *t == v.tier_label()) {
                Some((_, n)) => *n += 1,
                None => counts.push((v.tier_label(), 1)),
            }
        }
        para(
            out,
            &format!(
                "And {} verdict{} of fslab's own variants (no quote from the post): {}.",
                variants.len(),
                if variants.len() == 1 { "" } else { "s" },
                counts
                    .iter()
                    .map(|(t, n)| format!("{n} {t}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if let Some(agree) = r.table.as_ref().and_then(|t| t.agreement.as_ref()) {
        let post_agree: Vec<_> = agree.iter().filter(|a| !a.variant).collect();
        let same = post_agree.iter().filter(|a| a.same_tier).count();
        let with_both: Vec<_> = post_agree
            .iter()
            .filter_map(|a| a.intervals_overlap)
            .collect();
        let overlap = with_both.iter().filter(|o| **o).count();
        let mut s = format!(
            "{} (the same experiment and profile) gives the same tier for {same} of {} claims",
            short_name(r.table.as_ref().map_or("", |t| t.base.as_str())),
            post_agree.len()
        );
        let differ: Vec<String> = post_agree
            .iter()
            .filter(|a| !a.same_tier)
            .map(|a| a.name())
            .collect();
        if !differ.is_empty() {
            s.push_str(&format!(" (not: {})", differ.join(", ")));
        }
        if !with_both.is_empty() {
            s.push_str(&format!(
                "; the intervals overlap for {overlap} of the {} with one on both sides",
                with_both.len()
            ));
        }
        s.push('.');
        para(out, &s);
    }
}

/// The short words of each substitution, then the scale, the kernel and the tools; and
/// how many of them (the substitutions and the scale) must be said.
fn differ_items(r: &Reply) -> (Vec<String>, usize) {
    let m = &r.manifest;
    let mut items: Vec<String> = Vec::new();
    let mut seen_guest = false;
    let mut seen_medium = false;
    for s in &r.substitutions {
        let said = match s.kind {
            SubstitutionKind::StandInWorkload => {
                let stand_ins: Vec<String> = m
                    .tools
                    .iter()
                    .filter(|(_, t)| t.stand_in.is_some())
                    .map(|(name, t)| {
                        format!(
                            "{name}: fslab's stand-in `{}`",
                            t.command.replace("{{fslab}}", "fslab")
                        )
                    })
                    .collect();
                stand_ins.join(", ")
            }
            SubstitutionKind::Ext3ByExt4Driver => "ext3 ran on the ext4 driver".to_string(),
            SubstitutionKind::Medium => {
                if seen_medium {
                    continue;
                }
                seen_medium = true;
                let mut kinds: Vec<(String, Vec<String>)> = Vec::new();
                for d in &m.environment.devices {
                    let what = match &d.medium {
                        Some(md) if md.substitution => format!("the {} disk model", md.model),
                        _ if d.backing.contains("ubd disk") => {
                            "a guest's ubd disk on an image file".to_string()
                        }
                        _ if d.backing.contains("loop device") => {
                            "a loop device on an image file".to_string()
                        }
                        _ => d.backing.clone(),
                    };
                    match kinds.iter_mut().find(|(w, _)| *w == what) {
                        Some((_, names)) => names.push(format!("`{}`", d.name)),
                        None => kinds.push((what, vec![format!("`{}`", d.name)])),
                    }
                }
                let here: Vec<String> = kinds
                    .iter()
                    .map(|(what, names)| format!("{}: {what}", names.join(", ")))
                    .collect();
                format!(
                    "{} (the post: {})",
                    here.join("; "),
                    medium_short(r.post_medium)
                )
            }
            SubstitutionKind::Guest => {
                if seen_guest {
                    continue;
                }
                seen_guest = true;
                let guests: Vec<String> = m
                    .environment
                    .guests
                    .iter()
                    .map(|g| format!("{} {}", g.name, g.release))
                    .collect();
                format!(
                    "{} guests: {}",
                    m.environment.guests[0].kind,
                    guests.join(", ")
                )
            }
        };
        if !said.is_empty() && !items.contains(&said) {
            items.push(said);
        }
    }
    match &r.scale {
        None => items.push("no published scale to compare with".to_string()),
        Some(d) if d.is_empty() => items.push("the published scale".to_string()),
        Some(d) => {
            let vars: Vec<String> = d
                .iter()
                .map(|v| {
                    format!(
                        "{}={} ({})",
                        v.var,
                        v.here.as_deref().unwrap_or("unset"),
                        v.published.as_deref().unwrap_or("unset")
                    )
                })
                .collect();
            items.push(format!("here (published): {}", vars.join(", ")));
        }
    }
    let required = items.len();
    let kernel = &m.environment.kernel;
    items.push(format!(
        "kernel {} (the post's unknown)",
        if kernel.is_empty() { "unknown" } else { kernel }
    ));
    let tools = tool_versions(m);
    if !tools.is_empty() {
        items.push(format!("tools: {}", tools.join(", ")));
    }
    (items, required)
}

/// The post's storage in a few words.
fn medium_short(m: Option<PostMedium>) -> &'static str {
    match m {
        Some(PostMedium::Hdd) => "an HDD",
        Some(PostMedium::Ssd) => "an SSD",
        Some(PostMedium::Pmem) => "pmem",
        Some(PostMedium::Ramdisk) => "a RAM disk",
        Some(PostMedium::Unknown) | None => "not described",
    }
}

/// The version of each tool the steps ran, once: a provisioned one as `xfsprogs 6.13.0
/// built by fslab`, a packaged one by its package (`e2fsprogs 1.47.0-2`); fslab itself
/// and the stand-ins (said already) are left out.
fn tool_versions(m: &Manifest) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (name, version) in &m.environment.tools {
        if name.contains('/') || m.tools.get(name).is_some_and(|t| t.stand_in.is_some()) {
            continue;
        }
        let provenance = m.executables.get(name).and_then(|e| e.provenance.as_ref());
        let provisioned = version
            .split_once("(provisioned by fslab: ")
            .map(|(_, rest)| rest.split([' ', ')']).take(2).collect::<Vec<_>>().join(" "));
        let said = match (provenance, provisioned) {
            (Some(p), _) => format!("{} {} built by fslab", p.name, p.version),
            (None, Some(p)) => format!("{p} built by fslab"),
            (None, None) => {
                let head = version.split(" (").next().unwrap_or(version);
                match version.rsplit_once(" (") {
                    // `mke2fs 1.47.0 (5-Feb-2023) (e2fsprogs 1.47.0-2)`: the package.
                    Some((_, pkg))
                        if pkg.ends_with(')')
                            && pkg.contains(' ')
                            && version.matches(" (").count() > 1 =>
                    {
                        pkg.trim_end_matches(')').to_string()
                    }
                    _ => head.replacen(" version ", " ", 1),
                }
            }
        };
        if !out.contains(&said) {
            out.push(said);
        }
    }
    // What fslab built first: the tools a reader is least likely to have alike.
    out.sort_by_key(|t| !t.ends_with(" built by fslab"));
    out
}

/// "What differed from the post", in at most [`DIFFERS_LINES`] lines. What does not fit
/// is left out from the end (the tools first), and the cut is said.
fn differs(r: &Reply) -> Vec<String> {
    let (mut items, required) = differ_items(r);
    let lines = |items: &[String], more: &str| {
        wrap(
            &format!("Differs from the post: {}{more}.", items.join("; ")),
            MAIL_COLUMNS,
            "",
            "  ",
        )
    };
    let all = lines(&items, "");
    if all.len() <= DIFFERS_LINES {
        return all;
    }
    let more = "; more: fslab show";
    // The kernel and the tools may go; the substitutions and the scale may not.
    while items.len() > required {
        items.pop();
        let fewer = lines(&items, more);
        if fewer.len() <= DIFFERS_LINES {
            return fewer;
        }
    }
    // The ones that must stay are too long: cut inside them.
    let mut lines = lines(&items, "");
    let rest = lines[DIFFERS_LINES - 1..].join(" ");
    lines.truncate(DIFFERS_LINES - 1);
    let tail = " (more: fslab show)";
    let room = MAIL_COLUMNS - 2 - width(tail);
    lines.push(format!("  {}{tail}", shorten(rest.trim(), room)));
    lines
}

/// A word for the shell: as it is when it holds nothing the shell reads (`link=1`,
/// `experiments/x.yaml`), else quoted.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.,/=:+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        shell_words::quote(s).into_owned()
    }
}

fn rerun(out: &mut Vec<String>, r: &Reply) {
    let m = &r.manifest;
    let file = m
        .experiment
        .file
        .clone()
        .unwrap_or_else(|| format!("{}/experiment.yaml", r.bundle));
    let mut words: Vec<String> = vec!["fslab".into(), "run".into(), shell_word(&file)];
    if let Some(p) = &m.profile {
        words.push(format!("--profile {}", shell_word(p)));
    }
    for s in sets(m) {
        words.push(format!("--set {}", shell_word(&s)));
    }
    out.extend(wrap_command(&words, MAIL_COLUMNS, "Rerun: ", "    "));
    let sha = &m.experiment.sha256[..m.experiment.sha256.len().min(12)];
    let said = match (&r.experiment_now, &m.experiment.file) {
        (ExperimentNow::Same, _) => format!("(the experiment as it ran, sha256 {sha})"),
        (ExperimentNow::Differs, Some(f)) => format!(
            "({f} has changed since: the copy that ran, sha256 {sha}, is experiment.yaml in the bundle)"
        ),
        _ => format!("(the experiment that ran, sha256 {sha}, is experiment.yaml in the bundle)"),
    };
    out.extend(wrap(&said, MAIL_COLUMNS, "  ", "  "));
}

fn hash(out: &mut Vec<String>, r: &Reply) {
    let h = &r.hash;
    let parquet = h
        .files
        .iter()
        .filter(|f| f.name.ends_with(".parquet"))
        .count();
    let mut over: Vec<String> = HASHED_FILES
        .iter()
        .filter(|n| h.files.iter().any(|f| f.name == **n))
        .map(|n| n.to_string())
        .collect();
    over.push(format!("{parquet} *.parquet"));
    let mut s = format!(
        "Content hash of {} ({} files: {}",
        short_name(&r.bundle),
        h.files.len(),
        over.join(", ")
    );
    if !h.missing.is_empty() {
        s.push_str(&format!("; it has no {}", h.missing.join(", ")));
    }
    if !h.unmerged.is_empty() {
        s.push_str(&format!(
            "; rows of {} still in .parts/ are not covered",
            h.unmerged.join(", ")
        ));
    }
    s.push_str("):");
    para(out, &s);
    out.push(format!("  {}", h.sha256));
    let words: Vec<String> = CONTENT_HASH_COMMAND
        .split(' ')
        .map(str::to_string)
        .collect();
    out.extend(wrap_command(
        &words,
        MAIL_COLUMNS,
        "  in the bundle: ",
        "    ",
    ));
}
