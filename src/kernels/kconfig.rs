//! Kernel configuration fragments (`CONFIG_X=y`, `# CONFIG_X is not set`) and the check
//! that each option of a fragment survived `make olddefconfig`. Pure: text in, values out.

/// One option a fragment sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FragmentOption {
    /// 1-based line in the fragment.
    pub line: usize,
    /// `CONFIG_XFS_RT`.
    pub key: String,
    /// `y`, `m`, `"text"`, `17`; `None` for "is not set" (and `=n`).
    pub value: Option<String>,
}

impl FragmentOption {
    /// As a `.config` line: `CONFIG_X=y` or `# CONFIG_X is not set`.
    pub fn as_line(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => format!("# {} is not set", self.key),
        }
    }
}

/// A line of a fragment that is neither an option, a comment nor blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: usize,
    pub text: String,
}

/// The options of a fragment, in order (a later line for the same option wins, as
/// `merge_config.sh` does, and replaces the earlier one here).
pub fn parse_fragment(text: &str) -> Result<Vec<FragmentOption>, BadLine> {
    let mut out: Vec<FragmentOption> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let opt = if line.is_empty() {
            None
        } else if let Some(rest) = line.strip_prefix('#') {
            let rest = rest.trim();
            match rest.strip_suffix(" is not set") {
                Some(key) if is_key(key.trim()) => Some((key.trim().to_string(), None)),
                _ => None,
            }
        } else {
            match line.split_once('=') {
                Some((k, v)) if is_key(k) && !v.is_empty() => {
                    Some((k.to_string(), (v != "n").then(|| v.to_string())))
                }
                _ => {
                    return Err(BadLine {
                        line: i + 1,
                        text: raw.to_string(),
                    })
                }
            }
        };
        if let Some((key, value)) = opt {
            out.retain(|o| o.key != key);
            out.push(FragmentOption {
                line: i + 1,
                key,
                value,
            });
        }
    }
    Ok(out)
}

fn is_key(k: &str) -> bool {
    k.strip_prefix("CONFIG_").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The value of `key` in a `.config`: `Some(value)`, or `None` when it is not set or
/// absent.
pub fn config_value(config: &str, key: &str) -> Option<String> {
    config.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k == key).then(|| v.to_string())
    })
}

/// An option of a fragment that the configuration does not have as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub option: FragmentOption,
    /// What the configuration has instead (`None`: not set).
    pub got: Option<String>,
}

impl Dropped {
    /// `CONFIG_X=y (line 3) became "not set"`.
    pub fn describe(&self) -> String {
        format!(
            "{} (line {}) became {}",
            self.option.as_line(),
            self.option.line,
            match &self.got {
                Some(v) => format!("{}={v}", self.option.key),
                None => "not set".to_string(),
            }
        )
    }
}

/// The options of `fragment` that `config` (after `make olddefconfig`) does not have
/// as the fragment asks.
pub fn dropped(fragment: &[FragmentOption], config: &str) -> Vec<Dropped> {
    fragment
        .iter()
        .filter_map(|o| {
            let got = config_value(config, &o.key);
            (got != o.value).then(|| Dropped {
                option: o.clone(),
                got,
            })
        })
        .collect()
}

/// Whether a Kconfig file's text defines `symbol` (without `CONFIG_`).
pub fn defines(kconfig: &str, symbol: &str) -> bool {
    kconfig.lines().any(|l| {
        let mut words = l.split_whitespace();
        matches!(words.next(), Some("config" | "menuconfig")) && words.next() == Some(symbol)
    })
}

#[cfg(test)]
mod tests {
    use super::{config_value, defines, dropped, parse_fragment, BadLine};

    #[test]
    fn fragments_parse_with_comments_not_set_and_later_lines_winning() {
        let f = parse_fragment(
            "# a comment\n\nCONFIG_XFS_RT=y\n# CONFIG_MODULES is not set\nCONFIG_XFS_RT=n\n\
             CONFIG_LOG_BUF_SHIFT=17\nCONFIG_CMDLINE=\"a b\"\n",
        )
        .unwrap();
        let lines: Vec<String> = f.iter().map(|o| o.as_line()).collect();
        assert_eq!(
            lines,
            [
                "# CONFIG_MODULES is not set",
                "# CONFIG_XFS_RT is not set",
                "CONFIG_LOG_BUF_SHIFT=17",
                "CONFIG_CMDLINE=\"a b\""
            ]
        );
        assert_eq!(f[1].line, 5);
        assert_eq!(
            parse_fragment("CONFIG_A=y\nXFS_RT=y\n"),
            Err(BadLine {
                line: 2,
                text: "XFS_RT=y".into()
            })
        );
        assert!(parse_fragment("CONFIG_A=\n").is_err());
    }

    #[test]
    fn dropped_options_are_named_with_what_they_became() {
        let f = parse_fragment(
            "CONFIG_XFS_RT=y\n# CONFIG_MODULES is not set\nCONFIG_NOPE=y\nCONFIG_SHIFT=17\n",
        )
        .unwrap();
        let config = "CONFIG_XFS_RT=y\n# CONFIG_MODULES is not set\nCONFIG_SHIFT=14\n";
        let d = dropped(&f, config);
        let said: Vec<String> = d.iter().map(|d| d.describe()).collect();
        assert_eq!(
            said,
            [
                "CONFIG_NOPE=y (line 3) became not set",
                "CONFIG_SHIFT=17 (line 4) became CONFIG_SHIFT=14"
            ]
        );
        assert_eq!(config_value(config, "CONFIG_MODULES"), None);
    }

    #[test]
    fn kconfig_definitions_are_found() {
        let k = "config XFS_RT\n\tbool \"x\"\nmenuconfig EXT4_FS\n\tdepends on XFS_RT\n";
        assert!(defines(k, "XFS_RT"));
        assert!(defines(k, "EXT4_FS"));
        assert!(!defines(k, "XFS"));
    }
}
