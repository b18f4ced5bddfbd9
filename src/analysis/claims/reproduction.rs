//! `REPRODUCTION.md`: the claims of several bundles (one per seed experiment) as one
//! Markdown document, with the environment they ran in (`fslab claims --md`).
//!
//! Deterministic: the same bundles always give the same text (the intervals' bootstrap
//! has a fixed seed, nothing reads the clock), so a test can regenerate the file from the
//! committed bundles and compare.

use super::error::ClaimsError;
use super::evidence::{bundle_vars, published_vars, workloads_ran};
use super::render::{counted_note, post_claims};
use super::sections::{analyse, bundle_name, ClaimsSource, Reading, Section};
use super::summary::summarise;
use super::summary_render::summary_md;
use super::verdict::ClaimVerdict;
use super::words::num;
use crate::analysis::tiers::counts_line;
use crate::analysis::tiers::{scale_differences, substitutions, Tier};
use crate::spec::claim::KERNEL_AXIS;
use crate::spec::Value as SpecValue;
use crate::store::PointStatus;
use crate::store::{Bundle, Manifest};
use indexmap::IndexMap;

/// A table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
        .trim()
        .to_string()
}

fn opt_num(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), num)
}

/// The measured number with its interval, or why it has none.
fn here(c: &ClaimVerdict) -> String {
    match (c.measured, c.interval, &c.no_interval) {
        (None, _, _) => "—".into(),
        (Some(m), Some(i), _) => format!("{} {}", num(m), i.label()),
        (Some(m), None, Some(why)) => format!("{} ({why})", num(m)),
        (Some(m), None, None) => num(m),
    }
}

/// The environment lines of one bundle: kernel, machine, tools with provenance, media.
fn environment(b: &Bundle) -> Vec<String> {
    let m = b.manifest();
    let e = &m.environment;
    let mut out = vec![
        format!(
            "- kernel `{}`, {}; {} × {}, {} MiB of memory",
            e.kernel,
            e.distribution,
            e.cores,
            e.cpu_model,
            e.memory_bytes / (1024 * 1024)
        ),
        format!(
            "- profile `{}`{}, fslab {}; started {}, finished {}",
            m.profile.as_deref().unwrap_or("-"),
            with_sets(m),
            m.fslab_version,
            m.started_at,
            m.finished_at.as_deref().unwrap_or("(not finished)")
        ),
        format!("- points: {}", points_line(m)),
    ];
    for d in &e.devices {
        let medium = match &d.medium {
            Some(r) if r.substitution => format!(
                "disk model `{}`{}",
                r.model,
                r.params
                    .as_ref()
                    .map(|p| format!(" {p}"))
                    .unwrap_or_default()
            ),
            _ => "no disk model".into(),
        };
        out.push(format!(
            "- medium: device `{}` ({} bytes): {}; {}",
            d.name, d.size_bytes, d.backing, medium
        ));
    }
    for (name, x) in &m.executables {
        let prov = x.provenance.as_ref().map_or_else(String::new, |p| {
            format!(
                "; built by fslab from {} with {}",
                p.origin,
                if p.compiler.is_empty() {
                    "an unrecorded compiler"
                } else {
                    &p.compiler
                }
            )
        });
        out.push(format!(
            "- tool `{name}`: `{}`, {} ({}){prov}",
            x.path, x.version, x.via
        ));
    }
    for (name, t) in &m.tools {
        if let Some(si) = &t.stand_in {
            out.push(format!(
                "- stand-in: `{name}` ran as `{}` ({si})",
                t.command.replace("{{fslab}}", "fslab")
            ));
        }
    }
    out
}

/// Points grouped by status and reason: `ok: a, b; unsupported (why): c, d`.
fn points_line(m: &Manifest) -> String {
    let mut groups: IndexMap<(&'static str, Option<String>), Vec<String>> = IndexMap::new();
    for p in &m.points {
        let reason = (p.status != PointStatus::Ok)
            .then(|| p.reason.clone())
            .flatten();
        groups
            .entry((p.status.as_str(), reason))
            .or_default()
            .push(format!("`{}`", p.id));
    }
    groups
        .into_iter()
        .map(|((status, reason), ids)| match reason {
            Some(r) => format!("{status} ({r}): {}", ids.join(", ")),
            None => format!("{status}: {}", ids.join(", ")),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The row's reason: the tier's own, then the claim's note.
fn row_reason(v: &ClaimVerdict) -> String {
    let mut r = match &v.reading {
        Some(reading) => format!("read as: {reading}; {}", v.reason),
        None => v.reason.clone(),
    };
    let decided = matches!(
        v.tier,
        Tier::ReproducedWithSubstitutes | Tier::NotReproduced
    );
    if decided && !v.substitutions.is_empty() {
        r.push_str(" (substitutes: see above)");
    }
    if let Some(p) = v.power_line() {
        r.push_str(&format!("; {p}"));
    }
    if let Some(n) = &v.note {
        r.push_str(&format!("; note: {n}"));
    }
    r
}

/// The unit of the row's samples and their count a side.
fn unit_cell(v: &ClaimVerdict) -> String {
    v.replication
        .map_or_else(|| "—".to_string(), |r| r.label().replacen("unit: ", "", 1))
}

const HEADER: &str = "| claim | quote | published | here | unit | scale | expected | tier | reason | computed from |\n|---|---|---|---|---|---|---|---|---|---|\n";

/// The cells of a row; the first two (the claim and its quote) are the claim's own.
type Cells = [String; 10];

/// The cells of a verdict's row; `tier` replaces its tier when two reruns are combined.
/// A verdict of the claim of the row above (another kernel of it) names the claim only.
fn row_cells(v: &ClaimVerdict, tier: &str, reason: &str, same_claim: bool) -> Cells {
    let (text, quote) = if same_claim {
        (
            "(the claim of the row above, on this kernel)".to_string(),
            "(as above)".to_string(),
        )
    } else {
        (cell(&v.text), cell(v.quote.as_deref().unwrap_or("—")))
    };
    [
        format!("**{}**: {text}", cell(&v.name())),
        quote,
        opt_num(v.published),
        cell(&here(v)),
        cell(&unit_cell(v)),
        cell(if v.scale.is_empty() { "—" } else { &v.scale }),
        cell(&v.expected),
        tier.to_string(),
        cell(reason),
        cell(if v.recipe.is_empty() {
            "—"
        } else {
            &v.recipe
        }),
    ]
}

fn row_line(c: &Cells) -> String {
    format!("| {} |\n", c.join(" | "))
}

/// The shortest sentence said once for a section instead of in each of its rows.
pub const SHARED_MIN: usize = 60;

/// A text's sentences as (sentence, separator after it): split after `;` and after a `.`
/// followed by white space (not in `e.g.` or `i.e.`); the separators keep the spaces.
pub(super) fn sentences(s: &str) -> Vec<(&str, &str)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let end_here = match b[i] {
            b';' => true,
            b'.' => {
                let next_space = b.get(i + 1).is_some_and(|c| c.is_ascii_whitespace());
                let abbrev = s[..i].ends_with("e.g") || s[..i].ends_with("i.e");
                next_space && !abbrev
            }
            _ => false,
        };
        if end_here {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            out.push((&s[start..i], &s[i..j]));
            start = j;
            i = j;
        } else {
            i += 1;
        }
    }
    if start < s.len() {
        out.push((&s[start..], ""));
    }
    out
}

/// `A`, `B`, … `Z`, `AA`, `AB`, …
fn letter(mut n: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push((b'A' + (n % 26) as u8) as char);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    out.iter().rev().collect()
}

/// A sentence without the label a row puts before a claim's note (`note: `): the label,
/// the sentence.
fn unlabelled(sentence: &str) -> (&str, &str) {
    let t = sentence.trim();
    match t.strip_prefix("note: ") {
        Some(rest) => ("note: ", rest),
        None => ("", t),
    }
}

/// Every sentence of at least [`SHARED_MIN`] characters that more than one row says (in
/// any cell but the claim and its quote) is taken out of the rows, which name it `[A]`:
/// the returned list says each once, in the order the rows first say them.
fn hoist(rows: &mut [Cells]) -> Vec<(String, String)> {
    let mut seen: IndexMap<String, Vec<usize>> = IndexMap::new();
    for (r, cells) in rows.iter().enumerate() {
        for c in &cells[2..] {
            for (sentence, _) in sentences(c) {
                let (_, t) = unlabelled(sentence);
                if t.chars().count() >= SHARED_MIN {
                    let at = seen.entry(t.to_string()).or_default();
                    if !at.contains(&r) {
                        at.push(r);
                    }
                }
            }
        }
    }
    let shared: IndexMap<String, String> = seen
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .enumerate()
        .map(|(i, (t, _))| (t, format!("[{}]", letter(i))))
        .collect();
    if shared.is_empty() {
        return Vec::new();
    }
    for cells in rows.iter_mut() {
        for c in cells[2..].iter_mut() {
            let rebuilt: String = sentences(c)
                .into_iter()
                .map(|(sentence, sep)| {
                    let (prefix, t) = unlabelled(sentence);
                    match shared.get(t) {
                        Some(letter) => format!("{prefix}{letter}{sep}"),
                        None => format!("{sentence}{sep}"),
                    }
                })
                .collect();
            *c = rebuilt;
        }
    }
    shared.into_iter().map(|(t, l)| (l, t)).collect()
}

/// ` with `k=v`, …` for a bundle's `--set` values (empty when it has none).
fn with_sets(m: &Manifest) -> String {
    if m.overrides.is_empty() {
        return String::new();
    }
    format!(
        " with {}",
        m.overrides
            .iter()
            .map(|(k, v)| format!("`{k}={v}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `, N replicates a point` (the most any point ran), for the lines that name a rerun or
/// another scale of a section's bundle; empty for bundles that do not record it.
fn replicates_said(m: &Manifest) -> String {
    match m.points.iter().map(|p| p.repeat_stops.len()).max() {
        Some(n) if n > 0 => format!(", {n} replicate{} a point", if n == 1 { "" } else { "s" }),
        _ => String::new(),
    }
}

/// `k=v, …` for a map of values.
fn values_said(m: &IndexMap<String, SpecValue>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}={}", v.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The line that says which reading of the workload a section's bundle ran (None when
/// the experiment does not say which reading is the post's).
fn reading_line(r: &Reading) -> Option<String> {
    match r {
        Reading::Undeclared => None,
        Reading::Post(p) => Some(format!(
            "- reading of the workload: the post's (`post_reading: {}`): the workload as the post's own tools most likely ran it; every row below rests on it",
            values_said(p)
        )),
        Reading::Other { post, here } => Some(format!(
            "- reading of the workload: not the post's; here {}, the post's `post_reading:` is {}; every row below rests on it",
            here.iter()
                .map(|(k, v)| format!(
                    "{k}={}",
                    v.as_ref().map_or_else(|| "(unset)".to_string(), SpecValue::label)
                ))
                .collect::<Vec<_>>()
                .join(", "),
            values_said(post)
        )),
    }
}

/// The claims of one section as Markdown: its heading, environment, what its claims
/// share, then one row per claim (fslab's variants apart).
fn section_md(sec: &Section, out: &mut String) -> Vec<Tier> {
    let b = sec.main;
    let rerun = sec.rerun;
    let m = b.manifest();
    let verdicts = &sec.verdicts;
    let scale_word = |bundle: &Bundle| -> String {
        sec.scale_var.as_ref().map_or_else(String::new, |var| {
            bundle_vars(bundle.manifest())
                .get(var)
                .map(|v| format!(" ({var}={})", v.label()))
                .unwrap_or_default()
        })
    };
    out.push_str(&format!(
        "\n## {} — {} (§{})\n\nBundle: `{}`{}{}{}\n\n",
        m.experiment.id,
        m.experiment.title,
        sec.index,
        bundle_name(b),
        scale_word(b),
        match (rerun, sec.rerun_of) {
            (None, _) => "; no independent rerun: its decided tiers are not checked against a second run".to_string(),
            (Some(r), None) => format!(
                "; its independent rerun: `{}`{} (a tier that differs between the two is *inconclusive*)",
                bundle_name(r),
                scale_word(r)
            ),
            (Some(r), Some(of)) => format!(
                "; an independent rerun of `{}`{}: `{}`{} (the series over the scales is checked once with each; a tier that differs between the two is *inconclusive*)",
                bundle_name(of),
                scale_word(of),
                bundle_name(r),
                scale_word(r)
            ),
        },
        if sec.scales.is_empty() {
            String::new()
        } else {
            format!(
                "; the same profile at other scales: {} (`scale_check: {}`: a claim below the published scale is decided from its trend over the scales, see each row)",
                sec.scales
                    .iter()
                    .map(|(w, s)| format!("`{}` ({w})", bundle_name(s)))
                    .collect::<Vec<_>>()
                    .join(", "),
                sec.scale_var.as_deref().unwrap_or("")
            )
        }
    ));
    for line in environment(b) {
        out.push_str(&cell_line(&line));
        out.push('\n');
    }
    out.push_str(&sec.claims_line);
    out.push('\n');
    if let Some(r) = rerun {
        let e = &r.manifest().environment;
        out.push_str(&format!(
            "- rerun `{}`{}{}: kernel `{}`; started {}, finished {}\n",
            bundle_name(r),
            with_sets(r.manifest()),
            replicates_said(r.manifest()),
            e.kernel,
            r.manifest().started_at,
            r.manifest()
                .finished_at
                .as_deref()
                .unwrap_or("(not finished)")
        ));
    }
    for (w, sb) in &sec.scales {
        let e = &sb.manifest().environment;
        out.push_str(&format!(
            "- scale {w}: `{}`{}{}, kernel `{}`; started {}, finished {}\n",
            bundle_name(sb),
            with_sets(sb.manifest()),
            replicates_said(sb.manifest()),
            e.kernel,
            sb.manifest().started_at,
            sb.manifest()
                .finished_at
                .as_deref()
                .unwrap_or("(not finished)")
        ));
    }
    let differs = published_vars(m)
        .map(|p| scale_differences(&bundle_vars(m), &p))
        .unwrap_or_default();
    if !differs.is_empty() {
        out.push_str(&format!(
            "- differs from the published profile: {}\n",
            differs.join(", ")
        ));
    }
    for line in workloads_ran(m) {
        out.push_str(&format!("- {}\n", cell_line(&line)));
    }
    if let Some(line) = reading_line(&sec.reading) {
        out.push_str(&line);
        out.push('\n');
    }
    let subs = substitutions(m);
    if subs.is_empty() {
        out.push_str("- substitutions: none\n");
    } else {
        out.push_str(if m.matrix_axes.iter().any(|a| a == KERNEL_AXIS) {
            "- substitutions (a claim checked per kernel rests on those of its kernel's points; a guest's names its kernel):\n"
        } else {
            "- substitutions (every claim of this seed rests on them):\n"
        });
        for sub in &subs {
            out.push_str(&format!("  - {}\n", sub.what));
        }
    }
    let tier_of = |v: &ClaimVerdict| -> (Tier, String, String) {
        let s = sec.settled(v);
        match s.agreement {
            // The reruns' own reasons disagree; what this rerun could detect still holds.
            Some(a) if !a.same_tier => (
                a.tier,
                a.tier_label.clone(),
                match v.power_line() {
                    Some(p) => format!("{}; {p}", a.reason),
                    None => a.reason.clone(),
                },
            ),
            Some(a) => (
                a.tier,
                a.tier_label.clone(),
                format!("{}; {}", row_reason(v), a.reason),
            ),
            None => (s.tier, s.tier_label.to_string(), row_reason(v)),
        }
    };
    let tiers: Vec<Tier> = post_claims(verdicts).map(|v| tier_of(v).0).collect();
    out.push_str(&format!(
        "\n{}{}\n\n",
        counts_line(&tiers),
        counted_note(verdicts)
    ));
    let cells_of = |list: &[&ClaimVerdict]| -> Vec<Cells> {
        let mut prev: Option<&str> = None;
        list.iter()
            .map(|v| {
                let (_, label, reason) = tier_of(v);
                let same = prev == Some(v.id.as_str());
                prev = Some(&v.id);
                row_cells(v, &label, &reason, same)
            })
            .collect()
    };
    let post: Vec<&ClaimVerdict> = post_claims(verdicts).collect();
    let variants: Vec<&ClaimVerdict> = verdicts.iter().filter(|v| v.variant).collect();
    let mut rows = cells_of(&post);
    rows.extend(cells_of(&variants));
    let shared = hoist(&mut rows);
    if !shared.is_empty() {
        out.push_str("Said once for the rows below (a row names each by its letter):\n\n");
        for (label, sentence) in &shared {
            out.push_str(&format!("- {label} {sentence}\n"));
        }
        out.push('\n');
    }
    let (post_rows, variant_rows) = rows.split_at(post.len());
    out.push_str(HEADER);
    for r in post_rows {
        out.push_str(&row_line(r));
    }
    if !variant_rows.is_empty() {
        out.push_str("\nfslab's own variants (no quote from the post; not counted above):\n\n");
        out.push_str(HEADER);
        for r in variant_rows {
            out.push_str(&row_line(r));
        }
    }
    tiers
}

/// The document for these bundles, in the order given: the summary (one answer per
/// claim, `super::summary`), then one section per bundle and its rerun (or series over
/// scales). A bundle followed by another of the same experiment and profile is read as
/// two independent reruns: each claim's tier is the one both support (a tier that
/// differs is `inconclusive`).
pub fn reproduction_md(bundles: &[Bundle], source: &ClaimsSource) -> Result<String, ClaimsError> {
    Ok(render_reproduction(&analyse(bundles, source)?))
}

/// The document for these sections ([`analyse`]d from bundles), as [`reproduction_md`].
pub fn render_reproduction(secs: &[Section]) -> String {
    let mut out = String::new();
    out.push_str("# Reproduction of the seed experiments\n\n");
    out.push_str(
        "Generated by `fslab claims --md` from the bundles named below; do not edit by hand.\n\n",
    );
    out.push_str(&summary_md(&summarise(secs)));
    out.push_str("\n## How to read the sections\n\n");
    out.push_str(
        "A claim's tier needs its whole 95 % interval on one side of `expect`, computed over \
         replicates (fresh filesystems), at least 3 a side (5 a group for `flat`), every \
         selected point complete, the published scale (a claim checked below it is *not \
         applicable (reduced scale)*), and the mechanism the claim rests on present (else \
         *not applicable: mechanism absent*); substitutions cap it at *reproduced with \
         substitutes* (`src/analysis/tiers.rs`). An interval over the iterations of one \
         filesystem is shown for orientation and never decides. \"here\" is the number \
         measured in the bundle with its interval or why it has none; \"unit\" is what one \
         sample is and how many there are a side; \"computed from\" names the table, the \
         filter and the statistic, so that each number can be recomputed from the parquet \
         files. Claims without a quote from the post are fslab's own variants: they are \
         listed apart and not counted. What a section's rows share is said once at its top: \
         its environment, substitutions, scale and reading of the workload, and every \
         sentence of 60 characters or more that more than one of its rows would say, which \
         the rows name by a letter (`[A]`).\n",
    );
    let mut all_tiers = Vec::new();
    let mut split = false;
    for sec in secs {
        all_tiers.extend(section_md(sec, &mut out));
        split |= sec.verdicts.iter().any(|v| v.kernel.is_some());
    }
    let mut ids: Vec<&str> = secs.iter().map(|s| s.experiment()).collect();
    let sections = secs.len();
    ids.sort_unstable();
    ids.dedup();
    let per = if split {
        " (counted per claim and kernel where a section's claims are split by kernel)"
    } else {
        ""
    };
    if ids.len() == sections {
        out.push_str(&format!("\nAll seeds: {}{per}\n", counts_line(&all_tiers)));
    } else {
        out.push_str(&format!(
            "\nAll {sections} sections ({} experiments; an experiment run at more than one scale, profile or kernel counts in each of its sections): {}{per}\n",
            ids.len(),
            counts_line(&all_tiers)
        ));
    }
    out
}

/// An environment line with no trailing spaces.
fn cell_line(s: &str) -> String {
    s.trim_end().to_string()
}
