//! Definitions a file makes visible in its text: functions, methods with
//! the class, `impl` block or Go receiver type they belong to, classes and
//! types, what a function declares (or plainly shows) it returns, and the
//! types its parameters are written with. Regular expressions over lines
//! plus brace/indent spans: a reading a person does at a glance, never a
//! compiler's.

use crate::project::{Lang, re};

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DefKind {
    /// A function or method.
    Function,
    /// A class, struct, enum or named type (a constructor call names it).
    Type,
}

/// One definition, with its 1-based inclusive line span.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Def {
    pub name: String,
    pub kind: DefKind,
    /// The class / `impl` type / Go receiver type a method belongs to.
    pub owner: Option<String>,
    pub start: u32,
    pub end: u32,
    /// A test function (by attribute, annotation or name).
    pub is_test: bool,
    /// A `static` JS method, a Python `@staticmethod`/`@classmethod`, or a
    /// Rust associated function without `self`.
    pub is_static: bool,
    /// The type it returns, when written or plain from the body
    /// (`return new X(…)`, `-> Self`, `(T, error)`).
    pub returns: Option<String>,
    /// Parameters with the type written for them.
    pub params: Vec<(String, Option<String>)>,
    /// Base classes (Python `class A(B)`, JS `extends B`).
    pub bases: Vec<String>,
    /// `__radd__ = __add__`: the name this one is an alias of.
    pub alias_of: Option<String>,
}

impl Def {
    /// `start-end`, or `start` for a one-line definition.
    pub fn lines(&self) -> String {
        if self.end > self.start {
            format!("{}-{}", self.start, self.end)
        } else {
            self.start.to_string()
        }
    }

    pub fn contains(&self, line: u32) -> bool {
        self.start <= line && line <= self.end
    }
}

/// Words that look like calls or definitions but are keywords.
pub const KEYWORDS: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "function",
    "new",
    "else",
    "match",
    "loop",
    "fn",
    "def",
    "class",
    "await",
    "async",
    "typeof",
    "sizeof",
    "super",
    "this",
    "self",
    "elif",
    "with",
    "assert",
    "print",
    "len",
    "range",
    "isinstance",
    "synchronized",
    "do",
    "try",
    "constructor",
];

/// Remove string literals and line comments so braces and names inside
/// them do not count. A template literal keeps the code of its
/// placeholders (`${this.area()}` → `(this.area())`): it is code.
pub fn code_only(line: &str) -> String {
    let s = re!(r#""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`"#).replace_all(
        line,
        |c: &regex::Captures| {
            let lit = &c[0];
            if !lit.starts_with('`') {
                return "\"\"".to_string();
            }
            let code: Vec<String> = re!(r"\$\{([^{}]*)\}")
                .captures_iter(lit)
                .map(|p| format!("({})", &p[1]))
                .collect();
            if code.is_empty() {
                "\"\"".to_string()
            } else {
                format!("[{}]", code.join(", "))
            }
        },
    );
    let cut = s.find("//").or_else(|| {
        // A Python `#` comment (not a Rust `#[` attribute).
        s.find('#')
            .filter(|&i| !s[i..].starts_with("#[") && !s[i..].starts_with("#!"))
    });
    match cut {
        Some(i) => s[..i].to_string(),
        None => s.into_owned(),
    }
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// Last line (0-based) of the block that starts at `start`. `code` is the
/// file's lines with comments and string contents blanked ([`code_lines`]).
pub fn span_end(lines: &[String], code: &[String], start: usize, lang: Lang) -> usize {
    if lang == Lang::Python {
        let base = indent(&lines[start]);
        let mut end = start;
        let mut i = start + 1;
        while i < lines.len() {
            let l = &lines[i];
            if l.trim().is_empty() || l.trim_start().starts_with('#') {
                i += 1;
                continue;
            }
            if indent(l) <= base && !l.trim_start().starts_with(')') {
                break;
            }
            end = i;
            i += 1;
        }
        return end;
    }
    let mut depth: i64 = 0;
    let mut opened = false;
    for (i, code) in code.iter().enumerate().skip(start).take(5000) {
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return i;
        }
        if !opened && (code.trim_end().ends_with(';') || i > start + 3) {
            return start;
        }
    }
    start
}

/// A parameter list split at top-level commas.
pub(super) fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' | '[' | '{' | '<' => {
                depth += 1;
                cur.push(c);
            }
            ')' | ']' | '}' | '>' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|p| p.trim().to_string()).collect()
}

/// The name of a type as written: `&mut Vec<T>` → `Vec`, `*UUID` → `UUID`,
/// `Optional[Foo]` → `Foo`, `Result<Self, E>` → `Self`, `pkg.T` → `T`.
pub fn type_name(written: &str) -> Option<String> {
    static WRAPPERS: &[&str] = &[
        "Option", "Optional", "Result", "Box", "Rc", "Arc", "Vec", "list", "List", "Self_",
    ];
    let mut t = written.trim();
    loop {
        let before = t;
        t = t.trim_start_matches(['&', '*', ' ']);
        t = t.strip_prefix("mut ").unwrap_or(t);
        t = t.strip_prefix("dyn ").unwrap_or(t);
        t = t.strip_prefix("impl ").unwrap_or(t);
        t = t.trim_start_matches("'_ ");
        if let Some(open) = t.find(['<', '['])
            && WRAPPERS.contains(&t[..open].rsplit(['.', ':']).next().unwrap_or(""))
            && t.ends_with(['>', ']'])
        {
            let inner = &t[open + 1..t.len() - 1];
            t = split_top_first(inner);
        }
        if t == before {
            break;
        }
    }
    let t = t.split(['<', '[', '(', ' ', '{']).next().unwrap_or("");
    let t = t.rsplit(['.', ':']).next().unwrap_or("");
    (!t.is_empty()
        && t.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_'))
    .then(|| t.to_string())
}

fn split_top_first(s: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => return s[..i].trim(),
            _ => {}
        }
    }
    s.trim()
}

/// Parameters of a signature: `name: T` (Python, Rust, TS), `name T` (Go).
fn params(list: &str, lang: Lang) -> Vec<(String, Option<String>)> {
    split_top(list)
        .into_iter()
        .filter_map(|p| {
            let p = p.split('=').next().unwrap_or("").trim();
            let p = p.trim_start_matches(['*', '.']).trim();
            if p.is_empty() {
                return None;
            }
            match lang {
                Lang::Go => {
                    let mut it = p.split_whitespace();
                    let name = it.next()?.to_string();
                    let ty = it.next().and_then(type_name);
                    Some((name, ty))
                }
                Lang::Java => {
                    let words: Vec<&str> = p.split_whitespace().collect();
                    let name = words.last()?.to_string();
                    let ty = words
                        .get(words.len().wrapping_sub(2))
                        .and_then(|t| type_name(t));
                    Some((name, ty))
                }
                _ => match p.split_once(':') {
                    Some((n, t)) => {
                        let n = n.trim().trim_start_matches("mut ").trim();
                        Some((n.to_string(), type_name(t)))
                    }
                    None => Some((p.trim_start_matches("mut ").to_string(), None)),
                },
            }
        })
        .collect()
}

/// Everything [`definitions`] needs from one definition line.
struct Head {
    name: String,
    kind: DefKind,
    owner: Option<String>,
    is_static: bool,
    returns: Option<String>,
    params: String,
    bases: Vec<String>,
    alias_of: Option<String>,
}

impl Head {
    /// A function or method with nothing else known about it.
    fn function(name: &str, params: &str) -> Head {
        Head {
            name: name.to_string(),
            kind: DefKind::Function,
            owner: None,
            is_static: false,
            returns: None,
            params: params.to_string(),
            bases: Vec::new(),
            alias_of: None,
        }
    }

    /// A type with the bases its definition line names.
    fn type_def(name: &str, bases: Vec<String>) -> Head {
        Head {
            kind: DefKind::Type,
            bases,
            ..Head::function(name, "")
        }
    }
}

/// A Python definition line.
fn python_head(line: &str) -> Option<Head> {
    if let Some(c) =
        re!(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((.*?)\)?\s*(?:->\s*([^:]+))?:?\s*$")
            .captures(line)
    {
        return Some(Head {
            returns: c
                .get(3)
                .and_then(|r| type_name(r.as_str().trim_matches(['"', '\'']))),
            ..Head::function(&c[1], &c[2])
        });
    }
    if let Some(c) = re!(r"^\s*class\s+([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*:").captures(line) {
        let bases = c
            .get(2)
            .map(|b| {
                split_top(b.as_str())
                    .iter()
                    .filter_map(|b| type_name(b))
                    .collect()
            })
            .unwrap_or_default();
        return Some(Head::type_def(&c[1], bases));
    }
    // `__radd__ = __add__` inside a class body.
    if let Some(c) = re!(r"^\s+(__\w+__)\s*=\s*(__\w+__)\s*$").captures(line) {
        return Some(Head {
            alias_of: Some(c[2].to_string()),
            ..Head::function(&c[1], "")
        });
    }
    None
}

/// A Python `def` or `class` line with the lines its parenthesis spans
/// (a signature or a base list over several lines), as one line.
fn python_header(lines: &[String], i: usize) -> String {
    let line = &lines[i];
    let t = line.trim_start();
    if !(t.starts_with("def ") || t.starts_with("async def ") || t.starts_with("class ")) {
        return line.clone();
    }
    let mut joined = String::new();
    let mut depth = 0i32;
    for l in lines.iter().skip(i).take(30) {
        let code = code_only(l);
        joined.push_str(code.trim_end());
        joined.push(' ');
        for c in code.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        if depth <= 0 {
            break;
        }
    }
    joined.trim_end().to_string()
}

/// A JavaScript / TypeScript definition line. `in_class` says whether the
/// line is directly inside a class body (methods need no keyword there).
fn js_head(line: &str, in_class: bool) -> Option<Head> {
    if let Some(c) = re!(r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)(?:\s*<[^>]*>)?(?:\s+extends\s+([\w$.]+))?")
    .captures(line)
    {
        let bases = c.get(2).map(|b| vec![b.as_str().to_string()]);
        return Some(Head::type_def(&c[1], bases.unwrap_or_default()));
    }
    if in_class
        && let Some(c) = re!(r"^\s*(?:(?:public|private|protected|readonly|override|async|get|set)\s+)*(static\s+)?(?:(?:async|get|set)\s+)*\*?\s*(#?[A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\((.*?)\)?\s*(?::\s*([^{]+))?\{?\s*$")
        .captures(line)
    {
        let name = c[2].trim_start_matches('#');
        if !KEYWORDS.contains(&name) || name == "constructor" {
            return Some(Head {
                is_static: c.get(1).is_some(),
                returns: c.get(4).and_then(|r| type_name(r.as_str())),
                ..Head::function(name, &c[3])
            });
        }
    }
    if let Some(c) = re!(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\((.*?)\)?\s*(?::\s*([^{]+))?\{?\s*$")
    .captures(line)
    {
        return Some(Head {
            returns: c.get(3).and_then(|r| type_name(r.as_str())),
            ..Head::function(&c[1], &c[2])
        });
    }
    if let Some(c) = re!(r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b[^(]*\((.*?)\)|\((.*?)\)\s*(?::[^=]+)?=>|([A-Za-z_$][\w$]*)\s*=>)")
    .captures(line)
    {
        let params = c
            .get(2)
            .or(c.get(3))
            .or(c.get(4))
            .map_or("", |m| m.as_str());
        return Some(Head::function(&c[1], params));
    }
    if let Some(c) = re!(r"^\s*(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b[^(]*\((.*?)\)|\((.*?)\)\s*=>)")
    .captures(line)
    {
        let params = c.get(2).or(c.get(3)).map_or("", |m| m.as_str());
        return Some(Head::function(&c[1], params));
    }
    if let Some(c) = re!(r"^\s*([A-Za-z_$][\w$]*)\.prototype\.([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?function\b[^(]*\((.*?)\)")
    .captures(line)
    {
        return Some(Head {
            owner: Some(c[1].to_string()),
            ..Head::function(&c[2], &c[3])
        });
    }
    None
}

/// A Go definition line.
fn go_head(line: &str) -> Option<Head> {
    if let Some(c) = re!(r"^func\s+(?:\(\s*(?:[A-Za-z_]\w*\s+)?\*?\s*([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)\s*)?([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*\(([^)]*)\)\s*(.*?)\s*\{?\s*$")
    .captures(line)
    {
        let ret = c.get(4).map_or("", |m| m.as_str()).trim();
        let first = ret.trim_start_matches('(');
        let first = split_top_first(first.trim_end_matches(')'));
        return Some(Head {
            owner: c.get(1).map(|o| o.as_str().to_string()),
            is_static: c.get(1).is_none(),
            returns: (!first.is_empty()).then(|| type_name(first)).flatten(),
            ..Head::function(&c[2], &c[3])
        });
    }
    if let Some(c) = re!(r"^type\s+([A-Za-z_]\w*)\b").captures(line) {
        return Some(Head::type_def(&c[1], Vec::new()));
    }
    None
}

/// A Rust definition line (`impl` blocks are tracked by the caller).
fn rust_head(line: &str) -> Option<Head> {
    if let Some(c) = re!(r#"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_]\w*)\s*(?:<[^(]*>)?\s*\((.*?)\)?\s*(?:->\s*([^{;]+?))?\s*(?:where\b.*)?\{?\s*$"#)
    .captures(line)
    {
        let params = c.get(2).map_or("", |m| m.as_str());
        return Some(Head {
            is_static: !params.contains("self"),
            returns: c.get(3).and_then(|r| type_name(r.as_str())),
            ..Head::function(&c[1], params)
        });
    }
    if let Some(c) =
        re!(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|union)\s+([A-Za-z_]\w*)")
            .captures(line)
    {
        return Some(Head::type_def(&c[1], Vec::new()));
    }
    None
}

/// A Java definition line.
fn java_head(line: &str) -> Option<Head> {
    if let Some(c) = re!(r"^\s*(?:(?:public|protected|private|static|final|abstract|sealed)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*)(?:.*?\bextends\s+([\w.]+))?")
    .captures(line)
    {
        let bases = c.get(2).map(|b| vec![b.as_str().to_string()]);
        return Some(Head::type_def(&c[1], bases.unwrap_or_default()));
    }
    let c = re!(r"^\s*((?:(?:public|protected|private|static|final|abstract|synchronized|native|default)\s+)*)(?:<[^>]+>\s+)?([\w<>\[\]?,.]+)\s+([A-Za-z_]\w*)\s*\(([^;]*?)\)?\s*(?:throws [\w., ]+)?\{?\s*$")
    .captures(line)?;
    let name = c[3].to_string();
    if KEYWORDS.contains(&name.as_str()) || c[2].trim() == "new" || c[2].trim() == "return" {
        return None;
    }
    Some(Head {
        is_static: c[1].contains("static"),
        returns: type_name(&c[2]),
        ..Head::function(&name, &c[4])
    })
}

/// Whether the function starting at `start` (0-based) is a test.
fn is_test_fn(lines: &[String], start: usize, name: &str, lang: Lang) -> bool {
    let attrs = lines[..start]
        .iter()
        .rev()
        .take_while(|l| {
            let t = l.trim();
            t.starts_with("#[") || t.starts_with('@') || t.starts_with("///") || t.starts_with("//")
        })
        .map(|l| l.trim().to_string())
        .collect::<Vec<_>>();
    match lang {
        Lang::Rust => attrs.iter().any(|a| {
            a.starts_with("#[test")
                || a.starts_with("#[tokio::test")
                || a.starts_with("#[rstest")
                || a.contains("::test]")
        }),
        Lang::Python => name.starts_with("test"),
        Lang::Go => {
            name.starts_with("Test") || name.starts_with("Benchmark") || name.starts_with("Fuzz")
        }
        Lang::Java => attrs.iter().any(|a| {
            a.starts_with("@Test")
                || a.starts_with("@ParameterizedTest")
                || a.starts_with("@RepeatedTest")
        }),
        _ => false,
    }
}

/// What a function's body shows it returns when no type is written: a
/// constructor of a type (`return new X(`, `return X(`, `Self {`,
/// `return this` / `cls(` → the owner).
fn returned_type(body: &[String], owner: Option<&str>) -> Option<String> {
    for l in body {
        let code = code_only(l);
        if let Some(c) = re!(r"\breturn\s+new\s+([A-Za-z_$][\w$]*)").captures(&code) {
            return Some(c[1].to_string());
        }
        if owner.is_some()
            && (code.contains("return this")
                || code.contains("return cls(")
                || code.contains("return self.__class__(")
                || code.contains("Self {")
                || code.contains("return self"))
        {
            return owner.map(str::to_string);
        }
        if let Some(c) = re!(r"\breturn\s+([A-Z][\w$]*)\s*[({]").captures(&code) {
            return Some(c[1].to_string());
        }
    }
    None
}

/// The type a doc comment right above line `i` (0-based) says the
/// function returns: JSDoc `@return {DateTime}` / `@returns {X}`.
fn doc_return(lines: &[String], i: usize) -> Option<String> {
    lines[..i]
        .iter()
        .rev()
        .take_while(|l| {
            let t = l.trim_start();
            t.starts_with('*') || t.starts_with("/**") || t.starts_with('@')
        })
        .find_map(|l| re!(r"@returns?\s*\{([^}]+)\}").captures(l))
        .and_then(|c| type_name(&c[1]))
}

/// A Rust `impl` header: the type the block is for, and the trait.
fn rust_impl(line: &str) -> Option<(String, Option<String>)> {
    let c = re!(r"^\s*(?:unsafe\s+)?impl\b\s*(?:<.*?>\s*)?(?:(.+?)\s+for\s+)?([^{]+?)\s*(?:where\b.*)?\{?\s*$")
    .captures(line)?;
    let ty = type_name(&c[2])?;
    Some((ty, c.get(1).and_then(|t| type_name(t.as_str()))))
}

/// The lines of a file with comments and the contents of strings blanked,
/// for counting braces: the scans' lexer, which follows block comments,
/// template literals and raw strings over lines (a JSDoc `{@link x}` or a
/// `${` in a template literal spanning lines would shift a line-by-line
/// count). Python keeps its lines (their indentation is the block).
pub fn code_lines(lines: &[String], lang: Lang) -> Vec<String> {
    if !lang.braces() {
        return lines.iter().map(|l| code_only(l)).collect();
    }
    let text = lines.join("\n");
    let source = crate::project::source::Source::new(lang, &text);
    let code: Vec<String> = source.masked.split('\n').map(str::to_string).collect();
    if code.len() == lines.len() {
        code
    } else {
        lines.iter().map(|l| code_only(l)).collect()
    }
}

/// Every definition in a file, in order of appearance.
pub fn definitions(lines: &[String], lang: Lang) -> Vec<Def> {
    let mut out: Vec<Def> = Vec::new();
    let code = code_lines(lines, lang);
    let depth_before = depths_before(&code, lang);
    // Open owner blocks: (owner name, last line 0-based, indent, depth of
    // the lines directly inside it).
    let mut owners: Vec<(String, usize, usize, i64)> = Vec::new();
    let mut decorators: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        owners.retain(|(_, end, _, _)| *end >= i);
        let trimmed = line.trim_start();
        if trimmed.starts_with('@') && lang == Lang::Python {
            decorators.push(trimmed.to_string());
            continue;
        }
        if lang == Lang::Rust
            && let Some((ty, _trait)) = rust_impl(line)
        {
            let end = span_end(lines, &code, i, lang);
            owners.push((ty, end, indent(line), depth_before[i] + 1));
            continue;
        }
        // Directly inside the innermost owner's body (not in a method).
        let in_class = owners.last().is_some_and(|(_, _, ind, inside)| {
            if lang == Lang::Python {
                indent(line) > *ind
            } else {
                depth_before[i] == *inside
            }
        });
        let head = match lang {
            Lang::Python => python_head(&python_header(lines, i)),
            Lang::Js => js_head(line, in_class),
            Lang::Go => go_head(line),
            Lang::Rust => rust_head(line),
            Lang::Java => java_head(line),
            _ => None,
        };
        let decos = std::mem::take(&mut decorators);
        let Some(head) = head else {
            continue;
        };
        if head.kind == DefKind::Function
            && KEYWORDS.contains(&head.name.as_str())
            && head.name != "constructor"
        {
            continue;
        }
        let one_line_type =
            head.kind == DefKind::Type && lang != Lang::Python && !code[i].contains('{');
        let end = if head.alias_of.is_some() || one_line_type {
            i
        } else {
            span_end(lines, &code, i, lang)
        };
        // JS methods need an enclosing class; a brace language method's
        // owner is the innermost open block that is a class/impl.
        let owner = head
            .owner
            .clone()
            .or_else(|| open_owner(&owners, line, i, depth_before[i], lang));
        if lang == Lang::Js
            && head.kind == DefKind::Function
            && head.owner.is_none()
            && in_class
            && owner.is_none()
        {
            continue;
        }
        let is_static = head.is_static
            || decos
                .iter()
                .any(|d| d.starts_with("@staticmethod") || d.starts_with("@classmethod"));
        let returns = return_type(&head, owner.as_ref(), lines, i, end);
        let is_test = head.kind == DefKind::Function && is_test_fn(lines, i, &head.name, lang);
        let def = Def {
            params: params(&head.params, lang),
            name: head.name,
            kind: head.kind,
            owner: if head.kind == DefKind::Type {
                None
            } else {
                owner
            },
            start: i as u32 + 1,
            end: end as u32 + 1,
            is_test,
            is_static,
            returns,
            bases: head.bases,
            alias_of: head.alias_of,
        };
        if def.kind == DefKind::Type && matches!(lang, Lang::Python | Lang::Js | Lang::Java) {
            owners.push((def.name.clone(), end, indent(line), depth_before[i] + 1));
        }
        out.push(def);
    }
    out
}

/// The innermost open class or impl block that line `i` is directly in.
fn open_owner(
    owners: &[(String, usize, usize, i64)],
    line: &str,
    i: usize,
    depth: i64,
    lang: Lang,
) -> Option<String> {
    owners
        .iter()
        .rev()
        .find(|(_, end_line, ind, inside)| {
            *end_line >= i
                && if lang == Lang::Python {
                    indent(line) > *ind
                } else {
                    depth == *inside
                }
        })
        .map(|(o, _, _, _)| o.clone())
}

/// Brace depth at the start of each line (brace languages; 0 for Python).
fn depths_before(code: &[String], lang: Lang) -> Vec<i64> {
    let mut depth_before = Vec::with_capacity(code.len());
    let mut depth = 0i64;
    for l in code {
        depth_before.push(depth);
        if lang != Lang::Python {
            for c in l.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
            }
        }
    }
    depth_before
}

/// What a definition returns: declared (`Self` named), documented, or
/// read from its `return` statements.
fn return_type(
    head: &Head,
    owner: Option<&String>,
    lines: &[String],
    i: usize,
    end: usize,
) -> Option<String> {
    let returns = head.returns.clone().map(|r| match (owner, r.as_str()) {
        (Some(o), "Self") => o.clone(),
        _ => r,
    });
    returns
        .or_else(|| {
            (head.kind == DefKind::Function)
                .then(|| doc_return(lines, i))
                .flatten()
        })
        .or_else(|| {
            (head.kind == DefKind::Function)
                .then(|| returned_type(&lines[i + 1..=end.max(i)], owner.map(String::as_str)))
                .flatten()
        })
}

/// The innermost function whose span holds `line` (1-based).
pub fn enclosing(defs: &[Def], line: u32) -> Option<&Def> {
    defs.iter()
        .filter(|d| d.kind == DefKind::Function && d.alias_of.is_none() && d.contains(line))
        .min_by_key(|d| d.end - d.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    /// `Owner.name lines -> returns`, one line per definition.
    fn brief(d: &Def) -> String {
        let owner = d.owner.as_ref().map_or(String::new(), |o| format!("{o}."));
        let returns = d
            .returns
            .as_ref()
            .map_or(String::new(), |r| format!(" -> {r}"));
        format!("{owner}{} {}{returns}", d.name, d.lines())
    }

    #[test]
    fn python_classes_methods_aliases() {
        let src = lines(
            "class relativedelta(object):\n    def __init__(self, days=0):\n        self.days = days\n\n    def __add__(self, other):\n        return self.__class__(days=1)\n\n    __radd__ = __add__\n\n    @classmethod\n    def make(cls) -> 'relativedelta':\n        return cls()\n\n\ndef helper(x: Foo) -> Optional[Bar]:\n    return x\n",
        );
        let defs = definitions(&src, Lang::Python);
        let got: Vec<_> = defs.iter().map(brief).collect();
        assert_eq!(
            got,
            vec![
                "relativedelta 1-12",
                "relativedelta.__init__ 2-3",
                "relativedelta.__add__ 5-6 -> relativedelta",
                "relativedelta.__radd__ 8",
                "relativedelta.make 11-12 -> relativedelta",
                "helper 15-16 -> Bar",
            ]
        );
        assert_eq!(defs[3].alias_of.as_deref(), Some("__add__"));
        assert!(defs[4].is_static);
        assert_eq!(
            defs[5].params,
            vec![("x".to_string(), Some("Foo".to_string()))]
        );
    }

    #[test]
    fn js_class_methods_and_module_helpers() {
        let src = lines(
            "function toISOTime(o, millis) {\n  return o;\n}\n\nexport default class Duration extends Base {\n  constructor(values) {\n    this.values = values;\n  }\n\n  static fromObject(obj) {\n    return new Duration(obj);\n  }\n\n  toISOTime({ includeMillis = true } = {}) {\n    if (x) return null;\n    return '';\n  }\n}\nconst slug = (s) => s;\nDuration.prototype.plus = function (o) {\n  return this;\n};\n",
        );
        let got: Vec<_> = definitions(&src, Lang::Js).iter().map(brief).collect();
        assert_eq!(
            got,
            vec![
                "toISOTime 1-3",
                "Duration 5-18",
                "Duration.constructor 6-8",
                "Duration.fromObject 10-12 -> Duration",
                "Duration.toISOTime 14-17",
                "slug 19",
                "Duration.plus 20-22 -> Duration",
            ]
        );
    }

    #[test]
    fn braces_in_comments_and_template_literals_do_not_hide_methods() {
        // luxon's shapes: `{@link Duration#toISOTime}` (a `#` that is no
        // comment in JS) and a `${` in a template literal over lines.
        let src = lines(
            "/**\n * See {@link Duration#toISOTime}.\n */\nexport default class Duration {\n  static invalid(reason) {\n    throw new Error(\n      `Invalid: ${\n        reason\n      }`,\n    );\n  }\n\n  /**\n   * @return {Duration}\n   */\n  static fromObject(obj) {\n    return make(obj);\n  }\n\n  toISOTime(opts = {}) {\n    return '';\n  }\n}\n",
        );
        let got: Vec<_> = definitions(&src, Lang::Js).iter().map(brief).collect();
        assert_eq!(
            got,
            vec![
                "Duration 4-23",
                "Duration.invalid 5-11",
                "Duration.fromObject 16-18 -> Duration",
                "Duration.toISOTime 20-22",
            ]
        );
    }

    #[test]
    fn python_headers_over_several_lines() {
        let src = lines(
            "class _NumberRangeBase(\n    _NumberParamTypeBase\n):\n    def convert(\n        self, value: str, param: Param | None\n    ) -> float:\n        return 1.0\n",
        );
        let defs = definitions(&src, Lang::Python);
        assert_eq!(defs[0].bases, ["_NumberParamTypeBase"]);
        assert_eq!(defs[1].owner.as_deref(), Some("_NumberRangeBase"));
        assert_eq!(defs[1].lines(), "4-7");
        assert_eq!(defs[1].returns.as_deref(), Some("float"));
        assert_eq!(
            defs[1].params,
            vec![
                ("self".to_string(), None),
                ("value".to_string(), Some("str".to_string())),
                ("param".to_string(), Some("Param".to_string()))
            ]
        );
    }

    #[test]
    fn go_receivers_and_results() {
        let src = lines(
            "package guid\n\ntype UUID [16]byte\n\nfunc Parse(s string) (UUID, error) {\n\treturn UUID{}, nil\n}\n\nfunc (uuid *UUID) Scan(src interface{}) error {\n\treturn nil\n}\n\nfunc (nu *NullUUID) Scan(value interface{}) error {\n\treturn nil\n}\n",
        );
        let got: Vec<_> = definitions(&src, Lang::Go).iter().map(brief).collect();
        assert_eq!(
            got,
            vec![
                "UUID 3",
                "Parse 5-7 -> UUID",
                "UUID.Scan 9-11 -> error",
                "NullUUID.Scan 13-15 -> error",
            ]
        );
    }

    #[test]
    fn rust_impl_blocks() {
        let src = lines(
            "pub struct VersionReq;\n\nimpl VersionReq {\n    pub fn parse(text: &str) -> Result<VersionReq, Error> {\n        todo!()\n    }\n\n    pub fn matches(&self, v: &Version) -> bool {\n        eval::matches_req(self, v)\n    }\n}\n\nimpl std::ops::Add for Version {\n    type Output = Self;\n    fn add(self, o: Self) -> Self {\n        o\n    }\n}\n\npub(crate) fn matches_req(req: &VersionReq, ver: &Version) -> bool {\n    true\n}\n",
        );
        let defs = definitions(&src, Lang::Rust);
        let got: Vec<_> = defs.iter().map(brief).collect();
        assert_eq!(
            got,
            vec![
                "VersionReq 1",
                "VersionReq.parse 4-6 -> VersionReq",
                "VersionReq.matches 8-10 -> bool",
                "Output 14",
                "Version.add 15-17 -> Version",
                "matches_req 20-22 -> bool",
            ]
        );
        assert!(defs[1].is_static && !defs[2].is_static);
        assert_eq!(
            defs[5].params,
            vec![
                ("req".to_string(), Some("VersionReq".to_string())),
                ("ver".to_string(), Some("Version".to_string()))
            ]
        );
    }

    #[test]
    fn java_methods_belong_to_their_class() {
        let src = lines(
            "public class Calc {\n    public static int max(int[] values) {\n        return values[0];\n    }\n\n    @Test\n    void findsTheMax() {\n        assertEquals(9, Calc.max(new int[] {1, 9}));\n    }\n}\n",
        );
        let defs = definitions(&src, Lang::Java);
        let got: Vec<_> = defs.iter().map(brief).collect();
        assert_eq!(
            got,
            vec![
                "Calc 1-10",
                "Calc.max 2-4 -> int",
                "Calc.findsTheMax 7-9 -> void",
            ]
        );
        assert!(defs[1].is_static && defs[2].is_test);
        assert_eq!(enclosing(&defs, 3).map(|d| d.name.as_str()), Some("max"));
    }

    #[test]
    fn type_names() {
        for (written, want) in [
            ("&mut Vec<Foo>", Some("Foo")),
            ("*UUID", Some("UUID")),
            ("Optional[Bar]", Some("Bar")),
            ("Result<Self, Error>", Some("Self")),
            ("pkg.Thing", Some("Thing")),
            ("&'_ str", Some("str")),
            ("crate::a::B", Some("B")),
            ("", None),
        ] {
            assert_eq!(type_name(written).as_deref(), want, "{written}");
        }
    }
}
