//! What wfx knows about a project's files from their paths: the language
//! ([`Lang`], one table), the role ([`classify`] → [`PathRole`], one
//! classifier with [`is_test_path`]), the listing ([`list_files`]) and a
//! few manifest facts; what a project's manifests declare
//! ([`dependencies`], with the names that need no declaration in
//! [`stdlib`]); and a lexical model of a source file ([`source`]).
//! Everything that asks such a question — context gathering, the scans,
//! the built-in analyzer, the runners, the fix guard — asks here, so they
//! cannot disagree.

/// A regex held once, compiled the first time a haystack could match it
/// ([`LazyRegex`]).
macro_rules! re {
    ($pattern:expr) => {{
        static RE: std::sync::LazyLock<$crate::project::LazyRegex> =
            std::sync::LazyLock::new(|| $crate::project::LazyRegex::new($pattern));
        &*RE
    }};
}
pub(crate) use re;

pub mod dependencies;
mod lang;
mod lazy_regex;
mod listing;
mod manifest;
mod paths;
mod role;
pub(crate) mod source;
pub(crate) mod stdlib;

pub use lang::{LANGS, Lang};
pub use lazy_regex::LazyRegex;
pub use listing::{Listing, list_files, list_files_and_untracked};
pub use manifest::{go_module_path, rust_crate_name};
pub use paths::{dirs, file_name, is_foreign_path, parent_dir, stem, words};
pub use role::{PathRole, classify, is_test_path};

/// A pattern the code holds, compiled; a bad one is a bug.
pub(crate) fn compile(s: &str) -> regex::Regex {
    regex::Regex::new(s).unwrap_or_else(|e| panic!("regex {s}: {e}"))
}
