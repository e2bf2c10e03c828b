//! Source → test mapping for Rust, Python, JavaScript/TypeScript, Go and
//! Java, by naming conventions and by what test files import; and the
//! project's own test conventions, learnt from its existing tests, to
//! suggest where a missing test should go.
//!
//! Reading is split from deciding: [`extract`] turns one file's text into
//! [`Facts`] (run in parallel by the caller); [`link_tests`] and
//! [`Conventions`] are pure functions over paths and facts.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use super::files::{FileClass, Kind, file_name, layer_of_test, parent_dir, stem};
use crate::project::{Lang, re};

/// What reading one file taught us.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Rust: the file has `#[cfg(test)]` / `#[test]` items of its own.
    pub inline_tests: bool,
    /// Raw import targets in the family's own spelling: Rust paths after
    /// the crate name (`stats::max`, `` for the crate root), Python modules
    /// (`calc.ops`, `.sibling`), JS specifiers (`../src/math.js`), Go
    /// import paths, Java qualified names.
    pub imports: Vec<String>,
}

/// Rust: inline test items. Works on raw bytes so a whole source file is
/// scanned without copying it into a `String`.
pub fn has_inline_rust_tests(bytes: &[u8]) -> bool {
    static R: OnceLock<regex::bytes::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::bytes::Regex::new(
            r"#\[\s*cfg\s*\(\s*test\s*\)\s*\]|#\[\s*(?:[a-z_]+::)?test\s*[\](]",
        )
        .expect("valid regex")
    })
    .is_match(bytes)
}

/// Imports of one file of `family`. `crate_ident` is the Rust crate name
/// (with `_` for `-`) of the package the file belongs to.
pub fn extract(family: Lang, text: &str, crate_ident: Option<&str>) -> Vec<String> {
    let mut out = match family {
        Lang::Rust => crate_ident.map_or_else(Vec::new, |c| rust_imports(text, c)),
        Lang::Python => python_imports(text),
        Lang::Js => js_imports(text),
        Lang::Go => go_imports(text),
        Lang::Java => java_imports(text),
        // Not a mapped family (`Lang::is_mapped`).
        _ => Vec::new(),
    };
    out.sort();
    out.dedup();
    out
}

fn rust_imports(text: &str, crate_ident: &str) -> Vec<String> {
    // Plain substring search: a regex per crate name would be compiled for
    // every test file, which dominates on trees with thousands of crates.
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (at, _) in text.match_indices(crate_ident) {
        if at > 0 && is_ident(bytes[at - 1]) {
            continue;
        }
        let after = &text[at + crate_ident.len()..];
        let trimmed = after.trim_start();
        if let Some(rest) = trimmed.strip_prefix("::") {
            let rest = rest.trim_start();
            // Bytes: the parser only looks at ASCII, so a cut inside a
            // multi-byte character is harmless.
            let mut p = UseParser {
                s: &rest.as_bytes()[..rest.len().min(2000)],
                i: 0,
            };
            p.tree("", &mut out);
        } else if trimmed.starts_with(';')
            && after.as_bytes().first().is_none_or(|&c| !is_ident(c))
            && text[..at].trim_end().ends_with("use")
        {
            // `use my_crate;`: the crate root itself.
            out.push(String::new());
        }
    }
    out
}

/// A tiny parser of Rust use-trees (`a::{b, c::{d, e}}, f`), expanding
/// them to flat `::`-joined paths.
struct UseParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl UseParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn eat(&mut self, tok: &[u8]) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(tok) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }

    fn tree(&mut self, prefix: &str, out: &mut Vec<String>) {
        if out.len() > 200 {
            return;
        }
        self.ws();
        if self.eat(b"{") {
            loop {
                self.ws();
                if self.i >= self.s.len() || self.eat(b"}") {
                    return;
                }
                let before = self.i;
                self.tree(prefix, out);
                if !self.eat(b",") {
                    self.eat(b"}");
                    return;
                }
                if self.i == before {
                    return;
                }
            }
        }
        if self.eat(b"*") {
            out.push(prefix.to_string());
            return;
        }
        let Some(id) = self.ident() else {
            return;
        };
        if id == "self" {
            out.push(prefix.to_string());
            return;
        }
        let path = if prefix.is_empty() {
            id
        } else {
            format!("{prefix}::{id}")
        };
        let save = self.i;
        if self.eat(b"::") {
            self.tree(&path, out);
        } else {
            self.i = save;
            out.push(path);
        }
    }
}

fn python_imports(text: &str) -> Vec<String> {
    let from =
        re!(r"(?m)^[ \t]*from[ \t]+(\.*[A-Za-z_0-9.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)");
    let import = re!(r"(?m)^[ \t]*import[ \t]+([A-Za-z_0-9., \t]+)");
    let mut out = Vec::new();
    for c in from.captures_iter(text) {
        let module = c[1].to_string();
        out.push(module.clone());
        for name in c[2].trim_matches(|ch| ch == '(' || ch == ')').split(',') {
            let name = name.split_whitespace().next().unwrap_or("");
            if name.is_empty()
                || name == "*"
                || !name.chars().all(|ch| ch.is_alphanumeric() || ch == '_')
            {
                continue;
            }
            if module.ends_with('.') {
                out.push(format!("{module}{name}"));
            } else {
                out.push(format!("{module}.{name}"));
            }
        }
    }
    for c in import.captures_iter(text) {
        for part in c[1].split(',') {
            if let Some(m) = part.split_whitespace().next() {
                out.push(m.to_string());
            }
        }
    }
    out
}

fn js_imports(text: &str) -> Vec<String> {
    let call = re!(
        r#"\b(?:require|import|jest\.mock|vi\.mock|jest\.requireActual)\s*\(\s*['"]([^'"\n]+)['"]"#
    );
    let from = re!(r#"\bfrom\s*['"]([^'"\n]+)['"]"#);
    let bare = re!(r#"(?m)^\s*import\s*['"]([^'"\n]+)['"]"#);
    call.captures_iter(text)
        .chain(from.captures_iter(text))
        .chain(bare.captures_iter(text))
        .map(|c| c[1].to_string())
        .collect()
}

fn go_imports(text: &str) -> Vec<String> {
    let single = re!(r#"(?m)^\s*import\s+(?:[A-Za-z_.]+\s+)?"([^"]+)""#);
    let block = re!(r"(?s)\bimport\s*\(([^)]*)\)");
    let quoted = re!(r#""([^"\n]+)""#);
    let mut out: Vec<String> = single
        .captures_iter(text)
        .map(|c| c[1].to_string())
        .collect();
    for b in block.captures_iter(text) {
        out.extend(quoted.captures_iter(&b[1]).map(|c| c[1].to_string()));
    }
    out
}

fn java_imports(text: &str) -> Vec<String> {
    re!(r"(?m)^\s*import\s+(?:static\s+)?([A-Za-z_][\w.]*(?:\.\*)?)\s*;")
        .captures_iter(text)
        .map(|c| c[1].to_string())
        .collect()
}

pub use crate::project::{go_module_path, rust_crate_name};

/// Nearest ancestor directory of `path` that is a key of `roots`.
pub fn nearest_root<'a, V>(roots: &'a BTreeMap<String, V>, path: &str) -> Option<(&'a str, &'a V)> {
    let mut dir = parent_dir(path);
    loop {
        if let Some((k, v)) = roots.get_key_value(dir) {
            return Some((k.as_str(), v));
        }
        if dir.is_empty() {
            return None;
        }
        dir = parent_dir(dir);
    }
}

fn join(dir: &str, rel: &str) -> String {
    if rel.is_empty() {
        dir.to_string()
    } else if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

/// Normalise `a/./b/../c` → `a/c`; `None` when it climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// One test file and the source files it exercises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestLink {
    pub test_file: String,
    pub implementation_files: BTreeSet<String>,
    /// `unit`, `integration` or `e2e`.
    pub layer: &'static str,
    /// A source file with its own inline tests (Rust `#[cfg(test)]`).
    pub inline: bool,
    pub family: Lang,
    /// How the files were found: `naming`, `imports`, `inline`.
    pub matched_by: BTreeSet<&'static str>,
}

/// Everything the linker needs about the project.
pub struct Project<'a> {
    pub files: &'a [String],
    pub classes: &'a [FileClass],
    /// Per file index: what reading it found (absent: not read).
    pub facts: &'a HashMap<usize, Facts>,
    /// Rust package dir → crate ident.
    pub crates: &'a BTreeMap<String, String>,
    /// go.mod dir → module path.
    pub go_modules: &'a BTreeMap<String, String>,
    /// Python import roots besides the project root (`src`, package dirs).
    pub python_roots: &'a [String],
}

struct Lookup<'a> {
    p: &'a Project<'a>,
    by_path: HashMap<&'a str, usize>,
    /// (family, normalised stem) → source files.
    by_stem: HashMap<(Lang, String), Vec<usize>>,
    /// Java key (`calc/Calc.java`) → source files.
    java_keys: HashMap<String, Vec<usize>>,
    /// Directory → source files in it.
    by_dir: HashMap<&'a str, Vec<usize>>,
}

/// Java's package-relative key of a file: the part after `src/main/java/`,
/// `src/test/java/`, `/java/` or `src/`.
pub fn java_key(path: &str) -> &str {
    for marker in ["src/main/java/", "src/test/java/", "/java/", "src/"] {
        if let Some(i) = path.rfind(marker) {
            return &path[i + marker.len()..];
        }
    }
    path
}

/// The stem a source file is known by: the file stem, or the directory
/// name for package entry files (`__init__.py`, `index.js`, `mod.rs`).
pub fn source_stem(path: &str) -> String {
    let st = stem(path);
    if matches!(st, "__init__" | "index" | "mod") {
        let d = parent_dir(path);
        return file_name(d).to_string();
    }
    st.to_string()
}

/// The stem of the file a test file is named after (`test_ops.py` →
/// `ops`, `math.test.js` → `math`, `CalcTest.java` → `Calc`).
pub fn tested_stem(path: &str, family: Lang) -> Option<String> {
    let st = stem(path);
    let s = match family {
        Lang::Python => st
            .strip_prefix("test_")
            .or_else(|| st.strip_suffix("_test"))
            .unwrap_or(st),
        Lang::Js => {
            let mut s = st;
            for suffix in [".test", ".spec", ".e2e", ".integration", ".unit"] {
                if let Some(x) = s.strip_suffix(suffix) {
                    s = x;
                    break;
                }
            }
            if s == "index" {
                return Some(file_name(parent_dir(path)).to_string());
            }
            s
        }
        Lang::Go => st.strip_suffix("_test").unwrap_or(st),
        Lang::Java => st
            .strip_suffix("Tests")
            .or_else(|| st.strip_suffix("Test"))
            .or_else(|| st.strip_suffix("IT"))
            .or_else(|| st.strip_prefix("Test"))
            .unwrap_or(st),
        Lang::Rust => st
            .strip_suffix("_test")
            .or_else(|| st.strip_suffix("_tests"))
            .or_else(|| st.strip_prefix("test_"))
            .unwrap_or(st),
        _ => st,
    };
    (!s.is_empty() && s != "conftest" && s != "__init__").then(|| s.to_string())
}

impl<'a> Lookup<'a> {
    fn new(p: &'a Project<'a>) -> Self {
        let mut by_path = HashMap::with_capacity(p.files.len());
        let mut by_stem: HashMap<(Lang, String), Vec<usize>> = HashMap::new();
        let mut java_keys: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_dir: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, f) in p.files.iter().enumerate() {
            by_path.insert(f.as_str(), i);
            let c = &p.classes[i];
            if c.kind != Kind::Source {
                continue;
            }
            let Some(fam) = c.family else { continue };
            by_stem.entry((fam, source_stem(f))).or_default().push(i);
            by_dir.entry(parent_dir(f)).or_default().push(i);
            if fam == Lang::Java {
                java_keys
                    .entry(java_key(f).to_string())
                    .or_default()
                    .push(i);
            }
        }
        Lookup {
            p,
            by_path,
            by_stem,
            java_keys,
            by_dir,
        }
    }

    fn source(&self, path: &str) -> Option<usize> {
        let &i = self.by_path.get(path)?;
        (self.p.classes[i].kind == Kind::Source).then_some(i)
    }

    fn exists(&self, path: &str) -> bool {
        self.by_path.contains_key(path)
    }

    /// Sources with the stem a test file names, narrowed to those sharing
    /// the most directory names with the test (ignoring test directories);
    /// only a unique best counts, so a common stem like `utils` never
    /// links a test to an unrelated file.
    fn by_naming(&self, test: &str, family: Lang) -> Vec<usize> {
        let Some(st) = tested_stem(test, family) else {
            return Vec::new();
        };
        let Some(cands) = self.by_stem.get(&(family, st)) else {
            return Vec::new();
        };
        if family == Lang::Go {
            let d = parent_dir(test);
            return cands
                .iter()
                .copied()
                .filter(|&i| parent_dir(&self.p.files[i]) == d)
                .collect();
        }
        if family == Lang::Java {
            // Same package first: `calc/CalcTest.java` tests `calc/Calc.java`.
            let package = parent_dir(java_key(test));
            let exact: Vec<usize> = cands
                .iter()
                .copied()
                .filter(|&i| parent_dir(java_key(&self.p.files[i])) == package)
                .collect();
            if !exact.is_empty() {
                return exact;
            }
        }
        if cands.len() == 1 {
            return cands.clone();
        }
        let test_dirs: BTreeSet<&str> = parent_dir(test).split('/').collect();
        let score = |i: usize| {
            parent_dir(&self.p.files[i])
                .split('/')
                .filter(|d| !d.is_empty() && test_dirs.contains(d))
                .count()
        };
        let best = cands.iter().map(|&i| score(i)).max().unwrap_or(0);
        let top: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&i| score(i) == best)
            .collect();
        if top.len() == 1 { top } else { Vec::new() }
    }

    fn rust_resolve(&self, pkg_dir: &str, path: &str) -> Option<usize> {
        let src = join(pkg_dir, "src");
        let root = self
            .source(&join(&src, "lib.rs"))
            .or_else(|| self.source(&join(&src, "main.rs")));
        let mut current = root;
        let mut module_dir = src;
        if !path.is_empty() {
            for seg in path.split("::") {
                if matches!(seg, "crate" | "self" | "super") {
                    continue;
                }
                let file = join(&module_dir, &format!("{seg}.rs"));
                let modrs = join(&module_dir, &format!("{seg}/mod.rs"));
                if let Some(i) = self.source(&file).or_else(|| self.source(&modrs)) {
                    current = Some(i);
                    module_dir = join(&module_dir, seg);
                } else {
                    break;
                }
            }
        }
        current
    }

    fn python_resolve(&self, test: &str, module: &str) -> Vec<usize> {
        let dots = module.chars().take_while(|&c| c == '.').count();
        let rest = &module[dots..];
        let bases: Vec<String> = if dots > 0 {
            let mut d = parent_dir(test).to_string();
            for _ in 1..dots {
                d = parent_dir(&d).to_string();
            }
            vec![d]
        } else {
            std::iter::once(String::new())
                .chain(self.p.python_roots.iter().cloned())
                .collect()
        };
        let segs: Vec<&str> = rest.split('.').filter(|s| !s.is_empty()).collect();
        for base in &bases {
            // Longest prefix of the dotted name that is a module or package.
            for n in (1..=segs.len()).rev() {
                let rel = segs[..n].join("/");
                let file = join(base, &format!("{rel}.py"));
                let init = join(base, &format!("{rel}/__init__.py"));
                let hit = if self.exists(&file) {
                    Some(file)
                } else if self.exists(&init) {
                    Some(init)
                } else {
                    None
                };
                if let Some(hit) = hit {
                    let mut out: Vec<usize> = self.source(&hit).into_iter().collect();
                    // Importing a.b runs a/__init__.py too.
                    for k in 1..n {
                        let pkg_init = join(base, &format!("{}/__init__.py", segs[..k].join("/")));
                        out.extend(self.source(&pkg_init));
                    }
                    return out;
                }
            }
        }
        Vec::new()
    }

    fn js_resolve(&self, test: &str, spec: &str) -> Option<usize> {
        let raw = if let Some(r) = spec.strip_prefix("@/").or_else(|| spec.strip_prefix("~/")) {
            format!("src/{r}")
        } else if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
            join(parent_dir(test), spec)
        } else {
            return None;
        };
        let base = normalize(&raw)?;
        const EXTS: [&str; 8] = [".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts"];
        let mut cands = vec![base.clone()];
        for (js, ts) in [
            (".js", ".ts"),
            (".jsx", ".tsx"),
            (".mjs", ".mts"),
            (".cjs", ".cts"),
            (".js", ".tsx"),
        ] {
            if let Some(s) = base.strip_suffix(js) {
                cands.push(format!("{s}{ts}"));
            }
        }
        cands.extend(EXTS.iter().map(|e| format!("{base}{e}")));
        cands.extend(EXTS.iter().map(|e| format!("{base}/index{e}")));
        cands.iter().find_map(|c| self.source(c))
    }

    fn go_resolve(&self, import: &str) -> Vec<usize> {
        for (dir, module) in self.p.go_modules.iter().rev() {
            let rest = if import == module {
                Some("")
            } else {
                import.strip_prefix(&format!("{module}/"))
            };
            if let Some(rest) = rest {
                let d = join(dir, rest);
                let d = d.trim_end_matches('/');
                return self
                    .by_dir
                    .get(d)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|&i| self.p.classes[i].family == Some(Lang::Go))
                    .collect();
            }
        }
        Vec::new()
    }

    fn java_resolve(&self, name: &str) -> Vec<usize> {
        if let Some(pkg) = name.strip_suffix(".*") {
            let dir = pkg.replace('.', "/");
            let mut out: Vec<usize> = self
                .java_keys
                .iter()
                .filter(|(k, _)| parent_dir(k) == dir)
                .flat_map(|(_, v)| v.iter().copied())
                .collect();
            out.sort_unstable();
            return out;
        }
        let segs: Vec<&str> = name.split('.').collect();
        for n in (1..=segs.len()).rev() {
            let key = format!("{}.java", segs[..n].join("/"));
            if let Some(v) = self.java_keys.get(&key) {
                return v.clone();
            }
        }
        Vec::new()
    }
}

/// Link every test file (and every Rust source with inline tests) to the
/// source files it exercises. Sorted by test file path.
pub fn link_tests(p: &Project) -> Vec<TestLink> {
    let look = Lookup::new(p);
    let mut links = Vec::new();
    for (i, path) in p.files.iter().enumerate() {
        let c = &p.classes[i];
        let Some(family) = c.family else { continue };
        let facts = p.facts.get(&i);
        if c.kind == Kind::Source {
            if facts.is_some_and(|f| f.inline_tests) {
                links.push(TestLink {
                    test_file: path.clone(),
                    implementation_files: BTreeSet::from([path.clone()]),
                    layer: "unit",
                    inline: true,
                    family,
                    matched_by: BTreeSet::from(["inline"]),
                });
            }
            continue;
        }
        if c.kind != Kind::Test || c.role == crate::project::PathRole::TestSupport {
            continue;
        }
        let mut found: BTreeSet<usize> = BTreeSet::new();
        let mut how = BTreeSet::new();
        let named = if family == Lang::Rust {
            rust_naming(&look, p, path)
        } else {
            look.by_naming(path, family)
        };
        if !named.is_empty() {
            how.insert("naming");
            found.extend(named);
        }
        let mut imported = Vec::new();
        for imp in facts.map(|f| f.imports.as_slice()).unwrap_or_default() {
            match family {
                Lang::Rust => {
                    if let Some((dir, _)) = nearest_root(p.crates, path) {
                        imported.extend(look.rust_resolve(dir, imp));
                    }
                }
                Lang::Python => imported.extend(look.python_resolve(path, imp)),
                Lang::Js => imported.extend(look.js_resolve(path, imp)),
                Lang::Go => imported.extend(look.go_resolve(imp)),
                Lang::Java => imported.extend(look.java_resolve(imp)),
                _ => {}
            }
        }
        if !imported.is_empty() {
            how.insert("imports");
            found.extend(imported);
        }
        links.push(TestLink {
            test_file: path.clone(),
            implementation_files: found.into_iter().map(|i| p.files[i].clone()).collect(),
            layer: layer_of_test(path, Some(family)),
            inline: false,
            family,
            matched_by: how,
        });
    }
    links
}

fn rust_naming(look: &Lookup, p: &Project, test: &str) -> Vec<usize> {
    let Some((pkg, _)) = nearest_root(p.crates, test) else {
        return Vec::new();
    };
    let Some(st) = tested_stem(test, Lang::Rust) else {
        return Vec::new();
    };
    let tests_dir = join(pkg, "tests");
    let Some(rel) = test.strip_prefix(&format!("{tests_dir}/")) else {
        return Vec::new();
    };
    let sub = parent_dir(rel);
    let src = join(pkg, "src");
    let dir = join(&src, sub);
    [
        join(&dir, &format!("{st}.rs")),
        join(&dir, &format!("{st}/mod.rs")),
    ]
    .iter()
    .filter_map(|c| look.source(c))
    .collect()
}

/// Where this project puts tests, learnt per language family from its
/// existing test files (majority wins; ties go to the language default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Convention {
    pub family: Lang,
    /// Top-level test directory (`tests`, `test`), or `None` when tests sit
    /// next to the code (colocated / `__tests__`).
    pub test_root: Option<String>,
    /// JS: `__tests__` directories next to the code.
    pub dunder_tests: bool,
    /// Python `test_` prefix (else `_test` suffix); JS `.test` vs `.spec`;
    /// Java `Test` vs `Tests`.
    pub marker: String,
    /// Rust: unit tests live inline in the source file.
    pub rust_inline: bool,
    /// Test files found (dedicated files plus inline modules).
    pub evidence: u32,
}

/// Conventions of every family present, keyed by family.
pub fn learn_conventions(links: &[TestLink]) -> BTreeMap<Lang, Convention> {
    let mut out = BTreeMap::new();
    for family in [Lang::Rust, Lang::Python, Lang::Js, Lang::Go, Lang::Java] {
        let mine: Vec<&TestLink> = links.iter().filter(|l| l.family == family).collect();
        let dedicated: Vec<&&TestLink> = mine.iter().filter(|l| !l.inline).collect();
        let mut roots: BTreeMap<String, u32> = BTreeMap::new();
        let mut colocated = 0u32;
        let mut dunder = 0u32;
        let mut markers: BTreeMap<String, u32> = BTreeMap::new();
        for l in &dedicated {
            let path = &l.test_file;
            let first = path.split('/').next().unwrap_or("");
            if path.contains("/__tests__/") || path.starts_with("__tests__/") {
                dunder += 1;
            } else if matches!(first, "test" | "tests" | "spec" | "specs" | "__tests__")
                && path.contains('/')
            {
                *roots.entry(first.to_string()).or_default() += 1;
            } else {
                colocated += 1;
            }
            let st = stem(path);
            let marker = match family {
                Lang::Python if st.starts_with("test_") => "test_",
                Lang::Python => "_test",
                Lang::Js if st.ends_with(".spec") => ".spec",
                Lang::Js if st.ends_with(".test") => ".test",
                Lang::Js => "",
                Lang::Java if st.ends_with("Tests") => "Tests",
                Lang::Java if st.ends_with("IT") => "IT",
                Lang::Java => "Test",
                Lang::Go => "_test",
                _ => "",
            };
            *markers.entry(marker.to_string()).or_default() += 1;
        }
        let best_root = roots.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
        let rooted = best_root.map_or(0, |(_, n)| *n);
        let test_root = match family {
            Lang::Go => None,
            Lang::Java => Some("src/test/java".to_string()),
            _ if rooted > 0 && rooted >= colocated.max(dunder) => best_root.map(|(r, _)| r.clone()),
            _ if dedicated.is_empty() => match family {
                Lang::Python | Lang::Rust => Some("tests".into()),
                _ => None,
            },
            _ => None,
        };
        let default_marker = match family {
            Lang::Python => "test_",
            Lang::Js => ".test",
            Lang::Java => "Test",
            Lang::Go => "_test",
            _ => "",
        };
        let marker = markers
            .iter()
            .filter(|(m, _)| !(family == Lang::Js && m.is_empty()) && m.as_str() != "IT")
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map_or(default_marker.to_string(), |(m, _)| m.clone());
        let inline = mine.iter().filter(|l| l.inline).count() as u32;
        out.insert(
            family,
            Convention {
                family,
                test_root,
                dunder_tests: dunder > 0 && dunder >= colocated && rooted < dunder,
                marker,
                rust_inline: family == Lang::Rust && (inline > 0 || dedicated.is_empty()),
                evidence: mine.len() as u32,
            },
        );
    }
    out
}

impl Convention {
    /// Where a new test for `source` goes under this convention.
    /// `pkg_dir` is the Rust package or the Python/JS project directory
    /// the file belongs to ("" for the root).
    pub fn suggest(&self, source: &str, pkg_dir: &str) -> String {
        let st = source_stem(source);
        let dir = parent_dir(source);
        let ext = source.rsplit_once('.').map_or("", |(_, e)| e);
        let rel_in_pkg = |d: &str| -> String {
            let d = d.strip_prefix(pkg_dir).unwrap_or(d).trim_start_matches('/');
            if d == "src" {
                String::new()
            } else {
                d.strip_prefix("src/").unwrap_or(d).to_string()
            }
        };
        match self.family {
            Lang::Rust => {
                if self.rust_inline {
                    source.to_string()
                } else {
                    join(pkg_dir, &format!("tests/{st}.rs"))
                }
            }
            Lang::Python => {
                let name = if self.marker == "_test" {
                    format!("{st}_test.py")
                } else {
                    format!("test_{st}.py")
                };
                match &self.test_root {
                    Some(root) => join(pkg_dir, &join(root, &name)),
                    None => join(dir, &name),
                }
            }
            Lang::Js => {
                let marker = if self.marker.is_empty() {
                    ".test"
                } else {
                    self.marker.as_str()
                };
                let name = format!("{st}{marker}.{ext}");
                if self.dunder_tests {
                    join(&join(dir, "__tests__"), &name)
                } else if let Some(root) = &self.test_root {
                    join(pkg_dir, &join(root, &join(&rel_in_pkg(dir), &name)))
                } else {
                    join(dir, &name)
                }
            }
            Lang::Go => join(dir, &format!("{}_test.go", stem(source))),
            Lang::Java => {
                let key = java_key(source);
                let base = source.strip_suffix(key).unwrap_or("");
                let test_base = match base.strip_suffix("src/main/java/") {
                    Some(module) => format!("{module}src/test/java/"),
                    None => "src/test/java/".to_string(),
                };
                let marker = if self.marker == "Tests" {
                    "Tests"
                } else {
                    "Test"
                };
                format!(
                    "{test_base}{}",
                    join(parent_dir(key), &format!("{}{marker}.java", stem(source)))
                )
            }
            // Not a mapped family (`Lang::is_mapped`).
            _ => source.to_string(),
        }
    }

    /// A sentence describing the convention, for people.
    pub fn describe(&self, inline_count: u32, dedicated: u32) -> String {
        match self.family {
            Lang::Rust => format!(
                "Rust: unit tests inline in `#[cfg(test)] mod tests` ({inline_count} file{}), integration tests in `tests/*.rs` ({dedicated} file{})",
                plural(inline_count),
                plural(dedicated)
            ),
            Lang::Python => {
                let name = if self.marker == "_test" {
                    "<module>_test.py"
                } else {
                    "test_<module>.py"
                };
                match &self.test_root {
                    Some(r) => format!(
                        "Python: `{name}` files under `{r}/` ({dedicated} file{})",
                        plural(dedicated)
                    ),
                    None => format!(
                        "Python: `{name}` files next to the module ({dedicated} file{})",
                        plural(dedicated)
                    ),
                }
            }
            Lang::Js => {
                let marker = if self.marker.is_empty() {
                    ".test"
                } else {
                    self.marker.as_str()
                };
                let place = if self.dunder_tests {
                    "in `__tests__/` next to the code".to_string()
                } else if let Some(r) = &self.test_root {
                    format!("under `{r}/`")
                } else {
                    "next to the code".to_string()
                };
                format!(
                    "JavaScript/TypeScript: `<name>{marker}.<ext>` files {place} ({dedicated} file{})",
                    plural(dedicated)
                )
            }
            Lang::Go => format!(
                "Go: `<file>_test.go` next to the code ({dedicated} file{})",
                plural(dedicated)
            ),
            Lang::Java => format!(
                "Java: `<Class>{}.java` under `src/test/java/` mirroring the package ({dedicated} file{})",
                if self.marker == "Tests" {
                    "Tests"
                } else {
                    "Test"
                },
                plural(dedicated)
            ),
            other => format!(
                "{}: {dedicated} test file{}",
                other.name(),
                plural(dedicated)
            ),
        }
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::super::files::file_class;
    use super::*;

    fn project_links(
        files: &[&str],
        texts: &[(&str, &str)],
        crates: &[(&str, &str)],
    ) -> Vec<TestLink> {
        let files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        let classes: Vec<FileClass> = files.iter().map(|f| file_class(f)).collect();
        let crates: BTreeMap<String, String> = crates
            .iter()
            .map(|(d, c)| (d.to_string(), c.to_string()))
            .collect();
        let go_modules = BTreeMap::from([(String::new(), "example.com/calc".to_string())]);
        let mut facts = HashMap::new();
        for (path, text) in texts {
            let i = files.iter().position(|f| f == path).unwrap();
            let fam = classes[i].family.unwrap();
            let ident = nearest_root(&crates, path).map(|(_, c)| c.as_str());
            facts.insert(
                i,
                Facts {
                    inline_tests: fam == Lang::Rust && has_inline_rust_tests(text.as_bytes()),
                    imports: extract(fam, text, ident),
                },
            );
        }
        let p = Project {
            files: &files,
            classes: &classes,
            facts: &facts,
            crates: &crates,
            go_modules: &go_modules,
            python_roots: &["src".to_string()],
        };
        link_tests(&p)
    }

    fn impls(links: &[TestLink], test: &str) -> Vec<String> {
        links
            .iter()
            .find(|l| l.test_file == test)
            .unwrap_or_else(|| panic!("no link for {test}"))
            .implementation_files
            .iter()
            .cloned()
            .collect()
    }

    #[test]
    fn rust_use_trees_expand() {
        let text = "use rust_calc::{add, divide, stats::{self, max}};\nfn t() { rust_calc::parse_number(\"1\"); }";
        assert_eq!(
            extract(Lang::Rust, text, Some("rust_calc")),
            ["add", "divide", "parse_number", "stats", "stats::max"]
        );
        assert_eq!(extract(Lang::Rust, "use my_crate;", Some("my_crate")), [""]);
        // A multi-byte character right at the read limit is not a panic.
        let text = format!("use c::{{a, b}};\n//{}", "─".repeat(1000));
        assert_eq!(extract(Lang::Rust, &text, Some("c")), ["a", "b"]);
    }

    #[test]
    fn rust_inline_and_integration_links() {
        let links = project_links(
            &[
                "Cargo.toml",
                "src/lib.rs",
                "src/stats.rs",
                "src/io/mod.rs",
                "tests/integration.rs",
                "tests/io.rs",
            ],
            &[
                ("src/lib.rs", "pub mod stats;\n#[cfg(test)]\nmod tests {}"),
                ("src/stats.rs", "pub fn mean() {}"),
                ("src/io/mod.rs", "pub fn read() {}"),
                ("tests/integration.rs", "use rust_calc::{add, stats};\n"),
                ("tests/io.rs", "#[test] fn t() {}"),
            ],
            &[("", "rust_calc")],
        );
        assert_eq!(impls(&links, "src/lib.rs"), ["src/lib.rs"]);
        assert!(links.iter().all(|l| l.test_file != "src/stats.rs"));
        assert_eq!(
            impls(&links, "tests/integration.rs"),
            ["src/lib.rs", "src/stats.rs"]
        );
        assert_eq!(impls(&links, "tests/io.rs"), ["src/io/mod.rs"]);
        let l = links.iter().find(|l| l.test_file == "tests/io.rs").unwrap();
        assert_eq!(l.layer, "integration");
        assert_eq!(l.matched_by, BTreeSet::from(["naming"]));
    }

    #[test]
    fn python_links_by_imports_naming_and_package_inits() {
        let links = project_links(
            &[
                "calc/__init__.py",
                "calc/ops.py",
                "calc/auth.py",
                "conftest.py",
                "tests/test_ops.py",
                "tests/test_misc.py",
                "src/pkg/util.py",
                "tests/test_rel.py",
            ],
            &[
                (
                    "tests/test_ops.py",
                    "import pytest\nfrom calc.ops import add, divide\n",
                ),
                (
                    "tests/test_misc.py",
                    "from calc import (\n  auth,\n)\nimport pkg.util as u\n",
                ),
                ("tests/test_rel.py", "x = 1\n"),
            ],
            &[],
        );
        assert_eq!(
            impls(&links, "tests/test_ops.py"),
            ["calc/__init__.py", "calc/ops.py"]
        );
        assert_eq!(
            impls(&links, "tests/test_misc.py"),
            ["calc/__init__.py", "calc/auth.py", "src/pkg/util.py"]
        );
        assert!(impls(&links, "tests/test_rel.py").is_empty());
        assert!(links.iter().all(|l| l.test_file != "conftest.py"));
    }

    #[test]
    fn js_links_resolve_relative_specifiers_and_extensions() {
        let links = project_links(
            &[
                "src/math.js",
                "src/strings.ts",
                "src/ui/index.tsx",
                "test/math.test.js",
                "src/ui/__tests__/ui.spec.tsx",
                "test/other.test.js",
            ],
            &[
                (
                    "test/math.test.js",
                    "const { add } = require('../src/math.js');\nimport s from '../src/strings.js';",
                ),
                (
                    "src/ui/__tests__/ui.spec.tsx",
                    "import UI from '..';\nimport x from 'react';",
                ),
                ("test/other.test.js", "import '@/ui';"),
            ],
            &[],
        );
        assert_eq!(
            impls(&links, "test/math.test.js"),
            ["src/math.js", "src/strings.ts"]
        );
        assert_eq!(
            impls(&links, "src/ui/__tests__/ui.spec.tsx"),
            ["src/ui/index.tsx"]
        );
        assert_eq!(impls(&links, "test/other.test.js"), ["src/ui/index.tsx"]);
    }

    #[test]
    fn go_and_java_links() {
        let links = project_links(
            &[
                "calc/calc.go",
                "calc/more.go",
                "calc/calc_test.go",
                "api/api_test.go",
                "src/main/java/calc/Calc.java",
                "src/main/java/calc/util/Fmt.java",
                "src/test/java/calc/CalcTest.java",
            ],
            &[
                ("calc/calc_test.go", "package calc\nimport \"testing\"\n"),
                (
                    "api/api_test.go",
                    "package api\nimport (\n\t\"testing\"\n\tc \"example.com/calc/calc\"\n)\n",
                ),
                (
                    "src/test/java/calc/CalcTest.java",
                    "package calc;\nimport calc.util.Fmt;\nimport static org.junit.Assert.*;\n",
                ),
            ],
            &[],
        );
        assert_eq!(impls(&links, "calc/calc_test.go"), ["calc/calc.go"]);
        assert_eq!(
            impls(&links, "api/api_test.go"),
            ["calc/calc.go", "calc/more.go"]
        );
        assert_eq!(
            impls(&links, "src/test/java/calc/CalcTest.java"),
            [
                "src/main/java/calc/Calc.java",
                "src/main/java/calc/util/Fmt.java"
            ]
        );
    }

    #[test]
    fn ambiguous_names_do_not_link() {
        let links = project_links(
            &["a/utils.py", "b/utils.py", "tests/test_utils.py"],
            &[],
            &[],
        );
        assert!(impls(&links, "tests/test_utils.py").is_empty());
    }

    #[test]
    fn conventions_are_learnt_and_suggest_paths() {
        let links = project_links(
            &[
                "calc/ops.py",
                "tests/test_ops.py",
                "src/math.js",
                "test/math.test.js",
                "Cargo.toml",
                "src/lib.rs",
            ],
            &[("src/lib.rs", "#[cfg(test)] mod tests {}")],
            &[("", "c")],
        );
        let conv = learn_conventions(&links);
        let py = &conv[&Lang::Python];
        assert_eq!(py.test_root.as_deref(), Some("tests"));
        assert_eq!(py.suggest("calc/auth.py", ""), "tests/test_auth.py");
        assert_eq!(py.suggest("calc/__init__.py", ""), "tests/test_calc.py");
        let js = &conv[&Lang::Js];
        assert_eq!(js.suggest("src/strings.js", ""), "test/strings.test.js");
        assert_eq!(js.suggest("src/lib/deep.ts", ""), "test/lib/deep.test.ts");
        let rs = &conv[&Lang::Rust];
        assert!(rs.rust_inline);
        assert_eq!(rs.suggest("src/stats.rs", ""), "src/stats.rs");
        let go = &conv[&Lang::Go];
        assert_eq!(go.suggest("calc/calc.go", ""), "calc/calc_test.go");
        let java = &conv[&Lang::Java];
        assert_eq!(
            java.suggest("src/main/java/calc/Calc.java", ""),
            "src/test/java/calc/CalcTest.java"
        );
    }
}
