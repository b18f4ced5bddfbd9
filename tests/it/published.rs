//! The published CSVs against the posts they were transcribed from.
//!
//! Every row's `printed` text must occur in its post (in order, where the post lists runs),
//! `value` must be what `printed` says in `unit`, the source columns must match the post's
//! headers, and the row counts must match the number of measurements the post prints.
//!
//! The posts are the copies in `data/published/posts/` (kept in the repository so that a
//! clone anywhere can run this); `$FSLAB_SEEDS_DIR` reads them from elsewhere. Where the
//! original `shared/seeds/` sits beside the checkout, the copies must equal it.

use fslab::polars::prelude::*;
use fslab::published;
use std::path::PathBuf;

fn seeds_dir() -> PathBuf {
    match std::env::var_os("FSLAB_SEEDS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/published/posts"),
    }
}

/// The copies in the repository are the posts as given (`shared/seeds/` beside an ancestor
/// of the checkout, when there is one).
#[test]
fn post_copies_equal_the_seeds() {
    let copies = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/published/posts");
    let mut names: Vec<String> = std::fs::read_dir(&copies)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "000_0b44c8b36c174c98.txt",
            "001_d787de3b9269fe76.txt",
            "003_8773119bb119778a.txt"
        ]
    );
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Some(seeds) = manifest
        .ancestors()
        .map(|d| d.join("shared").join("seeds"))
        .find(|d| d.is_dir())
    else {
        eprintln!("no shared/seeds beside this checkout: the copies are the reference");
        return;
    };
    for n in &names {
        let a = std::fs::read(copies.join(n)).unwrap();
        let b = std::fs::read(seeds.join(n))
            .unwrap_or_else(|e| panic!("{}: {e}", seeds.join(n).display()));
        assert!(a == b, "{n} differs from {}", seeds.display());
    }
}

fn post(file: &str) -> String {
    let p = seeds_dir().join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn strs(df: &DataFrame, name: &str) -> Vec<Option<String>> {
    df.column(name)
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.map(str::to_string))
        .collect()
}

fn s(df: &DataFrame, name: &str) -> Vec<String> {
    strs(df, name)
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

fn f64s(df: &DataFrame, name: &str) -> Vec<Option<f64>> {
    df.column(name).unwrap().f64().unwrap().iter().collect()
}

fn i64s(df: &DataFrame, name: &str) -> Vec<Option<i64>> {
    df.column(name).unwrap().i64().unwrap().iter().collect()
}

fn bools(df: &DataFrame, name: &str) -> Vec<Option<bool>> {
    df.column(name).unwrap().bool().unwrap().iter().collect()
}

/// The numbers in `text`, as printed (digits with an optional decimal part).
fn numbers(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !cur.is_empty() && !cur.contains('.')) {
            cur.push(c);
        } else {
            if !cur.is_empty() {
                let t = cur.trim_end_matches('.');
                out.push(t.parse().unwrap());
            }
            cur.clear();
        }
    }
    out
}

/// What a printed token says, in the row's unit. Independent of the CSV's `value`.
fn value_of(printed: &str, unit: &str) -> f64 {
    // A flag: on (1) unless the post says it was off.
    if unit == "flag" {
        let lower = printed.to_ascii_lowercase();
        return if lower.contains("neither") || lower.ends_with(" off") {
            0.0
        } else {
            1.0
        };
    }
    // bash `time`: 1m4.441s
    if let Some(rest) = printed.strip_suffix('s') {
        if let Some((m, sec)) = rest.split_once('m') {
            if let (Ok(m), Ok(sec)) = (m.parse::<f64>(), sec.parse::<f64>()) {
                return m * 60.0 + sec;
            }
        }
    }
    let text = printed.rsplit_once('=').map_or(printed, |(_, v)| v);
    let lower = text.to_ascii_lowercase();
    let mut v = match numbers(text).last() {
        Some(n) => *n,
        None => [("one", 1.0), ("nine", 9.0)]
            .iter()
            .find(|(w, _)| lower.split_whitespace().any(|t| t == *w))
            .map(|(_, n)| *n)
            .unwrap_or_else(|| panic!("no number in {printed:?}")),
    };
    if lower.contains("million") {
        v *= 1e6;
    }
    if lower.contains("hour") && unit == "min" {
        v *= 60.0;
    }
    v
}

#[test]
fn value_of_reads_the_printed_forms() {
    assert_eq!(value_of("1m4.441s", "s"), 64.441);
    assert_eq!(value_of("0m18.807s", "s"), 18.807);
    assert_eq!(value_of("9.601s", "s"), 9.601);
    assert_eq!(value_of("projid32bit=1", ""), 1.0);
    assert_eq!(value_of("45.6 million", "files"), 45_600_000.0);
    assert_eq!(value_of("about one hour", "min"), 60.0);
    assert_eq!(value_of("{1..1000}", "files"), 1000.0);
    assert_eq!(value_of("~11MB", "MB"), 11.0);
    assert_eq!(value_of("mkfs.ext3 -j", "flag"), 1.0);
    assert_eq!(value_of("flex_bg off", "flag"), 0.0);
    assert_eq!(value_of("neither flex_bg nor uninit_bg", "flag"), 0.0);
}

/// Every row of every dataset: printed in the post, value == printed, source columns.
#[test]
fn every_number_is_in_its_post_with_its_source() {
    let all = published::load_all().unwrap();
    assert_eq!(all.len(), published::list().len());
    let mut checked = 0;
    for (d, df) in &all {
        assert!(df.height() > 0, "{} is empty", d.file);
        for col in published::SOURCE_COLUMNS {
            assert!(df.column(col).is_ok(), "{}: no column {col}", d.file);
        }
        let files = s(df, "source_file");
        let seeds = s(df, "seed");
        let printed = s(df, "printed");
        let has_value = df.column("value").is_ok();
        let values = if has_value { f64s(df, "value") } else { vec![] };
        let units = if has_value { s(df, "unit") } else { vec![] };
        for (i, file) in files.iter().enumerate() {
            assert_eq!(seeds[i], d.seed, "{} row {i}: seed", d.file);
            assert!(
                file.starts_with(&format!("{}_", d.seed)),
                "{} row {i}: source_file {file}",
                d.file
            );
            let text = post(file);
            assert!(!printed[i].is_empty(), "{} row {i}: empty printed", d.file);
            assert!(
                text.contains(&printed[i]),
                "{} row {i}: {:?} is not in {file}",
                d.file,
                printed[i]
            );
            if has_value {
                let v = values[i].unwrap_or_else(|| panic!("{} row {i}: no value", d.file));
                let want = value_of(&printed[i], &units[i]);
                assert!(
                    (v - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{} row {i}: value {v} but the post prints {:?} ({want} {})",
                    d.file,
                    printed[i],
                    units[i]
                );
            }
            checked += 1;
        }
        check_source_headers(d.file, df);
    }
    assert!(checked > 200, "only {checked} rows checked");
}

/// message_id, author and date agree with the post's headers (where it has them).
fn check_source_headers(name: &str, df: &DataFrame) {
    let files = s(df, "source_file");
    let ids = s(df, "message_id");
    let authors = s(df, "author");
    let dates = s(df, "date");
    for i in 0..df.height() {
        let text = post(&files[i]);
        let header = |key: &str| {
            text.lines()
                .take_while(|l| !l.is_empty())
                .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
        };
        match header("Message-ID:") {
            Some(id) => assert_eq!(ids[i], id, "{name} row {i}: message_id"),
            None => assert_eq!(ids[i], "", "{name} row {i}: post has no Message-ID"),
        }
        match header("Date:") {
            Some(d) => {
                let post_date = chrono::DateTime::parse_from_rfc2822(&d).unwrap();
                let csv_date = chrono::DateTime::parse_from_rfc3339(&dates[i])
                    .unwrap_or_else(|e| panic!("{name} row {i}: date {:?}: {e}", dates[i]));
                assert_eq!(post_date, csv_date, "{name} row {i}: date");
                assert_eq!(
                    post_date.offset(),
                    csv_date.offset(),
                    "{name} row {i}: offset"
                );
            }
            None => assert_eq!(dates[i], "", "{name} row {i}: post has no Date"),
        }
        let author = &authors[i];
        let from = header("From:").unwrap_or_else(|| {
            // Seed 000 has no headers: its author line is `["Name" <addr>]`.
            text.lines().nth(2).unwrap_or("").to_string()
        });
        let (who, addr) = author.split_once(" <").unwrap();
        assert!(
            from.contains(who) && from.contains(addr.trim_end_matches('>')),
            "{name} row {i}: author {author:?} vs {from:?}"
        );
    }
}

/// Seed 000: 10 runs × (real, user, sys) per parent= setting, in the post's order, plus
/// the first run of each setting without link=1; every `time` block of the post is here.
#[test]
fn seed_000_runs_in_order_and_complete() {
    let df = published::load("000").unwrap();
    let text = post("000_0b44c8b36c174c98.txt");
    let group = s(&df, "group");
    let quantity = s(&df, "quantity");
    let parent = i64s(&df, "parent");
    let link = bools(&df, "link_op");
    let run = i64s(&df, "run");
    let printed = s(&df, "printed");

    let at = |pat: &str| {
        text.find(pat)
            .unwrap_or_else(|| panic!("{pat:?} not in post"))
    };
    let regions = [
        (0, true, at("# ./dumb.sh 0"), at("# ./dumb.sh 1"), 10),
        (1, true, at("# ./dumb.sh 1"), at("If I remove"), 10),
        (0, false, at("If I remove"), at("and the first parent=1"), 1),
        (1, false, at("and the first parent=1"), text.len(), 1),
    ];
    let mut total = 0;
    for (p, l, start, end, runs) in regions {
        let rows: Vec<usize> = (0..df.height())
            .filter(|&i| group[i] == "fsstress_time" && parent[i] == Some(p) && link[i] == Some(l))
            .collect();
        assert_eq!(rows.len(), runs * 3, "parent={p} link={l}: rows");
        let mut pos = start;
        for (k, &i) in rows.iter().enumerate() {
            assert_eq!(
                run[i],
                Some((k / 3 + 1) as i64),
                "parent={p} link={l} row {k}: run"
            );
            let label = ["real", "user", "sys"][k % 3];
            assert_eq!(quantity[i], format!("{label}_time"));
            let found = text[pos..end]
                .find(&printed[i])
                .unwrap_or_else(|| panic!("{} not after offset {pos} in its block", printed[i]))
                + pos;
            let line_start = text[..found].rfind('\n').map_or(0, |n| n + 1);
            assert_eq!(text[line_start..found].trim(), label, "{}", printed[i]);
            pos = found + printed[i].len();
            total += 1;
        }
        // No `time` output of this block was left out.
        let in_block = text[start..end]
            .lines()
            .filter(|l| l.starts_with("real ") || l.starts_with("user ") || l.starts_with("sys "))
            .count();
        assert_eq!(
            in_block,
            runs * 3,
            "parent={p} link={l}: time lines in the post"
        );
    }
    assert_eq!(total, 66);
    let time_rows = group.iter().filter(|g| *g == "fsstress_time").count();
    assert_eq!(time_rows, 66, "no stray timing rows");

    // Geometry: every `key=number` of each mkfs.xfs output, plus `version 2`.
    for p in [0i64, 1] {
        let start = at(&format!("# ./dumb.sh {p}"));
        let end = start + text[start..].find("Discarding").unwrap();
        let block = &text[start..end];
        let pairs = block
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| {
                t.split_once('=')
                    .is_some_and(|(k, v)| !k.is_empty() && v.parse::<u64>().is_ok())
            })
            .count();
        let rows: Vec<usize> = (0..df.height())
            .filter(|&i| group[i] == "mkfs_geometry" && parent[i] == Some(p))
            .collect();
        assert_eq!(
            rows.len(),
            pairs + 1,
            "parent={p}: geometry rows vs key=value pairs"
        );
        for &i in &rows {
            assert!(block.contains(&printed[i]), "parent={p}: {}", printed[i]);
        }
        let parent_row = rows
            .iter()
            .find(|&&i| quantity[i] == "naming.parent")
            .unwrap();
        assert_eq!(printed[*parent_row], format!("parent={p}"));
    }
}

/// Seed 001: the fsck times and setup, and the block listings range by range.
#[test]
fn seed_001_fsck_and_dir_blocks() {
    let df = published::load("001").unwrap();
    let q = s(&df, "quantity");
    let fs = s(&df, "fs");
    let uninit = bools(&df, "uninit_bg");
    let value = f64s(&df, "value");
    let unit = s(&df, "unit");
    let approx = bools(&df, "approx");
    let find = |quantity: &str, f: &str, u: Option<bool>| {
        let hits: Vec<usize> = (0..df.height())
            .filter(|&i| q[i] == quantity && fs[i] == f && uninit[i] == u)
            .collect();
        assert_eq!(hits.len(), 1, "{quantity} {f} {u:?}");
        hits[0]
    };
    let e3 = find("fsck_time", "ext3", None);
    let e4 = find("fsck_time", "ext4", Some(true));
    let e4n = find("fsck_time", "ext4", Some(false));
    assert_eq!((value[e3], unit[e3].as_str()), (Some(60.0), "min"));
    assert_eq!((value[e4], unit[e4].as_str()), (Some(5.0), "min"));
    assert_eq!((value[e4n], unit[e4n].as_str()), (Some(10.0), "min"));
    assert!([e3, e4, e4n].iter().all(|&i| approx[i] == Some(true)));
    let files = find("file_count", "", None);
    assert_eq!(value[files], Some(45.6e6));
    assert_eq!(value[find("file_size", "", None)], Some(20.0));
    assert_eq!(value[find("subdirectories", "", None)], Some(256.0));
    assert_eq!(value[find("device_size", "", None)], Some(1.0));
    assert_eq!(
        value[find("largest_dir_blocks_total", "ext3", None)],
        Some(4058.0)
    );
    assert_eq!(
        value[find("largest_dir_blocks_total", "ext4", None)],
        Some(5071.0)
    );

    let b = published::load("001-dir-blocks").unwrap();
    let text = post("001_d787de3b9269fe76.txt");
    let bfs = s(&b, "fs");
    let seg = s(&b, "segment");
    let kind = s(&b, "kind");
    let ls = i64s(&b, "logical_start");
    let le = i64s(&b, "logical_end");
    let ps = i64s(&b, "physical_start");
    let pe = i64s(&b, "physical_end");
    let len = i64s(&b, "length");
    let printed = s(&b, "printed");
    // Each printed range is in the post, in order, and its columns say what it prints.
    let mut pos = text.find("BLOCKS:").unwrap();
    for i in 0..b.height() {
        let found = text[pos..].find(&printed[i]).unwrap() + pos;
        pos = found + printed[i].len();
        let (l, p) = printed[i].split_once("):").unwrap();
        let l = l.trim_start_matches('(');
        let range = |r: &str| -> (i64, i64) {
            match r.split_once('-') {
                Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                None => (r.parse().unwrap(), r.parse().unwrap()),
            }
        };
        if l == "IND" {
            assert_eq!(kind[i], "IND");
            assert_eq!((ls[i], le[i]), (None, None));
        } else {
            assert_eq!(kind[i], "data");
            let (a, z) = range(l);
            assert_eq!((ls[i], le[i]), (Some(a), Some(z)), "{}", printed[i]);
        }
        let (a, z) = range(p);
        assert_eq!((ps[i], pe[i]), (Some(a), Some(z)), "{}", printed[i]);
        assert_eq!(len[i], Some(z - a + 1));
        if kind[i] == "data" {
            assert_eq!(le[i].unwrap() - ls[i].unwrap(), z - a, "{}", printed[i]);
        }
    }
    // Every listed range of the post is a row: count `(...):` entries in both listings.
    let listed = |from: &str, to: &str| {
        let a = text.find(from).unwrap();
        let z = a + text[a..].find(to).unwrap();
        text[a..z].matches("):").count()
    };
    let ext3_rows = (0..b.height()).filter(|&i| bfs[i] == "ext3").count();
    let ext4_rows = (0..b.height()).filter(|&i| bfs[i] == "ext4").count();
    assert_eq!(ext3_rows, listed("BLOCKS:", "TOTAL: 4058"));
    let ext4_at = text.find("compared to ext4").unwrap();
    assert_eq!(
        ext4_rows,
        text[ext4_at..]
            .split("TOTAL")
            .next()
            .unwrap()
            .matches("):")
            .count()
    );
    // ext4: two runs covering all 5071 blocks; ext3: head 0..57 and tail 4032..4052.
    assert_eq!(ext4_rows, 2);
    let ext4_len: i64 = (0..b.height())
        .filter(|&i| bfs[i] == "ext4")
        .map(|i| len[i].unwrap())
        .sum();
    assert_eq!(ext4_len, 5071);
    let data_logical = |segment: &str| -> Vec<(i64, i64)> {
        (0..b.height())
            .filter(|&i| bfs[i] == "ext3" && seg[i] == segment && kind[i] == "data")
            .map(|i| (ls[i].unwrap(), le[i].unwrap()))
            .collect()
    };
    for (segment, first, last) in [("head", 0, 57), ("tail", 4032, 4052)] {
        let r = data_logical(segment);
        assert_eq!(r.first().unwrap().0, first, "{segment}");
        assert_eq!(r.last().unwrap().1, last, "{segment}");
        for w in r.windows(2) {
            assert_eq!(w[0].1 + 1, w[1].0, "{segment}: logical blocks contiguous");
        }
    }
}

/// Seed 003: both table rows, six sizes each, in the table's order.
#[test]
fn seed_003_both_table_rows() {
    let df = published::load("003").unwrap();
    let text = post("003_8773119bb119778a.txt");
    let group = s(&df, "group");
    let method = s(&df, "method");
    let size = s(&df, "rtextsize");
    let kib = i64s(&df, "rtextsize_kib");
    let printed = s(&df, "printed");
    let header = text.lines().find(|l| l.starts_with("rtextsize")).unwrap();
    let sizes: Vec<&str> = header.split_whitespace().skip(1).collect();
    assert_eq!(sizes.len(), 6);
    for (m, label) in [
        ("zero_out", "zero out:"),
        ("convert_unwritten", "convert unwritten:"),
    ] {
        let line = text.lines().find(|l| l.starts_with(label)).unwrap();
        let cells: Vec<&str> = line[label.len()..].split_whitespace().collect();
        let rows: Vec<usize> = (0..df.height())
            .filter(|&i| group[i] == "truncate_time" && method[i] == m)
            .collect();
        assert_eq!(rows.len(), cells.len(), "{m}: one row per table cell");
        for (k, &i) in rows.iter().enumerate() {
            assert_eq!(printed[i], cells[k], "{m} column {k}");
            assert_eq!(size[i], sizes[k], "{m} column {k}");
            assert_eq!(
                kib[i],
                Some(sizes[k].trim_end_matches('k').parse().unwrap())
            );
        }
    }
    assert_eq!(group.iter().filter(|g| *g == "truncate_time").count(), 12);
}
