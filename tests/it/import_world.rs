//! `fslab import` on real posts the way people write them, none of them a seed: result
//! tables with their units in the header or in the cells, a header's first cell naming the
//! rows, a note printed after a cell, captions that give the unit, prose numbers. Each test
//! checks the values that matter in its post, with their labels, units and lines.

use super::import::{draft_of, outside};
use fslab::import::Draft;

/// The row at `line` whose settings include all of `with`.
fn cell<'a>(d: &'a Draft, line: usize, with: &[(&str, &str)]) -> &'a fslab::import::Row {
    d.rows
        .iter()
        .find(|r| {
            r.line == line
                && with
                    .iter()
                    .all(|(k, v)| r.settings.iter().any(|s| s.0 == *k && s.1 == *v))
        })
        .unwrap_or_else(|| {
            panic!(
                "no row at line {line} with {with:?}: {:#?}",
                d.rows
                    .iter()
                    .map(|r| (r.line, r.value, r.unit.clone(), r.settings.clone()))
                    .collect::<Vec<_>>()
            )
        })
}

/// The bfq commit: `Idling  iops  avg-lat(us)  stddev  bw` heads rows `On`/`Off`. `Idling`
/// names the rows (`Idling=On`), the other header cells are the columns; `iops` gives its
/// column the unit IOPS, `avg-lat(us)` gives us, the cells' own `MB/s` stays.
#[test]
fn outside_table_whose_first_header_cell_names_the_rows() {
    let text = outside("bfq-iops-mode-fio-table.txt");
    let (d, e) = draft_of(&text);
    for (line, table, idling, iops, lat, bw) in [
        (22, "RandomReads", "On", 4136.0, 1189.07, 16.9),
        (23, "RandomReads", "Off", 7246.0, 670.11, 29.7),
        (35, "RandomWrites", "On", 1368.0, 3631.38, 5.47),
        (36, "RandomWrites", "Off", 4746.0, 1024.61, 19.4),
    ] {
        let at = |col: &str| {
            cell(
                &d,
                line,
                &[("table", table), ("Idling", idling), ("column", col)],
            )
        };
        assert_eq!((at("iops").value, at("iops").unit.as_str()), (iops, "IOPS"));
        assert_eq!(
            (at("avg-lat(us)").value, at("avg-lat(us)").unit.as_str()),
            (lat, "us")
        );
        assert_eq!((at("bw").value, at("bw").unit.as_str()), (bw, "MB/s"));
        assert!(
            !d.rows
                .iter()
                .any(|r| r.line == line
                    && r.settings.iter().any(|s| s.1 == "iops" && s.0 == "Idling")),
            "`Idling` names the rows, not the columns"
        );
    }
    // the two fio commands differ only in --rw: the matrix
    assert_eq!(e.def.matrix.len(), 1, "{:?}", e.def.matrix);
}

/// Liu Bo's btrfs commit: a header with no first cell and multi-word columns
/// (`w/o (orig)   w/ (josef's)   w/ (this)`) over `SATA 104KB/s …` and `ramdisk 1.5MB/s …
/// 10.7MB/s (613%)`: one table of two rows; `(613%)` is a note on its cell, not a column,
/// and `104KB/s` above `1.5MB/s` is a row like it, not a header.
#[test]
fn outside_table_with_a_note_after_a_cell() {
    let text = outside("btrfs-fsync-filter-extents-table.txt");
    let (d, e) = draft_of(&text);
    assert!(format!("{:?}", e.def.workload.run).contains("oflag=sync"));
    for (line, row, col, v, unit) in [
        (26, "SATA", "w/o (orig)", 104.0, "KB/s"),
        (26, "SATA", "w/ (josef's)", 109.0, "KB/s"),
        (26, "SATA", "w/ (this)", 121.0, "KB/s"),
        (27, "ramdisk", "w/o (orig)", 1.5, "MB/s"),
        (27, "ramdisk", "w/ (this)", 10.7, "MB/s"),
    ] {
        let r = cell(&d, line, &[("row", row), ("column", col)]);
        assert_eq!((r.value, r.unit.as_str()), (v, unit), "{row} {col}");
    }
    let note = cell(&d, 27, &[("row", "ramdisk"), ("of", "10.7MB/s")]);
    assert_eq!((note.value, note.unit.as_str()), (613.0, "%"));
    assert_eq!(
        d.rows.iter().filter(|r| r.group == "table").count(),
        7,
        "six cells and one note"
    );
}

/// Jan Kara's jbd commit: `Before`/`After` columns of bare numbers; the captions give the
/// units (`… in us:` → us, `(fsyncs/s)` → /s), `Average:` below the first table is its
/// summary row, and "Top 10 times (out of 90)" is no ratio of 10x.
#[test]
fn outside_captions_give_the_units_of_bare_cells() {
    let text = outside("jbd-commit-writeout-before-after-columns.txt");
    let (d, e) = draft_of(&text);
    assert!(format!("{:?}", e.def.workload.run).contains("{{fs_mark}} -n 100 -t 1 -s 16384"));
    for (line, col, v) in [
        (17, "Before", 2131586.0),
        (17, "After", 697473.0),
        (26, "After", 172278.0),
    ] {
        let r = cell(&d, line, &[("column", col)]);
        assert_eq!((r.value, r.unit.as_str()), (v, "us"), "line {line} {col}");
    }
    for (col, v) in [("Before", 619377.0), ("After", 82180.0)] {
        let r = cell(&d, 29, &[("row", "Average"), ("column", col)]);
        assert_eq!((r.value, r.unit.as_str()), (v, "us"));
        assert_eq!(r.group, "table");
    }
    for (line, col, v) in [(38, "Before", 9.9), (38, "After", 6.3), (41, "After", 6.1)] {
        let r = cell(&d, line, &[("column", col)]);
        assert_eq!((r.value, r.unit.as_str()), (v, "/s"), "line {line} {col}");
    }
    assert!(d
        .claims
        .iter()
        .any(|c| c.line == 43 && c.quote.contains("fsync performance seems unharmed")));
    assert!(
        !d.rows.iter().any(|r| r.line == 15 && r.unit == "x"),
        "\"Top 10 times\" is no ratio: {:?}",
        d.rows.iter().filter(|r| r.line == 15).collect::<Vec<_>>()
    );
}

/// A `|` table whose header takes four lines (`| Filesystem | Copy Sources |` / `| |
/// Across |` / `| | Partitions |` / `| | (seconds) |`): merged column by column, the units
/// at the bottom give each column its unit, `Filesystem` names the rows, `73+` is 73 and
/// approximate, `X` is no number.
#[test]
fn outside_pipe_table_with_a_header_of_several_lines() {
    let text = outside("phoronix-forum-fs-table-units-in-header.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.txt")).expect("imports");
    let copy = "Copy Sources Across Partitions (seconds)";
    let usage = "Disk Usage Usage (MB)";
    let delete = "Delete All (seconds)";
    for (line, fs, col, v, unit) in [
        (12, "REISER4", copy, 148.0, "s"),
        (12, "REISER4", usage, 692.0, "MB"),
        (14, "NTFS", copy, 781.0, "s"),
        (16, "XFS", delete, 57.0, "s"),
        (16, "XFS", "Untar & Unzip Sources (seconds)", 91.0, "s"),
    ] {
        let r = cell(&d, line, &[("Filesystem", fs), ("column", col)]);
        assert_eq!(
            (r.value, r.unit.as_str(), r.approx),
            (v, unit, false),
            "{fs} {col}"
        );
    }
    let r = cell(&d, 13, &[("Filesystem", "NTFS-3g"), ("column", delete)]);
    assert_eq!((r.value, r.printed.as_str(), r.approx), (73.0, "73+", true));
    // NTFS's three `X` cells are no numbers
    assert_eq!(d.rows.iter().filter(|r| r.line == 14).count(), 3);
    assert_eq!(d.rows.iter().filter(|r| r.group == "table").count(), 27);
}

/// Chris Mason's raid56 commit: the command follows "Example on flash:" in a sentence, with
/// dd's `if=`/`of=`/`bs=` operands; each result line names its row, one before ` -- `, the
/// other with no separator (`With the stripe cache 21MB/s`).
#[test]
fn outside_result_lines_named_without_a_colon() {
    let text = outside("btrfs-raid56-stripe-cache-dd.txt");
    let (d, e) = draft_of(&text);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("if=/dev/zero of={{mnt}}/xxx bs=4K oflag=direct"),
        "the host path /mnt/xxx becomes the point's own mount: {w}"
    );
    // ... of a declared device, made with the filesystem the post names
    assert!(e.def.devices.contains_key("data"), "{:?}", e.def.devices);
    let setup = format!("{:?}", e.def.setup);
    assert!(setup.contains("mkfs.btrfs"), "{setup}");
    for (line, row, v) in [
        (16, "Without the stripe cache", 2.1),
        (17, "With the stripe cache", 21.0),
    ] {
        let r = cell(&d, line, &[("row", row)]);
        assert_eq!((r.value, r.unit.as_str()), (v, "MB/s"), "{row}");
    }
    assert!(d.claims.iter().any(|c| c
        .quote
        .starts_with("This provides a substantial boost in performance")));
}

/// Ming Lei's blk-mq commit: `- throughput: +70% in case of …`: the list mark is no part of
/// the row's label.
#[test]
fn outside_list_items_name_their_row_without_the_mark() {
    let text = outside("blk-mq-flush-throughput-percent.txt");
    let (d, _) = draft_of(&text);
    for (line, v) in [(15, 70.0), (16, 30.0)] {
        let r = cell(&d, line, &[("row", "throughput")]);
        assert_eq!((r.value, r.unit.as_str()), (v, "%"));
    }
}

/// Darrick Wong's reply quoting a report two deep: the commands broken by the mailer after
/// `-l` and `-o` are whole again, the mkfs.xfs output with `blks` on a line of its own is
/// read whole (the device's size from its data blocks), the kernel log lines give no
/// numbers, and "with fs_mark, fio and ffsb" is no feature flag.
#[test]
fn outside_reply_with_commands_broken_by_the_mailer() {
    let text = outside("fsdevel-hot-track-reply-quoted-setup.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.eml")).expect("imports");
    let yaml = d.yaml.as_deref().expect("a draft");
    assert!(
        yaml.contains("mkfs.xfs -f -l size=1310b,sunit=8 {{dev.data}}"),
        "{yaml}"
    );
    assert!(
        yaml.contains("mount -o loop,logbsize=256k /home/zwu/bdev.img /mnt/scratch"),
        "{yaml}"
    );
    assert!(yaml.contains("data: { size: \"2000MiB\" }"), "{yaml}");
    for (line, q, v) in [
        (36, "data.bsize", 4096.0),
        (36, "data.blocks", 512000.0),
        (39, "log.blocks", 1310.0),
        (41, "realtime.extsz", 4096.0),
    ] {
        assert!(
            d.rows
                .iter()
                .any(|r| r.line == line && r.quantity == q && r.value == v),
            "{q} = {v} at line {line}"
        );
    }
    assert!(!d.rows.iter().any(|r| r.line == 47 || r.line == 48));
    assert!(!d.rows.iter().any(|r| r.unit == "flag"));
    let r = cell(&d, 8, &[("change", "after")]);
    assert_eq!((r.value, r.unit.as_str()), (322.0, "transactions/s"));
}

/// Corrado Zoccolo's RFC as lore's thread page: its subject, author and date are read off
/// the page, the page's furniture gives no numbers, and the prose changes keep their units
/// (`from 7.667s to 1.728`: the second is seconds too), what changed (`of: bandwidth`) and
/// the list item they are under (`case: 32 concurrent processes performing random reads`).
#[test]
fn outside_lore_thread_page_with_prose_changes() {
    let text = outside("cfq-slice-prose-from-to.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.txt")).expect("imports");
    assert_eq!(
        d.headers.subject.as_deref(),
        Some("[RFC] cfq: adapt slice to number of processes doing I/O")
    );
    assert_eq!(d.headers.from.as_deref(), Some("Corrado Zoccolo"));
    assert_eq!(d.headers.date.as_deref(), Some("2009-09-03 11:07 UTC"));
    assert!(d.rows.iter().all(|r| r.line > 10), "{:?}", d.rows);
    let random = "32 concurrent processes performing random reads";
    let sequential = "32 concurrent processes performing sequential reads";
    for (line, case, of, when, v, unit) in [
        (22, random, "bandwidth", "before", 466.0, "KB/s"),
        (22, random, "bandwidth", "after", 477.0, "KB/s"),
        (23, random, "maximum latency", "before", 7.667, "s"),
        (23, random, "maximum latency", "after", 1.728, "s"),
        (25, sequential, "bandwidth", "after", 24393.0, "KB/s"),
        (26, sequential, "maximum latency", "after", 1.115, "s"),
    ] {
        // each change says what changed, and in which of the two tests (the item above)
        let r = cell(&d, line, &[("case", case), ("of", of), ("change", when)]);
        assert_eq!((r.value, r.unit.as_str()), (v, unit), "line {line} {when}");
    }
}

/// Eric Sandeen's ext2 patch: "from about 2200/s to about 2500/s, about a 14%
/// improvement": all three numbers keep `approx`, "about a" included in `printed`.
#[test]
fn outside_prose_numbers_hedged_with_about_a() {
    let text = outside("ext2-create-speedup-prose.txt");
    let (d, e) = draft_of(&text);
    assert!(e.def.tools.contains_key("bonnie"));
    let at13: Vec<(f64, &str, bool, &str)> = d
        .rows
        .iter()
        .filter(|r| r.line == 13)
        .map(|r| (r.value, r.unit.as_str(), r.approx, r.printed.as_str()))
        .collect();
    assert_eq!(
        at13,
        [
            (2200.0, "/s", true, "about 2200/s"),
            (2500.0, "/s", true, "about 2500/s"),
            (14.0, "%", true, "about a 14%"),
        ]
    );
    assert!(d
        .claims
        .iter()
        .any(|c| c.quote.contains("about a 14% improvement")));
}
