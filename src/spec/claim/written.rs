//! A claim's `check:` as written and as read: read once, when the claim is
//! deserialised, so that nothing after load parses it again or drops its error.

use super::{parse_check, Check, CheckError};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The `check:` of a claim: the YAML as written (what is serialised back, and what
/// located errors point into) and the [`Check`] read from it. An experiment that loads
/// has every check read (`Experiment::load` refuses one that is not, at its key).
#[derive(Debug, Clone)]
pub struct CheckSpec {
    raw: serde_yaml::Value,
    read: Option<Check>,
}

impl CheckSpec {
    /// Read `raw`; the error is the reason it is not a check.
    pub fn new(raw: serde_yaml::Value) -> Result<CheckSpec, CheckError> {
        let read = parse_check(&raw)?;
        Ok(CheckSpec {
            raw,
            read: Some(read),
        })
    }

    /// The YAML as written.
    pub fn raw(&self) -> &serde_yaml::Value {
        &self.raw
    }

    /// The check, when the YAML reads as one (always, in an experiment that loaded).
    pub fn read(&self) -> Option<&Check> {
        self.read.as_ref()
    }

    /// Why the YAML is not a check (None when it is one).
    pub fn error(&self) -> Option<CheckError> {
        match self.read {
            Some(_) => None,
            None => parse_check(&self.raw).err(),
        }
    }
}

impl<'de> Deserialize<'de> for CheckSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = serde_yaml::Value::deserialize(d)?;
        // A check that does not read is kept as written: validation reports it at its
        // key, with the file's line and column, which serde's error here could not.
        let read = parse_check(&raw).ok();
        Ok(CheckSpec { raw, read })
    }
}

impl Serialize for CheckSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(s)
    }
}
