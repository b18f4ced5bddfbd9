//! The text parsers against real tool output (tests/fixtures/<tool>/, each fixture with
//! the command that produced it in NAME.cmd; see tests/fixtures/capture-parsers.sh).
//! Values are compared with the fixture text field by field: by an independent reading
//! of the text where the format allows one, by the values written out here otherwise.

use fslab::blockmap::Extent;
use fslab::parse::{self, e2fsck, ext, fsmark, time, xfs, xfs_bmap, GeometryRow, Kind};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture(tool: &str, name: &str) -> String {
    fixture_in(&dir(), tool, name)
}

/// `ROOT/TOOL/NAME.txt` as text (also the outside fixtures' reader, tests/it/parse_world.rs).
pub(crate) fn fixture_in(root: &Path, tool: &str, name: &str) -> String {
    let p = root.join(tool).join(format!("{name}.txt"));
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    String::from_utf8(bytes).expect("fixtures are UTF-8")
}

pub(crate) fn geo<'a>(rows: &'a [GeometryRow], section: &str, key: &str) -> &'a GeometryRow {
    let found: Vec<_> = rows
        .iter()
        .filter(|r| r.section == section && r.key == key)
        .collect();
    assert_eq!(found.len(), 1, "rows {section}/{key}: {found:?}");
    found[0]
}

fn num(rows: &[GeometryRow], section: &str, key: &str) -> f64 {
    geo(rows, section, key)
        .number
        .unwrap_or_else(|| panic!("{section}/{key} has no number"))
}

fn bytes(rows: &[GeometryRow], section: &str, key: &str) -> Option<u64> {
    geo(rows, section, key).bytes
}

/// Directories of `tests/fixtures` whose `.txt` files are not a tool's output: posts
/// (each names its source in its header) and fslab's own golden outputs (each named by
/// its case in tests/it/reply.rs).
const NOT_TOOL_OUTPUT: [&str; 2] = ["import-acceptance", "reply"];

/// Every fixture keeps the command that produced it.
#[test]
fn every_fixture_has_its_command() {
    let mut count = 0;
    for tool in std::fs::read_dir(dir()).unwrap() {
        let tool = tool.unwrap().path();
        let name = tool
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !tool.is_dir() || NOT_TOOL_OUTPUT.contains(&name) {
            continue;
        }
        for f in std::fs::read_dir(&tool).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "txt") {
                let cmd = f.with_extension("cmd");
                let text = std::fs::read_to_string(&cmd)
                    .unwrap_or_else(|_| panic!("{} has no .cmd", f.display()));
                assert!(!text.trim().is_empty(), "{} is empty", cmd.display());
                count += 1;
            }
        }
    }
    assert!(count >= 50, "only {count} fixtures");
}

// ------------------------------------------------------------------------- XFS

/// An independent reading of mkfs.xfs/xfs_info text: (section, key, value) for every
/// `key=value` token, and the section heads.
fn xfs_fields(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let Some(eq) = line.find('=') else { continue };
        let name = line[..eq].trim();
        let known = ["meta-data", "data", "naming", "log", "realtime"];
        if known.contains(&name) {
            section = name.to_string();
        } else if !name.is_empty() || !line.starts_with(' ') {
            continue;
        }
        let rest = &line[eq + 1..];
        let toks: Vec<&str> = rest.split_whitespace().collect();
        let first_kv = toks
            .iter()
            .position(|t| t.contains('='))
            .unwrap_or(toks.len());
        let head = toks[..first_kv].join(" ");
        if !head.is_empty() {
            let (k, v) = match head.strip_prefix("version ") {
                Some(v) if section == "naming" => ("version", v.to_string()),
                _ => ("device", head.clone()),
            };
            out.push((section.clone(), k.to_string(), v));
        }
        for t in &toks[first_kv..] {
            if let Some((k, v)) = t.trim_end_matches(',').split_once('=') {
                out.push((section.clone(), k.to_string(), v.to_string()));
            }
        }
    }
    out
}

fn check_xfs_against_text(name: &str) -> Vec<GeometryRow> {
    let text = fixture("xfs", name);
    let out = xfs::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let got: Vec<_> = out
        .rows
        .iter()
        .map(|r| (r.section.clone(), r.key.clone(), r.value.clone()))
        .collect();
    assert_eq!(got, xfs_fields(&text), "{name}");
    assert!(out.warnings.is_empty(), "{name}: {:?}", out.warnings);
    assert!(!out.partial, "{name}");
    for r in &out.rows {
        if let Ok(x) = r.value.parse::<f64>() {
            assert_eq!(r.number, Some(x), "{name}: {r:?}");
        }
    }
    out.rows
}

#[test]
fn xfs_every_fixture_matches_its_text() {
    for name in [
        "mkfs-default",
        "mkfs-v4-1k-blocks",
        "mkfs-naming-ci",
        "mkfs-dry-run-rmapbt-7ag",
        "mkfs-realtime-extlog-stripe",
        "xfs_info-realtime-unmounted",
        "xfs_info-extlog-mounted",
        "xfs_info-mounted",
        "seed000-mkfs-parent0",
        "seed000-mkfs-parent1",
    ] {
        let rows = check_xfs_against_text(name);
        // Sizes in blocks are in bytes too.
        let bsize = num(&rows, "data", "bsize") as u64;
        let blocks = num(&rows, "data", "blocks") as u64;
        assert_eq!(
            bytes(&rows, "data", "blocks"),
            Some(blocks * bsize),
            "{name}"
        );
        let agsize = num(&rows, "meta-data", "agsize") as u64;
        assert_eq!(
            bytes(&rows, "meta-data", "agsize"),
            Some(agsize * bsize),
            "{name}"
        );
    }
}

#[test]
fn xfs_seed000_newer_layout() {
    let rows = check_xfs_against_text("seed000-mkfs-parent0");
    assert_eq!(rows.len(), 43);
    assert_eq!(geo(&rows, "meta-data", "device").value, "/dev/sdb");
    assert_eq!(num(&rows, "meta-data", "isize"), 512.0);
    assert_eq!(num(&rows, "meta-data", "agcount"), 4.0);
    assert_eq!(num(&rows, "meta-data", "agsize"), 1_298_176.0);
    assert_eq!(
        geo(&rows, "meta-data", "agsize").unit.as_deref(),
        Some("blks")
    );
    assert_eq!(bytes(&rows, "meta-data", "agsize"), Some(1_298_176 * 4096));
    assert_eq!(num(&rows, "meta-data", "rmapbt"), 1.0);
    assert_eq!(num(&rows, "meta-data", "nrext64"), 1.0);
    assert_eq!(num(&rows, "meta-data", "exchange"), 1.0);
    assert_eq!(num(&rows, "meta-data", "metadir"), 0.0);
    assert_eq!(num(&rows, "data", "bsize"), 4096.0);
    assert_eq!(num(&rows, "data", "blocks"), 5_192_704.0);
    assert_eq!(bytes(&rows, "data", "blocks"), Some(5_192_704 * 4096));
    assert_eq!(num(&rows, "data", "imaxpct"), 25.0);
    assert_eq!(geo(&rows, "naming", "version").value, "2");
    assert_eq!(num(&rows, "naming", "parent"), 0.0);
    assert_eq!(geo(&rows, "log", "device").value, "internal log");
    assert_eq!(bytes(&rows, "log", "blocks"), Some(16384 * 4096));
    assert_eq!(num(&rows, "log", "lazy-count"), 1.0);
    assert_eq!(geo(&rows, "realtime", "device").value, "none");
    assert_eq!(num(&rows, "realtime", "rgcount"), 0.0);
    assert_eq!(geo(&rows, "realtime", "rgcount").unit, None);
    assert_eq!(
        geo(&rows, "realtime", "rgsize").unit.as_deref(),
        Some("extents")
    );
    assert_eq!(num(&rows, "realtime", "zoned"), 0.0);
    assert_eq!(num(&rows, "realtime", "start"), 0.0);
    assert_eq!(num(&rows, "realtime", "reserved"), 0.0);

    let rows1 = check_xfs_against_text("seed000-mkfs-parent1");
    assert_eq!(num(&rows1, "naming", "parent"), 1.0);
}

#[test]
fn xfs_6_1_realtime_external_log_and_stripes() {
    let rows = check_xfs_against_text("mkfs-realtime-extlog-stripe");
    assert_eq!(geo(&rows, "log", "device").value, "/dev/loop2");
    assert_eq!(geo(&rows, "realtime", "device").value, "/dev/loop1");
    assert_eq!(bytes(&rows, "realtime", "extsz"), Some(65536));
    assert_eq!(bytes(&rows, "realtime", "blocks"), Some(65536 * 4096));
    assert_eq!(bytes(&rows, "realtime", "rtextents"), Some(4096 * 65536));
    assert_eq!(num(&rows, "data", "sunit"), 16.0);
    assert_eq!(bytes(&rows, "data", "sunit"), Some(16 * 4096)); // -d su=64k
    assert_eq!(bytes(&rows, "data", "swidth"), Some(64 * 4096)); // sw=4
    assert_eq!(num(&rows, "meta-data", "agcount"), 8.0);
    // 6.1 has no exchange/metadir/parent/rgcount/zoned.
    for key in ["exchange", "metadir", "parent", "rgcount", "zoned"] {
        assert!(rows.iter().all(|r| r.key != key), "{key}");
    }

    let info = check_xfs_against_text("xfs_info-realtime-unmounted");
    assert_eq!(geo(&info, "log", "device").value, "external");
    assert_eq!(geo(&info, "realtime", "device").value, "external");
    assert_eq!(num(&info, "realtime", "rtextents"), 4096.0);
}

#[test]
fn xfs_v4_small_blocks() {
    let rows = check_xfs_against_text("mkfs-v4-1k-blocks");
    assert_eq!(num(&rows, "meta-data", "crc"), 0.0);
    assert_eq!(num(&rows, "meta-data", "isize"), 256.0);
    assert_eq!(num(&rows, "data", "bsize"), 1024.0);
    assert_eq!(num(&rows, "naming", "bsize"), 8192.0);
    assert_eq!(bytes(&rows, "log", "blocks"), Some(65536 * 1024));
    assert_eq!(bytes(&rows, "meta-data", "agsize"), Some(131_072 * 1024));
}

#[test]
fn xfs_refused_option_is_an_error() {
    let text = fixture("xfs", "mkfs-parent-error");
    match xfs::parse(&text) {
        Err(parse::ParseError::Malformed { line, message, .. }) => {
            assert_eq!(line, 1);
            assert!(message.contains("unknown option -n parent=1"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn xfs_two_outputs_in_one_text() {
    let text = format!(
        "{}{}",
        fixture("xfs", "seed000-mkfs-parent0"),
        fixture("xfs", "seed000-mkfs-parent1")
    );
    let out = xfs::parse(&text).unwrap();
    assert_eq!(out.rows.len(), 86);
    assert_eq!(out.warnings.len(), 1);
    assert_eq!(out.warnings[0].line, 15);
    let parents: Vec<_> = out
        .rows
        .iter()
        .filter(|r| r.key == "parent")
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(parents, ["0", "1"]);
    assert!(!out.partial);
}

#[test]
fn xfs_truncated_is_partial() {
    let text = fixture("xfs", "mkfs-default");
    let cut: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
    let out = xfs::parse(&cut).unwrap();
    assert!(out.partial);
    assert_eq!(num(&out.rows, "data", "blocks"), 131_072.0);
}

// ------------------------------------------------------------------------- ext

/// `Label: value` lines of dumpe2fs -h, read independently.
fn dumpe2fs_fields(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            let key = k
                .to_ascii_lowercase()
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join("_");
            (key, v.trim().to_string())
        })
        .collect()
}

fn check_dumpe2fs(name: &str) -> Vec<GeometryRow> {
    let text = fixture("dumpe2fs", name);
    let out = ext::parse(Kind::Dumpe2fs, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(out.warnings.is_empty(), "{name}: {:?}", out.warnings);
    assert!(!out.partial, "{name}");
    let printed: Vec<_> = out
        .rows
        .iter()
        .filter(|r| r.section == "superblock" && !r.key.contains(':') && r.key != "block_groups")
        .map(|r| (r.key.clone(), r.value.clone()))
        .collect();
    assert_eq!(printed, dumpe2fs_fields(&text), "{name}");
    assert_eq!(geo(&out.rows, "dumpe2fs", "version").value, "1.47.0");
    // One feature row per listed feature.
    let features = geo(&out.rows, "superblock", "filesystem_features")
        .value
        .clone();
    for f in features.split_whitespace() {
        assert_eq!(
            geo(&out.rows, "superblock", &format!("feature:{f}")).number,
            Some(1.0)
        );
    }
    let per_feature = out
        .rows
        .iter()
        .filter(|r| r.key.starts_with("feature:"))
        .count();
    assert_eq!(per_feature, features.split_whitespace().count());
    // bytes = blocks × block size
    let bs = num(&out.rows, "superblock", "block_size") as u64;
    let bc = num(&out.rows, "superblock", "block_count") as u64;
    assert_eq!(bytes(&out.rows, "superblock", "block_count"), Some(bc * bs));
    out.rows
}

#[test]
fn dumpe2fs_ext4() {
    let rows = check_dumpe2fs("ext4-default");
    assert_eq!(num(&rows, "superblock", "inode_count"), 131_072.0);
    assert_eq!(num(&rows, "superblock", "block_count"), 524_288.0);
    assert_eq!(num(&rows, "superblock", "block_size"), 4096.0);
    assert_eq!(num(&rows, "superblock", "blocks_per_group"), 32768.0);
    assert_eq!(num(&rows, "superblock", "inodes_per_group"), 8192.0);
    assert_eq!(num(&rows, "superblock", "flex_block_group_size"), 16.0);
    assert_eq!(num(&rows, "superblock", "inode_size"), 256.0);
    assert_eq!(num(&rows, "superblock", "filesystem_magic_number"), 61267.0);
    assert_eq!(num(&rows, "superblock", "maximum_mount_count"), -1.0);
    let j = geo(&rows, "superblock", "total_journal_size");
    assert_eq!(
        (j.value.as_str(), j.unit.as_deref(), j.bytes),
        ("64M", Some("M"), Some(64 << 20))
    );
    assert_eq!(
        bytes(&rows, "superblock", "total_journal_blocks"),
        Some(64 << 20)
    );
    assert_eq!(num(&rows, "superblock", "block_groups"), 16.0); // derived
    assert_eq!(geo(&rows, "superblock", "feature:flex_bg").value, "1");
    assert_eq!(geo(&rows, "superblock", "feature:metadata_csum").value, "1");
    assert_eq!(geo(&rows, "superblock", "journal_features").value, "(none)");
    assert!(rows.iter().all(|r| !r.key.starts_with("journal_feature:")));
}

#[test]
fn dumpe2fs_flex_ext3_ext2_bigalloc() {
    let flex = check_dumpe2fs("ext4-flex32");
    assert_eq!(num(&flex, "superblock", "flex_block_group_size"), 32.0);
    assert_eq!(
        geo(&flex, "superblock", "filesystem_volume_name").value,
        "data"
    );

    let e3 = check_dumpe2fs("ext3-test_fs");
    assert!(e3
        .iter()
        .all(|r| r.key != "feature:extent" && r.key != "feature:flex_bg"));
    assert_eq!(geo(&e3, "superblock", "feature:has_journal").value, "1");
    assert!(geo(&e3, "superblock", "filesystem_flags")
        .value
        .contains("test_filesystem"));
    assert_eq!(num(&e3, "superblock", "inode_size"), 256.0); // -I 256

    let e2 = check_dumpe2fs("ext2-1k-blocks");
    assert!(e2
        .iter()
        .all(|r| r.key != "feature:has_journal" && !r.key.contains("journal")));
    assert_eq!(num(&e2, "superblock", "block_size"), 1024.0);
    assert_eq!(num(&e2, "superblock", "first_block"), 1.0);
    assert_eq!(num(&e2, "superblock", "block_groups"), 256.0); // (2097152-1)/8192 rounded up

    let big = check_dumpe2fs("ext4-bigalloc");
    assert_eq!(num(&big, "superblock", "cluster_size"), 65536.0);
    assert_eq!(
        bytes(&big, "superblock", "overhead_clusters"),
        Some(1156 * 65536)
    );
    assert_eq!(num(&big, "superblock", "block_groups"), 1.0);
}

#[test]
fn mke2fs_default_strips_progress() {
    let text = fixture("mke2fs", "ext4-default");
    assert!(
        text.contains('\x08'),
        "the fixture has the real progress backspaces"
    );
    let out = ext::parse(Kind::Mke2fs, &text).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert!(!out.partial);
    let r = &out.rows;
    assert!(r.iter().all(|r| r.section == "mke2fs"));
    assert_eq!(geo(r, "mke2fs", "version").value, "1.47.0");
    assert_eq!(num(r, "mke2fs", "block_count"), 524_288.0);
    assert_eq!(num(r, "mke2fs", "block_size"), 4096.0);
    assert_eq!(num(r, "mke2fs", "inode_count"), 131_072.0);
    assert_eq!(num(r, "mke2fs", "journal_blocks"), 16384.0);
    assert_eq!(bytes(r, "mke2fs", "journal_blocks"), Some(64 << 20));
    assert_eq!(
        geo(r, "mke2fs", "superblock_backups").value,
        "32768, 98304, 163840, 229376, 294912"
    );
    assert_eq!(num(r, "mke2fs", "superblock_backup_count"), 5.0);

    // The same filesystem, read back with dumpe2fs: the shared keys agree.
    let d = ext::parse(Kind::Dumpe2fs, &fixture("dumpe2fs", "ext4-default")).unwrap();
    for key in [
        "block_count",
        "block_size",
        "inode_count",
        "filesystem_uuid",
    ] {
        assert_eq!(
            geo(r, "mke2fs", key).value,
            geo(&d.rows, "superblock", key).value,
            "{key}"
        );
    }
}

#[test]
fn mke2fs_verbose_ext3_like_seed001() {
    let out = ext::parse(Kind::Mke2fs, &fixture("mke2fs", "ext3-verbose-test_fs")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let r = &out.rows;
    assert_eq!(geo(r, "mke2fs", "fs_types").value, "ext3");
    assert_eq!(geo(r, "mke2fs", "block_size").value, "4096 (log=2)");
    assert_eq!(num(r, "mke2fs", "block_size"), 4096.0);
    assert_eq!(num(r, "mke2fs", "fragment_size"), 4096.0);
    assert_eq!(num(r, "mke2fs", "raid_stride"), 0.0);
    assert_eq!(num(r, "mke2fs", "reserved_block_count"), 26214.0);
    assert_eq!(num(r, "mke2fs", "reserved_block_percent"), 5.0);
    assert_eq!(num(r, "mke2fs", "first_block"), 0.0);
    assert_eq!(num(r, "mke2fs", "maximum_filesystem_blocks"), 536_870_912.0);
    assert_eq!(num(r, "mke2fs", "block_groups"), 16.0);
    assert_eq!(num(r, "mke2fs", "blocks_per_group"), 32768.0);
    assert_eq!(num(r, "mke2fs", "fragments_per_group"), 32768.0);
    assert_eq!(num(r, "mke2fs", "inodes_per_group"), 8192.0);
    assert_eq!(geo(r, "mke2fs", "filesystem_os_type").value, "Linux");
    let d = ext::parse(Kind::Dumpe2fs, &fixture("dumpe2fs", "ext3-test_fs")).unwrap();
    for key in [
        "block_count",
        "inode_count",
        "blocks_per_group",
        "inodes_per_group",
        "filesystem_uuid",
    ] {
        assert_eq!(
            geo(r, "mke2fs", key)
                .number
                .map(|x| x.to_string())
                .unwrap_or(geo(r, "mke2fs", key).value.clone()),
            geo(&d.rows, "superblock", key)
                .number
                .map(|x| x.to_string())
                .unwrap_or(geo(&d.rows, "superblock", key).value.clone()),
            "{key}"
        );
    }
}

#[test]
fn mke2fs_ext2_and_bigalloc() {
    let out = ext::parse(Kind::Mke2fs, &fixture("mke2fs", "ext2-1k-blocks")).unwrap();
    assert!(out.warnings.is_empty() && !out.partial, "{out:?}");
    assert_eq!(num(&out.rows, "mke2fs", "block_size"), 1024.0);
    assert_eq!(num(&out.rows, "mke2fs", "block_count"), 2_097_152.0);
    assert_eq!(num(&out.rows, "mke2fs", "superblock_backup_count"), 11.0);
    assert!(out.rows.iter().all(|r| r.key != "journal_blocks"));

    let big = ext::parse(Kind::Mke2fs, &fixture("mke2fs", "ext4-bigalloc-verbose")).unwrap();
    assert!(big.warnings.is_empty() && !big.partial, "{big:?}");
    assert_eq!(num(&big.rows, "mke2fs", "cluster_size"), 65536.0);
    assert_eq!(num(&big.rows, "mke2fs", "clusters_per_group"), 32768.0);
    assert_eq!(
        bytes(&big.rows, "mke2fs", "clusters_per_group"),
        Some(32768 * 65536)
    );
    assert_eq!(num(&big.rows, "mke2fs", "block_groups"), 1.0);
}

#[test]
fn mke2fs_cut_before_the_end_is_partial() {
    let text = fixture("mke2fs", "ext4-verbose-flex32");
    let cut: String = text.lines().take(12).map(|l| format!("{l}\n")).collect();
    let out = ext::parse(Kind::Mke2fs, &cut).unwrap();
    assert!(out.partial);
    assert_eq!(num(&out.rows, "mke2fs", "inode_count"), 131_072.0);
}

// ------------------------------------------------------------------------- time

/// real/user/sys values of bash `time` text, read independently: `XmY.Zs` → seconds.
fn bash_times(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, v) = (w.next()?, w.next()?);
            if !["real", "user", "sys"].contains(&name) || w.next().is_some() {
                return None;
            }
            let (m, s) = v.strip_suffix('s')?.split_once('m')?;
            Some((
                name.to_string(),
                m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?,
            ))
        })
        .collect()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn count_blank(text: &str) -> usize {
    text.lines().filter(|l| l.trim().is_empty()).count()
}

fn check_bash_rows(rows: &[time::TimeRow], text: &str) {
    let vals = bash_times(text);
    assert_eq!(vals.len(), rows.len() * 3);
    for (i, (row, chunk)) in rows.iter().zip(vals.chunks(3)).enumerate() {
        assert_eq!(row.index, i as u64);
        assert_eq!(row.format, "bash");
        assert_eq!(chunk[0].0, "real");
        assert!(close(row.real_s, chunk[0].1), "{row:?} {chunk:?}");
        assert!(close(row.user_s, chunk[1].1), "{row:?} {chunk:?}");
        assert!(close(row.sys_s, chunk[2].1), "{row:?} {chunk:?}");
    }
}

#[test]
fn time_seed000_whole_post() {
    let text = fixture("time", "seed000-post");
    let out = time::parse(&text).unwrap();
    assert_eq!(out.rows.len(), 10 + 10 + 2);
    assert!(!out.partial);
    check_bash_rows(&out.rows, &text);
    let r = &out.rows;
    assert!(close(r[0].real_s, 18.807) && close(r[0].user_s, 2.169) && close(r[0].sys_s, 54.013));
    assert!(close(r[10].real_s, 20.654) && close(r[10].sys_s, 64.441)); // 1m4.441s
    assert!(close(r[20].real_s, 18.920) && close(r[20].sys_s, 60.991));
    assert!(close(r[21].real_s, 20.458) && close(r[21].sys_s, 66.301));
    // The prose and the mkfs output are warnings, none of them a time line.
    let timeish =
        |t: &str| ["real", "user", "sys"].contains(&t.split_whitespace().next().unwrap_or(""));
    assert!(
        out.warnings.iter().all(|w| !timeish(&w.text)),
        "{:?}",
        out.warnings
    );
    let nonblank = text.lines().count() - count_blank(&text);
    assert_eq!(
        out.warnings.len(),
        nonblank - 22 * 3,
        "every other line is a warning"
    );
    assert!(out.warnings.iter().any(|w| w.line == 1));
}

#[test]
fn time_bash_blocks() {
    for (name, n) in [
        ("seed000-dumb-sh-0", 10),
        ("bash-time-loop", 3),
        ("bash-time-one", 1),
    ] {
        let text = fixture("time", name);
        let out = time::parse(&text).unwrap();
        assert_eq!(out.rows.len(), n, "{name}");
        assert!(out.warnings.is_empty() && !out.partial, "{name}: {out:?}");
        check_bash_rows(&out.rows, &text);
    }
}

#[test]
fn time_posix_and_gnu() {
    for name in ["bash-time-p", "gnu-p"] {
        let text = fixture("time", name);
        let out = time::parse(&text).unwrap();
        assert!(out.warnings.is_empty() && !out.partial, "{name}");
        let r = &out.rows[0];
        assert_eq!(r.format, "posix");
        for line in text.lines() {
            let (k, v) = line.split_once(' ').unwrap();
            let v: f64 = v.parse().unwrap();
            let got = match k {
                "real" => r.real_s,
                "user" => r.user_s,
                _ => r.sys_s,
            };
            assert!(close(got, v), "{name} {k}");
        }
    }

    let out = time::parse(&fixture("time", "gnu-default")).unwrap();
    assert!(out.warnings.is_empty() && !out.partial);
    let r = &out.rows[0];
    assert_eq!(r.format, "gnu");
    // 0.00user 0.17system 0:00.17elapsed 95%CPU (0avgtext+0avgdata 2652maxresident)k
    // 0inputs+0outputs (0major+353minor)pagefaults 0swaps
    assert!(close(r.user_s, 0.0) && close(r.sys_s, 0.17) && close(r.real_s, 0.17));
    assert!(close(r.cpu_percent, 95.0));
    assert_eq!(
        (r.max_rss_kb, r.fs_inputs, r.fs_outputs),
        (Some(2652), Some(0), Some(0))
    );
    assert_eq!(
        (r.major_faults, r.minor_faults, r.swaps),
        (Some(0), Some(353), Some(0))
    );
    assert_eq!(r.exit_status, None);

    let failed = time::parse(&fixture("time", "gnu-default-failed")).unwrap();
    assert_eq!(failed.rows[0].exit_status, Some(1));
    assert_eq!(failed.rows[0].minor_faults, Some(73));
}

#[test]
fn time_gnu_verbose() {
    let text = fixture("time", "gnu-verbose");
    let out = time::parse(&text).unwrap();
    assert!(out.warnings.is_empty() && !out.partial, "{out:?}");
    let r = &out.rows[0];
    assert_eq!(r.format, "gnu-verbose");
    assert_eq!(
        r.command.as_deref(),
        Some("dd if=/dev/zero of=/dev/null bs=1M count=3000 status=none")
    );
    let field = |label: &str| -> String {
        text.lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix(label)?
                    .strip_prefix(": ")
                    .map(str::to_string)
            })
            .unwrap_or_else(|| panic!("{label}"))
    };
    let int = |label: &str| field(label).parse::<u64>().ok();
    assert!(close(
        r.user_s,
        field("User time (seconds)").parse().unwrap()
    ));
    assert!(close(
        r.sys_s,
        field("System time (seconds)").parse().unwrap()
    ));
    assert!(close(r.real_s, 0.19)); // 0:00.19
    assert!(close(r.cpu_percent, 97.0));
    assert_eq!(r.max_rss_kb, int("Maximum resident set size (kbytes)"));
    assert_eq!(r.major_faults, int("Major (requiring I/O) page faults"));
    assert_eq!(
        r.minor_faults,
        int("Minor (reclaiming a frame) page faults")
    );
    assert_eq!(r.voluntary_ctx_switches, int("Voluntary context switches"));
    assert_eq!(
        r.involuntary_ctx_switches,
        int("Involuntary context switches")
    );
    assert_eq!(r.fs_inputs, int("File system inputs"));
    assert_eq!(r.fs_outputs, int("File system outputs"));
    assert_eq!(r.swaps, int("Swaps"));
    assert_eq!(r.exit_status, Some(0));

    let failed = time::parse(&fixture("time", "gnu-verbose-failed")).unwrap();
    assert_eq!(failed.rows.len(), 1);
    assert_eq!(
        (failed.rows[0].exit_status, failed.rows[0].fs_inputs),
        (Some(3), Some(16))
    );
    let killed = time::parse(&fixture("time", "gnu-verbose-signal")).unwrap();
    assert_eq!(killed.rows[0].signal, Some(9));
    assert_eq!(killed.rows[0].command.as_deref(), Some("sh -c kill -9 $$"));
}

#[test]
fn time_mixed_formats_in_one_text() {
    let text = [
        "bash-time-loop",
        "gnu-default-failed",
        "gnu-verbose",
        "bash-time-p",
        "gnu-default",
    ]
    .map(|n| fixture("time", n))
    .join("\n");
    let out = time::parse(&text).unwrap();
    let formats: Vec<_> = out.rows.iter().map(|r| r.format.as_str()).collect();
    assert_eq!(
        formats,
        ["bash", "bash", "bash", "gnu", "gnu-verbose", "posix", "gnu"]
    );
    assert_eq!(out.rows[3].exit_status, Some(1));
    assert_eq!(out.rows[4].exit_status, Some(0));
    assert_eq!(out.rows[6].exit_status, None);
    assert!(out.warnings.is_empty() && !out.partial, "{out:?}");
}

// ------------------------------------------------------------------------- e2fsck

#[test]
fn e2fsck_tt_ext4() {
    let out = e2fsck::parse(&fixture("e2fsck", "ext4-f-n-tt")).unwrap();
    assert!(out.warnings.is_empty() && !out.partial, "{out:?}");
    let kinds: Vec<_> = out.rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["pass", "pass", "pass", "peak", "pass", "pass", "summary", "total"]
    );
    let p1 = &out.rows[0];
    assert_eq!(p1.pass.as_deref(), Some("1"));
    assert_eq!(
        p1.name.as_deref(),
        Some("Checking inodes, blocks, and sizes")
    );
    // Pass 1: Memory used: 224k/0k (88k/137k), time:  0.00/ 0.00/ 0.00
    // Pass 1: I/O read: 2MB, write: 0MB, rate: 553.10MB/s
    assert_eq!(
        (
            p1.memory_kib,
            p1.memory_mmap_kib,
            p1.memory_in_use_kib,
            p1.memory_free_kib
        ),
        (Some(224), Some(0), Some(88), Some(137))
    );
    assert!(close(p1.real_s, 0.0) && close(p1.user_s, 0.0) && close(p1.sys_s, 0.0));
    assert_eq!((p1.read_mib, p1.write_mib), (Some(2), Some(0)));
    assert!(close(p1.rate_mib_s, 553.10));
    let p2 = &out.rows[1];
    assert_eq!(
        (p2.memory_in_use_kib, p2.memory_free_kib),
        (Some(109), Some(116))
    );
    assert!(close(p2.rate_mib_s, 3215.43));
    let peak = &out.rows[3];
    assert!(close(peak.real_s, 0.01));
    assert_eq!(out.rows[5].pass_number, Some(5));
    assert_eq!(
        out.rows[5].name.as_deref(),
        Some("Checking group summary information")
    );
    // /dev/loop3: 354/131072 files (0.0% non-contiguous), 33622/524288 blocks
    let s = &out.rows[6];
    assert_eq!(s.device.as_deref(), Some("/dev/loop3"));
    assert_eq!((s.files_used, s.files_total), (Some(354), Some(131_072)));
    assert_eq!(
        (s.blocks_used, s.blocks_total),
        (Some(33622), Some(524_288))
    );
    assert!(close(s.noncontiguous_pct, 0.0));
    assert_eq!(s.clean, Some(false));
    // Memory used: 224k/0k (68k/157k), time:  0.02/ 0.01/ 0.00
    // I/O read: 2MB, write: 0MB, rate: 118.83MB/s
    let t = &out.rows[7];
    assert!(close(t.real_s, 0.02) && close(t.user_s, 0.01) && close(t.sys_s, 0.0));
    assert_eq!(
        (t.memory_kib, t.memory_in_use_kib, t.read_mib),
        (Some(224), Some(68), Some(2))
    );
    assert!(close(t.rate_mib_s, 118.83));
}

#[test]
fn e2fsck_ext3_ext2_and_3a() {
    let e3 = e2fsck::parse(&fixture("e2fsck", "ext3-f-n-tt")).unwrap();
    assert!(e3.warnings.is_empty() && !e3.partial);
    // Pass 1: Memory used: 272k/0k (90k/183k), time:  0.33/ 0.03/ 0.00
    assert!(close(e3.rows[0].real_s, 0.33) && close(e3.rows[0].user_s, 0.03));
    assert_eq!(e3.rows[0].read_mib, Some(33));
    let s = e3.rows.iter().find(|r| r.kind == "summary").unwrap();
    assert!(close(s.noncontiguous_pct, 9.0));
    assert_eq!(s.blocks_used, Some(32909));

    let e2 = e2fsck::parse(&fixture("e2fsck", "ext2-f-n-tt")).unwrap();
    assert!(e2.warnings.is_empty() && !e2.partial);
    assert_eq!(e2.rows.iter().filter(|r| r.kind == "pass").count(), 5);

    let y = e2fsck::parse(&fixture("e2fsck", "ext4-f-y-tt")).unwrap();
    assert!(y.warnings.is_empty() && !y.partial);
    let a = y
        .rows
        .iter()
        .find(|r| r.pass.as_deref() == Some("3A"))
        .unwrap();
    assert_eq!((a.pass_number, a.name.as_deref()), (Some(3), None));
    let total = y.rows.last().unwrap();
    assert_eq!((total.kind.as_str(), total.write_mib), ("total", Some(1)));
}

#[test]
fn e2fsck_without_timings_clean_and_damaged() {
    let t = e2fsck::parse(&fixture("e2fsck", "ext4-f-n-t")).unwrap();
    assert!(t.warnings.is_empty() && !t.partial);
    assert_eq!(t.rows.len(), 7);
    assert!(t.rows[..5]
        .iter()
        .all(|r| r.kind == "pass" && r.memory_kib.is_none()));

    let plain = e2fsck::parse(&fixture("e2fsck", "ext4-f-n")).unwrap();
    assert!(plain.warnings.is_empty() && !plain.partial);
    assert_eq!(plain.rows.len(), 6);

    let clean = e2fsck::parse(&fixture("e2fsck", "ext4-clean-n")).unwrap();
    let s = &clean.rows[0];
    assert_eq!(
        (s.kind.as_str(), s.clean, s.noncontiguous_pct),
        ("summary", Some(true), None)
    );
    assert_eq!((s.files_used, s.blocks_total), (Some(354), Some(524_288)));

    let bad = e2fsck::parse(&fixture("e2fsck", "ext4-damaged-f-n-tt")).unwrap();
    assert!(!bad.partial);
    let lines: Vec<_> = bad.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [6, 8, 9, 21, 22, 24, 25]);
    let s = bad.rows.iter().find(|r| r.kind == "summary").unwrap();
    assert_eq!(
        s.status.as_deref(),
        Some("WARNING: Filesystem still has errors")
    );
}

#[test]
fn e2fsck_cut_short_is_partial() {
    let text = fixture("e2fsck", "ext4-f-n-tt");
    let cut: String = text.lines().take(10).map(|l| format!("{l}\n")).collect();
    let out = e2fsck::parse(&cut).unwrap();
    assert!(out.partial);
    assert_eq!(out.rows.iter().filter(|r| r.kind == "pass").count(), 3);
}

// ------------------------------------------------------------------------- fs_mark

/// Data lines of an fs_mark table, read independently.
fn fsmark_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.starts_with("FSUse%"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn fsmark_tables() {
    let text = fixture("fs_mark", "ext4-3-loops-nosync");
    let out = fsmark::parse(&text).unwrap();
    assert!(out.warnings.is_empty() && !out.partial, "{out:?}");
    let lines = fsmark_lines(&text);
    assert_eq!(out.rows.len(), 3);
    for (i, (r, l)) in out.rows.iter().zip(&lines).enumerate() {
        assert_eq!(r.index, i as u64);
        assert_eq!(r.fsuse_pct.to_string(), l[0]);
        assert_eq!(r.count.to_string(), l[1]);
        assert_eq!(r.size_bytes, 20480);
        assert_eq!(r.files_per_sec, l[3].parse::<f64>().unwrap());
        assert_eq!(r.app_overhead_us.map(|v| v.to_string()), Some(l[4].clone()));
        assert_eq!(r.creat_avg_us, None);
        assert_eq!(r.threads, Some(1));
        assert_eq!(r.sync_method.as_deref(), Some("NO SYNC"));
        assert_eq!(r.io_size_bytes, Some(16384));
        assert_eq!(r.version.as_deref(), Some("3.3"));
    }
    assert_eq!(out.rows[2].count, 3000);

    let text = fixture("fs_mark", "ext4-2-threads-fsync-verbose");
    let out = fsmark::parse(&text).unwrap();
    assert!(out.warnings.is_empty() && !out.partial, "{out:?}");
    for (r, l) in out.rows.iter().zip(fsmark_lines(&text)) {
        let n = |i: usize| l[i].parse::<u64>().ok();
        // min, avg and max of each operation, from column `first` of the line on.
        let ops = [
            ("creat", 5, [r.creat_min_us, r.creat_avg_us, r.creat_max_us]),
            ("write", 8, [r.write_min_us, r.write_avg_us, r.write_max_us]),
            (
                "fsync",
                11,
                [r.fsync_min_us, r.fsync_avg_us, r.fsync_max_us],
            ),
            ("sync", 14, [r.sync_min_us, r.sync_avg_us, r.sync_max_us]),
            (
                "close",
                17,
                [r.close_min_us, r.close_avg_us, r.close_max_us],
            ),
            (
                "unlink",
                20,
                [r.unlink_min_us, r.unlink_avg_us, r.unlink_max_us],
            ),
        ];
        for (op, first, got) in ops {
            assert_eq!(got, [n(first), n(first + 1), n(first + 2)], "{op}");
        }
        assert_eq!(r.threads, Some(2));
        assert_eq!(r.sync_method.as_deref(), Some("INBAND FSYNC"));
    }
    assert_eq!(out.rows.len(), 2);

    let keep = fsmark::parse(&fixture("fs_mark", "ext4-subdirs-keep")).unwrap();
    assert!(keep.warnings.is_empty() && !keep.partial);
    assert_eq!(
        keep.rows.iter().map(|r| r.count).collect::<Vec<_>>(),
        [800, 1600]
    );
    assert_eq!(keep.rows[0].size_bytes, 0);
}

#[test]
fn fsmark_fewer_loops_than_asked_is_partial() {
    let text = fixture("fs_mark", "ext4-3-loops-nosync");
    let cut: String = text
        .lines()
        .take(text.lines().count() - 1)
        .map(|l| format!("{l}\n"))
        .collect();
    let out = fsmark::parse(&cut).unwrap();
    assert_eq!(out.rows.len(), 2);
    assert!(out.partial);
}

// ------------------------------------------------------------------------- xfs_bmap, fiemap

/// A listing line: file range `[a..b]`, block range `c..d` (None for a hole).
type MapLine = (u64, u64, Option<(u64, u64)>);

/// `N: [a..b]: c..d` lines read independently, holes included.
fn map_lines(text: &str) -> Vec<MapLine> {
    text.lines()
        .filter_map(|l| {
            let (_, rest) = l.trim().split_once(": [")?;
            let (range, rest) = rest.split_once("]:")?;
            let (a, b) = range.split_once("..")?;
            let phys = rest.split_whitespace().next()?;
            let p = phys
                .split_once("..")
                .map(|(c, d)| (c.parse().unwrap(), d.parse().unwrap()));
            Some((a.parse().ok()?, b.parse().ok()?, p))
        })
        .collect()
}

fn check_map(rows: &[Extent], text: &str) {
    let extents: Vec<_> = map_lines(text)
        .into_iter()
        .filter(|(_, _, p)| p.is_some())
        .collect();
    assert_eq!(rows.len(), extents.len());
    for (r, (a, b, p)) in rows.iter().zip(extents) {
        let (c, _) = p.unwrap();
        assert_eq!(r.logical_bytes, a * 512);
        assert_eq!(r.length_bytes, (b - a + 1) * 512);
        assert_eq!(r.physical_bytes, Some(c * 512));
        assert_eq!(r.inode, None);
    }
}

#[test]
fn xfs_bmap_holes_every_form_agrees() {
    let forms = [
        ("xfs_bmap", "holes-v"),
        ("xfs_bmap", "holes-vp"),
        ("xfs_bmap", "holes-vvp-legend"),
        ("xfs_bmap", "holes-plain"),
        ("xfs_bmap", "holes-plain-l"),
        ("xfs_io", "holes-fiemap-v"),
        ("xfs_io", "holes-fiemap"),
        ("xfs_io", "holes-fiemap-l"),
    ];
    let mut all = Vec::new();
    for (tool, name) in forms {
        let text = fixture(tool, name);
        let out = if tool == "xfs_bmap" {
            xfs_bmap::parse_bmap(&text)
        } else {
            xfs_bmap::parse_fiemap(&text)
        }
        .unwrap();
        assert!(out.warnings.is_empty() && !out.partial, "{name}: {out:?}");
        assert_eq!(out.rows.len(), 4, "{name}: 7 lines, 3 of them holes");
        check_map(&out.rows, &text);
        assert!(out.rows.iter().all(|r| &*r.path == "mnt/holes"));
        assert_eq!(
            out.rows.iter().map(|r| r.index).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        all.push((name, out.rows));
    }
    // pwrite 0 64k, pwrite 1m 64k, falloc 2m 128k, pwrite 4m 8k
    let r = &all[0].1;
    assert_eq!(
        r.iter()
            .map(|e| (e.logical_bytes, e.length_bytes))
            .collect::<Vec<_>>(),
        [
            (0, 65536),
            (1 << 20, 65536),
            (2 << 20, 131_072),
            (4 << 20, 8192)
        ]
    );
    let strip = |rows: &[Extent]| {
        rows.iter()
            .map(|e| Extent {
                flags: "".into(),
                ..e.clone()
            })
            .collect::<Vec<_>>()
    };
    for (name, rows) in &all[1..] {
        assert_eq!(strip(rows), strip(r), "{name}");
    }
    // The flags: xfs_bmap -vp 010000 = unwritten; fiemap -v 0x800, and 0x1 on the last.
    let flags = |i: usize| all[i].1.iter().map(|e| e.flags.clone()).collect::<Vec<_>>();
    assert_eq!(flags(1), ["", "", "unwritten", ""]);
    assert_eq!(flags(2), flags(1));
    assert_eq!(flags(5), ["", "", "unwritten", "last"]);
    assert_eq!(flags(0), ["", "", "", ""]);
}

#[test]
fn xfs_bmap_fragmented_equals_fiemap() {
    let bmap_text = fixture("xfs_bmap", "fragmented-vp");
    let bmap = xfs_bmap::parse_bmap(&bmap_text).unwrap();
    let fiemap_text = fixture("xfs_io", "fragmented-fiemap-v");
    let fiemap = xfs_bmap::parse_fiemap(&fiemap_text).unwrap();
    assert!(bmap.warnings.is_empty() && fiemap.warnings.is_empty());
    assert_eq!(bmap.rows.len(), 200);
    check_map(&bmap.rows, &bmap_text);
    assert!(bmap.rows.iter().all(|e| e.length_bytes == 4096));
    for (i, (b, f)) in bmap.rows.iter().zip(&fiemap.rows).enumerate() {
        assert_eq!(b.index, i as u64);
        assert_eq!(
            (b.logical_bytes, b.physical_bytes, b.length_bytes),
            (f.logical_bytes, f.physical_bytes, f.length_bytes)
        );
        let want = if i == 199 { "last" } else { "" };
        assert_eq!(f.flags, want);
    }
}

#[test]
fn xfs_bmap_two_files_empty_delalloc() {
    let text = fixture("xfs_bmap", "two-files-v");
    let out = xfs_bmap::parse_bmap(&text).unwrap();
    assert!(out.warnings.is_empty());
    assert_eq!(out.rows.len(), 204);
    assert_eq!(
        out.rows.iter().filter(|e| &*e.path == "mnt/holes").count(),
        4
    );
    let b: Vec<_> = out
        .rows
        .iter()
        .filter(|e| &*e.path == "mnt/fragB")
        .collect();
    assert_eq!(b.len(), 200);
    assert_eq!(b[0].index, 0);
    assert_eq!(b[199].index, 199);
    check_map(&out.rows, &text);

    for (tool, name) in [
        ("xfs_bmap", "empty-v"),
        ("xfs_bmap", "attr-fork-none"),
        ("xfs_io", "empty-fiemap-v"),
    ] {
        let text = fixture(tool, name);
        let out = if tool == "xfs_bmap" {
            xfs_bmap::parse_bmap(&text)
        } else {
            xfs_bmap::parse_fiemap(&text)
        }
        .unwrap();
        assert!(
            out.rows.is_empty() && out.warnings.is_empty() && !out.partial,
            "{name}"
        );
    }

    let d = xfs_bmap::parse_bmap(&fixture("xfs_bmap", "delalloc-evp")).unwrap();
    assert_eq!(d.rows.len(), 1);
    let e = &d.rows[0];
    assert_eq!(
        (e.physical_bytes, e.length_bytes, &*e.flags),
        (None, 65536, "delalloc")
    );
}

// ------------------------------------------------------------------------- dispatch

#[test]
fn dispatch_gives_frames_of_the_same_rows() {
    let cases = [
        (Kind::MkfsXfs, "xfs", "seed000-mkfs-parent0", 43),
        (Kind::XfsInfo, "xfs", "xfs_info-mounted", 35),
        (Kind::Mke2fs, "mke2fs", "ext4-default", 8),
        (Kind::Time, "time", "seed000-post", 22),
        (Kind::E2fsck, "e2fsck", "ext4-f-n-tt", 8),
        (Kind::FsMark, "fs_mark", "ext4-3-loops-nosync", 3),
        // Block maps: 4 extents and 3 holes, holes being rows (issue 16).
        (Kind::XfsBmap, "xfs_bmap", "holes-vp", 7),
        (Kind::XfsIoFiemap, "xfs_io", "holes-fiemap-v", 7),
    ];
    for (kind, tool, name, n) in cases {
        let p =
            parse::parse_json(kind, &fixture(tool, name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(p.json.len(), n, "{name}");
        assert_eq!(p.frame.height(), n, "{name}");
        assert_eq!(p.kind, kind);
    }
    let p = parse::parse(Kind::Time, &fixture("time", "seed000-post")).unwrap();
    let real = p.frame.column("real_s").unwrap().f64().unwrap().get(0);
    assert_eq!(real, Some(18.807));
    let p = parse::parse_json(Kind::E2fsck, &fixture("e2fsck", "ext4-f-n-tt")).unwrap();
    assert_eq!(p.json[6]["files_total"], serde_json::json!(131_072));
}

// ------------------------------------------------------------------------- fio

/// Every fio JSON fixture: each row equals fio's own JSON, read here independently with
/// serde_json, field by field (latencies in ns, sizes in bytes).
#[test]
fn fio_json_rows_equal_fios_own_numbers() {
    use fslab::parse::fio;
    for name in ["randrw-2jobs-json", "seqread-jsonplus", "global-write-json"] {
        let text = fixture("fio", name);
        let rows = fio::parse_json(&text).unwrap().rows;
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut expected = 0;
        for (index, job) in doc["jobs"].as_array().unwrap().iter().enumerate() {
            for dir in ["read", "write", "trim"] {
                let d = &job[dir];
                if d["total_ios"].as_u64().unwrap_or(0) == 0 {
                    continue;
                }
                expected += 1;
                let name_ = job["jobname"].as_str().unwrap();
                let r = rows
                    .iter()
                    .find(|r| r.job == index as u64 && r.direction == dir)
                    .unwrap_or_else(|| panic!("{name}: no row for {name_} {dir}"));
                assert_eq!(r.jobname, name_);
                assert_eq!(r.groupid, job["groupid"].as_i64().unwrap());
                assert_eq!(r.fio_version.as_deref(), doc["fio version"].as_str());
                assert_eq!(r.iops, d["iops"].as_f64().unwrap(), "{name} iops");
                assert_eq!(r.bw_bytes_per_s, d["bw_bytes"].as_f64().unwrap());
                assert_eq!(r.io_bytes, d["io_bytes"].as_u64().unwrap());
                assert_eq!(r.runtime_ms, d["runtime"].as_u64().unwrap());
                assert_eq!(r.total_ios, d["total_ios"].as_u64());
                assert_eq!(r.error, job["error"].as_i64().unwrap());
                for (lat, got) in [
                    (
                        "slat_ns",
                        [
                            r.slat_min_ns,
                            r.slat_max_ns,
                            r.slat_mean_ns,
                            r.slat_stddev_ns,
                        ],
                    ),
                    (
                        "clat_ns",
                        [
                            r.clat_min_ns,
                            r.clat_max_ns,
                            r.clat_mean_ns,
                            r.clat_stddev_ns,
                        ],
                    ),
                    (
                        "lat_ns",
                        [r.lat_min_ns, r.lat_max_ns, r.lat_mean_ns, r.lat_stddev_ns],
                    ),
                ] {
                    for (field, g) in ["min", "max", "mean", "stddev"].iter().zip(got) {
                        assert_eq!(g, d[lat][field].as_f64(), "{name} {dir} {lat}.{field}");
                    }
                }
                let pct = d["clat_ns"]["percentile"].as_object().unwrap();
                assert_eq!(r.clat_percentiles.len(), pct.len());
                for (k, v) in pct {
                    let col = fio::percentile_column(k);
                    assert_eq!(
                        r.clat_percentiles[&col],
                        v.as_f64().unwrap(),
                        "{name} {col}"
                    );
                }
                let opt = |k: &str| {
                    job["job options"][k]
                        .as_str()
                        .or(doc["global options"][k].as_str())
                        .map(str::to_string)
                };
                assert_eq!(r.rw, opt("rw"));
                assert_eq!(r.bs, opt("bs"));
                assert_eq!(r.iodepth, opt("iodepth"));
                assert_eq!(r.ioengine, opt("ioengine"));
                assert_eq!(r.direct, opt("direct"));
                assert_eq!(r.numjobs, opt("numjobs"));
                assert_eq!(r.size, opt("size"));
            }
        }
        assert_eq!(rows.len(), expected, "{name}");
    }
    // Spot checks written out from the fixture text.
    let rows = fio::parse_json(&fixture("fio", "global-write-json"))
        .unwrap()
        .rows;
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].ioengine.as_deref(), Some("libaio"));
    assert_eq!(rows[1].bs.as_deref(), Some("64k"));
    assert!(rows[0].clat_percentiles.contains_key("clat_p99_9_ns"));
}

/// Terse v3: the fields by position, read here independently (µs → ns, KiB → bytes).
#[test]
fn fio_terse_rows_equal_the_fields() {
    use fslab::parse::fio;
    for name in ["randread-terse", "randrw-terse"] {
        let text = fixture("fio", name);
        let rows = fio::parse_terse(&text).unwrap().rows;
        let mut n = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split(';').collect();
            for (d, dir) in ["read", "write"].iter().enumerate() {
                let b = 5 + d * 41;
                let num = |i: usize| f[b + i].trim_end_matches('%').parse::<f64>().unwrap();
                if num(0) == 0.0 {
                    continue;
                }
                let r = &rows[n];
                n += 1;
                assert_eq!((r.jobname.as_str(), r.direction.as_str()), (f[2], *dir));
                assert_eq!(r.io_bytes as f64, num(0) * 1024.0);
                assert_eq!(r.bw_bytes_per_s, num(1) * 1024.0);
                assert_eq!(r.iops, num(2));
                assert_eq!(r.runtime_ms as f64, num(3));
                assert_eq!(r.clat_mean_ns, Some(num(10) * 1000.0));
                assert_eq!(r.lat_max_ns, Some(num(33) * 1000.0));
                let (p, v) = f[b + 12 + 12].split_once('=').unwrap();
                assert_eq!(p, "99.000000%");
                assert_eq!(
                    r.clat_percentiles["clat_p99_ns"],
                    v.parse::<f64>().unwrap() * 1000.0
                );
            }
        }
        assert_eq!(rows.len(), n, "{name}");
        assert!(n >= 1);
    }
    let mixed = fio::parse_terse(&fixture("fio", "randrw-terse"))
        .unwrap()
        .rows;
    assert_eq!(mixed.len(), 4, "two jobs, both directions");
}

#[test]
fn fio_through_the_generic_parse_gives_the_fio_table() {
    let p = parse::parse(Kind::Fio, &fixture("fio", "randrw-2jobs-json")).unwrap();
    assert_eq!(Kind::Fio.table(), "fio");
    assert_eq!(p.frame.height(), 4);
    for c in [
        "iops",
        "bw_bytes_per_s",
        "clat_p99_ns",
        "clat_p50_ns",
        "iodepth",
        "direction",
    ] {
        assert!(p.frame.column(c).is_ok(), "no column {c}");
    }
    let t = parse::parse(Kind::FioTerse, &fixture("fio", "randread-terse")).unwrap();
    assert_eq!(t.frame.height(), 1);
}

// ------------------------------------------------------------------------- perf stat

#[test]
fn perf_stat_rows_equal_the_csv_fields() {
    use fslab::parse::perf_stat::{self, CounterStatus};
    let out = perf_stat::parse(&fixture("perf_stat", "dd-default")).unwrap();
    // dd's own three lines are warnings, not rows.
    assert_eq!(out.warnings.len(), 3);
    let r = &out.rows;
    assert_eq!(r.len(), 5);
    assert_eq!(
        (r[0].event.as_str(), r[0].value, r[0].unit.as_deref()),
        ("task-clock", Some(4.55), Some("msec"))
    );
    assert_eq!(r[0].run_time_ns, Some(4547686));
    assert_eq!(r[0].run_pct, Some(100.0));
    assert_eq!(r[0].metric_value, Some(0.808));
    assert_eq!(r[0].metric_unit.as_deref(), Some("CPUs utilized"));
    assert_eq!(
        (r[2].event.as_str(), r[2].value),
        ("page-faults", Some(336.0))
    );
    assert_eq!(r[3].status, CounterStatus::NotSupported);
    assert_eq!(r[3].value, None);

    let r = perf_stat::parse(&fixture("perf_stat", "repeat-3"))
        .unwrap()
        .rows;
    assert_eq!(r[0].variance_pct, Some(0.25));
    assert_eq!(r[1].variance_pct, Some(5.77));
    assert_eq!(r[1].run_time_ns, Some(26204163));

    let r = perf_stat::parse(&fixture("perf_stat", "per-cpu-block"))
        .unwrap()
        .rows;
    assert_eq!(r.len(), 4);
    assert_eq!(r[1].cpu.as_deref(), Some("CPU1"));
    assert_eq!(r[1].value, Some(33.0));
    assert_eq!(r[3].event, "block:block_rq_complete");

    let r = perf_stat::parse(&fixture("perf_stat", "interval-semicolon"))
        .unwrap()
        .rows;
    assert_eq!(r.len(), 6);
    assert_eq!(r[2].time_s, Some(0.205492498));
    assert_eq!(r[2].value, Some(31.84));
    assert_eq!(r[3].event, "page-faults");
    let p = parse::parse(Kind::PerfStat, &fixture("perf_stat", "dd-default")).unwrap();
    assert_eq!(Kind::PerfStat.table(), "perf_stat");
    assert_eq!(p.frame.height(), 5);
}

/// The same workload's human output (no `-x`): the same counters, in the same table.
#[test]
fn perf_stat_human_rows_equal_the_printed_counters() {
    use fslab::parse::perf_stat::{self, CounterStatus};
    let out = perf_stat::parse_human(&fixture("perf_stat", "dd-default-human")).unwrap();
    // dd's own three lines are warnings, not rows.
    assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
    let r = &out.rows;
    let got: Vec<_> = r
        .iter()
        .map(|r| (r.event.as_str(), r.value, r.status))
        .collect();
    assert_eq!(
        got,
        [
            ("task-clock", Some(2.88), CounterStatus::Counted),
            ("context-switches", Some(0.0), CounterStatus::Counted),
            ("page-faults", Some(338.0), CounterStatus::Counted),
            ("instructions", None, CounterStatus::NotSupported),
            ("cycles", None, CounterStatus::NotSupported),
            (
                "seconds time elapsed",
                Some(0.003702428),
                CounterStatus::Counted
            ),
            ("seconds user", Some(0.003562), CounterStatus::Counted),
            ("seconds sys", Some(0.0), CounterStatus::Counted),
        ]
    );
    assert_eq!(r[0].unit.as_deref(), Some("msec"));
    assert_eq!(
        (r[0].metric_value, r[0].metric_unit.as_deref()),
        (Some(0.779), Some("CPUs utilized"))
    );
    let p = parse::parse(
        Kind::PerfStatHuman,
        &fixture("perf_stat", "dd-default-human"),
    )
    .unwrap();
    assert_eq!(Kind::PerfStatHuman.table(), "perf_stat");
    assert_eq!(p.frame.height(), 8);
}

/// `--per-thread` (perf 6.1, captured here): one row per thread and event, in both
/// formats, the thread (`comm-pid`) in its own column; the main thread, which counted
/// nothing, is `<not counted>`.
#[test]
fn perf_stat_per_thread_rows_carry_the_thread() {
    use fslab::parse::perf_stat::{self, CounterStatus};
    type Parser = fn(&str) -> Result<parse::Output<perf_stat::PerfStatRow>, parse::ParseError>;
    let cases: [(&str, Parser, f64); 2] = [
        ("per-thread", perf_stat::parse, 11.17),
        ("per-thread-human", perf_stat::parse_human, 10.21),
    ];
    for (name, read, clock) in cases {
        let out = read(&fixture("perf_stat", name)).unwrap();
        assert!(out.warnings.is_empty(), "{name}: {:?}", out.warnings);
        let r: Vec<_> = out
            .rows
            .iter()
            .filter(|r| r.unit.as_deref() != Some("s"))
            .collect();
        assert_eq!(r.len(), 9, "{name}: {r:?}");
        assert_eq!(
            (r[0].thread.as_deref(), r[0].event.as_str(), r[0].value),
            (Some("python3-21698"), "task-clock", Some(clock)),
            "{name}"
        );
        assert_eq!(r[0].metric_unit.as_deref(), Some("CPUs utilized"), "{name}");
        assert_eq!(
            (r[2].thread.as_deref(), r[2].status, r[2].value),
            (Some("python3-21643"), CounterStatus::NotCounted, None),
            "{name}"
        );
        let threads: std::collections::BTreeSet<_> =
            r.iter().filter_map(|r| r.thread.as_deref()).collect();
        assert_eq!(threads.len(), 3, "{name}");
        assert!(r.iter().all(|r| r.cpu.is_none()), "{name}");
    }
    let p = parse::parse(Kind::PerfStat, &fixture("perf_stat", "per-thread")).unwrap();
    let thread = p.frame.column("thread").unwrap().str().unwrap().get(0);
    assert_eq!(thread, Some("python3-21698"));
    // With -I: the time stamp, then the thread; the human format's column header is a
    // warning.
    let csv = perf_stat::parse(&fixture("perf_stat", "per-thread-interval")).unwrap();
    let human = perf_stat::parse_human(&fixture("perf_stat", "per-thread-interval-human")).unwrap();
    assert_eq!((csv.rows.len(), csv.warnings.len()), (12, 0));
    assert_eq!((human.rows.len(), human.warnings.len()), (12, 1));
    assert_eq!(
        (
            csv.rows[0].time_s,
            csv.rows[0].thread.as_deref(),
            csv.rows[0].value
        ),
        (Some(0.500231977), Some("python3-23620"), Some(4.55))
    );
    assert_eq!(
        (human.rows[11].time_s, human.rows[11].thread.as_deref()),
        (Some(1.001309674), Some("python3-23578"))
    );
    assert_eq!(human.rows[11].status, CounterStatus::NotCounted);
}

/// `--metric-only`, CSV (a post on linux-kernel): the header names the prefix and the
/// metrics; each value is a row with its metric and unit, and no counter.
#[test]
fn perf_stat_metric_only_csv_rows_are_the_metrics() {
    use fslab::parse::perf_stat;
    let out = perf_stat::parse(&fixture("perf_stat", "metric-only-per-socket")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let got: Vec<_> = out
        .rows
        .iter()
        .map(|r| {
            (
                r.event.as_str(),
                r.metric_unit.as_deref(),
                r.metric_value,
                r.value,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("GHz", Some("GHz"), Some(0.593), None),
            ("insn per cycle", Some("insn per cycle"), Some(2.0), None),
            (
                "branch-misses of all branches",
                Some("branch-misses of all branches"),
                Some(0.6),
                None
            ),
        ]
    );
    let r = &out.rows[0];
    assert_eq!(
        (r.time_s, r.cpu.as_deref(), r.cpus),
        (Some(0.000683094), Some("S0"), Some(8))
    );
}

/// `--topdown -I1000`, which prints `--metric-only` tables, human format (perf's own
/// topdown.txt): before perf 6.3 each header is the metric (values in %), from 6.3
/// `UNIT  NAME`. One row per value, with the interval's time stamp.
#[test]
fn perf_stat_metric_only_human_rows_are_the_metrics() {
    use fslab::parse::perf_stat;
    let out = perf_stat::parse_human(&fixture("perf_stat", "metric-only-topdown-human")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.rows.len(), 24);
    let first: Vec<_> = out.rows[..4]
        .iter()
        .map(|r| (r.event.as_str(), r.metric_unit.as_deref(), r.metric_value))
        .collect();
    assert_eq!(
        first,
        [
            ("tma_retiring", Some("%"), Some(11.5)),
            ("tma_backend_bound", Some("%"), Some(34.9)),
            ("tma_frontend_bound", Some("%"), Some(46.9)),
            ("tma_bad_speculation", Some("%"), Some(6.7)),
        ]
    );
    assert_eq!(out.rows[4].time_s, Some(2.006141972));
    assert_eq!(
        (out.rows[23].event.as_str(), out.rows[23].metric_value),
        ("tma_bad_speculation", Some(7.3))
    );
    assert!(out.rows.iter().all(|r| r.value.is_none()));

    let out =
        perf_stat::parse_human(&fixture("perf_stat", "metric-only-topdown-icelake-human")).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(out.rows.len(), 32);
    let r = &out.rows[1];
    assert_eq!(
        (
            r.time_s,
            r.event.as_str(),
            r.metric_unit.as_deref(),
            r.metric_value
        ),
        (
            Some(1.00128133),
            "bad speculation",
            Some("bad speculation"),
            Some(15.3)
        )
    );
    // Values with no header above them are not rows.
    let out = perf_stat::parse_human(" Performance counter stats for 'true':\n\n                    0.56\n\n       0.002127319 seconds time elapsed\n").unwrap();
    assert_eq!(
        (out.rows.len(), out.warnings.len()),
        (1, 1),
        "{:?}",
        out.rows
    );
}
