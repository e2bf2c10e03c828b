//! Small facts about relative paths (`/`-separated): name, directory,
//! stem, the words of a path, and whether a printed path lies outside the
//! project (a standard library, an installed package, a toolchain).

pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Parent directory ("" for files at the root).
pub fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// File name without its last extension (`math.test.js` → `math.test`).
pub fn stem(path: &str) -> &str {
    let name = file_name(path);
    match name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s,
        _ => name,
    }
}

/// The directories of a path, outermost first.
pub fn dirs(path: &str) -> impl Iterator<Item = &str> {
    parent_dir(path).split('/').filter(|s| !s.is_empty())
}

/// Words of a path or identifier for keyword matching: split on anything
/// that is not alphanumeric and at lowercase→uppercase boundaries, then
/// lowercased (`src/AuthService.ts` → `src`, `auth`, `service`, `ts`).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            cur.push(c.to_ascii_lowercase());
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A path as printed by a tool that lies outside the project: standard
/// libraries, installed packages and runtimes.
pub fn is_foreign_path(path: &str) -> bool {
    const MARKERS: &[&str] = &[
        "site-packages",
        "dist-packages",
        "node_modules",
        "/lib/python",
        "lib/python3",
        "lib/python2",
        "/rustc/",
        ".cargo/registry",
        ".cargo/git",
        ".rustup/",
        "/usr/lib/",
        "/usr/local/lib/",
        "/usr/local/go/",
        "/usr/share/",
        "go/pkg/mod/",
        ".m2/repository",
        "<frozen",
        "<string>",
        "<anonymous>",
    ];
    path.starts_with("node:")
        || path.starts_with("internal/")
        || MARKERS.iter().any(|m| path.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_words() {
        assert_eq!(file_name("a/b/c.test.js"), "c.test.js");
        assert_eq!(parent_dir("a/b/c.js"), "a/b");
        assert_eq!(parent_dir("c.js"), "");
        assert_eq!(stem("a/b/c.test.js"), "c.test");
        assert_eq!(stem(".bashrc"), ".bashrc");
        assert_eq!(dirs("a/b/c.js").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(
            words("src/AuthService.ts"),
            ["src", "auth", "service", "ts"]
        );
        assert_eq!(words("parse_number2"), ["parse", "number2"]);
    }

    #[test]
    fn foreign_paths() {
        for p in [
            "lib/python3.11/importlib/__init__.py",
            "/usr/lib/python3/dist-packages/x.py",
            "node:internal/test_runner/test",
            "/home/u/.cargo/registry/src/x.rs",
            "/rustc/abc/library/core/src/panicking.rs",
            "node_modules/jest/index.js",
        ] {
            assert!(is_foreign_path(p), "{p}");
        }
        assert!(!is_foreign_path("src/lib.rs"));
    }
}
