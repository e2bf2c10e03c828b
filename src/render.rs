//! Markdown and prompt rendering (minijinja): templates are embedded from
//! `templates/` and a project can override any of them with a file of the
//! same name under `.workflow/templates/`. Undefined variables are errors,
//! so a template typo never renders as an empty string.

use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use crate::error::{Error, Result};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_templates.rs"));
}

/// The built-in text of a template.
pub fn builtin(name: &str) -> Option<&'static str> {
    embedded::EMBEDDED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

/// Renders templates with project overrides.
pub struct Renderer {
    /// Templates are compiled once per text: a step renders several
    /// documents, and parsing each template again was a good part of it.
    env: std::sync::Mutex<Environment<'static>>,
    /// The text each template in `env` was compiled from (an override may
    /// change while wfx runs).
    compiled: std::sync::Mutex<std::collections::HashMap<String, String>>,
    overrides: Option<PathBuf>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("overrides", &self.overrides)
            .finish_non_exhaustive()
    }
}

impl Renderer {
    /// `overrides`: the project's `.workflow/templates` directory (may not exist).
    pub fn new(overrides: Option<&Path>) -> Renderer {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .keep_trailing_newline(true)
                .build()
                .expect("default delimiters are valid"),
        );
        env.add_filter("pct", |v: f64| format!("{v:.1}%"));
        // `counts(passed, failed, total)`: "9/11 passed, 1 skipped", the
        // counts of the pass rate (one formula, see `Counts`).
        env.add_function("counts", |p: u32, f: u32, t: u32| {
            crate::artifacts::test_results::Counts::of(p, f, t).to_string()
        });
        env.add_function("counts_cell", |p: u32, f: u32, t: u32| {
            crate::artifacts::test_results::Counts::of(p, f, t).cell()
        });
        Renderer {
            env: std::sync::Mutex::new(env),
            compiled: Default::default(),
            overrides: overrides.map(Path::to_path_buf),
        }
    }

    /// Text of a template: the project override if present, else built-in.
    /// Returns the text and whether it came from an override.
    pub fn source(&self, name: &str) -> Result<(String, Option<PathBuf>)> {
        if let Some(dir) = &self.overrides {
            let path = dir.join(name);
            if path.is_file() {
                let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
                return Ok((text, Some(path)));
            }
        }
        builtin(name)
            .map(|t| (t.to_string(), None))
            .ok_or_else(|| Error::Internal(format!("no built-in template {name}")))
    }

    pub fn render<S: Serialize>(&self, name: &str, ctx: &S) -> Result<String> {
        self.render_source(name, self.source(name)?, ctx)
    }

    /// Render `name` from the text [`Renderer::source`] gave for it: a
    /// caller that looked at the source first renders exactly that text.
    pub fn render_source<S: Serialize>(
        &self,
        name: &str,
        (text, path): (String, Option<PathBuf>),
        ctx: &S,
    ) -> Result<String> {
        let shown = path
            .as_ref()
            .map_or_else(|| format!("templates/{name}"), |p| p.display().to_string());
        let mut env = self.env.lock().unwrap_or_else(|e| e.into_inner());
        let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if compiled.get(&shown) != Some(&text) {
            compiled.remove(&shown);
            env.add_template_owned(shown.clone(), text.clone())
                .map_err(|e| template_error(&shown, &e, path.is_some()))?;
            compiled.insert(shown.clone(), text);
        }
        drop(compiled);
        env.get_template(&shown)
            .and_then(|t| t.render(minijinja::value::Serde(ctx)))
            .map_err(|e| template_error(&shown, &e, path.is_some()))
    }
}

fn template_error(shown: &str, e: &minijinja::Error, user_file: bool) -> Error {
    let line = e.line().map(|l| format!(" line {l}")).unwrap_or_default();
    let msg = format!("{shown}{line}: {e}");
    if user_file {
        Error::Usage(msg)
    } else {
        Error::Internal(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_wins_and_undefined_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.md.j2"), "Hello {{ name }}!").unwrap();
        let r = Renderer::new(Some(dir.path()));
        assert_eq!(
            r.render("x.md.j2", &serde_json::json!({"name": "ana"}))
                .unwrap(),
            "Hello ana!"
        );
        let err = r.render("x.md.j2", &serde_json::json!({})).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err}");
        assert!(err.to_string().contains("x.md.j2"), "{err}");
    }

    /// A compiled template is reused only while its text is the same: an
    /// override edited (or broken, or fixed) while wfx runs is read anew.
    #[test]
    fn an_override_changed_between_renders_is_compiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.md.j2");
        let r = Renderer::new(Some(dir.path()));
        let ctx = serde_json::json!({"name": "ana"});
        std::fs::write(&path, "Hello {{ name }}!").unwrap();
        assert_eq!(r.render("x.md.j2", &ctx).unwrap(), "Hello ana!");
        assert_eq!(r.render("x.md.j2", &ctx).unwrap(), "Hello ana!");
        std::fs::write(&path, "Bye {{ name }}.").unwrap();
        assert_eq!(r.render("x.md.j2", &ctx).unwrap(), "Bye ana.");
        std::fs::write(&path, "Broken {{ name ").unwrap();
        assert!(matches!(r.render("x.md.j2", &ctx), Err(Error::Usage(_))));
        std::fs::write(&path, "Back {{ name }}").unwrap();
        assert_eq!(r.render("x.md.j2", &ctx).unwrap(), "Back ana");
        std::fs::remove_file(&path).unwrap();
        let builtin = r.render("x.md.j2", &ctx);
        assert!(builtin.is_err(), "no built-in x.md.j2: {builtin:?}");
    }
}
