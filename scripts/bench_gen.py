#!/usr/bin/env python3
"""Benchmark `wfx test-fix-gen` phases 1-4 (no agent) on a large real source tree.

Builds a tree of at least --files files from real sources (default: the crate
sources in the cargo registry cache, filled by any `cargo build`; copies are
hard links where possible, repeated under a/, b/, ... until the count is
reached), optionally `git init` + `git add` so the git-index listing is used,
then runs

    wfx -q test-fix-gen "<description>" --plan-only

--runs times (removing .workflow/ between runs) and prints files scanned,
wall time and files per second as medians (min and max for spread).
Target (issue #6): under 2 s for 20,000 files.

    cargo build                       # debug is fine; the machine is slow
    scripts/bench_gen.py [--wfx target/debug/wfx] [--files 20000] [--runs 7] [--git]
    scripts/bench_gen.py --source /path/to/unpacked/python/package
"""
import argparse, glob, json, os, shutil, statistics, subprocess, tempfile, time


def default_source():
    home = os.path.expanduser("~")
    cands = sorted(glob.glob(os.path.join(os.environ.get("CARGO_HOME", os.path.join(home, ".cargo")), "registry", "src", "*")))
    return cands[0] if cands else None


def count_files(path):
    return sum(len(files) for _, _, files in os.walk(path))


def copy_tree(src, dst):
    try:
        shutil.copytree(src, dst, copy_function=os.link, symlinks=True)
    except OSError:
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, symlinks=True)


def build_tree(source, want, root):
    """Copy the source's top-level entries (crates, packages) one by one,
    under a/, b/, ... for repeated passes, until `want` files exist."""
    entries = sorted(os.listdir(source))
    if not entries:
        raise SystemExit(f"{source}: empty")
    total, passes = 0, 0
    while total < want:
        dest = os.path.join(root, chr(ord("a") + passes))
        os.makedirs(dest)
        added = 0
        for name in entries:
            if total >= want:
                break
            src = os.path.join(source, name)
            if os.path.isdir(src):
                copy_tree(src, os.path.join(dest, name))
                n = count_files(os.path.join(dest, name))
            else:
                shutil.copy2(src, dest)
                n = 1
            total += n
            added += n
        passes += 1
        if added == 0:
            raise SystemExit(f"{source}: no files")
    return total, passes


def git(root, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    subprocess.run(["git", *args], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wfx", default=os.path.join(os.path.dirname(__file__), "..", "target", "debug", "wfx"))
    ap.add_argument("--source", default=default_source(), help="directory of real sources to copy")
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--git", action="store_true", help="git init + add, so files come from the git index")
    ap.add_argument("--description", default="Test the parser and error handling")
    ap.add_argument("--keep", action="store_true", help="keep the tree and print its path")
    ap.add_argument("--json", action="store_true",
                    help="one JSON object, with the time of listing the tree (find / git ls-files) as baseline")
    a = ap.parse_args()
    if not a.source or not os.path.isdir(a.source):
        raise SystemExit("no source tree: pass --source DIR (e.g. an unpacked PyPI sdist) or build something with cargo first")
    wfx = os.path.abspath(a.wfx)
    root = tempfile.mkdtemp(prefix="wfx-bench-gen-")
    try:
        total, copies = build_tree(a.source, a.files, root)
        if a.git:
            git(root, "init", "-q")
            git(root, "add", "-A")
        times, scanned, sid = [], None, None
        for _ in range(a.runs):
            shutil.rmtree(os.path.join(root, ".workflow"), ignore_errors=True)
            t = time.perf_counter()
            out = subprocess.run([wfx, "-q", "--json", "test-fix-gen", a.description, "--plan-only"],
                                 cwd=root, check=True, capture_output=True, text=True)
            times.append(time.perf_counter() - t)
            sid = json.loads(out.stdout)["session_id"]
            pkg = os.path.join(root, ".workflow", "active", sid, ".process", "context-package.json")
            with open(pkg) as f:
                scanned = json.load(f)["project"]["files_scanned"]
        med = statistics.median(times)
        if a.json:
            # Baseline: only listing the same tree the same way, no reading.
            listing = ["git", "ls-files"] if a.git else ["find", ".", "-type", "f"]
            base = []
            for _ in range(a.runs):
                t = time.perf_counter()
                subprocess.run(listing, cwd=root, check=True, stdout=subprocess.DEVNULL)
                base.append(time.perf_counter() - t)
            print(json.dumps({
                "files": scanned, "runs": a.runs, "listing": "git index" if a.git else "walk",
                "median_s": round(med, 3), "min_s": round(min(times), 3), "max_s": round(max(times), 3),
                "files_per_s": round(scanned / med), "baseline": " ".join(listing),
                "baseline_s": round(statistics.median(base), 4),
            }))
            return
        print(f"source: {a.source} ({copies} pass(es), {total} files on disk), listing: {'git index' if a.git else 'walk'}, "
              f"binary: {os.path.relpath(wfx)}, {a.runs} runs, {os.cpu_count()} cores")
        print()
        print("| files scanned | median wall s | min s | max s | files/s (median) |")
        print("|---:|---:|---:|---:|---:|")
        print(f"| {scanned} | {med:.3f} | {min(times):.3f} | {max(times):.3f} | {scanned / med:,.0f} |")
        if a.keep:
            print(f"\ntree kept at {root} (session {sid})")
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
