//! Git hooks around wfx's commits (DESIGN.md §10.2): `pre-commit`,
//! `commit-msg` and `post-commit` run as `git commit` would run them,
//! because libgit2 runs none. `pre-commit` sees the commit's content as
//! its index (`GIT_INDEX_FILE`); `commit-msg` may edit the message (wfx's
//! trailers are put back if it drops them). A failing `pre-commit` or
//! `commit-msg` stops the commit with [`Error::Hook`], which pauses the
//! session; `post-commit`'s exit status is ignored, as git does.
//! `git.hooks: false` turns them off. A hook runs through
//! [`crate::process::run`] like every child of a step: its own process
//! group, a parent-death signal and the step marker, so nothing of a hook
//! outlives wfx, even after `kill -9` (the resume ends what escaped).

use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{Index, Tree};

use super::{Repo, ctx, parse_trailers};
use crate::error::{Error, Result};
use crate::process::{self, Spec};

/// Hook output kept in the error (the tail).
const OUTPUT_MAX: usize = 4000;

/// Time a hook's leftover processes get between SIGTERM and SIGKILL.
const HOOK_GRACE: Duration = Duration::from_secs(2);

impl Repo {
    fn hook(&self, name: &str) -> Option<PathBuf> {
        if !self.hooks {
            return None;
        }
        let path = self.hooks_dir().join(name);
        is_executable(&path).then_some(path)
    }

    fn run_hook(
        &self,
        name: &str,
        path: &Path,
        args: &[&Path],
        index: Option<&Path>,
    ) -> Result<()> {
        let mut argv: Vec<&std::ffi::OsStr> = vec![path.as_os_str()];
        argv.extend(args.iter().map(|a| a.as_os_str()));
        let mut spec = Spec::new(argv, &self.workdir).grace(HOOK_GRACE);
        if let Some(i) = index {
            spec = spec.env("GIT_INDEX_FILE", i.to_string_lossy());
        }
        // A child of the step like any other: its own process group, ended
        // with wfx (`kill -9` included) and after it exits.
        let out = process::run(spec, &mut |_| {})?;
        if out.interrupted {
            return Err(Error::Interrupted(format!("running the {name} hook")));
        }
        if out.success() {
            return Ok(());
        }
        let text = out.tail_text(OUTPUT_MAX * 4);
        let text = text.trim();
        let cut = text
            .char_indices()
            .rev()
            .nth(OUTPUT_MAX)
            .map_or(0, |(i, _)| i);
        let shown = path.strip_prefix(&self.workdir).unwrap_or(path);
        Err(Error::Hook {
            hook: name.to_string(),
            path: shown.display().to_string(),
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
        crate::fsx::write(&file, message.as_bytes()).map_err(|e| Error::io(&file, e))?;
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
