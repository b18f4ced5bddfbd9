//! The kinds of check, one file each: the kind's struct (what is written after
//! `kind: NAME`) and its [`CheckSchema`](super::CheckSchema) impl (what the checks made
//! at load need to know of it). How each kind is measured is its file of the same name
//! in `analysis::claims::kinds`.
//!
//! [`claim_kinds`] is the one list that registers them: this module's `mod` lines, the
//! [`Check`](super::Check) enum with [`Check::KINDS`](super::Check::KINDS), and the
//! evaluators' `mod` lines and dispatch in `analysis::claims` are all made from it
//! (docs/architecture.md, *Adding a claim kind*).

/// The registration list of the kinds of check, one line a kind: `file: Variant(Struct)`.
/// `file` is the kind's name as written after `kind:` (serde's tag of `Variant`, snake
/// case) and the name of its file here and in `analysis::claims::kinds`; `Struct` is
/// defined in that file here.
///
/// The list is handed to the macro named in the call (`claim_kinds!(m)` expands to
/// `m! { ratio: Ratio(RatioCheck), … }`), which makes what each side needs from it.
macro_rules! claim_kinds {
    ($then:ident) => {
        $then! {
            ratio: Ratio(RatioCheck),
            first_vs_rest: FirstVsRest(FirstVsRestCheck),
            flat: Flat(FlatCheck),
            layout: Layout(LayoutCheck),
            io_summary: IoSummary(IoSummaryCheck),
            gap_share: GapShare(GapShareCheck),
        }
    };
}
pub(crate) use claim_kinds;

/// One `pub mod` line a kind, from the list.
macro_rules! kind_modules {
    ($($module:ident: $variant:ident($check:ident)),+ $(,)?) => {
        $(pub mod $module;)+
    };
}

claim_kinds!(kind_modules);

/// The column a check on `table` reads from the `runs` table, if it is that table.
fn runs_column<'a>(table: &str, metric: &'a str) -> Option<&'a str> {
    (table == "runs").then_some(metric)
}

fn default_runs() -> String {
    "runs".into()
}
fn default_extents() -> String {
    "extents".into()
}
fn default_wall() -> String {
    "wall_s".into()
}
fn default_value() -> String {
    "value".into()
}
fn default_run() -> String {
    "run".into()
}
fn default_block() -> u64 {
    4096
}
fn default_x() -> String {
    "x".into()
}
