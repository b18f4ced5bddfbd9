//! `{{name}}` substitution into command words.
//!
//! Substitution happens on words after the command line has been split, so a value is
//! never re-parsed: `1; touch /tmp/pwned` stays one argument. No shell ever runs.

use super::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    Var(String),
}

/// One command word with its `{{name}}` references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub raw: String,
    pub pieces: Vec<Piece>,
}

impl Template {
    pub fn parse(raw: &str) -> Result<Template, String> {
        Self::parse_at(raw).map_err(|(_, m)| m)
    }

    /// As [`parse`](Self::parse); an error also gives the byte offset in `raw` of the
    /// `{{` at fault.
    pub fn parse_at(raw: &str) -> Result<Template, (usize, String)> {
        let mut pieces = Vec::new();
        let mut rest = raw;
        while let Some(start) = rest.find("{{") {
            let at = raw.len() - rest.len() + start;
            if start > 0 {
                pieces.push(Piece::Lit(rest[..start].to_string()));
            }
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| (at, format!("`{{{{` without a closing `}}}}` in `{raw}`")))?;
            let name = after[..end].trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
            {
                return Err((
                    at,
                    format!(
                        "`{{{{{}}}}}` is not a variable name (a name is letters, digits, `_`, `-` and `.`)",
                        &after[..end]
                    ),
                ));
            }
            pieces.push(Piece::Var(name.to_string()));
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
            Piece::Var(n) => Some(n.as_str()),
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
    pub fn render(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Vec<String>, String> {
        if let [Piece::Var(name)] = self.pieces.as_slice() {
            let v = lookup(name).ok_or_else(|| format!("`{{{{{name}}}}}` has no value here"))?;
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
                    let v = lookup(name)
                        .ok_or_else(|| format!("`{{{{{name}}}}}` has no value here"))?;
                    if let Value::List(_) = v {
                        return Err(format!(
                            "`{{{{{name}}}}}` is a list and can only stand as a whole word, not inside `{}`",
                            self.raw
                        ));
                    }
                    out.push_str(&v.to_string());
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
    fn partial_rendering_keeps_unknown_names() {
        let t = Template::parse("{{dev.data}}").unwrap();
        assert_eq!(t.render_partial(&look), ["{{dev.data}}"]);
    }
}
