//! Embed every file under `templates/` in the binary, so built-in templates
//! need no install step and new templates need no code change.

use std::path::Path;

fn collect(dir: &Path, base: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect(&path, base, out);
        } else {
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push(rel);
        }
    }
}

/// `pub static NAME: &[(&str, &str)]` with every file under `dir` (relative
/// to the crate root), embedded with `include_str!`.
fn embed(manifest: &Path, dir: &str, name: &str, doc: &str) -> String {
    let base = manifest.join(dir);
    println!("cargo:rerun-if-changed={dir}");
    let mut files = Vec::new();
    collect(&base, &base, &mut files);
    let mut code = format!("/// {doc}\npub static {name}: &[(&str, &str)] = &[\n");
    for rel in &files {
        println!("cargo:rerun-if-changed={dir}/{rel}");
        code.push_str(&format!(
            "    ({rel:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/{dir}/\", {rel:?}))),\n"
        ));
    }
    code.push_str("];\n");
    code
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let manifest = Path::new(&manifest);
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).to_path_buf();
    let templates = embed(
        manifest,
        "templates",
        "EMBEDDED",
        "(name, contents) of every built-in template.",
    );
    std::fs::write(out.join("embedded_templates.rs"), templates).unwrap();
    // `wfx demo --lang …` copies one of these sample projects: the same ones
    // the tests use, so the demo shows exactly what is tested.
    let mut demo = String::new();
    for (dir, name, lang) in [
        ("fixtures/projects/py-cart", "DEMO_PYTHON", "Python"),
        ("fixtures/projects/node-calc", "DEMO_NODE", "Node"),
        ("fixtures/projects/rust-calc", "DEMO_RUST", "Rust"),
    ] {
        demo.push_str(&embed(
            manifest,
            dir,
            name,
            &format!("(path, contents) of the {lang} project `wfx demo` runs on."),
        ));
    }
    std::fs::write(out.join("demo_project.rs"), demo).unwrap();
}
