//! Git hooks around wfx's commits (DESIGN.md §10.2): `pre-commit`,
//! `commit-msg` and `post-commit` run as `git commit` would run them,
//! because libgit2 runs none. `pre-commit` sees the commit's content as
//! its index (`GIT_INDEX_FILE`); `commit-msg` may edit the message (wfx's
//! trailers are put back if it drops them). A failing `pre-commit` or
//! `commit-msg` stops the commit with [`Error::Hook`], which pauses the
//! session; `post-commit`'s exit status is ignored, as git does.
//! `git.hooks: false` turns them off.

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::{Index, Tree};

use super::{Repo, ctx, parse_trailers};
use crate::error::{Error, Result};

/// Hook output kept in the error (the tail).
const OUTPUT_MAX: usize = 4000;

impl Repo {
    fn hook(&self, name: &str) -> Option<PathBuf> {
        if !self.hooks {
            return None;
        }
        let dir = match self.git.config().and_then(|c| c.get_path("core.hooksPath")) {
            Ok(p) if p.is_absolute() => p,
            Ok(p) => self.workdir.join(p),
            Err(_) => self.git.path().join("hooks"),
        };
        let path = dir.join(name);
        is_executable(&path).then_some(path)
    }

    fn run_hook(
        &self,
        name: &str,
        path: &Path,
        args: &[&Path],
        index: Option<&Path>,
    ) -> Result<()> {
        let mut cmd = Command::new(path);
        cmd.args(args)
            .current_dir(&self.workdir)
            .stdin(std::process::Stdio::null());
        if let Some(i) = index {
            cmd.env("GIT_INDEX_FILE", i);
        }
        let out = cmd.output().map_err(|e| Error::io(path, e))?;
        if out.status.success() {
            return Ok(());
        }
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        let text = text.trim();
        let cut = text
            .char_indices()
            .rev()
            .nth(OUTPUT_MAX)
            .map_or(0, |(i, _)| i);
        Err(Error::Hook {
            hook: name.to_string(),
            output: text[cut..].to_string(),
        })
    }

    /// `pre-commit` and `commit-msg` before a commit of `tree`: the
    /// message to use.
    pub(super) fn hooks_before(&self, tree: &Tree<'_>, message: &str) -> Result<String> {
        if let Some(hook) = self.hook("pre-commit") {
            let index_path = self.git.path().join("wfx-hook-index");
            let mut index =
                Index::open(&index_path).map_err(ctx("cannot write the hook's index"))?;
            index
                .read_tree(tree)
                .map_err(ctx("cannot write the hook's index"))?;
            index
                .write()
                .map_err(ctx("cannot write the hook's index"))?;
            let result = self.run_hook("pre-commit", &hook, &[], Some(&index_path));
            let _ = std::fs::remove_file(&index_path);
            result?;
        }
        let Some(hook) = self.hook("commit-msg") else {
            return Ok(message.to_string());
        };
        let file = self.git.path().join("COMMIT_EDITMSG");
        std::fs::write(&file, message).map_err(|e| Error::io(&file, e))?;
        self.run_hook("commit-msg", &hook, &[&file], None)?;
        let edited = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        let trailers = parse_trailers(message);
        Ok(match trailers {
            Some(t) if parse_trailers(&edited).as_ref() != Some(&t) => {
                format!("{}\n\n{}", edited.trim_end(), t.to_block())
            }
            _ => edited,
        })
    }

    /// `post-commit` (its exit status does not matter).
    pub(super) fn hooks_after(&self) {
        if let Some(hook) = self.hook("post-commit") {
            let _ = self.run_hook("post-commit", &hook, &[], None);
        }
    }
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}
