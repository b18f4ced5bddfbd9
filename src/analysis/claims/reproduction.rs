//! `REPRODUCTION.md`: the claims of several bundles (one per seed experiment) as one
//! Markdown document, with the environment they ran in (`fslab claims --md`).
//!
//! Deterministic: the same bundles always give the same text (the intervals' bootstrap
//! has a fixed seed, nothing reads the clock), so a test can regenerate the file from the
//! committed bundles and compare.

use super::error::ClaimsError;
use super::evidence::{bundle_vars, published_vars, replicates_var, workloads_ran, Evidence};
use super::per_kernel::{check_claims, check_over_scales_per_kernel};
use super::render::{counted_note, post_claims};
use super::verdict::ClaimVerdict;
use super::words::num;
use crate::analysis::tiers::counts_line;
use crate::analysis::tiers::{scale_differences, substitutions, Tier};
use crate::spec::claim::KERNEL_AXIS;
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

/// One table row of a verdict; `tier` replaces its tier when two reruns are combined.
fn row(v: &ClaimVerdict, tier: &str, reason: &str) -> String {
    format!(
        "| **{}**: {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        cell(&v.name()),
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

/// Bundles in order, grouped: consecutive bundles of one experiment and profile, run
/// with the same `--set` values apart from the scale check's variable (a bundle with
/// other settings, `runs=1` or one matrix value, is not a rerun of one without them).
fn groups<'a>(bundles: &'a [Bundle], source: &ClaimsSource) -> Vec<Vec<&'a Bundle>> {
    let mut out: Vec<Vec<&Bundle>> = Vec::new();
    for b in bundles {
        match out.last_mut() {
            Some(g) if rerun_key(g[0], source) == rerun_key(b, source) => g.push(b),
            _ => out.push(vec![b]),
        }
    }
    out
}

/// What bundles of one group share: the experiment, the profile and the `--set` values
/// other than the scale check's variable and the replicate count (as the claims'
/// experiment names them: today's file with `--claims-from`, else the bundle's copy).
/// The replicate count is how much evidence a run gathers, not what it measures: a
/// rerun or another scale with more replicates reads with the rest, and each row's
/// unit says how many replicates a side it had.
fn rerun_key(
    b: &Bundle,
    source: &ClaimsSource,
) -> (
    String,
    Option<String>,
    serde_json::Map<String, serde_json::Value>,
) {
    let m = b.manifest();
    let exp = match source {
        ClaimsSource::Dir(dir) => {
            crate::spec::Experiment::load(dir.join(format!("{}.yaml", m.experiment.id))).ok()
        }
        ClaimsSource::Bundle => {
            crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml").ok()
        }
    };
    let mut sets = m.overrides.clone();
    if let Some(exp) = exp {
        if let Some(v) = exp.def.scale_check.as_ref().map(|s| s.var.clone()) {
            sets.remove(&v);
        }
        if let Some(v) = replicates_var(&exp) {
            sets.remove(&v);
        }
    }
    (m.experiment.id.clone(), m.profile.clone(), sets)
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

/// What a bundle is checked with: the claims from `source`, the experiment's scale
/// check, the bundle's evidence, and a line saying where the claims come from.
struct Checked {
    claims: Vec<crate::spec::Claim>,
    scale_check: Option<crate::spec::claim::ScaleCheck>,
    ev: Evidence,
    line: String,
}

fn checked(b: &Bundle, source: &ClaimsSource) -> Result<Checked, ClaimsError> {
    let m = b.manifest();
    let ev = Evidence::from_bundle(b)?;
    match source {
        ClaimsSource::Bundle => {
            let exp = crate::spec::Experiment::from_str_named(
                &m.experiment.yaml,
                &b.path().join("experiment.yaml").display().to_string(),
            )?;
            Ok(Checked {
                claims: exp.def.claims,
                scale_check: exp.def.scale_check,
                ev,
                line: "- claims: the bundle's own copy of the experiment".to_string(),
            })
        }
        ClaimsSource::Dir(dir) => {
            let path = dir.join(format!("{}.yaml", m.experiment.id));
            let exp = crate::spec::Experiment::load(&path)?;
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
            // Today's claims are judged at today's idea of the scale.
            let mut ev = ev;
            ev.scale = exp.def.scale;
            Ok(Checked {
                claims: exp.def.claims,
                scale_check: exp.def.scale_check,
                ev,
                line,
            })
        }
    }
}

/// One section of the document: a bundle, maybe its rerun, maybe other scales.
struct Section<'a> {
    /// The bundle whose environment heads the section (the largest scale).
    main: &'a Bundle,
    rerun: Option<&'a Bundle>,
    /// In a series over scales, the bundle that `rerun` reruns (at its own scale), when it
    /// is not `main`: the series is checked once with each.
    rerun_of: Option<&'a Bundle>,
    /// Other scales of a scale check: (`var=value`, bundle), smallest first.
    scales: Vec<(String, &'a Bundle)>,
    verdicts: Vec<ClaimVerdict>,
    agreed: Option<Vec<super::agree::Agreement>>,
    claims_line: String,
    scale_var: Option<String>,
}

/// A group of bundles of one experiment and profile as sections: with a scale check and
/// several values of its variable, one section checked over the scales (a rerun at one
/// scale gives a second series to agree with); else bundles two by two (a bundle and
/// its rerun).
fn sections<'a>(
    group: &[&'a Bundle],
    source: &ClaimsSource,
) -> Result<Vec<Section<'a>>, ClaimsError> {
    let checked: Vec<Checked> = group
        .iter()
        .map(|b| checked(b, source))
        .collect::<Result<_, _>>()?;
    let var = checked[0].scale_check.as_ref().map(|s| s.var.clone());
    if let Some(var) = var {
        // Scale value → indices of the bundles at it, smallest scale first.
        let mut at: Vec<(f64, Vec<usize>)> = Vec::new();
        for (i, c) in checked.iter().enumerate() {
            let Some(x) = super::scale::scale_of(&c.ev, &var) else {
                continue;
            };
            match at.iter_mut().find(|(y, _)| *y == x) {
                Some((_, v)) => v.push(i),
                None => at.push((x, vec![i])),
            }
        }
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        if at.len() > 1 {
            let firsts: Vec<usize> = at.iter().map(|(_, v)| v[0]).collect();
            let series = |idx: &[usize]| -> Vec<ClaimVerdict> {
                let evs: Vec<&Evidence> = idx.iter().map(|&i| &checked[i].ev).collect();
                checked[idx[idx.len() - 1]]
                    .claims
                    .iter()
                    .filter(|c| !c.draft)
                    .flat_map(|c| check_over_scales_per_kernel(c, &var, &evs))
                    .collect()
            };
            let verdicts = series(&firsts);
            let rerun_at = at.iter().position(|(_, v)| v.len() > 1);
            let agreed = rerun_at.map(|k| {
                let mut other = firsts.clone();
                other[k] = at[k].1[1];
                super::agree::agreement(&verdicts, &series(&other))
            });
            let top = *firsts.last().expect("two scales or more");
            return Ok(vec![Section {
                main: group[top],
                rerun: rerun_at.map(|k| group[at[k].1[1]]),
                rerun_of: rerun_at
                    .map(|k| at[k].1[0])
                    .filter(|&i| i != top)
                    .map(|i| group[i]),
                scales: firsts[..firsts.len() - 1]
                    .iter()
                    .map(|&i| {
                        (
                            format!(
                                "{var}={}",
                                super::scale::scale_of(&checked[i].ev, &var)
                                    .map_or_else(|| "?".into(), num)
                            ),
                            group[i],
                        )
                    })
                    .collect(),
                verdicts,
                agreed,
                claims_line: checked[top].line.clone(),
                scale_var: Some(var),
            }]);
        }
    }
    let mut out = Vec::new();
    for pair in (0..group.len()).collect::<Vec<_>>().chunks(2) {
        let a = &checked[pair[0]];
        let verdicts = check_claims(&a.claims, &a.ev);
        let agreed = pair.get(1).map(|&j| {
            super::agree::agreement(&verdicts, &check_claims(&checked[j].claims, &checked[j].ev))
        });
        out.push(Section {
            main: group[pair[0]],
            rerun: pair.get(1).map(|&j| group[j]),
            rerun_of: None,
            scales: Vec::new(),
            verdicts,
            agreed,
            claims_line: a.line.clone(),
            scale_var: None,
        });
    }
    Ok(out)
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
    let mut split = false;
    let mut sections_n = 0;
    for group in groups(bundles, source) {
        for sec in sections(&group, source)? {
            sections_n += 1;
            let b = sec.main;
            let rerun = sec.rerun;
            let m = b.manifest();
            let verdicts = sec.verdicts;
            let agreed = sec.agreed;
            let claims_line = sec.claims_line;
            let scale_word = |bundle: &Bundle| -> String {
                sec.scale_var.as_ref().map_or_else(String::new, |var| {
                    bundle_vars(bundle.manifest())
                        .get(var)
                        .map(|v| format!(" ({var}={})", v.label()))
                        .unwrap_or_default()
                })
            };
            out.push_str(&format!(
            "\n## {} — {}\n\nBundle: `{}`{}{}{}\n\n",
            m.experiment.id,
            m.experiment.title,
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
            out.push_str(&claims_line);
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
                match agreed
                    .as_ref()
                    .and_then(|g| g.iter().find(|a| a.id == v.id && a.kernel == v.kernel))
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
            out.push_str(&format!(
                "\n{}{}\n\n",
                counts_line(&tiers),
                counted_note(&verdicts)
            ));
            split |= verdicts.iter().any(|v| v.kernel.is_some());
            out.push_str(HEADER);
            for v in post_claims(&verdicts) {
                let (_, label, reason) = tier_of(v);
                out.push_str(&row(v, &label, &reason));
            }
            let variants: Vec<&ClaimVerdict> = verdicts.iter().filter(|v| v.variant).collect();
            if !variants.is_empty() {
                out.push_str(
                    "\nfslab's own variants (no quote from the post; not counted above):\n\n",
                );
                out.push_str(HEADER);
                for v in variants {
                    let (_, label, reason) = tier_of(v);
                    out.push_str(&row(v, &label, &reason));
                }
            }
        }
    }
    let mut ids: Vec<&str> = bundles
        .iter()
        .map(|b| b.manifest().experiment.id.as_str())
        .collect();
    let sections = sections_n;
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
    Ok(out)
}

/// An environment line with no trailing spaces.
fn cell_line(s: &str) -> String {
    s.trim_end().to_string()
}
