//! fsstress-style command line → [`Config`].

use super::Op;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

/// How the `-p` processes run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Workers {
    /// One OS thread per process, inside the calling process (the library default).
    #[default]
    Threads,
    /// One OS process per fsstress process, like fsstress: `exe stress --worker ID ARGS…`.
    /// `exe` is an `fslab` binary (the CLI passes its own `current_exe()`).
    Processes { exe: PathBuf },
}

/// A workload, as fsstress's flags describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `-n`: operations per process (fsstress default 1).
    pub ops_per_proc: u64,
    /// `-p`: processes (default 1).
    pub procs: u32,
    /// `-s`: seed; process `p` uses `seed + p`. `None` (or `-s 0`, as in fsstress) picks
    /// one from the clock at run time; the summary records it.
    pub seed: Option<u64>,
    /// Operation frequencies after `-z`/`-w`/`-f`, for every op the built-in workload has.
    pub freqs: BTreeMap<Op, u32>,
    /// `-d`: the base directory; process `p` works in `DIR/p<p in hex>`.
    pub dir: PathBuf,
    /// `-v`: print every operation (`proc/opno: op path errno`).
    pub verbose: bool,
    /// `-c`: remove each process's directory when it is done (as xfstests' fsstress).
    pub cleanup: bool,
    /// `-S`: print the operation table and do nothing else.
    pub show_ops: bool,
    /// Not an fsstress flag: how the processes run.
    pub workers: Workers,
    /// Not an fsstress flag (`--delay-pct P`): a known slowdown, injected on purpose
    /// (`fslab calibrate --inject stress-delay:pct=P`). None: no delay.
    pub delay: Option<Delay>,
}

/// A CPU-bound delay of a fixed share of the work: each process busy-waits, every
/// [`Delay::EVERY`] operations and after its last, until the time it has waited is this
/// share of the time it has worked (since it started, waits excluded). So the operations'
/// time grows by exactly that share, whatever they cost, and what an operation costs is
/// never measured one by one (two clock reads per operation would themselves slow the
/// workload). Kept in hundredths of a percent so that the config stays comparable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delay {
    hundredths_pct: u32,
}

impl Delay {
    /// Operations between two checks of the clock.
    pub const EVERY: u64 = 64;
    /// The largest delay accepted: ten times the work.
    const MAX_PCT: f64 = 1000.0;

    /// `pct` percent (0 < pct ≤ 1000, at most two decimals kept).
    pub fn from_pct(pct: f64) -> Option<Delay> {
        (pct > 0.0 && pct <= Self::MAX_PCT).then(|| Delay {
            hundredths_pct: (pct * 100.0).round() as u32,
        })
    }

    pub fn pct(self) -> f64 {
        f64::from(self.hundredths_pct) / 100.0
    }

    /// The share of the work, as a fraction (0.02 for 2 %).
    pub fn fraction(self) -> f64 {
        self.pct() / 100.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("option -{0} needs a value")]
    MissingValue(char),
    #[error("option -{flag}: {value:?} is not a valid number")]
    BadNumber { flag: char, value: String },
    #[error("-f {0:?}: expected op=freq")]
    BadFreq(String),
    #[error("-f: unknown operation {0:?} (fsstress has no such op)")]
    UnknownOp(String),
    #[error(
        "-f {0}=…: fsstress has this op but the built-in workload does not; it implements: {1}"
    )]
    Unimplemented(String, String),
    #[error("unknown option -{0}")]
    UnknownFlag(char),
    #[error("option -{flag} is not supported by the built-in workload: {why}")]
    Unsupported { flag: char, why: &'static str },
    #[error("unexpected argument {0:?} (fsstress takes options only)")]
    Positional(String),
    #[error("no directory given (-d DIR)")]
    MissingDir,
    #[error("-p must be at least 1")]
    NoProcs,
    #[error("every operation frequency is 0 (after -z, add -f op=freq)")]
    NoOps,
    #[error(
        "--delay-pct {0:?}: expected a percentage above 0 and at most 1000 (e.g. --delay-pct 2)"
    )]
    BadDelay(String),
}

/// fsstress operations that the built-in workload does not implement: accepted with
/// frequency 0 (so fsstress command lines that zero them still parse), refused otherwise.
const FSSTRESS_ONLY_OPS: &[&str] = &[
    "afsync",
    "allocsp",
    "aread",
    "attr_remove",
    "attr_set",
    "awrite",
    "bulkstat",
    "bulkstat1",
    "chown",
    "clonerange",
    "collapse",
    "copyrange",
    "deduperange",
    "dread",
    "dwrite",
    "exchangerange",
    "fallocate",
    "fdatasync",
    "fiemap",
    "freesp",
    "getattr",
    "getdents",
    "getfattr",
    "insert",
    "listfattr",
    "mread",
    "mwrite",
    "punch",
    "read",
    "readlink",
    "readv",
    "removefattr",
    "resvsp",
    "rexchange",
    "rnoreplace",
    "rwhiteout",
    "setattr",
    "setfattr",
    "snapshot",
    "splice",
    "stat",
    "subvol_create",
    "subvol_delete",
    "sync",
    "unresvsp",
    "uring_read",
    "uring_write",
    "writev",
    "zero",
];

impl Config {
    /// A config with fsstress's defaults: `-n 1 -p 1`, default frequencies, no seed.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Config {
            ops_per_proc: 1,
            procs: 1,
            seed: None,
            freqs: Op::ALL.iter().map(|&op| (op, op.default_freq())).collect(),
            dir: dir.into(),
            verbose: false,
            cleanup: false,
            show_ops: false,
            workers: Workers::Threads,
            delay: None,
        }
    }

    /// Parse fsstress's options (without the program name), getopt style: flags may be
    /// bundled (`-zv`), values attached or separate (`-n400` or `-n 400`), `-f` repeated
    /// and/or comma-separated (`-f creat=1,mkdir=1`), applied in order (so `-z` zeroes
    /// what came before it). Supported: `-c -d -f -l 1 -n -p -s -S -v -w -z`; `-X` is
    /// accepted and ignored (nothing here is XFS-specific); the rest is refused. A leading
    /// program name whose file name is `fsstress` is skipped, so a whole fsstress command
    /// line parses too. One option is fslab's own: `--delay-pct P` (see [`Delay`]).
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<Config, ConfigError> {
        let mut cfg = Config::new(PathBuf::new());
        let mut have_dir = false;
        let mut i = 0;
        if let Some(first) = args.first() {
            let first = std::path::Path::new(first.as_ref());
            if first.file_name().is_some_and(|n| n == "fsstress") {
                i = 1;
            }
        }
        while i < args.len() {
            let arg = args[i].as_ref();
            i += 1;
            if let Some(v) = arg.strip_prefix("--delay-pct") {
                let value = match v.strip_prefix('=') {
                    Some(v) => v.to_string(),
                    None if v.is_empty() && i < args.len() => {
                        i += 1;
                        args[i - 1].as_ref().to_string()
                    }
                    None if v.is_empty() => return Err(ConfigError::BadDelay(String::new())),
                    None => return Err(ConfigError::Positional(arg.to_string())),
                };
                cfg.delay = Some(
                    value
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .and_then(Delay::from_pct)
                        .ok_or(ConfigError::BadDelay(value))?,
                );
                continue;
            }
            let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
                return Err(ConfigError::Positional(arg.to_string()));
            };
            for (pos, flag) in cluster.char_indices() {
                if takes_value(flag) {
                    let rest = &cluster[pos + flag.len_utf8()..];
                    let value = if !rest.is_empty() {
                        rest.to_string()
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].as_ref().to_string()
                    } else {
                        return Err(ConfigError::MissingValue(flag));
                    };
                    cfg.apply_value(flag, &value)?;
                    if flag == 'd' {
                        have_dir = true;
                    }
                    break; // the value used the rest of the cluster
                }
                cfg.apply_flag(flag)?;
            }
        }
        if cfg.show_ops {
            return Ok(cfg);
        }
        if !have_dir || cfg.dir.as_os_str().is_empty() {
            return Err(ConfigError::MissingDir);
        }
        if cfg.procs == 0 {
            return Err(ConfigError::NoProcs);
        }
        if cfg.freq_total() == 0 {
            return Err(ConfigError::NoOps);
        }
        Ok(cfg)
    }

    fn apply_flag(&mut self, flag: char) -> Result<(), ConfigError> {
        match flag {
            'c' => self.cleanup = true,
            'v' => self.verbose = true,
            // Every op here is a write op in fsstress's table, so -w zeroes none of them.
            'w' => {}
            'z' => self.freqs.values_mut().for_each(|f| *f = 0),
            'r' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "random name padding is not implemented",
                })
            }
            'R' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "replay/verbose-output variants are not implemented",
                })
            }
            'V' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "verifiable logs are not implemented",
                })
            }
            'H' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "use `fslab stress --help`",
                })
            }
            other => return Err(ConfigError::UnknownFlag(other)),
        }
        Ok(())
    }

    fn apply_value(&mut self, flag: char, value: &str) -> Result<(), ConfigError> {
        match flag {
            'd' => self.dir = PathBuf::from(value),
            'f' => self.apply_freqs(value)?,
            'n' => self.ops_per_proc = number(flag, value)?,
            'p' => {
                self.procs =
                    u32::try_from(number(flag, value)?).map_err(|_| ConfigError::BadNumber {
                        flag,
                        value: value.into(),
                    })?
            }
            's' => {
                let seed = number(flag, value)?;
                self.seed = (seed != 0).then_some(seed);
            }
            'l' => {
                if number(flag, value)? != 1 {
                    return Err(ConfigError::Unsupported {
                        flag,
                        why: "only -l 1 (one pass per process); run the command again instead",
                    });
                }
            }
            'S' => self.show_ops = true,
            // -X N: run the -x command every N ops; without -x it does nothing.
            'X' => {
                number(flag, value)?;
            }
            'e' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "XFS error injection is not implemented",
                })
            }
            'i' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "per-inode verbose lists are not implemented",
                })
            }
            'm' | 'M' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "chown/attr masks belong to ops not implemented here",
                })
            }
            'o' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "log files are not implemented; redirect the output",
                })
            }
            'x' => {
                return Err(ConfigError::Unsupported {
                    flag,
                    why: "running a command between ops is not implemented",
                })
            }
            other => return Err(ConfigError::UnknownFlag(other)),
        }
        Ok(())
    }

    fn apply_freqs(&mut self, list: &str) -> Result<(), ConfigError> {
        for item in list.split(',').filter(|s| !s.is_empty()) {
            let (name, freq) = item
                .split_once('=')
                .ok_or_else(|| ConfigError::BadFreq(item.to_string()))?;
            let freq: u32 = freq.trim().parse().map_err(|_| ConfigError::BadNumber {
                flag: 'f',
                value: item.to_string(),
            })?;
            match Op::from_name(name) {
                Some(op) => {
                    self.freqs.insert(op, freq);
                }
                None if FSSTRESS_ONLY_OPS.contains(&name) => {
                    if freq > 0 {
                        let ours = Op::ALL.iter().map(|o| o.name()).collect::<Vec<_>>();
                        return Err(ConfigError::Unimplemented(name.into(), ours.join(" ")));
                    }
                }
                None => return Err(ConfigError::UnknownOp(name.to_string())),
            }
        }
        Ok(())
    }

    /// The frequency of `op` (0 when absent).
    pub fn freq(&self, op: Op) -> u32 {
        self.freqs.get(&op).copied().unwrap_or(0)
    }

    /// The sum of all frequencies: an op is drawn with probability `freq / total`.
    pub fn freq_total(&self) -> u64 {
        self.freqs.values().map(|&f| u64::from(f)).sum()
    }

    /// The fsstress options that reproduce this config (canonical form: `-n -p [-s] -z -f
    /// op=f,… [-v] [-c] [--delay-pct P] -d DIR`); `Config::from_args` of them gives back this config
    /// (less `workers` and `show_ops`).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![
            "-n".into(),
            self.ops_per_proc.to_string().into(),
            "-p".into(),
            self.procs.to_string().into(),
        ];
        if let Some(seed) = self.seed {
            out.push("-s".into());
            out.push(seed.to_string().into());
        }
        out.push("-z".into());
        let freqs = self
            .freqs
            .iter()
            .filter(|(_, &f)| f > 0)
            .map(|(op, f)| format!("{}={f}", op.name()))
            .collect::<Vec<_>>()
            .join(",");
        if !freqs.is_empty() {
            out.push("-f".into());
            out.push(freqs.into());
        }
        if self.verbose {
            out.push("-v".into());
        }
        if self.cleanup {
            out.push("-c".into());
        }
        if let Some(d) = self.delay {
            out.push("--delay-pct".into());
            out.push(d.pct().to_string().into());
        }
        out.push("-d".into());
        out.push(self.dir.clone().into_os_string());
        out
    }

    /// The operation table, like fsstress -S: `name freq/total`, one per line.
    pub fn op_table(&self) -> String {
        let total = self.freq_total();
        let mut s = String::new();
        for op in Op::ALL {
            s.push_str(&format!("{:>20} {}/{}\n", op.name(), self.freq(*op), total));
        }
        s
    }
}

fn takes_value(flag: char) -> bool {
    matches!(
        flag,
        'd' | 'e' | 'f' | 'i' | 'l' | 'm' | 'M' | 'n' | 'o' | 'p' | 's' | 'S' | 'x' | 'X'
    )
}

/// A non-negative number; like strtoul(…, 0): `0x` hex and leading-`0` octal accepted.
fn number(flag: char, value: &str) -> Result<u64, ConfigError> {
    let v = value.trim();
    let parsed = if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16)
    } else if v.len() > 1 && v.starts_with('0') {
        u64::from_str_radix(&v[1..], 8)
    } else {
        v.parse()
    };
    parsed.map_err(|_| ConfigError::BadNumber {
        flag,
        value: value.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Config, ConfigError> {
        let words = shell_words::split(line).unwrap();
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        Config::from_args(&args)
    }

    #[test]
    fn the_seed_post_command_line() {
        // seed 000, verbatim
        let line = "fsstress -n 400000 -p 4 -z -f creat=1,mkdir=1,mknod=1,rmdir=1,unlink=1,link=1,rename=1 -d /opt/foo -s 1";
        let cfg = parse(line).unwrap();
        // The same without the program name, and with a path to it.
        assert_eq!(parse(line.strip_prefix("fsstress ").unwrap()).unwrap(), cfg);
        assert_eq!(
            parse(&format!("/usr/lib/xfstests/ltp/{line}")).unwrap(),
            cfg
        );
        assert_eq!(cfg.ops_per_proc, 400_000);
        assert_eq!(cfg.procs, 4);
        assert_eq!(cfg.seed, Some(1));
        assert_eq!(cfg.dir, PathBuf::from("/opt/foo"));
        let on: Vec<&str> = Op::ALL
            .iter()
            .filter(|&&op| cfg.freq(op) > 0)
            .map(|op| op.name())
            .collect();
        assert_eq!(
            on,
            ["creat", "link", "mkdir", "mknod", "rename", "rmdir", "unlink"]
        );
        assert!(Op::ALL.iter().all(|&op| cfg.freq(op) <= 1));
        assert_eq!(cfg.freq_total(), 7);
        assert!(!cfg.verbose && !cfg.cleanup);
    }

    #[test]
    fn getopt_forms() {
        let a = parse("-n400 -p2 -zv -fcreat=3 -f mkdir=2 -f link=1,rename=0 -d/tmp/x -s 0x10")
            .unwrap();
        assert_eq!((a.ops_per_proc, a.procs, a.seed), (400, 2, Some(16)));
        assert!(a.verbose);
        assert_eq!(
            (a.freq(Op::Creat), a.freq(Op::Mkdir), a.freq(Op::Link)),
            (3, 2, 1)
        );
        assert_eq!(a.freq(Op::Rename), 0);
        assert_eq!(a.freq(Op::Write), 0);
        assert_eq!(a.dir, PathBuf::from("/tmp/x"));
        // -z applies in order: it zeroes the -f before it.
        let b = parse("-f creat=5 -z -f mkdir=1 -d d").unwrap();
        assert_eq!((b.freq(Op::Creat), b.freq(Op::Mkdir)), (0, 1));
        // Without -z, fsstress's default frequencies.
        let c = parse("-d d").unwrap();
        assert_eq!(
            (c.freq(Op::Creat), c.freq(Op::Write), c.freq(Op::Rmdir)),
            (4, 4, 1)
        );
        assert_eq!((c.ops_per_proc, c.procs, c.seed), (1, 1, None));
        // -s 0 means "pick a seed", as in fsstress.
        assert_eq!(parse("-s 0 -d d").unwrap().seed, None);
        // fsstress ops we lack are fine at frequency 0.
        assert!(parse("-z -f creat=1,read=0,dwrite=0 -d d").is_ok());
    }

    #[test]
    fn errors() {
        use ConfigError::*;
        assert_eq!(parse("-n 5").unwrap_err(), MissingDir);
        assert_eq!(parse("-d d -n").unwrap_err(), MissingValue('n'));
        assert!(matches!(
            parse("-d d -n x").unwrap_err(),
            BadNumber { flag: 'n', .. }
        ));
        assert!(matches!(
            parse("-d d -p -1").unwrap_err(),
            BadNumber { flag: 'p', .. }
        ));
        assert_eq!(parse("-d d -f creat").unwrap_err(), BadFreq("creat".into()));
        assert_eq!(
            parse("-d d -f bogus=1").unwrap_err(),
            UnknownOp("bogus".into())
        );
        assert!(matches!(
            parse("-d d -f read=1").unwrap_err(),
            Unimplemented(..)
        ));
        assert_eq!(parse("-d d -q").unwrap_err(), UnknownFlag('q'));
        assert!(matches!(
            parse("-d d -r").unwrap_err(),
            Unsupported { flag: 'r', .. }
        ));
        assert!(matches!(
            parse("-d d -l 3").unwrap_err(),
            Unsupported { flag: 'l', .. }
        ));
        assert_eq!(parse("-d d foo").unwrap_err(), Positional("foo".into()));
        assert_eq!(parse("-d d -p 0").unwrap_err(), NoProcs);
        assert_eq!(parse("-z -d d").unwrap_err(), NoOps);
    }

    #[test]
    fn the_delay_is_fslabs_own_option() {
        let a = parse("-n 5 --delay-pct 2 -z -f creat=1 -d d").unwrap();
        assert_eq!(a.delay.map(Delay::pct), Some(2.0));
        assert!((a.delay.unwrap().fraction() - 0.02).abs() < 1e-12);
        let b = parse("--delay-pct=0.25 -z -f creat=1 -d d").unwrap();
        assert_eq!(b.delay.map(Delay::pct), Some(0.25));
        assert_eq!(parse("-z -f creat=1 -d d").unwrap().delay, None);
        for bad in ["0", "-1", "x", "2000", "nan"] {
            assert_eq!(
                parse(&format!("-z -f creat=1 -d d --delay-pct {bad}")).unwrap_err(),
                ConfigError::BadDelay(bad.into()),
                "{bad}"
            );
        }
        assert_eq!(
            parse("-d d --delay-pct").unwrap_err(),
            ConfigError::BadDelay(String::new())
        );
        assert_eq!(
            parse("-d d --delay-pctx").unwrap_err(),
            ConfigError::Positional("--delay-pctx".into())
        );
    }

    #[test]
    fn to_args_round_trips() {
        let delayed = parse("-n 7 -z -f creat=1 --delay-pct 2.5 -d /x").unwrap();
        let args: Vec<String> = delayed
            .to_args()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(Config::from_args(&args).unwrap(), delayed);
        let cfg = parse("-n 7 -p 3 -s 9 -z -f creat=2,link=1 -v -c -d /x/y").unwrap();
        let args: Vec<String> = cfg
            .to_args()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(Config::from_args(&args).unwrap(), cfg);
        let dflt = parse("-d /x").unwrap();
        let args: Vec<String> = dflt
            .to_args()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(Config::from_args(&args).unwrap(), dflt);
    }
}
