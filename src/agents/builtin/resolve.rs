//! From a failing line to the definitions in project source it exercises,
//! using what each language shows in text, in this order:
//!
//! 1. the receiver's type: a class or type named directly (`Duration.f()`,
//!    `Version::parse`), a local declared or assigned from a constructor or
//!    a function whose return type is written or plain (`var u UUID`,
//!    `dur = Duration.fromObject(…)`, `let r = req(…)`), a parameter's type;
//! 2. the operators a class defines (`a + b` → `__add__`, Rust `impl Add`);
//! 3. the file a name was imported from (Python `from x import y`, JS
//!    `import`/`require`, following re-exports), the same package (Go) or
//!    file;
//! 4. the name alone, when exactly one definition has it.
//!
//! Test code is never a target: helpers defined in tests are read through
//! (their calls are resolved in turn) and named as context. Git-ignored
//! build output is mapped back to the source it was built from. A one-line
//! wrapper is followed to what it wraps. When several definitions could be
//! meant, all are returned as `Ambiguous` so the caller can say so.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use regex::Regex;

use super::defs::{Def, DefKind, code_only};
use super::expr::{self, Call, Expr};
use super::source::{Project, normalize};
use crate::project::{Lang, compile, is_test_path, parent_dir, re};

/// How a target was found: the evidence behind it, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// The failure was raised inside it (stack / traceback / panic).
    Crash,
    /// The receiver's or operand's type names its class / type.
    Typed,
    /// Imported by name from the file that defines it.
    Imported,
    /// Defined in the same file or package as the caller.
    Local,
    /// The only definition with that name in the project.
    UniqueName,
    /// The name shares a word with the failing test's name, among the
    /// functions the located one calls.
    NameAffinity,
    /// It writes the text that differs from what the test expected,
    /// traced from the literal that text is made of.
    Text,
    /// One of several definitions with that name: unsure.
    Ambiguous,
}

impl How {
    /// How much a target found this way is worth, before anything else.
    pub fn confidence(self) -> f64 {
        match self {
            How::Crash => 0.8,
            How::Typed => 0.75,
            How::Imported => 0.7,
            How::Local => 0.65,
            How::UniqueName => 0.5,
            How::NameAffinity => 0.5,
            How::Text => 0.5,
            How::Ambiguous => 0.25,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            How::Crash => "the failure was raised there",
            How::Typed => "the receiver's type names it",
            How::Imported => "the test imports it from there",
            How::Local => "defined next to the caller",
            How::UniqueName => "the only definition with that name",
            How::NameAffinity => "its name matches the failing test's",
            How::Text => "it writes the text that differs from the expected one",
            How::Ambiguous => "one of several definitions with that name",
        }
    }
}

/// A place in project source (never test code, never ignored output).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Target {
    pub file: String,
    pub def: Def,
    pub how: How,
    /// What led here: test helpers read through, wrappers followed, build
    /// output mapped back.
    pub via: Vec<String>,
    /// Other definitions it could have been (for `Ambiguous`).
    pub alternatives: Vec<String>,
    /// The receiver's class when the method was inherited from a base
    /// class: its calls on `this` / `self` reach that class's overrides.
    #[serde(skip)]
    pub receiver: Option<String>,
}

impl Target {
    pub fn key(&self) -> String {
        format!("{}:{}", self.file, self.def.name)
    }

    pub fn label(&self) -> String {
        match &self.def.owner {
            Some(o) => format!("{o}.{}", self.def.name),
            None => self.def.name.clone(),
        }
    }

    /// Confidence after the hops that led here.
    pub fn confidence(&self) -> f64 {
        let hops = self.via.iter().filter(|v| v.starts_with("wrapper")).count() as f64;
        (self.how.confidence() - 0.05 * hops).max(0.05)
    }
}

/// What a name in a file stands for, from its imports.
#[derive(Debug, Clone, PartialEq)]
enum Binding {
    /// `symbol` as exported by `file` (`"default"` for a default export).
    Symbol { file: String, symbol: String },
    /// The module `file` itself (`import * as m`, `const m = require(…)`,
    /// Python `import pkg.mod as m`, a Go package qualifier).
    Module(Vec<String>),
    /// Something outside the project (a package, the standard library).
    External,
}

/// Python operator methods by operator, and their reflected forms.
fn python_dunder(op: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match op {
        "+" => ("__add__", Some("__radd__")),
        "-" => ("__sub__", Some("__rsub__")),
        "*" => ("__mul__", Some("__rmul__")),
        "/" => ("__truediv__", Some("__rtruediv__")),
        "//" => ("__floordiv__", Some("__rfloordiv__")),
        "%" => ("__mod__", Some("__rmod__")),
        "**" => ("__pow__", Some("__rpow__")),
        "@" => ("__matmul__", Some("__rmatmul__")),
        "&" => ("__and__", Some("__rand__")),
        "|" => ("__or__", Some("__ror__")),
        "^" => ("__xor__", Some("__rxor__")),
        "<<" => ("__lshift__", Some("__rlshift__")),
        ">>" => ("__rshift__", Some("__rrshift__")),
        "==" => ("__eq__", Some("__eq__")),
        "!=" => ("__ne__", Some("__ne__")),
        "<" => ("__lt__", Some("__gt__")),
        "<=" => ("__le__", Some("__ge__")),
        ">" => ("__gt__", Some("__lt__")),
        ">=" => ("__ge__", Some("__le__")),
        _ => return None,
    })
}

/// Rust operator trait methods by operator.
fn rust_op_method(op: &str) -> Option<&'static str> {
    Some(match op {
        "+" => "add",
        "-" => "sub",
        "*" => "mul",
        "/" => "div",
        "%" => "rem",
        "&" => "bitand",
        "|" => "bitor",
        "^" => "bitxor",
        "<<" => "shl",
        ">>" => "shr",
        "==" | "!=" => "eq",
        "<" | "<=" | ">" | ">=" => "partial_cmp",
        _ => return None,
    })
}

/// A line of a file: (file, 1-based line).
type Site = (String, u32);

/// (file, line, test name words, normalised first message line).
type AnswerKey = (String, u32, Vec<String>, String);

/// Resolves calls for one project.
pub struct Resolver<'a> {
    pub project: &'a Project,
    /// (file, name) → what the file's imports bind the name to.
    bindings: RefCell<HashMap<(String, String), Option<Binding>>>,
    /// Answers of [`Resolver::at_test_line`]: parametrised tests fail on
    /// the same line many times.
    answers: RefCell<HashMap<AnswerKey, Vec<Target>>>,
    /// (text, language) → the lines holding it as a literal (a search of
    /// every source file, done once per text).
    literals: RefCell<HashMap<(String, Lang), Vec<Site>>>,
}

/// Where a line is read: its file, the function around it, and the lines
/// of that function up to the line (for locals).
#[derive(Clone)]
struct Scope {
    file: String,
    lang: Lang,
    lines: std::rc::Rc<Vec<String>>,
    func: Option<Def>,
    line: u32,
    /// The class `this` / `self` stands for when it is not the function's
    /// owner (a base-class method reached through a subclass instance).
    this_type: Option<String>,
}

impl<'a> Resolver<'a> {
    pub fn new(project: &'a Project) -> Resolver<'a> {
        Resolver {
            project,
            bindings: Default::default(),
            answers: Default::default(),
            literals: Default::default(),
        }
    }

    /// The function around `file:line` as a target (a crash site): `None`
    /// in test code or outside any function.
    pub fn place(&self, file: &str, line: u32, how: How) -> Option<Target> {
        let defs = self.project.defs(file);
        let def = super::defs::enclosing(&defs, line)?.clone();
        let here = self.as_target(file.to_string(), def, how)?;
        if how != How::Crash {
            return Some(here);
        }
        // A crash on an assertion (`debug_assert!(r.is_ok())`, `.unwrap()`,
        // `assert x`) is where a wrong value surfaced, not where it was
        // made: the project function that computed the value checked is
        // the place, one level down.
        match self.asserted_callee(file, line, &here) {
            Some(mut inner) => {
                inner.how = How::Crash;
                inner.via.insert(
                    0,
                    format!(
                        "raised in {} ({file}:{line}) on the value it returned",
                        here.label()
                    ),
                );
                Some(inner)
            }
            None => Some(here),
        }
    }

    /// The project function whose result the assertion at `file:line`
    /// checks: called on that line, or assigned to a name the line uses
    /// earlier in the same function.
    fn asserted_callee(&self, file: &str, line: u32, around: &Target) -> Option<Target> {
        let scope = self.scope(file, line)?;
        let text = code_only(scope.lines.get(line as usize - 1)?);
        if !re!(r"\b(?:debug_)?assert(?:_eq|_ne)?!\s*\(|\.(?:unwrap|expect|unwrap_err)\s*\(|^\s*assert\b|\bassert\w*\s*\(")
        .is_match(&text)
        {
            return None;
        }
        let differs = |t: &Target| t.key() != around.key() && t.def.start != around.def.start;
        for call in expr::calls(&text) {
            if let Some(t) = self.call_shallow(&scope, &call).into_iter().find(differs) {
                return Some(t);
            }
        }
        // Names the line reads, assigned earlier in the function.
        let from = scope.func.as_ref().map_or(1, |f| f.start);
        for var in expr::names(&text) {
            let assign = Regex::new(&format!(
                r"(?:^|[\s(;])(?:(?:let|const|var|mut)\s+)*{}\s*(?::[^=]+)?(?::=|=)\s*([^=].*)$",
                regex::escape(&var)
            ))
            .ok()?;
            for n in (from..line).rev() {
                let code = code_only(&scope.lines[n as usize - 1]);
                let Some(c) = assign.captures(&code) else {
                    continue;
                };
                let at = Scope {
                    line: n,
                    ..scope.clone()
                };
                for call in expr::calls(&c[1]) {
                    if let Some(t) = self.call_shallow(&at, &call).into_iter().find(differs) {
                        return Some(t);
                    }
                }
                break;
            }
        }
        None
    }

    /// Targets for a failure located in test code at `file:line`, read
    /// from that line up to the start of its function (the assertion
    /// first, then what set up its values). `test_words` are the words of
    /// the failing test's name; `message` its error text (to find the
    /// failing line of a helper).
    pub fn at_test_line(
        &self,
        file: &str,
        line: u32,
        test_words: &[String],
        message: &str,
    ) -> Vec<Target> {
        let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let key = (
            file.to_string(),
            line,
            test_words.to_vec(),
            super::group::normalize_message(first),
        );
        if let Some(hit) = self.answers.borrow().get(&key) {
            return hit.clone();
        }
        let found = self.read_up_from(file, line, test_words, message, 0);
        self.answers.borrow_mut().insert(key, found.clone());
        found
    }

    fn scope(&self, file: &str, line: u32) -> Option<Scope> {
        let lang = Lang::family_of(file)?;
        let lines = self.project.lines(file)?;
        let defs = self.project.defs(file);
        Some(Scope {
            file: file.to_string(),
            lang,
            func: super::defs::enclosing(&defs, line).cloned(),
            lines,
            line,
            this_type: None,
        })
    }

    fn read_up_from(
        &self,
        file: &str,
        line: u32,
        test_words: &[String],
        message: &str,
        depth: usize,
    ) -> Vec<Target> {
        let Some(scope) = self.scope(file, line) else {
            return Vec::new();
        };
        let lowest = scope
            .func
            .as_ref()
            .map_or(line.saturating_sub(5), |f| f.start)
            .max(1);
        // A runner that names the test's declaration (a `#[should_panic]`
        // test that did not panic, a TAP `location`) points at no call:
        // the test's whole body is read, from its last line up.
        let mut n = match &scope.func {
            Some(f) if line == f.start && f.end > f.start => f.end,
            _ => line,
        };
        // An accessor that only hands back stored state (`as_slice()`,
        // `len()`) reads what an earlier line made: it is kept only when
        // nothing above it in the test names a place.
        let mut accessors: Vec<Target> = Vec::new();
        while n >= lowest && n as usize <= scope.lines.len() {
            let at = Scope {
                line: n,
                ..scope.clone()
            };
            let found = self.on_line(&at, test_words, message, depth);
            if !found.is_empty() {
                if found.iter().all(|t| self.is_accessor(t)) {
                    if accessors.is_empty() {
                        accessors = found;
                    }
                } else {
                    return found;
                }
            }
            n -= 1;
        }
        accessors
    }

    /// A method whose body is one line that calls no project function
    /// and does no arithmetic: it returns what the object holds.
    fn is_accessor(&self, t: &Target) -> bool {
        if matches!(t.how, How::Crash | How::Ambiguous)
            || t.def.owner.is_none()
            || t.def.kind != DefKind::Function
        {
            return false;
        }
        let Some(lines) = self.project.lines(&t.file) else {
            return false;
        };
        let body = body_lines(&lines, &t.def);
        let Some(&only) = body.first().filter(|_| body.len() == 1) else {
            return false;
        };
        let code = code_only(&lines[only as usize - 1]);
        (code.contains("self.") || code.contains("this."))
            && !self.computes(t)
            && expr::binary_ops(&code).is_empty()
    }

    /// Targets for what one line calls.
    fn on_line(
        &self,
        scope: &Scope,
        test_words: &[String],
        message: &str,
        depth: usize,
    ) -> Vec<Target> {
        let text = &scope.lines[scope.line as usize - 1];
        let mut out: Vec<Target> = Vec::new();
        let push = |t: Target, out: &mut Vec<Target>| {
            if !out.iter().any(|o| o.key() == t.key()) {
                out.push(t);
            }
        };
        // Operators first: `a + b == c` checks what `+` made.
        for op in expr::binary_ops(text) {
            if matches!(op.op, "==" | "!=" | "<" | "<=" | ">" | ">=") && !out.is_empty() {
                continue;
            }
            for t in self.operator(scope, &op) {
                push(t, &mut out);
            }
        }
        // A property read on a project object (`d.isInLeapYear`, a JS
        // getter or a Python `@property`) that computes its value with
        // project code: that value is what the line checks.
        for (base, name) in expr::members(text) {
            if let Some(ty) = self.type_of(scope, &base)
                && let Some(t) = self.method_of(&ty, &name, scope.lang)
                && t.def.kind == DefKind::Function
                && self.computes(&t)
            {
                for t in self.finish(vec![t], test_words) {
                    push(t, &mut out);
                }
            }
        }
        let mut constructors = Vec::new();
        for call in expr::calls(text) {
            let resolved = self.call(scope, &call, test_words, message, depth);
            for t in resolved {
                // Constructors matter less than what is done with the
                // object: keep them last.
                if t.def.name == "__init__" || t.def.name == "constructor" {
                    constructors.push(t);
                } else {
                    push(t, &mut out);
                }
            }
        }
        for t in constructors {
            push(t, &mut out);
        }
        out
    }

    /// The function that writes the output line a text comparison found
    /// different (`'Options' != 'Options:'`, `assert 'X:' in '…X…'`): the
    /// project string literal the line is made of (`"Options"`), then the
    /// call that literal is passed to, followed along the parameter that
    /// carries it (at most three calls down) to where it is written.
    pub fn text_producer(&self, test_file: &str, message: &str) -> Vec<Target> {
        let Some(lang) = Lang::family_of(test_file) else {
            return Vec::new();
        };
        let mut found: Vec<(Target, String)> = Vec::new();
        for text in differing_text(message) {
            for (file, n) in self.literal_sites(&text, lang) {
                if let Some(t) = self.follow_text(&file, n, &text) {
                    found.push((t, text.clone()));
                }
            }
            if !found.is_empty() {
                break;
            }
        }
        // The place most literals lead to.
        let mut best: Option<(usize, &Target, &str)> = None;
        for (t, text) in &found {
            let n = found
                .iter()
                .filter(|(o, _)| o.key() == t.key() && o.def.start == t.def.start)
                .count();
            if best.is_none_or(|(m, _, _)| n > m) {
                best = Some((n, t, text));
            }
        }
        best.map(|(_, t, text)| {
            let mut t = t.clone();
            t.how = How::Text;
            t.via.insert(0, format!("the differing text `{text}`"));
            t
        })
        .into_iter()
        .collect()
    }

    /// Project source lines (`lang`) holding `text` as a whole string
    /// literal.
    fn literal_sites(&self, text: &str, lang: Lang) -> Vec<(String, u32)> {
        let key = (text.to_string(), lang);
        if let Some(hit) = self.literals.borrow().get(&key) {
            return hit.clone();
        }
        let found = self.search_literal(text, lang);
        self.literals.borrow_mut().insert(key, found.clone());
        found
    }

    fn search_literal(&self, text: &str, lang: Lang) -> Vec<(String, u32)> {
        let quoted = [format!("\"{text}\""), format!("'{text}'")];
        let mut out = Vec::new();
        for file in self.project.files() {
            if Lang::family_of(file) != Some(lang) || !self.project.is_source(file) {
                continue;
            }
            let Some(lines) = self.project.lines(file) else {
                continue;
            };
            for (i, l) in lines.iter().enumerate() {
                if quoted.iter().any(|q| l.contains(q.as_str())) {
                    out.push((file.clone(), i as u32 + 1));
                    if out.len() > 20 {
                        return out;
                    }
                }
            }
        }
        out
    }

    /// From a line that passes a literal to a project function, down the
    /// parameter that carries it to the function that writes it.
    fn follow_text(&self, file: &str, line: u32, text: &str) -> Option<Target> {
        let scope = self.scope(file, line)?;
        let code = code_only(scope.lines.get(line as usize - 1)?);
        let mut current: Option<Target> = None;
        for call in expr::calls(&code) {
            if let Some(t) = self.callee(&scope, &call, None) {
                current = Some(t);
                break;
            }
        }
        let mut t = current?;
        t.via.push(format!("`{text}` is passed from {file}:{line}"));
        for _ in 0..3 {
            let params: Vec<String> = t
                .def
                .params
                .iter()
                .map(|(n, _)| n.clone())
                .filter(|n| !matches!(n.as_str(), "self" | "cls" | "this"))
                .collect();
            let Some(lines) = self.project.lines(&t.file) else {
                break;
            };
            let mut next: Option<Target> = None;
            'body: for n in body_lines(&lines, &t.def) {
                let Some(mut inner) = self.scope(&t.file, n) else {
                    continue;
                };
                inner.this_type = t.receiver.clone();
                let code = code_only(&lines[n as usize - 1]);
                if !expr::names(&code).iter().any(|v| params.contains(v)) {
                    continue;
                }
                for call in expr::calls(&code) {
                    if let Some(c) = self.callee(&inner, &call, Some(&t)) {
                        next = Some(c);
                        break 'body;
                    }
                }
            }
            match next {
                Some(mut c) => {
                    c.via = t.via.clone();
                    c.via.push(format!(
                        "passed on by {} ({}:{})",
                        t.label(),
                        t.file,
                        t.def.lines()
                    ));
                    t = c;
                }
                None => break,
            }
        }
        Some(t)
    }

    /// What a call reaches without following it: as the text shows it,
    /// else the one project function with that name; never `not`.
    fn callee(&self, scope: &Scope, call: &Call, not: Option<&Target>) -> Option<Target> {
        let other = |c: &Target| not.is_none_or(|n| c.key() != n.key());
        self.call_shallow(scope, call)
            .into_iter()
            .find(other)
            .or_else(|| {
                let found =
                    self.by_name(&call.name, scope.lang, call.receiver.is_some(), &scope.file);
                (found.len() == 1 && found[0].how == How::UniqueName)
                    .then(|| found.into_iter().next())
                    .flatten()
                    .filter(other)
            })
    }

    /// Whether a definition's body calls project code (a getter that
    /// computes, rather than one that hands back stored data).
    fn computes(&self, t: &Target) -> bool {
        let Some(lines) = self.project.lines(&t.file) else {
            return false;
        };
        body_lines(&lines, &t.def).into_iter().any(|n| {
            self.scope(&t.file, n).is_some_and(|scope| {
                expr::calls(&lines[n as usize - 1]).iter().any(|c| {
                    self.call_shallow(&scope, c)
                        .iter()
                        .any(|c| c.key() != t.key())
                })
            })
        })
    }

    /// Targets of a binary operator whose operand is a project class.
    fn operator(&self, scope: &Scope, op: &expr::BinOp) -> Vec<Target> {
        let methods: Vec<&str> = match scope.lang {
            Lang::Python => match python_dunder(op.op) {
                Some((m, r)) => {
                    let mut v = vec![m];
                    v.extend(r);
                    v
                }
                None => return Vec::new(),
            },
            Lang::Rust => match rust_op_method(op.op) {
                Some(m) => vec![m],
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let sides = [
            (&op.left, methods[0]),
            (&op.right, *methods.last().unwrap()),
        ];
        for (operand, method) in sides {
            if let Some(ty) = self.type_of(scope, operand)
                && let Some(t) = self.method_of(&ty, method, scope.lang)
            {
                return vec![t];
            }
        }
        Vec::new()
    }

    /// A method `name` of project type `ty` (or its bases), as a target.
    fn method_of(&self, ty: &str, name: &str, lang: Lang) -> Option<Target> {
        let mut seen = BTreeSet::new();
        // Bases in the order written, nearest first (Python's method
        // resolution order in the usual cases).
        let mut queue = std::collections::VecDeque::from([ty.to_string()]);
        while let Some(t) = queue.pop_front() {
            if !seen.insert(t.clone()) || seen.len() > 8 {
                continue;
            }
            let hits: Vec<(String, Def)> = self
                .project
                .named(name, lang)
                .into_iter()
                .filter(|(_, d)| d.owner.as_deref() == Some(t.as_str()))
                .collect();
            if let Some((file, def)) = hits.into_iter().next() {
                let def = self.unalias(&file, def);
                let receiver = (t != ty).then(|| ty.to_string());
                return Some(Target {
                    file,
                    def,
                    how: How::Typed,
                    via: Vec::new(),
                    alternatives: Vec::new(),
                    receiver,
                });
            }
            for (_, class) in self.project.named(&t, lang) {
                if class.kind == DefKind::Type {
                    queue.extend(class.bases.iter().cloned());
                }
            }
        }
        None
    }

    /// `__radd__ = __add__`: the definition it aliases.
    fn unalias(&self, file: &str, def: Def) -> Def {
        let Some(target) = &def.alias_of else {
            return def;
        };
        self.project
            .defs(file)
            .iter()
            .find(|d| &d.name == target && d.owner == def.owner && d.alias_of.is_none())
            .cloned()
            .unwrap_or(def)
    }

    /// Targets of one call.
    fn call(
        &self,
        scope: &Scope,
        call: &Call,
        test_words: &[String],
        message: &str,
        depth: usize,
    ) -> Vec<Target> {
        let lang = scope.lang;
        match &call.receiver {
            Some(recv) => {
                // A module namespace: `m.f()`, `pkg.F()`, `module::f()`.
                if let Expr::Name(n) = &**recv {
                    match self.binding(&scope.file, n) {
                        Some(Binding::Module(files)) => {
                            return self.in_files(&files, &call.name, How::Imported);
                        }
                        Some(Binding::External) => return Vec::new(),
                        _ => {}
                    }
                }
                match self.type_of(scope, recv) {
                    Some(ty) => match self.method_of(&ty, &call.name, lang) {
                        Some(t) => self.finish(vec![t], test_words),
                        None if self.is_project_type(&ty, lang) => {
                            self.by_name(&call.name, lang, true, &scope.file)
                        }
                        // A known type that is not the project's (`t
                        // *testing.T`, `assert`): nothing to fix there.
                        None => Vec::new(),
                    },
                    None => {
                        let found = self.by_name(&call.name, lang, true, &scope.file);
                        self.finish(found, test_words)
                    }
                }
            }
            None => {
                // Imported by name.
                if let Some(b) = self.binding(&scope.file, &call.name) {
                    return match b {
                        Binding::Symbol { file, symbol } => {
                            let found = self
                                .export(&file, &symbol, 0)
                                .map(|(f, d)| self.as_target(f, d, How::Imported))
                                .into_iter()
                                .flatten()
                                .collect();
                            self.finish(found, test_words)
                        }
                        _ => Vec::new(),
                    };
                }
                // Defined in the same file.
                let own = self.project.defs(&scope.file);
                if let Some(def) = own
                    .iter()
                    .find(|d| d.name == call.name && d.owner.is_none())
                    .cloned()
                {
                    if is_test_path(&scope.file) || def.is_test {
                        return self.through_helper(&scope.file, &def, test_words, message, depth);
                    }
                    return self.finish(
                        self.as_target(scope.file.clone(), def, How::Local)
                            .into_iter()
                            .collect(),
                        test_words,
                    );
                }
                // Go: the same package is the same directory.
                if lang == Lang::Go {
                    let found =
                        self.in_files(&self.go_package(&scope.file), &call.name, How::Local);
                    if !found.is_empty() {
                        return self.finish(found, test_words);
                    }
                }
                let found = self.by_name(&call.name, lang, false, &scope.file);
                self.finish(found, test_words)
            }
        }
    }

    /// Read through a helper defined in test code: the line of it that
    /// printed the message when one does, else all of its lines from the
    /// last up.
    fn through_helper(
        &self,
        file: &str,
        def: &Def,
        test_words: &[String],
        message: &str,
        depth: usize,
    ) -> Vec<Target> {
        if depth >= 2 {
            return Vec::new();
        }
        let Some(lines) = self.project.lines(file) else {
            return Vec::new();
        };
        let body: Vec<u32> = (def.start + 1..=def.end).collect();
        let first_message_line = message
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let printed_here = body.iter().copied().find(|&n| {
            let l = &lines[n as usize - 1];
            literal_prefixes(l)
                .iter()
                .any(|p| p.len() >= 4 && first_message_line.contains(p.as_str()))
        });
        let order: Vec<u32> = match printed_here {
            Some(n) => vec![n],
            None => body.iter().rev().copied().collect(),
        };
        let helper = format!("test helper {} ({}:{})", def.name, file, def.start);
        for n in order {
            let mut found = self.read_up_from(file, n, test_words, message, depth + 1);
            if !found.is_empty() {
                for t in &mut found {
                    t.via.insert(0, helper.clone());
                }
                return found;
            }
        }
        Vec::new()
    }

    /// A definition as a target: never test code; git-ignored build output
    /// is mapped to the source definition with the same name.
    fn as_target(&self, file: String, def: Def, how: How) -> Option<Target> {
        if self.project.is_source(&file) && !def.is_test {
            return Some(Target {
                def: self.unalias(&file, def),
                file,
                how,
                via: Vec::new(),
                alternatives: Vec::new(),
                receiver: None,
            });
        }
        if !self.project.is_ignored(&file) {
            return None;
        }
        let base = file.rsplit('/').next().unwrap_or(&file).to_string();
        let mut hits: Vec<(String, Def)> = self
            .project
            .named(&def.name, Lang::family_of(&file)?)
            .into_iter()
            .filter(|(_, d)| d.owner == def.owner && d.kind == def.kind)
            .collect();
        hits.sort_by_key(|(f, _)| !f.ends_with(&format!("/{base}")) && *f != base);
        let (src, sdef) = hits.into_iter().next()?;
        Some(Target {
            file: src,
            def: sdef,
            how,
            via: vec![format!("built into {file} (git-ignored)")],
            alternatives: Vec::new(),
            receiver: None,
        })
    }

    /// The Go files of `file`'s package (its directory).
    fn go_package(&self, file: &str) -> Vec<String> {
        let dir = parent_dir(file);
        self.project
            .files()
            .iter()
            .filter(|f| parent_dir(f) == dir && Lang::family_of(f) == Some(Lang::Go))
            .cloned()
            .collect()
    }

    /// Definitions named `name` in `files`.
    fn in_files(&self, files: &[String], name: &str, how: How) -> Vec<Target> {
        let mut out = Vec::new();
        for f in files {
            if let Some(d) = self
                .project
                .defs(f)
                .iter()
                .find(|d| d.name == name && d.owner.is_none())
            {
                out.extend(self.as_target(f.clone(), d.clone(), how));
            } else if let Some((file, def)) = self.export(f, name, 0) {
                out.extend(self.as_target(file, def, how));
            }
        }
        out
    }

    /// By name alone: one definition → `UniqueName`; several → those in
    /// files next to the caller when that narrows it to one, else all of
    /// them as `Ambiguous`.
    fn by_name(&self, name: &str, lang: Lang, method: bool, from: &str) -> Vec<Target> {
        let mut hits: Vec<(String, Def)> = self
            .project
            .named(name, lang)
            .into_iter()
            .filter(|(_, d)| d.kind == DefKind::Function && d.owner.is_some() == method)
            .collect();
        if hits.is_empty() {
            hits = self
                .project
                .named(name, lang)
                .into_iter()
                .filter(|(_, d)| d.kind == DefKind::Function)
                .collect();
        }
        match hits.len() {
            0 => Vec::new(),
            1 => {
                let (f, d) = hits.remove(0);
                self.as_target(f, d, How::UniqueName).into_iter().collect()
            }
            _ => {
                let near: Vec<&(String, Def)> =
                    hits.iter().filter(|(f, _)| shares_dir(f, from)).collect();
                if near.len() == 1 {
                    let (f, d) = near[0].clone();
                    return self.as_target(f, d, How::UniqueName).into_iter().collect();
                }
                let labels: Vec<String> = hits
                    .iter()
                    .map(|(f, d)| format!("{f}:{}", d.name))
                    .collect();
                hits.into_iter()
                    .filter_map(|(f, d)| self.as_target(f, d, How::Ambiguous))
                    .map(|mut t| {
                        t.alternatives = labels.clone();
                        t
                    })
                    .collect()
            }
        }
    }

    fn is_project_type(&self, ty: &str, lang: Lang) -> bool {
        self.project
            .named(ty, lang)
            .iter()
            .any(|(_, d)| d.kind == DefKind::Type)
    }

    /// Follow one-line wrappers, then a call whose name shares a word with
    /// the failing test's name; keep the wrappers as context.
    fn finish(&self, targets: Vec<Target>, test_words: &[String]) -> Vec<Target> {
        targets
            .into_iter()
            .map(|t| self.deepen(t, test_words, 0))
            .collect()
    }

    fn deepen(&self, t: Target, test_words: &[String], hops: usize) -> Target {
        if hops >= 4 || t.how == How::Ambiguous {
            return t;
        }
        let Some(lines) = self.project.lines(&t.file) else {
            return t;
        };
        let body = body_lines(&lines, &t.def);
        let callees = |n: u32| -> Vec<Target> {
            let Some(mut scope) = self.scope(&t.file, n) else {
                return Vec::new();
            };
            scope.this_type = t.receiver.clone();
            let mut out = Vec::new();
            for call in expr::calls(&scope.lines[n as usize - 1]) {
                for c in self.call_shallow(&scope, &call) {
                    if c.key() != t.key() && !out.iter().any(|o: &Target| o.key() == c.key()) {
                        out.push(c);
                    }
                }
            }
            out
        };
        // A wrapper: one line of body that calls one project function.
        if body.len() == 1 {
            let inner = callees(body[0]);
            if inner.len() == 1 {
                let mut next = inner.into_iter().next().unwrap();
                // Reached through the wrapper: the wrapper's evidence.
                next.how = t.how;
                let mut via = t.via.clone();
                via.push(format!(
                    "wrapper {} ({}:{})",
                    t.label(),
                    t.file,
                    t.def.lines()
                ));
                next.via = via;
                return self.deepen(next, test_words, hops + 1);
            }
        }
        // A dispatcher: of the project functions it calls, exactly one
        // shares a word with the test's name (`test_caret` → `matches_caret`).
        if !test_words.is_empty() && body.len() <= 60 {
            // Words of the function and of its class say what it is, not
            // which of its callees the test is about (`test_range_fail`
            // on `FloatRange.convert` is not about `_describe_range`).
            let own: BTreeSet<String> =
                [Some(&t.def.name), t.def.owner.as_ref(), t.receiver.as_ref()]
                    .into_iter()
                    .flatten()
                    .flat_map(|n| words(n))
                    .collect();
            let mut all: Vec<Target> = Vec::new();
            for n in &body {
                for c in callees(*n) {
                    if !all.iter().any(|o| o.key() == c.key()) {
                        all.push(c);
                    }
                }
            }
            let matching: Vec<Target> = all
                .into_iter()
                .filter(|c| {
                    words(&c.def.name)
                        .iter()
                        .any(|w| !own.contains(w) && test_words.contains(w))
                })
                .collect();
            if matching.len() == 1 {
                let mut next = matching.into_iter().next().unwrap();
                next.how = How::NameAffinity;
                let mut via = t.via.clone();
                via.push(format!(
                    "called from {} ({}:{})",
                    t.label(),
                    t.file,
                    t.def.lines()
                ));
                next.via = via;
                return next;
            }
        }
        t
    }

    /// A call's targets without following anything (for wrappers).
    fn call_shallow(&self, scope: &Scope, call: &Call) -> Vec<Target> {
        let lang = scope.lang;
        match &call.receiver {
            Some(recv) => {
                if let Expr::Name(n) = &**recv
                    && let Some(Binding::Module(files)) = self.binding(&scope.file, n)
                {
                    return self.in_files(&files, &call.name, How::Imported);
                }
                if let Expr::Name(n) = &**recv
                    && !matches!(n.as_str(), "self" | "this")
                    && self.project.defs(&scope.file).iter().all(|d| &d.name != n)
                    && lang == Lang::Rust
                    && call.path
                {
                    // `eval::matches_req(…)`: a module path.
                    let files: Vec<String> = self
                        .project
                        .files()
                        .iter()
                        .filter(|f| {
                            f.ends_with(&format!("/{n}.rs")) || f.ends_with(&format!("/{n}/mod.rs"))
                        })
                        .cloned()
                        .collect();
                    if !files.is_empty() {
                        return self.in_files(&files, &call.name, How::Imported);
                    }
                }
                match self.type_of(scope, recv) {
                    Some(ty) => self.method_of(&ty, &call.name, lang).into_iter().collect(),
                    None => Vec::new(),
                }
            }
            None => {
                if let Some(Binding::Symbol { file, symbol }) =
                    self.binding(&scope.file, &call.name)
                {
                    return self
                        .export(&file, &symbol, 0)
                        .and_then(|(f, d)| self.as_target(f, d, How::Imported))
                        .into_iter()
                        .collect();
                }
                let own = self.project.defs(&scope.file);
                if let Some(def) = own
                    .iter()
                    .find(|d| d.name == call.name && d.owner.is_none())
                {
                    return self
                        .as_target(scope.file.clone(), def.clone(), How::Local)
                        .into_iter()
                        .collect();
                }
                if lang == Lang::Go {
                    return self.in_files(&self.go_package(&scope.file), &call.name, How::Local);
                }
                Vec::new()
            }
        }
    }

    /// The project type an expression has, when the text shows it.
    fn type_of(&self, scope: &Scope, e: &Expr) -> Option<String> {
        self.type_of_depth(scope, e, 0)
    }

    fn type_of_depth(&self, scope: &Scope, e: &Expr, depth: usize) -> Option<String> {
        if depth > 4 {
            return None;
        }
        let lang = scope.lang;
        match e {
            Expr::Name(n) if matches!(n.as_str(), "self" | "this" | "Self") => scope
                .this_type
                .clone()
                .or_else(|| scope.func.as_ref().and_then(|f| f.owner.clone())),
            Expr::Name(n) => {
                if let Some(t) = self.declared(scope, n, depth) {
                    return Some(t);
                }
                // The class itself (a static call or a constructor).
                match self.binding(&scope.file, n) {
                    Some(Binding::Symbol { file, symbol }) => {
                        if let Some((_, d)) = self.export(&file, &symbol, 0)
                            && d.kind == DefKind::Type
                        {
                            return Some(d.name);
                        }
                        None
                    }
                    Some(_) => None,
                    None => self.is_project_type(n, lang).then(|| n.clone()),
                }
            }
            Expr::New(t) | Expr::Literal(t) => Some(t.clone()),
            Expr::Member(..) | Expr::Unknown => None,
            Expr::Call(call) => {
                // A constructor: `T(…)` (Python), `T::new(…)` handled below.
                if call.receiver.is_none() {
                    if let Some(t) =
                        self.type_of_depth(scope, &Expr::Name(call.name.clone()), depth + 1)
                        && self.is_project_type(&t, lang)
                        && call
                            .name
                            .starts_with(|c: char| c.is_uppercase() || lang == Lang::Python)
                        && self
                            .project
                            .named(&call.name, lang)
                            .iter()
                            .any(|(_, d)| d.kind == DefKind::Type)
                    {
                        return Some(t);
                    }
                    let def = match self.binding(&scope.file, &call.name) {
                        Some(Binding::Symbol { file, symbol }) => {
                            self.export(&file, &symbol, 0).map(|(_, d)| d)
                        }
                        Some(_) => None,
                        None => self
                            .project
                            .defs(&scope.file)
                            .iter()
                            .find(|d| d.name == call.name && d.owner.is_none())
                            .cloned()
                            .or_else(|| {
                                let hits = self.project.named(&call.name, lang);
                                (hits.len() == 1).then(|| hits[0].1.clone())
                            }),
                    }?;
                    if def.kind == DefKind::Type {
                        return Some(def.name);
                    }
                    return def.returns.filter(|r| self.is_project_type(r, lang));
                }
                let recv = call.receiver.as_deref()?;
                // `module.Class(…)`: a class of an imported module.
                if let Expr::Name(n) = recv
                    && let Some(Binding::Module(files)) = self.binding(&scope.file, n)
                {
                    return files.iter().find_map(|f| {
                        self.export(f, &call.name, 0)
                            .filter(|(_, d)| d.kind == DefKind::Type)
                            .map(|(_, d)| d.name)
                    });
                }
                let ty = self.type_of_depth(scope, recv, depth + 1)?;
                let def = self
                    .project
                    .named(&call.name, lang)
                    .into_iter()
                    .find(|(_, d)| d.owner.as_deref() == Some(ty.as_str()))
                    .map(|(_, d)| d);
                match def {
                    Some(d) => match d.returns {
                        Some(r) if r == "Self" => Some(ty),
                        Some(r) => self.is_project_type(&r, lang).then_some(r),
                        // A static factory on the class itself.
                        None if d.is_static && factory_name(&d.name) => Some(ty),
                        None => None,
                    },
                    None if call.path && factory_name(&call.name) => Some(ty),
                    None => None,
                }
            }
        }
    }

    /// The type a local variable or parameter was declared or assigned
    /// with, in the function around the scope's line.
    fn declared(&self, scope: &Scope, var: &str, depth: usize) -> Option<String> {
        if let Some(f) = &scope.func
            && let Some((_, Some(t))) = f.params.iter().find(|(n, _)| n == var)
        {
            return Some(t.clone());
        }
        if let Some(t) = self.parametrized(scope, var, depth) {
            return Some(t);
        }
        let from = scope.func.as_ref().map_or(1, |f| f.start);
        // `var = …`, `let var: T = …`, `const var = …`, `var := …`,
        // `var, err := …`, `var: T = …`.
        let decl = Regex::new(&format!(
            r"(?:^|[\s(;])(?:(?:let|const|var|mut|final|auto)\s+)*{}\s*(?::\s*([^=]+?))?\s*(?:,\s*\w+\s*)*(?::=|=)([^=].*)$",
            regex::escape(var)
        ))
        .ok()?;
        for n in (from..=scope.line).rev() {
            let Some(text) = scope.lines.get(n as usize - 1) else {
                continue;
            };
            let code = code_only(text);
            if !code.contains(var) {
                continue;
            }
            if scope.lang == Lang::Go
                && let Some(c) = re!(r"\bvar\s+(\w+)\s+([\w.*\[\]]+)").captures(&code)
                && &c[1] == var
            {
                return super::defs::type_name(&c[2]);
            }
            let Some(c) = decl.captures(&code) else {
                continue;
            };
            if let Some(t) = c.get(1).and_then(|t| super::defs::type_name(t.as_str())) {
                return Some(t);
            }
            let rhs = expr::rhs(&c[2]);
            let at = Scope {
                line: n,
                ..scope.clone()
            };
            return self.type_of_depth(&at, &rhs, depth + 1);
        }
        None
    }

    /// The project type a pytest test's parameter gets from its
    /// `@pytest.mark.parametrize` rows (`(click.FloatRange(0.5), "1.2")`
    /// for `("type", "value")`): the first row whose value names one.
    fn parametrized(&self, scope: &Scope, var: &str, depth: usize) -> Option<String> {
        let f = scope.func.as_ref()?;
        if scope.lang != Lang::Python || !f.params.iter().any(|(n, _)| n == var) {
            return None;
        }
        let def_line = f.start as usize - 1;
        let first = (def_line.saturating_sub(80)..def_line)
            .rev()
            .take_while(|&k| !scope.lines[k].trim_start().starts_with("def "))
            .find(|&k| scope.lines[k].contains(".parametrize("))?;
        let text = code_lines_joined(&scope.lines[first..def_line]);
        let open = text.find(".parametrize(")? + ".parametrize(".len();
        let args = super::defs::split_top(strip_wrapping(&text[open - 1..], '(', ')'));
        let names: Vec<String> = {
            let raw = scope.lines[first..def_line].join(" ");
            let after = &raw[raw.find(".parametrize(")? + ".parametrize(".len()..];
            let first_arg = super::defs::split_top(after).into_iter().next()?;
            first_arg
                .split([',', '(', ')', '[', ']'])
                .map(|n| n.trim().trim_matches(['"', '\'']).trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        };
        let at = names.iter().position(|n| n == var)?;
        let rows = super::defs::split_top(strip_wrapping(args.get(1)?.trim(), '[', ']'));
        let here = Scope {
            line: f.start,
            ..scope.clone()
        };
        rows.iter().take(20).find_map(|row| {
            let row = row
                .trim()
                .strip_prefix("pytest.param")
                .unwrap_or(row.trim());
            let value = if names.len() > 1 {
                super::defs::split_top(strip_wrapping(row.trim(), '(', ')'))
                    .into_iter()
                    .nth(at)?
            } else {
                row.to_string()
            };
            self.type_of_depth(&here, &expr::rhs(&value), depth + 1)
                .filter(|t| self.is_project_type(t, Lang::Python))
        })
    }

    /// What `name` is bound to in `file` by its imports.
    fn binding(&self, file: &str, name: &str) -> Option<Binding> {
        let key = (file.to_string(), name.to_string());
        if let Some(hit) = self.bindings.borrow().get(&key) {
            return hit.clone();
        }
        let found = self.read_binding(file, name);
        self.bindings.borrow_mut().insert(key, found.clone());
        found
    }

    fn read_binding(&self, file: &str, name: &str) -> Option<Binding> {
        let lines = self.project.lines(file)?;
        match Lang::family_of(file)? {
            Lang::Python => self.python_binding(file, &lines, name),
            Lang::Js => self.js_binding(file, &lines, name),
            Lang::Go => self.go_binding(&lines, name),
            Lang::Rust => self.rust_binding(file, &lines, name),
            _ => None,
        }
    }

    fn python_binding(&self, file: &str, lines: &[String], name: &str) -> Option<Binding> {
        for l in lines {
            if let Some(c) = re!(r"^\s*from\s+(\.*[\w.]*)\s+import\s+\(?([^)#]+)").captures(l) {
                for part in c[2].split(',') {
                    let mut words = part.split_whitespace();
                    let Some(sym) = words.next() else { continue };
                    let local = match (words.next(), words.next()) {
                        (Some("as"), Some(alias)) => alias,
                        _ => sym,
                    };
                    if local != name {
                        continue;
                    }
                    let module = &c[1];
                    // `from pkg import mod` may name a module.
                    if let Some(f) = self.python_module(file, &format!("{module}.{sym}")) {
                        return Some(Binding::Module(vec![f]));
                    }
                    return Some(match self.python_module(file, module) {
                        Some(f) => Binding::Symbol {
                            file: f,
                            symbol: sym.to_string(),
                        },
                        None => Binding::External,
                    });
                }
            }
            if let Some(c) = re!(r"^\s*import\s+([\w.]+)(?:\s+as\s+(\w+))?").captures(l) {
                let module = &c[1];
                let local = c.get(2).map_or_else(
                    || module.split('.').next().unwrap_or(module),
                    |m| m.as_str(),
                );
                if local == name {
                    return Some(match self.python_module(file, module) {
                        Some(f) => Binding::Module(vec![f]),
                        None => Binding::External,
                    });
                }
            }
        }
        None
    }

    /// The project file of a Python module (`a.b` or relative `.b`).
    fn python_module(&self, from: &str, module: &str) -> Option<String> {
        let dots = module.chars().take_while(|&c| c == '.').count();
        let rest = module[dots..].replace('.', "/");
        let mut bases: Vec<String> = Vec::new();
        if dots > 0 {
            let mut dir = parent_dir(from).to_string();
            for _ in 1..dots {
                dir = parent_dir(&dir).to_string();
            }
            bases.push(dir);
        } else {
            bases.extend(["".to_string(), "src".to_string(), "lib".to_string()]);
            // Test directories put their parent on the path (rootdir).
            let mut d = parent_dir(from).to_string();
            while !d.is_empty() {
                bases.push(d.clone());
                d = parent_dir(&d).to_string();
            }
        }
        for base in bases {
            let stem = [base.as_str(), rest.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("/");
            if stem.is_empty() {
                continue;
            }
            for cand in [format!("{stem}.py"), format!("{stem}/__init__.py")] {
                if self.project.contains(&cand) || self.project.is_ignored(&cand) {
                    return Some(cand);
                }
            }
        }
        None
    }

    fn js_binding(&self, file: &str, lines: &[String], name: &str) -> Option<Binding> {
        let text = lines.join("\n");
        for c in re!(r#"(?m)^\s*import\s+(?:type\s+)?(?:([\w$]+)\s*,?\s*)?(?:\*\s+as\s+([\w$]+)|\{([^}]*)\})?\s*from\s*['"]([^'"]+)['"]"#)
        .captures_iter(&text)
        {
            let spec = &c[4];
            let resolved = || match self.js_module(file, spec) {
                Some(f) => (Some(f), false),
                None => (None, !spec.starts_with('.')),
            };
            if c.get(1).is_some_and(|d| d.as_str() == name) {
                return Some(match resolved() {
                    (Some(f), _) => Binding::Symbol {
                        file: f,
                        symbol: "default".into(),
                    },
                    _ => Binding::External,
                });
            }
            if c.get(2).is_some_and(|d| d.as_str() == name) {
                return Some(match resolved() {
                    (Some(f), _) => Binding::Module(vec![f]),
                    _ => Binding::External,
                });
            }
            if let Some(list) = c.get(3)
                && let Some(sym) = named_list(list.as_str(), name, " as ")
            {
                return Some(match resolved() {
                    (Some(f), _) => Binding::Symbol { file: f, symbol: sym },
                    _ => Binding::External,
                });
            }
        }
        for c in re!(r#"(?:const|let|var)\s+(?:([\w$]+)|\{([^}]*)\})\s*=\s*require\(\s*['"]([^'"]+)['"]\s*\)(?:\.([\w$]+))?"#)
        .captures_iter(&text)
        {
            let spec = &c[3];
            let target = self.js_module(file, spec);
            if c.get(1).is_some_and(|d| d.as_str() == name) {
                return Some(match (target, c.get(4)) {
                    (Some(f), Some(member)) => Binding::Symbol {
                        file: f,
                        symbol: member.as_str().to_string(),
                    },
                    (Some(f), None) => Binding::Module(vec![f]),
                    _ => Binding::External,
                });
            }
            if let Some(list) = c.get(2)
                && let Some(sym) = named_list(list.as_str(), name, ":")
            {
                return Some(match target {
                    Some(f) => Binding::Symbol { file: f, symbol: sym },
                    None => Binding::External,
                });
            }
        }
        None
    }

    /// A relative JS module specifier → a file under the root.
    fn js_module(&self, from: &str, spec: &str) -> Option<String> {
        if !spec.starts_with('.') {
            return None;
        }
        let joined = normalize(&format!("{}/{spec}", parent_dir(from)));
        let stem = joined
            .strip_suffix(".js")
            .or_else(|| joined.strip_suffix(".mjs"))
            .or_else(|| joined.strip_suffix(".cjs"))
            .unwrap_or(&joined);
        let mut cands = vec![joined.clone()];
        for ext in ["js", "mjs", "cjs", "ts", "tsx", "jsx", "mts", "cts"] {
            cands.push(format!("{stem}.{ext}"));
        }
        for ext in ["js", "ts", "mjs", "cjs", "tsx", "jsx"] {
            cands.push(format!("{joined}/index.{ext}"));
        }
        cands
            .into_iter()
            .find(|c| self.project.contains(c) || self.project.is_ignored(c))
    }

    fn go_binding(&self, lines: &[String], name: &str) -> Option<Binding> {
        let text = lines.join("\n");
        for c in re!(r#"(?m)^\s*(?:import\s+)?(?:(\w+)\s+)?"([\w./-]+)"\s*$"#).captures_iter(&text)
        {
            let path = &c[2];
            let local = c
                .get(1)
                .map_or_else(|| path.rsplit('/').next().unwrap_or(path), |m| m.as_str());
            if local != name {
                continue;
            }
            // A package of this module: the directory whose path the
            // import ends with.
            let files: Vec<String> = self
                .project
                .files()
                .iter()
                .filter(|f| {
                    Lang::family_of(f) == Some(Lang::Go) && !is_test_path(f) && {
                        let dir = parent_dir(f);
                        !dir.is_empty() && path.ends_with(&format!("/{dir}"))
                    }
                })
                .cloned()
                .collect();
            return Some(if files.is_empty() {
                Binding::External
            } else {
                Binding::Module(files)
            });
        }
        None
    }

    /// Rust `use` declarations: `use crate::a::f`, `use my_crate::{A, b::C
    /// as D}`, `use super::g`, `use a::b` (a module), relative to the crate
    /// root (the nearest `Cargo.toml`'s `src/lib.rs` or `src/main.rs`).
    fn rust_binding(&self, file: &str, lines: &[String], name: &str) -> Option<Binding> {
        let text = lines.join("\n");
        for c in re!(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);").captures_iter(&text) {
            for path in expand_use(c[1].trim()) {
                let (segments, local) = match path.split_once(" as ") {
                    Some((p, alias)) => (p.trim().to_string(), alias.trim().to_string()),
                    None => {
                        let last = path.rsplit("::").next().unwrap_or(&path).to_string();
                        (path.clone(), last)
                    }
                };
                if local != name {
                    continue;
                }
                let parts: Vec<&str> = segments.split("::").collect();
                let Some((symbol, module)) = parts.split_last() else {
                    continue;
                };
                // `use crate::eval;` names a module.
                if let Some(f) = self.rust_module(file, &parts) {
                    return Some(Binding::Module(vec![f]));
                }
                return Some(match self.rust_module(file, module) {
                    Some(f) => Binding::Symbol {
                        file: f,
                        symbol: symbol.to_string(),
                    },
                    None => Binding::External,
                });
            }
        }
        None
    }

    /// The file of a Rust module path seen from `from`.
    fn rust_module(&self, from: &str, path: &[&str]) -> Option<String> {
        // The crate: the nearest directory with a Cargo.toml.
        let mut dir = parent_dir(from).to_string();
        let manifest = loop {
            let manifest = if dir.is_empty() {
                "Cargo.toml".to_string()
            } else {
                format!("{dir}/Cargo.toml")
            };
            if self.project.contains(&manifest) {
                break manifest;
            }
            if dir.is_empty() {
                return None;
            }
            dir = parent_dir(&dir).to_string();
        };
        let src = if dir.is_empty() {
            "src".to_string()
        } else {
            format!("{dir}/src")
        };
        let crate_name = self
            .project
            .lines(&manifest)
            .and_then(|l| crate::project::rust_crate_name(&l.join("\n")));
        let root_file = [format!("{src}/lib.rs"), format!("{src}/main.rs")]
            .into_iter()
            .find(|f| self.project.contains(f))?;
        // Where module paths start: the crate root, or this file's module.
        let (mut file, rest): (String, &[&str]) = match path.first() {
            None => return None,
            Some(&"crate") => (root_file.clone(), &path[1..]),
            Some(first) if crate_name.as_deref() == Some(*first) => (root_file.clone(), &path[1..]),
            Some(&"self") => (from.to_string(), &path[1..]),
            Some(&"super") => {
                let up = parent_dir(&module_dir(from)).to_string();
                let file = [format!("{up}.rs"), format!("{up}/mod.rs")]
                    .into_iter()
                    .find(|f| self.project.contains(f))
                    .unwrap_or(root_file.clone());
                (file, &path[1..])
            }
            // 2018 paths from the crate root (`parse::Error` in lib.rs);
            // from a test target the first segment is another crate.
            Some(_) if from.starts_with(&src) => (root_file.clone(), path),
            Some(_) => return None,
        };
        for seg in rest {
            let dir = module_dir(&file);
            file = [format!("{dir}/{seg}.rs"), format!("{dir}/{seg}/mod.rs")]
                .into_iter()
                .find(|f| self.project.contains(f))?;
        }
        Some(file)
    }

    /// The definition `symbol` exported by `file`, following re-exports
    /// (JS `export … from`, `module.exports = { … }`, Python `__init__`
    /// imports).
    fn export(&self, file: &str, symbol: &str, depth: usize) -> Option<(String, Def)> {
        if depth > 6 {
            return None;
        }
        let defs = self.project.defs(file);
        let lines = self.project.lines(file)?;
        let text = lines.join("\n");
        let lang = Lang::family_of(file);
        let mut symbol = symbol.to_string();
        if symbol == "default" {
            // `export default class X`, `export default X;`, `module.exports = X`.
            let named = lines.iter().find_map(|l| {
                let t = l.trim_start();
                if let Some(rest) = t.strip_prefix("export default ") {
                    let rest = rest
                        .trim_start_matches("abstract ")
                        .trim_start_matches("async ");
                    let rest = rest
                        .strip_prefix("class ")
                        .or_else(|| rest.strip_prefix("function "))
                        .unwrap_or(rest);
                    return rest
                        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                        .next()
                        .filter(|s| !s.is_empty())
                        .map(str::to_string);
                }
                re!(r"^\s*module\.exports\s*=\s*([\w$]+)\s*;?\s*$")
                    .captures(l)
                    .map(|c| c[1].to_string())
            });
            symbol = named?;
        }
        if let Some(d) = defs.iter().find(|d| d.name == symbol && d.owner.is_none()) {
            return Some((file.to_string(), d.clone()));
        }
        if lang == Some(Lang::Js) {
            for c in re!(r#"export\s*\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]"#).captures_iter(&text) {
                if let Some(orig) = named_list(&c[1], &symbol, " as ")
                    && let Some(f) = self.js_module(file, &c[2])
                {
                    return self.export(&f, &orig, depth + 1);
                }
            }
            for c in re!(r#"export\s*\*\s*from\s*['"]([^'"]+)['"]"#).captures_iter(&text) {
                if let Some(f) = self.js_module(file, &c[1])
                    && let Some(found) = self.export(&f, &symbol, depth + 1)
                {
                    return Some(found);
                }
            }
        }
        // The name bound in this file by its own imports.
        match self.binding(file, &symbol)? {
            Binding::Symbol { file: f, symbol: s } if f != file => self.export(&f, &s, depth + 1),
            _ => None,
        }
    }
}

/// Lines joined as one line of code (strings blanked, comments cut).
fn code_lines_joined(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| code_only(l))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` without one pair of `open`…`close` around it (or without the
/// `open` it starts with and everything after its matching close).
fn strip_wrapping(text: &str, open: char, close: char) -> &str {
    let t = text.trim();
    let Some(inner) = t.strip_prefix(open) else {
        return t;
    };
    let mut depth = 1;
    for (i, c) in inner.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return &inner[..i];
            }
        }
    }
    inner
}

/// The line of text a failing comparison expected but did not get, as
/// the parts both sides share (`'Options' != 'Options:'` → `Options`),
/// from pytest's and unittest's messages; longest first.
fn differing_text(message: &str) -> Vec<String> {
    static PAIR: OnceLock<Regex> = OnceLock::new();
    static IN: OnceLock<Regex> = OnceLock::new();
    static MISSING: OnceLock<Regex> = OnceLock::new();
    let lit = r#"'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)""#;
    let pair = PAIR.get_or_init(|| compile(&format!(r"(?:{lit}) != (?:{lit})")));
    let inside = IN.get_or_init(|| compile(&format!(r"assert (?:{lit}) (?:not )?in (?:{lit})")));
    let missing = MISSING.get_or_init(|| compile(&format!(r"(?:{lit}) is not in list")));
    let mut pairs: Vec<(String, String)> = Vec::new();
    let text = |c: &regex::Captures, a: usize| {
        c.get(a)
            .or_else(|| c.get(a + 1))
            .map(|m| m.as_str().to_string())
    };
    for c in pair.captures_iter(message) {
        if let (Some(a), Some(b)) = (text(&c, 1), text(&c, 3)) {
            pairs.push((a, b));
        }
    }
    for c in missing.captures_iter(message) {
        if let Some(want) = text(&c, 1) {
            pairs.push((want.clone(), want));
        }
    }
    for c in inside.captures_iter(message) {
        let (Some(want), Some(whole)) = (text(&c, 1), text(&c, 3)) else {
            continue;
        };
        // The line of the output most like the expected fragment.
        if let Some(line) = whole.split("\\n").max_by_key(|l| common_prefix(l, &want)) {
            pairs.push((line.to_string(), want));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (a, b) in pairs {
        let n = common_prefix(&a, &b);
        let shared = a[..n].trim().trim_end_matches([':', ',', '.', ';']).trim();
        if shared.chars().count() >= 4
            && shared.chars().any(char::is_alphabetic)
            && !out.iter().any(|o| o == shared)
        {
            out.push(shared.to_string());
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// Bytes two strings share at their start (on a character boundary).
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .last()
        .map_or(0, |((i, x), _)| i + x.len_utf8())
}

/// The lines of a definition's body that hold code, 1-based: after the
/// signature (a Rust `where` clause, a signature over several lines),
/// without lone braces.
fn body_lines(lines: &[String], def: &Def) -> Vec<u32> {
    let code = |n: u32| code_only(lines.get(n as usize - 1).map_or("", String::as_str));
    // The line that opens the body: the first with `{`, or a Python
    // signature's closing `:`.
    let opens = (def.start..=def.end)
        .find(|&n| {
            let c = code(n);
            let c = c.trim_end();
            c.contains('{') || c.ends_with(':')
        })
        .unwrap_or(def.start);
    (opens + 1..=def.end)
        .filter(|&n| {
            let c = code(n);
            let c = c.trim();
            !c.is_empty() && !matches!(c, "}" | "};" | "{" | "\"\"")
        })
        .collect()
}

/// The directory a Rust module's children live in: `src/lib.rs` → `src`,
/// `src/a.rs` and `src/a/mod.rs` → `src/a`.
fn module_dir(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    if matches!(name, "lib.rs" | "main.rs" | "mod.rs") {
        parent_dir(file).to_string()
    } else {
        file.trim_end_matches(".rs").to_string()
    }
}

/// `a::{b, c::{d, e as f}}` → `a::b`, `a::c::d`, `a::c::e as f`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let prefix = tree[..open].trim_end_matches("::").trim();
    let inner = tree[open + 1..].trim_end().trim_end_matches('}');
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for ch in inner.chars() {
        match ch {
            '{' => {
                depth += 1;
                cur.push(ch);
            }
            '}' => {
                depth -= 1;
                cur.push(ch);
            }
            ',' if depth == 0 => parts.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            let full = if p == "self" {
                prefix.to_string()
            } else {
                format!("{prefix}::{p}")
            };
            expand_use(&full)
        })
        .collect()
}

/// `a, b as c` (ESM) or `a, b: c` (destructuring): the original name bound
/// to `local`.
fn named_list(list: &str, local: &str, sep: &str) -> Option<String> {
    for part in list.split(',') {
        let part = part.trim();
        let (orig, bound) = match part.split_once(sep) {
            Some((o, b)) => (o.trim(), b.trim()),
            None => (part, part),
        };
        if bound == local && !orig.is_empty() {
            return Some(orig.trim_start_matches("type ").to_string());
        }
    }
    None
}

fn factory_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "new", "from", "create", "of", "parse", "make", "build", "with", "default", "init",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
}

fn shares_dir(a: &str, b: &str) -> bool {
    let (da, db) = (parent_dir(a), parent_dir(b));
    da == db || (!da.is_empty() && (db.starts_with(da) || da.starts_with(db)))
}

/// The constant text before the first placeholder of each string literal
/// on a line (`"did not match {}"` → `did not match `).
fn literal_prefixes(line: &str) -> Vec<String> {
    re!(r#""((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)'|`([^`]*)`"#)
        .captures_iter(line)
        .filter_map(|c| c.get(1).or(c.get(2)).or(c.get(3)))
        .map(|m| {
            let s = m.as_str();
            let cut = s.find(['{', '%', '$']).unwrap_or(s.len());
            s[..cut].trim().to_string()
        })
        .collect()
}

/// Lower-case words of an identifier or test name (`test_caret`,
/// `TestScanBytes`, `Duration#toISOTime formats hours`), without the words
/// every test name has.
pub fn words(name: &str) -> Vec<String> {
    const COMMON: &[&str] = &[
        "test", "tests", "it", "should", "when", "with", "and", "the", "a", "an", "of", "to", "in",
        "is", "for", "on", "returns", "return", "works", "case", "get", "set", "does", "not",
        // What a test expects to happen, not what the code is called.
        "fail", "fails", "failure", "error", "errors", "raise", "raises", "invalid", "valid",
    ];
    let mut out = crate::project::words(name);
    out.retain(|w| {
        w.len() >= 3 && !COMMON.contains(&w.as_str()) && !w.chars().all(|c| c.is_ascii_digit())
    });
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_words() {
        assert_eq!(words("test_caret"), ["caret"]);
        assert_eq!(words("TestScanBytes"), ["scan", "bytes"]);
        assert_eq!(words("matches_caret"), ["matches", "caret"]);
        assert_eq!(
            words("Duration#toISOTime formats hours"),
            ["duration", "to", "isotime", "formats", "hours"]
                .iter()
                .filter(|w| w.len() >= 3)
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn use_trees() {
        assert_eq!(
            expand_use("semverish::{Version, VersionReq as Req}"),
            ["semverish::Version", "semverish::VersionReq as Req"]
        );
        assert_eq!(
            expand_use("crate::{a::{b, c}, d, self}"),
            ["crate::a::b", "crate::a::c", "crate::d", "crate"]
        );
        assert_eq!(expand_use("super::f"), ["super::f"]);
        assert_eq!(module_dir("src/lib.rs"), "src");
        assert_eq!(module_dir("src/a/mod.rs"), "src/a");
        assert_eq!(module_dir("src/a/b.rs"), "src/a/b");
    }

    #[test]
    fn literal_prefixes_cut_at_placeholders() {
        assert_eq!(
            literal_prefixes(r#"assert!(req.matches(&parsed), "did not match {}", string);"#),
            ["did not match"]
        );
        assert_eq!(literal_prefixes("t.Errorf('x = %v', x)"), ["x ="]);
    }
}
