//! `fslab reply BUNDLE [--compare BASE] [--post POST]`: a plain-text block to paste into
//! a reply to the post (docs/statistics.md, "A reply to the post").

use anyhow::Context;
use fslab::report::reply::render;
use fslab::report::reply_content::{gather, PostRef, ReplyOptions};
use fslab::Bundle;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The result bundle directory that answers the post.
    pub bundle: PathBuf,
    /// A base bundle: the table compares it with BUNDLE (lkp style), and when it reran the
    /// same experiment and profile, says whether the two give the same tiers.
    #[arg(long, value_name = "BASE")]
    pub compare: Option<PathBuf>,
    /// The post, as a mail (.eml, mbox, a lore page saved as text): the block starts with
    /// an `In-Reply-To:` line quoting its Message-ID.
    #[arg(long, value_name = "POST")]
    pub post: Option<PathBuf>,
    /// A runs column of the table (repeatable; default: the ones the claims read, else
    /// wall_s).
    #[arg(long = "metric", value_name = "COLUMN")]
    pub metrics: Vec<String>,
    /// Leading iterations of each replicate left out as warm-up (default: the warm-up
    /// the run recorded, else 1).
    #[arg(long)]
    pub warmup: Option<usize>,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let bundle = Bundle::open(&args.bundle)?;
    let base = match &args.compare {
        Some(p) => Some(Bundle::open(p).context("--compare")?),
        None => None,
    };
    let post = match &args.post {
        None => None,
        Some(p) => {
            let bytes = std::fs::read(p).with_context(|| format!("--post {}", p.display()))?;
            let mail = fslab::import::mail::read(&bytes)
                .with_context(|| format!("--post {}: not a mail", p.display()))?;
            Some(match mail.headers.message_id {
                Some(id) => PostRef::MessageId(id.trim().to_string()),
                None => PostRef::NoMessageId {
                    file: p.display().to_string(),
                },
            })
        }
    };
    if let Some(b) = &base {
        let (b, n) = (b.manifest(), bundle.manifest());
        let mut warnings = fslab::store::merge::compared_differences(b, n);
        warnings.extend(fslab::store::merge::shard_differences(b));
        warnings.extend(fslab::store::merge::shard_differences(n));
        for w in warnings {
            eprintln!("fslab: warning: {w}");
        }
    }
    let opts = ReplyOptions {
        metrics: args.metrics,
        warmup: args.warmup,
        ..ReplyOptions::default()
    };
    let base_name = args.compare.as_ref().map(|p| p.display().to_string());
    let reply = gather(
        &bundle,
        &args.bundle.display().to_string(),
        base.as_ref().zip(base_name.as_deref()),
        post,
        &opts,
    )
    .with_context(|| format!("reading {}", args.bundle.display()))?;
    let text = render(&reply);
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
