#!/usr/bin/env python3
"""The cost of the sealed verdict (issue #27): the full run that accepts a
fix runs on the commit in a clean checkout (`cycle.sealed`, the default)
instead of in place (`cycle.sealed: false`). The same mechanism is
`wfx test --sealed` (checkout of HEAD outside the project, the dependency
directories reached, the run, the checkout removed) against `wfx test`;
the two are alternated on one project, medians of --runs, wall time.

Projects (real pytest):
  small   fixtures/projects/py-pkg (10 tests)
  larger  a generated suite of 5,000 tests in 50 files (20 failing)
  big     more-itertools 11.2.1 (765 tests), when bench_retest.py's cache
          holds it (--big)

    scripts/bench_sealed.py [--wfx target/release/wfx] [--runs 5] [--big] [--json]
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def git_init(root):
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)


def small(base):
    root = os.path.join(base, "small")
    shutil.copytree(os.path.join(ROOT, "fixtures", "projects", "py-pkg"), root)
    return root


def larger(base):
    import bench_test5k
    root = os.path.join(base, "larger")
    os.makedirs(root)
    bench_test5k.make_suite(root)
    return root


def big(base):
    import bench_retest
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wfx-bench")
    root = os.path.join(base, "big")
    shutil.copytree(bench_retest.suite_dir(cache), root)
    return root


def once(wfx, root, sealed):
    t = time.perf_counter()
    r = subprocess.run([wfx, "-q", "test"] + (["--sealed"] if sealed else []), cwd=root,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, NO_COLOR="1"))
    if r.returncode not in (0, 1):
        sys.exit(f"wfx test{' --sealed' if sealed else ''}: exit {r.returncode}: {r.stderr.decode()[-2000:]}")
    return (time.perf_counter() - t) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wfx", default="target/release/wfx")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    wfx = os.path.abspath(a.wfx)
    base = tempfile.mkdtemp(prefix="wfx-bench-sealed-")
    out = {"runs": a.runs, "loadavg": open("/proc/loadavg").read().split()[:3], "projects": {}}
    try:
        makers = [("small", small), ("larger", larger)] + ([("big", big)] if a.big else [])
        for name, make in makers:
            root = make(base)
            os.makedirs(os.path.join(root, ".workflow"), exist_ok=True)
            with open(os.path.join(root, ".workflow", "wfx.json"), "w") as f:
                json.dump({"test": {"command": f"{sys.executable} -m pytest -p no:cacheprovider"}}, f)
            git_init(root)
            once(wfx, root, False)  # warm up
            times = {False: [], True: []}
            for _ in range(a.runs):
                for sealed in (False, True):
                    times[sealed].append(once(wfx, root, sealed))
            in_place, sealed = statistics.median(times[False]), statistics.median(times[True])
            out["projects"][name] = {"in_place_ms": round(in_place, 1), "sealed_ms": round(sealed, 1),
                                     "ratio": round(sealed / in_place, 2),
                                     "extra_ms": round(sealed - in_place, 1)}
        out["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
        if a.json:
            print(json.dumps(out))
            return
        for name, p in out["projects"].items():
            print(f"{name}: in place {p['in_place_ms']} ms, sealed {p['sealed_ms']} ms: "
                  f"{p['ratio']}× (+{p['extra_ms']} ms), medians of {a.runs} alternated")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
