//! The post as lines: mail headers (mbox, `.eml`, a lore page saved as text), the body
//! decoded (quoted-printable, base64, the first `text/plain` part of a multipart mail)
//! and `>` quoting removed at any depth, each line keeping the number it has in the
//! file and who wrote it (`X wrote:` attributions give the quoted authors).

use super::ImportError;

/// The provenance headers of the post.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers {
    pub from: Option<String>,
    pub date: Option<String>,
    pub subject: Option<String>,
    pub message_id: Option<String>,
    pub in_reply_to: Option<String>,
    /// The line each header was read from (subject, from, …) — the first header line.
    pub line: usize,
}

/// One line of the body, quoting removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostLine {
    /// 1-based line number in the file as given.
    pub n: usize,
    /// Number of `>` quote marks the line had.
    pub depth: usize,
    /// The text without the quote marks.
    pub text: String,
    /// Who wrote it when it is quoted and an attribution (`X wrote:`) names them.
    pub quoted_author: Option<String>,
}

/// A post: headers and body lines.
#[derive(Debug, Clone, Default)]
pub struct Post {
    pub headers: Headers,
    pub lines: Vec<PostLine>,
    /// What reading the mail itself noticed (several messages in an mbox, an encoding).
    pub notes: Vec<(usize, String)>,
}

impl Post {
    /// The body as text, one line per [`PostLine`], for the tool-output parsers; their
    /// line `k` (1-based) is `self.lines[k - 1]`.
    pub fn body_text(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(&l.text);
            s.push('\n');
        }
        s
    }

    /// The post's author, name only (`Darrick J. Wong`).
    pub fn author_name(&self) -> Option<String> {
        self.headers.from.as_deref().map(display_name)
    }
}

/// `"Name" <a@b>` or `Name <a@b>` → `Name`; a bare address stays.
pub fn display_name(from: &str) -> String {
    let s = from.trim();
    let name = match s.find('<') {
        Some(i) if i > 0 => s[..i].trim(),
        _ => s,
    };
    name.trim_matches('"').trim().to_string()
}

const HEADER_NAMES: &[&str] = &[
    "from",
    "date",
    "subject",
    "message-id",
    "in-reply-to",
    "to",
    "cc",
    "references",
    "content-type",
    "content-transfer-encoding",
    "mime-version",
    "user-agent",
    "received",
    "received-spf",
    "return-path",
    "delivered-to",
    "precedence",
    "content-language",
    "list-id",
    "sender",
    "reply-to",
    "x-mailer",
    "archived-at",
];

/// Read a post from raw bytes.
pub fn read(bytes: &[u8]) -> Result<Post, ImportError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ImportError::Empty);
    }
    if looks_binary(bytes) {
        return Err(ImportError::Binary);
    }
    let text = String::from_utf8_lossy(bytes);
    let raw: Vec<&str> = text.lines().collect();
    let mut post = Post::default();

    // mbox: `From ` separator lines; the first message is the post.
    let mut start = 0;
    let mut end = raw.len();
    if raw.first().is_some_and(|l| l.starts_with("From ")) {
        start = 1;
        let others: Vec<usize> = raw
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(i, l)| l.starts_with("From ") && *i > 0 && raw[i - 1].trim().is_empty())
            .map(|(i, _)| i)
            .collect();
        if let Some(&next) = others.first() {
            end = next;
            post.notes.push((
                next + 1,
                format!(
                    "an mbox of {} messages: the first (lines 1–{next}) is imported, the others are not",
                    others.len() + 1
                ),
            ));
        }
    }

    // Headers: a block of `Name: value` lines (with folded continuations) before a blank.
    let (fields, body_start) = header_block(&raw, start, end);
    let mut ctype = String::new();
    let mut cte = String::new();
    let mut header_line = 0;
    for (n, name, value) in &fields {
        if header_line == 0 {
            header_line = *n;
        }
        match name.as_str() {
            "from" => post.headers.from = Some(decode_encoded_words(value)),
            "date" => post.headers.date = Some(value.clone()),
            "subject" => post.headers.subject = Some(decode_encoded_words(value)),
            "message-id" => post.headers.message_id = Some(value.clone()),
            "in-reply-to" => post.headers.in_reply_to = Some(value.clone()),
            "content-type" => ctype = value.to_ascii_lowercase(),
            "content-transfer-encoding" => cte = value.to_ascii_lowercase(),
            _ => {}
        }
    }
    post.headers.line = header_line;
    let mut body: Vec<(usize, String)> = (body_start..end)
        .map(|i| (i + 1, raw[i].to_string()))
        .collect();
    if fields.is_empty() {
        lore_like_headers(&mut post, &mut body);
    }

    // A multipart mail: the first text/plain part.
    if ctype.starts_with("multipart/") {
        if let Some(b) = param(&ctype, "boundary").or_else(|| {
            fields
                .iter()
                .find(|f| f.1 == "content-type")
                .and_then(|f| param(&f.2, "boundary"))
        }) {
            if let Some((part, pct, pcte)) = text_part(&body, &b) {
                post.notes.push((
                    part.first().map_or(0, |l| l.0),
                    "multipart mail: its first text/plain part is the post".into(),
                ));
                body = part;
                ctype = pct;
                cte = pcte;
            }
        }
    }
    let latin1 = ctype.contains("iso-8859") || ctype.contains("latin1");
    if cte.contains("quoted-printable") {
        body = decode_qp(&body, latin1);
    } else if cte.contains("base64") {
        body = decode_base64(&body);
    }
    post.lines = unquote(&body);
    Ok(post)
}

fn looks_binary(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(64 * 1024)];
    if sample.contains(&0) {
        return true;
    }
    let bad = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b | 0x08))
        .count();
    let invalid = String::from_utf8_lossy(sample).matches('\u{FFFD}').count();
    bad * 20 > sample.len() || invalid * 10 > sample.len()
}

type Field = (usize, String, String);

fn header_block(raw: &[&str], start: usize, end: usize) -> (Vec<Field>, usize) {
    let mut fields: Vec<Field> = Vec::new();
    let mut i = start;
    while i < end {
        let l = raw[i];
        if l.trim().is_empty() {
            break;
        }
        if (l.starts_with(' ') || l.starts_with('\t')) && !fields.is_empty() {
            if let Some(f) = fields.last_mut() {
                f.2.push(' ');
                f.2.push_str(l.trim());
            }
            i += 1;
            continue;
        }
        let Some((name, value)) = l.split_once(':') else {
            break;
        };
        let lname = name.trim().to_ascii_lowercase();
        let known = HEADER_NAMES.contains(&lname.as_str())
            || lname.starts_with("x-")
            || lname.starts_with("list-")
            || lname.starts_with("arc-")
            || lname.starts_with("dkim-");
        if !known || name.contains(' ') {
            break;
        }
        fields.push((i + 1, lname, value.trim().to_string()));
        i += 1;
    }
    if fields.is_empty() {
        return (fields, start);
    }
    (fields, (i + 1).min(end).max(i))
}

/// A lore thread page saved as text: `… archive mirror`, ` help / color / mirror / Atom
/// feed`, `* Subject`, the thread's `@ date name` lines, then `From: Name @ 2009-09-03 11:07
/// UTC (permalink / raw)` with its indented `To:`/`Cc:` and a `[-- Attachment #1: … --]`
/// line before the first message's body. Whether the page was one.
fn lore_thread_headers(post: &mut Post, body: &mut Vec<(usize, String)>, first: usize) -> bool {
    if !body[first].1.trim_end().ends_with("archive mirror") {
        return false;
    }
    let window = first..(first + 12).min(body.len());
    let Some(from_at) = window.clone().find(|&k| {
        let t = &body[k].1;
        t.starts_with("From: ") && t.contains(" @ ") && t.contains("(permalink")
    }) else {
        return false;
    };
    if let Some(k) = window.clone().find(|&k| body[k].1.starts_with("* ")) {
        post.headers.subject = Some(body[k].1[2..].trim().to_string());
    }
    let from = body[from_at].1["From: ".len()..].to_string();
    if let Some((name, rest)) = from.split_once(" @ ") {
        post.headers.from = Some(name.trim().to_string());
        post.headers.date = rest
            .split(" (permalink")
            .next()
            .map(|d| d.trim().to_string());
    }
    post.headers.line = body[from_at].0;
    let mut end = from_at + 1;
    while let Some((_, t)) = body.get(end) {
        let t = t.trim();
        let furniture = t.is_empty()
            || (body[end].1.starts_with(char::is_whitespace)
                && (t.starts_with("To:") || t.starts_with("Cc:")))
            || (t.starts_with("[-- Attachment #") && t.ends_with("--]"));
        if !furniture {
            break;
        }
        end += 1;
    }
    body.drain(..end);
    true
}

/// A lore-style page saved as text: `Subject` on the first line and `["Name" <a@b>]` or
/// `From: Name @ date` a few lines below, before the body.
fn lore_like_headers(post: &mut Post, body: &mut Vec<(usize, String)>) {
    let first = body.iter().position(|(_, l)| !l.trim().is_empty());
    let Some(first) = first else { return };
    if lore_thread_headers(post, body, first) {
        return;
    }
    let (n, subject) = body[first].clone();
    let looks_subject = subject.starts_with("Re:")
        || subject.starts_with('[')
        || subject.starts_with("RE:")
        || subject.starts_with("Fwd:");
    // a commit message: `subsystem: summary` (`xfs: …`, `Btrfs: …`, `ext4/mballoc: …`),
    // a blank line, the body; the first `Signed-off-by:` is its author
    // (an archive that drops blank lines leaves the `Signed-off-by:` to tell)
    let signed = body
        .iter()
        .any(|(_, l)| l.trim_start().starts_with("Signed-off-by:"));
    let commit = !looks_subject
        && (signed
            || body
                .get(first + 1)
                .is_some_and(|(_, l)| l.trim().is_empty()))
        && subject.split_once(": ").is_some_and(|(sys, rest)| {
            !sys.is_empty()
                && !rest.is_empty()
                && sys.len() <= 24
                && sys
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'))
        });
    if commit {
        post.headers.subject = Some(subject.trim().to_string());
        post.headers.line = n;
        if let Some((_, by)) = body.iter().find_map(|(_, l)| {
            l.trim()
                .strip_prefix("Signed-off-by:")
                .map(|b| ((), b.trim()))
        }) {
            post.headers.from = Some(by.to_string());
        }
        body.drain(..=first);
        return;
    }
    let mut consumed = first;
    if looks_subject {
        post.headers.subject = Some(subject.trim().to_string());
        post.headers.line = n;
        consumed = first + 1;
    }
    #[allow(clippy::needless_range_loop)] // `consumed` is set from `k`
    for k in consumed..(consumed + 4).min(body.len()) {
        let t = body[k].1.trim();
        if t.starts_with("[\"") || (t.starts_with('[') && t.ends_with(']') && t.contains('@')) {
            let inner = t.trim_start_matches('[').trim_end_matches(']');
            post.headers.from = Some(inner.replace('"', "").trim().to_string());
            if post.headers.line == 0 {
                post.headers.line = body[k].0;
            }
            consumed = k + 1;
            break;
        }
    }
    if consumed > first && looks_subject {
        body.drain(..consumed);
    }
}

fn param(ctype: &str, name: &str) -> Option<String> {
    let lower = ctype.to_ascii_lowercase();
    let key = format!("{name}=");
    let i = lower.find(&key)?;
    let rest = &ctype[i + key.len()..];
    let v = if let Some(r) = rest.strip_prefix('"') {
        r.split('"').next().unwrap_or("")
    } else {
        rest.split([';', ' ']).next().unwrap_or("")
    };
    (!v.is_empty()).then(|| v.to_string())
}

type Part = (Vec<(usize, String)>, String, String);

fn text_part(body: &[(usize, String)], boundary: &str) -> Option<Part> {
    let delim = format!("--{boundary}");
    let mut i = 0;
    while i < body.len() {
        if body[i].1.trim_end().eq_ignore_ascii_case(&delim) {
            // part headers
            let mut j = i + 1;
            let mut ct = String::from("text/plain");
            let mut cte = String::new();
            while j < body.len() && !body[j].1.trim().is_empty() {
                let l = body[j].1.to_ascii_lowercase();
                if let Some(v) = l.strip_prefix("content-type:") {
                    ct = v.trim().to_string();
                } else if let Some(v) = l.strip_prefix("content-transfer-encoding:") {
                    cte = v.trim().to_string();
                }
                j += 1;
            }
            let mut k = j + 1;
            while k < body.len() && !body[k].1.starts_with(&delim) {
                k += 1;
            }
            if ct.starts_with("text/plain") {
                return Some((body[(j + 1).min(body.len())..k].to_vec(), ct, cte));
            }
            i = k;
        } else {
            i += 1;
        }
    }
    None
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Quoted-printable: `=XX` bytes, `=` at the end of a line joins it with the next (the
/// joined line keeps the number of its first part).
pub fn decode_qp(body: &[(usize, String)], latin1: bool) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut cur_n: Option<usize> = None;
    for (n, line) in body {
        let line = line.trim_end_matches([' ', '\t']);
        cur_n.get_or_insert(*n);
        let (content, soft) = match line.strip_suffix('=') {
            Some(c) => (c, true),
            None => (line, false),
        };
        let b = content.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'=' {
                if let (Some(h), Some(l)) = (
                    b.get(i + 1).copied().and_then(hex),
                    b.get(i + 2).copied().and_then(hex),
                ) {
                    cur.push(h * 16 + l);
                    i += 3;
                    continue;
                }
            }
            cur.push(b[i]);
            i += 1;
        }
        if !soft {
            out.push((cur_n.take().unwrap_or(*n), bytes_to_string(&cur, latin1)));
            cur.clear();
        }
    }
    if let Some(n) = cur_n {
        out.push((n, bytes_to_string(&cur, latin1)));
    }
    out
}

fn bytes_to_string(b: &[u8], latin1: bool) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(_) if latin1 => b.iter().map(|&c| c as char).collect(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// The bytes of base64 text (characters outside the alphabet, `=` padding included, skipped).
fn base64_bytes<'a>(text: impl IntoIterator<Item = &'a str>) -> Vec<u8> {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits: u32 = 0;
    let mut nbits = 0;
    let mut bytes = Vec::new();
    for l in text {
        for c in l.trim().bytes() {
            let Some(v) = T.iter().position(|&t| t == c) else {
                continue;
            };
            bits = (bits << 6) | v as u32;
            nbits += 6;
            if nbits >= 8 {
                nbits -= 8;
                bytes.push((bits >> nbits) as u8);
            }
        }
    }
    bytes
}

fn decode_base64(body: &[(usize, String)]) -> Vec<(usize, String)> {
    let first = body.first().map_or(1, |l| l.0);
    let bytes = base64_bytes(body.iter().map(|l| l.1.as_str()));
    // Base64 hides the layout of the original: the decoded lines are numbered from the
    // first encoded line on.
    String::from_utf8_lossy(&bytes)
        .lines()
        .enumerate()
        .map(|(i, l)| (first + i, l.to_string()))
        .collect()
}

/// The text of an encoded word's bytes in `charset`: UTF-8 (and ASCII) and Latin-1 as
/// they are; any other charset (`Big5`, `GB2312`), whose table fslab does not carry, keeps
/// its ASCII characters (`Alex Lau` of a Big5 name), the others dropped.
fn charset_text(bytes: &[u8], charset: &str) -> String {
    let cs = charset.to_ascii_lowercase();
    if cs.starts_with("utf") || cs == "us-ascii" {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    if cs == "iso-8859-1" || cs == "latin1" || cs == "windows-1252" {
        return bytes.iter().map(|&c| c as char).collect();
    }
    // a double-byte charset's (Big5, GB2312, Shift_JIS, EUC) lead byte takes the next
    // byte with it, which may look like ASCII; a single-byte one's does not
    let single = ["iso-8859", "windows-", "koi8", "cp"]
        .iter()
        .any(|p| cs.starts_with(p));
    let mut ascii = String::new();
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        if c.is_ascii() {
            ascii.push(c as char);
        } else {
            ascii.push(' ');
            i += usize::from(!single);
        }
        i += 1;
    }
    ascii.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `=?utf-8?q?…?=` and `=?Big5?B?…?=` words of a header (`charset_text` for the charset).
fn decode_encoded_words(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("=?") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let parts: Vec<&str> = tail.splitn(4, '?').collect();
        if parts.len() == 4 && parts[1].eq_ignore_ascii_case("b") {
            if let Some(after) = parts[3].strip_prefix('=') {
                out.push_str(&charset_text(&base64_bytes([parts[2]]), parts[0]));
                rest = after;
                continue;
            }
        }
        if parts.len() == 4 && parts[1].eq_ignore_ascii_case("q") {
            if let Some(after) = parts[3].strip_prefix('=') {
                let word = parts[2].replace('_', " ");
                let decoded = decode_qp(&[(0, word)], true);
                out.push_str(decoded.first().map_or("", |d| d.1.as_str()));
                rest = after;
                continue;
            }
        }
        out.push_str("=?");
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Strip `>` quoting (`> `, `>> `, `> > `) and attach quoted authors from `X wrote:` lines.
pub fn unquote(body: &[(usize, String)]) -> Vec<PostLine> {
    let mut out = Vec::with_capacity(body.len());
    // depth → author attributed for lines of that depth
    let mut authors: Vec<Option<String>> = Vec::new();
    for (n, line) in body {
        let (depth, text) = strip_quotes(line);
        if authors.len() <= depth + 1 {
            authors.resize(depth + 2, None);
        }
        let quoted_author = if depth > 0 {
            authors.get(depth).cloned().flatten()
        } else {
            None
        };
        if let Some(name) = attribution(text) {
            authors[depth + 1] = Some(name);
        }
        out.push(PostLine {
            n: *n,
            depth,
            // full-width punctuation (`f2fs ：IOPS=41.2k，`) read as its ASCII form
            text: text.replace('：', ": ").replace('，', ", "),
            quoted_author,
        });
    }
    out
}

fn strip_quotes(line: &str) -> (usize, &str) {
    let mut depth = 0;
    let mut rest = line;
    loop {
        let t = rest.strip_prefix(' ').filter(|_| depth > 0).unwrap_or(rest);
        if let Some(r) = t.strip_prefix('>') {
            depth += 1;
            rest = r;
        } else {
            break;
        }
    }
    if depth > 0 {
        rest = rest.strip_prefix(' ').unwrap_or(rest);
    }
    (depth, rest)
}

/// `On Mon, Dec 01, 2025 at 11:38:46PM -0800, Christoph Hellwig wrote:`, `Ric Wheeler
/// wrote:`, `On 2024/5/31 23:00, Darrick J. Wong wrote:` → the name.
pub fn attribution(text: &str) -> Option<String> {
    let t = text.trim();
    let head = t
        .strip_suffix("wrote:")
        .or_else(|| t.strip_suffix("writes:"))?
        .trim();
    let name = match head.rfind(", ") {
        Some(i) if head.starts_with("On ") => &head[i + 2..],
        _ => head.strip_prefix("On ").unwrap_or(head),
    };
    let name = name
        .split(" <")
        .next()
        .unwrap_or(name)
        .trim()
        .trim_matches('"');
    (!name.is_empty() && name.len() < 80).then(|| name.to_string())
}

/// Whether a line is an attribution, a signature marker or other mail furniture.
pub fn is_furniture(text: &str) -> bool {
    let t = text.trim();
    attribution(t).is_some() || t == "--" || t == "-- " || t.starts_with("-----Original Message")
}

/// `Re: [PATCH v4 8/8] xfs: improve truncate` → `xfs-improve-truncate`.
pub fn id_from(subject: Option<&str>, file_stem: Option<&str>) -> String {
    let base = match subject {
        Some(s) => {
            let mut s = s.trim();
            loop {
                let lower = s.to_ascii_lowercase();
                if lower.starts_with("re:") || lower.starts_with("fw:") || lower.starts_with("aw:")
                {
                    s = s[3..].trim_start();
                } else if lower.starts_with("fwd:") {
                    s = s[4..].trim_start();
                } else if s.starts_with('[') {
                    s = s.split_once(']').map_or("", |x| x.1).trim_start();
                } else {
                    break;
                }
            }
            s.to_string()
        }
        None => file_stem.unwrap_or("post").to_string(),
    };
    let words: Vec<String> = base
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(6)
        .map(str::to_ascii_lowercase)
        .collect();
    let id = words.join("-");
    if id.is_empty() {
        "imported-post".into()
    } else if id.starts_with(|c: char| c.is_ascii_digit()) {
        format!("post-{id}")
    } else {
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_subjects() {
        assert_eq!(
            id_from(
                Some("Re: [PATCH 1/2] mkfs: enable new features by default"),
                None
            ),
            "mkfs-enable-new-features-by-default"
        );
        assert_eq!(id_from(Some("Re: [RFC PATCH v4 8/8] xfs: improve truncate on a realtime inode with huge extsize"), None), "xfs-improve-truncate-on-a-realtime");
        assert_eq!(id_from(None, Some("000_abc")), "post-000-abc");
        assert_eq!(id_from(Some("Re: ???"), None), "imported-post");
    }

    #[test]
    fn headers_and_quoting_keep_line_numbers() {
        let m = "From: Eric Sandeen <sandeen@redhat.com>\nSubject: Re: fsck\n times?\nMessage-ID: <a@b>\n\nRic Wheeler wrote:\n> Theodore Tso wrote:\n>> Running on ext3, \"fsck -f\" takes about one hour.\n> > nested\nmine\n";
        let p = read(m.as_bytes()).unwrap();
        assert_eq!(p.headers.subject.as_deref(), Some("Re: fsck times?"));
        assert_eq!(p.headers.message_id.as_deref(), Some("<a@b>"));
        assert_eq!(p.author_name().as_deref(), Some("Eric Sandeen"));
        let l = p
            .lines
            .iter()
            .find(|l| l.text.contains("one hour"))
            .unwrap();
        assert_eq!((l.n, l.depth), (8, 2));
        assert_eq!(l.quoted_author.as_deref(), Some("Theodore Tso"));
        let nested = p.lines.iter().find(|l| l.text == "nested").unwrap();
        assert_eq!(nested.depth, 2);
        assert_eq!(p.lines.last().unwrap().depth, 0);
    }

    #[test]
    fn quoted_printable_joins_soft_breaks_and_decodes_bytes() {
        let m = "Subject: x\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\nmkfs.xfs -f -m reflink=3D0 /dev/sdb =\n-n parent=3D1\nsize =E2=89=88 4k\n";
        let p = read(m.as_bytes()).unwrap();
        assert_eq!(
            p.lines[0].text,
            "mkfs.xfs -f -m reflink=0 /dev/sdb -n parent=1"
        );
        assert_eq!(p.lines[0].n, 5);
        assert_eq!(p.lines[1].text, "size ≈ 4k");
        assert_eq!(p.lines[1].n, 7);
    }

    #[test]
    fn mbox_takes_first_message_and_says_so() {
        let m = "From a@b Mon Jan  1 00:00:00 2024\nFrom: A <a@b>\nSubject: one\n\nbody one\n\nFrom c@d Mon Jan  1 00:00:00 2024\nFrom: C <c@d>\nSubject: two\n\nbody two\n";
        let p = read(m.as_bytes()).unwrap();
        assert_eq!(p.headers.subject.as_deref(), Some("one"));
        assert!(p.lines.iter().all(|l| !l.text.contains("two")));
        assert!(p.notes.iter().any(|n| n.1.contains("2 messages")));
    }

    #[test]
    fn lore_page_subject_and_author() {
        let m = "Re: [PATCH 1/2] mkfs: enable\n\n[\"Darrick J. Wong\" <djwong@kernel.org>]\n\nOn Mon, Dec 01, 2025 at 11:38:46PM -0800, Christoph Hellwig wrote:\n> hi\n";
        let p = read(m.as_bytes()).unwrap();
        assert_eq!(
            p.headers.subject.as_deref(),
            Some("Re: [PATCH 1/2] mkfs: enable")
        );
        assert_eq!(p.author_name().as_deref(), Some("Darrick J. Wong"));
        let hi = p.lines.iter().find(|l| l.text == "hi").unwrap();
        assert_eq!(hi.n, 6);
        assert_eq!(hi.quoted_author.as_deref(), Some("Christoph Hellwig"));
    }

    #[test]
    fn lore_thread_page_headers() {
        let m = "linux-kernel.vger.kernel.org archive mirror\n help / color / mirror / Atom feed\n* [RFC] cfq: adapt slice\n@ 2009-09-03 11:07 Corrado Zoccolo\n  0 siblings, 1 reply; 12+ messages in thread\nFrom: Corrado Zoccolo @ 2009-09-03 11:07 UTC (permalink / raw)\n  To: Linux-Kernel, Jens Axboe\n\n[-- Attachment #1: Type: text/plain, Size: 1817 bytes --]\n\nWhen the number\n";
        let p = read(m.as_bytes()).unwrap();
        assert_eq!(p.headers.subject.as_deref(), Some("[RFC] cfq: adapt slice"));
        assert_eq!(p.headers.from.as_deref(), Some("Corrado Zoccolo"));
        assert_eq!(p.headers.date.as_deref(), Some("2009-09-03 11:07 UTC"));
        assert_eq!(p.headers.line, 6);
        assert_eq!(
            p.lines.first().map(|l| (l.n, l.text.as_str())),
            Some((11, "When the number"))
        );
    }

    #[test]
    fn encoded_word_names() {
        let p = read(
            b"From: =?Big5?B?QWxleCBMYXUgvEKrVL3l?= <alexlau@thizgroup.com>\nSubject: =?utf-8?B?eGZzOiBmYXN0ZXI=?=\n\nhi\n",
        )
        .unwrap();
        assert_eq!(p.headers.subject.as_deref(), Some("xfs: faster"));
        assert_eq!(p.author_name().as_deref(), Some("Alex Lau"));
    }

    #[test]
    fn multipart_base64_text_part() {
        let m = "Subject: s\nContent-Type: multipart/alternative; boundary=\"XX\"\n\n--XX\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\ncmVhbCAwbTEuNXMK\n--XX\nContent-Type: text/html\n\n<p>x</p>\n--XX--\n";
        let p = read(m.as_bytes()).unwrap();
        assert_eq!(p.lines[0].text, "real 0m1.5s");
    }

    #[test]
    fn empty_and_binary_are_refused() {
        assert!(matches!(read(b"  \n\n"), Err(ImportError::Empty)));
        assert!(matches!(
            read(b"\x7fELF\x02\x01\x00\x00\x00"),
            Err(ImportError::Binary)
        ));
    }
}
