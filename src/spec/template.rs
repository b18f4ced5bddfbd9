//! `{{name}}` substitution into command words.
//!
//! Substitution happens on words after the command line has been split, so a value is
//! never re-parsed: `1; touch /tmp/pwned` stays one argument. No shell ever runs.
//!
//! An integer can be formatted: `{{i:02x}}` (two hex digits, zero-padded), `{{i:x}}`,
//! `{{i:X}}`, `{{i:4d}}` (space-padded), `{{i:04d}}`. The format is `[0][width](d|x|X)`.

use super::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    Var(String),
    /// `{{name:spec}}`: an integer formatted by `spec` (`02x`, `x`, `X`, `4d`, `04d`).
    Formatted {
        name: String,
        spec: IntFormat,
    },
}

/// How `{{name:spec}}` formats an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntFormat {
    pub zero_pad: bool,
    pub width: usize,
    /// `d`, `x` or `X`.
    pub radix: char,
}

impl IntFormat {
    fn parse(spec: &str) -> Option<IntFormat> {
        let radix = spec.chars().last()?;
        if !matches!(radix, 'd' | 'x' | 'X') {
            return None;
        }
        let digits = &spec[..spec.len() - 1];
        let zero_pad = digits.starts_with('0') && digits.len() > 1;
        let width = if digits.is_empty() {
            0
        } else {
            digits.parse::<usize>().ok().filter(|w| *w <= 64)?
        };
        Some(IntFormat {
            zero_pad,
            width,
            radix,
        })
    }

    pub fn apply(&self, n: i64) -> String {
        let (sign, abs) = if n < 0 {
            ("-", n.unsigned_abs())
        } else {
            ("", n.unsigned_abs())
        };
        let digits = match self.radix {
            'x' => format!("{abs:x}"),
            'X' => format!("{abs:X}"),
            _ => abs.to_string(),
        };
        let body = format!("{sign}{digits}");
        if body.len() >= self.width {
            body
        } else if self.zero_pad {
            format!("{sign}{}{digits}", "0".repeat(self.width - body.len()))
        } else {
            format!("{}{body}", " ".repeat(self.width - body.len()))
        }
    }
}

/// A template that does not parse, or does not render with the values at hand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("`{{{{` without a closing `}}}}` in `{raw}`")]
    Unclosed { at: usize, raw: String },
    #[error(
        "`{{{{{inner}}}}}` is not a variable name (a name is letters, digits, `_`, `-` and `.`)"
    )]
    BadName { at: usize, inner: String },
    #[error(
        "`{{{{{inner}}}}}`: `{format}` is not an integer format; write e.g. `02x`, `x`, `04d`"
    )]
    BadFormat {
        at: usize,
        inner: String,
        format: String,
    },
    #[error("`{{{{{name}}}}}` has no value here")]
    NoValue { name: String },
    #[error("`{{{{{name}}}}}` is a list and can only stand as a whole word, not inside `{raw}`")]
    ListInsideWord { name: String, raw: String },
    #[error("`{{{{{name}}}}}` is `{value}`, not an integer, in `{raw}`")]
    NotAnInteger {
        name: String,
        value: String,
        raw: String,
    },
}

impl TemplateError {
    /// For a parse error: the byte offset of the `{{` at fault.
    pub fn at(&self) -> Option<usize> {
        match self {
            TemplateError::Unclosed { at, .. }
            | TemplateError::BadName { at, .. }
            | TemplateError::BadFormat { at, .. } => Some(*at),
            _ => None,
        }
    }
}

/// One command word with its `{{name}}` references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub raw: String,
    pub pieces: Vec<Piece>,
}

impl Template {
    /// Parse a word; an error gives the byte offset in `raw` of the `{{` at fault
    /// ([`TemplateError::at`]).
    pub fn parse(raw: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut rest = raw;
        while let Some(start) = rest.find("{{") {
            let at = raw.len() - rest.len() + start;
            if start > 0 {
                pieces.push(Piece::Lit(rest[..start].to_string()));
            }
            let after = &rest[start + 2..];
            let end = after.find("}}").ok_or_else(|| TemplateError::Unclosed {
                at,
                raw: raw.to_string(),
            })?;
            let inner = after[..end].trim();
            let (name, spec) = match inner.split_once(':') {
                Some((n, f)) => (n.trim(), Some(f.trim())),
                None => (inner, None),
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
            {
                return Err(TemplateError::BadName {
                    at,
                    inner: after[..end].to_string(),
                });
            }
            match spec {
                None => pieces.push(Piece::Var(name.to_string())),
                Some(f) => {
                    let spec = IntFormat::parse(f).ok_or_else(|| TemplateError::BadFormat {
                        at,
                        inner: inner.to_string(),
                        format: f.to_string(),
                    })?;
                    pieces.push(Piece::Formatted {
                        name: name.to_string(),
                        spec,
                    });
                }
            }
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Lit(rest.to_string()));
        }
        Ok(Template {
            raw: raw.to_string(),
            pieces,
        })
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Var(n) | Piece::Formatted { name: n, .. } => Some(n.as_str()),
            Piece::Lit(_) => None,
        })
    }

    /// The word when it has no references.
    pub fn literal(&self) -> Option<String> {
        match self.pieces.as_slice() {
            [] => Some(String::new()),
            [Piece::Lit(s)] => Some(s.clone()),
            _ => None,
        }
    }

    /// The literal text before the first reference, when the word starts with text.
    pub fn literal_prefix(&self) -> Option<String> {
        match self.pieces.first() {
            Some(Piece::Lit(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// Substitute. A word that is exactly one reference to a list becomes one argument
    /// per item (none for an empty list); every other word stays exactly one argument.
    pub fn render(
        &self,
        lookup: &dyn Fn(&str) -> Option<Value>,
    ) -> Result<Vec<String>, TemplateError> {
        let no_value = |name: &str| TemplateError::NoValue {
            name: name.to_string(),
        };
        if let [Piece::Var(name)] = self.pieces.as_slice() {
            let v = lookup(name).ok_or_else(|| no_value(name))?;
            return Ok(match v {
                Value::List(items) => items.iter().map(Value::label).collect(),
                other => vec![other.to_string()],
            });
        }
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => out.push_str(s),
                Piece::Var(name) => {
                    let v = lookup(name).ok_or_else(|| no_value(name))?;
                    if let Value::List(_) = v {
                        return Err(TemplateError::ListInsideWord {
                            name: name.clone(),
                            raw: self.raw.clone(),
                        });
                    }
                    out.push_str(&v.to_string());
                }
                Piece::Formatted { name, spec } => {
                    let v = lookup(name).ok_or_else(|| no_value(name))?;
                    let not_int = |value: String| TemplateError::NotAnInteger {
                        name: name.clone(),
                        value,
                        raw: self.raw.clone(),
                    };
                    let n = match &v {
                        Value::Int(i) => *i,
                        Value::Str(s) => s.trim().parse::<i64>().map_err(|_| not_int(s.clone()))?,
                        other => return Err(not_int(other.label())),
                    };
                    out.push_str(&spec.apply(n));
                }
            }
        }
        Ok(vec![out])
    }

    /// Substitute what `lookup` knows and leave other references as `{{name}}`.
    pub fn render_partial(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Vec<String> {
        let keep = |name: &str| {
            Some(lookup(name).unwrap_or_else(|| Value::Str(format!("{{{{{name}}}}}"))))
        };
        self.render(&keep)
            .unwrap_or_else(|_| vec![self.raw.clone()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(name: &str) -> Option<Value> {
        match name {
            "fs" => Some(Value::Str("xfs".into())),
            "evil" => Some(Value::Str("1; touch /tmp/pwned".into())),
            "opts" => Some(Value::List(vec![
                Value::Str("-n".into()),
                Value::Str("parent=1".into()),
            ])),
            "none" => Some(Value::List(vec![])),
            "n" => Some(Value::Int(400000)),
            _ => None,
        }
    }

    #[test]
    fn substitutes_inside_words() {
        let t = Template::parse("mkfs.{{fs}}").unwrap();
        assert_eq!(t.render(&look).unwrap(), ["mkfs.xfs"]);
        let t = Template::parse("-n{{ n }}").unwrap();
        assert_eq!(t.render(&look).unwrap(), ["-n400000"]);
    }

    #[test]
    fn shell_syntax_in_a_value_stays_one_argument() {
        let t = Template::parse("{{evil}}").unwrap();
        assert_eq!(t.render(&look).unwrap(), ["1; touch /tmp/pwned"]);
    }

    #[test]
    fn whole_word_lists_expand_and_embedded_lists_are_refused() {
        assert_eq!(
            Template::parse("{{opts}}").unwrap().render(&look).unwrap(),
            ["-n", "parent=1"]
        );
        assert!(Template::parse("{{none}}")
            .unwrap()
            .render(&look)
            .unwrap()
            .is_empty());
        assert!(Template::parse("x{{opts}}").unwrap().render(&look).is_err());
    }

    #[test]
    fn malformed_references_are_errors() {
        assert!(Template::parse("{{fs").is_err());
        assert!(Template::parse("{{}}").is_err());
        assert!(Template::parse("{{a b}}").is_err());
        assert!(Template::parse("{{x}}").unwrap().render(&look).is_err());
    }

    #[test]
    fn integers_can_be_formatted() {
        let look = |name: &str| match name {
            "i" => Some(Value::Int(10)),
            "s" => Some(Value::Str("255".into())),
            "w" => Some(Value::Str("xfs".into())),
            _ => None,
        };
        let r = |t: &str| Template::parse(t).unwrap().render(&look);
        assert_eq!(r("/f/{{i:02x}}").unwrap(), ["/f/0a"]);
        assert_eq!(r("{{i:x}}").unwrap(), ["a"]);
        assert_eq!(r("{{i:X}}").unwrap(), ["A"]);
        assert_eq!(r("[{{i:4d}}]").unwrap(), ["[  10]"]);
        assert_eq!(r("{{i:04d}}").unwrap(), ["0010"]);
        assert_eq!(r("{{ s : 02x }}").unwrap(), ["ff"]);
        assert_eq!(r("{{i:1x}}").unwrap(), ["a"]);
        assert!(r("{{w:02x}}").is_err());
        assert!(Template::parse("{{i:02q}}").is_err());
        assert!(Template::parse("{{i:}}").is_err());
        assert_eq!(
            Template::parse("{{i:02x}}")
                .unwrap()
                .names()
                .collect::<Vec<_>>(),
            ["i"]
        );
        assert_eq!(IntFormat::parse("02x").unwrap().apply(-3), "-3");
        assert_eq!(IntFormat::parse("03d").unwrap().apply(-3), "-03");
    }

    #[test]
    fn partial_rendering_keeps_unknown_names() {
        let t = Template::parse("{{dev.data}}").unwrap();
        assert_eq!(t.render_partial(&look), ["{{dev.data}}"]);
    }
}
