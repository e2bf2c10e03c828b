//! A fix's diff cut to fit in `fix-history.json` ([`DiffExcerpt`]): the
//! lines come in one by one as git prints the patch; secrets are redacted
//! line by line *before* anything is cut, so a cut never leaves the start
//! of a secret the artifact writer's redaction would no longer recognise.

use crate::artifacts::fix_history::DiffExcerpt;
use crate::redact::Secrets;

/// Builds a [`DiffExcerpt`] from the diff's lines, in order.
pub struct ExcerptBuilder<'s> {
    secrets: &'s Secrets,
    text: String,
    lines: usize,
    /// Set by the first line that did not fit: every later line is left out
    /// too, so the excerpt is the diff's beginning.
    full: bool,
    omitted: usize,
    /// An unfinished line (a chunk that did not end in a newline).
    partial: Vec<u8>,
}

impl<'s> ExcerptBuilder<'s> {
    pub fn new(secrets: &'s Secrets) -> Self {
        ExcerptBuilder {
            secrets,
            text: String::new(),
            lines: 0,
            full: false,
            omitted: 0,
            partial: Vec::new(),
        }
    }

    /// Add text as git prints it: one or more lines, the last possibly
    /// unfinished (it is continued by the next call).
    pub fn push(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while let Some(at) = rest.iter().position(|&b| b == b'\n') {
            let line = if self.partial.is_empty() {
                rest[..at].to_vec()
            } else {
                let mut l = std::mem::take(&mut self.partial);
                l.extend_from_slice(&rest[..at]);
                l
            };
            self.line(&line);
            rest = &rest[at + 1..];
        }
        self.partial.extend_from_slice(rest);
    }

    /// Add a diff line: `origin` (`+`, `-`, ` `) then its content (which
    /// git ends with a newline, or continues with `\ No newline at end of
    /// file`).
    pub fn push_with_origin(&mut self, origin: u8, content: &[u8]) {
        self.push(&[origin]);
        self.push(content);
    }

    fn line(&mut self, raw: &[u8]) {
        if self.full {
            self.omitted += 1;
            return;
        }
        let redacted = self.secrets.redact(raw);
        let text = String::from_utf8_lossy(&redacted);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        let line = match text.char_indices().nth(DiffExcerpt::MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.to_string(),
        };
        if self.lines >= DiffExcerpt::MAX_LINES
            || self.text.len() + line.len() + 1 > DiffExcerpt::MAX_BYTES
        {
            self.full = true;
            self.omitted += 1;
            return;
        }
        self.text.push_str(&line);
        self.text.push('\n');
        self.lines += 1;
    }

    pub fn finish(mut self) -> DiffExcerpt {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last);
        }
        DiffExcerpt {
            text: self.text,
            omitted_lines: u32::try_from(self.omitted).unwrap_or(u32::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(secrets: &Secrets, text: &str) -> DiffExcerpt {
        let mut b = ExcerptBuilder::new(secrets);
        b.push(text.as_bytes());
        b.finish()
    }

    fn none() -> Secrets {
        Secrets::new(Vec::<(String, String)>::new())
    }

    #[test]
    fn a_long_diff_keeps_its_first_lines_and_counts_the_rest() {
        let diff: String = (0..1000).map(|i| format!("+line {i}\n")).collect();
        let e = build(&none(), &diff);
        assert_eq!(e.text.lines().count(), DiffExcerpt::MAX_LINES);
        assert!(e.text.starts_with("+line 0\n+line 1\n"));
        assert!(e.text.ends_with("+line 149\n"));
        assert_eq!(e.omitted_lines, 850);
        assert_eq!(e.more(usize::MAX).as_deref(), Some("… 850 more lines"));
        assert_eq!(e.more(100).as_deref(), Some("… 900 more lines"));
    }

    #[test]
    fn long_lines_are_cut_and_the_bytes_are_bounded() {
        // 100 lines of 1000 characters: each cut to MAX_LINE_CHARS, and the
        // byte bound stops the excerpt before the line bound does.
        let diff: String = (0..100)
            .map(|_| format!("+{}\n", "x".repeat(999)))
            .collect();
        let e = build(&none(), &diff);
        assert!(e.text.len() <= DiffExcerpt::MAX_BYTES);
        let first = e.text.lines().next().unwrap();
        assert_eq!(first.chars().count(), DiffExcerpt::MAX_LINE_CHARS + 1);
        assert!(first.ends_with('…'));
        let kept = e.text.lines().count();
        assert!(kept < 100 && kept > 10, "{kept}");
        assert_eq!(kept + e.omitted_lines as usize, 100);
        // Multi-byte characters are cut on a character boundary.
        let e = build(&none(), &format!("+{}\n", "é".repeat(1000)));
        assert!(e.text.ends_with("é…\n"));
    }

    #[test]
    fn a_secret_is_redacted_even_where_the_excerpt_is_cut() {
        let secret = "s3cr3t-value-0123456789";
        let secrets = Secrets::new([("API_TOKEN", secret)]);
        let diff = format!("-token = \"old\"\n+token = \"{secret}\"\n");
        let e = build(&secrets, &diff);
        assert_eq!(
            e.text,
            "-token = \"old\"\n+token = \"[redacted:API_TOKEN]\"\n"
        );
        // A secret straddling the line-length cut is redacted, not halved.
        let long = format!("+{}{secret}\n", "y".repeat(DiffExcerpt::MAX_LINE_CHARS - 5));
        let e = build(&secrets, &long);
        assert!(!e.text.contains("s3cr3t"), "{}", e.text);
        // Chunks split inside a line are joined before redaction.
        let mut b = ExcerptBuilder::new(&secrets);
        b.push(b"+key s3cr3t-val");
        b.push(b"ue-0123456789\n");
        assert_eq!(b.finish().text, "+key [redacted:API_TOKEN]\n");
    }

    #[test]
    fn lines_with_origins_and_an_unfinished_last_line() {
        let secrets = none();
        let mut b = ExcerptBuilder::new(&secrets);
        b.push(b"@@ -1 +1 @@\n");
        b.push_with_origin(b'-', b"old\n");
        b.push_with_origin(b'+', b"new");
        b.push(b"\n\\ No newline at end of file");
        let e = b.finish();
        assert_eq!(
            e.text,
            "@@ -1 +1 @@\n-old\n+new\n\\ No newline at end of file\n"
        );
        assert_eq!(e.omitted_lines, 0);
        assert_eq!(e.more(usize::MAX), None);
        assert!(!e.is_empty());
        assert!(ExcerptBuilder::new(&none()).finish().is_empty());
    }
}
