//! A YAML document as a small tree whose every node and key remembers its
//! line and column, read with serde-saphyr. The workflow model is built from
//! this tree by hand (not with `#[derive(Deserialize)]`), so every problem —
//! an unknown key, a wrong type, a missing command — names the key, the step
//! and the exact place in the file, and all of them are reported at once.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// Line and column (1-based) of a node in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: u64,
    pub column: u64,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// One YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Keys in file order.
    Map(Vec<(Key, Node)>),
}

/// A value and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub pos: Pos,
}

/// A mapping key and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: String,
    pub pos: Pos,
}

impl Value {
    /// How the value is named in "expected …, got …" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "a number",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// A YAML syntax problem with its place, when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub pos: Option<Pos>,
    pub message: String,
}

/// Parse a whole document. An empty document is `Value::Null` at 1:1.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    match serde_saphyr::from_str::<Spanned<Raw>>(text) {
        Ok(root) => Ok(convert(root)),
        Err(e) => {
            let pos = e.location().map(|l| Pos {
                line: l.line(),
                column: l.column(),
            });
            let mut message = e.without_snippet().to_string();
            // saphyr appends " at line L, column C"; the caller prints the
            // position itself.
            if let Some(p) = pos {
                let suffix = format!(" at line {}, column {}", p.line, p.column);
                if let Some(stripped) = message.strip_suffix(&suffix) {
                    message = stripped.to_string();
                }
            }
            Err(SyntaxError { pos, message })
        }
    }
}

/// What serde-saphyr hands over: values with spans, keys with spans.
enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<String>, Spanned<Raw>)>),
}

fn pos_of(l: &serde_saphyr::Location) -> Pos {
    Pos {
        line: l.line(),
        column: l.column(),
    }
}

fn convert(raw: Spanned<Raw>) -> Node {
    let pos = pos_of(&raw.referenced);
    let value = match raw.value {
        Raw::Null => Value::Null,
        Raw::Bool(b) => Value::Bool(b),
        Raw::Int(i) => Value::Int(i),
        Raw::Float(f) => Value::Float(f),
        Raw::Str(s) => Value::Str(s),
        Raw::Seq(items) => Value::Seq(items.into_iter().map(convert).collect()),
        Raw::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    (
                        Key {
                            pos: pos_of(&k.referenced),
                            name: k.value,
                        },
                        convert(v),
                    )
                })
                .collect(),
        ),
    };
    Node { value, pos }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> Visitor<'de> for RawVisitor {
            type Value = Raw;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
                Ok(Raw::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
                Ok(Raw::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
                i64::try_from(v)
                    .map(Raw::Int)
                    .map_err(|_| E::custom(format!("number {v} is too large")))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
                Ok(Raw::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
                Ok(Raw::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Raw, E> {
                Ok(Raw::Str(v))
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
                Raw::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element::<Spanned<Raw>>()? {
                    items.push(item);
                }
                Ok(Raw::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = a.next_key::<Spanned<String>>()? {
                    let value = a.next_value::<Spanned<Raw>>()?;
                    entries.push((key, value));
                }
                Ok(Raw::Map(entries))
            }
        }
        d.deserialize_any(RawVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64, column: u64) -> Pos {
        Pos { line, column }
    }

    #[test]
    fn nodes_and_keys_carry_their_place() {
        let doc = parse("commands:\n  - shell: \"make\"\n  - test:\n      timeout: 600\n").unwrap();
        let Value::Map(top) = &doc.value else {
            panic!("{doc:?}")
        };
        assert_eq!(top[0].0.name, "commands");
        let Value::Seq(steps) = &top[0].1.value else {
            panic!()
        };
        assert_eq!(steps[0].pos, at(2, 5));
        let Value::Map(step) = &steps[0].value else {
            panic!()
        };
        assert_eq!(step[0].0.pos, at(2, 5));
        assert_eq!(step[0].1.value, Value::Str("make".into()));
        assert_eq!(step[0].1.pos, at(2, 12));
        let Value::Map(test) = &steps[1].value else {
            panic!()
        };
        let Value::Map(inner) = &test[0].1.value else {
            panic!()
        };
        assert_eq!(inner[0].0.pos, at(4, 7));
        assert_eq!(inner[0].1.value, Value::Int(600));
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        for (text, pos, msg) in [
            (
                "commands:\n  - shell: [unclosed\n",
                at(2, 12),
                "unclosed bracket '['",
            ),
            (
                "commands:\n - shell: x\n   bad: : y\n",
                at(3, 9),
                "mapping values are not allowed in this context",
            ),
            (
                "a: 1\na: 2\n",
                at(2, 1),
                "duplicate mapping key: a, set DuplicateKeyPolicy in Options if acceptable",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert_eq!(err.pos, Some(pos), "{text:?}");
            assert_eq!(err.message, msg, "{text:?}");
        }
    }

    #[test]
    fn scalars_and_empty_documents() {
        assert_eq!(parse("").unwrap().value, Value::Null);
        let doc = parse("[1, 2.5, true, ~, 'x', \"600\"]").unwrap();
        let Value::Seq(items) = doc.value else {
            panic!()
        };
        let values: Vec<Value> = items.into_iter().map(|n| n.value).collect();
        assert_eq!(
            values,
            vec![
                Value::Int(1),
                Value::Float(2.5),
                Value::Bool(true),
                Value::Null,
                Value::Str("x".into()),
                Value::Str("600".into()),
            ]
        );
    }
}
