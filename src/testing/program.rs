//! The program a test command needs on `PATH`, told from the command line
//! without running a shell. One check for planning, the cycle, `wfx test`
//! and `wfx run`, so no one of them refuses a command another runs.

use std::path::Path;

/// Words the shell runs itself: a simple command starting with one of them
/// needs no program, and the next simple command is looked at
/// (`trap '' TERM; pytest`, `ulimit -n 1024; …`, `cd sub && make`).
const BUILTINS: &[&str] = &[
    ":", "alias", "bg", "break", "cd", "continue", "echo", "exit", "export", "false", "fg",
    "getopts", "hash", "jobs", "kill", "local", "printf", "pwd", "read", "readonly", "return",
    "set", "shift", "test", "[", "times", "trap", "true", "type", "ulimit", "umask", "unalias",
    "unset", "wait", "declare", "typeset", "shopt", "pushd", "popd", "dirs", "disown", "let",
];

/// Builtins that run what follows them: the program is the next word.
const PREFIXES: &[&str] = &["exec", "command", "builtin", "time", "nohup", "env"];

/// Words after which only the shell can tell what runs: compound commands,
/// and builtins that may change `PATH` or run anything (`. venv/bin/activate`).
const OPAQUE: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "select", "function", "{", "}", "!", "[[", "]]", ".", "source", "eval",
];

/// One word of a command line: its text with quotes removed, and whether
/// any of it is left to the shell (`$…`, a backquote, a glob, a tilde).
#[derive(Debug, PartialEq)]
struct Word {
    text: String,
    expands: bool,
    /// Whether the part before the first `=` was unquoted (an assignment
    /// needs an unquoted name).
    plain_name: bool,
}

/// A token: a word, a redirection (`>`, `2>&1`, `<`: the word after it is
/// its target), or the end of a simple command (`;`, `&`, `|`, `&&`, `||`,
/// a newline). `None` for syntax this reader does not follow (subshells,
/// here-documents, unterminated quotes).
#[derive(Debug, PartialEq)]
enum Token {
    Word(Word),
    Redirect,
    End,
}

fn tokens(line: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    let mut word: Option<Word> = None;
    let finish = |word: &mut Option<Word>, out: &mut Vec<Token>| {
        if let Some(w) = word.take() {
            out.push(Token::Word(w));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(&mut word, &mut out),
            ';' | '&' | '|' | '\n' => {
                finish(&mut word, &mut out);
                if matches!(c, '&' | '|') && chars.peek() == Some(&c) {
                    chars.next();
                }
                out.push(Token::End);
            }
            '<' | '>' => {
                // `2>`: the digits before are the descriptor, not a word.
                if word.as_ref().is_some_and(|w| {
                    !w.text.is_empty() && w.text.bytes().all(|b| b.is_ascii_digit())
                }) {
                    word = None;
                }
                finish(&mut word, &mut out);
                if c == '<' && chars.peek() == Some(&'<') {
                    return None; // a here-document
                }
                while chars.next_if(|n| matches!(n, '>' | '&' | '|')).is_some() {}
                out.push(Token::Redirect);
            }
            '(' | ')' if word.is_none() => return None,
            '#' if word.is_none() => break,
            _ => {
                let w = word.get_or_insert_with(|| Word {
                    text: String::new(),
                    expands: false,
                    plain_name: true,
                });
                let before_eq = !w.text.contains('=');
                match c {
                    '\'' => {
                        w.plain_name &= !before_eq;
                        loop {
                            match chars.next()? {
                                '\'' => break,
                                q => w.text.push(q),
                            }
                        }
                    }
                    '"' => {
                        w.plain_name &= !before_eq;
                        loop {
                            match chars.next()? {
                                '"' => break,
                                '\\' => w.text.push(chars.next()?),
                                '$' | '`' => w.expands = true,
                                q => w.text.push(q),
                            }
                        }
                    }
                    '\\' => {
                        w.plain_name &= !before_eq;
                        w.text.push(chars.next()?);
                    }
                    '$' | '`' | '*' | '?' | '[' | '~' | '(' | ')' => {
                        w.expands = true;
                        w.text.push(c);
                    }
                    _ => w.text.push(c),
                }
            }
        }
    }
    finish(&mut word, &mut out);
    Some(out)
}

/// `NAME=value` with an unquoted, valid name.
fn is_assignment(w: &Word) -> bool {
    let Some((name, _)) = w.text.split_once('=') else {
        return false;
    };
    w.plain_name
        && !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The program a shell command line starts, when it can be told without
/// running a shell: in the first simple command that runs a program,
/// the first word after `VAR=value` assignments. Simple commands that run
/// a shell builtin (`trap`, `ulimit`, `umask`, `cd`, `export`, …) are
/// passed over. `None` for paths (`./run-tests`), expansions (`$RUNNER`),
/// compound commands, and anything that may change `PATH` first
/// (`PATH=…`, `. venv/bin/activate`, `eval`): only the shell can judge
/// those.
pub fn program_of(command: &str) -> Option<String> {
    let tokens = tokens(command)?;
    let mut simple = tokens.split(|t| *t == Token::End);
    simple.find_map(|words| {
        // Redirections and their targets may stand anywhere: left out.
        let mut skip_next = false;
        let mut words = words.iter().filter_map(|t| match t {
            Token::Redirect => {
                skip_next = true;
                None
            }
            Token::Word(w) if !std::mem::take(&mut skip_next) => Some(w),
            _ => None,
        });
        loop {
            let Some(w) = words.next() else {
                // Assignments only: the next simple command.
                return None;
            };
            if is_assignment(w) {
                if w.text.starts_with("PATH=") {
                    return Some(None);
                }
                continue;
            }
            if w.expands || w.text.contains('/') || OPAQUE.contains(&w.text.as_str()) {
                return Some(None);
            }
            if PREFIXES.contains(&w.text.as_str()) {
                continue;
            }
            if w.text.starts_with('-') {
                // An option of a prefix (`command -v`, `env -i`).
                return Some(None);
            }
            if BUILTINS.contains(&w.text.as_str()) {
                let changes_path = words.any(|a| a.text == "PATH" || a.text.starts_with("PATH="));
                return changes_path.then_some(None);
            }
            let plain = w
                .text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
            return Some(plain.then(|| w.text.clone()));
        }
    })?
}

/// Whether an executable of that name is on `PATH`.
pub fn on_path(program: &str) -> bool {
    !program.contains('/')
        && crate::process::which(program, std::env::var_os("PATH").as_deref(), Path::new("/"))
            .is_some()
}

/// A test command whose program is not on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the test command `{command}` needs `{program}`, which is not on PATH")]
pub struct NotOnPath {
    pub command: String,
    pub program: String,
}

/// The one check every command that runs tests makes before it runs
/// them: the program the command starts is on `PATH` (when it can be
/// told, see [`program_of`]).
pub fn check_on_path(command: &str) -> Result<(), NotOnPath> {
    match program_of(command) {
        Some(program) if !on_path(&program) => Err(NotOnPath {
            command: command.to_string(),
            program,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_program_of_a_command_line() {
        for (command, want) in [
            ("python -m pytest", Some("python")),
            ("CI=1 npm test", Some("npm")),
            ("FOO=1 cmd", Some("cmd")),
            ("cargo nextest run", Some("cargo")),
            ("./scripts/test.sh", None),
            ("cd sub && make check", Some("make")),
            ("cd 'my dir' && make check", Some("make")),
            ("sh -c 'go test ./...'", Some("sh")),
            ("$HOME/bin/t", None),
            ("", None),
            // Builtins before the program are passed over.
            ("trap '' TERM; python -m pytest", Some("python")),
            ("trap 'kill 0' TERM INT\npytest -q", Some("pytest")),
            ("ulimit -n 1024; pytest", Some("pytest")),
            ("umask 022; npm test", Some("npm")),
            ("set -e; export CI=1; cargo test", Some("cargo")),
            ("true && go test ./...", Some("go")),
            ("exec pytest", Some("pytest")),
            ("env FOO=1 BAR=2 pytest -x", Some("pytest")),
            ("time -p pytest", None),
            // Only the shell can say.
            ("FOO=\"$(date)\" pytest", Some("pytest")),
            ("$RUNNER tests", None),
            ("\"$RUNNER\" tests", None),
            ("PATH=node_modules/.bin:$PATH jest", None),
            ("export PATH=\"$PWD/bin:$PATH\"; t", None),
            (". venv/bin/activate && pytest", None),
            ("source venv/bin/activate && pytest", None),
            ("eval \"$CMD\"", None),
            ("if true; then pytest; fi", None),
            ("(cd sub && make)", None),
            ("{ pytest; }", None),
            ("'unterminated", None),
            ("ulimit -n 1024", None),
            ("'py'test -q", Some("pytest")),
            // A quoted name is no assignment: `A=1` would be the program.
            ("'A'=1 pytest", None),
            // Redirections anywhere, comments at the end.
            ("pytest -q 2>&1 | tee log", Some("pytest")),
            ("2>/dev/null pytest", Some("pytest")),
            ("ulimit -c 0 >/dev/null; pytest # no cores", Some("pytest")),
            ("cat <<EOF | sh", None),
        ] {
            assert_eq!(super::program_of(command).as_deref(), want, "{command}");
        }
    }

    #[test]
    fn a_missing_program_is_named() {
        let err = super::check_on_path("trap '' TERM; wfx-no-such-tool -q").unwrap_err();
        assert_eq!(err.program, "wfx-no-such-tool");
        assert_eq!(
            err.to_string(),
            "the test command `trap '' TERM; wfx-no-such-tool -q` needs `wfx-no-such-tool`, which is not on PATH"
        );
        assert!(super::check_on_path("trap '' TERM; sh -c true").is_ok());
        assert!(super::check_on_path("./run-tests").is_ok());
    }
}
