//! Parameterised notebooks, with papermill's conventions: the code cell tagged
//! `parameters` holds the defaults as Rust `let` bindings; a run inserts after it a cell
//! tagged `injected-parameters` whose `let`s shadow them with the given values, typed
//! from the defaults. Pure: text in, text out (running the notebook is
//! `run::jupyter`'s).
//!
//! A parameter is one line `let NAME: TYPE = DEFAULT;` (the type may be left out when
//! the default's literal says it). Types understood: strings (`&str`, `String`),
//! integers (`i64`, `u32`, `usize`, …), floats (`f64`, `f32`), `bool`, `Option<T>` of
//! those, and lists (`Vec<T>`, `&[T]`). A given value is read as that type: `none` (or
//! `null`, `None`) for an `Option`, a YAML list (`[1, 2]`) or a comma-separated one for
//! a list, the text itself for a string.

use serde_json::{json, Value};
use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum IpynbError {
    #[error("not a Jupyter notebook: {0}")]
    NotANotebook(String),
    #[error("the notebook has no code cell tagged `parameters` (tag the cell that holds the defaults, as papermill expects)")]
    NoParametersCell,
    #[error("parameters cell, line {line}: `{text}`: {message}")]
    BadDefault {
        line: usize,
        text: String,
        message: String,
    },
    #[error("-p {name}: the notebook has no such parameter; its parameters: {known}")]
    UnknownParameter { name: String, known: String },
    #[error("-p {name} {value}: {message}")]
    BadValue {
        name: String,
        value: String,
        message: String,
    },
}

/// The type of a parameter, as declared or as its default says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamType {
    /// `&str` or `String` (the flag says which, for the literal).
    Str {
        owned: bool,
    },
    /// `i64`, `usize`, … (the Rust name).
    Int(String),
    Float(String),
    Bool,
    Option(Box<ParamType>),
    /// `Vec<T>` (`slice`: `&[T]`).
    List {
        item: Box<ParamType>,
        slice: bool,
    },
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Str { owned: false } => f.write_str("&str"),
            ParamType::Str { owned: true } => f.write_str("String"),
            ParamType::Int(t) | ParamType::Float(t) => f.write_str(t),
            ParamType::Bool => f.write_str("bool"),
            ParamType::Option(t) => write!(f, "Option<{t}>"),
            ParamType::List { item, slice: false } => write!(f, "Vec<{item}>"),
            ParamType::List { item, slice: true } => write!(f, "&[{item}]"),
        }
    }
}

/// One parameter of the `parameters` cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
    /// The default as written.
    pub default: String,
}

fn parse_type(t: &str) -> Option<ParamType> {
    let t = t.trim();
    if let Some(inner) = t.strip_prefix("Option<").and_then(|r| r.strip_suffix('>')) {
        return parse_type(inner).map(|i| ParamType::Option(Box::new(i)));
    }
    if let Some(inner) = t.strip_prefix("Vec<").and_then(|r| r.strip_suffix('>')) {
        return parse_type(inner).map(|i| ParamType::List {
            item: Box::new(i),
            slice: false,
        });
    }
    if let Some(inner) = t.strip_prefix("&[").and_then(|r| r.strip_suffix(']')) {
        return parse_type(inner).map(|i| ParamType::List {
            item: Box::new(i),
            slice: true,
        });
    }
    match t {
        "&str" | "&'static str" => Some(ParamType::Str { owned: false }),
        "String" => Some(ParamType::Str { owned: true }),
        "bool" => Some(ParamType::Bool),
        "f64" | "f32" => Some(ParamType::Float(t.to_string())),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => Some(ParamType::Int(t.to_string())),
        _ => None,
    }
}

/// The type a default's literal says, when no type is written.
fn type_of_literal(v: &str) -> Option<ParamType> {
    let v = v.trim();
    if v.starts_with('"') {
        Some(ParamType::Str { owned: false })
    } else if v == "true" || v == "false" {
        Some(ParamType::Bool)
    } else if v.parse::<i64>().is_ok() {
        Some(ParamType::Int("i64".into()))
    } else if v.parse::<f64>().is_ok() {
        Some(ParamType::Float("f64".into()))
    } else {
        None
    }
}

fn source_of(cell: &Value) -> String {
    match &cell["source"] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn has_tag(cell: &Value, tag: &str) -> bool {
    cell["metadata"]["tags"]
        .as_array()
        .is_some_and(|t| t.iter().any(|x| x.as_str() == Some(tag)))
}

/// A notebook to parameterise.
#[derive(Debug, Clone)]
pub struct Notebook {
    doc: Value,
}

impl Notebook {
    pub fn parse(text: &str) -> Result<Notebook, IpynbError> {
        let doc: Value =
            serde_json::from_str(text).map_err(|e| IpynbError::NotANotebook(e.to_string()))?;
        if !doc["cells"].is_array() {
            return Err(IpynbError::NotANotebook("it has no `cells` list".into()));
        }
        Ok(Notebook { doc })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.doc).unwrap_or_default() + "\n"
    }

    fn cells(&self) -> &Vec<Value> {
        static EMPTY: Vec<Value> = Vec::new();
        self.doc["cells"].as_array().unwrap_or(&EMPTY)
    }

    fn parameters_index(&self) -> Option<usize> {
        self.cells()
            .iter()
            .position(|c| c["cell_type"] == "code" && has_tag(c, "parameters"))
    }

    /// The parameters and their defaults.
    pub fn parameters(&self) -> Result<Vec<Param>, IpynbError> {
        let i = self
            .parameters_index()
            .ok_or(IpynbError::NoParametersCell)?;
        let src = source_of(&self.cells()[i]);
        let mut out = Vec::new();
        for (n, line) in src.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with("//") {
                continue;
            }
            let bad = |message: &str| IpynbError::BadDefault {
                line: n + 1,
                text: t.to_string(),
                message: message.into(),
            };
            let Some(rest) = t.strip_prefix("let ") else {
                return Err(bad(
                    "a parameters cell holds only `let NAME: TYPE = DEFAULT;` lines",
                ));
            };
            let rest = rest.trim_start_matches("mut ").trim();
            let rest = rest
                .strip_suffix(';')
                .ok_or_else(|| bad("missing `;` at the end"))?;
            let (lhs, default) = rest
                .split_once('=')
                .ok_or_else(|| bad("missing `= DEFAULT`"))?;
            let (name, ty) = match lhs.split_once(':') {
                Some((n, t)) => (
                    n.trim(),
                    parse_type(t).ok_or_else(|| {
                        bad("unknown type: use &str, String, an integer or float type, bool, Option<T> or Vec<T>")
                    })?,
                ),
                None => (
                    lhs.trim(),
                    type_of_literal(default)
                        .ok_or_else(|| bad("write the type: `let NAME: TYPE = …;`"))?,
                ),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(bad("not a plain variable name"));
            }
            out.push(Param {
                name: name.to_string(),
                ty,
                default: default.trim().to_string(),
            });
        }
        Ok(out)
    }

    /// Insert (or replace) the `injected-parameters` cell after the `parameters` cell,
    /// binding each given `(name, value)`. Names must be parameters.
    pub fn inject(&mut self, values: &[(String, String)]) -> Result<(), IpynbError> {
        let params = self.parameters()?;
        let mut lines = vec!["// Parameters given to this run".to_string()];
        for (name, value) in values {
            let Some(p) = params.iter().find(|p| &p.name == name) else {
                return Err(IpynbError::UnknownParameter {
                    name: name.clone(),
                    known: params
                        .iter()
                        .map(|p| format!("{} ({})", p.name, p.ty))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            let lit = literal(&p.ty, value).map_err(|e| IpynbError::BadValue {
                name: name.clone(),
                value: value.clone(),
                message: e.to_string(),
            })?;
            lines.push(format!("let {}: {} = {lit};", p.name, p.ty));
        }
        let at = self
            .parameters_index()
            .ok_or(IpynbError::NoParametersCell)?;
        let cell = json!({
            "cell_type": "code",
            "execution_count": null,
            "metadata": { "tags": ["injected-parameters"] },
            "outputs": [],
            "source": lines.join("\n"),
        });
        let cells = self.doc["cells"].as_array_mut().expect("checked in parse");
        if cells
            .get(at + 1)
            .is_some_and(|c| has_tag(c, "injected-parameters"))
        {
            cells[at + 1] = cell;
        } else {
            cells.insert(at + 1, cell);
        }
        Ok(())
    }

    /// The first error output of an executed notebook: (1-based number among code
    /// cells, error name, message). Text on stderr counts (error name `stderr`): that is
    /// how evcxr reports an error a cell returns.
    pub fn first_error(&self) -> Option<(usize, String, String)> {
        self.cells()
            .iter()
            .filter(|c| c["cell_type"] == "code")
            .enumerate()
            .find_map(|(i, c)| {
                c["outputs"].as_array()?.iter().find_map(|o| {
                    // evcxr reports an error that a cell returns through `?` on stderr,
                    // not as an error output: a cell that writes to stderr failed.
                    if o["output_type"] == "stream" && o["name"] == "stderr" {
                        let text = match &o["text"] {
                            Value::Array(parts) => {
                                parts.iter().filter_map(Value::as_str).collect::<String>()
                            }
                            other => other.as_str().unwrap_or_default().to_string(),
                        };
                        if !text.trim().is_empty() {
                            return Some((i + 1, "stderr".to_string(), text.trim().to_string()));
                        }
                    }
                    (o["output_type"] == "error").then(|| {
                        let tb: Vec<String> = o["traceback"]
                            .as_array()
                            .map(|t| t.iter().filter_map(Value::as_str).map(strip_ansi).collect())
                            .unwrap_or_default();
                        let msg = match o["evalue"].as_str() {
                            Some(v) if !v.trim().is_empty() => v.to_string(),
                            _ => tb.join("\n"),
                        };
                        (
                            i + 1,
                            o["ename"].as_str().unwrap_or("Error").to_string(),
                            msg,
                        )
                    })
                })
            })
    }
}

/// How long one code cell took to execute, from the timestamps nbclient records in
/// the executed notebook (`metadata.execution`: from `iopub.status.busy` to
/// `shell.execute_reply`, i.e. evcxr's compiling and running it).
#[derive(Debug, Clone, PartialEq)]
pub struct CellTime {
    /// 1-based among the code cells, as [`Notebook::first_error`] counts.
    pub cell: usize,
    pub seconds: f64,
    /// The cell's first non-empty source line.
    pub first_line: String,
}

fn timestamp(v: &Value) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(v.as_str()?).ok()
}

impl Notebook {
    /// The execution time of each code cell that has nbclient's timestamps (cells that
    /// did not run, e.g. after an error, have none and are left out).
    pub fn cell_times(&self) -> Vec<CellTime> {
        self.cells()
            .iter()
            .filter(|c| c["cell_type"] == "code")
            .enumerate()
            .filter_map(|(i, c)| {
                let e = &c["metadata"]["execution"];
                let busy = timestamp(&e["iopub.status.busy"])?;
                let reply = timestamp(&e["shell.execute_reply"])?;
                let first_line = source_of(c)
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or_default()
                    .to_string();
                Some(CellTime {
                    cell: i + 1,
                    seconds: (reply - busy).num_microseconds()? as f64 / 1e6,
                    first_line,
                })
            })
            .collect()
    }
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Why a command-line value is not a literal of the parameter's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum LiteralError {
    #[error("negative, and {0} is unsigned")]
    NegativeUnsigned(String),
    #[error("not an integer ({0})")]
    NotInteger(String),
    #[error("not a finite number ({0})")]
    NotFinite(String),
    #[error("not a boolean (true or false)")]
    NotBool,
    #[error("not a list: {0}")]
    NotList(String),
}

/// A Rust literal of type `ty` for the command-line text `v`.
fn literal(ty: &ParamType, v: &str) -> Result<String, LiteralError> {
    match ty {
        ParamType::Str { owned } => {
            let q = format!("{v:?}");
            Ok(if *owned {
                format!("{q}.to_string()")
            } else {
                q
            })
        }
        ParamType::Int(t) => match v.trim().parse::<i128>() {
            Ok(n) if n < 0 && t.starts_with('u') => Err(LiteralError::NegativeUnsigned(t.clone())),
            Ok(n) => Ok(format!("{n}{t}")),
            Err(_) => Err(LiteralError::NotInteger(t.clone())),
        },
        ParamType::Float(t) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(|x| format!("{x:?}{t}"))
            .ok_or_else(|| LiteralError::NotFinite(t.clone())),
        ParamType::Bool => match v.trim() {
            "true" | "yes" | "1" => Ok("true".into()),
            "false" | "no" | "0" => Ok("false".into()),
            _ => Err(LiteralError::NotBool),
        },
        ParamType::Option(inner) => match v.trim() {
            "none" | "None" | "null" | "~" => Ok("None".into()),
            _ => literal(inner, v).map(|l| format!("Some({l})")),
        },
        ParamType::List { item, slice } => {
            let t = v.trim();
            let items: Vec<String> = if t.starts_with('[') {
                let parsed: serde_yaml::Value =
                    serde_yaml::from_str(t).map_err(|e| LiteralError::NotList(e.to_string()))?;
                parsed
                    .as_sequence()
                    .ok_or_else(|| LiteralError::NotList(format!("`{t}` is not a sequence")))?
                    .iter()
                    .map(|x| match x {
                        serde_yaml::Value::String(s) => s.clone(),
                        other => serde_yaml::to_string(other)
                            .unwrap_or_default()
                            .trim()
                            .to_string(),
                    })
                    .collect()
            } else if t.is_empty() {
                Vec::new()
            } else {
                t.split(',').map(|s| s.trim().to_string()).collect()
            };
            let lits = items
                .iter()
                .map(|x| literal(item, x))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if *slice {
                format!("&[{}]", lits.join(", "))
            } else {
                format!("vec![{}]", lits.join(", "))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nb(params: &str) -> Notebook {
        Notebook::parse(
            &json!({
                "nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [
                    {"cell_type": "markdown", "metadata": {}, "source": "# t"},
                    {"cell_type": "code", "metadata": {"tags": ["parameters"]},
                     "execution_count": null, "outputs": [], "source": params},
                    {"cell_type": "code", "metadata": {}, "execution_count": null,
                     "outputs": [], "source": "bundle_dir"}
                ]
            })
            .to_string(),
        )
        .unwrap()
    }

    #[test]
    fn cell_times_come_from_nbclients_timestamps() {
        let done = Notebook::parse(
            &json!({
                "nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [
                    {"cell_type": "markdown", "metadata": {}, "source": "# t"},
                    {"cell_type": "code", "outputs": [], "source": "\n:dep x\n",
                     "metadata": {"execution": {
                        "iopub.status.busy": "2026-12-01T07:00:00.250000Z",
                        "iopub.execute_input": "2026-12-01T07:00:00.260000Z",
                        "shell.execute_reply": "2026-12-01T07:00:01.750000Z"}}},
                    {"cell_type": "code", "outputs": [], "source": ["let a = 1;\n", "a"],
                     "metadata": {"execution": {
                        "iopub.status.busy": "2026-12-01T07:00:01.800000+00:00",
                        "shell.execute_reply": "2026-12-01T07:00:04.050000+00:00"}}},
                    {"cell_type": "code", "outputs": [], "source": "never ran", "metadata": {}}
                ]
            })
            .to_string(),
        )
        .unwrap();
        let t = done.cell_times();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].cell, t[0].first_line.as_str()), (1, ":dep x"));
        assert!((t[0].seconds - 1.5).abs() < 1e-9, "{t:?}");
        assert_eq!((t[1].cell, t[1].first_line.as_str()), (2, "let a = 1;"));
        assert!((t[1].seconds - 2.25).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn values_are_typed_from_the_defaults() {
        let mut n = nb("// defaults\nlet bundle_dir: Option<&str> = None;\nlet runs = 3;\nlet scale: f64 = 1.5;\nlet quick: bool = true;\nlet fs: Vec<String> = vec![];\nlet name = \"x\";\n");
        let p = n.parameters().unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[1].ty, ParamType::Int("i64".into()));
        let v = |a: &str, b: &str| (a.to_string(), b.to_string());
        n.inject(&[
            v("bundle_dir", "/r/x \"q\""),
            v("runs", "5"),
            v("scale", "2"),
            v("quick", "false"),
            v("fs", "[ext4, xfs]"),
            v("name", "y"),
        ])
        .unwrap();
        let cells = n.cells();
        assert_eq!(cells.len(), 4);
        assert!(has_tag(&cells[2], "injected-parameters"));
        let src = source_of(&cells[2]);
        assert!(
            src.contains(r#"let bundle_dir: Option<&str> = Some("/r/x \"q\"");"#),
            "{src}"
        );
        assert!(src.contains("let runs: i64 = 5i64;"), "{src}");
        assert!(src.contains("let scale: f64 = 2.0f64;"), "{src}");
        assert!(src.contains("let quick: bool = false;"), "{src}");
        assert!(
            src.contains(r#"let fs: Vec<String> = vec!["ext4".to_string(), "xfs".to_string()];"#),
            "{src}"
        );
        // Injecting again replaces the cell (papermill does the same).
        n.inject(&[v("bundle_dir", "none")]).unwrap();
        assert_eq!(n.cells().len(), 4);
        assert!(source_of(&n.cells()[2]).contains("= None;"));
    }

    #[test]
    fn mistakes_are_named() {
        let mut n = nb("let runs: u32 = 3;\n");
        let e = n
            .inject(&[("run".into(), "4".into())])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no such parameter") && e.contains("runs (u32)"),
            "{e}"
        );
        let e = n
            .inject(&[("runs".into(), "many".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an integer (u32)"), "{e}");
        let e = nb("println!(\"x\");\n")
            .parameters()
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
        let plain =
            Notebook::parse(r#"{"cells": [{"cell_type": "code", "metadata": {}, "source": "1"}]}"#)
                .unwrap();
        assert!(matches!(
            plain.parameters(),
            Err(IpynbError::NoParametersCell)
        ));
    }

    #[test]
    fn an_error_printed_on_stderr_is_the_cell_s_error() {
        let nb = Notebook::parse(
            r#"{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "x"},
            {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "a",
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["fine\n"]}]},
            {"cell_type": "code", "metadata": {}, "execution_count": 2, "source": "b",
             "outputs": [{"output_type": "stream", "name": "stderr", "text": ["the input frame ", "has no column `x`\n"]}]}
            ]}"#,
        )
        .unwrap();
        assert_eq!(
            nb.first_error(),
            Some((
                2,
                "stderr".to_string(),
                "the input frame has no column `x`".to_string()
            ))
        );
    }
}
