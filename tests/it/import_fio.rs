//! `fslab import` on fio's normal output beyond its `read:`/`write:` lines: the latency
//! statistics (`slat`, `clat`, `lat`, the fsync section's `sync`), the percentile blocks
//! and the statistics of the samples (`bw`, `iops`), each number a row with its job,
//! direction, statistic or percentile, its unit as printed and its line; the latency
//! distribution is reported, not read. Checked on a real mail (fio 3.12, sent
//! quoted-printable with non-breaking spaces) and on fio 2 and fio 3 outputs.

use super::import::{note_at, outside};
use fslab::import::{NoteKind, Row};

fn s(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// The row at `line` whose `printed` is `printed` (and quantity `q`): value, unit, settings.
fn row(rows: &[Row], line: usize, q: &str, printed: &str) -> (f64, String, Vec<(String, String)>) {
    rows.iter()
        .find(|r| r.line == line && r.quantity == q && r.printed == printed)
        .map(|r| (r.value, r.unit.clone(), r.settings.clone()))
        .unwrap_or_else(|| {
            panic!(
                "no {q} `{printed}` at line {line}: {:#?}",
                rows.iter()
                    .filter(|r| r.line == line)
                    .map(|r| (&r.quantity, &r.printed))
                    .collect::<Vec<_>>()
            )
        })
}

/// Adriano Silva's mail to linux-bcache (26 May 2022), real: two runs of fio 3.12 pasted
/// from a terminal, its runs of spaces sent as non-breaking spaces in quoted-printable.
/// Every latency, percentile and sample number is a row of job `journal-test`, direction
/// `write`, with its statistic or percentile, in the unit fio printed (`nsec` → `ns`,
/// `usec` → `us`; `1238.6k` is 1238600); the fsync section's `sync` rows have no
/// direction; the latency distribution is a message, not rows; fio's own lines before the
/// results (`Jobs: 1 (f=1): [w(1)][100.0%][w=1047KiB/s]…`) and `sync (nsec):` are neither
/// prose numbers nor commands. Values listed by hand from reading the post.
#[test]
fn outside_fio_3_latencies_percentiles_and_samples() {
    let text = outside("bcache-fio3-nvme-percentiles.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.eml")).expect("imports");
    let base = vec![s("direction", "write"), s("job", "journal-test")];
    let with = |k: &str, v: &str| {
        let mut b = base.clone();
        b.push(s(k, v));
        b
    };
    let r = |line, q, p| row(&d.rows, line, q, p);
    // the direction line, as before
    assert_eq!(
        r(42, "iops", "IOPS=2087"),
        (2087.0, "IOPS".into(), base.clone())
    );
    // latencies: each statistic in the unit printed
    assert_eq!(
        r(44, "slat", "min=3338"),
        (3338.0, "ns".into(), with("statistic", "min"))
    );
    assert_eq!(
        r(46, "clat", "avg=453.85"),
        (453.85, "us".into(), with("statistic", "avg"))
    );
    assert_eq!(
        r(48, "lat", "stdev=27.79"),
        (27.79, "us".into(), with("statistic", "stdev"))
    );
    assert_eq!(
        r(117, "clat", "max=1238.6k"),
        (1238600.0, "ns".into(), with("statistic", "max"))
    );
    // the percentile block, wrapped over five lines (and quoted-printable soft breaks)
    let pct: Vec<(usize, String, f64)> = d
        .rows
        .iter()
        .filter(|r| r.quantity == "clat_percentile" && r.line < 100)
        .map(|r| {
            let p = r.settings.iter().find(|s| s.0 == "percentile").unwrap();
            (r.line, p.1.clone(), r.value)
        })
        .collect();
    assert_eq!(pct.len(), 17, "{pct:?}");
    assert_eq!(pct[0], (51, "1.00".into(), 404.0));
    assert_eq!(pct[12], (57, "99.00".into(), 494.0));
    assert_eq!(pct[16], (59, "99.99".into(), 914.0));
    assert_eq!(
        r(59, "clat_percentile", "99.99th=[\u{a0} 914]"),
        (914.0, "us".into(), with("percentile", "99.99"))
    );
    // the sample statistics
    assert_eq!(
        r(60, "bandwidth_samples", "avg=1044.22"),
        (1044.22, "KiB/s".into(), with("statistic", "avg"))
    );
    assert_eq!(
        r(60, "bandwidth_samples", "per=100.00%"),
        (100.0, "%".into(), with("statistic", "per"))
    );
    assert_eq!(
        r(62, "iops_samples", "min= 2066"),
        (2066.0, "IOPS".into(), with("statistic", "min"))
    );
    assert_eq!(
        r(134, "iops_samples", "samples=9"),
        (9.0, String::new(), with("statistic", "samples"))
    );
    // the fsync section: the job's, no direction's
    assert_eq!(
        r(67, "sync", "avg=279.19"),
        (
            279.19,
            "ns".into(),
            vec![s("job", "journal-test"), s("statistic", "avg")]
        )
    );
    assert!(d
        .rows
        .iter()
        .any(|r| r.quantity == "sync_percentile" && r.line == 70));
    // the distribution: said, not read
    note_at(&d, 64, NoteKind::Unmapped, "latency distribution");
    for l in [64, 65, 136, 137, 138, 139] {
        assert!(!d.rows.iter().any(|r| r.line == l), "line {l}");
    }
    // fio's lines before its results are no prose numbers; `sync (nsec)` is no command
    for l in [35, 36, 37, 38, 39, 106, 108, 110] {
        assert!(
            !d.rows.iter().any(|r| r.line == l),
            "line {l}: {:#?}",
            d.rows.iter().filter(|r| r.line == l).collect::<Vec<_>>()
        );
    }
    let yaml = d.yaml.as_deref().unwrap();
    assert!(!yaml.contains("sync (nsec)"), "{yaml}");
    assert!(!d
        .notes
        .iter()
        .any(|n| n.line == 67 && n.what.contains("step")));
}

/// fio 2.0.15's normal output (cloudbench's test, real): `clat (usec): min=560 , …` with
/// fio 2's spaces, its percentile block, `bw (KB/s)  :` and the distribution lines.
#[test]
fn fio_2_latencies_and_percentiles() {
    let out = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/world/fio/fio-2.0.15-normal-cloudbench.txt"),
    )
    .unwrap();
    let post = format!("Subject: fio 2 numbers\n\nThe run:\n\n{out}");
    let d = fslab::import::import(post.as_bytes(), Some("post.txt")).expect("imports");
    let job =
        |dir: &str, k: &str, v: &str| vec![s("direction", dir), s("job", "16k-1-read"), s(k, v)];
    // post lines: four before the output's
    let r = |line, q, p| row(&d.rows, line, q, p);
    assert_eq!(
        r(11, "clat", "min=560"),
        (560.0, "us".into(), job("read", "statistic", "min"))
    );
    assert_eq!(
        r(12, "lat", "avg=711.35"),
        (711.35, "us".into(), job("read", "statistic", "avg"))
    );
    assert_eq!(
        r(18, "clat_percentile", "99.99th=[ 3280]"),
        (3280.0, "us".into(), job("read", "percentile", "99.99"))
    );
    assert_eq!(
        r(19, "bandwidth_samples", "avg=7745.68"),
        (7745.68, "KB/s".into(), job("read", "statistic", "avg"))
    );
    assert_eq!(
        r(21, "clat", "max=6044"),
        (6044.0, "us".into(), job("write", "statistic", "max"))
    );
    assert_eq!(
        r(24, "clat_percentile", "1.00th=[ 1128]"),
        (1128.0, "us".into(), job("write", "percentile", "1.00"))
    );
    let pct = d
        .rows
        .iter()
        .filter(|r| r.quantity == "clat_percentile")
        .count();
    assert_eq!(pct, 34);
    note_at(&d, 30, NoteKind::Unmapped, "latency distribution");
    assert!(!d.rows.iter().any(|r| r.line == 30 || r.line == 31));
}

/// fio 3.33's normal output (made here): two jobs, reads and writes, `clat (usec)` and
/// `lat (usec)` per direction, percentiles under each.
#[test]
fn fio_3_latencies_of_two_jobs_and_directions() {
    let out = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/world/fio/fio-3.33-normal.txt"),
    )
    .unwrap();
    let post = format!("Subject: fio 3 numbers\n\nThe run:\n\n{out}");
    let d = fslab::import::import(post.as_bytes(), Some("post.txt")).expect("imports");
    let r = |line, q, p| row(&d.rows, line, q, p);
    let set =
        |job: &str, dir: &str, k: &str, v: &str| vec![s("direction", dir), s("job", job), s(k, v)];
    assert_eq!(
        r(16, "clat", "stdev=999.65"),
        (
            999.65,
            "us".into(),
            set("randrw", "read", "statistic", "stdev")
        )
    );
    assert_eq!(
        r(23, "clat_percentile", "99.99th=[10421]"),
        (
            10421.0,
            "us".into(),
            set("randrw", "read", "percentile", "99.99")
        )
    );
    assert_eq!(
        r(26, "lat", "max=11978"),
        (
            11978.0,
            "us".into(),
            set("randrw", "write", "statistic", "max")
        )
    );
    assert_eq!(
        r(48, "clat_percentile", "50.00th=[   58]"),
        (
            58.0,
            "us".into(),
            set("seqwrite", "write", "percentile", "50.00")
        )
    );
    let n = |q: &str| d.rows.iter().filter(|r| r.quantity == q).count();
    assert_eq!((n("clat"), n("lat"), n("clat_percentile")), (12, 12, 51));
}

/// Damien Le Moal's reply on linux-block (23 Jun 2022), real: fio 3.30's output of a
/// random read job that gives 10% of its I/Os the RT class. The per-priority lines are
/// rows like the others, labelled with the priority (`prio` as printed, `prio_class` by
/// name): `clat prio 1/0 (msec): …` gives `clat` statistics, and each `clat prio 0/0
/// (89.99% of IOs) percentiles (msec):` block gives the share of the I/Os (`io_share`) and
/// `clat_percentile` rows; the all-I/O block keeps no priority. No line of the output is
/// a "not mapped" message or a prose number. Values listed by hand from the post.
#[test]
fn outside_fio_3_30_clat_prio_lines() {
    let text = outside("block-ioprio-fio-clat-prio.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.eml")).expect("imports");
    let base = vec![s("direction", "read"), s("job", "randread")];
    let with = |prio: Option<(&str, &str)>, k: &str, v: &str| {
        let mut b = base.clone();
        if let Some((p, c)) = prio {
            b.push(s("prio", p));
            b.push(s("prio_class", c));
        }
        b.push(s(k, v));
        b
    };
    let r = |line, q, p| row(&d.rows, line, q, p);
    let none = Some(("0/0", "none"));
    let rt = Some(("1/0", "rt"));
    assert_eq!(
        r(43, "clat", "avg=171.68"),
        (171.68, "ms".into(), with(none, "statistic", "avg"))
    );
    assert_eq!(
        r(44, "clat", "stdev= 5.93"),
        (5.93, "ms".into(), with(rt, "statistic", "stdev"))
    );
    assert_eq!(
        r(44, "clat", "max=166"),
        (166.0, "ms".into(), with(rt, "statistic", "max"))
    );
    // the all-I/O percentiles, then each priority's
    assert_eq!(
        r(50, "clat_percentile", "99.99th=[  885]"),
        (885.0, "ms".into(), with(None, "percentile", "99.99"))
    );
    assert_eq!(
        r(51, "io_share", "89.99% of IOs"),
        (89.99, "%".into(), with(none, "statistic", "share"))
    );
    assert_eq!(
        r(57, "io_share", "10.01% of IOs"),
        (10.01, "%".into(), with(rt, "statistic", "share"))
    );
    assert_eq!(
        r(62, "clat_percentile", "99.99th=[  167]"),
        (167.0, "ms".into(), with(rt, "percentile", "99.99"))
    );
    assert_eq!(
        r(56, "clat_percentile", "99.99th=[  885]"),
        (885.0, "ms".into(), with(none, "percentile", "99.99"))
    );
    let prio_pct = |p: Option<(&str, &str)>| {
        d.rows
            .iter()
            .filter(|x| {
                x.quantity == "clat_percentile"
                    && p.is_none_or(|(v, _)| x.settings.contains(&s("prio", v)))
                    && (p.is_some() || !x.settings.iter().any(|k| k.0 == "prio"))
            })
            .count()
    };
    assert_eq!((prio_pct(None), prio_pct(none), prio_pct(rt)), (17, 17, 17));
    let stray: Vec<&Row> = d
        .rows
        .iter()
        .filter(|x| (38..=62).contains(&x.line) && x.group != "fio")
        .collect();
    assert!(stray.is_empty(), "{stray:#?}");
    assert!(
        !d.notes
            .iter()
            .any(|n| (38..=62).contains(&n.line) && n.kind == NoteKind::Unmapped),
        "{:#?}",
        d.notes
    );
}

/// fio 3.29's normal output of two `cmdprio_percentage` jobs (made here, see
/// tests/fixtures/world/fio/SOURCE): fio before 3.30 printed two priorities, `high` and
/// `low`: `high prio_clat (nsec): …` (`high prio_lat` with `lat_percentiles=1`) and
/// `high prio (19.97%) clat percentiles (usec):` blocks. They are rows like fio 3.30's
/// `clat prio 1/0` ones, with `prio` as fio printed it (`high`, `low`) and no
/// `prio_class` (fio named none); the share of the I/Os is an `io_share` row. The lines
/// after them keep their direction, and none of them is a "not mapped" message. Values
/// listed by hand from the fixture.
#[test]
fn fio_3_29_high_and_low_prio_lines() {
    let out = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/world/fio/fio-3.29-normal-cmdprio.txt"),
    )
    .unwrap();
    // post lines: four before the output's
    let post = format!("Subject: fio 3.29 cmdprio\n\nThe run:\n\n{out}");
    let d = fslab::import::import(post.as_bytes(), Some("post.txt")).expect("imports");
    let r = |line, q, p| row(&d.rows, line, q, p);
    let set = |job: &str, dir: &str, prio: Option<&str>, k: &str, v: &str| {
        let mut b = vec![s("direction", dir), s("job", job)];
        if let Some(p) = prio {
            b.push(s("prio", p));
        }
        b.push(s(k, v));
        b
    };
    assert_eq!(
        r(16, "clat", "max=6028.4k"),
        (
            6028400.0,
            "ns".into(),
            set("mixed", "read", Some("high"), "statistic", "max")
        )
    );
    assert_eq!(
        r(17, "clat", "avg=141496.04"),
        (
            141496.04,
            "ns".into(),
            set("mixed", "read", Some("low"), "statistic", "avg")
        )
    );
    assert_eq!(
        r(24, "io_share", "19.97%"),
        (
            19.97,
            "%".into(),
            set("mixed", "read", Some("high"), "statistic", "share")
        )
    );
    assert_eq!(
        r(29, "clat_percentile", "99.99th=[ 5669]"),
        (
            5669.0,
            "us".into(),
            set("mixed", "read", Some("high"), "percentile", "99.99")
        )
    );
    assert_eq!(
        r(30, "io_share", "80.03%"),
        (
            80.03,
            "%".into(),
            set("mixed", "read", Some("low"), "statistic", "share")
        )
    );
    // the lines after the blocks keep their direction line
    assert_eq!(
        r(36, "bandwidth_samples", "avg=165007.80"),
        (
            165007.8,
            "KiB/s".into(),
            set("mixed", "read", None, "statistic", "avg")
        )
    );
    assert_eq!(
        r(43, "clat", "avg=161.07"),
        (
            161.07,
            "us".into(),
            set("mixed", "write", Some("low"), "statistic", "avg")
        )
    );
    assert_eq!(
        r(56, "io_share", "79.82%"),
        (
            79.82,
            "%".into(),
            set("mixed", "write", Some("low"), "statistic", "share")
        )
    );
    // `lat_percentiles=1`: the priorities' total latency
    assert_eq!(
        r(79, "lat", "avg=113.67"),
        (
            113.67,
            "us".into(),
            set("lat", "read", Some("high"), "statistic", "avg")
        )
    );
    assert_eq!(
        r(100, "lat_percentile", "1.00th=[   72]"),
        (
            72.0,
            "us".into(),
            set("lat", "read", Some("low"), "percentile", "1.00")
        )
    );
    let count = |q: &str, job: &str, dir: &str, prio: Option<&str>| {
        d.rows
            .iter()
            .filter(|x| {
                x.quantity == q
                    && x.settings.contains(&s("job", job))
                    && x.settings.contains(&s("direction", dir))
                    && match prio {
                        Some(p) => x.settings.contains(&s("prio", p)),
                        None => !x.settings.iter().any(|k| k.0 == "prio"),
                    }
            })
            .count()
    };
    for dir in ["read", "write"] {
        for p in [None, Some("high"), Some("low")] {
            assert_eq!(count("clat_percentile", "mixed", dir, p), 17, "{dir} {p:?}");
            assert_eq!(count("io_share", "mixed", dir, p), usize::from(p.is_some()));
        }
        for p in ["high", "low"] {
            assert_eq!(count("clat", "mixed", dir, Some(p)), 4, "{dir} {p}");
        }
    }
    for p in [None, Some("high"), Some("low")] {
        assert_eq!(count("lat_percentile", "lat", "read", p), 17, "{p:?}");
    }
    // fio named no class before 3.30: none is guessed
    assert!(!d
        .rows
        .iter()
        .any(|x| x.settings.iter().any(|k| k.0 == "prio_class")));
    // no line of the output is a prose number or a "not mapped" priority line
    let stray: Vec<&Row> = d.rows.iter().filter(|x| x.group != "fio").collect();
    assert!(stray.is_empty(), "{stray:#?}");
    assert!(
        !d.notes
            .iter()
            .any(|n| n.kind == NoteKind::Unmapped && n.what.contains("prio")),
        "{:#?}",
        d.notes
    );
}

/// Lines of fio's priority forms that cannot be read (made up from the forms above): each
/// is a "not mapped" message at its line, a percentile block whose head cannot be read
/// gives no rows from its `|` lines, and the lines after keep their direction line.
#[test]
fn unreadable_fio_priority_lines_are_said_not_guessed() {
    let post = r#"Subject: fio

The run:

t: (groupid=0, jobs=1): err= 0: pid=1: Thu Dec  3 06:53:15 2026
  read: IOPS=40.2k, BW=157MiB/s (165MB/s)(471MiB/3001msec)
    medium prio_clat (nsec): min=134, max=15532k, avg=141496.04, stdev=422110.19
    high prio (lots) clat percentiles (usec):
     |  1.00th=[   23],  5.00th=[   28], 10.00th=[   33], 20.00th=[   42],
     | 99.99th=[ 5669]
   bw (  KiB/s): min=127944, max=181728, per=100.00%, avg=165007.80, stdev=22457.91, samples=5
"#;
    let d = fslab::import::import(post.as_bytes(), Some("post.txt")).expect("imports");
    note_at(&d, 7, NoteKind::Unmapped, "medium prio_clat");
    note_at(&d, 8, NoteKind::Unmapped, "high prio (lots) clat");
    for l in [7, 8, 9, 10] {
        assert!(
            !d.rows.iter().any(|r| r.line == l),
            "line {l}: {:#?}",
            d.rows
        );
    }
    assert_eq!(
        row(&d.rows, 11, "bandwidth_samples", "avg=165007.80"),
        (
            165007.8,
            "KiB/s".into(),
            vec![s("direction", "read"), s("job", "t"), s("statistic", "avg")]
        )
    );
}

/// Chengming Zhou's null_blk commit message (see the fixture's SOURCE), real: "about 3.6%
/// improvement in IOPS … from 1.09M to 1.13M" gave two sizes of 1.09 and 1.13 MiB. In a
/// sentence about IOPS the ends of a "from X to Y" with fio's bare `k`/`M`/`G` suffix are
/// IOPS counts (×1000 each) and a before/after change; the percent stays a claim number.
#[test]
fn outside_iops_with_si_suffix_in_prose() {
    let text = outside("null-blk-queue-rqs-iops.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.txt")).expect("imports");
    type Got<'a> = (usize, f64, &'a str, &'a str, Vec<(String, String)>);
    let got: Vec<Got> = d
        .rows
        .iter()
        .map(|r| {
            (
                r.line,
                r.value,
                r.unit.as_str(),
                r.printed.as_str(),
                r.settings.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            // `about 3.6% improvement in IOPS`: the percent names what it is
            (7, 3.6, "%", "about 3.6%", vec![s("of", "improvement")]),
            // `with hw_queue_depth=256`: a keyed value, named by its key
            (
                8,
                256.0,
                "",
                "hw_queue_depth=256",
                vec![s("field", "hw_queue_depth")]
            ),
            (8, 1_090_000.0, "IOPS", "1.09M", vec![s("change", "before")]),
            (8, 1_130_000.0, "IOPS", "1.13M", vec![s("change", "after")]),
        ]
    );
    // no command: no draft, said
    assert!(d.yaml.is_none());
    note_at(&d, 0, NoteKind::Unmapped, "no command in the post");
}

/// A job file whose option's comment lists the other values the post ran (`bs=4k # 16k
/// 64k`, as people note the runs they made) gives that axis, the option `{{bs}}`, and the
/// comment never reaches fio's arguments (issue 41, pattern 4); a comment in words
/// (`size=2g ; twice the RAM`) is only a comment.
#[test]
fn a_job_file_comment_listing_other_values_is_an_axis() {
    let post = "Subject: Re: [PATCH] ext4: faster buffered writes\n\nMy job:\n\n[global]\nioengine=sync\nsize=2g ; twice the RAM\ndirectory=/mnt/scratch\n\n[seqwrite]\nrw=write\nbs=4k # 16k 64k\n\n  # fio seq.fio\n\nbs     4k    16k    64k\nMB/s   310   402    455\n";
    let (d, e) = super::import::draft_of(post);
    let yaml = d.yaml.as_deref().unwrap();
    let bs: Vec<String> = e.def.matrix["bs"].iter().map(|v| v.to_string()).collect();
    assert_eq!(bs, ["4k", "16k", "64k"], "{yaml}");
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("--bs={{bs}}") && w.contains("--size=2g "), "{w}");
    assert!(
        !w.contains('#') && !w.contains(';') && !w.contains("RAM"),
        "{w}"
    );
    assert_eq!(e.def.matrix.len(), 1, "{yaml}");
}
