//! A person's fix (manual mode): what of it is committed. A person edits
//! more than the fix — a note, a stray experiment — and wfx cannot tell
//! intent, so a change outside the fix task's focus is never swept into the
//! fix commit: it is named and left uncommitted (docs/cycle.md, "Manual
//! fixes").

use crate::artifacts::Task;

/// The paths a manual fix of `task` may commit: its target files, focus
/// paths (a directory covers what is under it), the files of its
/// modification points and root causes; test files always (the test guard
/// of DESIGN §5.6 judges edits to them).
pub fn focus(task: &Task) -> Vec<String> {
    let mut focus: Vec<String> = task.flow_control.target_files.clone();
    focus.extend(task.context.focus_paths.iter().cloned());
    if let Some(fs) = &task.context.fix_strategy {
        focus.extend(fs.modification_points.iter().map(|p| p.file.clone()));
        focus.extend(fs.root_causes.iter().filter_map(|c| c.file.clone()));
    }
    focus.retain(|p| !p.is_empty());
    focus.sort();
    focus.dedup();
    focus
}

/// Splits `paths` into (in focus, outside it).
pub fn split(paths: &[String], focus: &[String]) -> (Vec<String>, Vec<String>) {
    paths.iter().cloned().partition(|p| {
        crate::project::is_test_path(p)
            || focus.iter().any(|f| {
                let dir = f.trim_end_matches('/');
                p == dir || (p.starts_with(dir) && p[dir.len()..].starts_with('/'))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn only_paths_in_focus_stay_in_the_commit() {
        let focus = vec!["src/shop/cart.py".to_string(), "lib/".to_string()];
        for (path, inside) in [
            ("src/shop/cart.py", true),
            ("src/shop/text.py", false),
            ("lib/a/b.py", true),
            ("library/x.py", false),
            ("lib", true),
            ("tests/test_cart.py", true),
            ("notes.md", false),
        ] {
            let (keep, out) = split(&[path.to_string()], &focus);
            assert_eq!(keep.len() == 1, inside, "{path}");
            assert_eq!(out.len() == 1, !inside, "{path}");
        }
    }
}
