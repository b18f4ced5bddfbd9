use fslab::run::notebook::{execute, NotebookRun};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Execute a notebook headlessly in Jupyter (evcxr kernel), papermill style: the cell
    /// tagged `parameters` holds the defaults; `-p NAME VALUE` values are injected after
    /// it in a cell tagged `injected-parameters`.
    Run(RunArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The notebook (.ipynb).
    pub notebook: PathBuf,
    /// A parameter: NAME VALUE (repeatable), typed from its default in the notebook.
    #[arg(short = 'p', long = "parameter", num_args = 2, value_names = ["NAME", "VALUE"])]
    pub params: Vec<String>,
    /// The executed notebook (default: NAME.out.ipynb beside it, or the bundle's
    /// notebook/NAME.ipynb with --bundle).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Also export it to self-contained HTML (charts inline).
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// A result bundle: passed as the `bundle_dir` parameter, and the executed notebook
    /// and its HTML are stored in it (notebook/NAME.ipynb, notebook/NAME.html).
    #[arg(long)]
    pub bundle: Option<PathBuf>,
    /// The Jupyter kernel (evcxr's default name is `rust`).
    #[arg(long, default_value = "rust")]
    pub kernel: String,
    /// Timeout per cell, seconds (the first notebook on a machine compiles polars).
    #[arg(long, default_value_t = 2400)]
    pub timeout: u64,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Sub::Run(a) => run(a),
    }
}

fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let mut params: Vec<(String, String)> = a
        .params
        .chunks(2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect();
    let stem = a
        .notebook
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "notebook".into());
    let (mut output, mut html) = (a.output, a.html);
    if let Some(b) = &a.bundle {
        fslab::Bundle::open(b)?;
        let abs = std::path::absolute(b)?;
        if !params.iter().any(|(n, _)| n == "bundle_dir") {
            params.push(("bundle_dir".into(), abs.display().to_string()));
        }
        let dir = abs.join("notebook");
        output.get_or_insert_with(|| dir.join(format!("{stem}.ipynb")));
        html.get_or_insert_with(|| dir.join(format!("{stem}.html")));
    }
    let output = output.unwrap_or_else(|| a.notebook.with_file_name(format!("{stem}.out.ipynb")));
    execute(&NotebookRun {
        input: a.notebook,
        params,
        output: output.clone(),
        html: html.clone(),
        kernel: a.kernel,
        timeout_s: a.timeout,
    })?;
    println!("{}", output.display());
    if let Some(h) = html {
        println!("{}", h.display());
    }
    Ok(ExitCode::SUCCESS)
}
