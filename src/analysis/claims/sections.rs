//! The sections of a reading of several bundles (`fslab claims --md`, `--summary`): the
//! bundles grouped by experiment, profile and settings, each group checked as one
//! section (a bundle and its independent rerun, or a series over the scales of a
//! `scale_check:`), with each claim's tier as the section's bundles support it.
//!
//! Analysis only: `super::reproduction` renders the sections as Markdown and
//! `super::summary` picks, per claim, the section whose evidence decides.

use super::agree::Agreement;
use super::error::ClaimsError;
use super::evidence::{bundle_vars, replicates_var, Evidence};
use super::per_kernel::{check_claims, check_over_scales_per_kernel};
use super::verdict::ClaimVerdict;
use super::words::num;
use crate::analysis::tiers::Tier;
use crate::spec::claim::Needs;
use crate::spec::Value as SpecValue;
use crate::store::Bundle;
use indexmap::IndexMap;

/// Bundles in order, grouped: consecutive bundles of one experiment and profile, run
/// with the same `--set` values apart from the scale check's variable (a bundle with
/// other settings, `runs=1` or one matrix value, is not a rerun of one without them).
pub(super) fn groups<'a>(bundles: &'a [Bundle], source: &ClaimsSource) -> Vec<Vec<&'a Bundle>> {
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

pub(super) fn bundle_name(b: &Bundle) -> String {
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
    /// `post_reading:` of the claims' experiment.
    post_reading: Option<IndexMap<String, SpecValue>>,
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
                post_reading: exp.def.post_reading,
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
                post_reading: exp.def.post_reading,
                ev,
                line,
            })
        }
    }
}

/// Which reading of the workload a section's bundle ran (`post_reading:` of the claims'
/// experiment).
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// The bundle ran with every value `post_reading:` names: the workload as the post's
    /// own tools most likely ran it.
    Post(IndexMap<String, SpecValue>),
    /// It ran with other values (`here`: the bundle's value of each var `post_reading:`
    /// names).
    Other {
        post: IndexMap<String, SpecValue>,
        here: IndexMap<String, Option<SpecValue>>,
    },
    /// The experiment does not say which reading is the post's.
    Undeclared,
}

impl Reading {
    fn of(post: Option<&IndexMap<String, SpecValue>>, b: &Bundle) -> Reading {
        let Some(post) = post.filter(|p| !p.is_empty()) else {
            return Reading::Undeclared;
        };
        let vars = bundle_vars(b.manifest());
        let here: IndexMap<String, Option<SpecValue>> = post
            .keys()
            .map(|k| (k.clone(), vars.get(k).cloned()))
            .collect();
        let same = post
            .iter()
            .all(|(k, v)| here[k].as_ref().is_some_and(|h| h.label() == v.label()));
        if same {
            Reading::Post(post.clone())
        } else {
            Reading::Other {
                post: post.clone(),
                here,
            }
        }
    }
}

/// A claim's tier as a section's bundles support it: the verdict's own, or, with a rerun,
/// the one both reruns support.
#[derive(Debug, Clone, Copy)]
pub struct Settled<'s> {
    pub tier: Tier,
    pub tier_label: &'s str,
    /// The claim in the section's two reruns, when there is a rerun.
    pub agreement: Option<&'s Agreement>,
}

/// One section of the document: a bundle, maybe its rerun, maybe other scales.
pub struct Section<'a> {
    /// 1-based, in the order of the document.
    pub index: usize,
    /// The bundle whose environment heads the section (the largest scale).
    pub main: &'a Bundle,
    pub rerun: Option<&'a Bundle>,
    /// In a series over scales, the bundle that `rerun` reruns (at its own scale), when it
    /// is not `main`: the series is checked once with each.
    pub rerun_of: Option<&'a Bundle>,
    /// Other scales of a scale check: (`var=value`, bundle), smallest first.
    pub scales: Vec<(String, &'a Bundle)>,
    pub verdicts: Vec<ClaimVerdict>,
    pub agreed: Option<Vec<Agreement>>,
    pub claims_line: String,
    pub scale_var: Option<String>,
    /// Which reading of the workload the section's bundle ran.
    pub reading: Reading,
    /// Each checked claim's `needs:` (by claim id).
    pub needs: IndexMap<String, Needs>,
}

impl Section<'_> {
    /// The experiment the section's bundle ran.
    pub fn experiment(&self) -> &str {
        &self.main.manifest().experiment.id
    }

    /// The name of the section's bundle (its directory's).
    pub fn bundle(&self) -> String {
        bundle_name(self.main)
    }

    /// A verdict's tier as the section's bundles support it.
    pub fn settled<'s>(&'s self, v: &'s ClaimVerdict) -> Settled<'s> {
        let agreement = self
            .agreed
            .as_ref()
            .and_then(|g| g.iter().find(|a| a.id == v.id && a.kernel == v.kernel));
        match agreement {
            Some(a) => Settled {
                tier: a.tier,
                tier_label: &a.tier_label,
                agreement: Some(a),
            },
            None => Settled {
                tier: v.tier,
                tier_label: v.tier_label(),
                agreement: None,
            },
        }
    }
}

/// A group of bundles of one experiment and profile as sections: with a scale check and
/// several values of its variable, one section checked over the scales (a rerun at one
/// scale gives a second series to agree with); else bundles two by two (a bundle and
/// its rerun).
pub(super) fn sections<'a>(
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
                index: 0,
                reading: Reading::of(checked[top].post_reading.as_ref(), group[top]),
                needs: needs_of(&checked[top].claims),
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
            index: 0,
            reading: Reading::of(a.post_reading.as_ref(), group[pair[0]]),
            needs: needs_of(&a.claims),
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

/// Each claim's `needs:`, by id.
fn needs_of(claims: &[crate::spec::Claim]) -> IndexMap<String, Needs> {
    claims
        .iter()
        .filter_map(|c| Some((c.id.clone(), c.needs.clone()?)))
        .collect()
}

/// The sections of these bundles, in the order given, numbered from 1.
pub fn analyse<'a>(
    bundles: &'a [Bundle],
    source: &ClaimsSource,
) -> Result<Vec<Section<'a>>, ClaimsError> {
    let mut out = Vec::new();
    for group in groups(bundles, source) {
        for mut sec in sections(&group, source)? {
            sec.index = out.len() + 1;
            out.push(sec);
        }
    }
    Ok(out)
}
