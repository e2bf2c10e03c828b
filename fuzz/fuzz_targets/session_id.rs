#![no_main]
//! Session ids: slugs made from a prompt or a source session id must always
//! be valid ids (wfx builds paths from them), the strict check a
//! user-typed id goes through must never panic, and whatever is taken for
//! an existing session's id (other tools make ids wfx would not) stays one
//! path component.

use libfuzzer_sys::fuzz_target;
use wfx::session::id;

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    let slug = id::slugify(&text);
    assert!(!slug.is_empty() && slug.len() <= 50, "{slug:?}");
    assert!(
        slug.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
        "{slug:?}"
    );
    assert!(!slug.starts_with('-') && !slug.ends_with('-') && !slug.contains("--"));
    for made in [id::prompt_session_id(&text), id::source_session_id(&text)] {
        assert!(made.len() <= 54, "{made:?} is {} bytes", made.len());
        if let Err(e) = id::validate_user_id(&made) {
            panic!("{made:?} from {text:?} is not a valid id: {e}");
        }
        let unique = id::unique_id(&made, |candidate| candidate == made);
        assert!(id::validate_user_id(&unique).is_ok(), "{unique:?}");
    }
    // A new id passes the strict check; a directory another tool made may
    // pass only the lenient one, which still keeps it one safe path
    // component.
    let new = id::validate_user_id(&text).is_ok();
    let existing = id::is_session_id(&text);
    assert!(
        !new || existing,
        "{text:?} is a valid new id but not a session id"
    );
    if existing {
        assert!(text.starts_with("WFS-") && text.len() <= 200);
        assert!(!text.contains("..") && !text.contains(['/', '\\']));
        assert!(!text.chars().any(char::is_control), "{text:?}");
    }
});
