//! A light lexical model of one source file, shared by both scans: the text
//! with comments blanked (`code`), the same with string contents masked
//! (`masked`), the comments, the string literals, and helpers for lines,
//! bracket matching, Python blocks and functions. All three views have the
//! same byte length and line offsets, so a match found in `masked` (where
//! strings and comments cannot fool a regex) can be read back from `code` or
//! the original text at the same offsets.

use super::Lang;

/// One comment line (a block comment contributes one entry per line).
#[derive(Debug, Clone)]
pub(crate) struct Comment {
    /// 0-based line index.
    pub line: usize,
    /// Text without the comment markers.
    pub text: String,
}

/// A string literal: `open` is the offset of its (first) quote, the content
/// is `start..end`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StrLit {
    pub open: usize,
    pub start: usize,
    pub end: usize,
}

pub(crate) struct Source<'a> {
    pub lang: Lang,
    pub text: &'a str,
    pub code: String,
    pub masked: String,
    pub comments: Vec<Comment>,
    pub strings: Vec<StrLit>,
    line_starts: Vec<usize>,
    logical: std::cell::OnceCell<Vec<bool>>,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

const MAX_NEST: usize = 48;

struct Lexer<'t> {
    t: &'t str,
    b: &'t [u8],
    lang: Lang,
    code: Vec<u8>,
    masked: Vec<u8>,
    strings: Vec<StrLit>,
    comments: Vec<(usize, usize)>,
    nest: usize,
}

impl Lexer<'_> {
    fn blank(&mut self, from: usize, to: usize) {
        for i in from..to.min(self.b.len()) {
            if self.b[i] != b'\n' {
                self.code[i] = b' ';
                self.masked[i] = b' ';
            }
        }
    }

    fn mask(&mut self, from: usize, to: usize) {
        for i in from..to.min(self.b.len()) {
            if self.b[i] != b'\n' {
                self.masked[i] = b'_';
            }
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    fn starts(&self, i: usize, s: &[u8]) -> bool {
        self.b.len() >= i + s.len() && &self.b[i..i + s.len()] == s
    }

    fn eol(&self, i: usize) -> usize {
        self.b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |p| i + p)
    }

    /// Lex code from `i`; with `stop_at_close`, return at the `}` that closes
    /// an interpolation.
    fn code_from(&mut self, mut i: usize, stop_at_close: bool) -> usize {
        let mut depth = 0usize;
        while i < self.b.len() {
            if let Some(end) = self.comment(i) {
                i = end;
                continue;
            }
            if let Some(end) = self.string(i) {
                i = end;
                continue;
            }
            match self.b[i] {
                b'{' => depth += 1,
                b'}' => {
                    if stop_at_close && depth == 0 {
                        return i;
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
            i += 1;
        }
        i
    }

    fn comment(&mut self, i: usize) -> Option<usize> {
        let c = self.b[i];
        if self.lang == Lang::Python {
            if c == b'#' {
                let end = self.eol(i);
                self.comments.push((i, end));
                self.blank(i, end);
                return Some(end);
            }
            return None;
        }
        if c != b'/' {
            return None;
        }
        match self.at(i + 1) {
            b'/' => {
                let end = self.eol(i);
                self.comments.push((i, end));
                self.blank(i, end);
                Some(end)
            }
            b'*' => {
                let mut j = i + 2;
                let mut depth = 1;
                while j < self.b.len() {
                    if self.starts(j, b"*/") {
                        depth -= 1;
                        j += 2;
                        if depth == 0 || self.lang != Lang::Rust {
                            break;
                        }
                        continue;
                    }
                    if self.lang == Lang::Rust && self.starts(j, b"/*") {
                        depth += 1;
                        j += 2;
                        continue;
                    }
                    j += 1;
                }
                let end = j.min(self.b.len());
                self.comments.push((i, end));
                self.blank(i, end);
                Some(end)
            }
            _ => None,
        }
    }

    fn string(&mut self, i: usize) -> Option<usize> {
        let c = self.b[i];
        match self.lang {
            Lang::Python => {
                if c != b'"' && c != b'\'' {
                    return None;
                }
                // up to two prefix letters (`rb`, `f`…) not ending a longer word
                let prefix = |k: usize| {
                    matches!(
                        self.b[k],
                        b'r' | b'R' | b'b' | b'B' | b'u' | b'U' | b'f' | b'F'
                    )
                };
                let mut k = i;
                while k > 0 && i - k < 2 && prefix(k - 1) {
                    k -= 1;
                }
                let prefix_ok = k == 0 || !is_ident(self.b[k - 1]);
                let interp = prefix_ok && self.b[k..i].iter().any(|p| matches!(p, b'f' | b'F'));
                let triple = self.at(i + 1) == c && self.at(i + 2) == c;
                let b = self.b;
                let q = &b[i..i + if triple { 3 } else { 1 }];
                let interp = if interp { Interp::Brace } else { Interp::None };
                Some(self.quoted(i, q, true, triple, interp))
            }
            Lang::Js | Lang::Ts => match c {
                b'"' => Some(self.quoted(i, b"\"", true, false, Interp::None)),
                b'\'' => Some(self.quoted(i, b"'", true, false, Interp::None)),
                b'`' => Some(self.quoted(i, b"`", true, true, Interp::Dollar)),
                b'/' if self.regex_context(i) => self.regex(i),
                _ => None,
            },
            Lang::Rust => match c {
                b'"' => Some(self.quoted(i, b"\"", true, true, Interp::None)),
                b'r' | b'b' | b'c' if i == 0 || !is_ident(self.b[i - 1]) => {
                    let mut j = i + 1;
                    if c != b'r' && self.at(j) == b'r' {
                        j += 1;
                    } else if c != b'r' {
                        if c == b'b' && self.at(j) == b'\'' {
                            return self.char_lit(j);
                        }
                        return None;
                    }
                    let hashes = self.b[j..].iter().take_while(|&&h| h == b'#').count();
                    if self.at(j + hashes) != b'"' {
                        return None;
                    }
                    let mut close = vec![b'"'];
                    close.extend(std::iter::repeat_n(b'#', hashes));
                    let open_end = j + hashes + 1;
                    let end = self.find(open_end, &close);
                    self.strings.push(StrLit {
                        open: j + hashes,
                        start: open_end,
                        end,
                    });
                    self.mask(open_end, end);
                    Some((end + close.len()).min(self.b.len()))
                }
                b'\'' => self.char_lit(i),
                _ => None,
            },
            Lang::Go => match c {
                b'"' => Some(self.quoted(i, b"\"", true, false, Interp::None)),
                b'`' => Some(self.quoted(i, b"`", false, true, Interp::None)),
                b'\'' => self.char_lit(i),
                _ => None,
            },
            _ => match c {
                b'"' if self.starts(i, b"\"\"\"") => {
                    Some(self.quoted(i, b"\"\"\"", true, true, Interp::None))
                }
                b'"' => Some(self.quoted(i, b"\"", true, false, Interp::None)),
                b'\'' => self.char_lit(i),
                _ => None,
            },
        }
    }

    fn find(&self, from: usize, pat: &[u8]) -> usize {
        let mut j = from;
        while j < self.b.len() {
            if self.starts(j, pat) {
                return j;
            }
            j += 1;
        }
        self.b.len()
    }

    /// A char literal `'x'` / `'\n'` (Rust, Go, Java); a Rust lifetime is
    /// not one.
    fn char_lit(&mut self, i: usize) -> Option<usize> {
        let end = if self.at(i + 1) == b'\\' {
            let lim = (i + 14).min(self.b.len());
            (i + 3..lim).find(|&j| self.b[j] == b'\'')?
        } else {
            let ch = self.t.get(i + 1..)?.chars().next()?;
            if ch == '\'' || ch == '\n' {
                return None;
            }
            let j = i + 1 + ch.len_utf8();
            if self.at(j) != b'\'' {
                return None;
            }
            j
        };
        self.strings.push(StrLit {
            open: i,
            start: i + 1,
            end,
        });
        self.mask(i + 1, end);
        Some(end + 1)
    }

    fn regex_context(&self, i: usize) -> bool {
        if matches!(self.at(i + 1), b'/' | b'*') {
            return false;
        }
        let mut k = i;
        while k > 0 && matches!(self.code[k - 1], b' ' | b'\t' | b'\r' | b'\n') {
            k -= 1;
        }
        if k == 0 {
            return true;
        }
        let p = self.code[k - 1];
        if is_ident(p) {
            let mut s = k - 1;
            while s > 0 && is_ident(self.code[s - 1]) {
                s -= 1;
            }
            // the keywords after which an expression (a regex) starts
            const BEFORE_EXPR: &[&[u8]] = &[
                b"return", b"typeof", b"case", b"do", b"else", b"in", b"of", b"new", b"delete",
                b"void", b"throw", b"yield", b"await",
            ];
            return BEFORE_EXPR.contains(&&self.code[s..k]);
        }
        !matches!(p, b')' | b']' | b'.' | b'\'' | b'"' | b'`')
    }

    fn regex(&mut self, i: usize) -> Option<usize> {
        let mut j = i + 1;
        let mut class = false;
        while j < self.b.len() {
            match self.b[j] {
                b'\n' => return None,
                b'\\' => j += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => break,
                _ => {}
            }
            j += 1;
        }
        if j >= self.b.len() {
            return None;
        }
        self.strings.push(StrLit {
            open: i,
            start: i + 1,
            end: j,
        });
        self.mask(i + 1, j);
        j += 1;
        while j < self.b.len() && self.b[j].is_ascii_alphabetic() {
            j += 1;
        }
        Some(j)
    }

    /// A quoted string opened at `i` by `q`; returns the offset after it.
    fn quoted(
        &mut self,
        i: usize,
        q: &[u8],
        escapes: bool,
        multiline: bool,
        interp: Interp,
    ) -> usize {
        let start = i + q.len();
        let mut j = start;
        let mut seg = start;
        let n = self.b.len();
        let interp = if self.nest >= MAX_NEST {
            Interp::None
        } else {
            interp
        };
        while j < n {
            let c = self.b[j];
            if escapes && c == b'\\' {
                j += 2;
                continue;
            }
            if self.starts(j, q) {
                break;
            }
            if c == b'\n' && !multiline {
                break;
            }
            let open = match interp {
                Interp::Dollar => c == b'$' && self.at(j + 1) == b'{',
                Interp::Brace => c == b'{' && self.at(j + 1) != b'{',
                Interp::None => false,
            };
            if interp == Interp::Brace && c == b'{' && self.at(j + 1) == b'{' {
                j += 2;
                continue;
            }
            if open {
                let code_start = j + if interp == Interp::Dollar { 2 } else { 1 };
                self.mask(seg, code_start);
                self.nest += 1;
                let close = self.code_from(code_start, true);
                self.nest -= 1;
                j = close + 1;
                seg = close.min(n);
                continue;
            }
            j += 1;
        }
        let end = j.min(n);
        self.mask(seg, end);
        self.strings.push(StrLit {
            open: i,
            start,
            end,
        });
        if end < n && self.starts(end, q) {
            end + q.len()
        } else {
            end
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interp {
    None,
    Dollar,
    Brace,
}

impl<'a> Source<'a> {
    pub fn new(lang: Lang, text: &'a str) -> Source<'a> {
        let b = text.as_bytes();
        let mut lx = Lexer {
            t: text,
            b,
            lang,
            code: b.to_vec(),
            masked: b.to_vec(),
            strings: Vec::new(),
            comments: Vec::new(),
            nest: 0,
        };
        lx.code_from(0, false);
        let mut line_starts = vec![0];
        for (i, &c) in b.iter().enumerate() {
            if c == b'\n' {
                line_starts.push(i + 1);
            }
        }
        let mut strings = lx.strings;
        strings.sort_by_key(|s| s.open);
        // Blanking and masking only ever replace whole characters with ASCII,
        // so both views stay valid UTF-8; should that ever fail, non-ASCII
        // bytes become `_` so that every offset still lines up with `text`.
        let to_string = |v: Vec<u8>| {
            String::from_utf8(v).unwrap_or_else(|e| {
                let ascii: Vec<u8> = e
                    .into_bytes()
                    .into_iter()
                    .map(|x| if x >= 0x80 { b'_' } else { x })
                    .collect();
                String::from_utf8(ascii).unwrap_or_default()
            })
        };
        let code = to_string(lx.code);
        let masked = to_string(lx.masked);
        let mut src = Source {
            lang,
            text,
            code,
            masked,
            comments: Vec::new(),
            strings,
            line_starts,
            logical: std::cell::OnceCell::new(),
        };
        let mut comments = Vec::new();
        for (start, end) in lx.comments {
            let mut s = start;
            while s < end {
                let line = src.line_index(s);
                let line_end = src.line_end(line).min(end);
                let raw = text.get(s..line_end).unwrap_or("");
                comments.push(Comment {
                    line,
                    text: strip_comment_markers(raw, lang),
                });
                s = line_end + 1;
            }
        }
        src.comments = comments;
        src
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 0-based line index of a byte offset.
    pub fn line_index(&self, off: usize) -> usize {
        match self.line_starts.binary_search(&off) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// 1-based line number of a byte offset, as findings report it.
    pub fn line_no(&self, off: usize) -> u32 {
        (self.line_index(off) + 1) as u32
    }

    pub fn line_start(&self, idx: usize) -> usize {
        self.line_starts
            .get(idx)
            .copied()
            .unwrap_or(self.text.len())
    }

    /// Offset of the end of line `idx` (its `\n`, or the end of text).
    pub fn line_end(&self, idx: usize) -> usize {
        match self.line_starts.get(idx + 1) {
            Some(&n) => n - 1,
            None => self.text.len(),
        }
    }

    pub fn masked_line(&self, idx: usize) -> &str {
        self.masked
            .get(self.line_start(idx)..self.line_end(idx))
            .unwrap_or("")
    }

    pub fn code_line(&self, idx: usize) -> &str {
        self.code
            .get(self.line_start(idx)..self.line_end(idx))
            .unwrap_or("")
    }

    /// Indentation width of a line (a tab counts as 4).
    pub fn indent(&self, idx: usize) -> usize {
        let mut w = 0;
        for c in self.text[self.line_start(idx)..self.line_end(idx)].bytes() {
            match c {
                b' ' => w += 1,
                b'\t' => w += 4,
                _ => break,
            }
        }
        w
    }

    /// Number of leading whitespace bytes of a line.
    pub fn indent_bytes(&self, idx: usize) -> usize {
        let line = &self.text[self.line_start(idx)..self.line_end(idx)];
        line.len() - line.trim_start().len()
    }

    /// The masked line has no code (blank or comment only).
    pub fn is_blank(&self, idx: usize) -> bool {
        self.masked_line(idx).trim().is_empty()
    }

    /// The string literal whose opening quote is at `open`.
    pub fn string_at(&self, open: usize) -> Option<&'a str> {
        let i = self.strings.binary_search_by_key(&open, |s| s.open).ok()?;
        let s = self.strings[i];
        self.text.get(s.start..s.end)
    }

    /// The offset of the bracket closing the one at `open` (`(`, `[`, `{`),
    /// in the masked view.
    pub fn match_close(&self, open: usize) -> Option<usize> {
        let b = self.masked.as_bytes();
        let (o, c) = match b.get(open)? {
            b'(' => (b'(', b')'),
            b'[' => (b'[', b']'),
            b'{' => (b'{', b'}'),
            _ => return None,
        };
        let mut depth = 0usize;
        for (j, &x) in b.iter().enumerate().skip(open) {
            if x == o {
                depth += 1;
            } else if x == c {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
        }
        None
    }

    /// The first `{` at or after `from` at bracket depth 0 (parentheses and
    /// square brackets), stopping at a `;` at depth 0 (a declaration without
    /// a body).
    pub fn body_open(&self, from: usize) -> Option<usize> {
        let b = self.masked.as_bytes();
        let mut depth = 0i32;
        for (j, &x) in b.iter().enumerate().skip(from) {
            match x {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'{' if depth <= 0 => return Some(j),
                b';' if depth <= 0 => return None,
                _ => {}
            }
        }
        None
    }

    /// Python: for each line, whether it starts a logical line (not inside
    /// brackets, a string, or after a backslash continuation). Computed once.
    pub fn logical_starts(&self) -> &[bool] {
        self.logical.get_or_init(|| {
            let b = self.masked.as_bytes();
            let n = self.line_count();
            let mut out = Vec::with_capacity(n);
            let mut depth = 0i32;
            let mut cont = false;
            let mut si = 0usize; // strings are sorted by their opening offset
            for idx in 0..n {
                let start = self.line_start(idx);
                while si < self.strings.len() && self.strings[si].end < start {
                    si += 1;
                }
                // inside a string's content or at its closing quote; strings
                // can nest (f-string interpolations), so check a few
                let in_str = start > 0
                    && self.strings[si..]
                        .iter()
                        .take_while(|s| s.open < start)
                        .any(|s| start > s.open && start <= s.end);
                out.push(depth <= 0 && !cont && !in_str);
                let end = self.line_end(idx);
                let mut last_non_ws = 0u8;
                for &x in &b[start..end] {
                    match x {
                        b'(' | b'[' | b'{' => depth += 1,
                        b')' | b']' | b'}' => depth -= 1,
                        _ => {}
                    }
                    if !x.is_ascii_whitespace() {
                        last_non_ws = x;
                    }
                }
                cont = last_non_ws == b'\\';
            }
            out
        })
    }

    /// Python: the line range `(first, end)` (0-based, `end` exclusive) of
    /// the block whose header (ending in `:`) starts on line `header`;
    /// `first` is the header's last physical line when the body follows the
    /// colon on the same line.
    pub fn py_block(&self, header: usize, logical: &[bool]) -> (usize, usize) {
        let base = self.indent(header);
        // the header may continue over several physical lines
        let mut last = header;
        while last + 1 < self.line_count() && !logical[last + 1] {
            last += 1;
        }
        let colon_inline = {
            let m = self.masked_line(last).trim_end();
            !m.ends_with(':')
        };
        let mut end = last + 1;
        let mut j = last + 1;
        while j < self.line_count() {
            if self.is_blank(j) || !logical[j] {
                j += 1;
                continue;
            }
            if self.indent(j) <= base {
                break;
            }
            j += 1;
            end = j;
        }
        if colon_inline && end == last + 1 {
            return (last, last + 1);
        }
        (last + 1, end.max(last + 1))
    }

    /// Python: the header lines (trimmed code) of the blocks enclosing line
    /// `idx`, innermost first.
    pub fn py_headers(&self, idx: usize) -> Vec<&str> {
        let logical = self.logical_starts();
        let mut out = Vec::new();
        let mut ind = self.indent(idx);
        for k in (0..idx).rev() {
            if ind == 0 {
                break;
            }
            if !self.is_blank(k) && logical[k] && self.indent(k) < ind {
                out.push(self.code_line(k).trim());
                ind = self.indent(k);
            }
        }
        out
    }

    /// Functions and methods of the file, for checks that look at names,
    /// return types and bodies.
    pub fn functions(&self) -> Vec<Func> {
        match self.lang {
            Lang::Python => self.py_functions(),
            Lang::Js | Lang::Ts => self.js_functions(),
            _ => self.sig_functions(),
        }
    }

    /// A [`Func`] named `name` on the line of `at`, its declaration
    /// starting at `start`.
    /// A function at `at` named `name`, its declaration from `start`, its
    /// parameters between `params`, with what the language's scanner read
    /// of it.
    fn func(
        &self,
        at: usize,
        name: &str,
        start: usize,
        params: (usize, usize),
        found: Found,
    ) -> Func {
        let line = self.line_index(at);
        let (name, indent) = (name.to_string(), self.indent(line));
        Func {
            name,
            line,
            start,
            params,
            ret: found.ret,
            body: found.body,
            is_async: found.is_async,
            decorators: vec![],
            indent,
        }
    }

    fn py_functions(&self) -> Vec<Func> {
        let def = re!(r"^[ \t]*(async[ \t]+)?def[ \t]+(\w+)[ \t]*\(");
        let logical = self.logical_starts();
        let mut out = Vec::new();
        for idx in (0..self.line_count()).filter(|&i| logical[i]) {
            let start = self.line_start(idx);
            let Some(c) = def.captures(self.masked_line(idx)) else {
                continue;
            };
            let paren = start + c.get(0).map_or(0, |m| m.end()) - 1;
            let Some(close) = self.match_close(paren) else {
                continue;
            };
            let colon = self.masked[close + 1..].find(':').map(|p| close + 1 + p);
            let ret = colon.and_then(|colon| {
                let r = self.code[close + 1..colon].trim();
                r.strip_prefix("->").map(|t| t.trim().to_string())
            });
            let (b0, b1) = self.py_block(idx, logical);
            let body_start = if b0 == self.line_index(colon.unwrap_or(start)) {
                colon.map_or(self.line_start(b0), |c| c + 1)
            } else {
                self.line_start(b0)
            };
            let body_end = if b1 == 0 {
                body_start
            } else {
                self.line_end(b1 - 1).max(body_start)
            };
            let mut decorators = Vec::new();
            let ind = self.indent(idx);
            let mut next_start = start;
            for k in (0..idx).rev().filter(|&k| logical[k]) {
                if !self.code_line(k).trim_start().starts_with('@') || self.indent(k) != ind {
                    break;
                }
                let text = self.code[self.line_start(k)..next_start].split_whitespace();
                decorators.push(text.collect::<Vec<_>>().join(" "));
                next_start = self.line_start(k);
            }
            decorators.reverse();
            let found = Found {
                ret,
                body: Some((body_start, body_end)),
                is_async: c.get(1).is_some(),
            };
            out.push(Func {
                decorators,
                ..self.func(start, &c[2], start, (paren + 1, close), found)
            });
        }
        out
    }

    fn js_functions(&self) -> Vec<Func> {
        let decl = re!(concat!(
            r"(?m)(?:\b(async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^>()]*>)?\s*\(",
            r"|\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;]+)?=\s*(async\s+)?(?:function\b\s*\*?\s*[\w$]*\s*\(|(?:<[^>()]*>)?\((?:[^()\n]|\([^()\n]*\))*\)\s*(?::[^=;{]+)?=>|[A-Za-z_$][\w$]*\s*=>)",
            r"|^[ \t]*(?:(?:public|private|protected|static|readonly|override|abstract|async|get|set)\s+)*(async\s+)?([A-Za-z_$][\w$]*)\s*(?:<[^>()]*>)?\((?:[^()\n]|\([^()\n]*\))*\)\s*(?::\s*[^{;=\n]+)?\{)"
        ));
        let m = &self.masked;
        let mut out = Vec::new();
        for c in decl.captures_iter(m) {
            let whole = c.get(0).unwrap();
            let (name, is_async) = if let Some(n) = c.get(2) {
                (n, c.get(1).is_some())
            } else if let Some(n) = c.get(3) {
                (n, c.get(4).is_some())
            } else if let Some(n) = c.get(6) {
                (n, c.get(5).is_some() || whole.as_str().contains("async "))
            } else {
                continue;
            };
            if KEYWORDS.contains(&name.as_str()) {
                continue;
            }
            let head = &m[name.end()..whole.end()];
            let Some(paren) = head.find('(').map(|p| name.end() + p) else {
                // `x = y => …`: a single bare parameter
                if let Some(arrow) = head.find("=>").map(|p| name.end() + p) {
                    let found = Found {
                        ret: None,
                        body: Some(self.arrow_body(arrow + 2)),
                        is_async,
                    };
                    out.push(self.func(
                        name.start(),
                        name.as_str(),
                        whole.start(),
                        (arrow, arrow),
                        found,
                    ));
                }
                continue;
            };
            let Some(close) = self.match_close(paren) else {
                continue;
            };
            let rest = &m[close + 1..];
            let ret_text = rest.trim_start();
            let (ret, after_ret) = if let Some(r) = ret_text.strip_prefix(':') {
                let stop = r.find(['{', ';']).unwrap_or(r.len());
                let stop = r.find("=>").map_or(stop, |a| a.min(stop));
                let off = close + 1 + (rest.len() - ret_text.len()) + 1;
                (
                    Some(self.code[off..off + stop].trim().to_string()),
                    off + stop,
                )
            } else {
                (None, close + 1)
            };
            let tail = m[after_ret..].trim_start();
            let at = after_ret + (m[after_ret..].len() - tail.len());
            let body = if tail.starts_with("=>") {
                Some(self.arrow_body(at + 2))
            } else if tail.starts_with('{') {
                self.match_close(at).map(|e| (at + 1, e))
            } else {
                None
            };
            out.push(self.func(
                name.start(),
                name.as_str(),
                whole.start(),
                (paren + 1, close),
                Found {
                    ret,
                    body,
                    is_async,
                },
            ));
        }
        out
    }

    /// Rust, Go and Java functions and methods: a signature, then a body or
    /// a `;`.
    fn sig_functions(&self) -> Vec<Func> {
        let decl = match self.lang {
            Lang::Rust => re!(
                r"\b(?:const\s+)?(async\s+)?(?:unsafe\s+)?(?:extern\s+(?:_+\s+)?)?fn\s+([A-Za-z_]\w*)"
            ),
            Lang::Go => re!(r"(?m)^func\s*(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*\("),
            _ => re!(
                r"(?m)^[ \t]*(?:(?:public|private|protected|static|final|abstract|synchronized|native|default)\s+)*(?:<[^>]*>\s+)?([\w.<>\[\]?, ]+?)\s+([A-Za-z_]\w*)\s*\("
            ),
        };
        let m = &self.masked;
        let mut out = Vec::new();
        for c in decl.captures_iter(m) {
            let (name, is_async, java_ret) = match self.lang {
                Lang::Rust => (c.get(2).unwrap(), c.get(1).is_some(), None),
                Lang::Go => (c.get(1).unwrap(), false, None),
                _ => {
                    let ret = c.get(1).unwrap().as_str().trim();
                    let ret_last = ret.rsplit(' ').next().unwrap_or(ret);
                    if matches!(ret_last, "new" | "return" | "else" | "throw")
                        || KEYWORDS.contains(&c[2].trim())
                    {
                        continue;
                    }
                    (c.get(2).unwrap(), false, Some(ret_last.to_string()))
                }
            };
            let p = self.skip_generics(name.end());
            let Some(paren) = m[p..].find('(').map(|x| p + x) else {
                continue;
            };
            if !m[p..paren].trim().is_empty() && self.lang == Lang::Rust {
                continue;
            }
            let Some(close) = self.match_close(paren) else {
                continue;
            };
            let open = self.body_open(close + 1);
            let sig_end =
                open.unwrap_or_else(|| m[close..].find(';').map_or(m.len(), |x| close + x));
            let sig = self.code[close + 1..sig_end].trim();
            let ret = match self.lang {
                Lang::Rust => sig
                    .split(" where")
                    .next()
                    .unwrap_or(sig)
                    .trim()
                    .strip_prefix("->")
                    .map(|r| r.trim().to_string()),
                Lang::Go => (!sig.is_empty()).then(|| sig.to_string()),
                _ => java_ret,
            };
            let body = open.and_then(|o| self.match_close(o).map(|e| (o + 1, e)));
            out.push(self.func(
                name.start(),
                name.as_str(),
                c.get(0).unwrap().start(),
                (paren + 1, close),
                Found {
                    ret,
                    body,
                    is_async,
                },
            ));
        }
        out
    }

    /// The offset after whitespace and a generic parameter list `<…>` at
    /// `p` (minding `->` inside it).
    fn skip_generics(&self, mut p: usize) -> usize {
        let bytes = self.masked.as_bytes();
        while p < bytes.len() && bytes[p].is_ascii_whitespace() {
            p += 1;
        }
        if bytes.get(p) != Some(&b'<') {
            return p;
        }
        let mut depth = 0i32;
        while p < bytes.len() {
            match bytes[p] {
                b'<' => depth += 1,
                b'>' if bytes[p - 1] != b'-' => {
                    depth -= 1;
                    if depth == 0 {
                        return p + 1;
                    }
                }
                b'{' | b';' => return p,
                _ => {}
            }
            p += 1;
        }
        p
    }

    /// The body of an arrow function starting at `from` (after `=>`): a
    /// braced block, or an expression up to the end of the statement.
    fn arrow_body(&self, from: usize) -> (usize, usize) {
        let m = self.masked.as_bytes();
        let mut p = from;
        while p < m.len() && m[p].is_ascii_whitespace() {
            p += 1;
        }
        if m.get(p) == Some(&b'{') {
            return self.match_close(p).map_or((p + 1, p + 1), |e| (p + 1, e));
        }
        let mut depth = 0i32;
        let mut j = p;
        while j < m.len() {
            match m[j] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                b';' | b',' if depth == 0 => break,
                b'\n' if depth == 0 => {
                    let next = self.masked[j..].trim_start();
                    if !next.starts_with(['.', '?', ':', '+', '-', '*', '/', '&', '|']) {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        (p, j)
    }

    /// Byte ranges of test code inside a non-test file: Rust items under
    /// `#[cfg(test)]` (usually `mod tests { … }`).
    pub fn cfg_test_ranges(&self) -> Vec<(usize, usize)> {
        if self.lang != Lang::Rust {
            return Vec::new();
        }
        let mut out = Vec::new();
        for m in re!(r"#\[\s*cfg\s*\(\s*(?:all\s*\(\s*)?test\b").find_iter(&self.masked) {
            let Some(attr_end) = self.match_close(m.start() + 1) else {
                continue;
            };
            let Some(open) = self.body_open(attr_end + 1) else {
                continue;
            };
            // the attribute's own `]` comes first; the body is the next `{`
            if let Some(close) = self.match_close(open) {
                out.push((m.start(), close + 1));
            }
        }
        out
    }
}

/// Words a JS or Java function pattern may take for a name.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "if", "for", "while", "switch", "catch", "function", "return", "with", "else", "do", "try",
    "new", "await", "typeof", "super", "constructor",
];

/// A function or method found by [`Source::functions`].
#[derive(Debug, Clone)]
pub(crate) struct Func {
    pub name: String,
    /// 0-based line of the name.
    pub line: usize,
    /// Offset where the declaration starts.
    pub start: usize,
    /// Parameter list content range.
    pub params: (usize, usize),
    /// Declared return type, when written.
    pub ret: Option<String>,
    /// Body content range (inside the braces; for Python the block lines).
    pub body: Option<(usize, usize)>,
    pub is_async: bool,
    /// Python decorators (code text), top to bottom.
    pub decorators: Vec<String>,
    pub indent: usize,
}

/// What a language's scanner read of one function besides where it is.
struct Found {
    ret: Option<String>,
    body: Option<(usize, usize)>,
    is_async: bool,
}

fn strip_comment_markers(raw: &str, lang: Lang) -> String {
    let t = raw.trim();
    let t = if lang == Lang::Python {
        t.trim_start_matches('#')
    } else {
        let t = t.strip_prefix("//").unwrap_or(t);
        let t = t.strip_prefix("/*").unwrap_or(t);
        let t = t.strip_suffix("*/").unwrap_or(t);
        t.trim_start_matches(['/', '!', '*'])
    };
    t.trim().to_string()
}

/// Split the masked text `m[from..to]` at top-level commas; returns the
/// ranges of the parts, trimmed of whitespace, empty parts dropped.
pub(crate) fn split_args(masked: &str, from: usize, to: usize) -> Vec<(usize, usize)> {
    let b = masked.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut s = from;
    let push = |a: usize, z: usize, out: &mut Vec<(usize, usize)>| {
        let mut a = a;
        let mut z = z;
        while a < z && b[a].is_ascii_whitespace() {
            a += 1;
        }
        while z > a && b[z - 1].is_ascii_whitespace() {
            z -= 1;
        }
        if a < z {
            out.push((a, z));
        }
    };
    for (j, &x) in b.iter().enumerate().take(to.min(b.len())).skip(from) {
        match x {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                push(s, j, &mut out);
                s = j + 1;
            }
            _ => {}
        }
    }
    push(s, to.min(b.len()), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_strings_and_blanks_comments() {
        let s = Source::new(
            Lang::Js,
            "const a = 'x // y'; // note\nlet b = `t ${c + \"}\"} u`;\n",
        );
        assert_eq!(s.masked_line(0), "const a = '______';        ");
        assert_eq!(s.code_line(0), "const a = 'x // y';        ");
        assert_eq!(s.comments.len(), 1);
        assert_eq!(s.comments[0].text, "note");
        assert_eq!(s.masked_line(1), "let b = `____c + \"_\"___`;");
        assert_eq!(s.string_at(10), Some("x // y"));
    }

    #[test]
    fn js_regex_literals_are_masked() {
        let s = Source::new(Lang::Js, "const r = /['\"]+/g; const d = a / b; // c\n");
        assert_eq!(
            s.masked_line(0),
            "const r = /_____/g; const d = a / b;     "
        );
    }

    #[test]
    fn python_strings_prefixes_and_fstrings() {
        let s = Source::new(
            Lang::Python,
            "x = f\"{password}\" # c\ny = r'\\d' + '''a\nb'''\n",
        );
        assert_eq!(s.masked_line(0), "x = f\"_password_\"    ");
        assert_eq!(s.masked_line(1), "y = r'__' + '''_");
        assert_eq!(s.masked_line(2), "_'''");
        assert!(!s.logical_starts()[2]);
    }

    #[test]
    fn rust_lifetimes_chars_raw_strings() {
        let s = Source::new(
            Lang::Rust,
            "fn f<'a>(x: &'a str) -> char { let _ = r#\"q\"#; '}' }\n",
        );
        assert_eq!(
            s.masked_line(0),
            "fn f<'a>(x: &'a str) -> char { let _ = r#\"_\"#; '_' }"
        );
        let fs = s.functions();
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0].ret.as_deref(), Some("char"));
    }

    #[test]
    fn python_functions_and_blocks() {
        let text = "@dec\ndef f(a,\n      b) -> int:\n    x = 1\n\n    return x\n\ndef g(): pass\n";
        let s = Source::new(Lang::Python, text);
        let fs = s.functions();
        assert_eq!(fs.len(), 2);
        assert_eq!(fs[0].name, "f");
        assert_eq!(fs[0].ret.as_deref(), Some("int"));
        assert_eq!(fs[0].decorators, vec!["@dec".to_string()]);
        let (a, b) = fs[0].body.unwrap();
        assert_eq!(text[a..b].trim(), "x = 1\n\n    return x");
        let (a, b) = fs[1].body.unwrap();
        assert_eq!(text[a..b].trim(), "pass");
    }

    #[test]
    fn js_functions() {
        let text = "function isA(x): string { return 'a'; }\nconst hasB = async (y) => y > 1;\nclass K {\n  isC(): number {\n    return 1;\n  }\n}\n";
        let s = Source::new(Lang::Ts, text);
        let fs = s.functions();
        let names: Vec<_> = fs
            .iter()
            .map(|f| (f.name.as_str(), f.ret.clone(), f.is_async))
            .collect();
        assert_eq!(
            names,
            vec![
                ("isA", Some("string".to_string()), false),
                ("hasB", None, true),
                ("isC", Some("number".to_string()), false)
            ]
        );
        let (a, b) = fs[1].body.unwrap();
        assert_eq!(&text[a..b], "y > 1");
    }

    #[test]
    fn cfg_test_range() {
        let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\nfn c() {}\n";
        let s = Source::new(Lang::Rust, text);
        let r = s.cfg_test_ranges();
        assert_eq!(r.len(), 1);
        assert_eq!(s.line_index(r[0].0), 1);
        assert_eq!(s.line_index(r[0].1 - 1), 4);
    }
}
