//! Splitting a plan's points across machines (`fslab run --shard K/N`).
//!
//! The split is round-robin over the plan's point order: point index `i` (0-based, the
//! order `fslab plan` prints) belongs to shard `i mod N + 1`. So shard sizes differ by at
//! most one point, the split depends only on the plan's point list (not on the machine,
//! the time or a random seed), and every machine computes the same one. A point is never
//! split: its iterations are compared with each other and must share hardware, so they all
//! run on the machine of its shard.
//!
//! Pure: no I/O.

use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// One share of a plan: shard `k` of `n` (1-based, `1 <= k <= n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    k: usize,
    n: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("`{given}` is not a shard: write K/N with whole numbers, e.g. `1/4` (shard 1 of 4)")]
    Syntax { given: String },
    #[error("`{given}`: the number of shards must be at least 1")]
    NoShards { given: String },
    #[error("`{given}`: shards are numbered 1 to {n}, so K must be in 1..={n}")]
    OutOfRange { given: String, n: usize },
}

impl Shard {
    /// Shard `k` of `n`; None unless `1 <= k <= n`.
    pub fn new(k: usize, n: usize) -> Option<Shard> {
        (n >= 1 && (1..=n).contains(&k)).then_some(Shard { k, n })
    }

    /// 1-based number of this shard.
    pub fn k(&self) -> usize {
        self.k
    }

    /// How many shards there are.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether the point with 0-based plan index `index` runs in this shard.
    pub fn owns(&self, index: usize) -> bool {
        shard_of(index, self.n) == self.k
    }

    /// The 0-based plan indices of this shard's points, out of `points`.
    pub fn indices(&self, points: usize) -> Vec<usize> {
        (0..points).filter(|&i| self.owns(i)).collect()
    }
}

/// The shard (1-based) that runs the point with 0-based plan index `index` when the
/// plan is split `n` ways. `n` must be at least 1.
pub fn shard_of(index: usize, n: usize) -> usize {
    index % n.max(1) + 1
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax {
            given: s.to_string(),
        };
        let (k, n) = s.trim().split_once('/').ok_or_else(syntax)?;
        let k: usize = k.trim().parse().map_err(|_| syntax())?;
        let n: usize = n.trim().parse().map_err(|_| syntax())?;
        if n == 0 {
            return Err(ShardError::NoShards {
                given: s.to_string(),
            });
        }
        Shard::new(k, n).ok_or(ShardError::OutOfRange {
            given: s.to_string(),
            n,
        })
    }
}

/// A fingerprint of a plan's point list: the sha256 (hex) of the point ids, each followed
/// by a newline, in plan order. Shards of one plan carry the same hash; merging checks it.
pub fn plan_hash<'a>(point_ids: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for id in point_ids {
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_refuses_the_rest_clearly() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!((s.k(), s.n(), s.to_string()), (2, 3, "2/3".to_string()));
        assert_eq!(
            " 1 / 1 ".parse::<Shard>().unwrap(),
            Shard::new(1, 1).unwrap()
        );
        for bad in ["", "2", "a/b", "1/", "/2", "-1/2", "1/2/3"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(matches!(e, ShardError::Syntax { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("K/N"), "{e}");
        }
        assert!(matches!(
            "1/0".parse::<Shard>(),
            Err(ShardError::NoShards { .. })
        ));
        for bad in ["0/2", "3/2"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(matches!(e, ShardError::OutOfRange { n: 2, .. }), "{e}");
            assert!(e.to_string().contains("1..=2"), "{e}");
        }
    }

    #[test]
    fn every_point_is_in_exactly_one_shard_and_shards_are_balanced() {
        for points in 0..20 {
            for n in 1..8 {
                let mut seen = vec![0; points];
                let mut sizes = Vec::new();
                for k in 1..=n {
                    let idx = Shard::new(k, n).unwrap().indices(points);
                    sizes.push(idx.len());
                    for i in idx {
                        seen[i] += 1;
                    }
                }
                assert!(seen.iter().all(|&c| c == 1), "{points} points, {n} shards");
                let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
                assert!(hi.unwrap() - lo.unwrap() <= 1, "{sizes:?}");
            }
        }
        // The documented rule: round-robin in plan order.
        assert_eq!(Shard::new(1, 2).unwrap().indices(5), [0, 2, 4]);
        assert_eq!(Shard::new(2, 2).unwrap().indices(5), [1, 3]);
        assert_eq!(shard_of(7, 3), 2);
    }

    #[test]
    fn the_plan_hash_depends_on_ids_and_their_order() {
        let a = plan_hash(["fs=ext4", "fs=xfs"]);
        assert_eq!(a, plan_hash(["fs=ext4", "fs=xfs"]));
        assert_ne!(a, plan_hash(["fs=xfs", "fs=ext4"]));
        assert_ne!(a, plan_hash(["fs=ext4"]));
        // Not fooled by ids that concatenate alike.
        assert_ne!(plan_hash(["ab", "c"]), plan_hash(["a", "bc"]));
        assert_eq!(a.len(), 64);
    }
}
