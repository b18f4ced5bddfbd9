//! What two bundles must agree on to hold "the same" runs: (point, iteration) rows and
//! the rows of every capture table, per point.
#![allow(dead_code)]

use fslab::Bundle;
use std::collections::BTreeMap;
use std::path::Path;

/// (point_id, iteration) of every row of the bundle's `runs.parquet` file, sorted.
pub fn keys(b: &Path) -> Vec<(String, u32)> {
    Bundle::open(b).unwrap();
    let df = fslab::store::read_parquet(&b.join("runs.parquet")).unwrap();
    let ids = df.column("point_id").unwrap().str().unwrap().clone();
    let its = df
        .column("iteration")
        .unwrap()
        .cast(&fslab::polars::prelude::DataType::Int64)
        .unwrap();
    let its = its.i64().unwrap();
    let mut v: Vec<(String, u32)> = ids
        .iter()
        .zip(its.iter())
        .map(|(a, b)| (a.unwrap().to_string(), b.unwrap() as u32))
        .collect();
    v.sort();
    v
}

/// Table name → rows per point_index (or the row count under `-1` when the table has none).
pub fn table_shape(b: &Path) -> BTreeMap<String, BTreeMap<i64, usize>> {
    let b = Bundle::open(b).unwrap();
    let mut out = BTreeMap::new();
    for name in b.tables().unwrap() {
        if name == "runs" {
            continue;
        }
        let df = b.table(&name).unwrap();
        let mut counts = BTreeMap::new();
        match df
            .column("point_index")
            .ok()
            .and_then(|c| c.cast(&fslab::polars::prelude::DataType::Int64).ok())
        {
            Some(c) => {
                for v in c.i64().unwrap().iter() {
                    *counts.entry(v.unwrap_or(-2)).or_insert(0) += 1;
                }
            }
            None => {
                counts.insert(-1, df.height());
            }
        }
        out.insert(name, counts);
    }
    out
}
