//! `needs: { truncate_path: … }` of a claim: which path a kernel must have taken to
//! truncate inside an allocation unit (an XFS realtime extent), for every point the check
//! selects or per side of a ratio that compares two paths (`analysis::claims::path`
//! checks it against the `truncate_path` table).

use serde::{Deserialize, Serialize};

/// `needs: { truncate_path: … }`: one path for every point the check selects
/// (`truncate_path: converted`), or one per side of a ratio that compares two paths
/// (`truncate_path: { numerator: zeroed, denominator: converted }`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum TruncatePathNeeds {
    Every(TruncatePathNeed),
    Sides {
        numerator: TruncatePathNeed,
        denominator: TruncatePathNeed,
    },
}

impl TruncatePathNeeds {
    /// The path the points of the check's selection `side` (`select`, `numerator`,
    /// `denominator`, as [`Check::selections`](crate::spec::claim::Check::selections) names them) must have taken; None for a
    /// side a per-side need does not name.
    pub fn for_side(self, side: &str) -> Option<TruncatePathNeed> {
        match (self, side) {
            (TruncatePathNeeds::Every(p), _) => Some(p),
            (TruncatePathNeeds::Sides { numerator, .. }, "numerator") => Some(numerator),
            (TruncatePathNeeds::Sides { denominator, .. }, "denominator") => Some(denominator),
            (TruncatePathNeeds::Sides { .. }, _) => None,
        }
    }
}

impl<'de> Deserialize<'de> for TruncatePathNeeds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, IntoDeserializer, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TruncatePathNeeds;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a truncate path (`unmapped`, `kept_written`, `zeroed`, `converted`) or `{ numerator: PATH, denominator: PATH }`",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                TruncatePathNeed::deserialize(v.into_deserializer()).map(TruncatePathNeeds::Every)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let (mut numerator, mut denominator) = (None, None);
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "numerator" => numerator = Some(m.next_value()?),
                        "denominator" => denominator = Some(m.next_value()?),
                        other => {
                            return Err(de::Error::unknown_field(
                                other,
                                &["numerator", "denominator"],
                            ))
                        }
                    }
                }
                match (numerator, denominator) {
                    (Some(numerator), Some(denominator)) => Ok(TruncatePathNeeds::Sides {
                        numerator,
                        denominator,
                    }),
                    (None, _) => Err(de::Error::missing_field("numerator")),
                    (_, None) => Err(de::Error::missing_field("denominator")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `needs: { truncate_path: … }`: one of the paths `parse::truncate_path` tells apart.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TruncatePathNeed {
    /// Nothing mapped past EOF after the truncate.
    Unmapped,
    /// Written extents past EOF and no zeroing I/O: the old data stays (Linux 6.1).
    KeptWritten,
    /// Written extents past EOF and zeroing I/O on the device.
    Zeroed,
    /// The rest of the allocation unit converted to unwritten (Linux 6.12).
    Converted,
}

impl TruncatePathNeed {
    /// As the `truncate_path` column writes it.
    pub fn name(self) -> &'static str {
        match self {
            TruncatePathNeed::Unmapped => "unmapped",
            TruncatePathNeed::KeptWritten => "kept_written",
            TruncatePathNeed::Zeroed => "zeroed",
            TruncatePathNeed::Converted => "converted",
        }
    }
}

#[cfg(test)]
mod tests_needs {
    use super::{TruncatePathNeed, TruncatePathNeeds};
    use crate::spec::claim::Needs;

    #[test]
    fn a_truncate_path_need_is_one_path_or_one_per_side() {
        let one: Needs = serde_yaml::from_str("truncate_path: converted").unwrap();
        assert_eq!(
            one.truncate_path,
            Some(TruncatePathNeeds::Every(TruncatePathNeed::Converted))
        );
        let sides: Needs =
            serde_yaml::from_str("truncate_path: { numerator: zeroed, denominator: converted }")
                .unwrap();
        let sides = sides.truncate_path.unwrap();
        assert_eq!(sides.for_side("numerator"), Some(TruncatePathNeed::Zeroed));
        assert_eq!(
            sides.for_side("denominator"),
            Some(TruncatePathNeed::Converted)
        );
        assert_eq!(sides.for_side("select"), None);
        for (bad, says) in [
            ("truncate_path: zero", "unknown variant `zero`"),
            (
                "truncate_path: { numerator: zeroed }",
                "missing field `denominator`",
            ),
            (
                "truncate_path: { numerator: zeroed, denominator: converted, other: x }",
                "unknown field `other`",
            ),
            (
                "truncate_path: [zeroed]",
                "or `{ numerator: PATH, denominator: PATH }`",
            ),
        ] {
            let e = serde_yaml::from_str::<Needs>(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
