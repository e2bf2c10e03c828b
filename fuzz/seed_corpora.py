#!/usr/bin/env python3
"""Write the starting seeds of every fuzz target into fuzz/corpus/<target>/
(or DIR/<target>/) from the repository's real recorded outputs, workflows,
fake agent outputs and artifact snapshots (docs/fuzzing.md). The corpus is
not in git: run this before the first fuzzing run on a fresh clone.
Re-running it only adds files. Usage: fuzz/seed_corpora.py [DIR]"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "fixtures" / "outputs"
CORPUS = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else REPO / "fuzz" / "corpus"

# Order of wfx::artifacts::config::Preset::ALL; index 5 = custom command.
PRESETS = ["claude", "gemini", "qwen", "codex", "opencode"]
# First byte of an artifact_load input: index of the type.
ARTIFACTS = ["workflow-session", "task", "fix-strategy", "iteration-state",
             "iteration-failures", "test-results", "fix-history",
             "context-package", "manifest", "config", "run-state"]


def seed(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def out(name):
    return (OUT / name).read_bytes()


def snapshot_json(path):
    text = path.read_text()
    return text.split("\n---\n", 1)[1]


def main():
    for f in OUT.glob("*.xml"):
        seed("parse_junit", out(f.name))
    seed("parse_junit", out("surefire-TEST-calc.CalcTest.xml") + b"\0" + out("pytest-junit.xml"))
    for name in ["cargo-test.txt", "cargo-test-fail-fast.txt", "cargo-test-compile-error.txt"]:
        seed("parse_libtest", out(name))
    seed("parse_nextest", out("nextest.txt"))
    seed("parse_nextest", out("cargo-test-compile-error.txt"))
    seed("parse_tap", out("node-tap.txt"))
    for name in ["go-test.json", "go-test-build-fail.json", "go-test-build-fail.stdout.txt",
                 "go-test-build-fail.stderr.txt"]:
        seed("parse_gotest", b"\1" + out(name))
        seed("parse_gotest", b"\0" + out(name))
    seed("parse_jest", out("jest.json"))
    for f in OUT.iterdir():
        if f.is_file() and f.suffix in (".txt", ".json"):
            seed("parse_sniffed", f.read_bytes())
            seed("builtin_analyze", f.read_bytes())

    sys.path.insert(0, str(REPO / "fixtures" / "agents"))
    import _fake  # noqa: E402
    analysis = _fake.analysis()
    seed("strategy_extract", analysis)
    seed("strategy_extract", json.dumps(_fake.strategy()))
    seed("strategy_extract", json.dumps({"fix_strategy": _fake.strategy()}))
    agents = PRESETS + ["garbage", "low-confidence", "missing-fields", "rate-limit", "is-error"]
    for agent in agents:
        raw = subprocess.run([str(REPO / "fixtures" / "agents" / agent)], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=30).stdout
        for i in range(len(PRESETS) + 1):
            if agent in PRESETS and PRESETS.index(agent) != i:
                continue
            seed("agent_envelope", bytes([i]) + raw)
        if agent not in PRESETS:
            seed("agent_envelope", bytes([PRESETS.index("claude")]) + raw)
            seed("agent_envelope", bytes([PRESETS.index("gemini")]) + raw)

    for f in (REPO / "fixtures" / "workflows").glob("*.yml"):
        seed("workflow_yaml", f.read_bytes())

    for snap in (REPO / "tests" / "snapshots").glob("*.json.snap"):
        name = snap.name
        if "context-package" in name:
            kind = "context-package"
        elif "workflow-session" in name:
            kind = "workflow-session"
        elif "_task_" in name:
            kind = "task"
        else:
            continue
        seed("artifact_load", bytes([ARTIFACTS.index(kind)]) + snapshot_json(snap).encode())
    schema = json.loads((REPO / "schemas" / "config.schema.json").read_text())
    config = {k: v["default"] for k, v in schema["properties"].items() if "default" in v}
    config["test"]["command"] = "make test"
    config["agents"]["analysis"] = ["claude", "builtin"]
    HAND_WRITTEN["config"] = config
    for kind, doc in HAND_WRITTEN.items():
        seed("artifact_load", bytes([ARTIFACTS.index(kind)]) + json.dumps(doc, indent=2).encode())
    seed("artifact_load", bytes([ARTIFACTS.index("fix-strategy")]) + json.dumps(_fake.strategy()).encode())

    for mode in (0, 1):
        for template, pairs in [
            ("pytest ${test.output_file} -k $${x} $HOME", [("test.output_file", "log.txt")]),
            ("${spec}", [("spec", "it's $(touch pwned)")]),
            ("echo ${session.id} ${missing}", [("session.id", "WFS-x")]),
        ]:
            fields = [template] + [x for p in pairs for x in p]
            seed("vars_interpolate", bytes([mode]) + "\0".join(fields).encode())

    for s in ["Fix the flaky login tests!", "WFS-test-abc", "WFS-a..b", "test" * 20,
              "Ünïcødé — tests ✓", "WFS-" + "x" * 100, "../../etc/passwd"]:
        seed("session_id", s)


FAILURE = {"test": "tests/test_ops.py::test_divide", "file": "calc/ops.py", "line": 10,
           "error": "ZeroDivisionError: division by zero", "message": "calc/ops.py:10: ZeroDivisionError",
           "criticality": "high", "test_type": "unit", "flaky": False}
HAND_WRITTEN = {
    "test-results": {
        "command": "python3 -m pytest", "exit_code": 1, "duration_ms": 812, "scope": "full",
        "framework": "pytest", "parser": "junit", "total": 3, "passed": 1, "failed": 1,
        "skipped": 1, "errors": 0, "pass_rate": 50.0,
        "layer_distribution": {"static": {"total": 0, "passed": 0, "failed": 0},
                               "unit": {"total": 3, "passed": 1, "failed": 1}},
        "failures": [FAILURE], "output_log": ".workflow/active/WFS-x/.process/test-output.log",
        "truncated": False, "started_at": "2026-01-02T03:04:05Z",
        "cases": [{"test": "tests/test_ops.py::test_divide", "status": "failed", "file": "calc/ops.py",
                   "layer": "unit"},
                  {"test": "tests/test_ops.py::test_add", "status": "passed"},
                  {"test": "tests/test_ops.py::test_skip", "status": "skipped"}],
        "notes": ["a note"], "custom": {"kept": True},
    },
    "iteration-state": {
        "session_id": "WFS-test-x", "current_task": "IMPL-fix-1", "queue": ["IMPL-002"],
        "current_iteration": 1, "max_iterations": 10, "selected_strategy": "conservative",
        "next_action": "execute_fix_task", "status": "awaiting_fix",
        "started_at": "2026-01-02T03:04:05Z", "updated_at": "2026-01-02T03:05:05+01:00",
        "best_pass_rate": 50.0, "stuck_tests": [], "blocked_reason": None,
        "iterations": [{"iteration": 1, "started_at": "2026-01-02T03:04:05Z", "completed_at": None,
                        "scope": "full", "pass_rate": 50.0, "total": 2, "passed": 1, "failed": 1,
                        "failed_tests": ["t"], "new_failures": [], "strategy": "surgical",
                        "analysis_tool": "builtin", "result": "improved"}],
    },
    "iteration-failures": {"iteration": 2, "pass_rate": 66.7, "failures": [FAILURE]},
    "fix-history": {
        "session_id": "WFS-test-x",
        "entries": [],
        "agent_calls": [{"iteration": 1, "task": "IMPL-fix-1", "role": "analysis", "agent": "claude",
                         "started_at": "2026-01-02T03:04:05Z", "duration_ms": 10, "exit_code": 0,
                         "timed_out": False, "is_error": False, "error_kind": None, "cost_usd": 0.05,
                         "turns": 3, "outcome": "analysed", "prompt_file": "p.md", "output_file": "o.txt"}],
    },
    "manifest": {"sessions": []},
    "run-state": {
        "session_id": "WFS-run-x", "workflow_name": "debug", "workflow_file": ".workflow/debug.yml",
        "status": "running", "current_step": 0, "started_at": "2026-01-02T03:04:05Z",
        "updated_at": "2026-01-02T03:04:05Z", "steps": [],
    },
}

if __name__ == "__main__":
    main()
