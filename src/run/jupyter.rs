//! Executing a notebook headlessly in real Jupyter (nbconvert/nbclient) with the evcxr
//! Rust kernel, parameterised the papermill way ([`crate::ipynb`]), and exporting it
//! to self-contained HTML.

use crate::ipynb::{CellTime, IpynbError, Notebook};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum NotebookError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Notebook {
        path: PathBuf,
        #[source]
        source: IpynbError,
    },
    #[error("`{command}` failed: {message}")]
    Jupyter { command: String, message: String },
    #[error("{path}: not a bundle to run a notebook on: {message}")]
    Bundle { path: PathBuf, message: String },
    #[error("{path}: code cell {cell} failed: {ename}: {message} (the executed copy, with the error, is {out})")]
    Cell {
        path: PathBuf,
        cell: usize,
        ename: String,
        message: String,
        out: PathBuf,
    },
}

/// What to run.
#[derive(Debug, Clone)]
pub struct NotebookRun {
    pub input: PathBuf,
    /// `-p NAME VALUE`, in order.
    pub params: Vec<(String, String)>,
    pub output: PathBuf,
    pub html: Option<PathBuf>,
    /// The evcxr kernel's name in Jupyter.
    pub kernel: String,
    /// Per-cell timeout, seconds.
    pub timeout_s: u64,
}

impl NotebookRun {
    /// Run `notebook` on a result bundle: `bundle_dir` is set to the bundle (unless
    /// `params` sets it), and the executed copy and its HTML go into the bundle as
    /// `notebook/NAME.ipynb` and `notebook/NAME.html` (unless `output`/`html` say
    /// otherwise), so that sharing the result means sharing one directory.
    pub fn on_bundle(
        notebook: PathBuf,
        bundle: &Path,
        mut params: Vec<(String, String)>,
        output: Option<PathBuf>,
        html: Option<PathBuf>,
    ) -> Result<NotebookRun, NotebookError> {
        crate::store::Bundle::open(bundle).map_err(|e| NotebookError::Bundle {
            path: bundle.to_path_buf(),
            message: e.to_string(),
        })?;
        let abs = std::path::absolute(bundle).map_err(io(bundle))?;
        if !params.iter().any(|(n, _)| n == BUNDLE_PARAMETER) {
            params.push((BUNDLE_PARAMETER.into(), abs.display().to_string()));
        }
        let stem = notebook
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "notebook".into());
        let dir = abs.join(crate::store::NOTEBOOK_DIR);
        Ok(NotebookRun {
            output: output.unwrap_or_else(|| dir.join(format!("{stem}.ipynb"))),
            html: Some(html.unwrap_or_else(|| dir.join(format!("{stem}.html")))),
            input: notebook,
            params,
            kernel: DEFAULT_KERNEL.into(),
            timeout_s: DEFAULT_CELL_TIMEOUT_S,
        })
    }
}

/// The parameter through which fslab's notebooks take the bundle to open.
pub const BUNDLE_PARAMETER: &str = "bundle_dir";
/// evcxr's kernel name in Jupyter.
pub const DEFAULT_KERNEL: &str = "rust";
/// Per-cell timeout: the first notebook on a machine compiles polars (minutes).
pub const DEFAULT_CELL_TIMEOUT_S: u64 = 2400;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> NotebookError + '_ {
    move |source| NotebookError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn jupyter(args: &[String]) -> Result<(), NotebookError> {
    let out = duct::cmd("jupyter", args)
        .stdin_null()
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .map_err(|e| NotebookError::Jupyter {
            command: format!("jupyter {}", args.join(" ")),
            message: format!("{e} (install Jupyter: scripts/install-deps.sh)"),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = err.lines().rev().take(8).collect();
    Err(NotebookError::Jupyter {
        command: format!("jupyter {}", args.join(" ")),
        message: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    })
}

/// Inject the parameters, execute every cell (in the notebook's own directory, so its
/// relative paths hold), save the executed copy to `output`, and export HTML. A cell
/// error is an error naming the cell; the executed copy is kept for reading. Returns how
/// long each code cell took.
pub fn execute(run: &NotebookRun) -> Result<Vec<CellTime>, NotebookError> {
    let text = std::fs::read_to_string(&run.input).map_err(io(&run.input))?;
    let mut nb = Notebook::parse(&text).map_err(|source| NotebookError::Notebook {
        path: run.input.clone(),
        source,
    })?;
    if !run.params.is_empty() {
        nb.inject(&run.params)
            .map_err(|source| NotebookError::Notebook {
                path: run.input.clone(),
                source,
            })?;
    }
    let dir = run
        .input
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = run
        .input
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "notebook".into());
    // The parameterised copy sits beside the original: same working directory.
    let staged = dir.join(format!(".{stem}.fslab-{}.ipynb", std::process::id()));
    std::fs::write(&staged, nb.to_json()).map_err(io(&staged))?;
    let output = std::path::absolute(&run.output).map_err(io(&run.output))?;
    if let Some(parent) = output.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let result = jupyter(&[
        "nbconvert".into(),
        "--to".into(),
        "notebook".into(),
        "--execute".into(),
        "--allow-errors".into(),
        format!("--ExecutePreprocessor.kernel_name={}", run.kernel),
        format!("--ExecutePreprocessor.timeout={}", run.timeout_s),
        "--output".into(),
        output.display().to_string(),
        staged.display().to_string(),
    ]);
    let _ = std::fs::remove_file(&staged);
    result?;
    let done = std::fs::read_to_string(&output).map_err(io(&output))?;
    let executed = Notebook::parse(&done).map_err(|source| NotebookError::Notebook {
        path: output.clone(),
        source,
    })?;
    if let Some(html) = &run.html {
        let html = std::path::absolute(html).map_err(io(html))?;
        jupyter(&[
            "nbconvert".into(),
            "--to".into(),
            "html".into(),
            "--output".into(),
            html.display().to_string(),
            output.display().to_string(),
        ])?;
    }
    if let Some((cell, ename, message)) = executed.first_error() {
        return Err(NotebookError::Cell {
            path: run.input.clone(),
            cell,
            ename,
            message,
            out: output,
        });
    }
    Ok(executed.cell_times())
}
