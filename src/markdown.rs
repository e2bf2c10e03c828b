//! Markdown wfx writes around text it does not control (diffs, test
//! output, agent excerpts).

/// A code fence longer than any run of backticks in `texts`, so embedded
/// output can never close the block early.
pub fn fence_for<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let longest = texts
        .into_iter()
        .flat_map(|t| t.split(|c| c != '`').map(str::len))
        .max()
        .unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_embedded_backticks() {
        assert_eq!(fence_for(["plain"]), "```");
        assert_eq!(fence_for(["a ``` b", "````x"]), "`````");
    }
}
