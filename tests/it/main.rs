//! The integration tests, as modules of one test binary: each binary links fslab and
//! polars, and on a 2-core machine forty links were much of the time of a test run. A
//! test is named `module::test` (`cargo nextest run -E 'test(/^spine::/)'`, or `cargo
//! test --test it spine::`); the module is the file's name, which was the binary's.
//!
//! A new test file is a module here. A test that needs a process of its own by design is
//! a binary of its own beside this directory, with a comment saying why:
//! `tests/published_data_dir.rs` (it sets a process-wide environment variable, which
//! would race with the other tests under `cargo test`).
//!
//! Helpers shared by the modules: [`common`] (fslab on real loop devices), [`loopfs`] (a
//! scratch filesystem on a loop device; also `benches/blockmap.rs`), [`require`]
//! (preconditions: FSLAB_REQUIRE_*), [`shard_rows`], [`support`].

mod browser;
mod common;
mod loopfs;
mod require;
mod shard_rows;
mod support;

mod architecture;
mod bad_experiments;
mod block_trace;
mod blockmap_capture;
mod blockmap_crosscheck;
mod blockmap_fiemap;
mod blockmap_getfsmap;
mod blockmap_stream;
mod bundle_format;
mod bundle_summaries;
mod calibrate;
mod charts;
mod claims_drafts;
mod cleanup_safety;
mod cli_compare_report;
mod cli_parse;
mod compare_axis;
mod counters;
mod device_policy;
mod faults;
mod fio_example;
mod fuzz_spec;
mod import;
mod import_acceptance;
mod import_axes;
mod import_checklist;
mod import_counting;
mod import_dirs;
mod import_fio;
mod import_nested;
mod import_numbers;
mod import_perf;
mod import_pipes;
mod import_replies;
mod import_shell;
mod import_variants;
mod import_world;
mod k8s;
mod kernel_build;
mod kernels;
mod media_run;
mod medium;
mod notebook_pages;
mod notebook_run;
mod parse_blockmaps;
mod parse_blockmaps_proptest;
mod parse_file_records;
mod parse_fixtures;
mod parse_proptest;
mod parse_world;
mod published;
mod reply;
mod report_claims_html;
mod reproduction;
mod run_order;
mod scale_check;
mod scale_fill;
mod seeds;
mod shards;
mod slurm;
mod spine;
mod stats_reference;
mod stats_review;
mod stress;
mod throttle;
mod tiers;
mod tools;
mod uml;
mod uml_probes;
mod until_decided;
