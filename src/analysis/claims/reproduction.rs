//! `REPRODUCTION.md`: the claims of several bundles (one per seed experiment) as one
//! Markdown document, with the environment they ran in (`fslab claims --md`).
//!
//! Deterministic: the same bundles always give the same text (the intervals' bootstrap
//! has a fixed seed, nothing reads the clock), so a test can regenerate the file from the
//! committed bundles and compare.

use super::*;
use crate::analysis::tiers::counts_line;
use crate::store::PointStatus;

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
            if m.overrides.is_empty() {
                String::new()
            } else {
                format!(
                    " with {}",
                    m.overrides
                        .iter()
                        .map(|(k, v)| format!("`{k}={v}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
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

/// The tier's reason without what the bundle's header already says (the substitutions,
/// the differences from the published profile), then the claim's note.
fn row_reason(v: &ClaimVerdict, note: Option<&str>) -> String {
    let mut r = v.tier_reason.clone();
    for cut in [
        "; ran at another scale than the published profile",
        "; substitutes: ",
    ] {
        if let Some(i) = r.find(cut) {
            r.truncate(i);
        }
    }
    let decided = matches!(
        v.tier,
        Tier::ReproducedWithSubstitutes | Tier::NotReproduced
    );
    if decided && !v.substitutions.is_empty() {
        r.push_str(" (substitutes: see above)");
    }
    if let Some(n) = note {
        r.push_str(&format!("; note: {n}"));
    }
    r
}

/// The document for these bundles, in the order given.
pub fn reproduction_md(bundles: &[Bundle]) -> Result<String, ClaimsError> {
    let mut out = String::new();
    out.push_str("# Reproduction of the seed experiments\n\n");
    out.push_str(
        "Generated by `fslab claims --md` from the bundles named below; do not edit by hand.\n\
         Each claim's tier needs its whole 95 % interval on one side of `expect`, enough \
         samples, every selected point complete, and names every substitution \
         (`src/analysis/tiers.rs`). \"here\" is the number measured in the bundle, with its \
         interval or the reason it has none.\n",
    );
    let mut all_tiers = Vec::new();
    for b in bundles {
        let m = b.manifest();
        let verdicts = check_bundle(b)?;
        all_tiers.extend(verdicts.iter().map(|v| v.tier));
        out.push_str(&format!(
            "\n## {} — {}\n\nBundle: `{}`\n\n",
            m.experiment.id,
            m.experiment.title,
            b.path()
                .file_name()
                .map(|f| f.to_string_lossy().to_string())
                .unwrap_or_default()
        ));
        for line in environment(b) {
            out.push_str(&cell_line(&line));
            out.push('\n');
        }
        let differs = published_vars(m)
            .map(|p| scale_differences(&bundle_vars(m), &p))
            .unwrap_or_default();
        if !differs.is_empty() {
            out.push_str(&format!(
                "- differs from the published profile (each claim's `at_scale` is met unless its tier says otherwise): {}\n",
                differs.join(", ")
            ));
        }
        let subs = substitutions(m);
        if subs.is_empty() {
            out.push_str("- substitutions: none\n");
        } else {
            out.push_str("- substitutions (every claim of this seed rests on them):\n");
            for sub in &subs {
                out.push_str(&format!("  - {}\n", sub.what));
            }
        }
        let tiers: Vec<Tier> = verdicts.iter().map(|v| v.tier).collect();
        out.push_str(&format!("\n{}\n\n", counts_line(&tiers)));
        out.push_str("| claim | quote | published | here | expected | tier | reason |\n");
        out.push_str("|---|---|---|---|---|---|---|\n");
        let exp = crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml")?;
        for v in &verdicts {
            let claim = exp.def.claims.iter().find(|c| c.id == v.id);
            let quote = claim
                .and_then(|c| c.quote.clone())
                .unwrap_or_else(|| "—".into());
            let check = claim
                .and_then(|c| c.check.as_ref())
                .and_then(|c| parse_check(c).ok());
            let reason = row_reason(v, check.as_ref().and_then(|c| c.stated().note));
            out.push_str(&format!(
                "| **{}**: {} | {} | {} | {} | {} | {} | {} |\n",
                cell(&v.id),
                cell(&v.text),
                cell(&quote),
                opt_num(v.published),
                cell(&here(v)),
                cell(&v.expected),
                v.tier.label(),
                cell(&reason)
            ));
        }
    }
    out.push_str(&format!("\nAll seeds: {}\n", counts_line(&all_tiers)));
    Ok(out)
}

/// An environment line with no trailing spaces.
fn cell_line(s: &str) -> String {
    s.trim_end().to_string()
}
