#!/usr/bin/env python3
"""The seed-000 debug loop, `wfx run` against prodigy (issue #30).

A fresh git project whose workflow.yml (the same file for both tools) runs
a test that fails until a fake `claude` has been called twice, with
`on_failure: claude:` and at most 3 attempts: 3 test runs and 2 agent
calls. The fake claude (on PATH) reads its prompt, bumps a counter outside
the project and prints claude's JSON result line. wfx and prodigy are
alternated run by run; medians of --runs. --base OTHER_WFX adds a second
wfx binary to the alternation (wfx, base, prodigy, run by run): a speed-up
measured against that commit's binary in one run.

--fsync-load adds a background writer that writes 64 KiB and fsyncs it, in
a loop, in a file beside the projects (the same disk), while both tools
run: the loop on a busy disk against the quiet medians.

Every run's project is made first, then a pause (--settle, 75 s) before
the first timed run: see projects_first.

    scripts/bench_prodigy.py --prodigy PATH [--wfx target/release/wfx] [--base OTHER_WFX] [--runs 7] [--fsync-load] [--settle 75] [--json]

Without --prodigy (or when the binary is missing) it prints a message and
exits 0: build prodigy from iepathos/prodigy 480b22a4 with
`cargo build --release` to compare.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time

WORKFLOW = """commands:
  - test:
      command: "n=$(cat {count}); echo ran $n; [ $n -ge 2 ]"
      on_failure:
        claude: "/debug-test-failure --output ${{test.output}}"
        max_attempts: 3
"""
CLAUDE = """#!/bin/sh
# fake claude: one "fix" per call (a counter outside the project), then the result line
cat > /dev/null
n=$(cat "$SEED_COUNT" 2>/dev/null || echo 0)
echo $((n + 1)) > "$SEED_COUNT"
printf '%s\\n' '{"type":"result","subtype":"success","is_error":false,"result":"fixed","total_cost_usd":0}'
"""


def project(base, i):
    root = tempfile.mkdtemp(prefix=f"p{i}-", dir=base)  # runs' projects stay until the end
    count = root + ".count"
    os.makedirs(os.path.join(root, ".workflow"))
    with open(count, "w") as f:
        f.write("0\n")
    with open(os.path.join(root, "workflow.yml"), "w") as f:
        f.write(WORKFLOW.format(count=count))
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("seed\n")
    with open(os.path.join(root, ".workflow", "wfx.json"), "w") as f:
        json.dump({"agents": {"definitions": {"claude": {"preset": "claude"}}}}, f)
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)
    return root, count


def once(cmd, base, i, bindir, made=None):
    root, count = made or project(base, i)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"], SEED_COUNT=count, NO_COLOR="1")
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ms = (time.perf_counter() - t) * 1000
    calls = int(open(count).read())
    if r.returncode != 0 or calls != 2:
        sys.exit(f"{cmd[0]}: exit {r.returncode}, {calls} agent calls: {r.stderr.decode()[-2000:]}")
    # Removed with `base` after the last run: removing it here made the next
    # run's new files cost more on an ext4 without a journal (see
    # scripts/bench_cycle.py, FINISHED).
    return ms


class FsyncLoad:
    """Writes 64 KiB and fsyncs, in a loop, until stopped."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "fsync-load.bin")
        self.stop = threading.Event()
        self.syncs = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        block = os.urandom(64 * 1024)
        with open(self.path, "wb") as f:
            while not self.stop.is_set():
                f.write(block)
                if f.tell() > 64 * 1024 * 1024:
                    f.seek(0)
                f.flush()
                os.fsync(f.fileno())
                self.syncs += 1

    def __enter__(self):
        self.started = time.perf_counter()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.rate = self.syncs / (time.perf_counter() - self.started)
        os.unlink(self.path)


def new_file_us(base, n=200):
    """What a new file costs on the projects' disk now (µs per create, median
    of 4 batches): wfx makes ~46 files and directories per run; prodigy
    0.4.4 makes ~65 (a git worktree per run: 50 files, 15 directories,
    `strace`), about half of them under ~/.prodigy. On an ext4
    without a journal it grows tenfold and more for a minute or more after
    many deletions, and where the
    inode tables of long-deleted files have left the cache. Kept until the
    end (deleting them here would slow the next run)."""
    d = tempfile.mkdtemp(prefix="new-file-cost-", dir=base)
    batches = []
    for b in range(4):
        t = time.perf_counter()
        for i in range(n // 4):
            os.close(os.open(os.path.join(d, f"{b}-{i}"), os.O_CREAT | os.O_WRONLY, 0o644))
        batches.append((time.perf_counter() - t) / (n // 4) * 1e6)
    return round(statistics.median(batches), 1)


def sync_us(base, n=20):
    """What a durable write costs on the projects' disk now (µs, median):
    4 KiB written in place into a file that already has its blocks, then
    `fdatasync`, as wfx's journal does once per step. wfx syncs 11 times in
    this loop and prodigy not at all, so a slow disk moves wfx's figure and
    not prodigy's."""
    path = os.path.join(base, "sync-cost.bin")
    block = os.urandom(4096)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.pwrite(fd, block, 0)
        os.fsync(fd)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            os.pwrite(fd, block, 0)
            os.fdatasync(fd)
            times.append((time.perf_counter() - t) * 1e6)
    finally:
        os.close(fd)
    return round(statistics.median(times), 1)


def commands(wfx, prodigy, other=None):
    cmds = {"wfx": [wfx, "-q", "run", "workflow.yml"], "prodigy": [prodigy, "run", "workflow.yml", "-y"]}
    if other:
        cmds["base"] = [other, "-q", "run", "workflow.yml"]
    return cmds


def measure(wfx, prodigy, runs, base, bindir, other=None, made=None):
    cmds = commands(wfx, prodigy, other)
    # A run right after prodigy's (which creates and deletes many files)
    # pays more for its new files: a fixed order gave the first wfx binary
    # ~10 % more than the same binary in the second place (measured
    # 2026-11-28), and an order turning by one each round still put --wfx
    # right after prodigy in two rounds of three and --base in one (--wfx
    # measured 1.11× its base there, 0.93× alternated without prodigy,
    # 2026-11-29). So the two wfx binaries take turns right after prodigy.
    if other:
        rounds = [("prodigy", "wfx", "base"), ("prodigy", "base", "wfx")]
    else:
        rounds = [("wfx", "prodigy"), ("prodigy", "wfx")]
    times = {name: [] for name in rounds[0]}
    i = 0
    for r in range(runs):
        for name in rounds[r % 2]:
            i += 1
            times[name].append(once(cmds[name], base, i, bindir, made.pop() if made else None))
    return {k: statistics.median(v) for k, v in times.items()}, times


def projects_first(base, a, other):
    """Every timed run's project, made before the first timed run, then a
    pause of --settle seconds. Making a project (`git init`, `add`,
    `commit`) frees inodes (git's lock and temp files), and on an ext4
    without a journal each new inode is found by skipping every inode freed
    in the last minute or so (the kernel's `recently_deleted`): made
    between runs, the projects made every later run in a set slower,
    by the count of new files it makes there (wfx ~46): wfx's own
    CPU time grew from 12.9 to 21.6 ms over 12 runs (measured 2026-11-29),
    and stayed 9.8–12.9 ms with the projects made first."""
    tools = 3 if other else 2
    sets = 2 if a.fsync_load else 1
    made = [project(base, 1000 + i) for i in range(a.runs * tools * sets + tools)]
    time.sleep(a.settle)
    return made


def warm_up(cmds, base, bindir, made):
    """One untimed run of each tool after the pause: the first run after a
    minute of idling took 3× the next ones (104.9 against 37.5 ms wall,
    measured 2026-11-29), whatever was in the page cache before."""
    for cmd in cmds.values():
        once(cmd, base, 0, bindir, made.pop())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wfx", default="target/release/wfx")
    ap.add_argument("--prodigy")
    ap.add_argument("--base", help="another wfx binary, alternated run by run with --wfx")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--fsync-load", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--settle", type=float, default=75,
                    help="seconds between making the projects and the first timed run (see projects_first)")
    a = ap.parse_args()
    if not a.prodigy or not os.path.exists(a.prodigy):
        msg = "prodigy not found (--prodigy): skipped; build iepathos/prodigy 480b22a4 with cargo build --release"
        print(json.dumps({"skipped": msg}) if a.json else msg)
        return
    version = subprocess.run([a.prodigy, "--version"], capture_output=True, text=True).stdout.strip()
    base = tempfile.mkdtemp(prefix="wfx-bench-prodigy-")
    try:
        bindir = os.path.join(base, "bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "claude"), "w") as f:
            f.write(CLAUDE)
        os.chmod(os.path.join(bindir, "claude"), 0o755)
        wfx = os.path.abspath(a.wfx)
        other = a.base and os.path.abspath(a.base)
        made = projects_first(base, a, other)
        warm_up(commands(wfx, a.prodigy, other), base, bindir, made)
        load_before = open("/proc/loadavg").read().split()[:3]
        new_file = new_file_us(base)
        sync = sync_us(base)
        quiet, quiet_all = measure(wfx, a.prodigy, a.runs, base, bindir, other, made)
        out = {"runs": a.runs, "prodigy": version, "loadavg": load_before, "new_file_us": new_file, "sync_us": sync, "settle_s": a.settle,
               "quiet_wfx_ms": round(quiet["wfx"], 1), "quiet_prodigy_ms": round(quiet["prodigy"], 1),
               "quiet_ratio": round(quiet["prodigy"] / quiet["wfx"], 1),
               "quiet_wfx_range_ms": [round(min(quiet_all["wfx"]), 1), round(max(quiet_all["wfx"]), 1)]}
        if other:
            out.update({"base": other, "quiet_base_ms": round(quiet["base"], 1),
                        "quiet_base_ratio": round(quiet["prodigy"] / quiet["base"], 1),
                        "quiet_wfx_vs_base": round(quiet["wfx"] / quiet["base"], 2)})
        if a.fsync_load:
            with FsyncLoad(base) as load:
                busy, busy_all = measure(wfx, a.prodigy, a.runs, base, bindir, other, made)
            out.update({"busy_wfx_ms": round(busy["wfx"], 1), "busy_prodigy_ms": round(busy["prodigy"], 1),
                        "busy_ratio": round(busy["prodigy"] / busy["wfx"], 1),
                        "busy_wfx_vs_quiet": round(busy["wfx"] / quiet["wfx"], 2),
                        "busy_wfx_range_ms": [round(min(busy_all["wfx"]), 1), round(max(busy_all["wfx"]), 1)],
                        "load_fsyncs_per_s": round(load.rate)})
            if other:
                out.update({"busy_base_ms": round(busy["base"], 1),
                            "busy_base_ratio": round(busy["prodigy"] / busy["base"], 1)})
        out["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
        if a.json:
            print(json.dumps(out))
            return
        print(f"seed-000 loop, medians of {a.runs} alternated runs ({version}; load {' '.join(load_before)}; "
              f"on this disk a new file: {new_file} µs, a 4 KiB fdatasync: {sync} µs; "
              f"projects made {a.settle:g} s before)")
        print(f"  quiet: wfx {out['quiet_wfx_ms']} ms, prodigy {out['quiet_prodigy_ms']} ms: {out['quiet_ratio']}×")
        if other:
            print(f"  quiet: base {other} {out['quiet_base_ms']} ms: {out['quiet_base_ratio']}×; "
                  f"wfx/base {out['quiet_wfx_vs_base']}")
        if a.fsync_load:
            print(f"  fsync load ({out['load_fsyncs_per_s']} fsyncs/s): wfx {out['busy_wfx_ms']} ms "
                  f"({out['busy_wfx_vs_quiet']}× quiet), prodigy {out['busy_prodigy_ms']} ms: {out['busy_ratio']}×")
            if other:
                print(f"  fsync load: base {out['busy_base_ms']} ms: {out['busy_base_ratio']}×")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
