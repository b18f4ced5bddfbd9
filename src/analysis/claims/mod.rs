//! Claim verdicts: the statements a source makes, checked against a bundle's frames.
//!
//! Each claim of an experiment (`claims:` in its YAML) has a `check:` in one of six
//! kinds, checked when the experiment is loaded through [`load`] (the CLI's loader). Every kind computes one *measured* number from the bundle and, with the same
//! recipe over `data/published/`, the *published* number, and compares the measured one
//! with `expect: {min, max}`:
//!
//! | kind | measured number |
//! |---|---|
//! | `ratio` | `stat(metric)` over the rows matching `numerator` ÷ the same over `denominator` |
//! | `first_vs_rest` | per point: the first iteration's metric ÷ the mean of the later ones; the point furthest from `expect` counts |
//! | `flat` | `stat(metric)` per value of the `across` column; the largest ÷ the smallest |
//! | `layout` | per point: the largest file's *discontiguity*, the share of its consecutive block pairs that are not physically adjacent (0 = one contiguous run, 1 = every block elsewhere); the point furthest from `expect` counts |
//! | `io_summary` | from the block traces (`trace: io`): `stat(metric)` of `io_summary` (seeks, seeks_per_s, mean_seek_bytes, bytes, mb_per_s, …) over `select`, or over `numerator` ÷ over `denominator`; one sample per traced step and iteration |
//! | `gap_share` | one part's share of the gap between two sides: (part on `a` − part on `b`) ÷ (whole on `a` − whole on `b`), each summed per iteration, averaged per replicate, then over replicates (e.g. e2fsck pass 2 in the ext3–ext4 gap) |
//!
//! Selections (`numerator`, `select`, …) map a column to a value, a list of values (any
//! of), or a range `{min, max}`; matrix axes can be used on every table (the runs table
//! has them as columns, the others get them from the manifest). Runs rows count only
//! when their `status` is `ok`.
//!
//! **The replicate is the unit** (`units`): the selected rows are grouped by (point,
//! replicate), each group summarised by the check's `stat`, and the interval is
//! computed over the replicates. With fewer than two replicates a side the number is
//! shown with an interval over the iterations of one filesystem, for orientation only,
//! and the tier is at best `inconclusive`. A decisive tier needs `min_replicates` a side
//! (default 3; 5 per group for `flat`).
//!
//! The verdict is a tier (`analysis::tiers`), always with a reason, the unit and the
//! replicates a side, the scale note and the recipe (table, filter, statistic).
//! *Not applicable* when: the selected points were unsupported here or failed, a table
//! is missing, the bundle ran **below the published scale** (every numeric variable of
//! the `published` profile, raised by the claim's own `at_scale`, which can never lower
//! it: `not applicable (reduced scale)`), or the claim's `needs:` finds **its mechanism
//! absent** (`allocator: ext3` on a kernel whose ext4 driver mounted ext3; a `contrast`
//! that gives the same number; `attr_forks` counts, from an `xfs_io -c fsmap` capture,
//! outside the spill regime: `not applicable: mechanism absent`). Substitutions (the
//! manifest's stand-ins, ext3 on the ext4 driver, another medium) cap the tier at
//! `reproduced with substitutes` and are said once per bundle. A claim without a
//! `quote` is fslab's own variant: listed apart, never counted in the post's tallies.
//! Two reruns of one profile are compared by [`agreement`].
//!
//! **One verdict per kernel** (`per_kernel`): over a bundle whose experiment has a
//! `kernel` matrix axis, a claim that does not name `kernel` in any selection is checked
//! once per kernel its selections reach, each on that kernel's points alone (its rows,
//! its `needs:`, its guest's substitution; none for `host`), and named `id @ kernel=K`
//! ([`ClaimVerdict::name`]). A claim that pins `kernel` (a comparison of kernels) is
//! checked once, as written; so is one that measures nothing (`not_measured:`). Tallies
//! then count (claim, kernel) rows and say so ([`CountedPer`]); [`agreement`] compares
//! the same (claim, kernel).
//!
//! ```yaml
//! claims:
//!   - id: first-run-overhead
//!     text: parent=1 costs at most ~10 % on the first run
//!     check:
//!       kind: ratio
//!       metric: wall_s
//!       numerator: { parent: 1, link: 1, iteration: 1 }
//!       denominator: { parent: 0, link: 1, iteration: 1 }
//!       expect: { max: 1.10 }
//!       at_scale: { n: 400000 }
//!       published:
//!         dataset: "000"
//!         numerator: { quantity: real_time, parent: 1, link_op: true, run: 1 }
//!         denominator: { quantity: real_time, parent: 0, link_op: true, run: 1 }
//! ```

mod agree;
mod error;
mod evidence;
mod fill;
mod kinds;
mod measure;
mod path;
mod per_kernel;
mod render;
mod reproduction;
mod scale;
mod scale_need;
mod sections;
mod select;
mod slope;
mod spill;
mod summary;
mod summary_render;
mod units;
mod verdict;
mod words;

pub use crate::spec::claim::*;
pub use agree::{agreement, render_agreement, Agreement};
pub use error::{ClaimsError, MeasureError};
pub use evidence::{published_differences, workloads_ran, Evidence, PublishedLoader};
pub use kinds::{discontiguity, Run};
pub use per_kernel::{check_bundle, check_claims, expect_of, pins_kernel, points_of};
pub use render::{
    claims_frame, claims_tier_counts, counted_per, post_claims, render, shared_lines, tier_counts,
    tier_counts_frame, verdicts_frame, CountedPer, Report,
};
pub use reproduction::{render_reproduction, reproduction_md, SHARED_MIN};
pub use sections::{analyse, ClaimsSource, Reading, Section, Settled};
pub use summary::{best, rank, summarise, Answer, Bearing, Need, ReadingKind, Standing, Why};
pub use summary_render::{summary_md, summary_text, why_words, WHY_MAX};
pub use units::{Replication, SampleUnit};
pub use verdict::*;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kernels;
#[cfg(test)]
mod tests_kinds;
#[cfg(test)]
mod tests_readings;
#[cfg(test)]
mod tests_rules;
#[cfg(test)]
mod tests_seeds;
#[cfg(test)]
mod tests_sequential;
