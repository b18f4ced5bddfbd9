//! What `fslab reply` shows, gathered once (as [`super::content`] does for the report),
//! so that [`super::reply`] only renders: the claim verdicts
//! ([`crate::analysis::claims::check_bundle`], as `fslab claims BUNDLE`), the comparison
//! with a base bundle ([`crate::analysis::compare_runs`], as `fslab compare BASE BUNDLE`)
//! once per metric the claims read, the two reruns' agreement
//! ([`crate::analysis::claims::agreement`]), the substitutions, the scale against the
//! published profile, and the bundle's content hash ([`crate::store::content_hash`]).

use crate::analysis::claims::{agreement, check_bundle, published_differences};
use crate::analysis::tiers::{substitutions, Substitution, VarDifference};
use crate::analysis::{
    compare_runs, recorded_warmup, AnalysisError, CompareOptions, Comparison, Warmup,
    DEFAULT_THRESHOLD_PCT,
};
use crate::spec::{Experiment, PostMedium};
use crate::store::{content_hash, Bundle, ContentHash, Manifest, StoreError};
use polars::prelude::{DataFrame, DataType};
use sha2::{Digest, Sha256};
use std::path::Path;

pub use crate::analysis::claims::{Agreement, ClaimVerdict};

#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
}

/// The claims of the bundle's experiment, checked on the bundle.
#[derive(Debug, Clone)]
pub enum ClaimsSaid {
    /// The experiment states no claims (drafts do not count).
    None,
    /// It has claims, but they could not be checked: why.
    Unchecked(String),
    /// One verdict per claim (per claim and kernel over a `kernel` axis).
    Checked(Vec<ClaimVerdict>),
}

/// The comparison with a base bundle.
#[derive(Debug, Clone)]
pub struct ReplyTable {
    /// The base bundle as named on the command line.
    pub base: String,
    /// One comparison per metric, base → this bundle.
    pub comparisons: Vec<Comparison>,
    /// The metrics asked for that either runs table lacks.
    pub missing_metrics: Vec<String>,
    /// The base is a rerun of the same experiment and profile: the post's claims in both,
    /// this bundle's against the base's.
    pub agreement: Option<Vec<Agreement>>,
}

/// The post a reply answers, as read from its mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostRef {
    /// Its `Message-ID` header, as written (`<…@…>`).
    MessageId(String),
    /// The mail has no `Message-ID` header: none is made up.
    NoMessageId {
        /// The mail file as named on the command line.
        file: String,
    },
}

/// Whether the experiment file the bundle names is today what the bundle ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExperimentNow {
    /// The file (relative to the current directory) has the bundle's sha256.
    Same,
    /// The file is there, with other contents.
    Differs,
    /// No such file from here, or the bundle names none.
    Absent,
}

/// Everything a reply shows.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The bundle as named on the command line.
    pub bundle: String,
    pub manifest: Manifest,
    pub claims: ClaimsSaid,
    pub table: Option<ReplyTable>,
    /// What differs from the `published` profile (empty: nothing); None without one.
    pub scale: Option<Vec<VarDifference>>,
    /// Every substitution of the bundle (`analysis::tiers::substitutions`).
    pub substitutions: Vec<Substitution>,
    /// The storage the post measured on, when the experiment's `source:` says.
    pub post_medium: Option<PostMedium>,
    pub experiment_now: ExperimentNow,
    pub hash: ContentHash,
    pub post: Option<PostRef>,
}

/// What to compare, and how (the defaults are `fslab compare`'s).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyOptions {
    /// The runs columns of the table; empty: the ones the claims read (`wall_s` when
    /// they read none).
    pub metrics: Vec<String>,
    /// Leading iterations of each replicate left out as warm-up; None: the one the runs
    /// recorded, else 1.
    pub warmup: Option<usize>,
    pub alpha: f64,
    pub threshold_pct: f64,
}

impl Default for ReplyOptions {
    fn default() -> Self {
        ReplyOptions {
            metrics: Vec::new(),
            warmup: None,
            alpha: 0.05,
            threshold_pct: DEFAULT_THRESHOLD_PCT,
        }
    }
}

/// The runs columns the bundle's claims read, in claim order (`wall_s` when none).
fn claim_metrics(m: &Manifest) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Ok(exp) = Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml") {
        for c in exp.def.claims.iter().filter(|c| !c.draft) {
            let Some(check) = c.check.as_ref().and_then(|spec| spec.read()) else {
                continue;
            };
            if let Some(metric) = check.runs_metric() {
                if !out.iter().any(|x| x == metric) {
                    out.push(metric.to_string());
                }
            }
        }
    }
    if out.is_empty() {
        out.push("wall_s".to_string());
    }
    out
}

fn numeric_column(df: &DataFrame, name: &str) -> bool {
    df.column(name).is_ok_and(|c| {
        matches!(
            c.dtype(),
            DataType::Float64 | DataType::Float32 | DataType::Int64 | DataType::Int32
        )
    })
}

fn experiment_now(m: &Manifest) -> ExperimentNow {
    let Some(file) = m.experiment.file.as_deref() else {
        return ExperimentNow::Absent;
    };
    match std::fs::read(Path::new(file)) {
        Ok(bytes) if hex::encode(Sha256::digest(&bytes)) == m.experiment.sha256 => {
            ExperimentNow::Same
        }
        Ok(_) => ExperimentNow::Differs,
        Err(_) => ExperimentNow::Absent,
    }
}

fn claims_said(b: &Bundle) -> ClaimsSaid {
    match check_bundle(b) {
        Ok(v) if v.is_empty() => ClaimsSaid::None,
        Ok(v) => ClaimsSaid::Checked(v),
        Err(e) => ClaimsSaid::Unchecked(e.to_string()),
    }
}

/// Gather a reply for `bundle` (named `name` on the command line), compared with `base`
/// when given.
pub fn gather(
    bundle: &Bundle,
    name: &str,
    base: Option<(&Bundle, &str)>,
    post: Option<PostRef>,
    opts: &ReplyOptions,
) -> Result<Reply, ReplyError> {
    let m = bundle.manifest();
    let claims = claims_said(bundle);
    let table = match base {
        None => None,
        Some((b, base_name)) => Some(table(bundle, b, base_name, &claims, opts)?),
    };
    let post_medium = Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml")
        .ok()
        .and_then(|e| e.def.source.iter().find_map(|s| s.medium));
    Ok(Reply {
        bundle: name.to_string(),
        manifest: m.clone(),
        claims,
        table,
        scale: published_differences(m),
        substitutions: substitutions(m),
        post_medium,
        experiment_now: experiment_now(m),
        hash: content_hash(bundle.path())?,
        post,
    })
}

fn table(
    new: &Bundle,
    base: &Bundle,
    base_name: &str,
    claims: &ClaimsSaid,
    opts: &ReplyOptions,
) -> Result<ReplyTable, ReplyError> {
    let (base_runs, new_runs) = (base.runs()?, new.runs()?);
    let warmup = opts
        .warmup
        .or_else(|| recorded_warmup(new.manifest()))
        .or_else(|| recorded_warmup(base.manifest()))
        .unwrap_or(1);
    let wanted = if opts.metrics.is_empty() {
        claim_metrics(new.manifest())
    } else {
        opts.metrics.clone()
    };
    let (present, missing_metrics): (Vec<String>, Vec<String>) = wanted
        .into_iter()
        .partition(|m| numeric_column(&base_runs, m) && numeric_column(&new_runs, m));
    let mut comparisons = Vec::new();
    for metric in present {
        let o = CompareOptions {
            metric,
            warmup: Warmup::from_count(warmup),
            alpha: opts.alpha,
            threshold_pct: opts.threshold_pct,
        };
        comparisons.push(compare_runs(
            &base_runs,
            &new_runs,
            Some(base.manifest()),
            Some(new.manifest()),
            &o,
        )?);
    }
    let (bm, nm) = (base.manifest(), new.manifest());
    let rerun = bm.experiment.id == nm.experiment.id && bm.profile == nm.profile;
    let agreement = match (rerun, claims, claims_said(base)) {
        (true, ClaimsSaid::Checked(n), ClaimsSaid::Checked(b)) => Some(agreement(n, &b)),
        _ => None,
    };
    Ok(ReplyTable {
        base: base_name.to_string(),
        comparisons,
        missing_metrics,
        agreement,
    })
}
