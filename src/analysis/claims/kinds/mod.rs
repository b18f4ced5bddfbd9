//! The kinds of check behind one interface: each kind is one file here, implementing
//! [`ClaimKind`] for its struct in `spec::claim` (what is written), and one arm in
//! [`Check::evaluator`] (the registration). A kind added to the schema without an
//! evaluator does not compile; `tests_kinds` measures a claim of every kind.

mod first_vs_rest;
mod flat;
mod gap_share;
mod io_summary;
mod layout;
mod ratio;

pub use layout::{discontiguity, Run};

use super::error::MeasureError;
use super::evidence::{Evidence, Measure};
use super::words::num;
use crate::spec::claim::{Check, CheckSchema, Expect, Selection};
use indexmap::IndexMap;
use std::fmt;

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (Some(a), Some(b)) => write!(f, "between {} and {}", num(a), num(b)),
            (Some(a), None) => write!(f, "≥ {}", num(a)),
            (None, Some(b)) => write!(f, "≤ {}", num(b)),
            (None, None) => f.write_str("(anything)"),
        }
    }
}

/// What every kind of check states besides how it measures.
pub(in crate::analysis::claims) struct Stated<'a> {
    pub(in crate::analysis::claims) expect: &'a Expect,
    pub(in crate::analysis::claims) at_scale: &'a IndexMap<String, f64>,
    pub(in crate::analysis::claims) unit: &'a str,
    pub(in crate::analysis::claims) note: Option<&'a str>,
}

/// How a kind of check is measured: on the bundle, and with the same recipe on the
/// post's numbers. Its written form (name, expectation, selections) is the
/// [`CheckSchema`] it extends.
pub(in crate::analysis::claims) trait ClaimKind: CheckSchema {
    /// Its expectation, scale, unit and note.
    fn stated(&self) -> Stated<'_>;

    /// The value in this bundle.
    fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError>;

    /// The same value from the post's numbers, when the check says where they are
    /// (None when it does not, or when no post gives them).
    fn published(&self, ev: &Evidence) -> Option<Result<f64, MeasureError>>;

    /// The same check over another selection (its `select` replaced), for a contrast;
    /// None for kinds without a `select`.
    fn with_select(&self, _sel: Selection) -> Option<Check> {
        None
    }
}

impl Check {
    /// The kind's evaluator: the one place a kind of check is registered for measuring.
    pub(in crate::analysis::claims) fn evaluator(&self) -> &dyn ClaimKind {
        match self {
            Check::Ratio(c) => c,
            Check::FirstVsRest(c) => c,
            Check::Flat(c) => c,
            Check::Layout(c) => c,
            Check::IoSummary(c) => c,
            Check::GapShare(c) => c,
        }
    }

    pub(in crate::analysis::claims) fn stated(&self) -> Stated<'_> {
        self.evaluator().stated()
    }

    pub(in crate::analysis::claims) fn with_select(&self, sel: Selection) -> Option<Check> {
        self.evaluator().with_select(sel)
    }

    pub(in crate::analysis::claims) fn measure(
        &self,
        ev: &Evidence,
    ) -> Result<Measure, MeasureError> {
        self.evaluator().measure(ev)
    }

    pub(in crate::analysis::claims) fn published(
        &self,
        ev: &Evidence,
    ) -> Option<Result<f64, MeasureError>> {
        self.evaluator().published(ev)
    }
}
