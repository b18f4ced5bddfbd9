//! The published CSV of an import: the post's numbers in the schema of
//! `data/published/*.csv`, plus a `line` column; settings whose name is a typed column of
//! the published loader but whose values do not fit its type are renamed `setting_<name>`.

use super::blocks::BlockRow;
use super::mail::{display_name, Headers};
use super::Row;
use crate::published;

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

// A setting named like a column the published loader types must fit that type
// (`crate::published::{INT_COLUMNS, BOOL_COLUMNS}`); `approx` is one of `FIXED`.
const FIXED: &[&str] = &[
    "seed",
    "group",
    "quantity",
    "value",
    "unit",
    "printed",
    "approx",
    "category",
    "stated_by",
    "note",
    "line",
    "source_file",
    "message_id",
    "author",
    "date",
    "subject",
];

/// The published CSV of the rows, in the schema of `data/published/*.csv` plus `line`.
pub fn csv(rows: &[Row], seed: &str, source_file: &str, headers: &Headers) -> String {
    let mut settings: Vec<String> = Vec::new();
    for r in rows {
        for (k, _) in &r.settings {
            if !settings.contains(k) {
                settings.push(k.clone());
            }
        }
    }
    let column_of = |k: &str| -> String {
        let fits = |f: &dyn Fn(&str) -> bool| {
            rows.iter()
                .flat_map(|r| r.settings.iter())
                .filter(|s| s.0 == k)
                .all(|s| f(&s.1))
        };
        if FIXED.contains(&k)
            || (published::INT_COLUMNS.contains(&k) && !fits(&|v| v.parse::<i64>().is_ok()))
            || (published::BOOL_COLUMNS.contains(&k) && !fits(&|v| v == "true" || v == "false"))
            || k == "approx"
        {
            format!("setting_{k}")
        } else {
            k.to_string()
        }
    };
    let author = headers.from.clone().unwrap_or_default();
    let author_name = display_name(&author);
    let date = headers
        .date
        .as_deref()
        .map(|d| {
            chrono::DateTime::parse_from_rfc2822(d)
                .map(|t| t.to_rfc3339())
                .unwrap_or_else(|_| d.to_string())
        })
        .unwrap_or_default();
    let mut out = String::new();
    let mut head = vec!["seed".to_string(), "group".into(), "quantity".into()];
    head.extend(settings.iter().map(|s| column_of(s)));
    head.extend(
        [
            "value",
            "unit",
            "printed",
            "approx",
            "category",
            "stated_by",
            "note",
            "line",
            "source_file",
            "message_id",
            "author",
            "date",
            "subject",
        ]
        .map(String::from),
    );
    out.push_str(&head.join(","));
    out.push('\n');
    for r in rows {
        let mut f = vec![seed.to_string(), r.group.clone(), r.quantity.clone()];
        for s in &settings {
            f.push(
                r.settings
                    .iter()
                    .find(|x| x.0 == *s)
                    .map(|x| x.1.clone())
                    .unwrap_or_default(),
            );
        }
        f.push(format!("{}", r.value));
        f.push(r.unit.clone());
        f.push(r.printed.clone());
        f.push(r.approx.to_string());
        f.push(r.category.name().to_string());
        f.push(
            r.stated_by
                .clone()
                .map_or_else(|| author_name.clone(), |s| format!("{s} (quoted)")),
        );
        f.push(r.note.clone());
        f.push(r.line.to_string());
        f.push(source_file.to_string());
        f.push(headers.message_id.clone().unwrap_or_default());
        f.push(author.clone());
        f.push(date.clone());
        f.push(headers.subject.clone().unwrap_or_default());
        out.push_str(&f.iter().map(|x| csv_field(x)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// The block listings' CSV, in the schema of `data/published/001_dir_blocks.csv` plus
/// `line`: one row per listed range.
pub fn blocks_csv(rows: &[BlockRow], seed: &str, source_file: &str, headers: &Headers) -> String {
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    let date = headers
        .date
        .as_deref()
        .map(|d| {
            chrono::DateTime::parse_from_rfc2822(d)
                .map(|t| t.to_rfc3339())
                .unwrap_or_else(|_| d.to_string())
        })
        .unwrap_or_default();
    let mut out = String::from("seed,fs,segment,entry,kind,logical_start,logical_end,physical_start,physical_end,length,printed,source_file,message_id,author,date,line\n");
    for r in rows {
        let f = [
            seed.to_string(),
            r.fs.clone(),
            r.segment.to_string(),
            r.entry.to_string(),
            r.kind.clone(),
            opt(r.logical_start),
            opt(r.logical_end),
            opt(r.physical_start),
            opt(r.physical_end),
            opt(r.length),
            r.printed.clone(),
            source_file.to_string(),
            headers.message_id.clone().unwrap_or_default(),
            headers.from.clone().unwrap_or_default(),
            date.clone(),
            r.line.to_string(),
        ];
        out.push_str(&f.iter().map(|x| csv_field(x)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{csv, Headers, Row};

    #[test]
    fn csv_quotes_and_renames_typed_settings() {
        let row = Row {
            line: 3,
            group: "table".into(),
            quantity: "time".into(),
            settings: vec![
                ("run".into(), "first".into()),
                ("row".into(), "a, b".into()),
            ],
            value: 1.5,
            unit: "s".into(),
            printed: "1.5s".into(),
            approx: false,
            category: crate::import::Category::Measurement,
            stated_by: None,
            note: "say \"hi\"".into(),
        };
        let c = csv(&[row], "x", "f.txt", &Headers::default());
        let head = c.lines().next().unwrap();
        assert!(head.starts_with("seed,group,quantity,setting_run,row,value"));
        assert!(c.contains("\"a, b\""));
        assert!(c.contains("\"say \"\"hi\"\"\""));
    }
}
