//! A point's steps, resolved once: which steps of each phase apply to it (their `when:`
//! matched against its values), and what its workload reads around each iteration.

use crate::plan::{Phase, Plan, Point};
use crate::spec::media::Counters;
use crate::spec::Step;

/// The steps of one point, by phase.
pub(super) struct PointSteps<'a> {
    pub(super) setup: Vec<&'a Step>,
    pub(super) before_each: Vec<&'a Step>,
    pub(super) workload: Option<&'a Step>,
    pub(super) capture: Vec<&'a Step>,
    pub(super) teardown: Vec<&'a Step>,
}

impl<'a> PointSteps<'a> {
    pub(super) fn new(plan: &'a Plan, point: &Point) -> PointSteps<'a> {
        PointSteps {
            setup: plan.steps(point, Phase::Setup),
            before_each: plan.steps(point, Phase::BeforeEach),
            workload: plan.steps(point, Phase::Workload).first().copied(),
            capture: plan.steps(point, Phase::Capture),
            teardown: plan.steps(point, Phase::Teardown),
        }
    }

    /// The workload's `counters:`.
    pub(super) fn counters(&self) -> Option<&'a Counters> {
        self.workload.and_then(|w| w.counters.as_ref())
    }
}
