use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory of experiment files.
    #[arg(default_value = "experiments")]
    pub dir: PathBuf,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&args.dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut grid = comfy_table::Table::new();
    grid.load_preset(comfy_table::presets::NOTHING);
    grid.set_header(["id", "title", "profiles", "file"]);
    let mut broken = 0;
    for f in files {
        match fslab::Experiment::load(&f) {
            Ok(e) => {
                grid.add_row([
                    e.id().to_string(),
                    e.title().to_string(),
                    e.def.profiles.keys().cloned().collect::<Vec<_>>().join(","),
                    f.display().to_string(),
                ]);
            }
            Err(err) => {
                broken += 1;
                eprintln!("{err}");
            }
        }
    }
    println!("{grid}");
    Ok(if broken > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
