//! What wfx knows about a project's files from their paths: the language
//! ([`Lang`], one table), the role ([`classify`] → [`PathRole`], one
//! classifier with [`is_test_path`]), the listing ([`list_files`]) and a
//! few manifest facts. Everything that asks such a question — context
//! gathering, the scans, the built-in analyzer, the runners, the fix
//! guard — asks here, so they cannot disagree.

mod lang;
mod listing;
mod manifest;
mod paths;
mod role;

pub use lang::{LANGS, Lang};
pub use listing::{Listing, list_files, untracked_files};
pub use manifest::{go_module_path, rust_crate_name};
pub use paths::{dirs, file_name, is_foreign_path, parent_dir, stem, words};
pub use role::{PathRole, classify, is_test_path};
