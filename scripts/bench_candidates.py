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

Each run is a fresh copy of the project in a fresh repository; medians over
--runs; no assertions. `fix.max_parallel` is --max-parallel (default 3).

    cargo build --release
    scripts/bench_candidates.py steps    [--wfx target/release/wfx] [--runs 5] [--sleep 2]
    scripts/bench_candidates.py parallel [--wfx target/release/wfx] [--runs 5] [--sleep 2] [--json]
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
        return code, attempts, wall, events


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["steps", "parallel"])
    ap.add_argument("--wfx", default=os.path.join(REPO, "target", "release", "wfx"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sleep", type=float, default=2.0)
    ap.add_argument("--max-parallel", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one line of JSON (for scripts/bench_all.sh)")
    args = ap.parse_args()
    args.wfx = os.path.abspath(args.wfx)
    {"steps": steps, "parallel": parallel}[args.what](args)


if __name__ == "__main__":
    main()
