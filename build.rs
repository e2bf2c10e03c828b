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

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let base = Path::new(&manifest).join("templates");
    println!("cargo:rerun-if-changed=templates");
    let mut files = Vec::new();
    collect(&base, &base, &mut files);
    let mut code = String::from(
        "/// (name, contents) of every built-in template.\npub static EMBEDDED: &[(&str, &str)] = &[\n",
    );
    for rel in &files {
        println!("cargo:rerun-if-changed=templates/{rel}");
        code.push_str(&format!(
            "    ({rel:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/templates/\", {rel:?}))),\n"
        ));
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_templates.rs");
    std::fs::write(out, code).unwrap();
}
