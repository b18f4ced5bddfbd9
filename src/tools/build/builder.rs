//! The steps of one build: each command run in its directory, its output streamed into
//! the build's log (and `make`'s into progress), a failure named by its log's gist.

use super::parse::{gist, missing_dependency};
use super::{io, BuildError, Progress};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// Runs the steps of one build, appending everything to its log.
pub(super) struct Builder<'a> {
    pub(super) log_path: PathBuf,
    pub(super) log: std::fs::File,
    pub(super) commands: Vec<String>,
    pub(super) progress: &'a dyn Fn(Progress),
}

impl Builder<'_> {
    pub(super) fn note(&mut self, text: &str) {
        let _ = writeln!(self.log, "== {text}");
    }

    /// Run a command in `dir` with `env`, streaming its output into the log; `make`
    /// lines are turned into progress when `make_total` is set.
    pub(super) fn run(
        &mut self,
        step: &str,
        dir: &Path,
        program: &str,
        args: &[String],
        env: &[(String, String)],
        make_total: Option<usize>,
    ) -> Result<String, BuildError> {
        let shown = std::iter::once(program.to_string())
            .chain(args.iter().map(|a| shell_words::quote(a).to_string()))
            .collect::<Vec<_>>()
            .join(" ");
        let env_shown: String = env
            .iter()
            .map(|(k, v)| format!("{k}={} ", shell_words::quote(v)))
            .collect();
        let line = format!("(cd {} && {env_shown}{shown})", dir.display());
        self.commands.push(line.clone());
        // For people: without apt's `-o` options (they are in the log and provenance).
        let mut brief = vec![program.to_string()];
        let mut skip = false;
        for a in args {
            if skip {
                skip = false;
            } else if a == "-o" {
                skip = true;
                if brief.last().is_none_or(|l| l != "-o …") {
                    brief.push("-o …".into());
                }
            } else {
                brief.push(shell_words::quote(a).to_string());
            }
        }
        (self.progress)(Progress::Step(format!(
            "{step}: {env_shown}{}",
            brief.join(" ")
        )));
        self.note(&line);
        let mut expr = duct::cmd(program, args)
            .dir(dir)
            .stdin_null()
            .stderr_to_stdout()
            .unchecked();
        for (k, v) in env {
            expr = expr.env(k, v);
        }
        let reader = expr.reader().map_err(|e| BuildError::Step {
            step: step.to_string(),
            missing: String::new(),
            gist: format!("cannot start `{program}`: {e}"),
            log: self.log_path.display().to_string(),
        })?;
        let mut out = String::new();
        let mut compiled = 0usize;
        let mut shown_pct = 0usize;
        let mut lines = BufReader::new(&reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match lines.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return Err(io(format!("reading the output of {step}"))(e)),
            }
            let text = String::from_utf8_lossy(&buf).to_string();
            let _ = self.log.write_all(text.as_bytes());
            if let Some(total) = make_total {
                let t = text.trim();
                if t.starts_with("[CC]") {
                    compiled += 1;
                    let pct = (compiled * 100 / total.max(1)).min(99);
                    if pct >= shown_pct + 10 {
                        shown_pct = pct - pct % 10;
                        (self.progress)(Progress::Make {
                            compiled,
                            total,
                            linked: None,
                        });
                    }
                } else if let Some(what) = t.strip_prefix("[LD]") {
                    (self.progress)(Progress::Make {
                        compiled,
                        total,
                        linked: Some(what.trim().to_string()),
                    });
                }
            }
            out.push_str(&text);
        }
        let status = reader
            .try_wait()
            .map_err(io(format!("waiting for {step}")))?
            .map(|o| o.status);
        let _ = self.log.flush();
        match status {
            Some(s) if s.success() => Ok(out),
            other => {
                let missing = missing_dependency(&out)
                    .map(|(pkg, what)| format!("; missing build dependency: {pkg} ({what})"))
                    .unwrap_or_default();
                let code = other
                    .and_then(|s| s.code())
                    .map_or("a signal".to_string(), |c| format!("exit status {c}"));
                Err(BuildError::Step {
                    step: format!("{step} ({code})"),
                    missing,
                    gist: gist(&out),
                    log: self.log_path.display().to_string(),
                })
            }
        }
    }
}
