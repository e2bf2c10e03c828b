//! `docs/config-reference.md`, generated from `schemas/config.schema.json`
//! (itself generated from the Rust config types), so the reference lists
//! every field with its type, default, limits and description and cannot
//! go stale: a test compares the committed page with this output.

use serde_json::Value;

/// The command that regenerates the page, printed in its header.
pub const REGENERATE: &str = "WFX_UPDATE_DOCS=1 cargo test --test cli report_docs::";

/// One documented field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDoc {
    /// Dotted path, e.g. `cycle.test_edits.modify`.
    pub path: String,
    pub kind: String,
    pub default: String,
    pub limits: String,
    pub description: String,
}

/// A table of fields under one heading (an object of the config).
#[derive(Debug, Clone, PartialEq)]
pub struct SectionDoc {
    pub path: String,
    pub description: String,
    pub fields: Vec<FieldDoc>,
}

fn resolve<'a>(schema: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| schema.get("$defs")?.get(name))
            .unwrap_or(node),
        None => node,
    }
}

/// The object schema a field opens into (directly or through `$ref`).
fn object_of<'a>(schema: &'a Value, node: &'a Value) -> Option<&'a Value> {
    let node = resolve(schema, node);
    node.get("properties").is_some().then_some(node)
}

/// The element schema of a map field (`additionalProperties: {$ref}`).
fn map_of<'a>(schema: &'a Value, node: &'a Value) -> Option<&'a Value> {
    let node = resolve(schema, node);
    let inner = node.get("additionalProperties")?;
    inner.is_object().then(|| resolve(schema, inner))
}

fn description(node: &Value) -> String {
    node.get("description")
        .and_then(Value::as_str)
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Human type of a schema node: `integer`, `string or null`,
/// `"claude" | "gemini"`, `array of string`, …
fn kind(schema: &Value, node: &Value) -> String {
    let node_r = resolve(schema, node);
    if let Some(values) = enum_values(node_r) {
        return values
            .iter()
            .map(|(v, _)| format!("`\"{v}\"`"))
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(alts) = node_r.get("anyOf").and_then(Value::as_array) {
        return alts
            .iter()
            .map(|a| kind(schema, a))
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if node_r.get("properties").is_some() {
        return "object".into();
    }
    if map_of(schema, node_r).is_some() {
        return "map of name → object".into();
    }
    let types: Vec<String> = match node_r.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
        _ => vec![],
    };
    types
        .into_iter()
        .map(|t| match t.as_str() {
            "array" => format!(
                "array of {}",
                node_r
                    .get("items")
                    .map_or_else(|| "values".into(), |i| kind(schema, i))
            ),
            _ => t,
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Allowed values of an enum node with their descriptions: `enum`, or a
/// `oneOf` of `const`/`enum` strings (schemars' form for documented
/// variants).
fn enum_values(node: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        return Some(
            values
                .iter()
                .filter_map(|v| v.as_str().map(|s| (s.to_string(), String::new())))
                .collect(),
        );
    }
    let alts = node.get("oneOf")?.as_array()?;
    let mut out = Vec::new();
    for alt in alts {
        let d = description(alt);
        if let Some(c) = alt.get("const").and_then(Value::as_str) {
            out.push((c.to_string(), d));
        } else if let Some(vs) = alt.get("enum").and_then(Value::as_array) {
            out.extend(
                vs.iter()
                    .filter_map(|v| v.as_str().map(|s| (s.to_string(), d.clone()))),
            );
        } else {
            return None;
        }
    }
    Some(out)
}

fn limits(node: &Value) -> String {
    let num = |k: &str| node.get(k).and_then(Value::as_f64);
    let fmt = |v: f64| {
        if v.fract() == 0.0 {
            format!("{}", v as i64)
        } else {
            format!("{v}")
        }
    };
    match (num("minimum"), num("maximum")) {
        (Some(lo), Some(hi)) => format!("{}–{}", fmt(lo), fmt(hi)),
        (Some(lo), None) => format!("≥ {}", fmt(lo)),
        (None, Some(hi)) => format!("≤ {}", fmt(hi)),
        (None, None) => String::new(),
    }
}

fn default_of(node: &Value) -> String {
    match node.get("default") {
        None => String::new(),
        Some(Value::Number(n)) => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 {
                format!("`{}`", f as i64)
            } else {
                format!("`{n}`")
            }
        }
        Some(v) => format!("`{v}`"),
    }
}

/// Walk the config schema into sections: the top level, then each object
/// in the order the schema lists it (depth first), maps as `name.<key>`.
pub fn sections(schema: &Value) -> Vec<SectionDoc> {
    let mut out = Vec::new();
    walk(schema, schema, "", &description(schema), &mut out);
    out
}

fn walk(schema: &Value, object: &Value, path: &str, desc: &str, out: &mut Vec<SectionDoc>) {
    let Some(props) = object.get("properties").and_then(Value::as_object) else {
        return;
    };
    let mut fields = Vec::new();
    let mut nested = Vec::new();
    for (name, node) in props {
        let full = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        let resolved = resolve(schema, node);
        let mut d = description(node);
        if d.is_empty() {
            d = description(resolved);
        }
        if let Some(values) = enum_values(resolved) {
            let documented: Vec<String> = values
                .iter()
                .filter(|(_, vd)| !vd.is_empty())
                .map(|(v, vd)| format!("`{v}`: {vd}"))
                .collect();
            if !documented.is_empty() {
                d = format!("{d} {}", documented.join(" ")).trim().to_string();
            }
        }
        let is_object = object_of(schema, node).is_some();
        let map = if is_object {
            None
        } else {
            map_of(schema, node)
        };
        fields.push(FieldDoc {
            path: full.clone(),
            kind: kind(schema, node),
            default: if is_object {
                "see below".into()
            } else {
                default_of(node)
            },
            limits: limits(node),
            description: d.clone(),
        });
        // A section says what its type is; the field's text stands in
        // when the type has none.
        let own = |obj: &Value| {
            let own = description(obj);
            if own.is_empty() { d.clone() } else { own }
        };
        if let Some(obj) = object_of(schema, node) {
            nested.push((full, obj, own(obj)));
        } else if let Some(elem) = map.filter(|m| m.get("properties").is_some()) {
            nested.push((format!("{full}.<name>"), elem, own(elem)));
        }
    }
    out.push(SectionDoc {
        path: path.to_string(),
        description: desc.to_string(),
        fields,
    });
    for (p, obj, d) in nested {
        walk(schema, obj, &p, &d, out);
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The whole Markdown page.
pub fn markdown(schema: &Value) -> String {
    let mut md = String::new();
    md.push_str("# Configuration reference (`.workflow/wfx.json`)\n\n");
    md.push_str(&format!(
        "<!-- Generated from schemas/config.schema.json by wfx::report::config_doc. Do not edit by hand; regenerate with:\n     {REGENERATE} -->\n\n"
    ));
    md.push_str(
        "Every field of the project configuration, with its type, default and limits, \
generated from [`schemas/config.schema.json`](../schemas/config.schema.json). \
Every field is optional; unknown fields are rejected. \
[configuration.md](configuration.md) explains the fields with examples.\n",
    );
    for section in sections(schema) {
        let title = if section.path.is_empty() {
            "Top level".to_string()
        } else {
            format!("`{}`", section.path)
        };
        md.push_str(&format!("\n## {title}\n\n"));
        if !section.description.is_empty() {
            md.push_str(&section.description);
            md.push_str("\n\n");
        }
        md.push_str("| field | type | default | limits | description |\n|---|---|---|---|---|\n");
        for f in &section.fields {
            md.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                f.path,
                cell(&f.kind),
                cell(&f.default),
                f.limits,
                cell(&f.description)
            ));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_types_defaults_and_enums() {
        let schema = json!({
            "description": "Root.",
            "properties": {
                "a": {"$ref": "#/$defs/A", "default": {"n": 1}},
                "m": {"type": "object", "additionalProperties": {"$ref": "#/$defs/A"}, "default": {}}
            },
            "$defs": {
                "A": {"description": "An A.", "properties": {
                    "n": {"description": "A number\nover lines.", "type": "integer", "minimum": 1, "maximum": 9, "default": 1},
                    "p": {"$ref": "#/$defs/P", "default": "x"},
                    "o": {"type": ["string", "null"], "default": null},
                    "l": {"type": "array", "items": {"type": "string"}, "default": []},
                    "f": {"type": "number", "minimum": 0.0, "default": 2.5}
                }},
                "P": {"oneOf": [
                    {"type": "string", "enum": ["x"]},
                    {"description": "Why y.", "type": "string", "const": "y"}
                ]}
            }
        });
        let s = sections(&schema);
        let paths: Vec<&str> = s.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["", "a", "m.<name>"]);
        assert_eq!(s[0].description, "Root.");
        assert_eq!(s[0].fields[0].default, "see below");
        assert_eq!(s[0].fields[1].kind, "map of name → object");
        let a = &s[1];
        assert_eq!(a.description, "An A.");
        let n = &a.fields[0];
        assert_eq!(
            (
                n.path.as_str(),
                n.kind.as_str(),
                n.default.as_str(),
                n.limits.as_str(),
                n.description.as_str()
            ),
            ("a.n", "integer", "`1`", "1–9", "A number over lines.")
        );
        assert_eq!(a.fields[1].kind, "`\"x\"` | `\"y\"`");
        assert_eq!(a.fields[1].description, "`y`: Why y.");
        assert_eq!(
            s[2].description, "An A.",
            "a map's section takes its element's text"
        );
        assert_eq!(a.fields[2].kind, "string or null");
        assert_eq!(a.fields[2].default, "`null`");
        assert_eq!(a.fields[3].kind, "array of string");
        assert_eq!(
            (a.fields[4].default.as_str(), a.fields[4].limits.as_str()),
            ("`2.5`", "≥ 0")
        );
        let md = markdown(&schema);
        assert!(
            md.contains("| `a.n` | integer | `1` | 1–9 | A number over lines. |"),
            "{md}"
        );
        assert!(md.contains("## `m.<name>`"));
    }
}
