//! `trace: io` on a step: a block trace of the point's devices around the step, stored as
//! `io.parquet` (one row per request) and `io_summary.parquet` (one row per traced step and
//! iteration), keyed like every parsed table (experiment, point, iteration, capture).
//!
//! Times are seconds from the moment tracing was switched on, just before the step's
//! first command started.

use super::target::{IoTrace, Session};
use super::StepError;
use crate::devices::trace::TraceText;
use crate::parse::block_trace::{self, IoSummary};
use crate::spec::Step;
use std::time::Duration;

/// A finished trace waiting to be stored.
pub(super) struct Captured {
    text: TraceText,
    wall: Duration,
}

/// Start tracing if the step asks for it.
pub(super) fn start<'s>(
    step: &Step,
    session: &'s dyn Session,
) -> Result<Option<Box<dyn IoTrace + 's>>, StepError> {
    step.trace.map(|kind| session.start_trace(kind)).transpose()
}

pub(super) fn finish(trace: Box<dyn IoTrace + '_>, wall: Duration) -> Result<Captured, StepError> {
    let text = trace.finish()?;
    Ok(Captured { text, wall })
}

/// The `io` and `io_summary` frames of a capture, and the parser's warnings.
pub(super) fn frames(
    c: &Captured,
) -> Result<
    (
        polars::prelude::DataFrame,
        polars::prelude::DataFrame,
        Vec<String>,
    ),
    StepError,
> {
    let out = block_trace::parse(&c.text.text, c.text.start_mono);
    let warnings = out
        .warnings
        .iter()
        .map(|w| format!("io trace: line {}: {}", w.line, w.reason))
        .collect();
    let summary = IoSummary::from_rows(&out.rows, c.wall.as_secs_f64());
    let io = crate::frames::from_records(&out.rows)?;
    let summary = crate::frames::from_records(&[summary])?;
    Ok((io, summary, warnings))
}
