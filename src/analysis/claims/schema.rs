//! How each kind of check is stated and measured (its schema is [`crate::spec::claim`]).

use super::error::MeasureError;
use super::evidence::{Evidence, Measure};
use super::measure::{
    measure_first_vs_rest, measure_flat, measure_layout, measure_ratio, published_first_vs_rest,
    published_flat, published_layout, published_ratio,
};
use super::words::num;
use crate::spec::claim::{Check, Expect, FlatStatistic, Selection};
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
pub(super) struct Stated<'a> {
    pub(super) expect: &'a Expect,
    pub(super) at_scale: &'a IndexMap<String, f64>,
    pub(super) unit: &'a str,
    pub(super) note: Option<&'a str>,
}

impl Check {
    pub(super) fn stated(&self) -> Stated<'_> {
        let (expect, at_scale, unit, note) = match self {
            Check::Ratio(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::FirstVsRest(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::Flat(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::Layout(c) => (
                &c.expect,
                &c.at_scale,
                "discontiguous block pairs / block pairs",
                &c.note,
            ),
            Check::IoSummary(c) => (&c.expect, &c.at_scale, c.unit(), &c.note),
            Check::GapShare(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
        };
        Stated {
            expect,
            at_scale,
            unit,
            note: note.as_deref(),
        }
    }

    /// The same check over another selection (its `select` replaced), for a contrast;
    /// None for kinds without a `select`.
    pub(super) fn with_select(&self, sel: Selection) -> Option<Check> {
        let mut c = self.clone();
        match &mut c {
            Check::FirstVsRest(x) => x.select = sel,
            Check::Flat(x) => x.select = sel,
            Check::Layout(x) => x.select = sel,
            Check::IoSummary(x) if x.select.is_some() => x.select = Some(sel),
            _ => return None,
        }
        Some(c)
    }

    /// The value in this bundle.
    pub(super) fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError> {
        match self {
            Check::Ratio(c) => measure_ratio(c, ev),
            Check::FirstVsRest(c) => measure_first_vs_rest(c, ev),
            Check::Flat(c) if c.statistic == FlatStatistic::LogSlope => {
                super::slope::measure_log_slope(c, ev)
            }
            Check::Flat(c) => measure_flat(c, ev),
            Check::Layout(c) => measure_layout(c, ev),
            Check::IoSummary(c) => super::io::measure_io_summary(c, ev),
            Check::GapShare(c) => super::share::measure_gap_share(c, ev),
        }
    }

    /// The same value from the post's numbers, when the check says where they are.
    pub(super) fn published(&self, ev: &Evidence) -> Option<Result<f64, MeasureError>> {
        match self {
            Check::Ratio(c) => c.published.as_ref().map(|p| published_ratio(p, ev)),
            Check::FirstVsRest(c) => c
                .published
                .as_ref()
                .map(|p| published_first_vs_rest(p, &c.expect, ev)),
            Check::Flat(c) => c
                .published
                .as_ref()
                .map(|p| published_flat(p, c.statistic, ev)),
            Check::Layout(c) => c
                .published
                .as_ref()
                .map(|p| published_layout(p, &c.expect, ev)),
            // The posts give block traces as pictures, not numbers.
            Check::IoSummary(_) => None,
            // No post gives per-part times of both sides.
            Check::GapShare(_) => None,
        }
    }
}
