//! Path conversions between the three forms wfx meets (pure, no repository):
//! what callers pass and get (relative to the project root, `/`-separated,
//! UTF-8), what git stores (bytes relative to the repository's work tree) and
//! what the file system wants (`Path`).

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// Check and tidy a project-relative path given by a caller: `/`-separated,
/// `.` and empty components dropped. Absolute paths, `..` and anything
/// inside `.git` are refused, so no call can reach outside the project or
/// into git's own files.
pub fn normalize_rel(input: &str) -> Result<String> {
    let bad = |why: &str| Err(Error::Git(format!("path {input:?} {why}")));
    if input.is_empty() {
        return bad("is empty");
    }
    if input.starts_with('/') || input.contains('\0') {
        return bad("is not a relative path inside the project");
    }
    let mut parts = Vec::new();
    for part in input.split('/') {
        match part {
            "" | "." => {}
            ".." => return bad("leaves the project (it contains '..')"),
            p if p.eq_ignore_ascii_case(".git") => return bad("points into .git"),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return bad("names the project root itself, not a file or directory in it");
    }
    Ok(parts.join("/"))
}

/// True when `path` is `scope` itself or lies below it. The empty scope
/// holds everything.
pub fn under(path: &[u8], scope: &[u8]) -> bool {
    scope.is_empty()
        || path == scope
        || (path.len() > scope.len() && path.starts_with(scope) && path[scope.len()] == b'/')
}

/// A project-relative path as git stores it (relative to the work tree).
/// `prefix` is the project root's place in the work tree: empty, or
/// `dir/sub/` with a trailing slash.
/// The inverse of [`from_repo`]: characters U+F780..U+F7FF stand for the
/// non-UTF-8 bytes 0x80..0xFF of a file name.
pub fn to_repo(prefix: &[u8], rel: &str) -> Vec<u8> {
    let mut out = prefix.to_vec();
    let mut buf = [0u8; 4];
    for c in rel.chars() {
        match u32::from(c) {
            n @ RAW_FIRST..=RAW_LAST => out.push((n - RAW_BASE) as u8),
            _ => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
    out
}

/// Non-UTF-8 bytes of a file name travel as these private-use characters
/// (byte `b` as U+F700 + `b`), so a name like `data/\xe9t\xe9.txt` goes
/// into an artifact and comes back to the same bytes: it can be committed
/// and deleted like any other (DESIGN.md §10.3).
const RAW_BASE: u32 = 0xF700;
const RAW_FIRST: u32 = RAW_BASE + 0x80;
const RAW_LAST: u32 = RAW_BASE + 0xFF;

/// A git path as callers see it: relative to the project root when it lies
/// inside it, else relative to the work tree. Bytes that are not UTF-8 are
/// kept as private-use characters (see [`to_repo`]).
pub fn from_repo(prefix: &[u8], path: &[u8]) -> String {
    let rel = path.strip_prefix(prefix).unwrap_or(path);
    let mut out = String::with_capacity(rel.len());
    for chunk in rel.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push(char::from_u32(RAW_BASE + u32::from(*b)).unwrap_or('\u{FFFD}'));
        }
    }
    out
}

/// Git path bytes as a file-system path (relative).
pub fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// A file-system path as git bytes (a symlink's target, for instance).
pub fn path_to_bytes(path: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

/// `root` relative to `workdir` as a git prefix (`""` or `a/b/`); `None`
/// when `root` is not inside `workdir` or lies in `.git`. Both paths must
/// already be canonical.
pub fn prefix_of(workdir: &Path, root: &Path) -> Option<Vec<u8>> {
    let rel = root.strip_prefix(workdir).ok()?;
    let mut out = Vec::new();
    for component in rel.components() {
        let Component::Normal(name) = component else {
            return None;
        };
        if name.eq_ignore_ascii_case(".git") {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            out.extend_from_slice(name.as_bytes());
        }
        #[cfg(not(unix))]
        out.extend_from_slice(name.to_string_lossy().as_bytes());
        out.push(b'/');
    }
    Some(out)
}

/// Whether a symlink at `link` (project-relative) pointing at `target`
/// stays inside the project: a relative target that does not climb above
/// the project root.
pub fn stays_inside(link: &str, target: &Path) -> bool {
    if target.is_absolute() {
        return false;
    }
    let mut depth: i64 = link.split('/').count() as i64 - 1;
    for part in target.components() {
        match part {
            std::path::Component::ParentDir => depth -= 1,
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            _ => return false,
        }
        if depth < 0 {
            return false;
        }
    }
    true
}

/// Joins display paths for error messages: `a.txt, "b c.txt"` (quoted only
/// when a name has spaces, so lists stay readable).
pub fn show_list(paths: &[String]) -> String {
    paths
        .iter()
        .map(|p| {
            if p.contains(char::is_whitespace) {
                format!("{p:?}")
            } else {
                p.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn links_that_stay_inside_the_project() {
        use std::path::Path;
        for (link, target, inside) in [
            ("docs/README.md", "../README.md", true),
            ("a", "b/c", true),
            ("docs/x", "../../etc/passwd", false),
            ("x", "../outside", false),
            ("x", "/etc/passwd", false),
            ("d/e/f", "../../g", true),
            ("d/e/f", "../../../g", false),
        ] {
            assert_eq!(
                super::stays_inside(link, Path::new(target)),
                inside,
                "{link} -> {target}"
            );
        }
    }

    use super::*;

    #[test]
    fn normalize_accepts_and_tidies() {
        assert_eq!(normalize_rel("a/b.txt").unwrap(), "a/b.txt");
        assert_eq!(normalize_rel("./a//b/").unwrap(), "a/b");
        assert_eq!(
            normalize_rel("dir with space/naïve.txt").unwrap(),
            "dir with space/naïve.txt"
        );
        assert_eq!(
            normalize_rel(".workflow/active/WFS-x").unwrap(),
            ".workflow/active/WFS-x"
        );
        assert_eq!(normalize_rel(".gitignore").unwrap(), ".gitignore");
    }

    #[test]
    fn normalize_refuses_escapes() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            ".git/config",
            "a/.GIT/x",
            ".",
            "./",
            "a\0b",
        ] {
            let err = normalize_rel(bad);
            assert!(err.is_err(), "{bad:?} was accepted: {err:?}");
        }
        let msg = normalize_rel("../x").unwrap_err().to_string();
        assert!(msg.contains("\"../x\""), "{msg}");
    }

    #[test]
    fn under_matches_whole_components() {
        assert!(under(b"a/b", b""));
        assert!(under(b"a/b", b"a"));
        assert!(under(b"a", b"a"));
        assert!(!under(b"ab/c", b"a"));
        assert!(!under(b"a", b"a/b"));
        assert!(under(b".workflow/active/x", b".workflow"));
    }

    #[test]
    fn repo_paths_round_trip_with_prefix() {
        assert_eq!(to_repo(b"", "a.txt"), b"a.txt");
        assert_eq!(to_repo(b"sub/", "a.txt"), b"sub/a.txt");
        assert_eq!(from_repo(b"sub/", b"sub/a.txt"), "a.txt");
        assert_eq!(from_repo(b"sub/", b"other/a.txt"), "other/a.txt");
        assert_eq!(from_repo(b"", b"caf\xc3\xa9"), "café");
        assert_eq!(from_repo(b"", b"bad\xff"), "bad\u{f7ff}");
    }

    #[test]
    fn non_utf8_names_round_trip() {
        let cases: &[&[u8]] = &[
            b"data/\xe9t\xe9.txt",
            b"plain.txt",
            "caf\u{e9}.txt".as_bytes(),
            b"\xff\xfe",
            b"a/\xc3",
        ];
        for bytes in cases {
            let shown = from_repo(b"", bytes);
            assert_eq!(to_repo(b"", &shown), bytes.to_vec(), "{shown:?}");
            assert_eq!(from_repo(b"sub/", &to_repo(b"sub/", &shown)), shown);
        }
        assert_eq!(from_repo(b"", b"data/\xe9.txt"), "data/\u{f7e9}.txt");
        assert_eq!(from_repo(b"", "café".as_bytes()), "café");
    }

    #[test]
    fn prefix_of_root() {
        let w = Path::new("/w");
        assert_eq!(prefix_of(w, Path::new("/w")), Some(Vec::new()));
        assert_eq!(prefix_of(w, Path::new("/w/a/b")), Some(b"a/b/".to_vec()));
        assert_eq!(prefix_of(w, Path::new("/other")), None);
        assert_eq!(prefix_of(w, Path::new("/w/.git/x")), None);
    }

    #[test]
    fn show_list_quotes_spaces() {
        assert_eq!(
            show_list(&["a.txt".into(), "b c.txt".into()]),
            "a.txt, \"b c.txt\""
        );
    }
}
