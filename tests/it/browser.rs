//! Headless Chromium for the tests that render a page (reports, notebook pages): which
//! browser is installed, and the flags every such test starts it with.

use std::path::Path;
use std::process::Command;

/// The installed Chromium's command name, if any.
pub fn find_chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new("which")
                .arg(c)
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// `chromium` headless, without network chatter, with its own profile directory.
pub fn headless(chromium: &str, profile: &Path) -> Command {
    let mut c = Command::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}
