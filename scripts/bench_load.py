#!/usr/bin/env python3
"""Load benchmark (issue #10): many sessions with long histories.

Builds SESSIONS sessions (half active, half archived) of ITERATIONS test
runs each, with realistic artifacts: iteration-state.json with a record per
run, fix-history.json with an entry and an agent call per fix attempt, an
iteration-N-failures.json per run (FAILURES failures each), test-results.json,
the four initial task files and an IMPL-fix-N.json per attempt. Then times,
as medians of RUNS runs, each command against a baseline that reads the same
files with `cat` (what no tool reading them can avoid):

    wfx session list          vs  cat of every active workflow-session.json
    wfx session list --all    vs  cat of every workflow-session.json
    wfx status ID             vs  cat of every JSON file of that session
    wfx report ID --html F    vs  the same

    cargo build
    scripts/bench_load.py [--wfx target/debug/wfx] [--sessions 200]
                          [--iterations 50] [--failures 20] [--runs 5] [--json]

--json prints one JSON object per measurement instead of a Markdown table.
"""
import argparse, glob, json, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report  # noqa: E402  (one session's artifacts)
import bench_sessions  # noqa: E402  (task files)


def make_tree(root, sessions, iterations, nfail):
    first = None
    for i in range(sessions):
        where = "active" if i % 2 == 0 else "archives"
        sid = f"WFS-test-load-{i:04d}"
        bench_report.build(root, iterations, nfail, sid=sid, where=where,
                           status="blocked" if where == "active" else "completed")
        d = os.path.join(root, ".workflow", where, sid, ".task")
        os.makedirs(d, exist_ok=True)
        for tid, kind in [("IMPL-001", "test-gen"), ("IMPL-001.3", "code-validation"),
                          ("IMPL-001.5", "test-quality-review"), ("IMPL-002", "test-fix")]:
            with open(os.path.join(d, tid + ".json"), "w") as f:
                json.dump(bench_sessions.task_doc(tid, kind), f)
        for n in range(iterations):
            doc = bench_sessions.task_doc(f"IMPL-fix-{n}", "test-fix-iteration")
            with open(os.path.join(d, f"IMPL-fix-{n}.json"), "w") as f:
                json.dump(doc, f)
        first = first or sid
    return first


def median_ms(cmd, runs, cwd):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wfx", default=os.path.join(os.path.dirname(__file__), "..", "target", "debug", "wfx"))
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--failures", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    wfx = os.path.abspath(a.wfx)
    root = tempfile.mkdtemp(prefix="wfx-bench-load-")
    try:
        sid = make_tree(root, a.sessions, a.iterations, a.failures)
        size = sum(os.path.getsize(os.path.join(dp, f))
                   for dp, _, fs in os.walk(os.path.join(root, ".workflow")) for f in fs)
        files = sum(len(fs) for _, _, fs in os.walk(os.path.join(root, ".workflow")))
        sdir = os.path.join(root, ".workflow", "active", sid)
        session_json = sorted(glob.glob(os.path.join(sdir, "**", "*.json"), recursive=True))
        active = sorted(glob.glob(os.path.join(root, ".workflow", "active", "*", "workflow-session.json")))
        every = sorted(glob.glob(os.path.join(root, ".workflow", "*", "*", "workflow-session.json")))
        html = os.path.join(root, "report.html")
        rows = [
            ("wfx session list", [wfx, "session", "list"], ["cat", *active]),
            ("wfx session list --all", [wfx, "session", "list", "--all"], ["cat", *every]),
            (f"wfx status {sid}", [wfx, "status", sid], ["cat", *session_json]),
            (f"wfx report {sid} --html", [wfx, "report", sid, "--html", html], ["cat", *session_json]),
        ]
        results = []
        for label, cmd, base in rows:
            m = median_ms(cmd, a.runs, root)
            b = median_ms(base, a.runs, root)
            results.append({"figure": label, "median_ms": round(m, 1), "baseline_ms": round(b, 1),
                            "ratio": round(m / b, 1)})
        desc = (f"{a.sessions} sessions ({(a.sessions + 1) // 2} active, {a.sessions // 2} archived) × "
                f"{a.iterations} iterations, {a.failures} failures per iteration file: "
                f"{files} files, {size / 1e6:.1f} MB; {a.runs} runs per command; {os.path.relpath(wfx)}")
        if a.json:
            for r in results:
                print(json.dumps({**r, "setup": desc}))
            return
        print(desc)
        print()
        print("| command | median ms | baseline (`cat` of its files) ms | ratio |")
        print("|---|---:|---:|---:|")
        for r in results:
            print(f"| `{r['figure']}` | {r['median_ms']:.1f} | {r['baseline_ms']:.1f} | {r['ratio']:.1f}× |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
