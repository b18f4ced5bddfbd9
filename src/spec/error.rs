//! A problem in an experiment file, with the file, line and column where it is.

use std::fmt;

/// A problem in an experiment file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub file: String,
    /// 1-based; 0 when unknown.
    pub line: usize,
    /// 1-based; 0 when unknown.
    pub column: usize,
    pub message: String,
    /// The offending line of the file.
    pub snippet: Option<String>,
    /// What would be right.
    pub help: Option<String>,
}

impl std::error::Error for SpecError {}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )?;
        } else {
            write!(f, "{}: {}", self.file, self.message)?;
        }
        if let Some(snippet) = &self.snippet {
            let gutter = self.line.to_string();
            write!(f, "\n {gutter} | {snippet}")?;
            if self.column > 0 {
                let pad = " ".repeat(gutter.len());
                let caret_pad: String = snippet
                    .chars()
                    .take(self.column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                write!(f, "\n {pad} | {caret_pad}^")?;
            }
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}
