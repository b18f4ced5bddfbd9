use fslab::run::jupyter::{execute, NotebookRun};
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
    #[arg(long, default_value = fslab::run::jupyter::DEFAULT_KERNEL)]
    pub kernel: String,
    /// Timeout per cell, seconds (the first notebook on a machine compiles polars).
    #[arg(long, default_value_t = fslab::run::jupyter::DEFAULT_CELL_TIMEOUT_S)]
    pub timeout: u64,
    /// Print how long each code cell took (compiling and running it), on stderr.
    #[arg(long)]
    pub timing: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Sub::Run(a) => run(a),
    }
}

fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let params: Vec<(String, String)> = a
        .params
        .chunks(2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect();
    let mut run = match &a.bundle {
        Some(b) => NotebookRun::on_bundle(a.notebook, b, params, a.output, a.html)?,
        None => {
            let stem = a
                .notebook
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "notebook".into());
            NotebookRun {
                output: a
                    .output
                    .unwrap_or_else(|| a.notebook.with_file_name(format!("{stem}.out.ipynb"))),
                input: a.notebook,
                params,
                html: a.html,
                kernel: a.kernel.clone(),
                timeout_s: a.timeout,
            }
        }
    };
    run.kernel = a.kernel;
    run.timeout_s = a.timeout;
    let times = execute(&run)?;
    if a.timing {
        let total: f64 = times.iter().map(|t| t.seconds).sum();
        for t in &times {
            let line: String = t.first_line.chars().take(70).collect();
            eprintln!("cell {:>3} {:>8.2} s  {line}", t.cell, t.seconds);
        }
        eprintln!("{} code cells {total:.2} s", times.len());
    }
    println!("{}", run.output.display());
    if let Some(h) = &run.html {
        println!("{}", h.display());
    }
    Ok(ExitCode::SUCCESS)
}
