#!/usr/bin/env python3
"""Parsing a large test output (issue #10): `wfx test` on a project whose
test command prints MB megabytes of `cargo test` (libtest) text: 5,000
tests, 20 of them failing, each failure with an equal share of captured log
lines (a chatty suite run with logging on, the usual way outputs get big).
wfx streams it into its log, parses it, writes test-results.json and prints
the failures. Baseline: the same command with its output sent to `cat >
/dev/null` (what reading the output costs any tool). Medians of RUNS runs;
also wfx's peak memory (ru_maxrss of the child). No assertions.

    cargo build
    scripts/bench_parse.py [--wfx target/debug/wfx] [--mb 200] [--runs 5] [--json]
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

TESTS, FAILING = 5000, 20


def write_output(path, mb):
    failing = set(range(0, TESTS, TESTS // FAILING))
    with open(path, "w") as out:
        out.write("     Running unittests src/lib.rs (target/debug/deps/app-0123456789abcdef)\n\n")
        out.write(f"running {TESTS} tests\n")
        for i in range(TESTS):
            out.write(f"test m{i % 50}::t{i} ... {'FAILED' if i in failing else 'ok'}\n")
        out.write("\nfailures:\n\n")
        share = mb * 1_000_000 // FAILING
        for i in sorted(failing):
            line = (f"2026-11-22T01:02:03Z DEBUG app::worker{i}: processing an item with a payload "
                    f"and enough words to make a realistic log line\n")
            out.write(f"---- m{i % 50}::t{i} stdout ----\n")
            out.write(line * (share // len(line)))
            out.write(f"thread 'm{i % 50}::t{i}' panicked at src/lib.rs:{i + 1}:5:\nassertion failed: ok\n\n")
        out.write("\nfailures:\n" + "".join(f"    m{i % 50}::t{i}\n" for i in sorted(failing)))
        out.write(f"\ntest result: FAILED. {TESTS - FAILING} passed; {FAILING} failed; 0 ignored; "
                  "0 measured; 0 filtered out; finished in 3.10s\n")


def timed(cmd, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    # ru_maxrss of children is the largest so far; a fresh process per run keeps it honest enough.
    return elapsed, r, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wfx", default="target/debug/wfx")
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    wfx = os.path.abspath(a.wfx)
    root = tempfile.mkdtemp(prefix="wfx-bench-parse-")
    try:
        write_output(os.path.join(root, "out.txt"), a.mb)
        size = os.path.getsize(os.path.join(root, "out.txt"))
        os.makedirs(os.path.join(root, ".workflow"))
        with open(os.path.join(root, ".workflow", "wfx.json"), "w") as f:
            json.dump({"test": {"command": "cat out.txt; exit 101"}}, f)
        walls, bases, rss = [], [], 0
        for _ in range(a.runs):
            wall, r, peak = timed([wfx, "--no-progress", "test"], root)
            if r.returncode != 1:
                sys.exit(f"expected exit 1 (tests failed), got {r.returncode}: {r.stderr.decode()[-500:]}")
            walls.append(wall)
            rss = max(rss, peak)
            base, _, _ = timed(["sh", "-c", "cat out.txt | cat > /dev/null; exit 101"], root)
            bases.append(base)
        with open(os.path.join(root, ".workflow", ".cache", "test-results.json")) as f:
            results = json.load(f)
        if (results["total"], results["failed"]) != (TESTS, FAILING):
            sys.exit(f"parsed {results['total']} tests, {results['failed']} failed; expected {TESTS}, {FAILING}")
        wall, base = statistics.median(walls), statistics.median(bases)
        row = {"mb": round(size / 1e6), "tests": TESTS, "failing": FAILING, "runs": a.runs,
               "median_s": round(wall, 2), "min_s": round(min(walls), 2), "max_s": round(max(walls), 2),
               "mb_per_s": round(size / 1e6 / wall), "baseline_s": round(base, 3),
               "peak_rss_mib": round(rss / 1024, 1)}
        if a.json:
            print(json.dumps(row))
        else:
            print(f"wfx test on {row['mb']} MB of cargo test output ({TESTS} tests, {FAILING} failing), {a.wfx}")
            print(f"  wfx test   median {wall:6.2f} s ({row['mb_per_s']} MB/s; range {row['min_s']}–{row['max_s']} s)")
            print(f"  cat        median {base:6.3f} s   ratio {wall / base:.0f}×")
            print(f"  peak memory {row['peak_rss_mib']} MiB")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
