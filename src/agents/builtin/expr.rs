//! Just enough of an expression reader for one line of code: tokens, the
//! calls on the line with what each is called on (`a.b(…)`, `T::f(…)`,
//! `(&x).m(…)`, `f(…).g(…)`, `new T(…)`), and the binary operators with
//! their operands. Languages differ little at this level; where they do
//! (`::`, `new`, `&`), every form is accepted.

use super::defs::{KEYWORDS, code_only};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Punct(&'static str),
    Other,
}

const PUNCTS: &[&str] = &[
    "::", "?.", "->", "=>", "==", "!=", "<=", ">=", "**", "//", "<<", ">>", "&&", "||", "+=", "-=",
    "*=", "/=", ":=", "(", ")", "[", "]", "{", "}", ".", ",", "+", "-", "*", "/", "%", "@", "&",
    "|", "^", "<", ">", "=", "!", ":", ";", "?",
];

fn tokens(line: &str) -> Vec<Tok> {
    let code = code_only(line);
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            while i < bytes.len() {
                let ch = bytes[i] as char;
                if ch.is_alphanumeric() || ch == '_' || ch == '$' || bytes[i] >= 0x80 {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Tok::Ident(code[start..i].to_string()));
            continue;
        }
        if c.is_ascii_digit() {
            while i < bytes.len() && ((bytes[i] as char).is_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Other);
            continue;
        }
        for p in PUNCTS {
            if code[i..].starts_with(p) {
                out.push(Tok::Punct(p));
                i += p.len();
                continue 'outer;
            }
        }
        // String placeholders, non-ASCII and anything else.
        let len = code[i..].chars().next().map_or(1, char::len_utf8);
        out.push(Tok::Other);
        i += len;
    }
    out
}

/// An expression as far as resolving it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A plain name (`x`, `Duration`, `self`).
    Name(String),
    /// `base.name` or `base::name` (not called).
    Member(Box<Expr>, String),
    /// A call: `name(…)` with what it is called on, if anything.
    Call(Call),
    /// `new T(…)`.
    New(String),
    /// `T{…}` / `&T{…}` (Go, Rust struct literals).
    Literal(String),
    Unknown,
}

/// One call on a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    pub receiver: Option<Box<Expr>>,
    /// `T::f` rather than `x.f` (a path, not a value).
    pub path: bool,
}

fn is_ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s.as_str()),
        _ => None,
    }
}

fn matching_open(toks: &[Tok], close: usize, open: &str, shut: &str) -> Option<usize> {
    let mut depth = 0i32;
    for k in (0..=close).rev() {
        match &toks[k] {
            Tok::Punct(p) if *p == shut => depth += 1,
            Tok::Punct(p) if *p == open => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

fn matching_close(toks: &[Tok], open_at: usize, open: &str, shut: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open_at) {
        match t {
            Tok::Punct(p) if *p == open => depth += 1,
            Tok::Punct(p) if *p == shut => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

fn is_member_sep(t: Option<&Tok>) -> Option<bool> {
    match t {
        Some(Tok::Punct(".")) | Some(Tok::Punct("?.")) | Some(Tok::Punct("->")) => Some(false),
        Some(Tok::Punct("::")) => Some(true),
        _ => None,
    }
}

/// The postfix expression that ends at token `j`, and where it starts.
fn ending_at(toks: &[Tok], j: usize) -> (Expr, usize) {
    match &toks[j] {
        Tok::Punct(")") => {
            let Some(k) = matching_open(toks, j, "(", ")") else {
                return (Expr::Unknown, j);
            };
            match is_ident(k.checked_sub(1).and_then(|i| toks.get(i))) {
                Some(name) if !KEYWORDS.contains(&name) || name == "super" => {
                    let at = k - 1;
                    if at > 0 && is_ident(toks.get(at - 1)) == Some("new") {
                        return (Expr::New(name.to_string()), at - 1);
                    }
                    let (receiver, path, start) =
                        match is_member_sep(at.checked_sub(1).and_then(|i| toks.get(i))) {
                            Some(path) if at >= 2 => {
                                let (r, s) = ending_at(toks, at - 2);
                                (Some(Box::new(r)), path, s)
                            }
                            _ => (None, false, at),
                        };
                    (
                        Expr::Call(Call {
                            name: name.to_string(),
                            receiver,
                            path,
                        }),
                        start,
                    )
                }
                _ => {
                    // A parenthesised expression: `(&uuid)`, `(a + b)`.
                    let inner: Vec<Tok> = toks[k + 1..j]
                        .iter()
                        .filter(|t| !matches!(t, Tok::Punct("&") | Tok::Punct("*")))
                        .filter(|t| !matches!(t, Tok::Ident(s) if s == "mut"))
                        .cloned()
                        .collect();
                    if inner.is_empty() {
                        return (Expr::Unknown, k);
                    }
                    let (e, s) = ending_at(&inner, inner.len() - 1);
                    (if s == 0 { e } else { Expr::Unknown }, k)
                }
            }
        }
        Tok::Punct("}") => {
            // `T{…}` struct / composite literal.
            let Some(k) = matching_open(toks, j, "{", "}") else {
                return (Expr::Unknown, j);
            };
            match is_ident(k.checked_sub(1).and_then(|i| toks.get(i))) {
                Some(name) if name.starts_with(|c: char| c.is_uppercase()) => {
                    (Expr::Literal(name.to_string()), k - 1)
                }
                _ => (Expr::Unknown, k),
            }
        }
        Tok::Punct("]") => {
            let k = matching_open(toks, j, "[", "]").unwrap_or(j);
            (Expr::Unknown, k)
        }
        Tok::Ident(name) => match is_member_sep(j.checked_sub(1).and_then(|i| toks.get(i))) {
            Some(_) if j >= 2 => {
                let (base, s) = ending_at(toks, j - 2);
                (Expr::Member(Box::new(base), name.clone()), s)
            }
            _ => (Expr::Name(name.clone()), j),
        },
        _ => (Expr::Unknown, j),
    }
}

/// The postfix expression that starts at token `i` (for right operands).
fn starting_at(toks: &[Tok], i: usize) -> Expr {
    let mut j = i;
    if is_ident(toks.get(j)) == Some("new") {
        j += 1;
    }
    // Extend over `ident`, `.ident`, `::ident`, `(…)`, `[…]`.
    let mut end = None;
    while j < toks.len() {
        match &toks[j] {
            Tok::Ident(_) => {
                end = Some(j);
                j += 1;
            }
            Tok::Punct("(") => {
                let Some(k) = matching_close(toks, j, "(", ")") else {
                    break;
                };
                end = Some(k);
                j = k + 1;
            }
            Tok::Punct("[") => {
                let Some(k) = matching_close(toks, j, "[", "]") else {
                    break;
                };
                end = Some(k);
                j = k + 1;
            }
            Tok::Punct(".") | Tok::Punct("::") | Tok::Punct("?.") if end.is_some() => j += 1,
            _ => break,
        }
    }
    match end {
        Some(e) => ending_at(toks, e).0,
        None => Expr::Unknown,
    }
}

/// The plain names a line reads (not called, not after `.` or `::`), in
/// order, each once: the locals an assertion checks.
pub fn names(line: &str) -> Vec<String> {
    let toks = tokens(line);
    let mut out: Vec<String> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Tok::Ident(name) = t else { continue };
        let after_sep = i > 0 && is_member_sep(toks.get(i - 1)).is_some();
        let called =
            toks.get(i + 1) == Some(&Tok::Punct("(")) || toks.get(i + 1) == Some(&Tok::Punct("!"));
        if after_sep || called || KEYWORDS.contains(&name.as_str()) || out.contains(name) {
            continue;
        }
        out.push(name.clone());
    }
    out
}

/// Member reads on a line that are not calls (`d.isInLeapYear`,
/// `f(x).prop`), with what each is read from; the last in a chain first.
pub fn members(line: &str) -> Vec<(Expr, String)> {
    let toks = tokens(line);
    let mut out: Vec<(usize, Expr, String)> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Tok::Ident(name) = t else { continue };
        if i < 2
            || !matches!(toks.get(i - 1), Some(Tok::Punct(".") | Tok::Punct("?.")))
            || matches!(toks.get(i + 1), Some(Tok::Punct("(") | Tok::Punct("=")))
        {
            continue;
        }
        let (base, _) = ending_at(&toks, i - 2);
        if base != Expr::Unknown {
            out.push((i, base, name.clone()));
        }
    }
    out.sort_by_key(|(i, _, _)| std::cmp::Reverse(*i));
    out.into_iter().map(|(_, b, n)| (b, n)).collect()
}

/// Every call on a line, outermost-last-in-chain first: in `a.b().c()`
/// the value a line checks is `c`'s, so `c` comes before `b`.
pub fn calls(line: &str) -> Vec<Call> {
    let toks = tokens(line);
    let mut out: Vec<(usize, usize, Call)> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Tok::Ident(name) = t else { continue };
        if toks.get(i + 1) != Some(&Tok::Punct("(")) || KEYWORDS.contains(&name.as_str()) {
            continue;
        }
        let Some(close) = matching_close(&toks, i + 1, "(", ")") else {
            continue;
        };
        if let (Expr::Call(call), _) = ending_at(&toks, close) {
            // Depth in a chain: how many calls this one's value feeds.
            let mut chain = 0;
            let mut k = close + 1;
            while matches!(toks.get(k), Some(Tok::Punct(".") | Tok::Punct("?.")))
                && is_ident(toks.get(k + 1)).is_some()
            {
                chain += 1;
                k += 2;
                if toks.get(k) == Some(&Tok::Punct("(")) {
                    match matching_close(&toks, k, "(", ")") {
                        Some(c) => k = c + 1,
                        None => break,
                    }
                }
            }
            out.push((chain, i, call));
        }
    }
    out.sort_by_key(|(chain, i, _)| (*chain, *i));
    out.into_iter().map(|(_, _, c)| c).collect()
}

/// Positions of `<` and `>` that enclose type arguments (`Vec<T>`,
/// `HashMap<K, V>`, `Option<&'a str>`), not comparisons.
fn generic_brackets(toks: &[Tok]) -> std::collections::HashSet<usize> {
    let mut out = std::collections::HashSet::new();
    for (i, t) in toks.iter().enumerate() {
        if *t != Tok::Punct("<") || is_ident(i.checked_sub(1).and_then(|k| toks.get(k))).is_none() {
            continue;
        }
        let mut depth = 0;
        for (k, u) in toks.iter().enumerate().skip(i) {
            match u {
                Tok::Punct("<") => depth += 1,
                Tok::Punct(">") | Tok::Punct(">>") => {
                    depth -= if *u == Tok::Punct(">>") { 2 } else { 1 };
                    if depth <= 0 {
                        out.extend([i, k]);
                        break;
                    }
                    out.insert(k);
                }
                Tok::Ident(_) | Tok::Punct(",") | Tok::Punct("::") | Tok::Punct("&") => {}
                _ => break,
            }
        }
    }
    out
}

/// A binary operator on a line with its operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinOp {
    pub op: &'static str,
    pub left: Expr,
    pub right: Expr,
}

/// Binary operators that a class can define, with both operands.
pub fn binary_ops(line: &str) -> Vec<BinOp> {
    const OPS: &[&str] = &[
        "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=",
        ">", ">=",
    ];
    let toks = tokens(line);
    let generics = generic_brackets(&toks);
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Tok::Punct(p) = t else { continue };
        if !OPS.contains(p) || i == 0 || i + 1 >= toks.len() {
            continue;
        }
        // Not binary after an operator, `(`, `,`, `=` (unary minus, `*args`).
        let prev = &toks[i - 1];
        let operand_before = matches!(
            prev,
            Tok::Ident(_) | Tok::Punct(")") | Tok::Punct("]") | Tok::Punct("}") | Tok::Other
        );
        if !operand_before {
            continue;
        }
        if let Tok::Ident(w) = prev
            && KEYWORDS.contains(&w.as_str())
        {
            continue;
        }
        if generics.contains(&i) {
            continue;
        }
        let left = ending_at(&toks, i - 1).0;
        let right = starting_at(&toks, i + 1);
        out.push(BinOp { op: p, left, right });
    }
    // Arithmetic before comparisons: `a + b == c` checks what `+` made.
    out.sort_by_key(|o| matches!(o.op, "==" | "!=" | "<" | "<=" | ">" | ">=") as u8);
    out
}

/// The expression a declaration assigns: the right-hand side read as one
/// postfix expression, unwrapping `?`, `.unwrap()`, `.expect(…)`, `await`.
pub fn rhs(text: &str) -> Expr {
    let mut toks = tokens(text);
    while matches!(
        toks.last(),
        Some(Tok::Punct(";")) | Some(Tok::Punct("?")) | Some(Tok::Punct(","))
    ) {
        toks.pop();
    }
    let Some(last) = toks.len().checked_sub(1) else {
        return Expr::Unknown;
    };
    let (mut e, start) = ending_at(&toks, last);
    // `x.unwrap()`, `x.expect("…")`, `x.clone()` keep x's type.
    while let Expr::Call(c) = &e {
        if matches!(
            c.name.as_str(),
            "unwrap" | "expect" | "clone" | "to_owned" | "unwrap_or_default"
        ) && let Some(r) = &c.receiver
        {
            e = (**r).clone();
        } else {
            break;
        }
    }
    // Only a whole right-hand side counts (`a + b` is not `b`).
    let lead = toks[..start].iter().all(|t| {
        matches!(t, Tok::Ident(w) if w == "await" || w == "new" || w == "mut")
            || matches!(t, Tok::Punct("&") | Tok::Punct("*"))
    });
    if lead { e } else { Expr::Unknown }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(e: &Expr) -> String {
        match e {
            Expr::Name(n) => n.clone(),
            Expr::Member(b, n) => format!("{}.{n}", name(b)),
            Expr::Call(c) => match &c.receiver {
                Some(r) => format!("{}{}{}()", name(r), if c.path { "::" } else { "." }, c.name),
                None => format!("{}()", c.name),
            },
            Expr::New(t) => format!("new {t}()"),
            Expr::Literal(t) => format!("{t}{{}}"),
            Expr::Unknown => "?".into(),
        }
    }

    fn shown(line: &str) -> Vec<String> {
        calls(line)
            .into_iter()
            .map(|c| name(&Expr::Call(c)))
            .collect()
    }

    #[test]
    fn calls_with_receivers() {
        assert_eq!(
            shown(
                "  assert.equal(Duration.fromObject({ hours: 11 }).toISOTime(), '11:05:07.000');"
            ),
            [
                "assert.equal()",
                "Duration.fromObject().toISOTime()",
                "Duration.fromObject()"
            ]
        );
        assert_eq!(shown("\terr := (&uuid).Scan(want[:])"), ["uuid.Scan()"]);
        assert_eq!(
            shown("        assert!(req.matches(&parsed), \"did not match {}\", string);"),
            ["req.matches()"]
        );
        assert_eq!(
            shown("        let parsed = Version::parse(string).unwrap();"),
            ["Version::parse().unwrap()", "Version::parse()"]
        );
        assert_eq!(
            shown("    assert merge_with(sum, *dicts) == D({1: 11, 2: 22})"),
            ["merge_with()", "D()"]
        );
        assert_eq!(
            shown("  const d = new Duration(x).plus(y);"),
            ["new Duration().plus()"]
        );
        assert_eq!(shown("if (x) { return y; }"), Vec::<String>::new());
    }

    #[test]
    fn member_reads_and_plain_names() {
        let m = members("expect(DateTime.local(2020, 5, 25).isInLeapYear).toBe(true);");
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].1, "isInLeapYear");
        assert!(matches!(&m[0].0, Expr::Call(c) if c.name == "local"));
        // Calls and assignments are not reads.
        assert!(members("a.b(); x.y = 2;").is_empty());
        assert_eq!(names("debug_assert!(_result.is_ok());"), ["_result"]);
        assert_eq!(names("assert x.y == f(z)"), ["x", "z"]);
        // The placeholders of a template literal are code.
        let c = calls("return `${this.name} of area ${this.area().toFixed(2)}`;");
        assert!(c.iter().any(|c| c.name == "area"), "{c:?}");
    }

    #[test]
    fn operators_with_operands() {
        let ops =
            binary_ops("    assert relativedelta(days=2) + td == relativedelta(days=3, hours=3)");
        let got: Vec<_> = ops
            .iter()
            .map(|o| (o.op, name(&o.left), name(&o.right)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("+", "relativedelta()".to_string(), "td".to_string()),
                ("==", "td".to_string(), "relativedelta()".to_string()),
            ]
        );
        assert!(binary_ops("let v: HashMap<K, Vec<T>> = f(-1, *args)").is_empty());
        assert_eq!(binary_ops("if a < b {")[0].op, "<");
    }

    #[test]
    fn right_hand_sides() {
        assert_eq!(
            name(&rhs(" Duration.fromObject({ minutes: 1 });")),
            "Duration.fromObject()"
        );
        assert_eq!(
            name(&rhs(" VersionReq::parse(text).unwrap()")),
            "VersionReq::parse()"
        );
        assert_eq!(name(&rhs(" &UUID{}")), "UUID{}");
        assert_eq!(name(&rhs(" new Duration({})")), "new Duration()");
        assert_eq!(name(&rhs(" a + b")), "?");
    }
}
