#!/usr/bin/env python3
"""Benchmark session listing and status on a large .workflow tree.

Creates N sessions (half active, half archived), each with four task files
and an iteration-state.json of ITER iterations, then times
`wfx session list --json`, `wfx session list --all --json` and `wfx status ID`.
Prints medians as a Markdown table. Usage:

    cargo build --release   # or use target/debug for a rough figure
    scripts/bench_sessions.py [--wfx target/release/wfx] [--sessions 1000] [--iterations 5] [--runs 15]
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time

def session_doc(sid, status):
    return {
        "session_id": sid, "type": "test", "workflow_type": "test_session", "status": status,
        "description": f"Benchmark session {sid}", "mode": "prompt", "input": "bench",
        "source_session_id": None, "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z", "completed_at": None,
        "git": {"base_commit": None, "branch": None},
        "phases": [{"phase": i + 1, "name": n, "status": "completed", "started_at": None, "completed_at": None}
                   for i, n in enumerate(["session_start", "context_gather", "analysis", "task_generation", "test_cycle"])],
        "wfx_version": "0.1.0",
    }

def task_doc(tid, kind):
    return {"id": tid, "title": f"Task {tid}", "status": "completed", "meta": {"type": kind},
            "context": {"requirements": ["r"] * 5, "focus_paths": ["src/a.rs"], "acceptance": ["x"]},
            "flow_control": {"target_files": ["src/a.rs"], "test_commands": {"run_tests": "cargo test"}}}

def state_doc(sid, iterations):
    its = [{"iteration": i + 1, "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:01:00Z",
            "scope": "full", "pass_rate": 50.0 + i, "total": 200, "passed": 100 + i, "failed": 100 - i,
            "failed_tests": [f"tests::t{j}" for j in range(10)], "new_failures": [], "strategy": "conservative",
            "result": "improved"} for i in range(iterations)]
    return {"session_id": sid, "current_task": "IMPL-002", "queue": [], "current_iteration": iterations,
            "max_iterations": 100, "next_action": "none", "status": "completed",
            "started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z", "iterations": its}

def make_tree(root, n, iterations):
    for i in range(n):
        where = "active" if i % 2 == 0 else "archives"
        sid = f"WFS-test-bench-{i:05d}"
        d = os.path.join(root, ".workflow", where, sid)
        os.makedirs(os.path.join(d, ".task"))
        os.makedirs(os.path.join(d, ".process"))
        json.dump(session_doc(sid, "active" if where == "active" else "completed"), open(os.path.join(d, "workflow-session.json"), "w"))
        for tid, kind in [("IMPL-001", "test-gen"), ("IMPL-001.3", "code-validation"), ("IMPL-001.5", "test-quality-review"), ("IMPL-002", "test-fix")]:
            json.dump(task_doc(tid, kind), open(os.path.join(d, ".task", tid + ".json"), "w"))
        json.dump(state_doc(sid, iterations), open(os.path.join(d, ".process", "iteration-state.json"), "w"))
    return "WFS-test-bench-00000"

def median_ms(cmd, cwd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wfx", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "wfx"))
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    wfx = os.path.abspath(a.wfx)
    root = tempfile.mkdtemp(prefix="wfx-bench-")
    try:
        sid = make_tree(root, a.sessions, a.iterations)
        base = median_ms(["true"], root, a.runs)
        rows = [
            ("wfx session list --json", [wfx, "session", "list", "--json"]),
            ("wfx session list --all --json", [wfx, "session", "list", "--all", "--json"]),
            (f"wfx status {sid}", [wfx, "status", sid]),
            (f"wfx status {sid} --json", [wfx, "status", sid, "--json"]),
        ]
        print(f"{a.sessions} sessions ({a.sessions // 2} active, {a.sessions - a.sessions // 2} archived), "
              f"{a.iterations} iterations each, {a.runs} runs per command, binary {os.path.relpath(wfx)}")
        print()
        print("| command | median ms | vs `true` (process start) |")
        print("|---|---:|---:|")
        print(f"| `true` | {base:.1f} | 1.0× |")
        for label, cmd in rows:
            m = median_ms(cmd, root, a.runs)
            print(f"| `{label}` | {m:.1f} | {m / base:.1f}× |")
    finally:
        shutil.rmtree(root, ignore_errors=True)

if __name__ == "__main__":
    main()
