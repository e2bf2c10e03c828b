//! Commit messages and the `Wfx-*` trailers (pure, no repository).
//!
//! The trailers are how wfx recognises its own commits after a crash: a
//! resumed run looks for a commit carrying the same session, iteration and
//! kind before committing again, so each checkpoint exists at most once
//! (DESIGN.md §5.1, §5.5).

use crate::error::{Error, Result};

named_enum! {
    /// What a wfx commit records, so a fix, its rollback and the final commit of
    /// one iteration carry different trailers and never satisfy each other's
    /// idempotence check.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
    pub enum CommitKind {
        /// The changes of one fix attempt.
        Fix = "fix",
        /// The revert of a fix attempt that caused a regression.
        Rollback = "rollback",
        /// The session summary and archive move at completion.
        Final = "final",
    }
}

impl CommitKind {
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
    /// `Wfx-Candidate`: the speculative candidate a fix commit applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<u32>,
}

/// Trailer keys, spelled as written. Parsing compares them case-insensitively.
pub const SESSION_KEY: &str = "Wfx-Session";
pub const ITERATION_KEY: &str = "Wfx-Iteration";
pub const KIND_KEY: &str = "Wfx-Kind";
pub const RUN_KEY: &str = "Wfx-Run";
pub const CANDIDATE_KEY: &str = "Wfx-Candidate";

impl Trailers {
    pub fn new(session: impl Into<String>, iteration: u32, kind: CommitKind) -> Self {
        Trailers {
            session: session.into(),
            iteration,
            kind,
            run: None,
            candidate: None,
        }
    }

    /// The same trailers with `Wfx-Candidate: n`.
    pub fn with_candidate(mut self, candidate: Option<u32>) -> Self {
        self.candidate = candidate;
        self
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
        if let Some(n) = self.candidate {
            block.push_str(&format!("{CANDIDATE_KEY}: {n}\n"));
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
    let mut candidate = None;
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
        } else if key.eq_ignore_ascii_case(CANDIDATE_KEY) {
            candidate = value.parse::<u32>().ok();
        }
    }
    let session = session.filter(|s| !s.is_empty())?;
    Some(Trailers {
        session,
        iteration: iteration?,
        kind: kind?,
        run,
        candidate,
    })
}

/// Which commit-message convention wfx's subjects follow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Convention {
    /// `test-cycle: iteration 2 - conservative strategy (pass: …)`.
    #[default]
    Plain,
    /// Conventional Commits: `fix(<scope>): …`, `test: …`, `revert: …`,
    /// `chore(wfx): …`, headers and body lines within commitlint's 100
    /// characters.
    Conventional,
}

/// What one wfx commit records, for its subject.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject<'a> {
    /// IMPL-001's generated tests.
    Tests { files: usize },
    /// One fix attempt; `strategy` is `None` for a person's fix.
    Fix {
        iteration: u32,
        strategy: Option<String>,
        before: f64,
        after: f64,
        /// The project paths the fix changed (the scope comes from them).
        paths: &'a [String],
    },
    /// The revert of a fix attempt, and why (`regression detected (…)`).
    Rollback { iteration: u32, reason: String },
    /// The final commit (`squashed`: the session's commits folded in one).
    Final {
        session: &'a str,
        partial: bool,
        pass: f64,
        attempts: u32,
        squashed: bool,
    },
}

impl Subject<'_> {
    /// The key of its template in `git.message`.
    pub fn key(&self) -> &'static str {
        match self {
            Subject::Tests { .. } => "tests",
            Subject::Fix { .. } => "fix",
            Subject::Rollback { .. } => "rollback",
            Subject::Final { .. } => "final",
        }
    }
}

/// The variables of each template of `git.message` (docs/git.md).
pub fn template_variables(key: &str) -> Vec<&'static str> {
    let mut v = vec!["type", "scope", "summary", "session.id", "iteration"];
    v.extend_from_slice(match key {
        "tests" => &["files"][..],
        "fix" => &["files", "strategy", "pass.before", "pass.after"],
        "rollback" => &["reason"],
        "final" => &["outcome", "pass", "attempts"],
        _ => return Vec::new(),
    });
    v
}

/// Longest header and body line commitlint's conventional config accepts.
pub const CONVENTIONAL_MAX_LINE: usize = 100;

/// How wfx writes its commit messages: the convention (configured or
/// detected) and the templates of `git.message` that override it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageStyle {
    pub convention: Convention,
    /// `(key, template)` of `git.message.{tests,fix,rollback,final}`.
    pub templates: Vec<(String, String)>,
    /// Why this convention: `commitlint.config.js`, `history (18 of 20
    /// commits)`, `git.message.convention`; empty for plain by default.
    pub source: String,
}

/// `fix(<scope>)`'s scope from the paths a fix changed: the file's stem for
/// one file (its directory for `index`, `mod`, `lib`, `main`,
/// `__init__`), else the last directory they share; `None` when they
/// share none. Lower case, at most 24 characters of `[a-z0-9._-]`.
pub fn scope_of(paths: &[String]) -> Option<String> {
    let paths: Vec<&str> = paths
        .iter()
        .map(String::as_str)
        .filter(|p| !p.starts_with(".workflow/"))
        .collect();
    let name = match paths.as_slice() {
        [] => return None,
        [one] => {
            let path = std::path::Path::new(one);
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            let generic = ["index", "mod", "lib", "main", "__init__"].contains(&stem.as_str());
            match path.parent().and_then(|p| p.file_name()) {
                Some(dir) if generic => dir.to_string_lossy().into_owned(),
                _ => stem,
            }
        }
        many => {
            let dirs: Vec<Vec<&str>> = many
                .iter()
                .map(|p| {
                    let mut parts: Vec<&str> = p.split('/').collect();
                    parts.pop();
                    parts
                })
                .collect();
            let mut common = dirs[0].clone();
            for d in &dirs[1..] {
                let n = common.iter().zip(d).take_while(|(a, b)| a == b).count();
                common.truncate(n);
            }
            common.last()?.to_string()
        }
    };
    let clean: String = name
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(24)
        .collect();
    let clean = clean
        .trim_matches(|c| matches!(c, '-' | '.' | '_'))
        .to_string();
    (!clean.is_empty()).then_some(clean)
}

impl MessageStyle {
    pub fn new(convention: Convention) -> MessageStyle {
        MessageStyle {
            convention,
            ..MessageStyle::default()
        }
    }

    fn template(&self, key: &str) -> Option<&str> {
        self.templates
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, t)| t.as_str())
    }

    /// The conventional type and scope of a subject.
    fn type_and_scope(s: &Subject) -> (&'static str, Option<String>) {
        match s {
            Subject::Tests { .. } => ("test", None),
            Subject::Fix { paths, .. } => ("fix", scope_of(paths)),
            Subject::Rollback { .. } => ("revert", None),
            Subject::Final { squashed: true, .. } => ("fix", None),
            Subject::Final { .. } => ("chore", Some("wfx".into())),
        }
    }

    /// The description after `type(scope): `, and the plain subject.
    fn texts(s: &Subject) -> (String, String) {
        match s {
            Subject::Tests { files } => (
                format!("add generated tests (IMPL-001, {files} file(s))"),
                format!("test-cycle: generated tests (IMPL-001, {files} file(s))"),
            ),
            Subject::Fix {
                iteration,
                strategy,
                before,
                after,
                ..
            } => {
                let by = match strategy {
                    Some(s) => format!("{s} strategy"),
                    None => crate::agents::config::fix_by(crate::agents::config::MANUAL),
                };
                let text =
                    format!("iteration {iteration} - {by} (pass: {before:.1}% → {after:.1}%)");
                (text.clone(), format!("test-cycle: {text}"))
            }
            Subject::Rollback { iteration, reason } => (
                format!("iteration {iteration} - {reason}"),
                format!("test-cycle: rollback iteration {iteration} - {reason}"),
            ),
            Subject::Final {
                session,
                partial,
                pass,
                attempts,
                squashed,
            } => {
                let outcome = if *partial {
                    "partial success"
                } else {
                    "completed"
                };
                let squashed_text = if *squashed { ", squashed" } else { "" };
                (
                    format!(
                        "session {outcome} (pass: {pass:.1}%, {attempts} fix attempt(s){squashed_text})"
                    ),
                    format!(
                        "test-cycle: session {session} {outcome} (pass: {pass:.1}%, {attempts} fix attempt(s){squashed_text})"
                    ),
                )
            }
        }
    }

    /// The variables a `git.message` template of this subject sees.
    pub fn variables(s: &Subject, session: &str) -> crate::agents::vars::Vars {
        let (kind, scope) = Self::type_and_scope(s);
        let (summary, _) = Self::texts(s);
        let mut v = crate::agents::vars::Vars::new();
        v.set("type", kind)
            .set("scope", scope.unwrap_or_default())
            .set("summary", &summary)
            .set("session.id", session);
        match s {
            Subject::Tests { files } => {
                v.set("iteration", "0").set("files", files.to_string());
            }
            Subject::Fix {
                iteration,
                strategy,
                before,
                after,
                paths,
            } => {
                v.set("iteration", iteration.to_string())
                    .set("files", paths.len().to_string())
                    .set(
                        "strategy",
                        strategy.clone().unwrap_or_else(|| "manual".into()),
                    )
                    .set("pass.before", format!("{before:.1}"))
                    .set("pass.after", format!("{after:.1}"));
            }
            Subject::Rollback { iteration, reason } => {
                v.set("iteration", iteration.to_string())
                    .set("reason", reason);
            }
            Subject::Final {
                partial,
                pass,
                attempts,
                ..
            } => {
                v.set("iteration", "0")
                    .set(
                        "outcome",
                        if *partial {
                            "partial success"
                        } else {
                            "completed"
                        },
                    )
                    .set("pass", format!("{pass:.1}"))
                    .set("attempts", attempts.to_string());
            }
        }
        v
    }

    /// The whole message (without trailers): the subject, then `body`
    /// after a blank line. A `git.message` template gives the subject;
    /// otherwise the convention does. Conventional messages keep every
    /// line within [`CONVENTIONAL_MAX_LINE`] characters: a longer header is
    /// cut (the whole text opens the body), longer body lines are wrapped.
    pub fn message(&self, s: &Subject, session: &str, body: &str) -> String {
        let (kind, scope) = Self::type_and_scope(s);
        let (summary, plain) = Self::texts(s);
        let conventional = self.convention == Convention::Conventional;
        let mut overflow = None;
        let subject = match self.template(s.key()) {
            Some(t) => crate::agents::vars::interpolate(
                t,
                &Self::variables(s, session),
                crate::agents::vars::Mode::Argv,
            )
            // Checked when the config loads; an unknown name stays visible.
            .unwrap_or_else(|_| t.to_string()),
            None if conventional => {
                let header = match scope {
                    Some(sc) => format!("{kind}({sc}): {summary}"),
                    None => format!("{kind}: {summary}"),
                };
                if header.chars().count() > CONVENTIONAL_MAX_LINE {
                    let cut: String = header.chars().take(CONVENTIONAL_MAX_LINE - 1).collect();
                    overflow = Some(summary.clone());
                    format!("{}…", cut.trim_end())
                } else {
                    header
                }
            }
            None => plain,
        };
        let mut paragraphs: Vec<String> = Vec::new();
        if let Subject::Final { session, .. } = s
            && conventional
        {
            paragraphs.push(format!("Session {session}."));
        }
        paragraphs.extend(overflow);
        let body = body.trim();
        if !body.is_empty() {
            paragraphs.push(body.to_string());
        }
        let mut text = subject.trim_end().to_string();
        for p in paragraphs {
            let p = if conventional {
                wrap(&p, CONVENTIONAL_MAX_LINE)
            } else {
                p
            };
            text.push_str("\n\n");
            text.push_str(&p);
        }
        text
    }
}

/// Lines longer than `width` characters broken at spaces (a word longer
/// than `width` stays whole).
fn wrap(text: &str, width: usize) -> String {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.chars().count() <= width {
            out.push(line.to_string());
            continue;
        }
        let mut cur = String::new();
        for word in line.split(' ') {
            if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
                out.push(std::mem::take(&mut cur));
                cur.push_str("  ");
            } else if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
        out.push(cur);
    }
    out.join("\n")
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
        // A speculative candidate's commit names it; it is part of the
        // checkpoint's identity.
        let chosen = t(CommitKind::Fix).with_candidate(Some(2));
        let msg = build_message("subject", &chosen).unwrap();
        assert!(msg.ends_with("Wfx-Kind: fix\nWfx-Candidate: 2\n"), "{msg}");
        assert_eq!(parse_trailers(&msg), Some(chosen));
        assert_ne!(parse_trailers(&msg), Some(t(CommitKind::Fix)));
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
    fn scopes_from_the_changed_paths() {
        let s = |p: &[&str]| scope_of(&p.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&["calc/ops.py"]).as_deref(), Some("ops"));
        assert_eq!(s(&["src/parser/mod.rs"]).as_deref(), Some("parser"));
        assert_eq!(s(&["src/a.js", "src/b.js"]).as_deref(), Some("src"));
        assert_eq!(s(&["src/a.js", "lib/b.js"]), None);
        assert_eq!(s(&["Weird Name!.py"]).as_deref(), Some("weird-name"));
        assert_eq!(s(&[".workflow/active/WFS-x/a.json"]), None);
        assert_eq!(s(&[]), None);
    }

    #[test]
    fn conventional_messages_stay_within_commitlints_limits() {
        let style = MessageStyle::new(Convention::Conventional);
        let fix = Subject::Fix {
            iteration: 2,
            strategy: Some("surgical".into()),
            before: 81.8,
            after: 100.0,
            paths: &["calc/ops.py".to_string()],
        };
        assert_eq!(
            style.message(&fix, "WFS-x", ""),
            "fix(ops): iteration 2 - surgical strategy (pass: 81.8% → 100.0%)"
        );
        let long = Subject::Rollback {
            iteration: 1,
            reason: format!("test edits rejected ({})", "skip added ".repeat(20)),
        };
        let msg = style.message(&long, "WFS-x", &format!("- {}", "word ".repeat(40)));
        for line in msg.lines() {
            assert!(line.chars().count() <= CONVENTIONAL_MAX_LINE, "{line:?}");
        }
        let (header, rest) = msg.split_once("\n\n").unwrap();
        assert!(header.starts_with("revert: iteration 1 - test edits rejected (skip added"));
        assert!(header.ends_with('…'));
        assert!(
            rest.starts_with("iteration 1 - test edits rejected"),
            "the whole text opens the body"
        );
        // Plain stays wfx's own subject, body untouched.
        assert_eq!(
            MessageStyle::default().message(&fix, "WFS-x", "body"),
            "test-cycle: iteration 2 - surgical strategy (pass: 81.8% → 100.0%)\n\nbody"
        );
    }

    #[test]
    fn kind_strings() {
        assert_eq!(CommitKind::Rollback.to_string(), "rollback");
        assert_eq!(CommitKind::parse(" FIX "), Some(CommitKind::Fix));
        assert_eq!(CommitKind::parse("fixes"), None);
    }
}
