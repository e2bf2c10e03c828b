//! Static scans of a project: coverage reports (the AI-issue scan and test
//! anti-patterns join later).

pub mod coverage;
