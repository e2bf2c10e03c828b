//! The AI-issue scan (L0.5, REFERENCE.md "AI-issue scan — 8 categories, 24
//! checks") run by the code-validation gate IMPL-001.3 on the files the
//! test-generation step changed: the AI-issue rows of [`RULES`], the regex
//! ones run by [`Ctx::patterns`], the structural ones below. Line- and
//! token-based heuristics over a lexical model of each file (strings and
//! comments cannot trigger code checks), tuned to stay quiet on ordinary
//! code. `docs/scans.md` lists every check with its detection rule and
//! blind spots.
//!
//! [`RULES`]: super::rules::RULES

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::findings::Finding;
use super::imports::{go_imports, js_imports};
pub(crate) use super::imports::{npm_package, python_importable};
use super::rules::Scan;
use super::{Ctx, imports, in_any, read_text, scanned_lang, words};
pub use crate::project::dependencies::{
    CargoManifest, GoManifest, Manifest, NpmManifest, PythonManifest,
};
pub(crate) use crate::project::dependencies::{Manifests, load_dir, py_norm};
use crate::project::source::{Comment, Func, Source, StrLit};
pub(crate) use crate::project::stdlib::{NODE_BUILTINS, PYTHON_STDLIB};
use crate::project::{Lang, re};

/// The manifests found in the project root. `scan_files` also looks for a
/// nearer manifest per file (monorepos, workspaces) and merges it with this.
pub fn load_manifest(root: &Path) -> Manifest {
    load_dir(root, "")
}

/// Scan one file's text. `rel_path` is relative to `root`, `/`-separated;
/// the language comes from its extension (others yield nothing). `root` is
/// read only to resolve relative imports and list local modules.
pub fn scan_file(root: &Path, rel_path: &str, text: &str, manifest: &Manifest) -> Vec<Finding> {
    let Some(cx) = Ctx::new(root, rel_path, text, manifest) else {
        return Vec::new();
    };
    let funcs = cx.src.functions();
    cx.patterns(Scan::AiIssues);
    for check in CHECKS {
        check(&cx, &funcs);
    }
    cx.finish(false)
}

/// The structural checks, each given the file and its functions.
const CHECKS: &[fn(&Ctx, &[Func])] = &[
    imports::check,
    placeholder_comments,
    py_placeholders,
    thrown_placeholders,
    mock_leakage,
    type_abuse,
    naming,
    predicates,
    swallowed_errors,
    unreachable_code,
    infinite_loops,
    listeners,
    unclosed,
    hardcoded_secrets,
    sensitive_logging,
    dynamic_code,
];

/// Read and scan files (relative to `root`). Unreadable, binary and huge
/// (> 1 MiB) files are skipped; non-UTF-8 text is read lossily. Each file is
/// checked against the nearest manifest directory above it, merged with the
/// root's.
pub fn scan_files(root: &Path, rel_paths: &[String]) -> Vec<Finding> {
    let mut manifests = Manifests::default();
    let mut out = Vec::new();
    for rel in rel_paths.iter().map(|r| r.replace('\\', "/")) {
        if scanned_lang(&rel).is_none() {
            continue;
        }
        if let Some(text) = read_text(&root.join(&rel)) {
            out.extend(scan_file(root, &rel, &text, manifests.for_file(root, &rel)));
        }
    }
    out
}

// ---------------------------------------------------------------- placeholder code

/// The innermost function whose body contains `off`.
fn enclosing_func(funcs: &[Func], off: usize) -> Option<&Func> {
    funcs
        .iter()
        .filter(|f| f.body.is_some_and(|(a, b)| off >= a && off <= b))
        .max_by_key(|f| f.start)
}

fn enclosing_class<'s>(src: &'s Source, idx: usize) -> Option<&'s str> {
    src.py_headers(idx)
        .into_iter()
        .find(|h| h.starts_with("class "))
}

/// A class header that names an abstract base (`class BaseX`, `(ABC)`,
/// `Protocol`…).
fn abstract_class(header: &str) -> bool {
    re!(r"class\s+(?:Base\w*|Abstract\w*|\w*(?:Base|Mixin|Interface|Protocol|ABC))\b|\b(?:ABC|ABCMeta|Protocol)\b")
        .is_match(header)
}

/// Python definitions that are meant to have no body: abstract methods,
/// overloads, protocol/ABC members, stub files, `TYPE_CHECKING` stubs.
fn py_abstract(src: &Source, f: &Func, rel: &str) -> bool {
    let headers = src.py_headers(f.line);
    rel.ends_with(".pyi")
        || f.decorators.iter().any(|d| {
            ["abstract", "overload", "override"]
                .iter()
                .any(|w| d.contains(w))
        })
        || headers
            .iter()
            .any(|h| h.starts_with("if") && h.contains("TYPE_CHECKING"))
        || headers
            .iter()
            .find(|h| h.starts_with("class "))
            .is_some_and(|c| abstract_class(c))
}

/// Python: a method with no real body that is nevertheless deliberate — a
/// protocol/dunder no-op, one implementation of a method several classes of
/// the file define (null objects), a hook of a class subclassed in the file,
/// or (for `no_op`) an override of a base-class hook.
fn py_deliberate(src: &Source, funcs: &[Func], f: &Func, rel: &str, no_op: bool) -> bool {
    if py_abstract(src, f, rel) || (f.name.starts_with("__") && f.name.ends_with("__")) {
        return true;
    }
    let Some(class) = enclosing_class(src, f.line) else {
        return false;
    };
    // `class X(Y):` → the name, and whether it has explicit bases
    let rest = class.trim_start_matches("class ").trim();
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..name_end];
    let bases = rest[name_end..]
        .trim_start()
        .strip_prefix('(')
        .map_or("", |b| b.split(')').next().unwrap_or("").trim());
    if no_op && !bases.is_empty() && bases != "object" {
        return true;
    }
    let polymorphic = funcs
        .iter()
        .any(|g| g.name == f.name && g.line != f.line && g.indent == f.indent);
    let subclassed = !name.is_empty() && {
        let pat = format!(
            r"(?m)^[ \t]*class\s+\w+\s*\([^)]*\b{}\b",
            regex::escape(name)
        );
        Regex::new(&pat).is_ok_and(|r| r.is_match(&src.masked))
    };
    polymorphic || subclassed
}

/// The direct statements (logical lines, trimmed masked text, with offsets)
/// of a Python function body, without a leading docstring; nested blocks'
/// lines are left out.
fn py_statements<'s>(src: &'s Source, f: &Func, logical: &[bool]) -> Vec<(usize, &'s str)> {
    let Some((a, b)) = f.body else {
        return Vec::new();
    };
    let first = src.line_index(a);
    let mut out = Vec::new();
    let mut direct: Option<usize> = None;
    let last = src.line_index(b.max(a));
    for (idx, &is_logical) in logical.iter().enumerate().take(last + 1).skip(first) {
        let (ls, le) = (src.line_start(idx).max(a), src.line_end(idx).min(b.max(a)));
        let t = if ls < le && (is_logical || idx == first) {
            src.masked[ls..le].trim()
        } else {
            ""
        };
        if t.is_empty() {
            continue;
        }
        let ind = if idx == first && ls > src.line_start(idx) {
            usize::MAX
        } else {
            src.indent(idx)
        };
        if *direct.get_or_insert(ind) == ind {
            out.push((ls, t));
        }
    }
    if out.first().is_some_and(|(_, t)| {
        t.starts_with(['"', '\'']) || t.starts_with("r\"") || t.starts_with("r'")
    }) {
        out.remove(0);
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// `placeholder_comment`: a placeholder phrase in a comment (section rulers
/// such as `// ---- placeholder code ----` are headings) or in a Python
/// string statement (a docstring).
fn placeholder_comments(cx: &Ctx, _: &[Func]) {
    let phrase = re!(concat!(
        r"(?i)\b(?:todo|fixme|xxx)\b\s*[:\-]?\s*(?:implement\b|add\s+(?:the\s+)?(?:implementation|logic|code)\b)",
        r"|\b(?:add|put|insert|write|place)\s+(?:your|the)\s+(?:own\s+)?(?:code|logic|implementation)\s+here\b",
        r"|\byour\s+(?:code|implementation|logic)\s+(?:goes\s+)?here\b",
        r"|\bimplementation\s+(?:is\s+)?pending\b",
        r"|^\s*implement\s+(?:me|this)\b",
        r"|\bplaceholder\s+(?:implementation|logic|code)\b",
        r"|(?:\.\.\.|…)\s*(?:rest|remainder)\s+of\s+(?:the\s+)?(?:code|implementation|function|file|logic)",
        r"|(?:\.\.\.|…)\s*(?:existing|remaining|other)\s+(?:code|logic|implementation)"
    ));
    let src = &cx.src;
    for c in &src.comments {
        let ruler = ["---", "===", "***"].iter().any(|r| c.text.starts_with(r));
        if !ruler && phrase.is_match(&c.text) {
            let msg = format!("placeholder left in code: \"{}\"", truncate(&c.text, 80));
            cx.report("placeholder_comment", src.line_start(c.line), msg);
        }
    }
    if src.lang != Lang::Python {
        return;
    }
    let statement = |s: &&StrLit| {
        let ls = src.line_start(src.line_index(s.open));
        src.text[ls..s.open]
            .trim()
            .trim_start_matches(['r', 'u', 'R', 'U'])
            .is_empty()
    };
    for s in src.strings.iter().filter(statement) {
        let mut off = s.start;
        for line in src.text[s.start..s.end].split('\n') {
            if phrase.is_match(line) {
                let msg = format!(
                    "placeholder left in a docstring: \"{}\"",
                    truncate(line.trim(), 80)
                );
                cx.report("placeholder_comment", off, msg);
            }
            off += line.len() + 1;
        }
    }
}

/// `not_implemented_body` and `ellipsis_statement` in Python: `raise
/// NotImplementedError`, a bare `pass` body, `...` as a statement, unless
/// the definition is deliberately empty ([`py_deliberate`]).
fn py_placeholders(cx: &Ctx, funcs: &[Func]) {
    let src = &cx.src;
    if src.lang != Lang::Python {
        return;
    }
    for m in re!(r"(?m)^[ \t]*raise\s+NotImplementedError\b").find_iter(&src.masked) {
        let low = src.code[m.start()..src.line_end(src.line_index(m.start()))].to_ascii_lowercase();
        let excused = ["subclass", "override", "must implement"]
            .iter()
            .any(|w| low.contains(w))
            || enclosing_func(funcs, m.start())
                .is_some_and(|f| py_deliberate(src, funcs, f, cx.rel, false))
            || enclosing_class(src, src.line_index(m.start())).is_some_and(abstract_class);
        if !excused {
            cx.report(
                "not_implemented_body",
                m.start(),
                "`raise NotImplementedError` left in code",
            );
        }
    }
    for f in funcs.iter().filter(|f| !cx.is_test(f.start)) {
        let stmts = py_statements(src, f, src.logical_starts());
        let w = words(&f.name);
        let noop_name = w.iter().any(|x| x == "noop" || x == "nop")
            || w.windows(2)
                .any(|p| (p[0] == "no" && p[1] == "op") || (p[0] == "do" && p[1] == "nothing"));
        let pass_only = stmts.len() == 1 && stmts[0].1 == "pass" && !noop_name && {
            let line = src.line_index(stmts[0].0);
            !src.comments.iter().any(|c| c.line == line)
        };
        let ellipses = stmts.iter().filter(|(_, t)| *t == "...");
        if (!pass_only && ellipses.clone().next().is_none())
            || py_deliberate(src, funcs, f, cx.rel, true)
        {
            continue;
        }
        if pass_only {
            cx.report(
                "not_implemented_body",
                stmts[0].0,
                format!("`{}` has a bare `pass` body", f.name),
            );
        }
        for (off, _) in ellipses {
            cx.report(
                "ellipsis_statement",
                *off,
                format!("`...` used as a statement in `{}`", f.name),
            );
        }
    }
}

/// `not_implemented_body` in JS/TS/Java (`throw new Error("not
/// implemented")`, `throw new NotImplementedError()`) and Go (`panic("not
/// implemented")`).
fn thrown_placeholders(cx: &Ctx, _: &[Func]) {
    let not_impl = |msg: &&str| {
        re!(r"(?i)^\s*(?:not\s+(?:yet\s+)?implemented|unimplemented|todo\b|implement\s+me|method\s+not\s+implemented)")
            .is_match(msg)
    };
    let src = &cx.src;
    match src.lang {
        Lang::Js | Lang::Ts | Lang::Java => {
            let throw = re!(
                r"\bthrow\s+new\s+(\w*(?:Error|Exception))\s*\(\s*([`'\x22])|\bthrow\s+new\s+(NotImplemented\w*)\s*\("
            );
            for c in throw.captures_iter(&src.masked) {
                let whole = c.get(0).unwrap();
                let msg = if let Some(name) = c.get(3) {
                    format!("`throw new {}` left in code", name.as_str())
                } else if let Some(msg) = src.string_at(whole.end() - 1).filter(not_impl) {
                    format!(
                        "`throw new {}(\"{}\")` left in code",
                        &c[1],
                        truncate(msg, 40)
                    )
                } else {
                    continue;
                };
                cx.report("not_implemented_body", whole.start(), msg);
            }
        }
        Lang::Go => {
            for m in re!(r#"\bpanic\s*\(\s*""#).find_iter(&src.masked) {
                if let Some(msg) = src.string_at(m.end() - 1).filter(not_impl) {
                    let msg = format!("`panic(\"{}\")` left in code", truncate(msg, 40));
                    cx.report("not_implemented_body", m.start(), msg);
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------- mock leakage

/// Test doubles and test utilities imported by production code (the regex
/// forms are rules of their own; these read the import lists).
fn mock_leakage(cx: &Ctx, _: &[Func]) {
    #[rustfmt::skip]
    const JS_MOCKS: &[&str] = &[
        "sinon", "jest-mock", "ts-mockito", "jest-mock-extended", "vitest-mock-extended",
        "testdouble", "nock", "msw", "@sinonjs/fake-timers",
    ];
    #[rustfmt::skip]
    const JS_TEST_UTILS: &[&str] = &[
        "vitest", "@jest/globals", "jest", "chai", "mocha", "supertest", "@playwright/test",
        "cypress", "enzyme", "react-test-renderer", "ava", "tap", "uvu",
    ];
    if cx.test_file {
        return;
    }
    let (mock, util) = ("mock_library_in_source", "test_utility_in_source");
    match cx.src.lang {
        Lang::Js | Lang::Ts => {
            for imp in js_imports(&cx.src) {
                let pkg = npm_package(&imp.spec);
                if JS_MOCKS.contains(&pkg.as_str()) {
                    cx.report(
                        mock,
                        imp.off,
                        format!("mocking library `{pkg}` imported by production code"),
                    );
                } else if pkg.starts_with("@testing-library/")
                    || JS_TEST_UTILS.contains(&pkg.as_str())
                    || imp.spec == "node:test"
                {
                    let msg = format!("test utility `{}` imported by production code", imp.spec);
                    cx.report(util, imp.off, msg);
                }
            }
        }
        Lang::Python => {
            let test_import =
                re!(r"(?m)^[ \t]*(?:import|from)\s+(pytest|_pytest|hypothesis|pytest_\w+)\b");
            for c in test_import.captures_iter(&cx.src.masked) {
                // unless the project is that tool
                if !cx
                    .manifest
                    .python
                    .local_modules
                    .contains(&c[1].to_ascii_lowercase())
                {
                    let msg = format!("test utility `{}` imported by production code", &c[1]);
                    cx.report(util, c.get(0).unwrap().start(), msg);
                }
            }
        }
        Lang::Go => {
            for imp in go_imports(&cx.src) {
                let p = imp.spec.as_str();
                if p.ends_with("/gomock")
                    || p == "github.com/stretchr/testify/mock"
                    || p.ends_with("/mockery")
                {
                    cx.report(
                        mock,
                        imp.off,
                        format!("mocking package `{p}` imported by production code"),
                    );
                } else if p == "testing"
                    || p.starts_with("github.com/stretchr/testify/")
                    || p == "net/http/httptest"
                {
                    cx.report(
                        util,
                        imp.off,
                        format!("test package `{p}` imported by production code"),
                    );
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------- type abuse

fn type_abuse(cx: &Ctx, _: &[Func]) {
    let src = &cx.src;
    if src.lang != Lang::Ts {
        return;
    }
    let any = re!(r"(?:[:|&<(]\s*|\bas\s+|,\s*)any\b(\s*[^\s\w$.(=:]|\s*$|\s+[|&]|\s*[=)])");
    let double = re!(r"\bas\s+(unknown|any)\s+as\s+([A-Za-z_$][\w$.]*(?:<[^>;]*>)?)");
    let chain =
        re!(r"\bas\s+([A-Za-z_$][\w$.]*(?:<[^>;()]*>)?(?:\[\])*)\s+as\s+([A-Za-z_$][\w$.]*)");
    let m = &src.masked;
    for idx in 0..src.line_count() {
        let line = src.masked_line(idx);
        let disabled = || {
            let near = |c: &&Comment| c.line + 1 == idx || c.line == idx;
            src.comments
                .iter()
                .filter(near)
                .any(|c| c.text.contains("no-explicit-any"))
        };
        if line.contains("any")
            && !disabled()
            && !double.is_match(line)
            && let Some(a) = any.find(line)
        {
            cx.report(
                "explicit_any",
                src.line_start(idx) + a.start(),
                "explicit `any` type",
            );
        }
    }
    for c in double
        .captures_iter(m)
        .filter(|c| !c[2].contains("Mock") && !c[2].contains("Spy"))
    {
        let msg = format!(
            "double cast `as {} as {}` bypasses type checking",
            &c[1], &c[2]
        );
        cx.report("double_cast", c.get(0).unwrap().start(), msg);
    }
    for c in chain.captures_iter(m) {
        if !matches!(&c[1], "unknown" | "any" | "const") && !c[2].starts_with("const") {
            let msg = format!("chained type assertions `as {} as {}`", &c[1], &c[2]);
            cx.report("chained_assertion", c.get(0).unwrap().start(), msg);
        }
    }
    for c in re!(r"\)\s*as\s+([A-Za-z_$][\w$.]*)").captures_iter(m) {
        let close = c.get(0).unwrap().start();
        let Some(open) = match_open(m, close) else {
            continue;
        };
        // a grouping parenthesis, not a call's
        let prev = m[..open].trim_end();
        if prev.ends_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | ')' | ']' | '>'))
        {
            continue;
        }
        // only an `as` at the top level of the parentheses
        let mut depth = 0i32;
        let top: String = m[open + 1..close]
            .chars()
            .map(|ch| {
                depth += match ch {
                    '(' | '[' | '{' => 1,
                    ')' | ']' | '}' => -1,
                    _ => 0,
                };
                if depth == 0 { ch } else { ' ' }
            })
            .collect();
        if re!(r"\bas\s+[A-Za-z_$]").is_match(&top)
            && !top.contains("as const")
            && !c[1].starts_with("const")
            && !c[1].contains("Mock")
        {
            if top.contains("as unknown") || top.contains("as any") {
                cx.report("double_cast", open, "double cast through `unknown`/`any`");
            } else {
                cx.report(
                    "chained_assertion",
                    open,
                    "chained type assertions `(x as A) as B`",
                );
            }
        }
    }
}

/// The `(` matching the `)` at `close`, in masked text (looking back a
/// bounded distance).
fn match_open(m: &str, close: usize) -> Option<usize> {
    let b = m.as_bytes();
    let mut depth = 0i32;
    for j in (close.saturating_sub(3999)..=close).rev() {
        match b[j] {
            b')' => depth += 1,
            b'(' if depth == 1 => return Some(j),
            b'(' => depth -= 1,
            _ => {}
        }
    }
    None
}

// ---------------------------------------------------------------- naming

/// Common misspellings found in identifiers, `wrong>right`.
const MISSPELLINGS: &str = "\
    recieve>receive recieved>received reciever>receiver recieving>receiving seperate>separate \
    seperator>separator seperated>separated occured>occurred occurence>occurrence \
    occurrance>occurrence lenght>length widht>width heigth>height hieght>height \
    retreive>retrieve retrive>retrieve enviroment>environment envirnoment>environment \
    paramter>parameter paramater>parameter parametre>parameter arguement>argument sucess>success \
    succes>success successfull>successful succesful>successful accomodate>accommodate \
    begining>beginning calender>calendar definately>definitely dependancy>dependency \
    dependancies>dependencies existance>existence independant>independent refered>referred \
    responce>response reponse>response respone>response thier>their untill>until accross>across \
    acheive>achieve aquire>acquire apparant>apparent beleive>believe calulate>calculate \
    caculate>calculate comming>coming commited>committed concatinate>concatenate \
    conditon>condition configuartion>configuration connnection>connection conection>connection \
    defualt>default delimeter>delimiter dictonary>dictionary dissapear>disappear \
    exeption>exception excecute>execute exectue>execute fucntion>function funtion>function \
    fuction>function garantee>guarantee heirarchy>hierarchy immediatly>immediately \
    inital>initial intial>initial initalize>initialize intialize>initialize langauge>language \
    libary>library maintainance>maintenance managment>management mesage>message messsage>message \
    neccessary>necessary necesary>necessary orignal>original parrallel>parallel \
    persistant>persistent posible>possible prefered>preferred proccess>process procces>process \
    propogate>propagate publically>publicly recursivly>recursively refrence>reference \
    referece>reference relevent>relevant resouce>resource resoruce>resource similiar>similar \
    suprise>surprise tempory>temporary threshhold>threshold truely>truly unkown>unknown \
    usefull>useful valiadte>validate validte>validate verfiy>verify wierd>weird writting>writing \
    lenth>length adress>address adresses>addresses atribute>attribute attribtue>attribute \
    availible>available avaiable>available boundry>boundary cancelation>cancellation \
    charachter>character charater>character compatability>compatibility compatable>compatible \
    completly>completely consistant>consistent contructor>constructor cordinate>coordinate \
    destory>destroy diffrent>different elemnt>element equivelant>equivalent \
    explicitely>explicitly familar>familiar guage>gauge happend>happened identifer>identifier \
    implmentation>implementation implementaion>implementation indentifier>identifier \
    informations>information instace>instance interupt>interrupt itterate>iterate lastest>latest \
    minumum>minimum maxium>maximum mutiple>multiple nubmer>number numbr>number ouput>output \
    outptu>output overriden>overridden pasword>password passowrd>password permision>permission \
    posistion>position prefrence>preference priviledge>privilege quantitiy>quantity \
    recipt>receipt reciept>receipt remvoe>remove repositry>repository requried>required \
    reqest>request requets>request resposne>response retun>return scehma>schema sepcial>special \
    sequnce>sequence stirng>string strng>string sturct>struct succeded>succeeded \
    sucessful>successful supress>suppress tokne>token transfered>transferred udpate>update \
    updte>update uniqe>unique vaule>value valeu>value varaible>variable variabel>variable \
    visable>visible wether>whether";

static MISSPELLED: LazyLock<HashMap<&str, &str>> = LazyLock::new(|| {
    MISSPELLINGS
        .split_whitespace()
        .filter_map(|p| p.split_once('>'))
        .collect()
});

/// Declared identifiers of a file with their offsets: functions, variables,
/// classes/types.
fn declared_identifiers(src: &Source, funcs: &[Func]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = funcs
        .iter()
        .map(|f| (src.line_start(f.line), f.name.clone()))
        .collect();
    let m = &src.masked;
    let vars = match src.lang {
        Lang::Python => re!(r"(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=[^=]"),
        Lang::Rust => re!(r"\blet\s+(?:mut\s+)?([A-Za-z_]\w*)\s*[:=]"),
        Lang::Go => re!(r"(?m)(?:^|[\s(,])([A-Za-z_]\w*)\s*:=|\bvar\s+([A-Za-z_]\w*)\b"),
        _ => re!(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*[:=]"),
    };
    let logical = (src.lang == Lang::Python).then(|| src.logical_starts());
    for g in vars
        .captures_iter(m)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
    {
        // not keyword arguments of a call spanning lines
        if logical.is_none_or(|l| l[src.line_index(g.start())]) {
            out.push((g.start(), g.as_str().to_string()));
        }
    }
    let types = re!(r"\b(?:class|struct|enum|trait|interface|type)\s+([A-Za-z_]\w*)");
    out.extend(
        types
            .captures_iter(m)
            .map(|c| c.get(1).unwrap())
            .map(|g| (g.start(), g.as_str().to_string())),
    );
    out.sort();
    out
}

/// `mixed_naming` (camelCase and snake_case names in one file) and
/// `misspelled_identifier`.
fn naming(cx: &Ctx, funcs: &[Func]) {
    #[rustfmt::skip]
    const PY_CAMEL_OK: &[&str] = &[
        "setUp", "tearDown", "setUpClass", "tearDownClass", "setUpModule", "tearDownModule",
        "maxDiff", "asyncSetUp", "asyncTearDown",
    ];
    let lang = cx.src.lang;
    let idents = declared_identifiers(&cx.src, funcs);
    let is_camel = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_lowercase())
            && !s.contains('_')
            && s.chars().any(|c| c.is_ascii_uppercase())
    };
    let is_snake = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.contains('_')
            && !s.chars().any(|c| c.is_ascii_uppercase())
            && !s.ends_with('_')
    };
    let (mut camel, mut snake) = (Vec::<(usize, &str)>::new(), Vec::<(usize, &str)>::new());
    let mut seen = BTreeSet::new();
    for (off, name) in idents.iter().filter(|(_, n)| seen.insert(n.as_str())) {
        let py_ok = lang == Lang::Python
            && (PY_CAMEL_OK.contains(&name.as_str()) || name.starts_with("assert"));
        if is_camel(name) && !py_ok {
            camel.push((*off, name));
        } else if is_snake(name) {
            snake.push((*off, name));
        }
    }
    if camel.len() >= 2 && snake.len() >= 2 {
        let (odd, usual, style) = match lang {
            Lang::Python | Lang::Rust => (&camel, &snake, "camelCase"),
            _ => (&snake, &camel, "snake_case"),
        };
        let (n_camel, n_snake, name, other) = (camel.len(), snake.len(), odd[0].1, usual[0].1);
        let msg = format!(
            "mixed naming: {n_camel} camelCase and {n_snake} snake_case names; `{name}` is {style} while e.g. `{other}` is not"
        );
        cx.report("mixed_naming", odd[0].0, msg);
    }
    let mut reported = BTreeSet::new();
    for (off, name) in &idents {
        for w in words(name) {
            if let Some(right) = MISSPELLED.get(w.as_str())
                && reported.insert(w.clone())
            {
                let msg = format!("`{name}` contains the misspelling \"{w}\" (\"{right}\")");
                cx.report("misspelled_identifier", *off, msg);
            }
        }
    }
}

/// `non_boolean_predicate`: is*/has* functions that do not return booleans
/// (by the declared return type, or else by what they return); tests are
/// named after what they check (`fn is_valid_name()`).
fn predicates(cx: &Ctx, funcs: &[Func]) {
    let lang = cx.src.lang;
    let predicate = re!(r"^(?:is|has|Is|Has)(?:[A-Z0-9]|_[a-z0-9])");
    const PY_BOOL: [&str; 5] = [
        "bool",
        "TypeGuard",
        "TypeIs",
        "Literal[True",
        "Literal[False",
    ];
    for f in funcs
        .iter()
        .filter(|f| predicate.is_match(&f.name) && (f.ret.is_some() || !cx.is_test(f.start)))
    {
        let declared = |ok: bool, r: &String| (!ok).then(|| format!("`{r}`"));
        let verdict: Option<String> = match (&f.ret, lang) {
            (Some(r), Lang::Ts | Lang::Js) => declared(
                r.contains("boolean") || r.contains(" is ") || r.starts_with("asserts") || r == "any" || r == "unknown",
                r,
            ),
            (Some(r), Lang::Python) => declared(PY_BOOL.iter().any(|t| r.contains(t)), r),
            (Some(r), Lang::Rust | Lang::Go) => declared(r.contains("bool"), r),
            (Some(r), Lang::Java) => declared(r == "boolean" || r == "Boolean", r),
            (None, Lang::Rust | Lang::Go) => f.body.map(|_| "nothing".to_string()),
            (None, Lang::Python | Lang::Js | Lang::Ts) => f.body.and_then(|(a, b)| {
                let bad = if lang == Lang::Python {
                    re!(r#"(?m)^[ \t]*return[ \t]+(?:[rbfuRBFU]{0,2}["']|\[|\{|-?(?:[2-9]|\d{2,}|\d*\.\d+)\b)"#)
                } else {
                    re!(r#"\breturn\s+(?:["'`]|\[|\{|-?(?:[2-9]|\d{2,}|\d*\.\d+)\b)"#)
                };
                bad.find(&cx.src.masked[a..b.max(a)]).map(|_| "a non-boolean value".to_string())
            }),
            _ => None,
        };
        if let Some(ret) = verdict {
            let off = cx.src.line_start(f.line) + cx.src.indent_bytes(f.line);
            cx.report(
                "non_boolean_predicate",
                off,
                format!("`{}` is named like a predicate but returns {ret}", f.name),
            );
        }
    }
}

// ---------------------------------------------------------------- control flow

/// The structural forms of `swallowed_error` (its regex forms are patterns
/// of the rule): empty `catch` blocks, `except: pass`, Rust `let _ =` on
/// fallible I/O.
fn swallowed_errors(cx: &Ctx, _: &[Func]) {
    let src = &cx.src;
    let commented =
        |from: usize, to: usize| src.comments.iter().any(|c| c.line >= from && c.line < to);
    let id = "swallowed_error";
    match src.lang {
        Lang::Js | Lang::Ts | Lang::Java => {
            for m in re!(r"\bcatch\s*(?:\([^)]*\))?\s*\{").find_iter(&src.masked) {
                let open = m.end() - 1;
                let Some(close) = src.match_close(open) else {
                    continue;
                };
                // a comment in the block says the silence is deliberate
                let code = src.code[open + 1..close].trim();
                if code.is_empty() && src.text[open + 1..close].trim() == code {
                    cx.report(id, m.start(), "empty `catch` block swallows the error");
                }
            }
        }
        Lang::Python => {
            let except = re!(
                r"^[ \t]*except\s*(?:\(?\s*(?:Exception|BaseException)\s*\)?\s*(?:as\s+\w+\s*)?)?:\s*(.*)$"
            );
            let logical = src.logical_starts();
            for idx in (0..src.line_count()).filter(|&i| logical[i]) {
                let line = src.masked_line(idx);
                let Some(c) = except.captures(line) else {
                    continue;
                };
                let inline = c[1].trim();
                let (a, b) = if inline.is_empty() {
                    src.py_block(idx, logical)
                } else {
                    (idx, idx + 1)
                };
                let body: Vec<&str> = if inline.is_empty() {
                    (a..b)
                        .filter(|&k| logical[k] && !src.is_blank(k))
                        .map(|k| src.masked_line(k).trim())
                        .collect()
                } else {
                    vec![inline]
                };
                if body.len() == 1
                    && (body[0] == "pass" || body[0] == "...")
                    && !commented(idx, b.max(idx + 1))
                {
                    let what = ["BaseException", "Exception"]
                        .into_iter()
                        .find(|e| line.contains(e));
                    let what = what.map_or("except".to_string(), |e| format!("except {e}"));
                    let off = src.line_start(idx) + src.indent_bytes(idx);
                    cx.report(id, off, format!("`{what}: pass` swallows every error"));
                }
            }
        }
        Lang::Rust => {
            let io = re!(concat!(
                r"\bfs::\w+|\bFile::(?:create|open)|\.(?:write_all|flush|sync_all|sync_data|set_len|read_to_string|",
                r"read_to_end|read_exact|set_permissions)\s*\(|\b(?:remove_file|remove_dir_all|create_dir_all)\s*\("
            ));
            for c in re!(r"\blet\s+_\s*=\s*([^;]+);").captures_iter(&src.masked) {
                let (expr, at) = (&c[1], c.get(0).unwrap().start());
                let line = src.line_index(at);
                let quiet = expr.contains("stderr")
                    || expr.contains("stdout")
                    || commented(line.saturating_sub(1), line + 1);
                if io.is_match(expr) && !quiet {
                    cx.report(id, at, "`let _ =` discards the `Result` of fallible I/O");
                }
            }
        }
        _ => {}
    }
}

/// Rust `macro_rules!` bodies: token patterns, not code.
fn macro_ranges(src: &Source) -> Vec<(usize, usize)> {
    if src.lang != Lang::Rust {
        return Vec::new();
    }
    re!(r"\bmacro_rules!\s*\w+\s*\{")
        .find_iter(&src.masked)
        .filter_map(|m| src.match_close(m.end() - 1).map(|c| (m.start(), c)))
        .collect()
}

fn unreachable_code(cx: &Ctx, _: &[Func]) {
    #[rustfmt::skip]
    const FOLLOWERS: &[&str] = &[
        "case ", "case(", "default", "else", "elif", "except", "finally", "catch", "function ",
        "async function", "def ", "async def", "class ",
    ];
    #[rustfmt::skip]
    const RUST_ITEMS: &[&str] = &[
        "fn ", "extern ", "struct ", "enum ", "impl", "use ", "mod ", "type ", "const ", "static ",
        "unsafe fn", "pub ", "macro_rules!",
    ];
    const OPEN_END: &[char] = &[
        ',', '(', '[', '{', '+', '-', '*', '/', '&', '|', '=', '.', '?', ':', '\\', '<', '>',
    ];
    let src = &cx.src;
    let lang = src.lang;
    let n = src.line_count();
    let all = vec![true; if lang == Lang::Python { 0 } else { n }];
    let logical = if lang == Lang::Python {
        src.logical_starts()
    } else {
        &all
    };
    let macros = macro_ranges(src);
    for idx in 0..n {
        let t = src.masked_line(idx).trim();
        if !re!(r"^(?:return|throw|raise|break|continue)\b").is_match(t) || !logical[idx] {
            continue;
        }
        // a complete statement on this line
        let bal: i32 = t
            .chars()
            .map(|ch| {
                i32::from(matches!(ch, '(' | '[' | '{')) - i32::from(matches!(ch, ')' | ']' | '}'))
            })
            .sum();
        let open_end = t.ends_with(OPEN_END) && !(lang == Lang::Python && t.ends_with(':'));
        if bal != 0
            || open_end
            || (lang.braces() && t.contains('}'))
            || (idx > 0 && src.masked_line(idx - 1).trim().starts_with("#[cfg"))
        {
            continue;
        }
        let Some(k) = (idx + 1..n).find(|&k| !src.is_blank(k) && logical[k]) else {
            continue;
        };
        let next = src.masked_line(k).trim();
        let ok_follow = next.starts_with(['}', ')', ']', '#', '@'])
            || FOLLOWERS.iter().any(|p| next.starts_with(p))
            || re!(r"^[A-Za-z_]\w*:$").is_match(next)
            || (lang == Lang::Rust && RUST_ITEMS.iter().any(|p| next.starts_with(p)));
        let at = src.line_start(k) + src.indent_bytes(k);
        if src.indent(k) == src.indent(idx) && !ok_follow && !in_any(&macros, at) {
            cx.report(
                "unreachable_code",
                at,
                "code after an unconditional return/throw/break is never run",
            );
        }
    }
}

fn infinite_loops(cx: &Ctx, _: &[Func]) {
    let exit = re!(concat!(
        r"\b(?:break|return|throw|raise|yield|goto)\b|process\.exit|\bexit\s*\(|sys\.exit|os\.Exit|",
        r"process::exit|\bpanic!?\s*\(|unreachable!|log\.Fatal|\?\s*[;.)]|\?$"
    ));
    let src = &cx.src;
    // (reported offset, body start, body end)
    let mut bodies: Vec<(usize, usize, usize)> = Vec::new();
    if src.lang == Lang::Python {
        let logical = src.logical_starts();
        let header = re!(r"^[ \t]*while\s+(?:True|1)\s*:");
        for idx in
            (0..src.line_count()).filter(|&i| logical[i] && header.is_match(src.masked_line(i)))
        {
            let (a, b) = src.py_block(idx, logical);
            let start = src.line_start(a);
            let end = if b > a { src.line_end(b - 1) } else { start };
            bodies.push((src.line_start(idx) + src.indent_bytes(idx), start, end));
        }
    } else {
        let head = match src.lang {
            Lang::Rust => re!(r"\bloop\s*\{"),
            Lang::Go => re!(r"\bfor\s*\{"),
            _ => re!(r"\bwhile\s*\(\s*(?:true|1)\s*\)\s*\{|\bfor\s*\(\s*;\s*;\s*\)\s*\{"),
        };
        for m in head.find_iter(&src.masked) {
            bodies.extend(
                src.match_close(m.end() - 1)
                    .map(|close| (m.start(), m.end(), close)),
            );
        }
    }
    let macros = macro_ranges(src);
    for (at, a, b) in bodies {
        if !in_any(&macros, at)
            && !src.masked[a..b]
                .lines()
                .any(|l| exit.is_match(l.trim_end()))
        {
            cx.report(
                "infinite_loop",
                at,
                "infinite loop without a `break` (or any other exit)",
            );
        }
    }
}

// ---------------------------------------------------------------- resource leaks

/// `listener_not_removed` (JS listeners and intervals, Go tickers) and
/// `observable_no_unsubscribe`.
fn listeners(cx: &Ctx, _: &[Func]) {
    #[rustfmt::skip]
    const ENDS_SUBSCRIPTION: &[&str] = &[
        "takeUntil", "take(", "first(", "takeWhile", "untilDestroyed", "takeUntilDestroyed",
        "firstValueFrom", "lastValueFrom", "http.", "Http",
    ];
    let src = &cx.src;
    let (m, code) = (&src.masked, &src.code);
    if src.lang == Lang::Go {
        for c in re!(r"\b(\w+)\s*:?=\s*time\.NewTicker\s*\(").captures_iter(m) {
            if !m.contains(&format!("{}.Stop(", &c[1])) {
                let msg = format!("ticker `{}` is never stopped", &c[1]);
                cx.report("listener_not_removed", c.get(0).unwrap().start(), msg);
            }
        }
    }
    if !src.lang.is_js() {
        return;
    }
    for c in re!(r"\.addEventListener\s*\(\s*(['\x22`])").captures_iter(m) {
        let whole = c.get(0).unwrap();
        let event = src.string_at(whole.end() - 1).unwrap_or("");
        let paren = whole.start() + m[whole.start()..].find('(').unwrap_or(0);
        let args = &code[paren..src.match_close(paren).unwrap_or(whole.end())];
        if args.contains("once") || args.contains("signal") {
            continue;
        }
        let removed = m.contains("removeEventListener")
            && code.match_indices("removeEventListener").any(|(i, _)| {
                let end = (i..=(i + 120).min(code.len()))
                    .rev()
                    .find(|&e| code.is_char_boundary(e))
                    .unwrap_or(i);
                let rest = &code[i..end];
                ['\'', '"', '`']
                    .iter()
                    .any(|q| rest.contains(&format!("{q}{event}{q}")))
                    || !rest.contains(['\'', '"', '`'])
            });
        if !removed && !m.contains("AbortController") {
            let msg = format!("listener for \"{event}\" is added but never removed");
            cx.report("listener_not_removed", whole.start() + 1, msg);
        }
    }
    if !m.contains("clearInterval") {
        for i in
            re!(r"(?:^|[^\w$.])(?:window\.|global\.|globalThis\.)?setInterval\s*\(").find_iter(m)
        {
            cx.report(
                "listener_not_removed",
                i.end() - 1,
                "`setInterval` is never cleared",
            );
        }
    }
    for s in re!(r"\.subscribe\s*\(").find_iter(m) {
        let at = s.start();
        let stmt_start = statement_start(m, at);
        let stmt = &m[stmt_start..at];
        let after = m[src.match_close(s.end() - 1).unwrap_or(s.end())..].trim_start();
        let handled = stmt.trim_start().starts_with("return")
            || has_assignment(stmt)
            || m[..stmt_start].trim_end().ends_with(['(', ','])
            || ENDS_SUBSCRIPTION.iter().any(|p| stmt.contains(p))
            || after.starts_with(".unsubscribe")
            || after.starts_with(".add");
        if !handled {
            let msg = "subscription is neither kept nor ended (no unsubscribe/takeUntil)";
            cx.report("observable_no_unsubscribe", at + 1, msg);
        }
    }
}

/// Is the resource held in variable `v` closed, handed over (returned,
/// yielded, stored) or managed (`with`, `closing`, `pipe`) anywhere in the
/// file?
fn released(m: &str, v: &str) -> bool {
    #[rustfmt::skip]
    const CLOSE: &[&str] = &[
        "close", "end", "destroy", "shutdown", "Close", "release", "pipe", "Body.Close", "dispose",
    ];
    const MANAGED: &[&str] = &[
        "closing(",
        "enter_context(",
        "closeSync(",
        "pipeline(",
        "finished(",
        "defer ",
    ];
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    m.match_indices(v).any(|(i, _)| {
        if m[..i].ends_with(is_ident) || m[i + v.len()..].starts_with(is_ident) {
            return false;
        }
        let rest = m[i + v.len()..].trim_start();
        let member = rest.strip_prefix('.').map(str::trim_start).unwrap_or("");
        let before = m[m[..i].rfind('\n').map_or(0, |p| p + 1)..i].trim_start();
        // `return f` hands the resource over; `return f.read()` does not
        let handed_over = (before.starts_with("return") || before.starts_with("yield")) && !rest.starts_with(['.', '[', '(']);
        CLOSE.iter().any(|p| member.starts_with(p) && member[p.len()..].trim_start().starts_with('('))
            || handed_over
            || before.starts_with("with ")
            || before.starts_with("async with ")
            || MANAGED.iter().any(|p| before.contains(p))
            // stored in a field: `self.f = f`, `this.conn = conn`
            || (before.ends_with('=') && (before.contains("self.") || before.contains("this.")) && rest.starts_with([';', '\n', ')']))
    })
}

/// Start of the statement containing `at` (after the previous `;`, `{` or
/// `}` at depth 0).
fn statement_start(m: &str, at: usize) -> usize {
    let b = m.as_bytes();
    let mut depth = 0i32;
    for j in (0..at).rev() {
        match b[j] {
            b')' | b']' => depth += 1,
            b'(' | b'[' if depth == 0 => return j + 1,
            b'(' | b'[' => depth -= 1,
            b';' | b'{' | b'}' if depth == 0 => return j + 1,
            _ => {}
        }
    }
    0
}

fn has_assignment(stmt: &str) -> bool {
    let b = stmt.as_bytes();
    (0..b.len()).any(|i| {
        b[i] == b'='
            && !matches!(b.get(i + 1), Some(b'=' | b'>'))
            && (i == 0 || !matches!(b[i - 1], b'=' | b'!' | b'<' | b'>'))
    })
}

/// `unclosed_resource`: a resource bound to a variable the file never
/// releases (per language: what opens one, and how the message says to
/// close it), and a Python file read or written inline.
fn unclosed(cx: &Ctx, _: &[Func]) {
    const PY_OPENERS: &str = concat!(
        r"open|io\.open|codecs\.open|gzip\.open|bz2\.open|lzma\.open|socket\.socket|socket\.create_connection|",
        r"sqlite3\.connect|urllib\.request\.urlopen|urlopen|psycopg2?\.connect|pymysql\.connect|zipfile\.ZipFile|",
        r"tarfile\.open|tempfile\.(?:NamedTemporaryFile|TemporaryFile)"
    );
    let src = &cx.src;
    let m = &src.masked;
    let (open, how) = match src.lang {
        Lang::Python => (
            re!(&format!(
                r"(?m)^[ \t]*([A-Za-z_]\w*)\s*=\s*(?:{PY_OPENERS})\s*\("
            )),
            " (use `with`)",
        ),
        Lang::Js | Lang::Ts => (
            re!(concat!(
                r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?(?:fs\.openSync|fs\.promises\.open|fsp\.open|",
                r"(?:fs\.)?createReadStream|(?:fs\.)?createWriteStream|net\.createConnection|net\.connect|new\s+WebSocket|",
                r"mysql\.createConnection)\s*\("
            )),
            "",
        ),
        Lang::Go => (
            re!(concat!(
                r"\b([A-Za-z_]\w*)\s*,\s*(?:err|_)\s*:?=\s*(os\.Open|os\.Create|os\.OpenFile|os\.CreateTemp|ioutil\.TempFile|",
                r"net\.Dial\w*|sql\.Open|http\.Get|http\.Post|http\.Head|http\.PostForm|zip\.OpenReader)\s*\("
            )),
            "",
        ),
        Lang::Java => (
            re!(concat!(
                r"\b([A-Za-z_]\w*)\s*=\s*new\s+(?:FileInputStream|FileOutputStream|FileReader|FileWriter|BufferedReader|",
                r"BufferedWriter|Scanner|Socket|ServerSocket|RandomAccessFile|PrintWriter|ZipFile)\s*\("
            )),
            " (use try-with-resources)",
        ),
        _ => return,
    };
    for c in open.captures_iter(m) {
        let (var, v) = (c.get(1).unwrap(), &c[1]);
        let go = src.lang == Lang::Go;
        let http = go && c[2].starts_with("http.");
        let ok = released(m, v)
            || (http && m.contains(&format!("{v}.Body.Close(")))
            || (go && v == "_")
            || (src.lang == Lang::Java
                && src
                    .masked_line(src.line_index(c.get(0).unwrap().start()))
                    .contains("try"));
        let how = if go {
            format!(
                " (missing `defer {v}{}.Close()`)",
                if http { ".Body" } else { "" }
            )
        } else {
            how.into()
        };
        if !ok {
            cx.report(
                "unclosed_resource",
                var.start(),
                format!("`{v}` is opened but never closed{how}"),
            );
        }
    }
    if src.lang != Lang::Python {
        return;
    }
    for o in re!(r"(?:^|[^\w.])open\s*\(").find_iter(m) {
        let paren = o.end() - 1;
        let line = src.masked_line(src.line_index(paren));
        let managed = ["with ", "def "]
            .iter()
            .any(|p| line.trim_start().starts_with(p))
            || line.contains("closing(");
        let Some(close) = src.match_close(paren).filter(|_| !managed) else {
            continue;
        };
        let after = m[close + 1..].trim_start();
        if after.starts_with(".read") || after.starts_with(".write") {
            cx.report(
                "unclosed_resource",
                paren,
                "file opened inline is never closed (use `with open(...)`)",
            );
        }
    }
}

// ---------------------------------------------------------------- security

/// Words of a name that say it holds a secret, unless its last word is
/// harmless (`password_length`) or it starts with a verb (`hash_password`).
#[rustfmt::skip]
const SENSITIVE_WORDS: &[&str] = &[
    "password", "passwd", "secret", "apikey", "token", "credential", "credentials", "ssn", "cvv",
    "passphrase",
];

#[rustfmt::skip]
const HARMLESS_LAST: &[&str] = &[
    "count", "len", "length", "type", "policy", "min", "max", "valid", "validity", "expiry",
    "expires", "expiration", "url", "uri", "path", "file", "name", "field", "label", "hint",
    "prompt", "id", "ttl", "timeout", "strength", "required", "changed", "updated", "reset",
    "error", "errors", "input", "selector", "param", "placeholder", "pattern", "regex", "re", "env",
    "var", "header", "endpoint", "format", "message", "msg", "text", "title", "key_name", "schema",
    "column", "size", "prefix", "suffix", "kind", "mode", "enabled", "visible", "help", "form",
    "dialog", "page", "route", "view", "component", "style", "class", "rule", "rules", "validator",
    "location", "dir", "filename", "attempts", "retries", "age", "lifetime", "generator", "manager",
    "service", "provider", "store", "cache", "model", "hasher", "tokenizer", "tokens", "store",
    "ref", "callback", "handler", "fn", "func",
];

#[rustfmt::skip]
const SENSITIVE_PAIRS: &[(&str, &str)] = &[
    ("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"), ("credit", "card"),
    ("card", "number"), ("auth", "token"), ("client", "secret"),
];

/// Values that are not secrets however they are assigned.
#[rustfmt::skip]
const PLACEHOLDERS: &[&str] = &[
    "password", "secret", "token", "changeme", "change_me", "change-me", "example", "placeholder",
    "dummy", "sample", "none", "null", "undefined", "redacted", "hidden", "bearer", "basic", "your",
    "replace", "insert", "enter", "xxx", "todo", "fixme", "test", "fake", "mock", "masked",
    "secret_key", "api_key", "apikey", "default", "string", "required",
];

#[rustfmt::skip]
const VERBS: &[&str] = &[
    "is", "has", "should", "min", "max", "num", "show", "validate", "check", "get", "set", "on",
    "handle", "use", "forgot", "reset", "hash", "verify", "generate", "create", "encrypt",
    "decrypt", "parse", "load", "read", "fetch", "update", "change", "new", "request", "send",
    "compare", "mask", "redact", "strip", "sanitize",
];

/// Is this identifier the name of a secret value?
fn sensitive_name(ident: &str) -> bool {
    let w = words(ident);
    let Some(last) = w.last() else { return false };
    if HARMLESS_LAST.contains(&last.as_str()) || (w.len() > 1 && VERBS.contains(&w[0].as_str())) {
        return false;
    }
    w.iter().any(|x| SENSITIVE_WORDS.contains(&x.as_str()))
        || w.windows(2).any(|p| {
            SENSITIVE_PAIRS
                .iter()
                .any(|(a, b)| p[0] == *a && p[1] == *b)
        })
}

/// A string value that looks like a real secret, not a placeholder, prose,
/// a template or the name of the thing.
fn secret_value(value: &str, key: &str) -> bool {
    let v = value.trim();
    let low = v.to_ascii_lowercase();
    let first = v.chars().next().unwrap_or(' ');
    let compact = |s: &str| -> String {
        s.to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect()
    };
    let env_name = v
        .chars()
        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        && v.contains('_');
    // a dotted or kebab identifier (i18n key, setting name)
    let dotted = v
        .chars()
        .all(|c| c.is_ascii_lowercase() || matches!(c, '.' | '_' | '-'))
        && v.contains(['.', '-', '_']);
    !(v.chars().count() < 4
        || v.chars().any(char::is_whitespace)
        || v.chars().all(|c| c == first)
        || v.contains(['{', '}', '$', '<', '>', '%'])
        || v.starts_with('/')
        || low.starts_with("http")
        || compact(v) == compact(key)
        || PLACEHOLDERS.iter().any(|p| low.starts_with(p))
        || low.contains("example")
        || env_name
        || dotted)
}

/// `hardcoded_secret`: a provider's token shape anywhere (test code
/// included), credentials in a URL, a secret-looking value assigned to a
/// secret-named key, a private key block.
fn hardcoded_secrets(cx: &Ctx, _: &[Func]) {
    let assign_before = re!(
        r#"["']?([A-Za-z_$][\w$.-]*)["']?\s*(?::\s*[\w&'<>\[\] ]+?\s*)?(?::=|=>|=|:)\s*[rbfuRBFU]{0,2}$"#
    );
    let token = re!(concat!(
        r"AKIA[0-9A-Z]{16}|\bgh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,}|\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"|\bsk_live_[A-Za-z0-9]{16,}|\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}|\bAIza[0-9A-Za-z_-]{35}"
    ));
    let src = &cx.src;
    let id = "hardcoded_secret";
    for s in &src.strings {
        let value = &src.text[s.start..s.end];
        if let Some(t) = token
            .find(value)
            .filter(|_| !value.to_ascii_uppercase().contains("EXAMPLE"))
        {
            let shown = &t.as_str()[..t.as_str().len().min(6)];
            cx.emit(
                id,
                s.open,
                format!("string looks like a real credential (`{shown}…`)"),
            );
            continue;
        }
        let url_cred = re!(r"^[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@");
        if url_cred
            .captures(value)
            .is_some_and(|c| secret_value(&c[1], ""))
        {
            cx.report(id, s.open, "credentials embedded in a connection URL");
            continue;
        }
        let before = &src.code[src.line_start(src.line_index(s.open))..s.open];
        let Some(c) = assign_before.captures(before) else {
            continue;
        };
        let key = c[1].rsplit('.').next().unwrap_or(&c[1]);
        if sensitive_name(key) && secret_value(value, key) {
            cx.report(id, s.open, format!("hard-coded secret assigned to `{key}`"));
        }
    }
    let private_key =
        re!(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----");
    if let Some(m) = private_key.find(src.text) {
        cx.report(id, m.start(), "private key block in source");
    }
}

/// `sensitive_logging`: a print or log call outputs a secret-named value
/// (an argument, a member, or a name interpolated into its format string).
fn sensitive_logging(cx: &Ctx, _: &[Func]) {
    let log_call = re!(concat!(
        r"(?:^|[^\w$.])(console\.(?:log|info|debug|warn|error|trace)|print|println!|eprintln!|print!|eprint!|",
        r"fmt\.(?:Print|Fprint|Sprint)\w*|log\.(?:Print|Fatal|Panic)\w*|(?:log|logger|logging|LOG|LOGGER|slog|zap|",
        r"tracing)\.\w+|log::\w+!|(?:info|debug|warn|error|trace)!|System\.(?:out|err)\.print\w*)\s*\("
    ));
    let ident = re!(r"[A-Za-z_$][\w$]*");
    let src = &cx.src;
    let logging = if cx.test_file {
        ""
    } else {
        src.masked.as_str()
    };
    for c in log_call.captures_iter(logging) {
        let name = c.get(1).unwrap();
        if src.lang == Lang::Python && name.as_str() != "print" && !name.as_str().contains('.') {
            continue;
        }
        let paren = c.get(0).unwrap().end() - 1;
        let Some(close) = src.match_close(paren) else {
            continue;
        };
        let args = &src.masked[paren + 1..close];
        let named = ident.find_iter(args).find_map(|id| {
            let before = args[..id.start()].trim_end();
            if before.ends_with('.') {
                return None; // a property of something else: user.password is caught by its own name below
            }
            // user.password → look at the last member
            let (mut name, mut rest) = (id.as_str(), &args[id.end()..]);
            while let Some((r, n)) = rest
                .strip_prefix('.')
                .and_then(|r| ident.find(r).filter(|n| n.start() == 0).map(|n| (r, n)))
            {
                (name, rest) = (n.as_str(), &r[n.end()..]);
            }
            let harmless = [".length", ".len()", ".size", ".count", ".is_"]
                .iter()
                .any(|p| rest.starts_with(p));
            (sensitive_name(name) && !harmless && !before.ends_with("len("))
                .then(|| name.to_string())
        });
        // Rust inline format args / Python format fields
        let interpolated = || {
            let inside = src
                .strings
                .iter()
                .filter(|s| s.open > paren && s.open < close);
            inside
                .flat_map(|s| {
                    re!(r"\{\s*([A-Za-z_]\w*)\s*(?:[:}?!.])")
                        .captures_iter(&src.text[s.start..s.end])
                        .map(|c| c[1].to_string())
                })
                .find(|n| sensitive_name(n))
        };
        if let Some(n) = named.or_else(interpolated) {
            let msg = format!("`{}` outputs the sensitive value `{n}`", name.as_str());
            cx.report("sensitive_logging", name.start(), msg);
        }
    }
}

/// `dynamic_code_execution`: `eval`/`exec`, `new Function`, string timers.
fn dynamic_code(cx: &Ctx, _: &[Func]) {
    let src = &cx.src;
    let (evals, after) = match src.lang {
        Lang::Js | Lang::Ts => (
            re!(
                r"(?:^|[^\w$.])(eval)\s*\(|\bnew\s+(Function)\s*\(|(?:^|[^\w$.])(setTimeout|setInterval)\s*\(\s*['\x22`]"
            ),
            "function",
        ),
        Lang::Python => (re!(r"(?:^|[^\w.])(eval|exec)\s*\("), "def"),
        _ => return,
    };
    for c in evals.captures_iter(&src.masked) {
        let g = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)).unwrap();
        if src.masked[..g.start()].trim_end().ends_with(after) {
            continue; // a definition named `eval`
        }
        let what = match g.as_str() {
            "eval" | "exec" => format!("`{}()` runs a string as code", g.as_str()),
            "Function" => "`new Function()` compiles a string into code".to_string(),
            other => format!("`{other}` with a string argument evaluates it as code"),
        };
        cx.report("dynamic_code_execution", g.start(), what);
    }
}
