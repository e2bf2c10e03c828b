#!/usr/bin/env python3
"""Retest benchmark on a real pytest suite (issue #16): more-itertools
11.2.1 as released on PyPI (sdist with its tests: 765 tests in
tests/test_more.py and tests/test_recipes.py, no dependencies), downloaded
once into a cache directory. Two bugs are injected:

  A  more_itertools/recipes.py  quantify() counts one too many
  B  more_itertools/more.py     always_reversible() of an iterator does not reverse

(a) partial  a fix of A only: the retest that detects B still failing
             (tier 1, the failing tests) against a full run.
             Target: <= 30 % of a full run.
(b) correct  the fix of both: every tier before the final full-suite
             validation, together, against a full run. Target: <= 30 %.
(c) session  `wfx test-fix-gen ... -y` with a fixer that makes two partial
             fixes (A; then a wrong edit at B) and then the correct one:
             total test time (every test command wfx ran, timed by a
             wrapper) with cycle.progressive on against off, the
             sessions alternated pair by pair. Target: at least halved.

(a) and (b) go through wfx's runner and tier API (benches/retest.rs);
(c) runs whatever loop this branch has. Medians over --runs runs.

    scripts/bench_retest.py [--wfx target/debug/wfx] [--runs 5] [--cache DIR]
                            [--skip-session | --session-only] [--json]

Needs python3 with pytest and pip (PyPI reachable the first time), cargo.
Each full run of the suite takes 30-90 s on the shared 2-core machines
(one test, PrimeFunctionTests::test_primes, takes most of it); all runs
take about an hour with --runs 5.
"""
import argparse, glob, json, os, shutil, statistics, subprocess, sys, tarfile, tempfile

SUITE = "more-itertools"
VERSION = "11.2.1"
BUG_A = ("more_itertools/recipes.py",
         "    return sum(map(pred, iterable))",
         "    return sum(map(pred, iterable)) + 1")
BUG_B = ("more_itertools/more.py",
         "        return reversed(list(iterable))",
         "        return iter(list(iterable))")
# A second partial fix: touches B's line and still does not reverse.
PARTIAL_B = ("more_itertools/more.py",
             "        return iter(list(iterable))",
             "        return iter(list(iterable)[:])")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def log(msg):
    print(f"bench_retest: {msg}", file=sys.stderr, flush=True)


def suite_dir(cache):
    """Download and unpack the sdist once; returns its directory."""
    d = os.path.join(cache, f"more_itertools-{VERSION}")
    if os.path.isdir(os.path.join(d, "tests")):
        return d
    os.makedirs(cache, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:",
                    "--no-deps", f"{SUITE}=={VERSION}", "-d", cache], check=True)
    sdist = glob.glob(os.path.join(cache, f"more_itertools-{VERSION}.tar.gz"))[0]
    with tarfile.open(sdist) as t:
        t.extractall(cache, filter="data")
    return d


def spec(bug):
    return "|".join(bug)


def tiers(cache, runs):
    """(a) and (b) through benches/retest.rs; returns (per-run rows, medians)."""
    suite = suite_dir(cache)
    out = subprocess.run(
        ["cargo", "bench", "--quiet", "--bench", "retest", "--profile", "dev", "--",
         suite, str(runs), spec(BUG_A), spec(BUG_B)],
        cwd=ROOT, check=True, capture_output=True, text=True)
    rows = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    return [r for r in rows if not r.get("median")], next(r for r in rows if r.get("median"))


def edit(root, bug, forward=True):
    path = os.path.join(root, bug[0])
    with open(path) as f:
        text = f.read()
    old, new = (bug[1], bug[2]) if forward else (bug[2], bug[1])
    assert old in text, f"{bug[0]}: {old!r}"
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


def git_init(root, env):
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "initial"]):
        subprocess.run(cmd, cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)


def session_once(wfx, cache, progressive):
    """One whole session; returns (total test ms, test commands run, outcome)."""
    tmp = tempfile.mkdtemp(prefix="wfx-bench-retest-")
    try:
        root = os.path.join(tmp, "suite")
        shutil.copytree(suite_dir(cache), root)
        edit(root, BUG_A)
        edit(root, BUG_B)
        times = os.path.join(tmp, "times")
        timed = os.path.join(tmp, "timed")
        with open(timed, "w") as f:
            f.write('#!/bin/sh\n# Runs a test command and appends its wall time (ms) to $WFX_BENCH_TIMES.\n'
                    's=$(date +%s%N); "$@"; rc=$?; e=$(date +%s%N)\n'
                    'echo $(( (e - s) / 1000000 )) >> "$WFX_BENCH_TIMES"; exit $rc\n')
        os.chmod(timed, 0o755)
        plan = os.path.join(tmp, "fix-plan.json")
        with open(plan, "w") as f:
            json.dump([
                {"edits": [{"file": BUG_A[0], "old": BUG_A[2], "new": BUG_A[1]}]},
                {"edits": [{"file": PARTIAL_B[0], "old": PARTIAL_B[1], "new": PARTIAL_B[2]}]},
                # The wrong edit is put back when progressive (it made no
                # failing test pass) and kept when not: fix either.
                {"edits": [{"file": BUG_B[0], "old": "        return iter(list(iterable)",
                            "new": "        return reversed(list(iterable)"}]},
            ], f)
        os.makedirs(os.path.join(root, ".workflow"), exist_ok=True)
        with open(os.path.join(root, ".workflow", "wfx.json"), "w") as f:
            json.dump({
                "test": {"command": f"{timed} {sys.executable} -m pytest -p no:cacheprovider"},
                "agents": {"fix": "fixer", "definitions": {
                    "fixer": {"command": [os.path.join(ROOT, "fixtures", "agents", "fixer")]}}},
                "cycle": {"progressive": progressive},
            }, f)
        env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@example.invalid",
                   GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@example.invalid",
                   WFX_BENCH_TIMES=times, FAKE_FIX_PLAN=plan, NO_COLOR="1")
        git_init(root, env)
        r = subprocess.run([wfx, "--no-progress", "test-fix-gen", "Fix more-itertools", "-y"],
                           cwd=root, env=env, capture_output=True, text=True)
        ms = [int(l) for l in open(times).read().split()] if os.path.exists(times) else []
        outcome = "completed" if r.returncode == 0 else f"exit {r.returncode}"
        if r.returncode != 0:
            log(f"session (progressive={progressive}) ended with {outcome}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return sum(ms), len(ms), outcome, ms
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wfx", default=os.path.join(ROOT, "target", "debug", "wfx"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wfx-bench"))
    ap.add_argument("--skip-session", action="store_true", help="only (a) and (b)")
    ap.add_argument("--session-only", action="store_true", help="only (c)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    result = {"suite": f"{SUITE} {VERSION}", "runs": a.runs}
    if not a.session_only:
        log(f"{SUITE} {VERSION}: tiers (a) and (b), {a.runs} runs")
        rows, med = tiers(a.cache, a.runs)
        result.update({
            "tests": rows[0]["suite_tests"], "failing": rows[0]["failing"],
            "full_ms": med["full_ms"],
            "partial_ms": med["a_ms"], "partial_ratio": med["a_ratio"],
            "correct_ms": med["b_ms"], "correct_ratio": med["b_ratio"],
            "correct_tiers": [t["tier"] for t in rows[0]["b_tiers"]],
            "affected_tier": rows[0].get("b_affected_tier"),
        })
    if not a.skip_session:
        # Alternated, one pair at a time, the order turned each pair: a
        # machine that slows down over the hour slows both alike.
        sessions = {True: ([], [], [], []), False: ([], [], [], [])}
        for i in range(a.runs):
            for progressive in ((True, False) if i % 2 == 0 else (False, True)):
                name = "on" if progressive else "off"
                log(f"session with progressive {name}, pair {i + 1}/{a.runs}")
                ms, n, outcome, each = session_once(a.wfx, a.cache, progressive)
                totals, counts, outcomes, runs = sessions[progressive]
                totals.append(ms)
                counts.append(n)
                outcomes.append(outcome)
                runs.append(each)
        for progressive, (totals, counts, outcomes, runs) in sessions.items():
            name = "on" if progressive else "off"
            result[f"session_{name}_ms"] = statistics.median(totals)
            result[f"session_{name}_all_ms"] = totals
            result[f"session_{name}_runs"] = statistics.median(counts)
            result[f"session_{name}_outcomes"] = outcomes
            result[f"session_{name}_test_ms"] = runs
        result["session_ratio"] = result["session_on_ms"] / result["session_off_ms"]
        result["session_pair_ratios"] = [
            on / off for on, off in zip(sessions[True][0], sessions[False][0])]
    if a.json:
        print(json.dumps(result))
        return
    if not a.session_only:
        print(f"{result['suite']}: {result['tests']} tests, {result['failing']} failing with both bugs; "
              f"medians over {a.runs} runs")
        print(f"full run                                  {result['full_ms'] / 1000:8.1f} s")
        print(f"(a) retest that catches a partial fix     {result['partial_ms'] / 1000:8.1f} s  "
              f"{result['partial_ratio'] * 100:5.1f} % of a full run (target <= 30 %)")
        print(f"(b) tiers before validation, correct fix  {result['correct_ms'] / 1000:8.1f} s  "
              f"{result['correct_ratio'] * 100:5.1f} % of a full run (target <= 30 %); "
              f"tiers {', '.join(result['correct_tiers'])}; affected tier: {result['affected_tier']}")
    else:
        print(f"{result['suite']}: medians over {a.runs} alternated pairs of sessions")
    if "session_ratio" in result:
        print(f"(c) session, progressive on               {result['session_on_ms'] / 1000:8.1f} s  "
              f"({result['session_on_runs']:.0f} test commands; {', '.join(result['session_on_outcomes'])})")
        print(f"    session, progressive off              {result['session_off_ms'] / 1000:8.1f} s  "
              f"({result['session_off_runs']:.0f} test commands; {', '.join(result['session_off_outcomes'])})")
        print(f"    on / off                              {result['session_ratio'] * 100:8.1f} % "
              f"(target <= 50 %)")


if __name__ == "__main__":
    main()
