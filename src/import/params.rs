//! The numbers in commands: options of `mkfs.*`, `mount -o`, `fsstress`, `fs_mark`,
//! `fio`, `dd`, `xfs_io`, and loop counts, as parameter rows.

use super::numbers::token_quantity;
use super::programs::Program;
use super::shell::{walk, Cmd, Loop, LoopKind};
use super::{Category, Row};

fn row(c: &Cmd, quantity: String, value: f64, unit: &str, printed: String, note: &str) -> Row {
    Row {
        line: c.line,
        group: "parameter".into(),
        quantity,
        settings: Vec::new(),
        value,
        unit: unit.into(),
        printed,
        approx: false,
        category: Category::Parameter,
        stated_by: None,
        note: note.into(),
    }
}

/// A value as a number in its unit (`4k` → 4 KiB, `1` → 1); variables give nothing.
fn value_of(v: &str) -> Option<(f64, String)> {
    if v.contains('$') || v.contains("{{") {
        return None;
    }
    let (q, _) = token_quantity(v)?;
    (q.unit.is_empty() || q.attached).then_some((q.value, q.unit))
}

/// `a=1,b=0,` → rows `prefix_a`, `prefix_b`.
fn subopts(c: &Cmd, list: &str, prefix: &str, out: &mut Vec<Row>) {
    for kv in list.split(',') {
        let (k, v) = match kv.split_once('=') {
            Some(kv) => kv,
            None => continue,
        };
        if let Some((val, unit)) = value_of(v) {
            let q = if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}{k}")
            };
            out.push(row(c, q, val, &unit, kv.to_string(), &c.text()));
        }
    }
}

/// Parameter rows of one command.
pub fn command_rows(c: &Cmd) -> Vec<Row> {
    let argv = c.argv();
    let mut out = Vec::new();
    let text = c.text();
    let p = c.program();
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        let next = argv.get(i + 1).map(String::as_str);
        match (&p, a.as_str()) {
            (Program::Mkfs(fs), o) if fs == "xfs" && o.len() == 2 && o.starts_with('-') => {
                if let Some(n) = next.filter(|n| !n.starts_with('-')) {
                    subopts(c, n, "", &mut out);
                    i += 1;
                }
            }
            (Program::Mkfs(_), "-I") | (Program::Mkfs(_), "-b") | (Program::Mkfs(_), "-i") => {
                if let Some((v, u)) = next.and_then(value_of) {
                    let name = match a.as_str() {
                        "-I" => "inode_size",
                        "-b" => "block_size",
                        _ => "bytes_per_inode",
                    };
                    let unit = if u.is_empty() { "bytes".to_string() } else { u };
                    out.push(row(
                        c,
                        name.into(),
                        v,
                        &unit,
                        format!("{a} {}", next.unwrap_or("")),
                        &text,
                    ));
                    i += 1;
                }
            }
            (Program::Mkfs(_), "-N") | (Program::Mkfs(_), "-m") => {
                if let Some((v, _)) = next.and_then(value_of) {
                    let (name, unit) = if a == "-N" {
                        ("inodes", "inodes")
                    } else {
                        ("reserved_blocks", "%")
                    };
                    out.push(row(
                        c,
                        name.into(),
                        v,
                        unit,
                        format!("{a} {}", next.unwrap_or("")),
                        &text,
                    ));
                    i += 1;
                }
            }
            (Program::Mkfs(_), "-j") => {
                out.push(row(c, "journal".into(), 1.0, "flag", a.clone(), &text))
            }
            (Program::Mkfs(_), "-E") | (Program::Mkfs(_), "-O") => {
                if let Some(n) = next {
                    for item in n.split(',').filter(|s| !s.is_empty()) {
                        if item.contains('=') {
                            subopts(c, item, "", &mut out);
                        } else if let Some(f) = item.strip_prefix('^') {
                            out.push(row(c, f.to_string(), 0.0, "flag", item.to_string(), &text));
                        } else {
                            out.push(row(
                                c,
                                item.to_string(),
                                1.0,
                                "flag",
                                item.to_string(),
                                &text,
                            ));
                        }
                    }
                    i += 1;
                }
            }
            (Program::Mount, o) if o.starts_with("-o") => {
                let list = if o == "-o" {
                    next.unwrap_or("").to_string()
                } else {
                    o[2..].to_string()
                };
                subopts(c, &list, "mount_", &mut out);
                if o == "-o" {
                    i += 1;
                }
            }
            (Program::Fsstress, "-n" | "-p" | "-s" | "-l") => {
                if let Some((v, _)) = next.and_then(value_of) {
                    let (name, unit) = match a.as_str() {
                        "-n" => ("fsstress_ops_per_process", "ops"),
                        "-p" => ("fsstress_processes", "processes"),
                        "-l" => ("fsstress_loops", "runs"),
                        _ => ("fsstress_seed", ""),
                    };
                    out.push(row(
                        c,
                        name.into(),
                        v,
                        unit,
                        format!("{a} {}", next.unwrap_or("")),
                        &text,
                    ));
                    i += 1;
                }
            }
            (Program::Fsstress, "-f") => {
                if let Some(n) = next {
                    subopts(c, n, "fsstress_freq_", &mut out);
                    i += 1;
                }
            }
            (Program::FsMark, "-n" | "-s" | "-t" | "-L" | "-D" | "-N" | "-S") => {
                if let Some((v, u)) = next.and_then(value_of) {
                    let (name, unit) = match a.as_str() {
                        "-n" => ("fs_mark_files", "files"),
                        "-s" => (
                            "fs_mark_file_size",
                            if u.is_empty() { "bytes" } else { u.as_str() },
                        ),
                        "-t" => ("fs_mark_threads", "processes"),
                        "-L" => ("fs_mark_loops", "runs"),
                        "-D" => ("fs_mark_subdirectories", "directories"),
                        "-N" => ("fs_mark_files_per_subdirectory", "files"),
                        _ => ("fs_mark_sync_method", ""),
                    };
                    out.push(row(
                        c,
                        name.into(),
                        v,
                        unit,
                        format!("{a} {}", next.unwrap_or("")),
                        &text,
                    ));
                    i += 1;
                }
            }
            (Program::Fio | Program::Dd | Program::Bonnie, kv) if kv.contains('=') => {
                let kv = kv.trim_start_matches('-');
                if let Some((k, v)) = kv.split_once('=') {
                    if matches!(p, Program::Dd) && k == "count" {
                        let bs = argv
                            .iter()
                            .find_map(|w| w.strip_prefix("bs="))
                            .unwrap_or("512");
                        let bs = bs.trim_start_matches('$').trim_matches(['{', '}']);
                        if let Some((val, _)) = value_of(v) {
                            out.push(row(
                                c,
                                "dd_count".into(),
                                val,
                                &format!("blocks of {bs}"),
                                kv.to_string(),
                                &text,
                            ));
                        }
                    } else if let Some((val, unit)) = value_of(v) {
                        let name = if matches!(p, Program::Dd) {
                            format!("dd_{k}")
                        } else {
                            format!("fio_{k}")
                        };
                        let unit = match (k, unit.as_str()) {
                            ("runtime" | "ramp_time", "") => "s".to_string(),
                            ("bs" | "size" | "ibs" | "obs", "") => "bytes".to_string(),
                            _ => unit,
                        };
                        out.push(row(c, name, val, &unit, kv.to_string(), &text));
                    }
                }
            }
            (Program::XfsIo, "-c") => {
                if let Some(n) = next {
                    let mut w = n.split_whitespace();
                    let verb = w.next().unwrap_or("");
                    for arg in w {
                        if let Some((v, u)) = value_of(arg) {
                            if !u.is_empty() {
                                out.push(row(
                                    c,
                                    format!("xfs_io_{verb}"),
                                    v,
                                    &u,
                                    format!("{verb} {arg}"),
                                    &text,
                                ));
                            }
                        }
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether `$var` is a path component in the loop's body (`of=/mnt/$i`): a file loop.
fn over_files(l: &Loop) -> bool {
    let needle = format!("/${}", l.var);
    let needle2 = format!("/${{{}}}", l.var);
    let mut found = false;
    walk(&l.body, &mut Vec::new(), &mut |c, _| {
        if c.words
            .iter()
            .any(|w| w.contains(&needle) || w.contains(&needle2))
        {
            found = true;
        }
    });
    found
}

/// The loop count as a parameter row.
pub fn loop_row(l: &Loop) -> Option<Row> {
    let (n, printed) = match &l.kind {
        LoopKind::Count(n) => {
            let cond = l.head.split(';').nth(1).unwrap_or("").trim().to_string();
            (*n as f64, cond)
        }
        LoopKind::Range(a, b) => ((b - a + 1) as f64, format!("{{{a}..{b}}}")),
        _ => return None,
    };
    let timed_inside = {
        let mut t = false;
        walk(&l.body, &mut Vec::new(), &mut |c, _| t |= c.timed);
        t
    };
    let unit = if over_files(l) {
        "files"
    } else if timed_inside && !l.timed {
        "runs"
    } else {
        "iterations"
    };
    Some(Row {
        line: l.line,
        group: "parameter".into(),
        quantity: "loop_count".into(),
        settings: Vec::new(),
        value: n,
        unit: unit.into(),
        printed,
        approx: false,
        category: Category::Parameter,
        stated_by: None,
        note: l.head.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::shell::{parse_block, Node};

    fn rows(s: &str) -> Vec<(String, f64, String, String)> {
        let nodes = parse_block(&[(1, s.to_string())]);
        let mut out = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            out.extend(
                command_rows(c)
                    .into_iter()
                    .map(|r| (r.quantity, r.value, r.unit, r.printed)),
            );
        });
        for n in &nodes {
            if let Node::Loop(l) = n {
                out.extend(loop_row(l).map(|r| (r.quantity, r.value, r.unit, r.printed)));
            }
        }
        out
    }

    #[test]
    fn mkfs_options() {
        let r = rows("mkfs.xfs -f -m reflink=0,rmapbt=0, -d rtinherit=1 -r rtdev=/dev/pmem1s,extsize=$rtextsize /dev/pmem2s");
        assert_eq!(
            r.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["reflink", "rmapbt", "rtinherit"]
        );
        let r = rows("mkfs.ext4 -j -I 256 -E test_fs -O ^flex_bg,uninit_bg /dev/sdb");
        assert!(r.contains(&("inode_size".into(), 256.0, "bytes".into(), "-I 256".into())));
        assert!(r.contains(&("flex_bg".into(), 0.0, "flag".into(), "^flex_bg".into())));
        assert!(r.contains(&("test_fs".into(), 1.0, "flag".into(), "test_fs".into())));
    }

    #[test]
    fn workload_options_and_loops() {
        let r = rows(
            "for ((i=0;i<10;i++)); do time fsstress -n 400000 -p 4 -f creat=1,link=1 -s 1; done",
        );
        assert!(r.contains(&(
            "fsstress_ops_per_process".into(),
            400000.0,
            "ops".into(),
            "-n 400000".into()
        )));
        assert!(r.contains(&("fsstress_freq_link".into(), 1.0, "".into(), "link=1".into())));
        assert!(r.contains(&("loop_count".into(), 10.0, "runs".into(), "i<10".into())));
        let r = rows(
            "for i in {1..1000}; do dd if=/dev/zero of=/mnt/scratch/$i bs=$rtextsize count=1; done",
        );
        assert!(r.contains(&(
            "dd_count".into(),
            1.0,
            "blocks of rtextsize".into(),
            "count=1".into()
        )));
        assert!(r.contains(&(
            "loop_count".into(),
            1000.0,
            "files".into(),
            "{1..1000}".into()
        )));
        let r = rows("xfs_io -c \"truncate 4k\" /mnt/f");
        assert_eq!(
            r,
            [(
                "xfs_io_truncate".into(),
                4.0,
                "KiB".into(),
                "truncate 4k".into()
            )]
        );
        let r = rows("mount -o loop,logbsize=256k fs.img /mnt");
        assert_eq!(
            r,
            [(
                "mount_logbsize".into(),
                256.0,
                "KiB".into(),
                "logbsize=256k".into()
            )]
        );
    }
}
