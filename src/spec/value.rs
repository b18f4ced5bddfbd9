use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// A variable's value: a scalar, or a list of scalars that expands to several arguments
/// when it fills a whole word (`{{opts}}` with `opts: [-n, parent=1]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
}

/// What a YAML node is, for messages.
pub(crate) fn yaml_kind(v: &serde_yaml::Value) -> &'static str {
    match v {
        serde_yaml::Value::Null => "nothing (null)",
        serde_yaml::Value::Bool(_) => "a boolean",
        serde_yaml::Value::Number(_) => "a number",
        serde_yaml::Value::String(_) => "a string",
        serde_yaml::Value::Sequence(_) => "a list",
        serde_yaml::Value::Mapping(_) => "a mapping",
        serde_yaml::Value::Tagged(_) => "a tagged value",
    }
}

/// A YAML node that is not a value (a mapping, a null, a tagged node).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a value must be a scalar (text, number, true/false) or a list of scalars, not {found}")]
pub struct NotAScalar {
    pub found: &'static str,
}

impl Value {
    /// From a YAML node: scalars and (nested) lists of scalars; anything else is
    /// an error that says what it is.
    pub(crate) fn from_yaml(v: &serde_yaml::Value) -> Result<Value, NotAScalar> {
        match v {
            serde_yaml::Value::Bool(b) => Ok(Value::Bool(*b)),
            serde_yaml::Value::Number(n) => Ok(match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            }),
            serde_yaml::Value::String(s) => Ok(Value::Str(s.clone())),
            serde_yaml::Value::Sequence(items) => items
                .iter()
                .map(Value::from_yaml)
                .collect::<Result<_, _>>()
                .map(Value::List),
            other => Err(NotAScalar {
                found: yaml_kind(other),
            }),
        }
    }

    /// The value as it appears in point ids and tables (lists joined by spaces).
    pub fn label(&self) -> String {
        match self {
            Value::List(items) => items.iter().map(Value::label).collect::<Vec<_>>().join(" "),
            other => other.to_string(),
        }
    }

    /// Parse a command-line value (`--set k=v`) as YAML, so that `3` is a number and
    /// `[a, b]` a list; anything YAML cannot read stays a string.
    pub fn from_cli(text: &str) -> Value {
        serde_yaml::from_str::<Value>(text).unwrap_or_else(|_| Value::Str(text.to_string()))
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            Value::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
            }
            Value::Str(s) => s.clone().into(),
            Value::List(_) => self.label().into(),
        }
    }

    /// JSON that keeps lists as arrays (for the manifest's overrides, read back by
    /// [`Value::from_json`] when a run is resumed).
    pub fn to_json_exact(&self) -> serde_json::Value {
        match self {
            Value::List(items) => items.iter().map(Value::to_json_exact).collect(),
            other => other.to_json(),
        }
    }

    /// The inverse of [`Value::to_json_exact`]; None for null and objects.
    pub fn from_json(v: &serde_json::Value) -> Option<Value> {
        match v {
            serde_json::Value::Bool(b) => Some(Value::Bool(*b)),
            serde_json::Value::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .or_else(|| n.as_f64().map(Value::Float)),
            serde_json::Value::String(s) => Some(Value::Str(s.clone())),
            serde_json::Value::Array(a) => a
                .iter()
                .map(Value::from_json)
                .collect::<Option<_>>()
                .map(Value::List),
            _ => None,
        }
    }

    /// Does a `when:`/`exclude:` entry match this value? A list in the condition means any of.
    pub fn matches(&self, condition: &Value) -> bool {
        match condition {
            Value::List(options) if !matches!(self, Value::List(_)) => {
                options.iter().any(|o| o.label() == self.label())
            }
            other => other.label() == self.label(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => f.write_str(s),
            Value::List(_) => f.write_str(&self.label()),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        let v = serde_yaml::Value::deserialize(d)?;
        Value::from_yaml(&v).map_err(serde::de::Error::custom)
    }
}
