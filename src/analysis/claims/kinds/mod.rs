//! How each kind of check is measured: one file a kind, named as the kind (`ratio.rs`
//! measures `kind: ratio`), implementing [`ClaimKind`] for the kind's struct in
//! `spec::claim::kinds` (what is written). The `mod` lines and [`Check::evaluator`],
//! the dispatch, are made here from the registration list in `spec`
//! ([`claim_kinds`](crate::spec::claim::kinds::claim_kinds)): a kind registered without
//! an evaluator does not compile, and `tests_kinds` measures a claim of every kind and
//! finds every file here registered.

pub use layout::{discontiguity, Run};

use super::error::MeasureError;
use super::evidence::{Evidence, Measure};
use super::words::num;
use crate::spec::claim::kinds::claim_kinds;
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

/// Makes, from the registration list, one `mod` line a kind, [`Check::evaluator`] (the
/// one match on the kind here) and [`EVALUATED`].
macro_rules! evaluators {
    ($($module:ident: $variant:ident($check:ident)),+ $(,)?) => {
        $(mod $module;)+

        /// The kinds with an evaluator, by file name, as the list gives them.
        #[cfg(test)]
        pub(in crate::analysis::claims) const EVALUATED: [&str; [$(stringify!($module)),+].len()] =
            [$(stringify!($module)),+];

        impl Check {
            /// The kind's evaluator.
            pub(in crate::analysis::claims) fn evaluator(&self) -> &dyn ClaimKind {
                match self {
                    $(Check::$variant(c) => c),+
                }
            }
        }
    };
}

claim_kinds!(evaluators);

impl Check {
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
