//! Names, paths and sizes in a draft: device paths, `tools:` names, the parse kind of a
//! program, paths replaced by `{{dev.X}}`/`{{mnt}}`, sizes and numbers as written.

use super::programs::Program;
use super::shell::Cmd;
use crate::spec::HARMLESS_DEV_PATHS;

pub(super) fn is_device(w: &str) -> bool {
    let w = w.trim_end_matches([',', ';']);
    (w.starts_with("/dev/")
        && !HARMLESS_DEV_PATHS.contains(&w)
        && w.len() > 5
        && !w.starts_with("/dev/shm"))
        || w.ends_with(".img")
        || w.ends_with(".image")
        || w.ends_with(".raw")
}

pub(super) fn tool_name(program: &str) -> String {
    let s: String = program
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('_').to_string();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("tool_{s}")
    } else {
        s
    }
}

pub(super) fn parse_kind(p: &Program) -> Option<&'static str> {
    match p {
        Program::Mkfs(fs) if fs == "xfs" => Some("mkfs.xfs"),
        Program::Mkfs(fs) if fs.starts_with("ext") => Some("mke2fs"),
        Program::XfsInfo => Some("xfs_info"),
        Program::Filefrag => Some("filefrag"),
        Program::XfsBmap => Some("xfs_bmap"),
        _ => None,
    }
}

/// `cat test.sh`, `chmod +x ./dumb.sh`, `vi run.sh`: the post showing its script.
pub(super) fn shows_a_script(c: &Cmd) -> bool {
    let argv = c.argv();
    matches!(
        argv[0].as_str(),
        "cat" | "chmod" | "vi" | "vim" | "nano" | "less" | "more" | "emacs"
    ) && argv.iter().skip(1).any(|a| a.ends_with(".sh"))
}

pub(super) fn positional_args(argv: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == "-o" || a == "-t" {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            out.push(a);
        }
        i += 1;
    }
    out
}

/// Replace a path where it is a whole path or a prefix of one.
pub(super) fn replace_path(s: &str, path: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(path) {
        let after = rest[i + path.len()..].chars().next();
        let before = rest[..i].chars().last();
        let ok_after = after.is_none_or(|c| matches!(c, '/' | ',' | ' ' | '"' | '\'' | ';'));
        let ok_before = before.is_none_or(|c| !c.is_alphanumeric() && c != '/' && c != '.');
        out.push_str(&rest[..i]);
        if ok_after && ok_before {
            out.push_str(with);
        } else {
            out.push_str(path);
        }
        rest = &rest[i + path.len()..];
    }
    out.push_str(rest);
    out
}

pub(super) fn format_size(bytes: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if bytes % GIB == 0 {
        format!("{}GiB", bytes / GIB)
    } else if bytes % MIB == 0 {
        format!("{}MiB", bytes / MIB)
    } else {
        // round up to whole MiB: the image must hold the filesystem
        format!("{}MiB", bytes.div_ceil(MIB))
    }
}

pub(super) fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The axis name for a variable from how it is used: `-n parent=$i` → `parent`.
pub(super) fn axis_name(cmds: &[&Cmd], var: &str) -> Option<String> {
    let forms = [format!("=${var}"), format!("=${{{var}}}")];
    for c in cmds {
        for w in &c.words {
            for f in &forms {
                if let Some(i) = w.find(f.as_str()) {
                    let key: String = w[..i]
                        .rsplit([',', '-', ' '])
                        .next()
                        .unwrap_or("")
                        .to_string();
                    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        return Some(key);
                    }
                }
            }
        }
    }
    (var.len() > 1 && !var.chars().all(|c| c.is_ascii_digit())).then(|| tool_name(var))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_replaced_whole() {
        assert_eq!(replace_path("/opt/foo", "/opt", "{{mnt}}"), "{{mnt}}/foo");
        assert_eq!(replace_path("/optical", "/opt", "{{mnt}}"), "/optical");
        assert_eq!(
            replace_path("rtdev=/dev/pmem1s,extsize=8k", "/dev/pmem1s", "{{dev.rt}}"),
            "rtdev={{dev.rt}},extsize=8k"
        );
        assert_eq!(replace_path("/dev/sdb1", "/dev/sdb", "X"), "/dev/sdb1");
    }

    #[test]
    fn sizes() {
        assert_eq!(format_size(5192704 * 4096), "20284MiB");
        assert_eq!(format_size(2 << 30), "2GiB");
    }
}
