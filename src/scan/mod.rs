//! Static scans used by the quality gates (DESIGN.md §5.7): the AI-issue
//! scan of IMPL-001.3 and the test anti-pattern scan (the coverage report
//! readers of IMPL-001.5 are `testing::coverage`). The checks are the rows of [`rules::RULES`]; both
//! scans read a file through one context, [`Ctx`].

pub mod ai_issues;
pub mod antipatterns;
pub use crate::artifacts::findings;
mod imports;
pub mod rules;

use std::cell::RefCell;
use std::path::Path;

pub use crate::project::dependencies::Manifest;
use crate::project::source::Source;
use crate::project::{Lang, is_test_path};
use findings::Finding;
use rules::{PATTERNS, Scan, Scope, rule_of};

/// Files larger than this are skipped (generated or vendored code).
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;

/// The language of a file the scans read (Python, JavaScript, TypeScript,
/// Rust, Go, Java); `None` for any other.
pub(crate) fn scanned_lang(rel: &str) -> Option<Lang> {
    use Lang::{Go, Java, Js, Python, Rust, Ts};
    Lang::of(rel).filter(|l| matches!(l, Python | Js | Ts | Rust | Go | Java))
}

/// One file being scanned, by either scan: its text read once, the
/// manifests that apply to it, which of it is test code, and the findings
/// (behind a `RefCell`, so a check reports while it reads `src`).
pub(crate) struct Ctx<'a> {
    pub root: &'a Path,
    pub rel: &'a str,
    pub src: Source<'a>,
    pub manifest: &'a Manifest,
    /// The whole file is test code (by path).
    pub test_file: bool,
    test_ranges: Vec<(usize, usize)>,
    out: RefCell<Vec<Finding>>,
}

impl<'a> Ctx<'a> {
    /// `None` for a file in a language the scans do not read.
    pub fn new(
        root: &'a Path,
        rel: &'a str,
        text: &'a str,
        manifest: &'a Manifest,
    ) -> Option<Self> {
        let src = Source::new(scanned_lang(rel)?, text);
        Some(Ctx {
            root,
            rel,
            test_ranges: src.cfg_test_ranges(),
            src,
            manifest,
            test_file: is_test_path(rel),
            out: RefCell::default(),
        })
    }

    /// Is the code at `off` test code (by path, or inside `#[cfg(test)]`)?
    pub fn is_test(&self, off: usize) -> bool {
        self.test_file || self.test_ranges.iter().any(|&(a, b)| off >= a && off < b)
    }

    /// A finding of rule `id` at `off`, unless the rule's scope leaves out
    /// the code there.
    pub fn report(&self, id: &str, off: usize, message: impl Into<String>) {
        if rule_of(id).scope != Scope::Source || !self.is_test(off) {
            self.emit(id, off, message);
        }
    }

    /// A finding of rule `id` at `off`, test code or not.
    pub fn emit(&self, id: &str, off: usize, message: impl Into<String>) {
        let r = rule_of(id);
        let line = Some(self.src.line_no(off));
        let f = Finding::new(r.category, r.id, r.severity, self.rel, line, message);
        self.out.borrow_mut().push(f);
    }

    /// Run the regex rules of `scan` that read this file's language.
    pub fn patterns(&self, scan: Scan) {
        let lang = self.src.lang;
        for (rule, p, regex) in PATTERNS.iter() {
            if rule.scan != scan || !p.langs.contains(&lang) {
                continue;
            }
            for c in regex.captures_iter(&self.src.masked) {
                let m = c.get(0).expect("group 0");
                let mut message = String::new();
                c.expand(p.message, &mut message);
                let off = m.start() + usize::from(m.as_str().starts_with('\n'));
                self.report(rule.id, off, message);
            }
        }
    }

    /// The findings sorted by line; one per line and check (`per_message`:
    /// one per line, check and message).
    pub fn finish(self, per_message: bool) -> Vec<Finding> {
        let mut out = self.out.into_inner();
        out.sort_by(|a, b| (a.line, &a.check, &a.message).cmp(&(b.line, &b.check, &b.message)));
        out.dedup_by(|a, b| {
            a.line == b.line && a.check == b.check && (!per_message || a.message == b.message)
        });
        out
    }
}

/// The text of a file if it is a regular text file of at most 1 MiB
/// (binary files are skipped, non-UTF-8 text is read lossily).
pub(crate) fn read_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    Some(
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

/// The lowercase words of an identifier (snake, kebab and camel case;
/// `HTTPServer` → `http`, `server`).
pub(crate) fn words(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in ident.split(['_', '$']) {
        let chars: Vec<char> = part.chars().collect();
        let mut cur = String::new();
        for (i, &ch) in chars.iter().enumerate() {
            let boundary = ch.is_ascii_uppercase()
                && i > 0
                && (chars[i - 1].is_ascii_lowercase()
                    || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                        && chars[i - 1].is_ascii_uppercase());
            if boundary && !cur.is_empty() {
                out.push(std::mem::take(&mut cur).to_ascii_lowercase());
            }
            cur.push(ch);
        }
        if !cur.is_empty() {
            out.push(cur.to_ascii_lowercase());
        }
    }
    out
}

fn in_any(ranges: &[(usize, usize)], off: usize) -> bool {
    ranges.iter().any(|&(a, z)| off >= a && off < z)
}
