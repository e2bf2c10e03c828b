//! Static scans used by the quality gates (DESIGN.md §5.7): the AI-issue
//! scan of IMPL-001.3, the test anti-pattern scan and the coverage report
//! readers of IMPL-001.5.

pub mod ai_issues;
pub mod antipatterns;
pub mod coverage;
pub use crate::artifacts::findings;
pub(crate) mod source;
