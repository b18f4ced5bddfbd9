//! The order a run took its (point, replicate) pairs in, as `manifest.json` records it
//! (`run_order`). The runner draws the order (see `run::order`); the store keeps it, and
//! each pair's status and times as they happen, so that a reader can line the runs up
//! with the host's drift and a resume can finish what remains in the same order.

use super::PointStatus;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the runner orders the (point, replicate) pairs of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOrder {
    /// Randomised blocks: block r holds the r-th replicate of every point, in a random
    /// permutation drawn from the recorded seed; the blocks run in order. So drift of
    /// the host falls on every point alike instead of on the points that ran last.
    #[default]
    Random,
    /// Point by point in plan order, each point's replicates back to back (the order
    /// before randomisation; for debugging a point).
    Fixed,
}

impl RunOrder {
    /// Every value, in declaration order.
    pub const ALL: &'static [RunOrder] = &[RunOrder::Random, RunOrder::Fixed];

    /// The word on the command line and in `manifest.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOrder::Random => "random",
            RunOrder::Fixed => "fixed",
        }
    }
}

impl fmt::Display for RunOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not a [`RunOrder`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a run order: write `random` (randomised blocks of replicates, the default) or `fixed` (point by point)")]
pub struct UnknownOrder {
    pub given: String,
}

impl FromStr for RunOrder {
    type Err = UnknownOrder;
    fn from_str(s: &str) -> Result<RunOrder, UnknownOrder> {
        RunOrder::ALL
            .iter()
            .copied()
            .find(|o| o.as_str() == s.trim())
            .ok_or_else(|| UnknownOrder {
                given: s.to_string(),
            })
    }
}

/// The order of a run (`manifest.json`'s `run_order`): how it was drawn and every
/// (point, replicate) pair in the order it runs, with where each stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOrderRecord {
    pub order: RunOrder,
    /// The seed the random order was drawn from (`fslab run --seed N` draws it again);
    /// None for the fixed order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Every pair the bundle runs (the points of other shards and points the preflight
    /// found unsupported have none), in run order.
    pub pairs: Vec<OrderEntry>,
}

/// One (point, replicate) pair of the run order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrderEntry {
    pub point_index: usize,
    pub point_id: String,
    /// From 1.
    pub replicate: u32,
    /// `pending`, `running`, then how the replicate ended: `ok`, `failed`, `timeout`,
    /// `interrupted`, or `skipped` (an earlier replicate of the point failed, or
    /// `--fail-fast` stopped the run) with a `reason`.
    pub status: PointStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Timed iterations the replicate ran.
    #[serde(default)]
    pub iterations: u32,
    /// When its setup started and when its teardown ended (UTC, RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

impl RunOrderRecord {
    /// The pairs of one point, in run order.
    pub fn of_point(&self, point_index: usize) -> impl Iterator<Item = &OrderEntry> {
        self.pairs
            .iter()
            .filter(move |e| e.point_index == point_index)
    }

    /// The mean wall time of one (point, replicate) pair that ended ok, setup to
    /// teardown; None when no such pair recorded its times.
    pub fn mean_ok_pair_seconds(&self) -> Option<f64> {
        let at = |t: &Option<String>| chrono::DateTime::parse_from_rfc3339(t.as_deref()?).ok();
        let secs: Vec<f64> = self
            .pairs
            .iter()
            .filter(|e| e.status == PointStatus::Ok)
            .filter_map(|e| {
                let s =
                    (at(&e.finished_at)? - at(&e.started_at)?).num_milliseconds() as f64 / 1000.0;
                (s >= 0.0).then_some(s)
            })
            .collect();
        (!secs.is_empty()).then(|| secs.iter().sum::<f64>() / secs.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::{OrderEntry, RunOrder, RunOrderRecord};
    use crate::store::PointStatus;

    #[test]
    fn the_mean_pair_time_counts_pairs_that_ended_ok() {
        let pair = |status, a: &str, b: &str| OrderEntry {
            status,
            started_at: Some(a.into()),
            finished_at: Some(b.into()),
            ..OrderEntry::default()
        };
        let mut r = RunOrderRecord {
            order: RunOrder::Random,
            seed: None,
            pairs: vec![
                pair(
                    PointStatus::Ok,
                    "2026-12-04T10:00:00Z",
                    "2026-12-04T10:00:02Z",
                ),
                pair(
                    PointStatus::Ok,
                    "2026-12-04T10:00:02Z",
                    "2026-12-04T10:00:06Z",
                ),
                pair(
                    PointStatus::Failed,
                    "2026-12-04T10:00:06Z",
                    "2026-12-04T10:01:06Z",
                ),
            ],
        };
        assert_eq!(r.mean_ok_pair_seconds(), Some(3.0));
        r.pairs.truncate(0);
        assert_eq!(r.mean_ok_pair_seconds(), None);
    }

    #[test]
    fn the_order_reads_and_writes_as_words() {
        for o in RunOrder::ALL {
            assert_eq!(o.as_str().parse::<RunOrder>().unwrap(), *o);
            assert_eq!(
                serde_json::to_string(o).unwrap(),
                format!("\"{}\"", o.as_str())
            );
        }
        let e = "shuffled".parse::<RunOrder>().unwrap_err();
        assert!(e.to_string().contains("`fixed`"), "{e}");
        let r = RunOrderRecord {
            order: RunOrder::Random,
            seed: Some(7),
            pairs: vec![OrderEntry {
                point_index: 1,
                point_id: "fs=xfs".into(),
                replicate: 2,
                status: PointStatus::Ok,
                ..OrderEntry::default()
            }],
        };
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"status\":\"ok\""), "{json}");
        assert_eq!(serde_json::from_str::<RunOrderRecord>(&json).unwrap(), r);
    }
}
