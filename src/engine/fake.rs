//! The test double of [`super::Ports`] (tests only): scripted tests,
//! agents and git in memory, so a whole loop runs in-process.
