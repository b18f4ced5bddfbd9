//! `REPRODUCTION.md`: the claims of several bundles (one per seed experiment) as one
//! Markdown document, with the environment they ran in (`fslab claims --md`).
//!
//! Deterministic: the same bundles always give the same text (the intervals' bootstrap
//! has a fixed seed, nothing reads the clock), so a test can regenerate the file from the
//! committed bundles and compare.

use super::error::ClaimsError;
use super::evidence::{bundle_vars, published_vars, Evidence};
use super::render::post_claims;
use super::verdict::{check_bundle, check_claims, ClaimVerdict};
use super::words::num;
use crate::analysis::tiers::counts_line;
use crate::analysis::tiers::{scale_differences, substitutions, Tier};
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

/// The row's reason: the tier's own, then the claim's note.
fn row_reason(v: &ClaimVerdict) -> String {
    let mut r = v.reason.clone();
    let decided = matches!(
        v.tier,
        Tier::ReproducedWithSubstitutes | Tier::NotReproduced
    );
    if decided && !v.substitutions.is_empty() {
        r.push_str(" (substitutes: see above)");
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

/// One table row of a verdict; `tier` replaces its tier when two reruns are combined.
fn row(v: &ClaimVerdict, tier: &str, reason: &str) -> String {
    format!(
        "| **{}**: {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        cell(&v.id),
        cell(&v.text),
        cell(v.quote.as_deref().unwrap_or("—")),
        opt_num(v.published),
        cell(&here(v)),
        cell(&unit_cell(v)),
        cell(if v.scale.is_empty() { "—" } else { &v.scale }),
        cell(&v.expected),
        tier,
        cell(reason),
        cell(if v.recipe.is_empty() {
            "—"
        } else {
            &v.recipe
        })
    )
}

/// Bundles in order, a bundle followed by a rerun of the same experiment and profile
/// taken as its pair.
fn pairs(bundles: &[Bundle]) -> Vec<(&Bundle, Option<&Bundle>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bundles.len() {
        let a = &bundles[i];
        let b = bundles.get(i + 1).filter(|b| {
            b.manifest().experiment.id == a.manifest().experiment.id
                && b.manifest().profile == a.manifest().profile
        });
        out.push((a, b));
        i += if b.is_some() { 2 } else { 1 };
    }
    out
}

fn bundle_name(b: &Bundle) -> String {
    b.path()
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// Where the claims checked against a bundle come from.
#[derive(Debug, Clone)]
pub enum ClaimsSource {
    /// The copy of the experiment each bundle ran (its `experiment.yaml`).
    Bundle,
    /// `DIR/<experiment id>.yaml`: today's claims over the bundle's data, e.g. after a
    /// claim was redefined; the document names the file and both hashes.
    Dir(std::path::PathBuf),
}

/// The claims of a bundle from `source`, and a line saying where they come from.
fn claims_of(
    b: &Bundle,
    source: &ClaimsSource,
) -> Result<(Vec<ClaimVerdict>, String), ClaimsError> {
    match source {
        ClaimsSource::Bundle => Ok((
            check_bundle(b)?,
            "- claims: the bundle's own copy of the experiment".to_string(),
        )),
        ClaimsSource::Dir(dir) => {
            let m = b.manifest();
            let path = dir.join(format!("{}.yaml", m.experiment.id));
            let exp = crate::spec::Experiment::load(&path)?;
            let ev = Evidence::from_bundle(b)?;
            let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
                exp.source_text.as_bytes(),
            ));
            let line = if sha == m.experiment.sha256 {
                format!(
                    "- claims: `{}` (the same file the bundle ran)",
                    path.file_name()
                        .map(|f| f.to_string_lossy().to_string())
                        .unwrap_or_default()
                )
            } else {
                format!(
                    "- claims: today's `experiments/{}.yaml` (sha256 {}), checked over the data of a bundle that ran an earlier copy (sha256 {}); a claim that needs points or tables the bundle lacks says so",
                    m.experiment.id,
                    &sha[..12],
                    &m.experiment.sha256[..m.experiment.sha256.len().min(12)]
                )
            };
            Ok((check_claims(&exp.def.claims, &ev), line))
        }
    }
}

/// The document for these bundles, in the order given. A bundle followed by another of
/// the same experiment and profile is read as two independent reruns: each claim's
/// tier is the one both support (a tier that differs is `inconclusive`).
pub fn reproduction_md(bundles: &[Bundle], source: &ClaimsSource) -> Result<String, ClaimsError> {
    let mut out = String::new();
    out.push_str("# Reproduction of the seed experiments\n\n");
    out.push_str(
        "Generated by `fslab claims --md` from the bundles named below; do not edit by hand.\n\
         A claim's tier needs its whole 95 % interval on one side of `expect`, computed over \
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
         listed apart and not counted.\n",
    );
    let mut all_tiers = Vec::new();
    for (b, rerun) in pairs(bundles) {
        let m = b.manifest();
        let (verdicts, claims_line) = claims_of(b, source)?;
        let agreed = match rerun {
            Some(r) => Some(super::agree::agreement(&verdicts, &claims_of(r, source)?.0)),
            None => None,
        };
        out.push_str(&format!(
            "\n## {} — {}\n\nBundle: `{}`{}\n\n",
            m.experiment.id,
            m.experiment.title,
            bundle_name(b),
            rerun.map_or_else(String::new, |r| format!(
                "; its independent rerun: `{}` (a tier that differs between the two is *inconclusive*)",
                bundle_name(r)
            ))
        ));
        for line in environment(b) {
            out.push_str(&cell_line(&line));
            out.push('\n');
        }
        out.push_str(&claims_line);
        out.push('\n');
        if let Some(r) = rerun {
            let e = &r.manifest().environment;
            out.push_str(&format!(
                "- rerun `{}`: kernel `{}`; started {}, finished {}\n",
                bundle_name(r),
                e.kernel,
                r.manifest().started_at,
                r.manifest()
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
        let subs = substitutions(m);
        if subs.is_empty() {
            out.push_str("- substitutions: none\n");
        } else {
            out.push_str("- substitutions (every claim of this seed rests on them):\n");
            for sub in &subs {
                out.push_str(&format!("  - {}\n", sub.what));
            }
        }
        let tier_of = |v: &ClaimVerdict| -> (Tier, String, String) {
            match agreed
                .as_ref()
                .and_then(|g| g.iter().find(|a| a.id == v.id))
            {
                Some(a) if !a.same_tier => (a.tier, a.tier_label.clone(), a.reason.clone()),
                Some(a) => (
                    a.tier,
                    a.tier_label.clone(),
                    format!("{}; {}", row_reason(v), a.reason),
                ),
                None => (v.tier, v.tier_label().to_string(), row_reason(v)),
            }
        };
        let tiers: Vec<Tier> = post_claims(&verdicts).map(|v| tier_of(v).0).collect();
        all_tiers.extend(tiers.iter().copied());
        out.push_str(&format!("\n{}\n\n", counts_line(&tiers)));
        out.push_str(HEADER);
        for v in post_claims(&verdicts) {
            let (_, label, reason) = tier_of(v);
            out.push_str(&row(v, &label, &reason));
        }
        let variants: Vec<&ClaimVerdict> = verdicts.iter().filter(|v| v.variant).collect();
        if !variants.is_empty() {
            out.push_str("\nfslab's own variants (no quote from the post; not counted above):\n\n");
            out.push_str(HEADER);
            for v in variants {
                let (_, label, reason) = tier_of(v);
                out.push_str(&row(v, &label, &reason));
            }
        }
    }
    let mut ids: Vec<&str> = bundles
        .iter()
        .map(|b| b.manifest().experiment.id.as_str())
        .collect();
    let sections = pairs(bundles).len();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() == sections {
        out.push_str(&format!("\nAll seeds: {}\n", counts_line(&all_tiers)));
    } else {
        out.push_str(&format!(
            "\nAll {sections} sections ({} experiments; one checked at more than one scale counts in each of its sections): {}\n",
            ids.len(),
            counts_line(&all_tiers)
        ));
    }
    Ok(out)
}

/// An environment line with no trailing spaces.
fn cell_line(s: &str) -> String {
    s.trim_end().to_string()
}
