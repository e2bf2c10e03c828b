//! Secret redaction (DESIGN.md §10.2): the values of environment variables
//! whose names look secret are replaced by `[redacted:NAME]` in every
//! artifact wfx writes. Both write paths call [`redact`]: the session
//! transaction (every step's documents) and the store's atomic writes
//! (prompt files, manifests, caches). Logs of raw output (`*.log`,
//! `*-cli-output.txt`, git-ignored) are streamed by the process runner and
//! keep the raw text.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

/// Words in a variable name that make its value a secret.
const SECRET_WORDS: [&str; 6] = ["TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL", "AUTH"];

/// Values shorter than this are not redacted (`true`, `1`, `dev`).
pub const MIN_SECRET_LEN: usize = 8;

/// Whether a variable's name says its value is a secret.
pub fn looks_secret(name: &str) -> bool {
    // `GIT_AUTHOR_DATE` is not an auth variable: AUTHOR is not AUTH, but
    // AUTHORIZATION is.
    let upper = name
        .to_ascii_uppercase()
        .replace("AUTHORIZ", "AUTH_IZ")
        .replace("AUTHOR", "");
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// The secrets to redact and their placeholders.
#[derive(Debug)]
pub struct Secrets {
    matcher: Option<AhoCorasick>,
    placeholders: Vec<Vec<u8>>,
}

impl Secrets {
    /// The secrets among `vars` (name, value). A value is also matched as
    /// it appears inside a JSON string (quotes and backslashes escaped).
    pub fn new<I, K, V>(vars: I) -> Secrets
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut patterns: Vec<String> = Vec::new();
        let mut placeholders = Vec::new();
        for (name, value) in vars {
            let (name, value) = (name.as_ref(), value.as_ref());
            let placeholder = format!("[redacted:{name}]");
            if !looks_secret(name)
                || value.chars().count() < MIN_SECRET_LEN
                || placeholder.contains(value)
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let escaped = serde_json::to_string(value).unwrap_or_default();
            let escaped = escaped
                .strip_prefix('"')
                .and_then(|e| e.strip_suffix('"'))
                .unwrap_or(value);
            for form in [value, escaped] {
                if !patterns.iter().any(|p| p == form) {
                    patterns.push(form.to_string());
                    placeholders.push(placeholder.clone().into_bytes());
                }
            }
        }
        let matcher = (!patterns.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .expect("literal patterns")
        });
        Secrets {
            matcher,
            placeholders,
        }
    }

    /// `bytes` with every secret replaced by its placeholder.
    pub fn redact<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(m) = &self.matcher else {
            return Cow::Borrowed(bytes);
        };
        if !m.is_match(bytes) {
            return Cow::Borrowed(bytes);
        }
        let mut out = Vec::with_capacity(bytes.len());
        m.replace_all_with_bytes(bytes, &mut out, |mat, _, dst| {
            dst.extend_from_slice(&self.placeholders[mat.pattern().as_usize()]);
            true
        });
        Cow::Owned(out)
    }
}

/// The secrets of this process's environment (read once).
pub fn process_secrets() -> &'static Secrets {
    static SECRETS: OnceLock<Secrets> = OnceLock::new();
    SECRETS.get_or_init(|| {
        Secrets::new(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    })
}

/// `bytes` redacted with the process's secrets: what every artifact
/// write calls.
pub fn redact(bytes: &[u8]) -> Cow<'_, [u8]> {
    process_secrets().redact(bytes)
}

/// An owned buffer redacted (no copy when nothing matches).
pub fn redact_vec(bytes: Vec<u8>) -> Vec<u8> {
    match process_secrets().redact(&bytes) {
        Cow::Borrowed(_) => bytes,
        Cow::Owned(v) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for (name, secret) in [
            ("AWS_SECRET_ACCESS_KEY", true),
            ("GITHUB_TOKEN", true),
            ("db_password", true),
            ("OPENAI_API_KEY", true),
            ("GOOGLE_APPLICATION_CREDENTIALS", true),
            ("HTTP_AUTHORIZATION", true),
            ("PATH", false),
            ("HOME", false),
            ("WFX_SESSION_DIR", false),
            ("GIT_AUTHOR_DATE", false),
            ("GIT_AUTHOR_NAME", false),
            ("GIT_AUTHOR_AUTH_TOKEN", true),
        ] {
            assert_eq!(looks_secret(name), secret, "{name}");
        }
    }

    #[test]
    fn values_are_replaced_where_they_appear() {
        let s = Secrets::new([
            ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
            ("GITHUB_TOKEN", "ghp_abc\"def\\ghi"),
            ("API_KEY", "short"),
            ("EDITOR", "vim-is-long-enough"),
            ("PASSWORD", "redacted"),
        ]);
        let cases: &[(&str, &str)] = &[
            (
                "E   AssertionError: key=wJalrXUtnFEMI/K7MDENG",
                "E   AssertionError: key=[redacted:AWS_SECRET_ACCESS_KEY]",
            ),
            (
                r#"{"message": "token ghp_abc\"def\\ghi seen"}"#,
                r#"{"message": "token [redacted:GITHUB_TOKEN] seen"}"#,
            ),
            ("raw ghp_abc\"def\\ghi", "raw [redacted:GITHUB_TOKEN]"),
            ("short stays: short", "short stays: short"),
            (
                "not secret: vim-is-long-enough",
                "not secret: vim-is-long-enough",
            ),
            (
                "[redacted:PASSWORD] redacted",
                "[redacted:PASSWORD] redacted",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                String::from_utf8_lossy(&s.redact(input.as_bytes())),
                *want,
                "{input}"
            );
        }
        assert!(matches!(s.redact(b"nothing here"), Cow::Borrowed(_)));
        let none = Secrets::new(Vec::<(String, String)>::new());
        assert!(matches!(none.redact(b"x"), Cow::Borrowed(_)));
    }
}
