#!/usr/bin/env python3
"""The cost of the sealed verdict (issue #27): the full run that accepts a
fix runs on the commit in a clean checkout (`cycle.sealed`, the default)
instead of in place (`cycle.sealed: false`). The same mechanism is
`wfx test --sealed` (checkout of HEAD outside the project, the dependency
directories reached, the run, the checkout removed) against `wfx test`;
the two are alternated on one project, medians of --runs, wall time.

Projects:
  small   fixtures/projects/py-pkg (10 pytest tests)
  larger  a generated pytest suite of 5,000 tests in 50 files (20 failing)
  big     more-itertools 11.2.1 (pytest), from bench_retest.py's cache, which
          downloads the sdist from PyPI once (--big)
  node    a generated `node --test` suite of 2,000 tests in 40 files (10
          failing)
  rust    a generated crate (400 tests: 300 unit, 100 integration, 3
          failing) depending on regex from crates.io; `cargo test`

For the crate the sealed run builds the crate's own code again (its path
differs), while its dependencies are reused from the project's `target/`
(the sealed run points CARGO_TARGET_DIR there unless it is set, so it is
removed here). A third variant alternated with the two measures that
rebuild alone: `wfx test` in place after touching the crate's sources. The
dependencies' cold build is timed once, for scale.

    scripts/bench_sealed.py [--wfx target/release/wfx] [--runs 5] [--big]
                            [--only small,larger,big,node,rust] [--json]
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


def node(base):
    """2,000 `node --test` tests in 40 files, 10 failing (no dependencies)."""
    root = os.path.join(base, "node")
    os.makedirs(os.path.join(root, "src"))
    os.makedirs(os.path.join(root, "test"))
    with open(os.path.join(root, "package.json"), "w") as f:
        json.dump({"name": "sealed-bench", "version": "0.1.0", "private": True,
                   "type": "commonjs", "scripts": {"test": "node --test"}}, f, indent=2)
    with open(os.path.join(root, "src", "calc.js"), "w") as f:
        f.write("exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n")
    for i in range(40):
        lines = ["const test = require('node:test');", "const assert = require('node:assert');",
                 "const { add, mul } = require('../src/calc');", ""]
        for j in range(50):
            want = i + j + (1 if (i % 4 == 0 and j == 7) else 0)
            lines.append(f"test('add {i} {j}', () => {{ assert.strictEqual(add({i}, {j}), {want}); "
                         f"assert.strictEqual(mul({i}, 1), {i}); }});")
        with open(os.path.join(root, "test", f"calc{i:02}.test.js"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return root


RUST_DEP = 'regex = "1"'


def rust(base):
    """A crate with 400 tests (3 failing) and one real dependency, built once."""
    root = os.path.join(base, "rust")
    os.makedirs(os.path.join(root, "src"))
    os.makedirs(os.path.join(root, "tests"))
    with open(os.path.join(root, "Cargo.toml"), "w") as f:
        f.write(f'[package]\nname = "sealed-bench"\nversion = "0.1.0"\nedition = "2021"\n\n'
                f'[dependencies]\n{RUST_DEP}\n')
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("/target\n")
    src = ["use regex::Regex;", "",
           "/// The numbers in `s`, summed.",
           "pub fn sum_numbers(s: &str) -> u64 {",
           "    let re = Regex::new(r\"\\d+\").unwrap();",
           "    re.find_iter(s).map(|m| m.as_str().parse::<u64>().unwrap()).sum()",
           "}", "", "pub fn add(a: u64, b: u64) -> u64 {", "    a + b", "}", "",
           "#[cfg(test)]", "mod tests {", "    use super::*;"]
    for i in range(300):
        want = 2 * i + (1 if i in (17, 150) else 0)
        src.append(f"    #[test]\n    fn unit_{i:03}() {{ assert_eq!(add({i}, {i}), {want}); }}")
    src.append("}")
    with open(os.path.join(root, "src", "lib.rs"), "w") as f:
        f.write("\n".join(src) + "\n")
    tests = ["use sealed_bench::sum_numbers;", ""]
    for i in range(100):
        want = i + 1 + (1 if i == 42 else 0)
        tests.append(f"#[test]\nfn numbers_{i:03}() {{ assert_eq!(sum_numbers(\"a {i} b 1\"), {want}); }}")
    with open(os.path.join(root, "tests", "numbers.rs"), "w") as f:
        f.write("\n".join(tests) + "\n")
    return root


# name -> (maker, test command); the command's interpreter is this Python's.
PROJECTS = {
    "small": (small, f"{sys.executable} -m pytest -p no:cacheprovider"),
    "larger": (larger, f"{sys.executable} -m pytest -p no:cacheprovider"),
    "big": (big, f"{sys.executable} -m pytest -p no:cacheprovider"),
    "node": (node, "node --test"),
    "rust": (rust, "cargo test"),
}


def bench_env():
    """The caller's environment without CARGO_TARGET_DIR: the sealed run
    chooses the crate's own target/ only when the user has not chosen."""
    env = dict(os.environ, NO_COLOR="1")
    env.pop("CARGO_TARGET_DIR", None)
    return env


def cold_build(root):
    """The crate's first `cargo test --no-run` (dependencies included), ms."""
    t = time.perf_counter()
    subprocess.run(["cargo", "test", "--no-run", "--quiet"], cwd=root, check=True, env=bench_env(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def touch_own_code(root):
    """Make cargo rebuild the crate's own code (not its dependencies) in place."""
    now = time.time()
    for d in ("src", "tests"):
        for name in os.listdir(os.path.join(root, d)):
            os.utime(os.path.join(root, d, name), (now, now))


def once(wfx, root, sealed):
    t = time.perf_counter()
    r = subprocess.run([wfx, "-q", "test"] + (["--sealed"] if sealed else []), cwd=root,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=bench_env())
    if r.returncode not in (0, 1):
        sys.exit(f"wfx test{' --sealed' if sealed else ''}: exit {r.returncode}: {r.stderr.decode()[-2000:]}")
    return (time.perf_counter() - t) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wfx", default="target/release/wfx")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--only", help="comma-separated projects (default: small,larger[,big])")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else ["small", "larger"] + (["big"] if a.big else [])
    unknown = [n for n in names if n not in PROJECTS]
    if unknown:
        sys.exit(f"--only: unknown project {', '.join(unknown)} (known: {', '.join(PROJECTS)})")
    wfx = os.path.abspath(a.wfx)
    base = tempfile.mkdtemp(prefix="wfx-bench-sealed-")
    out = {"runs": a.runs, "loadavg": open("/proc/loadavg").read().split()[:3], "projects": {}}
    try:
        for name in names:
            make, command = PROJECTS[name]
            root = make(base)
            os.makedirs(os.path.join(root, ".workflow"), exist_ok=True)
            with open(os.path.join(root, ".workflow", "wfx.json"), "w") as f:
                json.dump({"test": {"command": command}}, f)
            git_init(root)
            cargo = name == "rust"
            cold = cold_build(root) if cargo else None
            once(wfx, root, False)  # warm up
            times = {False: [], True: [], "rebuilt": []}
            for _ in range(a.runs):
                for sealed in (False, True):
                    times[sealed].append(once(wfx, root, sealed))
                if cargo:
                    touch_own_code(root)
                    times["rebuilt"].append(once(wfx, root, False))
            in_place, sealed = statistics.median(times[False]), statistics.median(times[True])
            p = {"in_place_ms": round(in_place, 1), "sealed_ms": round(sealed, 1),
                 "ratio": round(sealed / in_place, 2), "extra_ms": round(sealed - in_place, 1)}
            if cargo:
                rebuilt = statistics.median(times["rebuilt"])
                p.update({"rebuilt_ms": round(rebuilt, 1), "own_rebuild_ms": round(rebuilt - in_place, 1),
                          "cold_build_ms": round(cold, 1)})
            out["projects"][name] = p
        out["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
        if a.json:
            print(json.dumps(out))
            return
        for name, p in out["projects"].items():
            print(f"{name}: in place {p['in_place_ms']} ms, sealed {p['sealed_ms']} ms: "
                  f"{p['ratio']}× (+{p['extra_ms']} ms), medians of {a.runs} alternated")
            if "rebuilt_ms" in p:
                print(f"  in place after touching the crate's sources {p['rebuilt_ms']} ms "
                      f"(its own rebuild +{p['own_rebuild_ms']} ms); cold build with "
                      f"dependencies {p['cold_build_ms']} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
