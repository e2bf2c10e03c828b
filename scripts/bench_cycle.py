#!/usr/bin/env python3
"""Benchmarks of phase 5 (`wfx test-cycle-execute`), issue #7.

overhead     Orchestration overhead: a trivial test command (TAP on stdout,
             one test always failing) and a no-op fixer, over 10 fix
             attempts. wfx's wall time minus the time of its children (test
             runs and fixer calls, as wfx records them in
             iteration-N-results.json and fix-history.json), per iteration.
             Target: under 30 ms per iteration.

progressive  Progressive testing: a generated pytest project with 220 tests
             in 20 files (each test costs --test-ms of work), 2 of them
             failing in one module. A fixer fixes them; wfx retests the
             failing and affected tests (merged over the last full run) and
             then validates on the full suite. Compares the affected-only
             retest with the full run on the same code. Target: at least
             70 % of the time saved.

actions      wfx's own time per action of the engine (issue #14), for both
             front ends: `--front-end cycle` (the overhead project above:
             a trivial failing TAP test and a fix agent that reads its
             prompt and changes nothing) and `--front-end run` (a `wfx run`
             debug loop: the same test command, `on_failure: claude:` with
             the same trivial agent as `claude`). An action is one step of
             the engine (the count the run log ends with, "N steps"). Own
             time = wall time minus the same test and agent commands run
             bare, as often as wfx ran them, divided by the actions. One
             extra run under `strace -f` counts fsync/fdatasync calls per
             action: wfx's own and git's (wfx's snapshots and commits).
             Target: at most 5 ms per action (release build, ext4).

All print medians over --runs fresh projects and make no assertions.

    cargo build
    scripts/bench_cycle.py overhead    [--wfx target/debug/wfx] [--runs 5]
    scripts/bench_cycle.py progressive [--wfx target/debug/wfx] [--runs 5] [--test-ms 5]
    scripts/bench_cycle.py actions     [--wfx target/release/wfx] [--runs 5] [--front-end cycle|run]
                                       [--base OTHER_WFX]  (alternated run by run)

--json prints one JSON object (medians, and for overhead and actions the
bare commands' own time as the baseline) for scripts/bench_all.sh.
"""
import argparse, glob, json, os, re, resource, shutil, statistics, subprocess, sys, tempfile, time


def sh(cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def git_init(root):
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@example.invalid")
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-qm", "initial"]):
        subprocess.run(cmd, cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def plan(wfx, root):
    sh([wfx, "-q", "test-fix-gen", "Benchmark the cycle", "--plan-only"], root)


def session_dir(root):
    dirs = glob.glob(os.path.join(root, ".workflow", "*", "WFS-*"))
    return dirs[0]


def overhead_once(wfx, iterations):
    root = tempfile.mkdtemp(prefix="wfx-bench-cycle-")
    write(os.path.join(root, ".workflow", "wfx.json"), json.dumps({
        "test": {"command": TRIVIAL_TEST},
        "agents": {"fix": "noop", "definitions": {"noop": {"command": ["sh", "-c", "cat > /dev/null"]}}},
        "cycle": {"max_iterations": iterations, "no_progress_limit": 1000, "stuck_after": 1000},
    }))
    write(os.path.join(root, "README.md"), "benchmark\n")
    git_init(root)
    plan(wfx, root)
    start = time.perf_counter()
    r = subprocess.run([wfx, "-q", "test-cycle-execute"], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if r.returncode != 1:
        sys.exit(f"expected a block after {iterations} attempts (exit 1), got {r.returncode}: {r.stderr.decode()}")
    sess = session_dir(root)
    runs = sorted(glob.glob(os.path.join(sess, ".process", "iteration-*-results.json")))
    tests_ms = sum(json.load(open(p))["duration_ms"] for p in runs)
    history = json.load(open(os.path.join(sess, ".process", "fix-history.json")))
    fix_ms = sum(e["duration_ms"] for e in history["entries"])
    attempts = len(history["entries"])
    if attempts != iterations:
        sys.exit(f"expected {iterations} attempts, saw {attempts}")
    children = (tests_ms + fix_ms) / 1000.0
    return wall, children, len(runs), attempts


TRIVIAL_TEST = "printf 'TAP version 13\\nok 1 - adds\\nnot ok 2 - subtracts\\n1..2\\n'; exit 1"


def bare_test_ms(runs):
    """The trivial test command on its own (sh -c, as wfx runs it): the
    baseline of the overhead."""
    times = []
    for _ in range(max(runs, 5) * 4):
        t = time.perf_counter()
        subprocess.run(["sh", "-c", TRIVIAL_TEST], stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def overhead(args):
    rows = [overhead_once(args.wfx, args.iterations) for _ in range(args.runs)]
    walls = [r[0] for r in rows]
    kids = [r[1] for r in rows]
    per = [(w - c) / r[3] * 1000 for w, c, r in zip(walls, kids, rows)]
    if args.json:
        bare = bare_test_ms(args.runs)
        print(json.dumps({
            "runs": args.runs, "attempts": args.iterations, "test_runs": rows[0][2],
            "wall_ms": round(statistics.median(walls) * 1000, 1),
            "children_ms": round(statistics.median(kids) * 1000, 1),
            "overhead_per_iteration_ms": round(statistics.median(per), 1),
            "min_ms": round(min(per), 1), "max_ms": round(max(per), 1),
            "bare_test_ms": round(bare, 2),
            "tmpdir": tempfile.gettempdir(),
        }))
        return
    print(f"orchestration overhead: {args.runs} runs × {args.iterations} fix attempts ({rows[0][2]} test runs each), {args.wfx}")
    print(f"  wall time           median {statistics.median(walls)*1000:8.1f} ms  (min {min(walls)*1000:.1f}, max {max(walls)*1000:.1f})")
    print(f"  children (runs+fix) median {statistics.median(kids)*1000:8.1f} ms")
    print(f"  overhead/iteration  median {statistics.median(per):8.1f} ms  (min {min(per):.1f}, max {max(per):.1f}); target < 30 ms")
    print(f"  overhead share      median {statistics.median([(w - c) / w * 100 for w, c in zip(walls, kids)]):8.1f} % of wall time")


MODULE = '''"""Module {i} of the benchmark project."""


def inc(x):
    return x + 1


def dec(x):
    return x - 1


def double(x):
    return x * 2
'''

TESTS = '''import time

from pkg.m{i:02d} import dec, double, inc


def work():
    time.sleep({secs})

'''


def progressive_project(root, test_ms):
    write(os.path.join(root, "pyproject.toml"), '[project]\nname = "bench"\nversion = "0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    write(os.path.join(root, "conftest.py"), "")
    write(os.path.join(root, ".gitignore"), "__pycache__/\n.pytest_cache/\n")
    write(os.path.join(root, "pkg", "__init__.py"), "")
    secs = test_ms / 1000.0
    for i in range(20):
        src = MODULE.format(i=i)
        if i == 7:  # two bugs, two failing tests
            src = src.replace("return x + 1", "return x + 2").replace("return x * 2", "return x * 3")
        write(os.path.join(root, "pkg", f"m{i:02d}.py"), src)
        body = TESTS.format(i=i, secs=secs)
        for n in range(11):
            fn, arg, want = [("inc", n, n + 1), ("dec", n, n - 1), ("double", n, n * 2)][n % 3]
            body += f"\ndef test_{fn}_{n}():\n    work()\n    assert {fn}({arg}) == {want}\n\n"
        write(os.path.join(root, "tests", f"test_m{i:02d}.py"), body)
    fixer = "import re; p='pkg/m07.py'; s=open(p).read(); open(p,'w').write(s.replace('x + 2','x + 1').replace('x * 3','x * 2'))"
    write(os.path.join(root, ".workflow", "wfx.json"), json.dumps({
        "agents": {"fix": "fixer", "definitions": {"fixer": {"command": [sys.executable, "-c", fixer]}}},
    }))


def progressive_once(wfx, test_ms):
    root = tempfile.mkdtemp(prefix="wfx-bench-progressive-")
    progressive_project(root, test_ms)
    git_init(root)
    plan(wfx, root)
    r = subprocess.run([wfx, "--json", "test-cycle-execute"], cwd=root, capture_output=True)
    if r.returncode != 0:
        sys.exit(f"the cycle failed ({r.returncode}): {r.stderr.decode()}")
    runs = [e for e in map(json.loads, r.stdout.decode().splitlines()) if e["event"] == "run"]
    first = runs[0]
    affected = next(e for e in runs if e["iteration"] == 2 and e["scope"] == "affected")
    full = next(e for e in runs if e["iteration"] == 2 and e["scope"] == "full")
    return first, affected, full


def progressive(args):
    rows = [progressive_once(args.wfx, args.test_ms) for _ in range(args.runs)]
    first = [r[0]["duration_ms"] for r in rows]
    aff = [r[1]["duration_ms"] for r in rows]
    full = [r[2]["duration_ms"] for r in rows]
    saved = [(1 - a / f) * 100 for a, f in zip(aff, full)]
    total = rows[0][0]["total"]
    if args.json:
        print(json.dumps({
            "runs": args.runs, "tests": total, "test_ms": args.test_ms,
            "first_full_ms": statistics.median(first), "affected_ms": statistics.median(aff),
            "full_ms": statistics.median(full), "saved_pct": round(statistics.median(saved), 1),
            "min_pct": round(min(saved), 1), "max_pct": round(max(saved), 1),
            "ratio": round(statistics.median([a / f for a, f in zip(aff, full)]), 3),
        }))
        return
    print(f"progressive testing: {args.runs} runs, {total} tests in 20 files, 2 failing, {args.test_ms} ms of work per test, {args.wfx}")
    print(f"  first full run          median {statistics.median(first):7.0f} ms")
    print(f"  affected-only retest    median {statistics.median(aff):7.0f} ms")
    print(f"  full run (same code)    median {statistics.median(full):7.0f} ms")
    print(f"  time saved              median {statistics.median(saved):7.1f} %  (min {min(saved):.1f}, max {max(saved):.1f}); target ≥ 70 %")
    print(f"  ratio affected / full   median {statistics.median([a / f for a, f in zip(aff, full)]):7.3f}")


# --- actions: wfx's own time per engine step, both front ends (issue #14) ---

TRIVIAL_AGENT = ["sh", "-c", "cat > /dev/null"]

RUN_WORKFLOW = """name: bench
commands:
  - test:
      command: %s
      on_failure:
        claude: "Fix the failing test. Output: ${test.output}"
        max_attempts: %d
"""


def actions_project(front_end, iterations):
    root = tempfile.mkdtemp(prefix=f"wfx-bench-actions-{front_end}-")
    agents = {"definitions": {"noop": {"command": TRIVIAL_AGENT}, "claude": {"command": TRIVIAL_AGENT}}}
    config = {"test": {"command": TRIVIAL_TEST}, "agents": dict(agents, fix="noop")}
    if front_end == "cycle":
        config["cycle"] = {"max_iterations": iterations, "no_progress_limit": 1000, "stuck_after": 1000}
    else:
        write(os.path.join(root, "workflow.yml"), RUN_WORKFLOW % (json.dumps(TRIVIAL_TEST), iterations))
    write(os.path.join(root, ".workflow", "wfx.json"), json.dumps(config))
    write(os.path.join(root, "README.md"), "benchmark\n")
    git_init(root)
    if front_end == "cycle":
        plan(os.path.abspath(WFX[0]), root)
    return root


WFX = [None]


def actions_command(front_end):
    if front_end == "cycle":
        return [WFX[0], "-q", "test-cycle-execute"], 1  # blocked after the last attempt
    return [WFX[0], "-q", "run", "workflow.yml"], 0       # partial_success


def steps_of(root):
    """The engine's step count, the last "N steps" line of the session's run log."""
    logs = glob.glob(os.path.join(root, ".workflow", "*", "WFS-*", ".process", "run.log"))
    steps = [int(m) for p in logs for m in re.findall(r"Z (\d+) steps$", open(p).read(), re.M)]
    if not steps:
        sys.exit(f"no 'N steps' line in {logs}")
    return steps[-1]


def children_of(root, front_end):
    """How many test runs and agent calls wfx made."""
    sess = glob.glob(os.path.join(root, ".workflow", "*", "WFS-*"))[0]
    if front_end == "cycle":
        tests = len(glob.glob(os.path.join(sess, ".process", "iteration-*-results.json")))
        agents = len(json.load(open(os.path.join(sess, ".process", "fix-history.json")))["entries"])
    else:
        tests = len(glob.glob(os.path.join(sess, ".process", "step-*", "*", "test-results.json")))
        agents = len(glob.glob(os.path.join(sess, ".process", "step-*", "attempt-*", "attempt.json")))
    return tests, agents


def children_cpu():
    """User + system CPU seconds of all waited-for children so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


CPU = {}  # binary -> CPU seconds of each run (wfx and everything it started)


def actions_once(front_end, iterations, counted=True):
    """(wall s, steps, test runs, agent calls); with counted=False (an older
    release whose run log has no step count) only the wall time. The run's
    CPU time (wfx and its children) goes to CPU[binary]."""
    root = actions_project(front_end, iterations)
    cmd, want = actions_command(front_end)
    cpu0 = children_cpu()
    start = time.perf_counter()
    r = subprocess.run(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    CPU.setdefault(WFX[0], []).append(children_cpu() - cpu0)
    if r.returncode != want:
        sys.exit(f"{front_end}: expected exit {want}, got {r.returncode}: {r.stderr.decode()}")
    FINISHED.append(root)
    if not counted:
        return wall, None, None, None
    steps = steps_of(root)
    tests, agents = children_of(root, front_end)
    return wall, steps, tests, agents


# Projects of the timed runs, removed after the last one: removing a
# project (~190 files) right before the next run made that run's new files
# cost more on an ext4 without a journal, whose allocator skips inodes
# freed in the last minute or so (docs/PERFORMANCE.md).
FINISHED = []


def remove_finished():
    while FINISHED:
        shutil.rmtree(FINISHED.pop(), ignore_errors=True)


def bare_ms(cmd, runs, stdin=None, cpu=None):
    """Median wall ms of `cmd`; its median CPU ms is appended to `cpu`."""
    times, cpus = [], []
    for _ in range(max(runs, 5) * 4):
        c = children_cpu()
        t = time.perf_counter()
        subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
        cpus.append((children_cpu() - c) * 1000)
    if cpu is not None:
        cpu.append(statistics.median(cpus))
    return statistics.median(times)


def count_fsyncs(front_end, iterations):
    """One run under strace -f: fsync/fdatasync calls of wfx (and its
    threads) and of the git processes it starts."""
    if not shutil.which("strace"):
        return None
    root = actions_project(front_end, iterations)
    cmd, _ = actions_command(front_end)
    trace = root + ".strace"
    subprocess.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync,execve"] + cmd,
                   cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prog, pending, counts = {}, {}, {}
    for line in open(trace):
        m = re.match(r"(\d+) +(.*)$", line)
        if not m:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        e = re.match(r'execve\("([^"]+)"', rest)
        if e:
            pending[pid] = os.path.basename(e.group(1))
            if "<unfinished" in rest:
                continue
        if rest.startswith("execve(") or rest.startswith("<... execve resumed>"):
            if re.search(r"= 0$", rest.strip()) and pid in pending:
                prog[pid] = pending.pop(pid)
            continue
        if re.match(r"(fsync|fdatasync)\(", rest) or re.match(r"<\.\.\. (fsync|fdatasync) resumed>", rest):
            if "<unfinished" in rest:
                continue  # counted at its resumption
            who = prog.get(pid, "wfx")  # no exec seen: one of wfx's threads
            counts[who] = counts.get(who, 0) + 1
    steps = steps_of(root)
    shutil.rmtree(root, ignore_errors=True)
    os.unlink(trace)
    wfx_name = os.path.basename(WFX[0])
    own = counts.pop("wfx", 0) + counts.pop(wfx_name, 0)
    git = counts.pop("git", 0)
    return {"steps": steps, "wfx": own, "git": git, "other": sum(counts.values())}


def actions(args):
    bins = [args.wfx] + ([args.base] if args.base else [])
    runs = {b: [] for b in bins}
    for _ in range(args.runs):  # alternated with --base, run by run
        for b in bins:
            WFX[0] = b
            runs[b].append(actions_once(args.front_end, args.iterations, counted=b == args.wfx))
    remove_finished()
    WFX[0] = args.wfx
    rows = runs[args.wfx]
    # The previous release makes the same steps and calls on this loop (its
    # run log may not count them): its walls are divided by the same counts.
    runs[args.base or args.wfx] = [(w, rows[0][1], rows[0][2], rows[0][3])
                                   for w, *_ in runs[args.base or args.wfx]]
    cpu_bare = []
    test_ms = bare_ms(["sh", "-c", TRIVIAL_TEST], args.runs, cpu=cpu_bare)
    agent_ms = bare_ms(TRIVIAL_AGENT, args.runs, stdin=b"x" * 4096, cpu=cpu_bare)
    test_cpu, agent_cpu = cpu_bare

    def own_cpu(binary):
        """Median CPU ms per action of wfx itself (git included), the bare
        commands' CPU taken off: less sensitive to load than wall time."""
        bare = tests * test_cpu + agents * agent_cpu
        return round(statistics.median([(c * 1000 - bare) / steps for c in CPU[binary]]), 2)

    def own(rows):
        per, ratio = [], []
        for wall, steps, tests, agents in rows:
            bare = (tests * test_ms + agents * agent_ms) / 1000.0
            per.append((wall - bare) / steps * 1000)
            ratio.append(wall / bare)
        return per, ratio

    _, steps, tests, agents = rows[0]
    per, ratio = own(rows)
    base_per = own(runs[args.base])[0] if args.base else None
    fs = count_fsyncs(args.front_end, args.iterations)
    out = {
        "front_end": args.front_end, "runs": args.runs, "attempts": args.iterations,
        "steps": steps, "test_runs": tests, "agent_calls": agents,
        "wall_ms": round(statistics.median([r[0] for r in rows]) * 1000, 1),
        "bare_ms": round(tests * test_ms + agents * agent_ms, 1),
        "bare_test_ms": round(test_ms, 2), "bare_agent_ms": round(agent_ms, 2),
        "own_per_action_ms": round(statistics.median(per), 2),
        "min_ms": round(min(per), 2), "max_ms": round(max(per), 2),
        "ratio": round(statistics.median(ratio), 2),
        "own_cpu_per_action_ms": own_cpu(args.wfx),
        "fsyncs_per_action": round(fs["wfx"] / fs["steps"], 2) if fs else None,
        "git_fsyncs_per_action": round(fs["git"] / fs["steps"], 2) if fs else None,
        "other_fsyncs": fs["other"] if fs else None,
        "tmpdir": tempfile.gettempdir(), "wfx": args.wfx,
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }
    if base_per:
        out.update({"base": args.base, "base_own_per_action_ms": round(statistics.median(base_per), 2),
                    "base_steps": runs[args.base][0][1],
                    "vs_base": round(statistics.median(per) / statistics.median(base_per), 2),
                    "base_own_cpu_per_action_ms": own_cpu(args.base),
                    "cpu_vs_base": round(own_cpu(args.wfx) / own_cpu(args.base), 2)})
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.front_end}: {args.runs} runs × {args.iterations} attempts: {steps} actions, {tests} test runs, "
          f"{agents} agent calls, {args.wfx}")
    print(f"  wall time            median {out['wall_ms']:8.1f} ms; the same commands bare {out['bare_ms']:.1f} ms "
          f"(ratio {out['ratio']}×)")
    print(f"  own time per action  median {out['own_per_action_ms']:8.2f} ms  (min {out['min_ms']}, max {out['max_ms']}); "
          f"target ≤ 5 ms")
    print(f"  own CPU per action   median {out['own_cpu_per_action_ms']:8.2f} ms  (wfx and git, user + system)")
    if base_per:
        print(f"  {args.base}: own time per action median {out['base_own_per_action_ms']:.2f} ms "
              f"(alternated); ratio {out['vs_base']}; own CPU {out['base_own_cpu_per_action_ms']:.2f} ms, "
              f"ratio {out['cpu_vs_base']}")
    if fs:
        print(f"  fsyncs per action    wfx {out['fsyncs_per_action']}, git {out['git_fsyncs_per_action']} "
              f"(other processes: {fs['other']})")



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", choices=["overhead", "progressive", "actions"])
    ap.add_argument("--wfx", default=os.path.join(os.path.dirname(__file__), "..", "target", "debug", "wfx"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--test-ms", type=float, default=5.0)
    ap.add_argument("--base", help="actions: another wfx binary, alternated run by run with --wfx")
    ap.add_argument("--front-end", choices=["cycle", "run"], default="cycle", help="actions: which front end")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of text (for bench_all.sh)")
    args = ap.parse_args()
    args.wfx = os.path.abspath(args.wfx)
    args.base = args.base and os.path.abspath(args.base)
    {"overhead": overhead, "progressive": progressive, "actions": actions}[args.which](args)


if __name__ == "__main__":
    main()
