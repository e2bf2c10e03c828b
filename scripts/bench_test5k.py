#!/usr/bin/env python3
"""`wfx test --json` on 5,000 pytest results (issue #30): wfx's own time
(detect, parse the JUnit report, merge, write test-results.json, print).

A real pytest run of a generated suite (50 files × 100 tests, 20 failing)
is recorded once: its JUnit report and its output. The benchmark's project
then runs a replay of that recording as its test command (`bin/pytest`, a
shell script that copies the report where wfx asked for it and prints the
output), so what is timed is wfx, not pytest. Own time = the wall time of
`wfx test --json` minus the test command's duration as wfx recorded it
(`duration_ms`); also the CPU time of wfx and the replay together (less
sensitive to a busy machine). Medians of RUNS; with --base, that binary alternated with
--wfx in the same run. No assertions.

    scripts/bench_test5k.py [--wfx target/release/wfx] [--base OTHER] [--runs 15] [--json]
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

FILES, PER_FILE, FAIL_EVERY = 50, 100, 250

REPLAY = """#!/bin/sh
# Replays a recorded pytest run: its JUnit report and its output.
here=$(dirname "$0")/..
for a in "$@"; do
  case "$a" in --junitxml=*) cp "$here/recorded.xml" "${a#--junitxml=}" ;; esac
done
cat "$here/recorded.out"
exit 1
"""


def make_suite(root):
    os.makedirs(os.path.join(root, "tests"))
    for f in range(FILES):
        with open(os.path.join(root, "tests", f"test_m{f}.py"), "w") as out:
            for i in range(PER_FILE):
                n = f * PER_FILE + i
                if n % FAIL_EVERY == 0:
                    out.write(f"def test_t{n}():\n    x = {n}\n    assert x == {n + 1}, 'value differs'\n\n")
                else:
                    out.write(f"def test_t{n}():\n    assert {n} == {n}\n\n")


def record(root):
    """Run the real pytest once; keep its report and output."""
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                          f"--junitxml={os.path.join(root, 'recorded.xml')}", "-o", "junit_family=xunit1"],
                         cwd=root, capture_output=True, text=True)
    with open(os.path.join(root, "recorded.out"), "w") as f:
        f.write(out.stdout + out.stderr)
    version = subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True, text=True)
    return (version.stdout + version.stderr).strip()


def cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (u.ru_utime + u.ru_stime) * 1000


def once(wfx, root):
    """(own wall ms, wall ms, CPU ms of wfx and the replay)."""
    c, t = cpu(), time.perf_counter()
    r = subprocess.run([wfx, "test", "--json"], cwd=root, capture_output=True, text=True,
                       env=dict(os.environ, NO_COLOR="1"))
    wall = (time.perf_counter() - t) * 1000
    used = cpu() - c
    res = json.loads(r.stdout)
    assert res["total"] == FILES * PER_FILE, res["total"]
    return wall - res["duration_ms"], wall, used


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wfx", default="target/release/wfx")
    ap.add_argument("--base", help="another wfx binary, alternated with --wfx")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    bins = {"wfx": os.path.abspath(a.wfx)}
    if a.base:
        bins["base"] = os.path.abspath(a.base)
    root = tempfile.mkdtemp(prefix="wfx-bench-test5k-")
    try:
        make_suite(root)
        pytest = record(root)
        os.makedirs(os.path.join(root, "bin"))
        with open(os.path.join(root, "bin", "pytest"), "w") as f:
            f.write(REPLAY)
        os.chmod(os.path.join(root, "bin", "pytest"), 0o755)
        os.makedirs(os.path.join(root, ".workflow"))
        with open(os.path.join(root, ".workflow", "wfx.json"), "w") as f:
            json.dump({"test": {"command": "bin/pytest"}}, f)
        for b in bins.values():  # warm up: the first run has no previous results
            once(b, root)
        own = {k: [] for k in bins}
        used = {k: [] for k in bins}
        for _ in range(a.runs):
            for k, b in bins.items():
                o, _, c = once(b, root)
                own[k].append(o)
                used[k].append(c)
        result = {"tests": FILES * PER_FILE, "recorded_with": pytest, "runs": a.runs,
                  "loadavg": open("/proc/loadavg").read().split()[:3]}
        for k, v in own.items():
            result[f"{k}_own_ms"] = round(statistics.median(v), 1)
            result[f"{k}_own_range_ms"] = [round(min(v), 1), round(max(v), 1)]
            result[f"{k}_cpu_ms"] = round(statistics.median(used[k]), 1)
        if a.json:
            print(json.dumps(result))
            return
        for k in bins:
            print(f"{k}: own time {result[f'{k}_own_ms']} ms (range {result[f'{k}_own_range_ms']}), "
                  f"CPU {result[f'{k}_cpu_ms']} ms (wfx and the replay), median of {a.runs}")
        if "base" in bins:
            print(f"ratio {result['wfx_own_ms'] / result['base_own_ms']:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
