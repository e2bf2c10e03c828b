//! Source languages by file extension: one table ([`LANGS`]), one enum.
//! Every part of wfx that asks "what language is this file" asks here, so
//! the context gatherer, the scans, the built-in analyzer and the fix guard
//! agree on `.kt`, `.pyi` or `.tsx`.

/// A source language wfx recognises by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    Rust,
    Python,
    /// JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`).
    Js,
    /// TypeScript (`.ts`, `.mts`, `.cts`, `.tsx`, and `.d.ts` declarations).
    Ts,
    Go,
    Java,
    Kotlin,
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Swift,
    Scala,
    Shell,
    Vue,
    Svelte,
    Html,
    Css,
    Scss,
    Less,
}

/// Each language: its display name, its family (languages that import each
/// other's definitions share one: TypeScript's is JavaScript) and its
/// extensions, lower case. The model is ripgrep's `default_types.rs`: the
/// data in one table, the code only reads it.
pub const LANGS: &[(Lang, &str, Lang, &[&str])] = &[
    (Lang::Rust, "Rust", Lang::Rust, &["rs"]),
    (Lang::Python, "Python", Lang::Python, &["py", "pyi"]),
    (
        Lang::Js,
        "JavaScript",
        Lang::Js,
        &["js", "mjs", "cjs", "jsx"],
    ),
    (
        Lang::Ts,
        "TypeScript",
        Lang::Js,
        &["ts", "mts", "cts", "tsx"],
    ),
    (Lang::Go, "Go", Lang::Go, &["go"]),
    (Lang::Java, "Java", Lang::Java, &["java"]),
    (Lang::Kotlin, "Kotlin", Lang::Kotlin, &["kt", "kts"]),
    (Lang::C, "C", Lang::C, &["c", "h"]),
    (
        Lang::Cpp,
        "C++",
        Lang::Cpp,
        &["cc", "cpp", "cxx", "hpp", "hh", "hxx"],
    ),
    (Lang::CSharp, "C#", Lang::CSharp, &["cs"]),
    (Lang::Ruby, "Ruby", Lang::Ruby, &["rb"]),
    (Lang::Php, "PHP", Lang::Php, &["php"]),
    (Lang::Swift, "Swift", Lang::Swift, &["swift"]),
    (Lang::Scala, "Scala", Lang::Scala, &["scala"]),
    (Lang::Shell, "Shell", Lang::Shell, &["sh", "bash", "zsh"]),
    (Lang::Vue, "Vue", Lang::Vue, &["vue"]),
    (Lang::Svelte, "Svelte", Lang::Svelte, &["svelte"]),
    (Lang::Html, "HTML", Lang::Html, &["html", "htm"]),
    (Lang::Css, "CSS", Lang::Css, &["css"]),
    (Lang::Scss, "SCSS", Lang::Scss, &["scss", "sass"]),
    (Lang::Less, "Less", Lang::Less, &["less"]),
];

impl Lang {
    /// The language of a path by its extension (case-insensitive).
    pub fn of(path: &str) -> Option<Lang> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let (stem, ext) = name.rsplit_once('.')?;
        if stem.is_empty() {
            return None;
        }
        let ext = ext.to_ascii_lowercase();
        LANGS
            .iter()
            .find(|(_, _, _, exts)| exts.contains(&ext.as_str()))
            .map(|(lang, ..)| *lang)
    }

    fn row(self) -> &'static (Lang, &'static str, Lang, &'static [&'static str]) {
        LANGS
            .iter()
            .find(|(l, ..)| *l == self)
            .expect("every language has a row in LANGS")
    }

    /// The mapped family a path's code is read as (JavaScript for `.ts`);
    /// `None` for a language wfx does not map ([`Lang::is_mapped`]).
    pub fn family_of(path: &str) -> Option<Lang> {
        Lang::of(path).filter(|l| l.is_mapped()).map(Lang::family)
    }

    /// Display name (`TypeScript`, `C++`).
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// The family it shares definitions with: JavaScript for TypeScript,
    /// itself otherwise.
    pub fn family(self) -> Lang {
        self.row().2
    }

    /// JavaScript or TypeScript.
    pub fn is_js(self) -> bool {
        self.family() == Lang::Js
    }

    /// The families whose tests wfx maps to the code they exercise, whose
    /// definitions the built-in analyzer reads.
    pub fn is_mapped(self) -> bool {
        matches!(
            self.family(),
            Lang::Rust | Lang::Python | Lang::Js | Lang::Go | Lang::Java
        )
    }

    /// Blocks delimited by braces (everything mapped but Python).
    pub fn braces(self) -> bool {
        self != Lang::Python
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_extension() {
        for (path, want) in [
            ("src/lib.rs", Some(Lang::Rust)),
            ("calc/ops.py", Some(Lang::Python)),
            ("typings/ops.pyi", Some(Lang::Python)),
            ("src/a.js", Some(Lang::Js)),
            ("src/a.MJS", Some(Lang::Js)),
            ("src/a.jsx", Some(Lang::Js)),
            ("src/a.ts", Some(Lang::Ts)),
            ("src/a.tsx", Some(Lang::Ts)),
            ("src/types.d.ts", Some(Lang::Ts)),
            ("app/src/main/kotlin/A.kt", Some(Lang::Kotlin)),
            ("build.gradle.kts", Some(Lang::Kotlin)),
            ("src/Main.java", Some(Lang::Java)),
            ("main.go", Some(Lang::Go)),
            ("x.hpp", Some(Lang::Cpp)),
            ("README.md", None),
            ("Makefile", None),
            (".bashrc", None),
            ("dir.rs/file", None),
        ] {
            assert_eq!(Lang::of(path), want, "{path}");
        }
    }

    #[test]
    fn families_and_names() {
        assert_eq!(Lang::Ts.family(), Lang::Js);
        assert!(Lang::Ts.is_js() && Lang::Js.is_js() && !Lang::Java.is_js());
        assert_eq!(Lang::Kotlin.family(), Lang::Kotlin);
        assert!(!Lang::Kotlin.is_mapped() && Lang::Ts.is_mapped());
        assert_eq!(Lang::Cpp.name(), "C++");
        assert_eq!(Lang::family_of("src/a.tsx"), Some(Lang::Js));
        assert_eq!(Lang::family_of("src/A.kt"), None);
        assert_eq!(Lang::family_of("README.md"), None);
        // Every extension belongs to exactly one language.
        let mut seen = std::collections::BTreeSet::new();
        for (_, _, _, exts) in LANGS {
            for e in *exts {
                assert!(seen.insert(*e), "{e} twice");
            }
        }
    }
}
