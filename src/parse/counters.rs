//! Kernel counter files, read as snapshots and differenced over a timed iteration
//! (`counters:` on the workload; `counters.parquet`). Pure: the runner reads the files
//! (`run::counters`), this module names the numbers and subtracts them.
//!
//! - **XFS statistics** (`/sys/fs/xfs/<dev>/stats/stats`, `/proc/fs/xfs/stat`): each line
//!   is a group (`log`, `attr`, `dir` …) followed by its counters. The counters are named
//!   as the kernel's `struct __xfsstats` names them (fs/xfs/xfs_stats.h: `xs_log_writes`,
//!   `xs_log_blocks`, `xs_attr_get` …); the per-btree lines (`abtb2`, `rmapbt` …) have the
//!   fifteen `__XBTS_*` fields (`lookup` … `moves`). A group or field this table does not
//!   know (a newer kernel) keeps its place as `<group>_<n>` and is reported once.
//! - **`/proc/diskstats`**: the fields of Documentation/admin-guide/iostats.rst.
//! - **`/proc/vmstat`**: the counters that explain file system I/O (page-ins and -outs,
//!   faults, dirtied and written pages, reclaim).
//! - **ext4** (`/sys/fs/ext4/<dev>/`): one number per file.

use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// One number of a snapshot. It reads back from JSON (a guest's agent sends its
/// snapshots so) when its unit is one of this module's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The line or file it came from (`log`, `diskstats`, `vmstat`, `ext4`).
    pub group: String,
    /// The kernel's name for it.
    pub name: String,
    pub value: u64,
    /// `count`, `sectors` (512 B), `ms`, `KiB`, `bytes`, `pages`, `blocks`.
    #[serde(deserialize_with = "known_unit")]
    pub unit: Unit,
    /// A level (a gauge), not a running count: its delta is a change, not a number of
    /// events.
    pub gauge: bool,
    /// The counter is 32 bits wide in the kernel (it wraps at 2^32).
    pub wraps_at_32: bool,
}

/// A counter's unit: one of this module's names. (An alias: serde would borrow a
/// field spelled `&str` from its input.)
pub type Unit = &'static str;

/// The unit named `name`, if a counter of this module has it.
pub fn unit_named(name: &str) -> Option<&'static str> {
    ["count", "bytes"]
        .into_iter()
        .chain(DISKSTATS_FIELDS.iter().map(|f| f.1))
        .chain(VMSTAT_FIELDS.iter().map(|f| f.1))
        .chain(EXT4_FILES.iter().map(|f| f.1))
        .find(|u| *u == name)
}

fn known_unit<'de, D: Deserializer<'de>>(d: D) -> Result<Unit, D::Error> {
    let name = String::deserialize(d)?;
    unit_named(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown unit `{name}`")))
}

/// A counter over one iteration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delta {
    pub group: String,
    pub name: String,
    /// after − before (a 32-bit counter that wrapped is counted across the wrap).
    pub delta: i64,
    pub before: u64,
    pub after: u64,
    pub unit: &'static str,
    pub gauge: bool,
    /// The counter wrapped during the iteration (the delta counts across the wrap).
    pub wrapped: bool,
}

/// What a snapshot could not name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unnamed {
    pub line: usize,
    pub reason: String,
}

const BTREE_FIELDS: [&str; 15] = [
    "lookup",
    "compare",
    "insrec",
    "delrec",
    "newroot",
    "killroot",
    "increment",
    "decrement",
    "lshift",
    "rshift",
    "split",
    "join",
    "alloc",
    "free",
    "moves",
];

/// The `struct __xfsstats` members of each stats line, in order.
fn xfs_fields(group: &str) -> Option<Vec<String>> {
    let own = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect());
    match group {
        "extent_alloc" => own(&["xs_allocx", "xs_allocb", "xs_freex", "xs_freeb"]),
        "abt" => own(&[
            "xs_abt_lookup",
            "xs_abt_compare",
            "xs_abt_insrec",
            "xs_abt_delrec",
        ]),
        "blk_map" => own(&[
            "xs_blk_mapr",
            "xs_blk_mapw",
            "xs_blk_unmap",
            "xs_add_exlist",
            "xs_del_exlist",
            "xs_look_exlist",
            "xs_cmp_exlist",
        ]),
        "bmbt" => own(&[
            "xs_bmbt_lookup",
            "xs_bmbt_compare",
            "xs_bmbt_insrec",
            "xs_bmbt_delrec",
        ]),
        "dir" => own(&[
            "xs_dir_lookup",
            "xs_dir_create",
            "xs_dir_remove",
            "xs_dir_getdents",
        ]),
        "trans" => own(&["xs_trans_sync", "xs_trans_async", "xs_trans_empty"]),
        "ig" => own(&[
            "xs_ig_attempts",
            "xs_ig_found",
            "xs_ig_frecycle",
            "xs_ig_missed",
            "xs_ig_dup",
            "xs_ig_reclaims",
            "xs_ig_attrchg",
        ]),
        "log" => own(&[
            "xs_log_writes",
            "xs_log_blocks",
            "xs_log_noiclogs",
            "xs_log_force",
            "xs_log_force_sleep",
        ]),
        "push_ail" => own(&[
            "xs_try_logspace",
            "xs_sleep_logspace",
            "xs_push_ail",
            "xs_push_ail_success",
            "xs_push_ail_pushbuf",
            "xs_push_ail_pinned",
            "xs_push_ail_locked",
            "xs_push_ail_flushing",
            "xs_push_ail_restarts",
            "xs_push_ail_flush",
        ]),
        "xstrat" => own(&["xs_xstrat_quick", "xs_xstrat_split"]),
        "rw" => own(&["xs_write_calls", "xs_read_calls"]),
        "attr" => own(&[
            "xs_attr_get",
            "xs_attr_set",
            "xs_attr_remove",
            "xs_attr_list",
        ]),
        "icluster" => own(&[
            "xs_iflush_count",
            "xs_icluster_flushcnt",
            "xs_icluster_flushinode",
        ]),
        // Older kernels name these vn_*; the members are now these.
        "vnodes" => own(&[
            "xs_inodes_active",
            "vn_alloc",
            "vn_get",
            "vn_hold",
            "xs_inode_destroy",
            "xs_inode_destroy2",
            "xs_inode_mark_reclaimable",
            "vn_free",
        ]),
        "buf" => own(&[
            "xb_get",
            "xb_create",
            "xb_get_locked",
            "xb_get_locked_waited",
            "xb_busy_locked",
            "xb_miss_locked",
            "xb_page_retries",
            "xb_page_found",
            "xb_get_read",
        ]),
        "abtb2" | "abtc2" | "bmbt2" | "ibt2" | "fibt2" | "rmapbt" | "refcntbt" | "rmapbt_mem"
        | "rcbagbt" | "rtrmapbt" | "rtrmapbt_mem" | "rtrefcntbt" => Some(
            BTREE_FIELDS
                .iter()
                .map(|f| format!("{group}_{f}"))
                .collect(),
        ),
        "qm" => own(&[
            "xs_qm_dqreclaims",
            "xs_qm_dqreclaim_misses",
            "xs_qm_dquot_dups",
            "xs_qm_dqcachemisses",
            "xs_qm_dqcachehits",
            "xs_qm_dqwants",
            "xs_qm_dquot",
            "xs_qm_dquot_unused",
        ]),
        "xpc" => own(&["xs_xstrat_bytes", "xs_write_bytes", "xs_read_bytes"]),
        "defer_relog" => own(&["xs_defer_relog"]),
        _ => None,
    }
}

/// Parse an XFS stats file. Unknown groups and extra fields keep their place as
/// `<group>_<n>` and are listed in the second value.
pub fn xfs_stats(text: &str) -> (Vec<Sample>, Vec<Unnamed>) {
    let mut out = Vec::new();
    let mut unnamed = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        let Some(group) = words.next() else { continue };
        if group == "debug" {
            continue; // 1 on a DEBUG kernel: a setting, not a counter
        }
        let names = xfs_fields(group);
        if names.is_none() {
            unnamed.push(Unnamed {
                line: n + 1,
                reason: format!("XFS stats group `{group}` is not in fslab's table; its fields are named {group}_1, {group}_2 …"),
            });
        }
        let wide = matches!(group, "xpc" | "defer_relog");
        for (i, w) in words.enumerate() {
            let Ok(value) = w.parse::<u64>() else {
                unnamed.push(Unnamed {
                    line: n + 1,
                    reason: format!("`{w}` in XFS stats group `{group}` is not a number"),
                });
                continue;
            };
            let name = match names.as_ref().and_then(|v| v.get(i)) {
                Some(name) => name.clone(),
                None => {
                    if names.is_some() {
                        unnamed.push(Unnamed {
                            line: n + 1,
                            reason: format!(
                                "XFS stats group `{group}` has more fields than fslab's table; field {} is named {group}_{}",
                                i + 1,
                                i + 1
                            ),
                        });
                    }
                    format!("{group}_{}", i + 1)
                }
            };
            let unit = if group == "xpc" { "bytes" } else { "count" };
            let gauge = matches!(
                name.as_str(),
                "xs_inodes_active" | "xs_qm_dquot" | "xs_qm_dquot_unused"
            );
            out.push(Sample {
                group: group.to_string(),
                name,
                value,
                unit,
                gauge,
                wraps_at_32: !wide,
            });
        }
    }
    (out, unnamed)
}

/// `/proc/diskstats` fields after major, minor and name, with their units
/// (Documentation/admin-guide/iostats.rst).
const DISKSTATS_FIELDS: [(&str, &str, bool); 17] = [
    ("reads_completed", "count", false),
    ("reads_merged", "count", false),
    ("sectors_read", "sectors", false),
    ("read_ms", "ms", false),
    ("writes_completed", "count", false),
    ("writes_merged", "count", false),
    ("sectors_written", "sectors", false),
    ("write_ms", "ms", false),
    ("in_flight", "count", true),
    ("io_ms", "ms", false),
    ("weighted_io_ms", "ms", false),
    ("discards_completed", "count", false),
    ("discards_merged", "count", false),
    ("sectors_discarded", "sectors", false),
    ("discard_ms", "ms", false),
    ("flushes_completed", "count", false),
    ("flush_ms", "ms", false),
];

/// The `/proc/diskstats` lines of the given devices (major, minor), each field named;
/// the group is the kernel's device name (`loop3`).
pub fn diskstats(text: &str, devices: &[(u32, u32)]) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 4 {
            continue;
        }
        let (Ok(major), Ok(minor)) = (w[0].parse::<u32>(), w[1].parse::<u32>()) else {
            continue;
        };
        if !devices.contains(&(major, minor)) {
            continue;
        }
        for (i, v) in w[3..].iter().enumerate() {
            let Ok(value) = v.parse::<u64>() else {
                continue;
            };
            let (name, unit, gauge) = DISKSTATS_FIELDS
                .get(i)
                .map(|(n, u, g)| (n.to_string(), *u, *g))
                .unwrap_or_else(|| (format!("field_{}", i + 4), "count", false));
            out.push(Sample {
                group: w[2].to_string(),
                name,
                value,
                unit,
                gauge,
                // Kernel "unsigned long": 64 bits on the machines fslab runs on.
                wraps_at_32: false,
            });
        }
    }
    out
}

/// The `/proc/vmstat` counters fslab keeps, with their units.
pub const VMSTAT_FIELDS: [(&str, &str); 16] = [
    ("pgpgin", "KiB"),
    ("pgpgout", "KiB"),
    ("pswpin", "pages"),
    ("pswpout", "pages"),
    ("pgfault", "count"),
    ("pgmajfault", "count"),
    ("nr_dirtied", "pages"),
    ("nr_written", "pages"),
    ("pgsteal_kswapd", "pages"),
    ("pgsteal_direct", "pages"),
    ("pgscan_kswapd", "pages"),
    ("pgscan_direct", "pages"),
    ("allocstall_normal", "count"),
    ("allocstall_movable", "count"),
    ("workingset_refault_file", "pages"),
    ("pginodesteal", "pages"),
];

/// The kept `/proc/vmstat` counters.
pub fn vmstat(text: &str) -> Vec<Sample> {
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.split_once(' ')?;
            let unit = VMSTAT_FIELDS.iter().find(|(n, _)| *n == name)?.1;
            Some(Sample {
                group: "vmstat".into(),
                name: name.to_string(),
                value: value.trim().parse().ok()?,
                unit,
                gauge: false,
                wraps_at_32: false,
            })
        })
        .collect()
}

/// ext4's sysfs counters fslab reads (file name, unit, gauge).
pub const EXT4_FILES: [(&str, &str, bool); 7] = [
    ("session_write_kbytes", "KiB", false),
    ("lifetime_write_kbytes", "KiB", false),
    ("delayed_allocation_blocks", "blocks", true),
    ("reserved_clusters", "blocks", true),
    ("errors_count", "count", false),
    ("warning_count", "count", false),
    ("msg_count", "count", false),
];

/// ext4 counters from (file name, contents) pairs; files that are not numbers are left
/// out.
pub fn ext4(files: &[(&str, String)]) -> Vec<Sample> {
    files
        .iter()
        .filter_map(|(name, text)| {
            let (_, unit, gauge) = EXT4_FILES.iter().find(|(n, _, _)| n == name)?;
            Some(Sample {
                group: "ext4".into(),
                name: name.to_string(),
                value: text.trim().parse().ok()?,
                unit,
                gauge: *gauge,
                wraps_at_32: false,
            })
        })
        .collect()
}

/// after − before for every counter in both snapshots, in the order of `after`. A 32-bit
/// counter that went down wrapped: its delta counts across the wrap. A 64-bit counter
/// that went down (a reset) gives a negative delta, and so does a gauge that fell.
pub fn deltas(before: &[Sample], after: &[Sample]) -> Vec<Delta> {
    let earlier: BTreeMap<(&str, &str), &Sample> = before
        .iter()
        .map(|s| ((s.group.as_str(), s.name.as_str()), s))
        .collect();
    after
        .iter()
        .filter_map(|a| {
            let b = earlier.get(&(a.group.as_str(), a.name.as_str()))?;
            let wrapped = !a.gauge && a.wraps_at_32 && a.value < b.value && b.value < (1 << 32);
            let delta = if wrapped {
                (a.value + (1u64 << 32) - b.value) as i64
            } else {
                a.value as i64 - b.value as i64
            };
            Some(Delta {
                group: a.group.clone(),
                name: a.name.clone(),
                delta,
                before: b.value,
                after: a.value,
                unit: a.unit,
                gauge: a.gauge,
                wrapped,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's kernel (6.18), /sys/fs/xfs/stats/stats, cut to a few lines.
    const XFS: &str = "extent_alloc 3145015 5250452 51957 946479
log 117497 7376102 30853 3859 4575
attr 4903072 0 0 0
vnodes 1001 0 0 0 12513919 12513919 12513919 0
rmapbt 4036416 47816939 1334204 14566 214 0 12952 642228 635736 0 7694 0 7908 0 106889336
xpc 11941634048 16808161280 0
defer_relog 0
debug 0
";

    #[test]
    fn a_sample_reads_back_from_json_with_a_known_unit_only() {
        let v = vmstat("pgpgin 10\n");
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Vec<Sample>>(&json).unwrap(), v);
        let e = serde_json::from_str::<Sample>(&json[1..json.len() - 1].replace("KiB", "furlongs"))
            .unwrap_err();
        assert!(e.to_string().contains("unknown unit `furlongs`"), "{e}");
        for u in ["count", "sectors", "ms", "KiB", "bytes", "pages", "blocks"] {
            assert_eq!(unit_named(u), Some(u));
        }
    }

    #[test]
    fn xfs_fields_are_named_as_the_kernel_names_them() {
        let (s, unnamed) = xfs_stats(XFS);
        assert!(unnamed.is_empty(), "{unnamed:?}");
        let get = |n: &str| {
            s.iter()
                .find(|x| x.name == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        assert_eq!(get("xs_log_writes").value, 117497);
        assert_eq!(get("xs_log_blocks").value, 7376102);
        assert_eq!(get("xs_log_force_sleep").value, 4575);
        assert_eq!(get("xs_attr_get").value, 4903072);
        assert_eq!(get("xs_freeb").value, 946479);
        assert_eq!(get("rmapbt_moves").value, 106889336);
        assert_eq!(get("rmapbt_lookup").group, "rmapbt");
        assert!(get("xs_inodes_active").gauge);
        let bytes = get("xs_write_bytes");
        assert_eq!(
            (bytes.value, bytes.unit, bytes.wraps_at_32),
            (16808161280, "bytes", false)
        );
        assert_eq!(get("xs_defer_relog").value, 0);
        assert!(!s.iter().any(|x| x.group == "debug"));
        // 4 + 5 + 4 + 8 + 15 + 3 + 1 numbers.
        assert_eq!(s.len(), 40);
    }

    #[test]
    fn an_unknown_group_or_extra_field_keeps_its_place_and_is_said() {
        let (s, unnamed) = xfs_stats("newthing 5 6\nlog 1 2 3 4 5 6\n");
        assert_eq!(s[0].name, "newthing_1");
        assert_eq!(s[1].name, "newthing_2");
        assert_eq!(s.last().unwrap().name, "log_6");
        assert_eq!(unnamed.len(), 2, "{unnamed:?}");
        assert!(unnamed[0].reason.contains("`newthing`"));
        assert!(unnamed[1].reason.contains("field 6"));
    }

    #[test]
    fn diskstats_of_the_points_devices_only() {
        let text = "   7       3 loop3 120 0 960 30 5000 10 80000 900 0 700 930 0 0 0 0 12 4\n   7       4 loop4 1 2 3 4 5 6 7 8 9 10 11\n 254       0 vda 9 9 9 9 9 9 9 9 9 9 9\n";
        let s = diskstats(text, &[(7, 3)]);
        assert!(s.iter().all(|x| x.group == "loop3"));
        assert_eq!(s.len(), 17);
        let get = |n: &str| s.iter().find(|x| x.name == n).unwrap();
        assert_eq!(
            (get("sectors_read").value, get("sectors_read").unit),
            (960, "sectors")
        );
        assert_eq!(get("sectors_written").value, 80000);
        assert_eq!((get("write_ms").value, get("write_ms").unit), (900, "ms"));
        assert!(get("in_flight").gauge);
        assert_eq!(get("flushes_completed").value, 12);
        // An old kernel's 11 fields.
        assert_eq!(diskstats(text, &[(7, 4)]).len(), 11);
    }

    #[test]
    fn vmstat_and_ext4_keep_their_listed_counters() {
        let v = vmstat("nr_free_pages 100\npgpgin 4096\npgpgout 8\nnr_dirtied 77\n");
        let names: Vec<&str> = v.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pgpgin", "pgpgout", "nr_dirtied"]);
        assert_eq!(v[0].unit, "KiB");
        let e = ext4(&[
            ("session_write_kbytes", "1234\n".into()),
            ("delayed_allocation_blocks", "3\n".into()),
            ("unknown_file", "9\n".into()),
            ("errors_count", "not a number".into()),
        ]);
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].value, e[0].unit), (1234, "KiB"));
        assert!(e[1].gauge);
    }

    #[test]
    fn deltas_count_across_a_32_bit_wrap_and_keep_falls() {
        let s = |name: &str, value: u64, wraps: bool, gauge: bool| Sample {
            group: "g".into(),
            name: name.into(),
            value,
            unit: "count",
            gauge,
            wraps_at_32: wraps,
        };
        let before = [
            s("a", 10, true, false),
            s("w", u32::MAX as u64 - 1, true, false),
            s("g", 9, true, true),
            s("r", 100, false, false),
        ];
        let after = [
            s("a", 25, true, false),
            s("w", 3, true, false),
            s("g", 4, true, true),
            s("r", 40, false, false),
            s("new", 1, true, false),
        ];
        let d = deltas(&before, &after);
        assert_eq!(d.len(), 4, "a counter missing before has no delta");
        assert_eq!((d[0].delta, d[0].wrapped), (15, false));
        assert_eq!((d[1].delta, d[1].wrapped), (5, true));
        assert_eq!((d[2].delta, d[2].wrapped), (-5, false));
        assert_eq!((d[3].delta, d[3].wrapped), (-60, false));
    }
}
