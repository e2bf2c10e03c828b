//! Commit messages and the `Wfx-*` trailers (pure, no repository).
//!
//! The trailers are how wfx recognises its own commits after a crash: a
//! resumed run looks for a commit carrying the same session, iteration and
//! kind before committing again, so each checkpoint exists at most once
//! (DESIGN.md §5.1, §5.5).

use std::fmt;

use crate::error::{Error, Result};

/// What a wfx commit records, so a fix, its rollback and the final commit of
/// one iteration carry different trailers and never satisfy each other's
/// idempotence check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommitKind {
    /// The changes of one fix attempt.
    Fix,
    /// The revert of a fix attempt that caused a regression.
    Rollback,
    /// The session summary and archive move at completion.
    Final,
}

impl CommitKind {
    /// The value written after `Wfx-Kind:`.
    pub fn as_str(self) -> &'static str {
        match self {
            CommitKind::Fix => "fix",
            CommitKind::Rollback => "rollback",
            CommitKind::Final => "final",
        }
    }

    /// Parse a `Wfx-Kind:` value (case-insensitive, as git treats trailers).
    pub fn parse(value: &str) -> Option<CommitKind> {
        match value.trim().to_ascii_lowercase().as_str() {
            "fix" => Some(CommitKind::Fix),
            "rollback" => Some(CommitKind::Rollback),
            "final" => Some(CommitKind::Final),
            _ => None,
        }
    }
}

impl fmt::Display for CommitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The trailers of a wfx commit: `Wfx-Session`, `Wfx-Iteration`, `Wfx-Kind`.
/// Two commits with equal trailers are the same checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Trailers {
    pub session: String,
    pub iteration: u32,
    pub kind: CommitKind,
    /// `Wfx-Run`: made once per session (DESIGN.md §10.2), so a new session
    /// that reuses an old session's id never takes the old one's commits
    /// for its own. Filled in by [`crate::git::Checkpoints`] when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// Trailer keys, spelled as written. Parsing compares them case-insensitively.
pub const SESSION_KEY: &str = "Wfx-Session";
pub const ITERATION_KEY: &str = "Wfx-Iteration";
pub const KIND_KEY: &str = "Wfx-Kind";
pub const RUN_KEY: &str = "Wfx-Run";

impl Trailers {
    pub fn new(session: impl Into<String>, iteration: u32, kind: CommitKind) -> Self {
        Trailers {
            session: session.into(),
            iteration,
            kind,
            run: None,
        }
    }

    /// The same trailers with `Wfx-Run: run`.
    pub fn with_run(mut self, run: Option<&str>) -> Self {
        self.run = run.map(str::to_string);
        self
    }

    /// The trailer block, one `Key: value` line each, ending in a newline.
    pub fn to_block(&self) -> String {
        let mut block = format!(
            "{SESSION_KEY}: {}\n{ITERATION_KEY}: {}\n{KIND_KEY}: {}\n",
            self.session, self.iteration, self.kind
        );
        if let Some(run) = &self.run {
            block.push_str(&format!("{RUN_KEY}: {run}\n"));
        }
        block
    }

    /// A session id goes into a one-line trailer; anything that could break
    /// the line (or hide the trailer) is refused rather than escaped.
    fn validate(&self) -> Result<()> {
        let s = &self.session;
        if s.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Error::Git(format!(
                "cannot use {:?} as the {SESSION_KEY} trailer: it must be one word without spaces",
                s
            )));
        }
        if let Some(run) = &self.run
            && (run.is_empty() || run.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(Error::Git(format!(
                "cannot use {run:?} as the {RUN_KEY} trailer: it must be one word"
            )));
        }
        Ok(())
    }
}

/// The full commit message: `message` (trailing whitespace trimmed), a blank
/// line, then the trailers. An empty message is refused because git tools
/// treat the first line as the commit's title.
pub fn build_message(message: &str, trailers: &Trailers) -> Result<String> {
    trailers.validate()?;
    let body = message.trim_end();
    if body.trim().is_empty() {
        return Err(Error::Git(
            "refusing to commit with an empty message".to_string(),
        ));
    }
    Ok(format!("{body}\n\n{}", trailers.to_block()))
}

/// The wfx trailers of a commit message, if its last paragraph has all
/// three. Only the last paragraph counts (as for `git interpret-trailers`),
/// so a message that merely quotes trailers in its body is not mistaken for
/// a checkpoint. Other trailers in that paragraph (`Signed-off-by:` …) are
/// allowed.
pub fn parse_trailers(message: &str) -> Option<Trailers> {
    let normalized = message.replace("\r\n", "\n");
    let trimmed = normalized.trim_end();
    let last = trimmed.rsplit("\n\n").next()?;
    let (mut session, mut iteration, mut kind, mut run) = (None, None, None, None);
    for line in last.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let value = value.trim();
        if key.eq_ignore_ascii_case(SESSION_KEY) {
            session = Some(value.to_string());
        } else if key.eq_ignore_ascii_case(ITERATION_KEY) {
            iteration = value.parse::<u32>().ok();
        } else if key.eq_ignore_ascii_case(KIND_KEY) {
            kind = CommitKind::parse(value);
        } else if key.eq_ignore_ascii_case(RUN_KEY) {
            run = Some(value.to_string()).filter(|v| !v.is_empty());
        }
    }
    let session = session.filter(|s| !s.is_empty())?;
    Some(Trailers {
        session,
        iteration: iteration?,
        kind: kind?,
        run,
    })
}

/// A new `Wfx-Run` value: a random UUID (version 4) from the system's
/// random source, or from the clock and process id where there is none.
pub fn new_run_id() -> String {
    use std::io::Read;
    let mut b = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if !random {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b = (nanos ^ ((std::process::id() as u128) << 64)).to_le_bytes();
    }
    format_uuid(b)
}

/// 16 bytes as a version-4, variant-1 UUID string.
fn format_uuid(mut b: [u8; 16]) -> String {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: CommitKind) -> Trailers {
        Trailers::new("WFS-test-auth", 3, kind)
    }

    #[test]
    fn message_ends_with_blank_line_and_trailers() {
        let msg = build_message(
            "test-cycle: iteration 3 - conservative strategy (pass: 50.0% → 75.0%)\n\n",
            &t(CommitKind::Fix),
        )
        .unwrap();
        assert_eq!(
            msg,
            "test-cycle: iteration 3 - conservative strategy (pass: 50.0% → 75.0%)\n\n\
             Wfx-Session: WFS-test-auth\nWfx-Iteration: 3\nWfx-Kind: fix\n"
        );
    }

    #[test]
    fn message_with_body_keeps_the_body() {
        let msg = build_message("title\n\nbody line", &t(CommitKind::Rollback)).unwrap();
        assert_eq!(
            msg,
            "title\n\nbody line\n\nWfx-Session: WFS-test-auth\nWfx-Iteration: 3\nWfx-Kind: rollback\n"
        );
    }

    #[test]
    fn empty_message_and_bad_session_are_refused() {
        assert!(build_message("  \n", &t(CommitKind::Fix)).is_err());
        let bad = Trailers::new("WFS-a\nWfx-Kind: final", 1, CommitKind::Fix);
        let err = build_message("x", &bad).unwrap_err().to_string();
        assert!(err.contains("Wfx-Session"), "{err}");
        assert!(build_message("x", &Trailers::new("", 1, CommitKind::Fix)).is_err());
    }

    #[test]
    fn round_trip_for_every_kind() {
        for kind in [CommitKind::Fix, CommitKind::Rollback, CommitKind::Final] {
            let msg = build_message("subject", &t(kind)).unwrap();
            assert_eq!(parse_trailers(&msg), Some(t(kind)));
        }
    }

    #[test]
    fn parse_tolerates_other_trailers_case_and_crlf() {
        let msg = "subject\r\n\r\nbody\r\n\r\nSigned-off-by: A <a@b>\r\nwfx-session: WFS-x\r\nWFX-ITERATION:  12 \r\nwfx-kind: Final\r\n";
        assert_eq!(
            parse_trailers(msg),
            Some(Trailers::new("WFS-x", 12, CommitKind::Final))
        );
    }

    #[test]
    fn parse_needs_all_three_in_the_last_paragraph() {
        assert_eq!(parse_trailers("subject"), None);
        assert_eq!(
            parse_trailers("s\n\nWfx-Session: WFS-x\nWfx-Iteration: 1\n"),
            None,
            "kind missing"
        );
        assert_eq!(
            parse_trailers("s\n\nWfx-Session: WFS-x\nWfx-Iteration: one\nWfx-Kind: fix"),
            None,
            "iteration not a number"
        );
        assert_eq!(
            parse_trailers("s\n\nWfx-Session: WFS-x\nWfx-Iteration: 1\nWfx-Kind: other"),
            None,
            "unknown kind"
        );
        // Quoted in the body, followed by another paragraph: not a checkpoint.
        assert_eq!(
            parse_trailers("s\n\nWfx-Session: WFS-x\nWfx-Iteration: 1\nWfx-Kind: fix\n\nmore text"),
            None
        );
    }

    #[test]
    fn run_trailer_round_trips_and_tells_sessions_apart() {
        let mine = t(CommitKind::Fix).with_run(Some("1b4e28ba-2fa1-41d2-883f-0016d3cca427"));
        let msg = build_message("subject", &mine).unwrap();
        assert!(msg.ends_with("Wfx-Kind: fix\nWfx-Run: 1b4e28ba-2fa1-41d2-883f-0016d3cca427\n"));
        assert_eq!(parse_trailers(&msg), Some(mine.clone()));
        // An older session with the same id (or none recorded): not mine.
        let old = build_message("subject", &t(CommitKind::Fix).with_run(Some("other"))).unwrap();
        assert_ne!(parse_trailers(&old), Some(mine.clone()));
        let legacy = build_message("subject", &t(CommitKind::Fix)).unwrap();
        assert_ne!(parse_trailers(&legacy), Some(mine));
        assert!(build_message("s", &t(CommitKind::Fix).with_run(Some("a b"))).is_err());
    }

    #[test]
    fn run_ids_are_uuids() {
        assert_eq!(
            format_uuid([0xff; 16]),
            "ffffffff-ffff-4fff-bfff-ffffffffffff"
        );
        assert_eq!(format_uuid([0; 16]), "00000000-0000-4000-8000-000000000000");
        let a = new_run_id();
        assert_eq!(a.len(), 36);
        assert_ne!(a, new_run_id());
    }

    #[test]
    fn kind_strings() {
        assert_eq!(CommitKind::Rollback.to_string(), "rollback");
        assert_eq!(CommitKind::parse(" FIX "), Some(CommitKind::Fix));
        assert_eq!(CommitKind::parse("fixes"), None);
    }
}
