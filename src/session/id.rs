//! Session ids (DESIGN.md §2): slugs for new ids, strict checks for ids a
//! user types, before any path is built from them.

use crate::error::{Error, Result};

const SLUG_MAX: usize = 50;

/// Lowercase ASCII, runs of anything else → one `-`, trimmed, cut at a word
/// boundary to at most 50 characters. Never empty.
pub fn slugify(text: &str) -> String {
    let mut slug = String::with_capacity(text.len().min(128));
    let mut pending_dash = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push(c.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    if slug.len() > SLUG_MAX {
        let cut = slug[..=SLUG_MAX]
            .rfind('-')
            .filter(|&i| i > 0)
            .unwrap_or(SLUG_MAX);
        slug.truncate(cut);
    }
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        "session".to_string()
    } else {
        slug
    }
}

/// Base id for a prompt-mode session: `WFS-test-<slug>` (no second `test`).
pub fn prompt_session_id(description: &str) -> String {
    let slug = slugify(description);
    if slug.starts_with("test") {
        format!("WFS-{slug}")
    } else {
        let slug = slugify(&format!("test-{slug}"));
        format!("WFS-{slug}")
    }
}

/// Base id for a session-mode session: `WFS-test-<source id without WFS->`.
pub fn source_session_id(source_id: &str) -> String {
    let rest = source_id.strip_prefix("WFS-").unwrap_or(source_id);
    format!("WFS-{}", slugify(&format!("test-{rest}")))
}

/// First of `base`, `base-2`, `base-3`, … for which `taken` is false.
pub fn unique_id(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_string();
    }
    (2u32..)
        .map(|n| format!("{base}-{n}"))
        .find(|id| !taken(id))
        .expect("an unused suffix exists")
}

/// The usage error for a rejected id: the id as shown (escaped, cut to
/// 120 characters), why, and what was expected.
fn invalid(id: &str, why: &str, expected: &str) -> Result<()> {
    let shown = id
        .chars()
        .take(120)
        .collect::<String>()
        .escape_debug()
        .to_string();
    Err(Error::usage(format!(
        "invalid session id \"{shown}\": {why} (expected {expected})"
    )))
}

/// Reject anything that is not `^WFS-[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$` or
/// that contains `..`. Called on every id a user gives, before any path.
pub fn validate_user_id(id: &str) -> Result<()> {
    let bad = |why: &str| {
        invalid(
            id,
            why,
            "WFS- followed by letters, digits, '_', '.' or '-', at most 100 characters",
        )
    };
    let Some(rest) = id.strip_prefix("WFS-") else {
        return bad("it must start with WFS-");
    };
    if rest.is_empty() {
        return bad("nothing follows WFS-");
    }
    if rest.len() > 100 {
        return bad("it is too long");
    }
    if !rest.as_bytes()[0].is_ascii_alphanumeric() {
        return bad("the first character after WFS- must be a letter or digit");
    }
    if !rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    {
        return bad("it contains a character that is not allowed");
    }
    if id.contains("..") {
        return bad("it contains '..'");
    }
    Ok(())
}

/// Check an id that names a session directory which must already exist:
/// any `WFS-…` name that is one path component — no `/` or `\\`, no
/// `..`, no control characters, at most 200 bytes. Other `.workflow` tools
/// make ids wfx would never make (CCW slugs non-ASCII descriptions to
/// `WFS------`, punctuation to `WFS--auth--fix`), and wfx reads those
/// sessions as sources and lists them (DESIGN.md §10.6). Called before
/// any path is built; new ids still pass [`validate_user_id`].
pub fn validate_existing_id(id: &str) -> Result<()> {
    if validate_user_id(id).is_ok() {
        return Ok(());
    }
    let bad = |why: &str| invalid(id, why, "WFS- followed by a directory name");
    let Some(rest) = id.strip_prefix("WFS-") else {
        return bad("it must start with WFS-");
    };
    if rest.is_empty() {
        return bad("nothing follows WFS-");
    }
    if id.len() > 200 {
        return bad("it is too long");
    }
    if id.contains(['/', '\\']) {
        return bad("it contains a path separator");
    }
    if id.contains("..") {
        return bad("it contains '..'");
    }
    if id.chars().any(char::is_control) {
        return bad("it contains a control character");
    }
    Ok(())
}

/// True when `name` (a directory name) can be a session id: the names
/// [`validate_existing_id`] accepts, so sessions other tools made are
/// listed too.
pub fn is_session_id(name: &str) -> bool {
    validate_existing_id(name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_table() {
        for (input, want) in [
            ("Test the auth API", "test-the-auth-api"),
            ("  Hello,   World!! ", "hello-world"),
            ("Ünïcödé names", "n-c-d-names"),
            ("a--b__c", "a-b-c"),
            ("", "session"),
            ("!!!", "session"),
            ("UPPER lower 123", "upper-lower-123"),
            (
                "one two three four five six seven eight nine ten eleven",
                "one-two-three-four-five-six-seven-eight-nine-ten",
            ),
            (&"x".repeat(80), &"x".repeat(50)),
        ] {
            let got = slugify(input);
            assert_eq!(got, want, "slugify({input:?})");
            assert!(got.len() <= 50);
        }
    }

    #[test]
    fn session_id_prefixes() {
        assert_eq!(
            prompt_session_id("Test the auth API"),
            "WFS-test-the-auth-api"
        );
        assert_eq!(prompt_session_id("Auth API"), "WFS-test-auth-api");
        assert_eq!(prompt_session_id("testing things"), "WFS-testing-things");
        assert_eq!(source_session_id("WFS-user-auth"), "WFS-test-user-auth");
        let long = prompt_session_id(&"word ".repeat(40));
        assert!(long.len() <= 4 + 50, "{long}");
        assert!(validate_user_id(&long).is_ok());
    }

    #[test]
    fn collision_suffixes() {
        let taken = ["WFS-a", "WFS-a-2", "WFS-b"];
        let is_taken = |id: &str| taken.contains(&id);
        assert_eq!(unique_id("WFS-a", is_taken), "WFS-a-3");
        assert_eq!(unique_id("WFS-b", is_taken), "WFS-b-2");
        assert_eq!(unique_id("WFS-c", is_taken), "WFS-c");
    }

    #[test]
    fn hostile_ids_rejected() {
        let long = format!("WFS-{}", "a".repeat(101));
        for id in [
            "",
            "WFS-",
            "WFS-../../x",
            "WFS-a/../../etc",
            "/etc/passwd",
            "WFS-/abs",
            "wfs-lower",
            "WFS-.hidden",
            "WFS-a..b",
            "WFS-a\0b",
            "WFS-a b",
            "WFS-a\nb",
            "WFS-ä",
            "../WFS-a",
            long.as_str(),
        ] {
            assert!(validate_user_id(id).is_err(), "accepted {id:?}");
        }
        for id in [
            "WFS-a",
            "WFS-test-auth-api-2",
            "WFS-A_b.c-d",
            &format!("WFS-{}", "a".repeat(100)),
        ] {
            assert!(validate_user_id(id).is_ok(), "rejected {id:?}");
        }
    }

    #[test]
    fn existing_ids_other_tools_make_are_accepted() {
        // CCW: `echo "$desc" | sed 's/[^a-zA-Z0-9]/-/g'`: a non-ASCII
        // description becomes dashes, punctuation doubles them.
        for id in [
            "WFS------",
            "WFS--auth--fix",
            "WFS-user-auth",
            "WFS-.hidden",
            "WFS-ä",
            "WFS-a b",
        ] {
            assert!(validate_existing_id(id).is_ok(), "rejected {id:?}");
            assert!(is_session_id(id));
        }
        for id in [
            "",
            "WFS-",
            "wfs-lower",
            "WFS-../x",
            "WFS-a/b",
            "WFS-a\\b",
            "WFS-a..b",
            "WFS-..",
            "WFS-a\0b",
            "WFS-a\nb",
            "../WFS-a",
            &format!("WFS-{}", "a".repeat(200)),
        ] {
            assert!(validate_existing_id(id).is_err(), "accepted {id:?}");
        }
        // New ids stay strict.
        assert!(validate_user_id("WFS------").is_err());
        assert_eq!(source_session_id("WFS------"), "WFS-test");
        assert_eq!(source_session_id("WFS--auth--fix"), "WFS-test-auth-fix");
    }
}
