//! jest's `--json` report: `testResults[]` per file (`name` = the file)
//! with `assertionResults[]` (`ancestorTitles` + `title`, `status`,
//! `failureMessages`). A file that failed to run at all (syntax error,
//! missing module) has no assertion results and becomes a static failure.

use serde_json::Value;

use super::tap::SEP;
use super::{ParsedCase, ParsedRun, Status, best_location, error_line, excerpt, strip_ansi};
use crate::artifacts::test_results::Layer;

/// Parse a jest JSON report. Err when the text is not one.
pub fn parse(json: &str) -> Result<ParsedRun, String> {
    let doc: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let results = doc
        .get("testResults")
        .and_then(Value::as_array)
        .ok_or("no `testResults` array: not a jest --json report")?;
    let mut run = ParsedRun::new("jest-json");
    for file_result in results {
        let file = file_result
            .get("name")
            .or_else(|| file_result.get("testFilePath"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let assertions = file_result
            .get("assertionResults")
            .or_else(|| file_result.get("testResults"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let file_message = file_result
            .get("message")
            .or_else(|| file_result.get("failureMessage"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if assertions.is_empty() {
            let failed = file_result.get("status").and_then(Value::as_str) == Some("failed");
            if failed || !file_message.trim().is_empty() {
                let text = strip_ansi(file_message).into_owned();
                let loc = best_location(&text, Some(&file));
                run.static_errors.push(ParsedCase {
                    id: file.clone(),
                    status: Status::Error,
                    file: loc.as_ref().map(|l| l.file.clone()).or(Some(file.clone())),
                    line: loc.map(|l| l.line),
                    error: error_line(&text.replace('●', "")),
                    message: excerpt(&text),
                    layer: Some(Layer::Static),
                    flaky: false,
                });
            }
            continue;
        }
        for a in &assertions {
            let mut parts: Vec<String> = Vec::new();
            if !file.is_empty() {
                parts.push(file.clone());
            }
            parts.extend(
                a.get("ancestorTitles")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            parts.push(
                a.get("title")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            );
            let status = match a.get("status").and_then(Value::as_str).unwrap_or("") {
                "passed" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped, // pending, skipped, todo, disabled
            };
            let mut case = ParsedCase {
                id: parts.join(SEP),
                status,
                file: (!file.is_empty()).then(|| file.clone()),
                line: a
                    .get("location")
                    .and_then(|l| l.get("line"))
                    .and_then(Value::as_u64)
                    .map(|l| l as u32),
                ..ParsedCase::default()
            };
            if status == Status::Failed {
                let messages: Vec<String> = a
                    .get("failureMessages")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|m| strip_ansi(m).into_owned())
                    .collect();
                let text = messages.join("\n\n");
                case.error = error_line(&text);
                if let Some(loc) = best_location(&text, case.file.as_deref()) {
                    case.file = Some(loc.file);
                    case.line = Some(loc.line);
                }
                case.message = excerpt(&text);
            }
            run.cases.push(case);
        }
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse::{failed, fixture, ids};

    #[test]
    fn jest_json_report() {
        let run = parse(&fixture("jest.json")).unwrap();
        assert_eq!(run.parser, "jest-json");
        assert_eq!(run.cases.len(), 9);
        assert_eq!(run.count(Status::Passed), 6);
        assert_eq!(run.count(Status::Failed), 2);
        assert_eq!(run.count(Status::Skipped), 1);
        assert!(run.static_errors.is_empty());
        let failed = failed(&run);
        let (e1, e2) = (
            "Error: expect(received).toBe(expected) // Object.is equality: expected 9, received 3",
            "Error: expect(received).toBe(expected) // Object.is equality: expected \"tiny-test-fixture\", received \"tiny-test fixture\"",
        );
        assert_eq!(
            failed,
            vec![
                (
                    "test/math.test.js › math › finds the max",
                    Some("test/math.test.js"),
                    Some(13),
                    e1
                ),
                (
                    "test/strings.test.js › strings › slugifies a title",
                    Some("test/strings.test.js"),
                    Some(15),
                    e2
                ),
            ]
        );
        let skipped = ids(&run, Status::Skipped);
        assert_eq!(
            skipped,
            vec!["test/math.test.js › math › handles bigint division"]
        );
        assert!(
            run.cases
                .iter()
                .any(|c| c.id == "test/math.test.js › clamp keeps values in range")
        );
        assert!(run.cases[2].message.contains("Received: 3"));
    }

    #[test]
    fn a_file_that_cannot_run_is_a_static_failure() {
        let json = r#"{"testResults":[{"name":"test/bad.test.js","status":"failed","assertionResults":[],
            "message":"  ● Test suite failed to run\n\n    Cannot find module '../src/nope' from 'test/bad.test.js'\n\n      at Resolver (test/bad.test.js:1:1)"}]}"#;
        let run = parse(json).unwrap();
        assert!(run.cases.is_empty());
        assert_eq!(run.static_errors.len(), 1);
        let e = &run.static_errors[0];
        assert_eq!(e.id, "test/bad.test.js");
        assert_eq!(e.error, "Test suite failed to run");
        assert_eq!(
            (e.file.as_deref(), e.line),
            (Some("test/bad.test.js"), Some(1))
        );
    }

    #[test]
    fn other_json_is_rejected() {
        assert!(parse("{}").is_err());
        assert!(parse("nope").is_err());
    }
}
