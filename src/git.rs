//! git checkpoints (DESIGN.md §5.5), written by the git: issue.
