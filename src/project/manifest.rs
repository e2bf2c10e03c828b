//! The few facts wfx reads from a manifest's text without a parser: a
//! crate's name and a Go module's path.

/// The `[package]` name of a `Cargo.toml`, as an identifier (`-` → `_`).
pub fn rust_crate_name(cargo_toml: &str) -> Option<String> {
    let mut in_package = false;
    for line in cargo_toml.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        let Some(rest) = t.strip_prefix("name") else {
            continue;
        };
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let name = value.trim().trim_matches('"');
        if !name.is_empty() {
            return Some(name.replace('-', "_"));
        }
    }
    None
}

/// The `module` line of a `go.mod`.
pub fn go_module_path(go_mod: &str) -> Option<String> {
    go_mod
        .lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(|m| m.trim().trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_and_module_names() {
        assert_eq!(
            rust_crate_name("[package]\nname = \"rust-calc\"\n[dependencies]\nname = \"x\"\n")
                .as_deref(),
            Some("rust_calc")
        );
        assert_eq!(rust_crate_name("[workspace]\nmembers = []\n"), None);
        assert_eq!(
            rust_crate_name("[dependencies]\nx = 1\n[package]\nname=\"a\"\n").as_deref(),
            Some("a")
        );
        assert_eq!(
            go_module_path("// c\nmodule example.com/guid\n\ngo 1.19\n").as_deref(),
            Some("example.com/guid")
        );
    }
}
