//! Fonts for chart text.
//!
//! plotters is built with its `ab_glyph` feature: glyphs are measured (SVG) and drawn
//! (PNG) by pure-Rust code from a TrueType file registered at run time, with no
//! fontconfig or freetype. The file is looked up once per process: `$FSLAB_FONT` if set,
//! else DejaVu Sans (Debian package `fonts-dejavu-core`), Liberation Sans, Noto Sans or
//! FreeSans at their usual Debian/Fedora/Arch paths. A bold face next to it is used for
//! captions when present.

use plotters::style::{register_font, FontStyle};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The font family name charts use.
pub const FAMILY: &str = "sans-serif";

const CANDIDATES: &[(&str, &str)] = &[
    (
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    ),
    (
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans-Bold.ttf",
    ),
    (
        "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans-Bold.ttf",
    ),
    (
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf",
    ),
    (
        "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
        "/usr/share/fonts/truetype/noto/NotoSans-Bold.ttf",
    ),
    (
        "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
        "/usr/share/fonts/truetype/freefont/FreeSansBold.ttf",
    ),
];

static LOADED: OnceLock<Result<PathBuf, NoFont>> = OnceLock::new();

/// No TrueType font could be registered for the charts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no usable TrueType font found (tried {}); install Debian's fonts-dejavu-core or set FSLAB_FONT to a .ttf file",
    tried.join(", ")
)]
pub struct NoFont {
    pub tried: Vec<String>,
}

fn leak_file(path: &Path) -> Option<&'static [u8]> {
    std::fs::read(path)
        .ok()
        .map(|b| &*Box::leak(b.into_boxed_slice()))
}

fn load() -> Result<PathBuf, NoFont> {
    let mut tried = Vec::new();
    let mut candidates: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    if let Some(p) = std::env::var_os("FSLAB_FONT") {
        candidates.push((PathBuf::from(p), None));
    }
    candidates.extend(
        CANDIDATES
            .iter()
            .map(|(r, b)| (PathBuf::from(r), Some(PathBuf::from(b)))),
    );
    for (regular, bold) in candidates {
        tried.push(regular.display().to_string());
        let Some(bytes) = leak_file(&regular) else {
            continue;
        };
        if register_font(FAMILY, FontStyle::Normal, bytes).is_err() {
            continue;
        }
        let bold_bytes = bold.as_deref().and_then(leak_file).unwrap_or(bytes);
        let _ = register_font(FAMILY, FontStyle::Bold, bold_bytes);
        return Ok(regular);
    }
    Err(NoFont { tried })
}

/// Register the chart font once; the path of the font in use, or why there is none.
pub fn ensure() -> Result<&'static Path, NoFont> {
    match LOADED.get_or_init(load) {
        Ok(p) => Ok(p.as_path()),
        Err(e) => Err(e.clone()),
    }
}
