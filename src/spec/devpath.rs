//! Which words of a command name a device or a host path: one reading shared by the
//! experiment checks (literals and values, at load), the plan (every resolved word of
//! every point) and the runner (every word it is about to execute). Pure text.

/// Device files an experiment may name (they are not storage). `/dev/fd/…` and
/// `/dev/shm/…` are allowed below their directory; the others only as they are.
pub const HARMLESS_DEV_PATHS: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/",
    "/dev/shm",
];

/// What would be right, for every refusal of a device an experiment names.
pub const LOGICAL_DEVICES_ONLY: &str =
    "experiment files, profiles and `--set` name logical devices only: declare one under \
     `devices:` and write `{{dev.NAME}}`; a real device can only be mapped by the user \
     (`fslab run --device NAME=/dev/...` plus the local config)";

/// Characters that end a path inside a word (`rtdev=/dev/x,logdev=/dev/y`,
/// `--filename=/dev/a:/dev/b`, `if="/dev/vda"`).
const PATH_END: &[char] = &[
    ',', ' ', '\t', '\n', ':', ';', '=', '"', '\'', '(', ')', '<', '>', '|', '&', '`',
];

/// A device path that is harmless: one of [`HARMLESS_DEV_PATHS`] exactly, or below
/// `/dev/fd/` or `/dev/shm/`, with no `..` that could climb out of it.
pub fn is_harmless(path: &str) -> bool {
    if path.split('/').any(|c| c == "..") {
        return false;
    }
    let path = path.trim_end_matches('/');
    HARMLESS_DEV_PATHS
        .iter()
        .any(|h| match h.strip_suffix('/') {
            Some(dir) => path.starts_with(h) || path == dir,
            None => path == *h || (*h == "/dev/shm" && path.starts_with("/dev/shm/")),
        })
}

/// Every path under `/dev/` that a word names (anywhere in it: `of=/dev/vda`,
/// `-o rtdev=/dev/sdb`, `//dev/sda`, `/proc/self/root/dev/sda`), harmless or not.
pub fn dev_paths(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = word[from..].find("/dev/") {
        let start = from + i;
        let tail = &word[start..];
        let end = tail.find(PATH_END).unwrap_or(tail.len());
        out.push(&tail[..end]);
        from = start + end.max(1);
    }
    out
}

/// The paths under `/dev/` in a word that no experiment may name (see [`is_harmless`]).
pub fn device_paths(word: &str) -> Vec<&str> {
    dev_paths(word)
        .into_iter()
        .filter(|p| !is_harmless(p))
        .collect()
}

/// The absolute paths a word names: the word itself when it starts with `/`, and each
/// `/…` that follows `=`, `,` or `:` (`--directory=/mnt/t`, `if=/x`, `a:/b`).
pub fn absolute_paths(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = word.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'/' {
            continue;
        }
        let starts = i == 0 || matches!(bytes[i - 1], b'=' | b',' | b':');
        if !starts {
            continue;
        }
        let tail = &word[i..];
        let end = tail.find(PATH_END).unwrap_or(tail.len());
        if end > 1 {
            out.push(&tail[..end]);
        }
    }
    out
}

/// Host directories where people keep test filesystems and data, which a benchmark
/// should reach only through the point's own `{{mnt}}`.
pub const HOST_DATA_DIRS: &[&str] = &[
    "/mnt", "/media", "/opt", "/srv", "/home", "/data", "/scratch", "/export", "/space",
];

/// A path at or below one of [`HOST_DATA_DIRS`].
pub fn in_host_data_dir(path: &str) -> bool {
    HOST_DATA_DIRS.iter().any(|d| {
        path == *d
            || path
                .strip_prefix(d)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_inside_words_are_found() {
        assert_eq!(device_paths("of=/dev/vda"), ["/dev/vda"]);
        assert_eq!(
            device_paths("rtdev=/dev/sdb,logdev=/dev/sdc"),
            ["/dev/sdb", "/dev/sdc"]
        );
        assert_eq!(device_paths("//dev/sda"), ["/dev/sda"]);
        assert_eq!(
            device_paths("/proc/self/root/dev/nvme0n1"),
            ["/dev/nvme0n1"]
        );
        assert_eq!(device_paths("--filename=\"/dev/vda\""), ["/dev/vda"]);
        assert!(device_paths("/dev/null").is_empty());
        assert!(device_paths("of=/dev/zero").is_empty());
        assert!(device_paths("/dev/fd/3").is_empty());
        assert!(device_paths("/dev/shm/x").is_empty());
        assert!(device_paths("test-data").is_empty());
    }

    #[test]
    fn a_harmless_prefix_does_not_hide_a_device() {
        assert_eq!(device_paths("/dev/null/../sda"), ["/dev/null/../sda"]);
        assert_eq!(device_paths("/dev/nullb0"), ["/dev/nullb0"]);
        assert_eq!(device_paths("/dev/fd/../sda"), ["/dev/fd/../sda"]);
        assert_eq!(device_paths("/dev/shmx"), ["/dev/shmx"]);
    }

    #[test]
    fn absolute_paths_in_words() {
        assert_eq!(absolute_paths("--directory=/mnt/t"), ["/mnt/t"]);
        assert_eq!(absolute_paths("/opt/data"), ["/opt/data"]);
        assert_eq!(absolute_paths("a:/b,/c"), ["/b", "/c"]);
        assert!(absolute_paths("rel/path").is_empty());
        assert!(absolute_paths("-n").is_empty());
        assert!(in_host_data_dir("/mnt/hdd-ext4"));
        assert!(in_host_data_dir("/mnt"));
        assert!(!in_host_data_dir("/mntx"));
        assert!(!in_host_data_dir("/tmp/x"));
    }
}
