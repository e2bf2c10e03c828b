//! Static scans used by the quality gates (DESIGN.md §5.7): the AI-issue
//! scan of IMPL-001.3 and the test anti-pattern scan of IMPL-001.5.

pub mod ai_issues;
pub mod antipatterns;
pub mod findings;
mod source;
