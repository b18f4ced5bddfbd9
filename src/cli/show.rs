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
    let summary = fslab::analysis::BundleSummary::new(&bundle, &runs)?;
    let s = &summary;
    println!("{} — {}", s.experiment_id, s.title);
    println!(
        "profile {}  status {}  started {}  finished {}",
        s.profile.as_deref().unwrap_or("-"),
        s.status,
        s.started_at,
        s.finished_at.as_deref().unwrap_or("-")
    );
    println!("{}", s.counts());
    if let Some(o) = &s.run_order {
        println!(
            "run order {}{}: {} (point, replicate) pairs (manifest.json run_order)",
            o.order,
            o.seed.map(|s| format!(", seed {s}")).unwrap_or_default(),
            o.pairs
        );
    }
    let e = &s.host;
    println!(
        "kernel {}  {}  {} × {}  {} MiB",
        e.kernel, e.distribution, e.cores, e.cpu_model, e.memory_mib
    );
    for g in &s.guests {
        println!(
            "guest {}: {} kernel {} ({} MiB); measured there: timings are the guest's (docs/kernels.md)",
            g.name, g.kind, g.release, g.memory_mib
        );
    }
    for (tool, v) in &s.tools {
        println!("  {tool}: {v}");
    }
    println!();
    for p in &s.points {
        println!(
            "point {} [{}] {} ({} iterations{}){}{}",
            p.index,
            p.id,
            p.status,
            p.iterations,
            if p.replicates > 1 {
                format!(" in {} replicates", p.replicates)
            } else {
                String::new()
            },
            p.reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default(),
            p.stop
                .as_ref()
                .map(|r| format!("; stopped: {r}"))
                .unwrap_or_default()
        );
    }
    println!();
    // Steady-state statistics of wall_s: the warm-up rule, the unit, and "no steady
    // state" where there is none.
    if runs.height() > 0 && runs.column("wall_s").is_ok() {
        let warmup =
            fslab::analysis::Warmup::from_count(fslab::analysis::recorded_warmup(m).unwrap_or(1));
        let opts = fslab::analysis::StatsOptions {
            warmup,
            resolution: Some(fslab::analysis::Resolution::for_metric("wall_s", Some(m))),
            ..fslab::analysis::StatsOptions::default()
        };
        let rows = fslab::analysis::point_stats_rows(&runs, &opts)?;
        println!("wall time (s), steady state; {}", warmup.describe());
        for r in &rows {
            let unit = match r.unit {
                fslab::analysis::Unit::Replicate => format!("unit: replicate, of {}", r.replicates),
                fslab::analysis::Unit::Iteration => "unit: iteration".to_string(),
            };
            let body = match (r.no_steady_state, r.mean) {
                (true, _) | (_, None) => format!(
                    "no steady state (first {})",
                    r.first
                        .map(|f| fslab::analysis::fmt_sig(f, 4))
                        .unwrap_or_else(|| "-".into())
                ),
                (false, Some(mean)) => format!(
                    "mean {}{}{}",
                    fslab::analysis::fmt_sig(mean, 4),
                    match (r.ci_low, r.ci_high) {
                        (Some(lo), Some(hi)) => format!(
                            " ± {} (95% CI)",
                            fslab::analysis::fmt_sig((hi - lo) / 2.0, 3)
                        ),
                        _ => String::new(),
                    },
                    r.cv_pct
                        .map(|c| format!(", CV {c:.1}%"))
                        .unwrap_or_default()
                ),
            };
            println!("  [{}] n={} ({unit}): {body}", r.point_id, r.n);
        }
        println!();
    }
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
    // One line per run: a rule under the header only (no frame, no rules between rows).
    let mut grid = comfy_table::Table::new();
    grid.load_preset(comfy_table::presets::NOTHING)
        .set_style(comfy_table::TableComponent::HeaderLines, '─');
    grid.set_header(shown.clone());
    for i in 0..runs.height() {
        grid.add_row(
            shown
                .iter()
                .map(|c| runs.column(c).map(|col| cell(col, i)).unwrap_or_default()),
        );
    }
    println!("{grid}");
    println!("tables: {}", s.tables.join(", "));
    if s.notebooks.is_empty() {
        println!(
            "notebooks: none (fslab run … --notebook NB, or fslab notebook run NB --bundle DIR)"
        );
    } else {
        println!("notebooks:");
        for n in &s.notebooks {
            println!(
                "  {}: {}{}",
                n.name,
                n.ipynb.display(),
                n.html
                    .as_ref()
                    .map(|h| format!(", {}", h.display()))
                    .unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
