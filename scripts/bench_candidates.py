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

own       wfx's own time per candidate beyond the single-attempt path:
          sessions of `--candidates 3` and `--candidates 1` alternated,
          every agent `sleepy fix-all` sleeping --sleep seconds (0:
          instant); both complete in one fix step. Own time is a span of
          wfx's minus the agent's call and the test runs in it:
          - per candidate (N=3), its record in fix-history.json:
            duration_ms − agent_ms − tests_ms (its checkout made and
            removed, the fix task copied in, the link check, the diff, its
            tree kept);
          - the single attempt (N=1), the same span of the step in place:
            from the fix call's start (`started_at` of the attempt in
            fix-history.json) to the end of the last test run in place
            after it (`completed_at` in iteration-state.json; the sealed
            verification and the commit are left out, as the candidates'
            step has them too), minus the call's `duration_ms` and each
            of those runs' `completed_at − started_at`;
          - beyond = the candidates' median minus the single attempts'.
          Steadier under load: wfx's own CPU time (the wfx process's user +
          system time, all its threads, its children left out), N=3 against
          N=1 session by session: getrusage(RUSAGE_SELF) at wfx's exit, in
          microseconds, written by a small LD_PRELOAD shim this script
          compiles with `cc` (the shim removes itself from the environment
          wfx's children inherit); without a C compiler, /proc/<pid>/stat
          read before wfx is reaped (10 ms clock ticks). (N=3 − N=1) / 3 is
          the CPU each candidate ADDS, whole: the N=3 session does all the
          single attempt does (the chosen candidate is applied, re-tested in
          place, verified sealed and committed), and each candidate does
          again what the single attempt does once besides its own extras —
          wfx's side of its agent's call and of its test runs (starting the
          processes, the sweep of /proc after each, reading their output).
          So it is not the "beyond" figure: that is the candidate's own
          extras (its checkout made and removed, the fix task copied in, its
          tree kept) against the single attempt's own span, which the wall
          figure above measures span by span, and which a CPU profile splits
          (docs/PERFORMANCE.md).
          Also the sessions' wall times, and the lowest and highest load average
          (1 min) sampled before the first session and after each.
          --base: another wfx (the commit compared against), its sessions
          alternated with --wfx's; its figures under "base".

Each run is a fresh copy of the project in a fresh repository (under
--tmp, with wfx's checkouts, when given); medians over --runs; no
assertions. `fix.max_parallel` is --max-parallel (default 3).

    cargo build --release
    scripts/bench_candidates.py steps    [--wfx target/release/wfx] [--runs 5] [--sleep 2]
    scripts/bench_candidates.py parallel [--wfx target/release/wfx] [--runs 5] [--sleep 2] [--json]
    scripts/bench_candidates.py own      [--wfx target/release/wfx] [--base <other wfx>] [--runs 7] [--sleep 2] [--json]
"""
import argparse, contextlib, datetime, json, os, shutil, statistics, subprocess, sys, tempfile, time

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


# Each session's directory, removed after the last session: removing one
# (a project, its repository, its session) right before the next session
# made that session's new files cost more on an ext4 without a journal,
# whose allocator skips inodes freed in the last minute or so.
FINISHED = []


@contextlib.contextmanager
def run_dir(parent):
    d = tempfile.mkdtemp(dir=parent)
    FINISHED.append(d)
    yield d


def remove_finished():
    while FINISHED:
        shutil.rmtree(FINISHED.pop(), ignore_errors=True)


def cycle(wfx, actions, candidates, args):
    """One session to its end: (exit, fix attempts, wall s, events with
    arrival times). Its fix history goes to args.history, its iteration
    state to args.state, wfx's own CPU seconds (its children's left out) to
    args.cpu."""
    with run_dir(args.tmp) as tmp:
        root, env = project(tmp, actions, candidates, args.max_parallel)
        if args.tmp:
            # The candidates' and the sealed checkouts go there too.
            env["TMPDIR"] = args.tmp
        env["FIXER_STATE"] = os.path.join(tmp, "state")
        env["SLEEPY_S"] = str(args.sleep)
        subprocess.run([wfx, "test-fix-gen", "Bench the candidates", "--plan-only"], cwd=root,
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cpu_out = os.path.join(tmp, "selfcpu")
        if getattr(args, "shim", None):
            env["SELFCPU_OUT"] = cpu_out
            env["LD_PRELOAD"] = args.shim
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
        args.cpu = own_cpu_at_exit(p.pid)
        code = p.wait()
        args.main_cpu = None
        if getattr(args, "shim", None):
            args.cpu, args.main_cpu = shim_cpu(cpu_out)
        wall = time.monotonic() - start
        done = [e for _, e in events if e.get("event") == "done"]
        attempts = done[-1].get("fix_attempts") if done else None
        args.history = session_doc(root, "fix-history.json")
        args.state = session_doc(root, "iteration-state.json")
        return code, attempts, wall, events


def own_cpu_at_exit(pid):
    """User + system CPU seconds of process `pid` itself (all its threads,
    none of its children), read once it has exited but before it is
    reaped; None off Linux."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (AttributeError, OSError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SHIM_C = r"""
/* At exit: this process's own CPU (all its threads, no children:
   getrusage RUSAGE_SELF, microseconds) and its main thread's (the exit
   runs on it: RUSAGE_THREAD) appended to $SELFCPU_OUT. Removed from the
   environment at start, so the process's children do not load it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
static char out[4096];
static long us(struct rusage *r) {
    return (long)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1000000L
        + r->ru_utime.tv_usec + r->ru_stime.tv_usec;
}
__attribute__((constructor)) static void start(void) {
    const char *p = getenv("SELFCPU_OUT");
    if (p && strlen(p) < sizeof out) strcpy(out, p);
    unsetenv("SELFCPU_OUT");
    unsetenv("LD_PRELOAD");
}
__attribute__((destructor)) static void stop(void) {
    struct rusage all, main;
    FILE *f;
    if (!out[0] || getrusage(RUSAGE_SELF, &all) != 0 || getrusage(RUSAGE_THREAD, &main) != 0
        || !(f = fopen(out, "a"))) return;
    fprintf(f, "%ld %ld\n", us(&all), us(&main));
    fclose(f);
}
"""


def build_shim(tmp):
    """The self-CPU shim (see SHIM_C) compiled into `tmp`, or None without
    a working C compiler."""
    src, lib = os.path.join(tmp, "selfcpu.c"), os.path.join(tmp, "selfcpu.so")
    with open(src, "w", encoding="utf-8") as f:
        f.write(SHIM_C)
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib, src],
                                stderr=subprocess.DEVNULL).returncode != 0:
        return None
    return lib


def shim_cpu(path):
    """wfx's own CPU seconds as the shim wrote them at its exit: (all its
    threads, its main thread), or (None, None)."""
    try:
        with open(path, encoding="utf-8") as f:
            total, main = f.read().split()[-2:]
        return int(total) / 1e6, int(main) / 1e6
    except (OSError, ValueError):
        return None, None


def session_doc(root, name):
    """The session's .process/<name> (archived or active), or None."""
    for parent in ("archives", "active"):
        d = os.path.join(root, ".workflow", parent)
        for sid in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            path = os.path.join(d, sid, ".process", name)
            if sid.startswith("WFS-") and os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    return json.load(f)
    return None


def ts(text):
    """An artifact's timestamp (RFC 3339, nanoseconds allowed) as seconds."""
    head, _, frac = text.rstrip("Z").partition(".")
    t = datetime.datetime.fromisoformat(head).replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + (float("0." + frac) if frac else 0.0)


def single_attempt_own_ms(history, state):
    """wfx's own time in the span of a single attempt in place: from its
    call's start to the end of the last test run in place after it, the
    call and those runs taken off (see the module's docs)."""
    fix = history["entries"][0]
    start = ts(fix["started_at"])
    runs = [r for r in state["iterations"]
            if r["iteration"] == fix["iteration"] + 1 and not r.get("sealed")
            and r.get("completed_at")]
    if not runs:
        sys.exit("no test run in place after the single attempt")
    end = max(ts(r["completed_at"]) for r in runs)
    tests = sum(ts(r["completed_at"]) - ts(r["started_at"]) for r in runs)
    return round((end - start - tests) * 1000 - fix["duration_ms"])


def load1():
    return os.getloadavg()[0]


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
    """The own-time figures of --wfx (and of --base, alternated run by run
    with it when given)."""
    binaries = [args.wfx] + ([args.base] if args.base else [])
    shim_dir = tempfile.mkdtemp(prefix="bench-selfcpu-")
    args.shim = build_shim(shim_dir)
    rows = {b: {"own": [], "agent": [], "tests": [], "dur": [], "single": [],
                "wall": {1: [], 3: []}, "cpu": {1: [], 3: []},
                 "main": {1: [], 3: []}} for b in binaries}
    load = [load1()]
    for _ in range(args.runs):
        for b in binaries:
            r = rows[b]
            for n in (3, 1):
                code, attempts, wall, _ = cycle(b, ["fix-all"], n, args)
                if code != 0 or attempts != 1:
                    sys.exit(f"{b} --candidates {n}: exit {code}, {attempts} fix attempt(s)")
                r["wall"][n].append(wall)
                r["cpu"][n].append(args.cpu)
                r["main"][n].append(args.main_cpu)
                load.append(load1())
                if n == 1:
                    r["single"].append(single_attempt_own_ms(args.history, args.state))
                    continue
                cands = args.history["entries"][0]["candidates"]
                if len(cands) != 3 or any("agent_ms" not in c for c in cands):
                    sys.exit("no candidates[] with agent_ms in fix-history.json")
                for c in cands:
                    r["own"].append(c["duration_ms"] - c["agent_ms"] - c["tests_ms"])
                    r["agent"].append(c["agent_ms"])
                    r["tests"].append(c["tests_ms"])
                    r["dur"].append(c["duration_ms"])
    shutil.rmtree(shim_dir, ignore_errors=True)
    out = {"runs": args.runs, "sleep_s": args.sleep,
           "load_1min": [round(min(load), 2), round(max(load), 2)],
           "cpu_source": "getrusage" if args.shim else "/proc ticks"}
    out.update(own_figures(rows[args.wfx]))
    if args.base:
        out["base"] = own_figures(rows[args.base])
    print(json.dumps(out, indent=None if args.json else 2))


def own_figures(r):
    med = statistics.median
    out = {
        "own_ms": med(r["own"]),
        "own_range_ms": [min(r["own"]), max(r["own"])],
        "single_own_ms": med(r["single"]),
        "single_own_range_ms": [min(r["single"]), max(r["single"])],
        "beyond_ms": med(r["own"]) - med(r["single"]),
        "candidate_ms": med(r["dur"]),
        "agent_ms": med(r["agent"]),
        "tests_ms": med(r["tests"]),
        "wall_n3_s": round(med(r["wall"][3]), 3),
        "wall_n1_s": round(med(r["wall"][1]), 3),
    }
    cpu = r["cpu"]
    if all(c is not None for c in cpu[1] + cpu[3]):
        added = [(c3 - c1) / 3 * 1000 for c3, c1 in zip(cpu[3], cpu[1])]
        out.update({
            "cpu_n3_ms": round(med(cpu[3]) * 1000, 1),
            "cpu_n1_ms": round(med(cpu[1]) * 1000, 1),
            # Whole: a candidate's agent call and test runs included (see
            # the module's docs); not the "beyond" figure.
            "cpu_added_per_candidate_ms": round(med(added), 1),
            "cpu_added_range_ms": [round(min(added), 1), round(max(added), 1)],
        })
    main = r["main"]
    if all(c is not None for c in cpu[1] + cpu[3] + main[1] + main[3]):
        # Per pair: a candidate's thread (the other threads' CPU, N=3
        # against N=1, / 3) against what the single attempt's step costs
        # the main thread beyond the N=3 session's (its agent call, link
        # check and diff in place). The batch's own work on the main
        # thread (starting the candidates, their events and records, the
        # chosen one applied) is thereby counted whole against each
        # candidate, not a third: an upper bound.
        cand, beyond = [], []
        for c3, m3, c1, m1 in zip(cpu[3], main[3], cpu[1], main[1]):
            per = ((c3 - m3) - (c1 - m1)) / 3
            cand.append(per * 1000)
            beyond.append((per - (m1 - m3)) * 1000)
        out.update({
            "cpu_candidate_thread_ms": round(med(cand), 1),
            "cpu_single_ms": round(med([(m1 - m3) * 1000 for m3, m1 in zip(main[3], main[1])]), 1),
            "cpu_beyond_ms": round(med(beyond), 1),
            "cpu_beyond_range_ms": [round(min(beyond), 1), round(max(beyond), 1)],
        })
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["steps", "parallel", "own"])
    ap.add_argument("--wfx", default=os.path.join(REPO, "target", "release", "wfx"))
    ap.add_argument("--base", help="own: another wfx, alternated run by run with --wfx")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sleep", type=float, default=2.0)
    ap.add_argument("--max-parallel", type=int, default=3)
    ap.add_argument("--tmp", help="where the projects and wfx's checkouts are made (TMPDIR), e.g. "
                    "/dev/shm: on ext4 a new inode's cost depends on how many were deleted in the "
                    "last half minute, which these benchmarks do by the thousand")
    ap.add_argument("--json", action="store_true", help="one line of JSON (for scripts/bench_all.sh)")
    args = ap.parse_args()
    args.wfx = os.path.abspath(args.wfx)
    args.base = args.base and os.path.abspath(args.base)
    try:
        {"steps": steps, "parallel": parallel, "own": own}[args.what](args)
    finally:
        remove_finished()


if __name__ == "__main__":
    main()
