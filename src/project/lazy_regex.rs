//! A regex that is compiled only once a haystack could match it.
//!
//! Compiling is most of what a pattern costs wfx: the built-in analyzer
//! and the parsers hold dozens of patterns for many languages and runners,
//! each compiled into forward and reverse automata (a Unicode `\w` alone is
//! hundreds of states), while one project's output can match only a few of
//! them. So a pattern is first parsed and the literals every match must
//! start with, end with, or hold somewhere are taken from it (the first
//! two by the extraction the regex crate uses for its own prefilter, the
//! third from the pattern's structure, for patterns such as
//! `^\s*(not )?ok \d+` whose ends are classes); the rarest of these sets is
//! kept. A haystack that holds none of its literals cannot match,
//! and the answer is "no match" without compiling. The first haystack that
//! holds one compiles the regex, which answers from then on. Results are
//! exactly the compiled regex's: only the work for haystacks that cannot
//! match is skipped.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Captures, Match, Regex, Replacer};
use regex_syntax::hir::literal::{ExtractKind, Extractor, Literal, Seq};
use regex_syntax::hir::{
    Capture, Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look, Repetition,
};

/// Above this many literals the regex is compiled at once (the regex's
/// own prefilter is then as good).
const MAX_NEEDLES: usize = 64;

/// A pattern the code holds (a bad one is a bug), compiled on demand.
pub struct LazyRegex {
    pattern: Box<str>,
    /// Every match holds one of these literals (at its start, its end or
    /// inside); `None`: any haystack may match (none is known).
    needles: Option<Searcher>,
    regex: OnceLock<Regex>,
}

impl LazyRegex {
    /// Parse `pattern` and take the literals its matches hold; panics on a bad
    /// pattern, as compiling it would.
    pub fn new(pattern: &str) -> LazyRegex {
        // The literals are taken with each letter's cases as one lower-case
        // letter (and looked for in any case): a `(?i)` word is then one
        // literal, not one per case variant. The patterns wfx holds are
        // read by [`quick_hir`] (a few thousand instructions); only what it
        // does not know is parsed in full (a hundred thousand and more).
        let Folded {
            hir,
            any_case,
            escapes,
        } = quick_hir(pattern).unwrap_or_else(|| full_hir(pattern));
        LazyRegex {
            pattern: pattern.into(),
            needles: needles(&hir).and_then(|lits| Searcher::new(lits, any_case, &escapes)),
            regex: OnceLock::new(),
        }
    }

    /// The compiled regex (compiled now if it was not yet).
    pub fn regex(&self) -> &Regex {
        self.regex.get_or_init(|| super::compile(&self.pattern))
    }

    /// False only when `hay` cannot hold a match; once compiled, the regex
    /// answers (its own prefilter does the same work, faster).
    fn may_match(&self, hay: &str) -> bool {
        if self.regex.get().is_some() {
            return true;
        }
        self.needles.as_ref().is_none_or(|n| n.finds(hay))
    }

    /// The compiled regex when `hay` may match.
    fn for_hay(&self, hay: &str) -> Option<&Regex> {
        self.may_match(hay).then(|| self.regex())
    }

    pub fn is_match(&self, hay: &str) -> bool {
        self.for_hay(hay).is_some_and(|r| r.is_match(hay))
    }

    pub fn find<'h>(&self, hay: &'h str) -> Option<Match<'h>> {
        self.for_hay(hay)?.find(hay)
    }

    pub fn captures<'h>(&self, hay: &'h str) -> Option<Captures<'h>> {
        self.for_hay(hay)?.captures(hay)
    }

    pub fn find_iter<'h>(&self, hay: &'h str) -> impl Iterator<Item = Match<'h>> {
        self.for_hay(hay)
            .into_iter()
            .flat_map(move |r| r.find_iter(hay))
    }

    pub fn captures_iter<'h>(&self, hay: &'h str) -> impl Iterator<Item = Captures<'h>> {
        self.for_hay(hay)
            .into_iter()
            .flat_map(move |r| r.captures_iter(hay))
    }

    pub fn replace_all<'h, R: Replacer>(&self, hay: &'h str, rep: R) -> Cow<'h, str> {
        match self.for_hay(hay) {
            Some(r) => r.replace_all(hay, rep),
            None => Cow::Borrowed(hay),
        }
    }

    /// Whether the regex has been compiled (for tests).
    #[cfg(test)]
    fn compiled(&self) -> bool {
        self.regex.get().is_some()
    }

    /// Whether the literals alone rule `hay` out (for tests).
    #[cfg(test)]
    fn rules_out(&self, hay: &str) -> bool {
        self.needles.as_ref().is_some_and(|n| !n.finds(hay))
    }
}

/// A pattern's HIR with the classes that are an ASCII letter's cases made
/// that letter in lower case ([`fold_cases`]).
struct Folded {
    hir: Hir,
    /// A letter was folded: the literals are looked for in any ASCII case.
    any_case: bool,
    /// The other characters the folded letters stand for (`ſ` for `s`).
    escapes: Vec<char>,
}

/// [`Folded`] from the full parse (any pattern; panics on a bad one).
fn full_hir(pattern: &str) -> Folded {
    let hir = regex_syntax::parse(pattern).unwrap_or_else(|e| panic!("regex {pattern}: {e}"));
    let mut escapes = Vec::new();
    match fold_cases(&hir, &mut escapes) {
        Some(hir) => Folded {
            hir,
            any_case: true,
            escapes,
        },
        None => Folded {
            hir,
            any_case: false,
            escapes,
        },
    }
}

/// Literals one of which every match of `hir` holds: every match starts
/// with one of the prefixes, ends with one of the suffixes and contains one
/// of the required literals; any of these sets, when finite and small,
/// must be in a haystack that matches.
fn needles(hir: &Hir) -> Needles {
    let [prefixes, suffixes] = [ExtractKind::Prefix, ExtractKind::Suffix]
        .map(|kind| usable(Extractor::new().kind(kind).extract(hir)));
    match better(prefixes, suffixes) {
        Some(ends) if shortest(&ends) >= RARE_ENOUGH => Some(ends),
        ends => better(ends, required(hir)),
    }
}

/// Looks for any of a pattern's literals in a haystack. It is built for
/// every pattern and searched only until the pattern compiles, so it is
/// the cheapest to build: a substring finder per literal (an Aho-Corasick
/// automaton cost a hundred thousand instructions to build, more than the
/// searches it saved), over the haystack in lower ASCII case when the
/// literals are looked for in any case.
struct Searcher {
    finders: Vec<memchr::memmem::Finder<'static>>,
    any_case: bool,
}

impl Searcher {
    /// A searcher for `lits` (in any ASCII case when `any_case`), or for
    /// any of `escapes` (the other characters a folded letter stands for,
    /// such as `ſ` for `s`): a haystack that matches holds one literal up
    /// to ASCII case unless it holds one of those.
    fn new(lits: Vec<Vec<u8>>, any_case: bool, escapes: &[char]) -> Option<Searcher> {
        let mut lits: Vec<Vec<u8>> = lits
            .into_iter()
            .map(|l| if any_case { l.to_ascii_lowercase() } else { l })
            .chain(escapes.iter().map(|c| c.to_string().into_bytes()))
            .collect();
        // A literal that holds another is found only where that one is.
        lits.sort_unstable_by_key(Vec::len);
        lits.dedup();
        let mut kept: Vec<Vec<u8>> = Vec::with_capacity(lits.len());
        for lit in lits {
            if lit.is_empty() {
                return None;
            }
            if !kept.iter().any(|k| memchr::memmem::find(&lit, k).is_some()) {
                kept.push(lit);
            }
        }
        let finders = kept
            .iter()
            .map(|l| memchr::memmem::Finder::new(l).into_owned())
            .collect();
        Some(Searcher { finders, any_case })
    }

    fn finds(&self, hay: &str) -> bool {
        let lower;
        let hay = match self.any_case {
            true => {
                lower = hay.to_ascii_lowercase();
                lower.as_bytes()
            }
            false => hay.as_bytes(),
        };
        self.finders.iter().any(|f| f.find(hay).is_some())
    }
}

/// [`Folded`] for a pattern in the plain syntax wfx's patterns use, read in
/// one pass: literals (escaped or not), `.`, `\d \s \w` and their
/// negations, bracketed classes of characters and ranges, anchors and word
/// boundaries, groups (capturing, `(?:…)`, flags `i m s U R`), repetitions
/// and alternations. It builds what the full parse and [`fold_cases`] would
/// (a class of more than the extractor's few characters stands as any
/// character: its literals are never taken); `None` for anything else or
/// anything odd (named groups, `x` or `u` flags, `\p`, nested or set-operated
/// classes, a bad pattern), which the full parse then reads.
fn quick_hir(pattern: &str) -> Option<Folded> {
    let mut parser = Quick {
        rest: pattern.chars(),
        captures: 0,
        depth: 0,
        any_case: false,
        escapes: Vec::new(),
    };
    let hir = parser.alternation(Flags::default())?;
    // Only the whole pattern ends without a `)`.
    parser.rest.as_str().is_empty().then_some(())?;
    let Quick {
        any_case, escapes, ..
    } = parser;
    Some(Folded {
        hir,
        any_case,
        escapes,
    })
}

/// The flags [`quick_hir`] follows (the others change no literal).
#[derive(Clone, Copy, Default)]
struct Flags {
    case_insensitive: bool,
    swap_greed: bool,
}

/// Deepest nesting of groups [`quick_hir`] reads (the full parse allows
/// more, and reads what this one does not).
const QUICK_DEPTH: usize = 64;

/// The state of [`quick_hir`].
struct Quick<'p> {
    rest: std::str::Chars<'p>,
    /// Capturing groups opened so far (their index, as the parser gives).
    captures: u32,
    depth: usize,
    any_case: bool,
    escapes: Vec<char>,
}

/// What the last item of a concatenation was, for a repetition after it.
#[derive(PartialEq)]
enum Last {
    /// Nothing a repetition may follow (start, look-around, flags, a
    /// repetition).
    None,
    /// The last character of the pending literal.
    Char,
    /// The last item.
    Item,
}

impl Quick<'_> {
    fn peek(&self) -> Option<char> {
        self.rest.clone().next()
    }

    fn eat(&mut self, c: char) -> bool {
        let next = self.peek() == Some(c);
        if next {
            self.rest.next();
        }
        next
    }

    /// Branches up to the end of the pattern or of the group (its `)` left
    /// unread).
    fn alternation(&mut self, mut flags: Flags) -> Option<Hir> {
        let mut branches = Vec::new();
        let mut items: Vec<Hir> = Vec::new();
        let mut lit = String::new();
        let mut last = Last::None;
        while let Some(c) = self.peek().filter(|&c| c != ')') {
            self.rest.next();
            let item = match c {
                '|' => {
                    flush(&mut lit, &mut items);
                    branches.push(Hir::concat(std::mem::take(&mut items)));
                    last = Last::None;
                    continue;
                }
                '(' => match self.group(&mut flags)? {
                    Some(hir) => Some(hir),
                    None => {
                        flush(&mut lit, &mut items);
                        last = Last::None;
                        continue;
                    }
                },
                '[' => Some(self.class(flags)?),
                '.' => Some(any_char()),
                '^' | '$' => None,
                '*' | '+' | '?' | '{' => {
                    let (min, max) = match c {
                        '*' => (0, None),
                        '+' => (1, None),
                        '?' => (0, Some(1)),
                        _ => self.counted()?,
                    };
                    let greedy = !self.eat('?') ^ flags.swap_greed;
                    let sub = match last {
                        Last::None => return None,
                        Last::Char => Hir::literal(lit.pop()?.to_string().into_bytes()),
                        Last::Item => items.pop()?,
                    };
                    flush(&mut lit, &mut items);
                    items.push(Hir::repetition(Repetition {
                        min,
                        max,
                        greedy,
                        sub: Box::new(sub),
                    }));
                    last = Last::None;
                    continue;
                }
                '\\' => match self.rest.next()? {
                    'd' | 's' | 'w' | 'D' | 'S' | 'W' => Some(any_char()),
                    'b' if self.peek() == Some('{') => return None,
                    'b' | 'B' | 'A' | 'z' | '<' | '>' => None,
                    e => {
                        let c = self.escape(e)?;
                        last = self.char(c, flags, &mut lit, &mut items);
                        continue;
                    }
                },
                ']' | '}' => return None,
                c => {
                    last = self.char(c, flags, &mut lit, &mut items);
                    continue;
                }
            };
            flush(&mut lit, &mut items);
            match item {
                Some(hir) => {
                    items.push(hir);
                    last = Last::Item;
                }
                None => {
                    items.push(Hir::look(Look::Start));
                    last = Last::None;
                }
            }
        }
        flush(&mut lit, &mut items);
        branches.push(Hir::concat(items));
        Some(match branches.len() {
            1 => branches.pop()?,
            _ => Hir::alternation(branches),
        })
    }

    /// Add `c` to the pending literal, or as an item when it is a class
    /// (a non-ASCII letter in any case); as the full parse and
    /// [`fold_cases`] would, an ASCII letter in any case is that letter in
    /// lower case, looked for in any case.
    fn char(&mut self, c: char, flags: Flags, lit: &mut String, items: &mut Vec<Hir>) -> Last {
        if !flags.case_insensitive || (c.is_ascii() && !c.is_ascii_alphabetic()) {
            lit.push(c);
            return Last::Char;
        }
        if c.is_ascii() {
            let lower = c.to_ascii_lowercase();
            self.any_case = true;
            self.escapes.extend(match lower {
                'k' => Some('\u{212A}'),
                's' => Some('\u{17F}'),
                _ => None,
            });
            lit.push(lower);
            return Last::Char;
        }
        let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
        class.case_fold_simple();
        flush(lit, items);
        items.push(self.folded(class));
        Last::Item
    }

    /// `class` as an ASCII letter in lower case when it is one's two cases
    /// (and at most [`MAX_ESCAPES`] others), as [`fold_cases`] makes it.
    fn folded(&mut self, class: ClassUnicode) -> Hir {
        match ascii_letter(&class) {
            Some((letter, others)) => {
                self.any_case = true;
                self.escapes.extend(others);
                Hir::literal([letter])
            }
            None => Hir::class(Class::Unicode(class)),
        }
    }

    /// The character an escape other than a class or a look-around stands
    /// for (after its `\` and `e`); `None` for one it does not know.
    fn escape(&mut self, e: char) -> Option<char> {
        Some(match e {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'f' => '\x0C',
            'v' => '\x0B',
            'a' => '\x07',
            'x' => {
                let braced = self.eat('{');
                let mut digits = String::new();
                while digits.len() < 9 {
                    match self.rest.next()? {
                        '}' if braced => break,
                        c => digits.push(c),
                    }
                    if !braced && digits.len() == 2 {
                        break;
                    }
                }
                let valid = (1..=8).contains(&digits.len());
                (valid && digits.chars().all(|c| c.is_ascii_hexdigit())).then_some(())?;
                char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?
            }
            e if regex_syntax::is_escapeable_character(e) => e,
            _ => return None,
        })
    }

    /// A group after its `(`: its HIR, or `None` inside when it only sets
    /// `flags` (for the rest of the group it is in).
    fn group(&mut self, flags: &mut Flags) -> Option<Option<Hir>> {
        self.depth += 1;
        (self.depth <= QUICK_DEPTH).then_some(())?;
        let mut inner = *flags;
        let mut capture = None;
        if self.eat('?') {
            let mut enable = true;
            let mut seen = String::new();
            let mut after_negation = 0;
            loop {
                let c = self.rest.next()?;
                // A repeated flag, `-` or a `-` followed by no flag is an
                // error for the full parse.
                if seen.contains(c) || (matches!(c, ':' | ')') && !enable && after_negation == 0) {
                    return None;
                }
                match c {
                    ':' => break,
                    ')' => {
                        (!seen.is_empty()).then_some(())?;
                        *flags = inner;
                        self.depth -= 1;
                        return Some(None);
                    }
                    '-' => enable = false,
                    'i' => inner.case_insensitive = enable,
                    'U' => inner.swap_greed = enable,
                    'm' | 's' | 'R' => {}
                    _ => return None,
                }
                after_negation += usize::from(!enable && c != '-');
                seen.push(c);
            }
        } else {
            self.captures += 1;
            capture = Some(self.captures);
        }
        let sub = self.alternation(inner)?;
        self.eat(')').then_some(())?;
        self.depth -= 1;
        Some(Some(match capture {
            Some(index) => Hir::capture(Capture {
                index,
                name: None,
                sub: Box::new(sub),
            }),
            None => sub,
        }))
    }

    /// A bracketed class after its `[`: the class when it is a union of
    /// characters and ranges (in any case with `i`), any character when it
    /// is negated or holds `\d`, `\s` or `\w` (more characters than the
    /// extractor takes either way).
    fn class(&mut self, flags: Flags) -> Option<Hir> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        let mut many = negated;
        let mut first = true;
        loop {
            let c = self.rest.next()?;
            let start = match c {
                ']' if !first => break,
                '[' => return None,
                '&' | '~' | '-' if self.peek() == Some(c) => return None,
                '\\' => match self.rest.next()? {
                    'd' | 's' | 'w' | 'D' | 'S' | 'W' => {
                        many = true;
                        None
                    }
                    e => Some(self.escape(e)?),
                },
                c => Some(c),
            };
            first = false;
            let mut ahead = self.rest.clone();
            let range = ahead.next() == Some('-') && !matches!(ahead.next(), Some(']' | '-'));
            match (start, range) {
                (None, true) => return None,
                (None, false) => {}
                (Some(start), false) => ranges.push(ClassUnicodeRange::new(start, start)),
                (Some(start), true) => {
                    self.rest.next();
                    let end = match self.rest.next()? {
                        '\\' => {
                            let e = self.rest.next()?;
                            self.escape(e)?
                        }
                        '[' => return None,
                        c => c,
                    };
                    (start <= end).then_some(())?;
                    ranges.push(ClassUnicodeRange::new(start, end));
                }
            }
        }
        if many {
            return Some(any_char());
        }
        let mut class = ClassUnicode::new(ranges);
        if flags.case_insensitive {
            class.case_fold_simple();
        }
        Some(self.folded(class))
    }

    /// The bounds of a counted repetition after its `{`.
    fn counted(&mut self) -> Option<(u32, Option<u32>)> {
        let min = self.number()?;
        let max = match self.eat(',') {
            true if self.peek() == Some('}') => None,
            true => Some(self.number()?),
            false => Some(min),
        };
        self.eat('}').then_some(())?;
        max.is_none_or(|max| min <= max).then_some((min, max))
    }

    /// A decimal number (at least one digit).
    fn number(&mut self) -> Option<u32> {
        let rest = self.rest.as_str();
        let len = rest.bytes().take_while(u8::is_ascii_digit).count();
        self.rest = rest[len..].chars();
        rest[..len].parse().ok()
    }
}

/// End the pending literal `lit` as an item.
fn flush(lit: &mut String, items: &mut Vec<Hir>) {
    if !lit.is_empty() {
        items.push(Hir::literal(std::mem::take(lit).into_bytes()));
    }
}

/// A class of more characters than the extractor takes: what stands in
/// [`quick_hir`] for a class whose literals are never taken.
fn any_char() -> Hir {
    Hir::class(Class::Unicode(ClassUnicode::new([ClassUnicodeRange::new(
        '\0',
        char::MAX,
    )])))
}

/// `hir` with every class that is an ASCII letter's two cases (and at
/// most [`MAX_ESCAPES`] other characters) made that letter in lower case,
/// the other characters added to `escapes`; `None` when there is no such
/// class. Each match of `hir` that holds none of `escapes` is, up to ASCII
/// case, a match of the result (a letter's case does not change what a
/// look-around sees), so the result's literals, looked for in any case
/// and with `escapes`, are found in every haystack that matches.
fn fold_cases(hir: &Hir, escapes: &mut Vec<char>) -> Option<Hir> {
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            let (letter, others) = ascii_letter(class)?;
            escapes.extend(others);
            escapes.sort_unstable();
            escapes.dedup();
            Some(Hir::literal([letter]))
        }
        HirKind::Capture(c) => fold_cases(&c.sub, escapes).map(|sub| {
            Hir::capture(Capture {
                index: c.index,
                name: c.name.clone(),
                sub: Box::new(sub),
            })
        }),
        HirKind::Repetition(r) => fold_cases(&r.sub, escapes).map(|sub| {
            Hir::repetition(Repetition {
                sub: Box::new(sub),
                ..r.clone()
            })
        }),
        HirKind::Concat(parts) => fold_each(parts, escapes).map(Hir::concat),
        HirKind::Alternation(branches) => fold_each(branches, escapes).map(Hir::alternation),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => None,
    }
}

/// [`fold_cases`] of each of `hirs`; `None` when none changes.
fn fold_each(hirs: &[Hir], escapes: &mut Vec<char>) -> Option<Vec<Hir>> {
    let folded: Vec<Option<Hir>> = hirs.iter().map(|h| fold_cases(h, escapes)).collect();
    folded.iter().any(Option::is_some).then(|| {
        folded
            .into_iter()
            .zip(hirs)
            .map(|(f, h)| f.unwrap_or_else(|| h.clone()))
            .collect()
    })
}

/// Most characters other than its two cases a class folded to an ASCII
/// letter may hold (Unicode's folds add one at most: `ſ` to `s`, the
/// Kelvin sign to `k`).
const MAX_ESCAPES: usize = 2;

/// The lower-case ASCII letter whose two cases `class` holds, and its
/// other characters, when it holds no other ASCII character and at most
/// [`MAX_ESCAPES`] others.
fn ascii_letter(class: &ClassUnicode) -> Option<(u8, Vec<char>)> {
    let mut ascii = Vec::with_capacity(2);
    let mut others = Vec::new();
    for range in class.iter() {
        for c in range.start()..=range.end() {
            match c.is_ascii() {
                true if ascii.len() < 2 => ascii.push(c as u8),
                false if others.len() < MAX_ESCAPES => others.push(c),
                _ => return None,
            }
        }
    }
    match ascii[..] {
        [upper, lower] if upper.is_ascii_uppercase() && lower == upper.to_ascii_lowercase() => {
            Some((lower, others))
        }
        _ => None,
    }
}

/// Prefixes or suffixes this long are rare enough in text that cannot
/// match: the required literals (most of the added cost of
/// [`LazyRegex::new`]) are looked for only when these are shorter or there
/// are none. Over the recorded outputs this rules out as many haystacks as
/// always taking the best of the three sets (a few more, in fact).
const RARE_ENOUGH: usize = 3;

/// Literals one of which every match contains; `None`: none is known.
type Needles = Option<Vec<Vec<u8>>>;

/// The literals of `seq` when it is finite, small and every one of them
/// is non-empty (an empty literal is in every haystack).
fn usable(seq: Seq) -> Needles {
    let lits = seq.literals()?;
    let usable = lits.len() <= MAX_NEEDLES && lits.iter().all(|l| !l.is_empty());
    usable.then(|| lits.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// The rarer of two needle sets: the longer shortest literal (a short one
/// is in more haystacks), then the fewer literals; `a` on a tie.
fn better(a: Needles, b: Needles) -> Needles {
    let rank = |n: &Vec<Vec<u8>>| (shortest(n), std::cmp::Reverse(n.len()));
    match (a, b) {
        (Some(a), Some(b)) if rank(&b) > rank(&a) => Some(b),
        (a, b) => a.or(b),
    }
}

/// The length of the shortest of `lits` (0 for none).
fn shortest(lits: &[Vec<u8>]) -> usize {
    lits.iter().map(Vec::len).min().unwrap_or(0)
}

/// Literals one of which every match of `hir` contains somewhere (not
/// only at its start or end), from its structure: a concatenation's match
/// holds a match of each of its parts, and of each run of them (whose
/// literal prefixes are taken); an alternation's match is one of its
/// branches'; a repetition at least once holds its part's. What may match
/// the empty string (a look-around, `x*`, `x?`, an empty branch) holds
/// none.
fn required(hir: &Hir) -> Needles {
    match hir.kind() {
        HirKind::Literal(_) | HirKind::Class(_) => usable(Extractor::new().extract(hir)),
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for branch in branches {
                all.extend(required(branch)?);
            }
            fit(all)
        }
        HirKind::Concat(parts) => {
            let extractor = Extractor::new();
            let prefixes: Vec<Seq> = parts.iter().map(|p| extractor.extract(p)).collect();
            // Runs one after the other: the next starts at the part that
            // ended the last (a run from inside one is no longer, and a
            // `(?i)` word would cost one per letter). A literal's or a
            // class's own literals start a run; the other parts are looked
            // into.
            let mut runs = Vec::new();
            let mut start = 0;
            while start < parts.len() {
                if !prefixes[start].is_finite() {
                    start += 1;
                    continue;
                }
                let (run, crossed) = prefix_of_run(&prefixes[start..]);
                runs.push(usable(run));
                start += crossed.saturating_sub(1).max(1);
            }
            let inside = parts
                .iter()
                .filter(|p| !matches!(p.kind(), HirKind::Literal(_) | HirKind::Class(_)))
                .map(required);
            runs.into_iter().chain(inside).reduce(better).flatten()
        }
        HirKind::Empty | HirKind::Look(_) | HirKind::Repetition(_) => None,
    }
}

/// At most [`MAX_NEEDLES`] of `lits`: when there are more (a `(?i)` word
/// is a literal per case variant), each is cut to its first few bytes and
/// the duplicates dropped; a haystack with a literal holds its start.
fn fit(mut lits: Vec<Vec<u8>>) -> Needles {
    for keep in [usize::MAX, 4, 3, 2, 1] {
        for lit in &mut lits {
            lit.truncate(keep);
        }
        lits.sort_unstable();
        lits.dedup();
        if lits.len() <= MAX_NEEDLES {
            return Some(lits);
        }
    }
    None
}

/// The literal prefixes of a run of a concatenation's parts, from theirs
/// (`prefixes`), crossed as the extractor does while the set stays small;
/// and how many parts were crossed in (the last one may have ended the
/// run, its literals left out).
fn prefix_of_run(prefixes: &[Seq]) -> (Seq, usize) {
    let mut run = Seq::singleton(Literal::exact(vec![]));
    for (crossed, next) in prefixes.iter().enumerate() {
        if run.is_inexact() {
            return (run, crossed);
        }
        let mut next = next.clone();
        if run.max_cross_len(&next).is_none_or(|n| n > MAX_NEEDLES) {
            next.make_infinite();
        }
        run.cross_forward(&mut next);
    }
    (run, prefixes.len())
}

/// Everything else a `Regex` offers, compiled first.
impl std::ops::Deref for LazyRegex {
    type Target = Regex;
    fn deref(&self) -> &Regex {
        self.regex()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Patterns of the kinds wfx holds (alternations, case classes, look
    /// arounds, anchors, classes first, optional prefixes) against
    /// haystacks that match, almost match and do not: every answer is the
    /// compiled regex's.
    #[test]
    fn every_answer_is_the_compiled_regexs() {
        let patterns: &[&str] = &[
            r"EADDRINUSE|[Aa]ddress already in use|\[Errno (?:98|48)\]",
            r"(?i)^(?:\w+\.)*(?:AssertionError|assert\b|expected\b|expect\()",
            r"No module named '?([\w.]+)'?",
            r#"File "([^"]+)", line (\d+)(?:, in ([^\s]+))?"#,
            r"(?m)(?:^|\s)([\w.+-]+): (?:command )?not found\s*$",
            r"\bfoo\b",
            r"(?i)ß|straße",
            r"\b\d+(?:\.\d+)?",
            r"\s+",
            r"a?bc",
            r"(?:^|[\s\x22])([\w./-]+\.py):",
            r"[\w$.]+\.(?:java|kt)",
            r"(?:panicked|did not panic as expected) at ([^\s:]+\.rs):(\d+):\d+",
            r#"(?:^|[\s('"❯])((?:file://)?[^\s()'"❯]+?\.(?:[cm]?[jt]sx?)):(\d+):(\d+)"#,
            // Ruled out only by a literal inside (neither end is literal).
            r"(?m)^(TAP version \d+|\s*(not )?ok \d+( |$)|1\.\.\d+$)",
            r"(?:[A-Za-z]:)?[\w.~-]*[/\\][\w~-][\w./\\~-]*(?::\d+)*",
            r"\w+(?i:error|fail)ed\b",
            r"(?i)\s(?:kelvin|straße|über|ärger|assert|expected|no tests ran)\s",
            r"\d+ ✓ \w+",
            r"\d(ab)+\d",
            r"\s(?:(?:ab)+c)+\s",
            r"\s(?:x|)y\s",
            r"\s(?:ab){1,3}c?\s",
            r"\w\B(?:=|!=)\b\w",
            // A branch, a repetition or a part that may match nothing
            // requires nothing.
            r"foo|\d+",
            r"\s(?:foo|\d*)\s",
            r"(ab)+",
            r"(?:x|)y",
            r"a*b*",
            r"(?:ab)?c?",
            r"\s(?:ab){0,2}\s",
            r"(?m)^\s*$",
            r"\bx\b|\B",
            // Letters folded to one case (and `ſ`, the Kelvin sign, `İ`).
            r"(?i)kelvin|teſt",
            r"(?i)\bstraße\b",
            r"(?mi)^[=\s]*(no tests ran in\b|no tests found|\?\s+\S+\s+\[no test files\]\s*$)",
            r"[Nn]o [Tt]ests|[Kk\u{212A}]ey",
            r"(?i)\w+ISSUE\d",
            r"(?i:İ)x|ı",
        ];
        let hays = [
            "",
            "EADDRINUSE: port 80",
            "error: address already in use",
            "OSError: [Errno 98] in use",
            "assertionerror: 1 != 2",
            "x.y.AssertionError",
            "ModuleNotFoundError: No module named 'foo.bar'",
            "  File \"a.py\", line 12, in test_x",
            "sh: 1: pytest: not found",
            "xfooy foo",
            "STRASSE Straße",
            "took 1.5 s",
            "bc abc",
            "thread 'x' panicked at src/lib.rs:3:9",
            "at ❯ src/a.test.ts:4:7",
            "tests/test_a.py: 3 failed",
            "at x.Y(Y.java:3) Z.kt",
            "nothing to see here",
            "TAP version 13\nok 1 - adds\nnot ok 2 - subtracts\n1..2\n",
            "  ok 12\n",
            "1..3",
            "see src/a.rs:3:9 and C:\\x\\y.py",
            "no/",
            "FooERRORED now, x_failed",
            "a \u{212A}ELVIN b, an Über \u{1E9E}TRASSE, a ÄRGER \t",
            " straſſe  no tests ran ",
            "12 ✓ ok",
            "3abab4 3ab4 ab",
            " ababcabc  abababc  ac ",
            " y  xy  xxy ",
            "a=b a!=b a = b",
            "foo 42 x",
            "  \n\nx",
            "bbb",
            "\u{212A}ELVIN, a \u{212A}elvin, KeLvIn",
            "a teſt, a TEST, a \u{17F}trasse, STRAßE, \u{17F}TRA\u{1E9E}E.",
            "== NO TEſTS RAN IN 0.1s\n? x [NO TEST FILES]\n",
            "No tests, \u{212A}ey, KEY",
            "x_i\u{17F}\u{17F}ue3 x\u{130}ssue4 issue5",
            "\u{130}x i\u{307}x \u{131}",
        ];
        for p in patterns {
            for h in hays {
                let lazy = LazyRegex::new(p);
                let compiled = Regex::new(p).unwrap();
                assert_eq!(lazy.is_match(h), compiled.is_match(h), "{p} on {h:?}");
                let lazy = LazyRegex::new(p);
                assert_eq!(
                    lazy.find(h).map(|m| m.range()),
                    compiled.find(h).map(|m| m.range()),
                    "{p} on {h:?}"
                );
                let lazy = LazyRegex::new(p);
                let caps = |c: Captures| {
                    c.iter()
                        .map(|m| m.map(|m| m.as_str().to_string()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(
                    lazy.captures_iter(h).map(caps).collect::<Vec<_>>(),
                    compiled.captures_iter(h).map(caps).collect::<Vec<_>>(),
                    "{p} on {h:?}"
                );
                let lazy = LazyRegex::new(p);
                assert_eq!(
                    lazy.replace_all(h, "<x>"),
                    compiled.replace_all(h, "<x>"),
                    "{p} on {h:?}"
                );
            }
        }
    }

    #[test]
    fn a_haystack_without_any_literal_of_the_pattern_compiles_nothing() {
        let lazy = LazyRegex::new(r"No module named '?([\w.]+)'?|cannot find crate");
        assert!(!lazy.is_match("AssertionError: 1 != 2"));
        assert!(lazy.captures("a\nb\n").is_none());
        assert!(!lazy.compiled());
        assert!(lazy.is_match("No module named 'x'"));
        assert!(lazy.compiled());
        // A pattern that may start anywhere is compiled at its first use.
        let suffix = LazyRegex::new(r"[\w$.]+\.(?:java|kt)");
        assert!(!suffix.is_match("Error in a.py"));
        assert!(!suffix.compiled());
        let any = LazyRegex::new(r"\s+");
        assert!(!any.is_match("x"));
        assert!(any.compiled());
    }

    /// Patterns whose every match starts and ends with a class (neither
    /// the prefixes nor the suffixes are finite), ruled out without being
    /// compiled on text that lacks a literal they hold inside; most are
    /// wfx's own (the TAP sniff, paths in a message, `locations`, the
    /// assertion and "no tests" sniffs, Conventional Commits).
    #[test]
    fn a_literal_inside_rules_out_text_without_it() {
        let cases: &[(&str, &str)] = &[
            (
                r"(?m)^(TAP version \d+|\s*(not )?ok \d+( |$)|1\.\.\d+$)",
                "test failed",
            ),
            (
                r"(?:[A-Za-z]:)?[\w.~-]*[/\\][\w~-][\w./\\~-]*(?::\d+)*",
                "test failed 3 times",
            ),
            (
                r#"(?:^|[\s(\[`'"❯>])(?:file://)?((?:[A-Za-z]:)?[\w.@~+/-]*[\w@~+-]\.[A-Za-z][A-Za-z0-9]{0,5}):(\d+)(?::\d+)?"#,
                "not ok 2 - subtracts",
            ),
            (
                r"(?i)^(?:\w+\.)*(?:AssertionError|AssertionFailedError|assert\b|assertion\b|expected\b|expect\(|Error: expect\()",
                "test failed",
            ),
            (
                r"(?mi)^[=\s]*(no tests ran in\b|no tests found|no test files found|no test suite found|\?\s+\S+\s+\[no test files\]\s*$)",
                "ran 1\n",
            ),
            (r"^[a-z]+(\([^()\s]*\))?!?: \S", "initial"),
            (
                r"^\s*([^\s:\x22'()]+\.py):(\d+):(?:\s+in\s+(\S+)|\s|$)",
                "at src/lib.rs:3:9",
            ),
            (
                r"(?m)(?:^|\s)([\w.+-]+): (?:command )?not found\s*$|exec: \x22([\w.+-]+)\x22: executable file not found",
                "sh: x: found",
            ),
            (r"\w+(?i:error|fail)\w", "it broke, an Erro"),
            (r"\s(?:(?:ab)+c)+\s", " ba ac "),
        ];
        for (p, hay) in cases {
            let hir = regex_syntax::parse(p).unwrap();
            for kind in [ExtractKind::Prefix, ExtractKind::Suffix] {
                let ends = usable(Extractor::new().kind(kind.clone()).extract(&hir));
                assert!(ends.is_none(), "{p}: {kind:?} would rule out alone");
            }
            let lazy = LazyRegex::new(p);
            assert!(lazy.rules_out(hay), "{p} not ruled out on {hay:?}");
            assert!(!lazy.is_match(hay) && lazy.find_iter(hay).next().is_none());
            assert!(!lazy.compiled(), "{p} compiled for {hay:?}");
            assert!(!Regex::new(p).unwrap().is_match(hay), "{p} matches {hay:?}");
        }
    }

    /// The required literals of patterns shaped like the analysis' rules.
    #[test]
    fn required_literals_follow_the_patterns_structure() {
        let cases: &[(&str, Option<&[&str]>)] = &[
            (r"\s*(not )?ok \d+", Some(&["not ok ", "ok "])),
            (r"\s+(?:foo|bar\d)\s", Some(&["bar", "foo"])),
            (r"\s+(?:foo|\d+)\s", None),
            (r"\d(ab)+\d", Some(&["ab"])),
            (r"\d(ab)*\d", None),
            (r"\s(?:x|)y", Some(&["y"])),
            (r"a*b*", None),
            (r"\b\w+\b", None),
            // `k` folds to the Kelvin sign too.
            (
                r"\w+(?i:ok)\d",
                Some(&["OK", "Ok", "O\u{212A}", "oK", "ok", "o\u{212A}"]),
            ),
            (r"\w[/\\]\w", Some(&["/", "\\"])),
            (r"\w+\.py:\d", Some(&[".py:"])),
            (r"\d\w+import\s+\w+\s+from\d", Some(&["import"])),
        ];
        for (p, want) in cases {
            let mut got = required(&regex_syntax::parse(p).unwrap());
            if let Some(got) = &mut got {
                got.sort();
            }
            let want = want.map(|w| w.iter().map(|l| l.as_bytes().to_vec()).collect::<Vec<_>>());
            assert_eq!(got, want, "{p}");
        }
    }

    /// The raw-string patterns `literal` (whose groups 1 and 3 are the
    /// `#`s around the pattern, group 2) finds in wfx's sources.
    fn source_patterns(literal: &str) -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let literal = Regex::new(literal).unwrap();
        let mut patterns = Vec::new();
        for entry in walkdir::WalkDir::new(root.join("src")) {
            let entry = entry.unwrap();
            if entry.path().extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                for c in literal.captures_iter(&text) {
                    if c[1] == c[3] {
                        patterns.push(c[2].to_string());
                    }
                }
            }
        }
        patterns
    }

    /// Every pattern written as `re!(r"…")` in wfx's sources, on every
    /// output recorded from real runs (fixtures/outputs), whole and line by
    /// line: whenever the literals rule a haystack out, the compiled regex
    /// finds no match in it either.
    #[test]
    fn no_pattern_of_wfx_is_ruled_out_where_it_matches_a_recorded_output() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let patterns = source_patterns(r##"(?s)re!\(\s*r(#*)"(.*?)"(#*)\s*\)"##);
        assert!(
            patterns.len() > 100,
            "only {} patterns found",
            patterns.len()
        );
        let mut outputs = Vec::new();
        for entry in walkdir::WalkDir::new(root.join("fixtures/outputs")) {
            let entry = entry.unwrap();
            if let Ok(text) = std::fs::read_to_string(entry.path()) {
                outputs.push(text);
            }
        }
        assert!(outputs.len() > 100, "only {} outputs found", outputs.len());
        let mut ruled_out = 0;
        for p in &patterns {
            let lazy = LazyRegex::new(p);
            let compiled = Regex::new(p).unwrap();
            for out in &outputs {
                for hay in std::iter::once(out.as_str()).chain(out.lines()) {
                    if lazy.rules_out(hay) {
                        ruled_out += 1;
                        assert!(!compiled.is_match(hay), "{p} ruled out {hay:?}");
                    }
                }
            }
        }
        // The check ran on real cases, not only on haystacks that match.
        assert!(ruled_out > 10_000, "only {ruled_out} haystacks ruled out");
    }

    /// The "no tests" sniff (a `(?i)` alternation, once hundreds of case
    /// variants cut to a few bytes) is ruled out on every recorded output
    /// and line that lacks one of its phrases in some case, and on no
    /// haystack where it matches.
    #[test]
    fn a_case_insensitive_alternation_keeps_its_whole_phrases() {
        let p = r"(?mi)^[=\s]*(no tests ran in\b|no tests found|no test files found|no test suite found|\?\s+\S+\s+\[no test files\]\s*$)";
        let lazy = LazyRegex::new(p);
        let compiled = Regex::new(p).unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut ruled_out = 0;
        for entry in walkdir::WalkDir::new(root.join("fixtures/outputs")) {
            let Ok(text) = std::fs::read_to_string(entry.unwrap().path()) else {
                continue;
            };
            for hay in std::iter::once(text.as_str()).chain(text.lines()) {
                let lower = hay.to_ascii_lowercase();
                let phrase = ["no tests ran in", "no tests found", "no test files found"]
                    .iter()
                    .chain(&["no test suite found", "[no test files]"])
                    .any(|w| lower.contains(w));
                assert_eq!(lazy.rules_out(hay), !phrase, "{hay:?}");
                ruled_out += usize::from(!phrase);
                assert!(!(lazy.rules_out(hay) && compiled.is_match(hay)), "{hay:?}");
            }
        }
        assert!(ruled_out > 1000, "only {ruled_out} ruled out");
        assert!(!lazy.rules_out("x\n  NO TEST\u{17F} FOUND\n"));
        assert!(lazy.is_match("x\n  NO TEST\u{17F} FOUND\n"));
    }

    /// The patterns of wfx's sources, of the analysis and of these tests,
    /// and odd syntax: the quick reading gives the full parse's needles
    /// (the same sound filter) or gives way to it; every pattern of wfx is
    /// read quickly.
    #[test]
    fn the_quick_reading_finds_the_full_parses_needles() {
        let patterns: Vec<String> =
            source_patterns(r##"(?s)(?:re!\(|LazyRegex::new\()\s*r(#*)"(.*?)"(#*)"##)
                .into_iter()
                .filter(|p| regex_syntax::parse(p).is_ok())
                .collect();
        assert!(patterns.len() > 100, "only {}", patterns.len());
        let ours = patterns.len();
        let odd = [
            r"[]a]x|[^]]y",
            r"[a-]b[-c]d",
            r"[\w-]",
            r"[ -/]q",
            r"[@-Z\\-_]",
            r"\x41\x{42}(?i)\x43",
            r"(?i)a(?-i)bcd|efg",
            r"x(?i:ab)cd",
            r"(?U)ab+?c*",
            r"a{2}b{1,3}c{2,}?",
            r"(a)(?:b)(c)",
            r"(?i)[a-c]x",
            r"[Kk]ey|[Ss]t",
            r"\bfoo\b\Bbar\<x\>",
            r"\.\*\+\?\(\)\|\[\]\{\}\^\$\#\&\-\~",
            r"\ \:\/\%\!",
            r"(?i)straße|über",
            r"a|",
            r"()x",
            r"(?:)y",
            r"(?ms)^a.b$",
        ];
        let bad_or_unknown = [
            r"(?x)a b",
            r"(?P<n>x)",
            r"\pL",
            r"[[:alpha:]]",
            r"[a&&b]",
            r"[a--b]",
            r"[z-a]",
            r"a{3,2}",
            r"a{,2}",
            r"(?i-)a",
            r"(?)a",
            r"(?ii)a",
            r"*a",
            r"a|*",
            r"(a",
            r"a)",
            r"[a",
            r"\x{110000}",
            r"\x4",
            r"\q",
            r"\1",
            r"]",
            r"a**",
        ];
        for p in patterns
            .iter()
            .map(String::as_str)
            .chain(odd)
            .chain(bad_or_unknown)
        {
            let Some(quick) = quick_hir(p) else {
                assert!(
                    !patterns[..ours].iter().any(|q| q == p),
                    "{p} not read quickly"
                );
                continue;
            };
            assert!(!bad_or_unknown.contains(&p), "{p} read quickly");
            let full = full_hir(p);
            let sorted = |f: &Folded| {
                let mut n = needles(&f.hir);
                if let Some(n) = &mut n {
                    if f.any_case {
                        n.iter_mut().for_each(|l| l.make_ascii_lowercase());
                    }
                    n.sort();
                    n.dedup();
                }
                let mut e = f.escapes.clone();
                e.sort();
                e.dedup();
                (n, f.any_case, e)
            };
            assert_eq!(sorted(&quick), sorted(&full), "{p}");
        }
    }

    #[test]
    #[should_panic(expected = "regex (unclosed")]
    fn a_bad_pattern_is_a_bug_at_its_first_use() {
        let _ = LazyRegex::new("(unclosed");
    }
}
