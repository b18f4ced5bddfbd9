use fslab::polars::prelude::*;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A result bundle directory.
    pub bundle: PathBuf,
    /// Print the runs as JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn cell(c: &Column, i: usize) -> String {
    match c.get(i) {
        Ok(AnyValue::Null) => String::new(),
        Ok(AnyValue::Float64(x)) => format!("{x:.3}"),
        Ok(AnyValue::String(s)) => s.to_string(),
        Ok(v) => v.to_string(),
        Err(_) => String::new(),
    }
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let bundle = fslab::Bundle::open(&args.bundle)?;
    let runs = bundle.runs()?;
    if args.json {
        for i in 0..runs.height() {
            let obj: serde_json::Map<String, serde_json::Value> = runs
                .columns()
                .iter()
                .map(|c| (c.name().to_string(), serde_json::Value::String(cell(c, i))))
                .collect();
            println!("{}", serde_json::Value::Object(obj));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let m = bundle.manifest();
    println!("{} — {}", m.experiment.id, m.experiment.title);
    println!(
        "profile {}  status {}  started {}  finished {}",
        m.profile.as_deref().unwrap_or("-"),
        m.status,
        m.started_at,
        m.finished_at.as_deref().unwrap_or("-")
    );
    let e = &m.environment;
    println!(
        "kernel {}  {}  {} × {}  {} MiB",
        e.kernel,
        e.distribution,
        e.cores,
        e.cpu_model,
        e.memory_bytes >> 20
    );
    for (tool, v) in &e.tools {
        println!("  {tool}: {v}");
    }
    println!();
    for p in &m.points {
        let replicates = p.repeat_stops.len();
        println!(
            "point {} [{}] {} ({} iterations{}){}{}",
            p.index,
            p.id,
            p.status,
            p.iterations,
            if replicates > 1 {
                format!(" in {replicates} replicates")
            } else {
                String::new()
            },
            p.reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default(),
            p.repeat_stop
                .as_ref()
                .map(|r| format!("; stopped: {r}"))
                .unwrap_or_default()
        );
    }
    println!();
    let shown: Vec<&str> = [
        "point_id",
        "replicate",
        "iteration",
        "wall_s",
        "user_s",
        "sys_s",
        "exit_code",
        "status",
    ]
    .into_iter()
    .filter(|c| runs.column(c).is_ok())
    .collect();
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_HORIZONTAL_ONLY);
    table.set_header(shown.clone());
    for i in 0..runs.height() {
        table.add_row(
            shown
                .iter()
                .map(|c| runs.column(c).map(|col| cell(col, i)).unwrap_or_default()),
        );
    }
    println!("{table}");
    let tables = bundle.tables()?;
    println!("tables: {}", tables.join(", "));
    let notebooks = bundle.notebooks()?;
    if notebooks.is_empty() {
        println!(
            "notebooks: none (fslab run … --notebook NB, or fslab notebook run NB --bundle DIR)"
        );
    } else {
        println!("notebooks:");
        for n in notebooks {
            println!(
                "  {}: {}{}",
                n.name,
                n.ipynb.display(),
                n.html
                    .map(|h| format!(", {}", h.display()))
                    .unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
