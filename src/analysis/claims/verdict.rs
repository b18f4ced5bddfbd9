//! Verdicts: the evidence a bundle offers and how one claim is decided on it.

use super::*;

/// The outcome of checking one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Reproduced,
    NotReproduced,
    NotApplicable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::NotReproduced => "not reproduced",
            Verdict::NotApplicable => "not applicable",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One claim's verdict, with the numbers side by side.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimVerdict {
    pub id: String,
    pub text: String,
    pub kind: String,
    pub verdict: Verdict,
    /// The number measured in the bundle (also when not applicable, if it exists).
    pub measured: Option<f64>,
    /// The same number computed from the published data.
    pub published: Option<f64>,
    /// What the claim expects of the number, e.g. `≤ 1.1`.
    pub expected: String,
    pub unit: String,
    /// Why this verdict, in words.
    pub reason: String,
    /// Per-point values and other particulars.
    pub details: Vec<String>,
    /// The tier a reviewer accepts (see [`super::tiers`]): it needs the whole 95 %
    /// interval on one side of `expect`, enough samples, and names every substitution.
    pub tier: Tier,
    /// Why this tier.
    pub tier_reason: String,
    /// The measured number's 95 % interval, when there is one.
    pub interval: Option<Interval>,
    /// Why the measured number has no interval, when it has none (`interval` is then
    /// None): never silently absent.
    pub no_interval: Option<String>,
    /// What ran differently from the post (stand-in workload, ext3 on the ext4 driver,
    /// another medium).
    pub substitutions: Vec<String>,
}

/// Loads a published dataset by name (`"000"`, `"001-dir-blocks"` …).
pub type PublishedLoader = Box<dyn Fn(&str) -> Result<DataFrame, crate::published::PublishedError>>;

/// Everything a verdict is computed from.
pub struct Evidence {
    pub manifest: Manifest,
    /// Tables by name (`runs`, `extents`, `fsck`, …).
    pub tables: BTreeMap<String, DataFrame>,
    /// The scalar variables the bundle ran with (after profile and `--set`).
    pub vars: IndexMap<String, SpecValue>,
    pub published: PublishedLoader,
}

impl fmt::Debug for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Evidence")
            .field("experiment", &self.manifest.experiment.id)
            .field("tables", &self.tables.keys().collect::<Vec<_>>())
            .field("vars", &self.vars)
            .finish_non_exhaustive()
    }
}

impl Evidence {
    /// Read every table of a bundle; published data from `data/published/`.
    pub fn from_bundle(b: &Bundle) -> Result<Evidence, ClaimsError> {
        let mut tables = BTreeMap::new();
        for name in b.tables()? {
            let df = if name == "runs" {
                b.runs()?
            } else {
                b.table(&name)?
            };
            tables.insert(name, df);
        }
        let manifest = b.manifest().clone();
        let vars = bundle_vars(&manifest);
        Ok(Evidence {
            manifest,
            tables,
            vars,
            published: Box::new(crate::published::load),
        })
    }
}

/// The scalar vars of the bundle's experiment after its profile and overrides.
pub(super) fn bundle_vars(m: &Manifest) -> IndexMap<String, SpecValue> {
    let Ok(exp) = crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml")
    else {
        return IndexMap::new();
    };
    let def = exp.def;
    let mut vars = def.vars.clone();
    if let Some(p) = m.profile.as_ref().and_then(|p| def.profiles.get(p)) {
        for (k, v) in p {
            if let Some(slot) = vars.get_mut(k) {
                *slot = v.clone();
            }
        }
    }
    for (k, v) in &m.overrides {
        if let Some(slot) = vars.get_mut(k) {
            if let Ok(val) = serde_json::from_value::<SpecValue>(v.clone()) {
                *slot = val;
            }
        }
    }
    vars
}

/// The scalar vars of the bundle's experiment under its `published` profile (None when it
/// has none, or the experiment cannot be read).
pub(super) fn published_vars(m: &Manifest) -> Option<IndexMap<String, SpecValue>> {
    let exp =
        crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml").ok()?;
    let def = exp.def;
    let profile = def.profiles.get("published")?;
    let mut vars = def.vars.clone();
    for (k, v) in profile {
        if let Some(slot) = vars.get_mut(k) {
            *slot = v.clone();
        }
    }
    Some(vars)
}

/// Check every claim of the bundle's experiment (as embedded in the bundle).
pub fn check_bundle(b: &Bundle) -> Result<Vec<ClaimVerdict>, ClaimsError> {
    let exp = crate::spec::Experiment::from_str_named(
        &b.manifest().experiment.yaml,
        &b.path().join("experiment.yaml").display().to_string(),
    )?;
    let ev = Evidence::from_bundle(b)?;
    Ok(check_claims(&exp.def.claims, &ev))
}

/// [`check_bundle`] as a DataFrame (see [`verdicts_frame`]).
pub fn claims_frame(b: &Bundle) -> Result<DataFrame, ClaimsError> {
    Ok(verdicts_frame(&check_bundle(b)?)?)
}

/// The count of claims per tier of a bundle, as a DataFrame (see [`tier_counts_frame`]).
pub fn claims_tier_counts(b: &Bundle) -> Result<DataFrame, ClaimsError> {
    Ok(tier_counts_frame(&check_bundle(b)?)?)
}

pub fn check_claims(claims: &[Claim], ev: &Evidence) -> Vec<ClaimVerdict> {
    claims.iter().map(|c| check_claim(c, ev)).collect()
}

/// What a check computes before the verdict.
pub(super) struct Measure {
    pub(super) value: f64,
    pub(super) details: Vec<String>,
    /// The 95 % interval (or why there is none), the samples per side and the fewest
    /// allowed; None: this kind of check computes no interval yet.
    pub(super) interval: Option<MeasuredInterval>,
    /// Selected points that are missing, failed or have no ok rows for the selection.
    pub(super) incomplete: Vec<String>,
}

/// A measure's 95 % interval (or why there is none), samples per side, fewest allowed.
pub(super) type MeasuredInterval = (Result<Interval, NoInterval>, (usize, usize), usize);

/// Check one claim.
pub fn check_claim(claim: &Claim, ev: &Evidence) -> ClaimVerdict {
    let mut v = ClaimVerdict {
        id: claim.id.clone(),
        text: claim.text.clone(),
        kind: String::new(),
        verdict: Verdict::NotApplicable,
        measured: None,
        published: None,
        expected: String::new(),
        unit: String::new(),
        reason: String::new(),
        details: Vec::new(),
        tier: Tier::NotApplicable,
        tier_reason: String::new(),
        interval: None,
        no_interval: None,
        substitutions: Vec::new(),
    };
    let Some(raw) = &claim.check else {
        v.reason = "the claim has no `check:`; it is not checked".into();
        v.tier_reason = v.reason.clone();
        return v;
    };
    let check: Check = match parse_check(raw) {
        Ok(c) => c,
        Err(e) => {
            v.reason = format!("its `check:` cannot be read: {e}");
            v.tier_reason = v.reason.clone();
            return v;
        }
    };
    v.kind = check.kind().to_string();
    let Stated {
        expect,
        at_scale,
        unit,
        note,
    } = check.stated();
    let (measured, published) = (check.measure(ev), check.published(ev));
    v.expected = expect.to_string();
    v.unit = unit.to_string();
    let mut extra: Vec<String> = Vec::new();
    match published {
        Some(Ok(p)) => v.published = Some(p),
        Some(Err(e)) => extra.push(format!("published value unavailable: {e}")),
        None => {}
    }
    let scale = scale_gap(at_scale, &ev.vars);
    let subs = substitutions(&ev.manifest);
    v.substitutions = subs.iter().map(|s| s.what.clone()).collect();
    for (name, t) in &ev.manifest.tools {
        if let Some(si) = &t.stand_in {
            extra.push(format!(
                "stand-in workload used: {name} ran as `{}` ({si})",
                t.command.replace("{{fslab}}", "fslab")
            ));
        }
    }
    if let Some(n) = note {
        extra.push(n.to_string());
    }
    if let Some(why) = &claim.not_measured {
        // The published number is still shown; the bundle's, if any, only for reference.
        let mut r = format!("not measured here: {why}");
        match &measured {
            Ok(m) => {
                v.measured = Some(m.value);
                v.details = m.details.clone();
                r.push_str(&format!(
                    "; this bundle's {} is {} (not the claim's quantity)",
                    check.kind(),
                    num(m.value)
                ));
            }
            Err(e) => r.push_str(&format!("; and in this bundle: {e}")),
        }
        v.no_interval = Some("not measured here".into());
        v.verdict = Verdict::NotApplicable;
        v.tier = Tier::NotApplicable;
        v.tier_reason = r.clone();
        v.reason = r;
        for e in extra {
            v.reason.push_str("; ");
            v.reason.push_str(&e);
        }
        return v;
    }
    match measured {
        Err(why) => {
            v.verdict = Verdict::NotApplicable;
            v.tier_reason = why.to_string();
            v.reason = why.to_string();
        }
        Ok(m) => {
            v.measured = Some(m.value);
            v.details = m.details;
            // Every variable away from the published profile is named; only a variable
            // below the claim's `at_scale` makes it not applicable.
            let differs = published_vars(&ev.manifest)
                .map(|p| scale_differences(&ev.vars, &p))
                .unwrap_or_default();
            match &m.interval {
                Some((Ok(i), _, _)) => v.interval = Some(*i),
                Some((Err(e), _, _)) => v.no_interval = Some(e.to_string()),
                None => {
                    v.no_interval = Some(format!(
                        "no 95 % interval is computed for `{}` checks",
                        check.kind()
                    ))
                }
            }
            (v.tier, v.tier_reason) = match (&scale, &m.interval) {
                (Some(gap), _) => (Tier::NotApplicable, format!("scale differs: {gap}")),
                (None, _) if !m.incomplete.is_empty() => (
                    Tier::Inconclusive,
                    format!("incomplete: {}", m.incomplete.join("; ")),
                ),
                (None, Some((Err(NoInterval::DeterministicLayout), samples, min))) => {
                    decide_point(expect, m.value, *samples, *min, &subs)
                }
                (None, Some((interval, samples, min))) => {
                    decide(expect, interval, *samples, *min, &subs)
                }
                (None, None) => (
                    Tier::Inconclusive,
                    format!("no 95 % interval is computed for `{}` checks yet, so a point estimate cannot decide", check.kind()),
                ),
            };
            if scale.is_none() && !differs.is_empty() {
                v.tier_reason.push_str(&format!(
                    "; ran at another scale than the published profile (at or above the claim's `at_scale`): {}",
                    differs.join(", ")
                ));
            }
            if let Some(gap) = scale {
                v.verdict = Verdict::NotApplicable;
                v.reason = format!(
                    "scale differs: {gap}; measured {} here only for reference",
                    num(m.value)
                );
            } else if expect.holds(m.value) {
                v.verdict = Verdict::Reproduced;
                v.reason = format!("measured {} is {expect}", num(m.value));
            } else {
                v.verdict = Verdict::NotReproduced;
                v.reason = format!("measured {}, expected {expect}", num(m.value));
            }
        }
    }
    for e in extra {
        v.reason.push_str("; ");
        v.reason.push_str(&e);
    }
    v
}

/// Why the bundle is not at the claim's scale (None when it is).
pub(super) fn scale_gap(
    at_scale: &IndexMap<String, f64>,
    vars: &IndexMap<String, SpecValue>,
) -> Option<String> {
    let mut gaps = Vec::new();
    for (k, want) in at_scale {
        let have = vars.get(k).and_then(|v| match v {
            SpecValue::Int(i) => Some(*i as f64),
            SpecValue::Float(f) => Some(*f),
            SpecValue::Str(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        });
        match have {
            Some(h) if h >= *want => {}
            Some(h) => gaps.push(format!(
                "{k}={} here, at least {} for this claim (`at_scale`)",
                num(h),
                num(*want)
            )),
            None => gaps.push(format!(
                "cannot tell `{k}` of this bundle (at least {} for this claim)",
                num(*want)
            )),
        }
    }
    (!gaps.is_empty()).then(|| gaps.join(", "))
}
