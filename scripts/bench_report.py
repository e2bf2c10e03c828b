#!/usr/bin/env python3
"""Time `wfx status` and `wfx report --html` on a large synthetic session.

    scripts/bench_report.py [--wfx target/debug/wfx] [--runs 300]
                            [--failures 1000] [--repeat 5]

Builds, in a temp directory, one session with RUNS test runs, RUNS fix
attempts and agent calls, an iteration-N-failures.json of FAILURES failures
for every run, and a latest test-results.json of FAILURES failures; then
prints the median wall time of each command over REPEAT runs and the
report's size.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

T = "2026-01-01T10:00:00Z"


def failure(i):
    return {
        "test": f"tests/test_mod_{i % 50}.py::TestCase::test_case_{i}",
        "file": f"src/mod_{i % 50}.py",
        "line": i % 400 + 1,
        "error": f"AssertionError: expected {i} got {i + 1}",
        "message": "E   assert left == right\n" * 10,
        "criticality": ["low", "medium", "high"][i % 3],
        "test_type": "unit",
        "flaky": i % 97 == 0,
    }


def write(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(value, f)


def build(root, runs, nfail, sid="WFS-test-bench", where="active", status="blocked"):
    """One session of RUNS test runs and fix attempts (also used by
    bench_load.py for many sessions); returns its id."""
    d = os.path.join(root, ".workflow", where, sid)
    write(f"{d}/workflow-session.json", {
        "session_id": sid, "type": "test", "workflow_type": "test_session",
        "status": status, "description": "benchmark", "mode": "prompt",
        "input": "benchmark", "created_at": T, "updated_at": T,
        "phases": [{"phase": n, "name": name, "status": "completed",
                    "started_at": T, "completed_at": T}
                   for n, name in enumerate(["session_start", "context_gather", "analysis",
                                             "task_generation", "test_cycle"], 1)],
        "wfx_version": "0.1.0",
    })
    total = nfail * 10
    records, entries, calls = [], [], []
    failures = [failure(i) for i in range(nfail)]
    for n in range(runs):
        passed = total - nfail + (n % 7)
        records.append({
            "iteration": n, "started_at": T, "completed_at": T, "scope": "full",
            "pass_rate": round(passed * 100 / total, 1), "total": total, "passed": passed,
            "failed": total - passed, "failed_tests": [f["test"] for f in failures[:50]],
            "new_failures": [], "strategy": ["conservative", "aggressive", "surgical"][n % 3],
            "fix_task": f"IMPL-fix-{n}", "fix_commit": "a" * 40,
            "rollback_commit": "b" * 40 if n % 11 == 0 else None,
            "result": "rolled_back" if n % 11 == 0 else "no_change",
        })
        entries.append({
            "iteration": n, "fix_task": f"IMPL-fix-{n}", "agent": "claude",
            "strategy": "conservative", "started_at": T, "duration_ms": 60000,
            "cost_usd": 0.1, "files_changed": ["src/a.py", "src/b.py"],
            "diffstat": {"files": 2, "insertions": n, "deletions": 3},
            "test_edits": [], "outcome": "no_change", "commit": "a" * 40,
        })
        calls.append({"iteration": n, "role": "fix", "agent": "claude", "started_at": T,
                      "cost_usd": 0.1, "outcome": "accepted"})
        write(f"{d}/.process/iteration-{n}-failures.json",
              {"iteration": n, "pass_rate": 90.0, "failures": failures})
    write(f"{d}/.process/iteration-state.json", {
        "session_id": sid, "current_iteration": runs, "max_iterations": runs,
        "next_action": "none", "status": "blocked", "started_at": T, "updated_at": T,
        "stuck_tests": [f["test"] for f in failures[:20]],
        "blocked_reason": f"reached the limit of {runs} fix attempts", "iterations": records,
    })
    write(f"{d}/.process/fix-history.json",
          {"session_id": sid, "entries": entries, "agent_calls": calls})
    write(f"{d}/.process/test-results.json", {
        "command": "pytest", "scope": "full", "parser": "junit", "total": total,
        "passed": total - nfail, "failed": nfail, "skipped": 0, "errors": 0,
        "pass_rate": 90.0, "failures": failures,
    })
    return sid


def median_time(cmd, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wfx", default="target/debug/wfx")
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--failures", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    wfx = os.path.abspath(a.wfx)
    with tempfile.TemporaryDirectory() as root:
        sid = build(root, a.runs, a.failures)
        size = sum(os.path.getsize(os.path.join(dp, f))
                   for dp, _, fs in os.walk(os.path.join(root, ".workflow")) for f in fs)
        out = os.path.join(root, "report.html")
        status = median_time([wfx, "-C", root, "status", sid], a.repeat)
        status_json = median_time([wfx, "-C", root, "--json", "status", sid], a.repeat)
        report = median_time([wfx, "-C", root, "report", sid, "--html", out], a.repeat)
        print(f"session: {a.runs} runs, {a.runs} fix attempts, {a.runs} failure files of "
              f"{a.failures} failures, {size / 1e6:.1f} MB of artifacts")
        print(f"wfx status         median {status * 1000:.0f} ms")
        print(f"wfx status --json  median {status_json * 1000:.0f} ms")
        print(f"wfx report --html  median {report * 1000:.0f} ms, "
              f"report {os.path.getsize(out) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
