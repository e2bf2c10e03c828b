#!/usr/bin/env python3
"""Benchmarks of speculative fix attempts (`--candidates N`, issue #28).

steps     The py-calc sample project (fixtures/projects/py-calc: two bugs,
          11 tests) with the fix chain [fix-one, fix-and-break, fix-all]
          (the `sleepy` fixture agent: it sleeps --sleep seconds, then
          fixes one bug / fixes both and breaks three passing tests /
          fixes both). `--candidates 3` against `--candidates 1` (the
          first agent alone, one attempt at a time), alternated run by run:
          fix attempts (steps) and wall time of `wfx test-cycle-execute`.

parallel  One step of three candidates that each sleep --sleep seconds and
          fix both bugs: the time from the first `candidate-started` to
          `candidate-chosen` (as the JSON lines arrive) against the slowest
          candidate's own `duration_ms` (its agent and its test runs).

own       wfx's own time per candidate: sessions of `--candidates 3` and
          `--candidates 1` alternated, every agent `sleepy fix-all` sleeping
          --sleep seconds (0: instant). Per candidate of the N=3 step, its
          record in fix-history.json: own = duration_ms − agent_ms −
          tests_ms (its checkout made and removed, the link check, the
          diff, its tree kept: what one attempt in place does not do, the
          diff and link check aside, which both do). Also the sessions' wall
          times, N=3 against N=1 (one step each): their difference holds
          the parallel test runs' contention for the cores, not only wfx.

Each run is a fresh copy of the project in a fresh repository; medians over
--runs; no assertions. `fix.max_parallel` is --max-parallel (default 3).

    cargo build --release
    scripts/bench_candidates.py steps    [--wfx target/release/wfx] [--runs 5] [--sleep 2]
    scripts/bench_candidates.py parallel [--wfx target/release/wfx] [--runs 5] [--sleep 2] [--json]
    scripts/bench_candidates.py own      [--wfx target/release/wfx] [--runs 7] [--sleep 0] [--json]
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
SLEEPY = os.path.join(REPO, "fixtures", "agents", "sleepy")


def project(tmp, actions, candidates, max_parallel):
    root = os.path.join(tmp, "p")
    shutil.copytree(os.path.join(REPO, "fixtures", "projects", "py-calc"), root)
    os.makedirs(os.path.join(root, ".workflow"))
    config = {
        "agents": {
            "fix": list(actions),
            "definitions": {a: {"command": [SLEEPY, a]} for a in actions},
        },
        "fix": {"candidates": candidates, "max_parallel": max_parallel},
        "cycle": {"skip_slow_tiers": False},
    }
    with open(os.path.join(root, ".workflow", "wfx.json"), "w") as f:
        json.dump(config, f)
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@example.invalid")
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "initial"]):
        subprocess.run(cmd, cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)
    return root, env


def cycle(wfx, actions, candidates, args):
    """One session to its end: (exit, fix attempts, wall s, events with arrival times)."""
    with tempfile.TemporaryDirectory() as tmp:
        root, env = project(tmp, actions, candidates, args.max_parallel)
        env["FIXER_STATE"] = os.path.join(tmp, "state")
        env["SLEEPY_S"] = str(args.sleep)
        subprocess.run([wfx, "test-fix-gen", "Bench the candidates", "--plan-only"], cwd=root,
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = time.monotonic()
        p = subprocess.Popen([wfx, "--json", "test-cycle-execute", "--candidates", str(candidates)],
                             cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
        events = []
        for line in p.stdout:
            try:
                events.append((time.monotonic() - start, json.loads(line)))
            except ValueError:
                pass
        code = p.wait()
        wall = time.monotonic() - start
        done = [e for _, e in events if e.get("event") == "done"]
        attempts = done[-1].get("fix_attempts") if done else None
        args.history = fix_history(root)
        return code, attempts, wall, events


def fix_history(root):
    """The session's fix-history.json (archived or active), or None."""
    for parent in ("archives", "active"):
        d = os.path.join(root, ".workflow", parent)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            path = os.path.join(d, name, ".process", "fix-history.json")
            if name.startswith("WFS-") and os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    return json.load(f)
    return None


def steps(args):
    actions = ["fix-one", "fix-and-break", "fix-all"]
    rows = {1: [], 3: []}
    for _ in range(args.runs):
        for n in (3, 1):
            code, attempts, wall, _ = cycle(args.wfx, actions, n, args)
            rows[n].append((code, attempts, wall))
    out = {}
    for n, r in rows.items():
        out[n] = {
            "exit": sorted({c for c, _, _ in r}),
            "fix_attempts": statistics.median(a for _, a, _ in r if a is not None),
            "wall_s": round(statistics.median(w for _, _, w in r), 2),
            "range_s": [round(min(w for _, _, w in r), 2), round(max(w for _, _, w in r), 2)],
        }
    print(json.dumps(out, indent=None if args.json else 2))


def parallel(args):
    ratios, steps_s, slowest_s = [], [], []
    for _ in range(args.runs):
        _, _, _, events = cycle(args.wfx, ["fix-all"], 3, args)
        started = [t for t, e in events if e.get("event") == "candidate-started"]
        chosen = [t for t, e in events if e.get("event") == "candidate-chosen"]
        durations = [e["duration_ms"] / 1000 for _, e in events
                     if e.get("event") == "candidate-finished"]
        if not started or not chosen or not durations:
            sys.exit("no candidates ran")
        step = chosen[0] - started[0]
        steps_s.append(step)
        slowest_s.append(max(durations))
        ratios.append(step / max(durations))
    print(json.dumps({
        "step_s": round(statistics.median(steps_s), 2),
        "slowest_candidate_s": round(statistics.median(slowest_s), 2),
        "ratio": round(statistics.median(ratios), 2),
        "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)],
        "sum_of_candidates_would_be_s": round(3 * statistics.median(slowest_s), 2),
    }, indent=None if args.json else 2))


def own(args):
    own_ms, agent_ms, tests_ms, dur_ms = [], [], [], []
    walls = {1: [], 3: []}
    for _ in range(args.runs):
        for n in (3, 1):
            code, attempts, wall, _ = cycle(args.wfx, ["fix-all"], n, args)
            if code != 0 or attempts != 1:
                sys.exit(f"--candidates {n}: exit {code}, {attempts} fix attempt(s)")
            walls[n].append(wall)
            if n == 3:
                rows = args.history["entries"][0]["candidates"]
                if len(rows) != 3 or any("agent_ms" not in r for r in rows):
                    sys.exit("no candidates[] with agent_ms in fix-history.json")
                for r in rows:
                    own_ms.append(r["duration_ms"] - r["agent_ms"] - r["tests_ms"])
                    agent_ms.append(r["agent_ms"])
                    tests_ms.append(r["tests_ms"])
                    dur_ms.append(r["duration_ms"])
    med = statistics.median
    print(json.dumps({
        "runs": args.runs,
        "sleep_s": args.sleep,
        "own_ms": med(own_ms),
        "own_range_ms": [min(own_ms), max(own_ms)],
        "candidate_ms": med(dur_ms),
        "agent_ms": med(agent_ms),
        "tests_ms": med(tests_ms),
        "wall_n3_s": round(med(walls[3]), 3),
        "wall_n1_s": round(med(walls[1]), 3),
        "extra_per_candidate_ms": round((med(walls[3]) - med(walls[1])) / 2 * 1000),
    }, indent=None if args.json else 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["steps", "parallel", "own"])
    ap.add_argument("--wfx", default=os.path.join(REPO, "target", "release", "wfx"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sleep", type=float, default=2.0)
    ap.add_argument("--max-parallel", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one line of JSON (for scripts/bench_all.sh)")
    args = ap.parse_args()
    args.wfx = os.path.abspath(args.wfx)
    {"steps": steps, "parallel": parallel, "own": own}[args.what](args)


if __name__ == "__main__":
    main()
