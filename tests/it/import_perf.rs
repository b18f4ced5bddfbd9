//! `fslab import` on `perf stat` output in a post: each block, from its `Performance
//! counter stats for '…'` line to its last `seconds …` line, quoted or indented, read with
//! fslab's own parser; each counter's value, variance (`-r`), metric and share counted a
//! published row with its line and the text perf printed, labelled by the line above the
//! block; the block's lines are never prose numbers. Checked on a real mail (perf of Linux
//! 3.0, quoted two deep) and on perf 6.1's output pasted into a post.

use super::import::{draft_of, note_at, outside};
use fslab::import::{NoteKind, Row};

fn s(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// The row of `event` and `statistic` at `line`: value, unit, printed, settings.
fn row(
    rows: &[Row],
    line: usize,
    event: &str,
    stat: &str,
) -> (f64, String, String, Vec<(String, String)>) {
    rows.iter()
        .find(|r| {
            r.line == line
                && r.group == "perf_stat"
                && r.quantity == event
                && r.settings.contains(&s("statistic", stat))
        })
        .map(|r| {
            (
                r.value,
                r.unit.clone(),
                r.printed.clone(),
                r.settings.clone(),
            )
        })
        .unwrap_or_else(|| {
            panic!(
                "no {event} {stat} at line {line}: {:#?}",
                rows.iter()
                    .filter(|r| r.line == line)
                    .map(|r| (&r.quantity, &r.settings, &r.printed))
                    .collect::<Vec<_>>()
            )
        })
}

/// Johannes Weiner's reply on linux-mm (26 Jul 2011), real: two `perf stat -r 6` runs of
/// `dd` quoted two deep under `3.0:` and `3.0-per-zone-dirty:`, perf of Linux 3.0 (no unit
/// column, `task-clock-msecs`, `( +-   0.198% )`, `(scaled from 82.80%)`, the trailer's
/// two spaces before `seconds time elapsed`). Values listed by hand from reading the post
/// (its lines counted without the fixture's `#|` header).
#[test]
fn outside_perf_stat_quoted_two_deep_with_runs() {
    let text = outside("mm-per-zone-dirty-perf-stat.txt");
    let d = fslab::import::import(text.as_bytes(), Some("post.eml")).expect("imports");
    let r = |line, ev, stat| row(&d.rows, line, ev, stat);
    let first = |stat: &str| vec![s("runs", "6"), s("statistic", stat), s("row", "3.0")];
    // line 139: `140,671,831 cache-misses  #  4.923 M/sec  ( +-   0.198% )  (scaled from 82.80%)`
    assert_eq!(
        r(139, "cache-misses", "value"),
        (
            140_671_831.0,
            "count".into(),
            "140,671,831".into(),
            first("value")
        )
    );
    assert_eq!(
        r(139, "cache-misses", "variance"),
        (
            0.198,
            "%".into(),
            "( +-   0.198% )".into(),
            first("variance")
        )
    );
    assert_eq!(
        r(139, "cache-misses", "metric"),
        (
            4.923,
            "M/sec".into(),
            "#      4.923 M/sec".into(),
            first("metric")
        )
    );
    assert_eq!(
        r(139, "cache-misses", "counted"),
        (
            82.80,
            "%".into(),
            "(scaled from 82.80%)".into(),
            first("counted")
        )
    );
    // `#      4.157 %` of branch-misses, `0.417 IPC` of instructions
    assert_eq!(r(141, "branch-misses", "metric").0, 4.157);
    assert_eq!(r(141, "branch-misses", "metric").1, "%");
    assert_eq!(r(143, "instructions", "value").0, 17_882_351_343.0);
    assert_eq!(r(143, "instructions", "metric").1, "IPC");
    // no share counted printed for page-faults: no such row
    assert!(!d
        .rows
        .iter()
        .any(|x| x.line == 145 && x.settings.contains(&s("statistic", "counted"))));
    // perf 3.0's task-clock-msecs: milliseconds by its name, 6 decimals as printed
    let tc = r(148, "task-clock-msecs", "value");
    assert_eq!(
        (tc.0, tc.1.as_str(), tc.2.as_str()),
        (28574.25554, "ms", "28574.255540")
    );
    assert_eq!(r(148, "task-clock-msecs", "metric").1, "CPUs");
    // the trailer: `912.625436885  seconds time elapsed   ( +-   3.851% )`
    assert_eq!(
        r(150, "seconds time elapsed", "value"),
        (
            912.625436885,
            "s".into(),
            "912.625436885".into(),
            first("value")
        )
    );
    assert_eq!(r(150, "seconds time elapsed", "variance").0, 3.851);
    // the second block, under `3.0-per-zone-dirty:`
    let second = r(169, "seconds time elapsed", "value");
    assert_eq!(
        (second.0, second.2.as_str()),
        (605.909769823, "605.909769823")
    );
    assert!(
        second.3.contains(&s("row", "3.0-per-zone-dirty")),
        "{:?}",
        second.3
    );
    assert_eq!(r(165, "CPU-migrations", "value").0, 28_028.0);
    assert_eq!(r(165, "CPU-migrations", "variance").2, "( +-   3.070% )");
    // 10 counters × (value, variance, metric) + 6 shares + the trailer's 2, per block
    let per_block = |from: usize, to: usize| {
        d.rows
            .iter()
            .filter(|x| x.group == "perf_stat" && (from..=to).contains(&x.line))
            .count()
    };
    assert_eq!((per_block(137, 150), per_block(156, 169)), (38, 38));
    // the block's lines are perf's: no prose number, no table cell from them
    let others: Vec<_> = d
        .rows
        .iter()
        .filter(|x| {
            ((138..=150).contains(&x.line) || (157..=169).contains(&x.line))
                && x.group != "perf_stat"
        })
        .collect();
    assert!(others.is_empty(), "{others:#?}");
    // every row keeps who wrote it: Johannes Weiner, quoted back by Mel Gorman
    assert_eq!(
        d.rows
            .iter()
            .find(|x| x.line == 139)
            .unwrap()
            .stated_by
            .as_deref(),
        Some("Johannes Weiner")
    );
    assert!(d.notes.iter().any(|n| n.line == 137
        && n.kind == NoteKind::Recognised
        && n.what == "perf stat output: 38 published rows"));
    // the `time` blocks below keep their labels, as before
    let real = d.rows.iter().find(|x| x.line == 201).unwrap();
    assert_eq!(
        (real.quantity.as_str(), real.value),
        ("real_time", 1243.901)
    );
    // and the published CSV loads
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("post.published.csv");
    std::fs::write(&csv, &d.csv).unwrap();
    let df = fslab::published::load_from(&csv).expect("the CSV loads");
    assert_eq!(df.height(), d.rows.len());
}

/// perf 6.1's default output (`tests/fixtures/world/perf_stat/perf-6.1-human-default-dd.txt`,
/// real, from perf 6.1 on Debian 12) pasted indented into a post under its command: `msec` is
/// `ms`, `<not supported>` counters have no rows (and no message: perf counted nothing),
/// `seconds user` and `seconds sys` are rows, and `dd`'s own lines above the header stay
/// outside the block.
#[test]
fn perf_6_output_indented_under_a_label() {
    let out = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/world/perf_stat/perf-6.1-human-default-dd.txt"),
    )
    .unwrap();
    let body: String = out.lines().map(|l| format!("    {l}\n")).collect();
    let post = format!(
        "Subject: [PATCH] x\n\nWith the patch:\n\n    # perf stat -- dd if=/dev/zero of=/dev/null bs=4k count=20000\n{body}\nThat is all.\n"
    );
    let d = fslab::import::import(post.as_bytes(), Some("post.eml")).expect("imports");
    // line 1 Subject, 3 the label, 5 the prompt, 6-8 dd's output, 10 the header
    let r = |line, ev, stat| row(&d.rows, line, ev, stat);
    let tc = r(12, "task-clock", "value");
    assert_eq!((tc.0, tc.1.as_str(), tc.2.as_str()), (4.83, "ms", "4.83"));
    assert_eq!(r(12, "task-clock", "metric").2, "#    0.950 CPUs utilized");
    let pf = r(15, "page-faults", "metric");
    assert_eq!((pf.0, pf.1.as_str()), (16.762, "K/sec"));
    assert!(!d.rows.iter().any(|x| x.quantity == "cycles"));
    let el = r(21, "seconds time elapsed", "value");
    assert_eq!((el.0, el.2.as_str()), (0.005089190, "0.005089190"));
    assert_eq!(r(23, "seconds user", "value").0, 0.005194);
    assert_eq!(r(24, "seconds sys", "value").0, 0.0);
    // the command that printed it is the rows' note (as for `time` output)
    let note = &d.rows.iter().find(|x| x.line == 21).unwrap().note;
    assert_eq!(
        note,
        "# perf stat -- dd if=/dev/zero of=/dev/null bs=4k count=20000"
    );
    // nothing of the block but perf's rows (the header names the command perf ran: its
    // options are parameter rows, as a command's)
    let others: Vec<&Row> = d
        .rows
        .iter()
        .filter(|x| (10..=24).contains(&x.line) && x.group != "perf_stat")
        .collect();
    assert!(
        others
            .iter()
            .all(|x| x.line == 10 && x.group == "parameter"),
        "{others:#?}"
    );
}

/// `perf stat -r N CMD` at a prompt and in a loop: the workload is CMD (perf's options
/// gone from it, no `perf` tool), `repeat:` is perf's runs (times a counting loop's), and
/// perf's counters, which the draft does not count, are a "not mapped" message, as `time CMD`
/// is read.
#[test]
fn perf_stat_repeat_is_the_workload_repetition() {
    let post = "Subject: [PATCH] xfs: cheaper creates\n\n  # mkfs.xfs -f /dev/sdb\n  # mount /dev/sdb /mnt/test\n  # perf stat -r 5 -e cycles,instructions fs_mark -d /mnt/test/d -n 1000 -s 0\n\nThat is all.\n";
    let (d, e) = draft_of(post);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("\"{{fs_mark}} -d {{mnt}}/d -n 1000 -s 0\""),
        "{w}"
    );
    assert!(!w.contains("perf"), "{w}");
    assert_eq!(
        format!("{:?}", e.def.workload.repeat),
        "Some(Count(Int(5)))"
    );
    let yaml = d.yaml.as_deref().unwrap();
    assert!(!yaml.contains("{{perf}}"), "{yaml}");
    assert!(
        yaml.contains("under `perf stat -r 5 -e cycles,instructions` in the post"),
        "{yaml}"
    );
    note_at(&d, 5, NoteKind::Recognised, "`repeat: 5`");
    note_at(&d, 5, NoteKind::Unmapped, "`cycles,instructions`");
    // in a counting loop: perf's runs times the loop's
    let post = "Subject: x\n\n#!/bin/sh\nmkfs.ext4 -F /dev/sdb\nmount /dev/sdb /mnt\nfor i in 1 2; do\n  perf stat --repeat=3 -a -- dd if=/dev/zero of=/mnt/f bs=1M count=100\ndone\n";
    let (_, e) = draft_of(post);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("dd if=/dev/zero of={{mnt}}/f bs=1M count=100"),
        "{w}"
    );
    assert_eq!(
        format!("{:?}", e.def.workload.repeat),
        "Some(Count(Int(6)))"
    );
}

fn world(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/world/perf_stat")
            .join(name),
    )
    .unwrap()
}

/// perf's CSV (`-x,`) in real mails, read with fslab's CSV parser: Athira Rajeev's commit
/// message (`perf-per-socket-interval-csv-mail.txt`, see its SOURCE: `--per-socket` and
/// `-I 1000` lines under `# ./perf stat -x, …`, an author's `------` elision and metric-only
/// lines marked `====>`) and Arnaldo Carvalho de Melo's reply (`perf-6.x-hybrid-topdown-csv-mail.txt`:
/// `:u` events, `<not counted>`, multiplexed counters and TopdownL1 metric lines). Each
/// counter's value, metric and (when multiplexed) share counted are rows with their fields
/// as printed; the socket, its CPUs and the time stamp are settings; what the parser does not
/// read is a message; the lines are no prose numbers.
#[test]
fn perf_stat_csv_in_real_mails() {
    let post = format!(
        "Subject: [PATCH 1/2] tools/perf: Fix printing os->prefix in CSV metrics output\n\n{}",
        world("perf-per-socket-interval-csv-mail.txt")
    );
    let d = fslab::import::import(post.as_bytes(), Some("post.eml")).expect("imports");
    let r = |line, ev, stat| row(&d.rows, line, ev, stat);
    // the file's line N is the post's N + 2
    let (v, u, p, set) = r(8, "cpu-clock", "value");
    assert_eq!((v, u.as_str(), p.as_str()), (1.78, "ms", "1.78"));
    assert!(set.contains(&s("cpu", "S0")) && set.contains(&s("cpus", "1")));
    let (v, u, p, _) = r(8, "cpu-clock", "metric");
    assert_eq!(
        (v, u.as_str(), p.as_str()),
        (0.973, "CPUs utilized", "0.973")
    );
    assert_eq!(r(15, "instructions", "value").0, 288430.0);
    let (v, _, _, set) = r(26, "cpu-clock", "value");
    assert_eq!(v, 1.87);
    assert!(set.contains(&s("time", "0.001813453")), "{set:?}");
    // below the author's `------`, under the same command
    assert_eq!(r(29, "instructions", "value").0, 85379.0);
    let (v, u, _, _) = r(74, "context-switches", "metric");
    assert_eq!((v, u.as_str()), (979.289, "/sec"));
    // the metric-only lines are messages, not rows
    note_at(&d, 16, NoteKind::Unmapped, "perf stat CSV line not read");
    note_at(&d, 81, NoteKind::Unmapped, "perf stat CSV line not read");
    let stray: Vec<&Row> = d
        .rows
        .iter()
        .filter(|x| [8, 16, 26, 30, 73, 81].contains(&x.line) && x.group != "perf_stat")
        .collect();
    assert!(stray.is_empty(), "{stray:#?}");

    let post = format!(
        "Subject: Re: [PATCH v1 1/6] perf report: Sort child tasks by tid\n\n{}",
        world("perf-6.x-hybrid-topdown-csv-mail.txt")
    );
    let d = fslab::import::import(post.as_bytes(), Some("post.eml")).expect("imports");
    let r = |line, ev, stat| row(&d.rows, line, ev, stat);
    let (v, u, p, _) = r(5, "task-clock:u", "value");
    assert_eq!((v, u.as_str(), p.as_str()), (0.65, "ms", "0.65"));
    let (v, u, p, _) = r(9, "cpu_atom/cycles/u", "counted");
    assert_eq!((v, u.as_str(), p.as_str()), (42.0, "%", "42.00"));
    assert_eq!(r(9, "cpu_atom/cycles/u", "metric").1, "GHz");
    assert!(!d.rows.iter().any(|x| x.quantity == "cpu_core/cycles/u"));
    for line in 17..=22 {
        note_at(&d, line, NoteKind::Unmapped, "perf stat CSV line not read");
    }
    assert!(
        d.rows.iter().all(|x| x.group == "perf_stat" || x.line < 5),
        "{:#?}",
        d.rows
    );
}
