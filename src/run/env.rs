//! The environment a run happens in: kernel, distribution, CPU, memory, tool versions.

pub use crate::host::tool_version;
use crate::store::Environment;
use std::collections::BTreeMap;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Kernel, distribution, CPU, memory and the versions of `programs`.
pub fn capture_environment(programs: &[String]) -> Environment {
    let uts = nix::sys::utsname::uname().ok();
    let kernel = uts
        .as_ref()
        .map(|u| u.release().to_string_lossy().to_string())
        .unwrap_or_default();
    let hostname = uts
        .as_ref()
        .map(|u| u.nodename().to_string_lossy().to_string())
        .unwrap_or_default();
    let distribution = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default();
    let cpu_model = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut tools = BTreeMap::new();
    for p in programs {
        tools.entry(p.clone()).or_insert_with(|| tool_version(p));
    }
    // The tick rate CPU times are accounted in: the resolution of user_s and sys_s.
    let clock_ticks_per_s = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|t| *t > 0);
    Environment {
        kernel,
        clock_ticks_per_s,
        distribution,
        cpu_model,
        cores,
        memory_bytes,
        hostname,
        tools,
        devices: Vec::new(),
        guests: Vec::new(),
    }
}
