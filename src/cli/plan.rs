use fslab::plan::{step_times, Phase};
use fslab::run::target::guest_kernel;
use fslab::run::target::uml::ubd;
use fslab::spec::{MountSpec, Piece, Step};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub plan: super::PlanArgs,
    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
}

fn describe(step: &Step, point: &fslab::Point) -> String {
    let vars = |n: &str| point.vars.get(n).cloned();
    let render = |t: &str| {
        fslab::spec::Template::parse(t)
            .map(|t| t.render_partial(&vars).join(" "))
            .unwrap_or_else(|_| t.to_string())
    };
    let mut s = match (&step.run, &step.mount) {
        (Some(_), _) => step
            .argv_templates()
            .map(|ts| {
                let words: Vec<String> = ts.iter().flat_map(|t| t.render_partial(&vars)).collect();
                shell_words::join(words)
            })
            .unwrap_or_else(|e| e.to_string()),
        (None, Some(MountSpec::Device(d))) => format!("mount {{{{dev.{d}}}}} {{{{mnt}}}}"),
        (None, Some(MountSpec::Full(f))) => format!(
            "mount{}{} {} {}",
            f.fstype
                .as_ref()
                .map(|t| format!(" -t {t}"))
                .unwrap_or_default(),
            f.options
                .as_ref()
                .map(|o| format!(" -o {}", render(o)))
                .unwrap_or_default(),
            render(&f.device),
            f.at.as_ref()
                .map(|a| render(a))
                .unwrap_or_else(|| "{{mnt}}".into())
        ),
        _ => match step.action() {
            "umount" => format!("umount {}", render(step.umount.as_deref().unwrap_or(""))),
            "mkdir" => format!("mkdir -p {}", render(step.mkdir.as_deref().unwrap_or(""))),
            "drop_caches" => "sync; echo 3 > /proc/sys/vm/drop_caches".into(),
            "sync" => "sync".into(),
            other => other.into(),
        },
    };
    if let Some(n) = step_times(step, point).filter(|n| *n > 1) {
        // the values `{{i}}` takes, when the step names it (`times_from:` moves them)
        let uses_i = step.templates().is_ok_and(|ts| {
            ts.iter().flat_map(|t| &t.pieces).any(|p| match p {
                Piece::Var(v) | Piece::Formatted { name: v, .. } => v == "i",
                Piece::Lit(_) => false,
            })
        });
        s = if uses_i {
            let (a, b) = (step.index_of(0), step.index_of(n - 1));
            format!("{n} × (i = {a} … {b}) {s}")
        } else {
            format!("{n} × {s}")
        };
    }
    if let Some(k) = &step.parse {
        s.push_str(&format!("    # parsed as {k}"));
    }
    if let Some(t) = step.timeout {
        s.push_str(&format!("    # timeout {t}s"));
    }
    if step.trace.is_some() {
        s.push_str("    # block I/O traced");
    }
    s
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let plan = args.plan.plan()?;
    let exp = &plan.experiment;
    if args.json {
        let points: Vec<serde_json::Value> = plan
            .points
            .iter()
            .map(|p| {
                let phases: serde_json::Map<String, serde_json::Value> = Phase::ALL
                    .iter()
                    .map(|ph| {
                        (
                            ph.name().to_string(),
                            plan.steps(p, *ph).iter().map(|s| describe(s, p)).collect::<Vec<_>>().into(),
                        )
                    })
                    .collect();
                serde_json::json!({
                    "index": p.index, "id": p.id, "repeat": p.repeat, "replicates": p.replicates,
                    "vars": p.vars.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
                    "devices": p.devices, "steps": phases,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "experiment": exp.id(), "title": exp.title(), "profile": plan.profile, "points": points,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} — {}", exp.id(), exp.title());
    println!("profile: {}", plan.profile.as_deref().unwrap_or("(none)"));
    if !plan.overrides.is_empty() {
        let o: Vec<String> = plan
            .overrides
            .iter()
            .map(|(k, v)| format!("{k}={}", v.label()))
            .collect();
        println!("overrides: {}", o.join(" "));
    }
    let replicates: u32 = plan.points.iter().map(|p| p.replicates).sum();
    let iterations: u32 = plan.points.iter().map(|p| p.repeat * p.replicates).sum();
    println!(
        "{} points, {} replicates (fresh filesystems), {} timed iterations\n",
        plan.points.len(),
        replicates,
        iterations
    );
    for p in &plan.points {
        println!(
            "point {} [{}]  {} × repeat {}",
            p.index,
            p.id,
            count(p.replicates, "replicate"),
            p.repeat
        );
        let guest = guest_kernel(p);
        for (i, d) in p.devices.iter().enumerate() {
            let size = bytesize::ByteSize(d.size_bytes).display().iec();
            match guest {
                Some(k) => println!(
                    "  device {}: {size} sparse image file, the {k} guest's {} (no host loop device)",
                    d.name,
                    ubd(i).display()
                ),
                None => println!(
                    "  device {}: {size} loop device on a sparse image ({:?} backing)",
                    d.name, d.backing
                ),
            }
            if let Some(m) = d.medium.filter(|m| m.params().is_some()) {
                println!(
                    "    served through the {} disk model (FUSE; docs/media.md)",
                    m.label()
                );
            }
        }
        for ph in Phase::ALL {
            let steps = plan.steps(p, ph);
            if steps.is_empty() {
                continue;
            }
            println!("  {}:", ph.name());
            for s in steps {
                println!("    {}", describe(s, p));
            }
        }
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

fn count(n: u32, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
