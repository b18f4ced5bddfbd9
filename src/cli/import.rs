//! `fslab import POST|- -o DIR [--explain]`: a post becomes `DIR/<id>.yaml` (a draft
//! experiment) and `DIR/<id>.published.csv` (its numbers).

use fslab::import::{self, NoteKind};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// Posts larger than this are refused (a whole list archive is not a post).
const MAX_BYTES: usize = 20 << 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The post: a mail (mbox or .eml), a lore page saved as text, a commit message, or
    /// `-` for standard input.
    pub post: String,
    /// Directory for the draft and its published CSV.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Print the full trace: every item recognised, with its line.
    #[arg(long)]
    pub explain: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let mut bytes = Vec::new();
    let name = if args.post == "-" {
        std::io::stdin()
            .take(MAX_BYTES as u64 + 1)
            .read_to_end(&mut bytes)?;
        None
    } else {
        let f =
            std::fs::File::open(&args.post).map_err(|e| anyhow::anyhow!("{}: {e}", args.post))?;
        f.take(MAX_BYTES as u64 + 1).read_to_end(&mut bytes)?;
        Some(args.post.as_str())
    };
    if bytes.len() > MAX_BYTES {
        eprintln!(
            "fslab import: {} is larger than {} MiB: a post, not an archive, is imported (cut the message out of the mbox first)",
            name.unwrap_or("the input"),
            MAX_BYTES >> 20
        );
        return Ok(ExitCode::from(2));
    }
    let draft = match import::import(&bytes, name) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("fslab import: {e}: nothing to draft");
            return Ok(ExitCode::from(2));
        }
    };
    let recognised = draft
        .notes
        .iter()
        .filter(|n| n.kind == NoteKind::Recognised)
        .count();
    for n in &draft.notes {
        if args.explain
            || n.kind != NoteKind::Recognised
            || n.what.starts_with("workload")
            || n.what.starts_with("matrix")
        {
            let at = if n.line == 0 {
                "    -".to_string()
            } else {
                format!("{:>5}", n.line)
            };
            println!("{at}  {:<10}  {}", n.kind.label(), n.what);
        }
    }
    if args.explain {
        for r in &draft.rows {
            let settings: Vec<String> =
                r.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!(
                "{:>5}  row         {} {} = {} {} ({}){}{}",
                r.line,
                r.group,
                r.quantity,
                r.value,
                r.unit,
                r.printed,
                if r.approx { " approx" } else { "" },
                if settings.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", settings.join(", "))
                }
            );
        }
    }
    std::fs::create_dir_all(&args.out)?;
    let csv_path = args.out.join(format!("{}.published.csv", draft.id));
    if !draft.rows.is_empty() {
        std::fs::write(&csv_path, &draft.csv)?;
    }
    if let Some(blocks) = &draft.blocks_csv {
        let path = args.out.join(format!("{}.dir_blocks.csv", draft.id));
        std::fs::write(&path, blocks)?;
        println!(
            "{} block listing rows in {}",
            draft.blocks.len(),
            path.display()
        );
    }
    let Some(yaml) = &draft.yaml else {
        eprintln!(
            "fslab import: no command in the post, so no experiment was drafted ({} numbers{})",
            draft.rows.len(),
            if draft.rows.is_empty() {
                String::new()
            } else {
                format!(" written to {}", csv_path.display())
            }
        );
        return Ok(ExitCode::from(1));
    };
    let yaml_path = args.out.join(format!("{}.yaml", draft.id));
    std::fs::write(&yaml_path, yaml)?;
    println!(
        "\n{} ({} items recognised{}), {} numbers in {}, {} draft claims",
        yaml_path.display(),
        recognised,
        if draft.fallback {
            "; the FALLBACK draft: its steps are comments"
        } else {
            ""
        },
        draft.rows.len(),
        csv_path.display(),
        draft.claims.len()
    );
    if !draft.checks.is_empty() {
        eprintln!(
            "\nwhat to check before `fslab run` ({}; also at the end of {}):",
            draft.checks.len(),
            yaml_path.display()
        );
        for c in &draft.checks {
            let at = if c.line == 0 {
                "    -".to_string()
            } else {
                format!("{:>5}", c.line)
            };
            eprintln!("{at}  {}", c.what);
        }
    }
    println!(
        "next: fslab plan {} && fslab doctor {}",
        yaml_path.display(),
        yaml_path.display()
    );
    Ok(ExitCode::SUCCESS)
}
