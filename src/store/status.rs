//! The statuses a bundle records, as enums. On disk (manifest.json, runs.jsonl,
//! runs.parquet) they keep the strings they always had (`ok`, `failed`,
//! `other-shard` …), so bundles written before these types existed read the same.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A status string that is not one of the type's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} status {value:?} (expected one of: {expected})")]
pub struct UnknownStatus {
    pub kind: &'static str,
    pub value: String,
    pub expected: String,
}

macro_rules! status_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $kind:literal {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The string written to disk.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// Compares with the string written to disk (`status == "ok"` in tests that
        /// read a bundle as a user would); library code matches on the enum.
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl FromStr for $name {
            type Err = UnknownStatus;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownStatus {
                        kind: $kind,
                        value: s.to_string(),
                        expected: [$($text),+].join(", "),
                    }),
                }
            }
        }
    };
}

status_enum! {
    /// Where one matrix point stands (`PointRecord::status`).
    #[derive(Default)]
    PointStatus, "point" {
        /// Not run yet.
        #[default]
        Pending => "pending",
        /// Running now (or the run died while it ran).
        Running => "running",
        /// Every iteration succeeded.
        Ok => "ok",
        /// A step failed.
        Failed => "failed",
        /// A step ran past its timeout.
        Timeout => "timeout",
        /// Left out on purpose.
        Skipped => "skipped",
        /// The doctor found it cannot run here; the record's `reason` says why.
        Unsupported => "unsupported",
        /// Stopped by a signal.
        Interrupted => "interrupted",
        /// Runs in another shard of the plan (`fslab run --shard`).
        OtherShard => "other-shard",
        /// In a merged bundle: its shard was not merged (`fslab merge --partial`).
        MissingShard => "missing-shard",
    }
}

impl PointStatus {
    /// Nothing more to run for this point in this bundle: a resume leaves it alone.
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            PointStatus::Ok
                | PointStatus::Skipped
                | PointStatus::Unsupported
                | PointStatus::OtherShard
        )
    }
}

status_enum! {
    /// How one timed iteration ended (`RunRow::status`, the `status` column of
    /// `runs.parquet`).
    RunStatus, "run" {
        Ok => "ok",
        Failed => "failed",
        Timeout => "timeout",
    }
}

impl RunStatus {
    /// True when a `status` column value is `ok` (a missing value is not).
    pub fn is_ok_str(s: Option<&str>) -> bool {
        s.and_then(|s| s.parse().ok()) == Some(RunStatus::Ok)
    }
}

status_enum! {
    /// How the whole run ended (`Manifest::status`).
    #[derive(Default)]
    BundleStatus, "bundle" {
        /// Running now (or the run died).
        #[default]
        Running => "running",
        /// Every point is ok (or belongs to another shard).
        Complete => "complete",
        /// Some points failed, timed out, or were unsupported or skipped.
        Partial => "partial",
        /// Stopped by a signal.
        Interrupted => "interrupted",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_on_disk_are_unchanged() {
        for s in PointStatus::ALL {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(s.as_str().parse::<PointStatus>().unwrap(), *s);
        }
        assert_eq!(PointStatus::OtherShard.as_str(), "other-shard");
        assert_eq!(
            serde_json::from_str::<RunStatus>("\"timeout\"").unwrap(),
            RunStatus::Timeout
        );
        assert_eq!(BundleStatus::Partial.to_string(), "partial");
    }

    #[test]
    fn an_unknown_status_names_the_choices() {
        let e = "done".parse::<PointStatus>().unwrap_err();
        assert!(e.to_string().contains("\"done\""), "{e}");
        assert!(e.to_string().contains("other-shard"), "{e}");
        assert!(serde_json::from_str::<RunStatus>("\"meh\"").is_err());
        assert!(RunStatus::is_ok_str(Some("ok")));
        assert!(!RunStatus::is_ok_str(Some("failed")));
        assert!(!RunStatus::is_ok_str(None));
    }
}
