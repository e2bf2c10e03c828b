#!/usr/bin/env python3
"""Print the results table of docs/fuzzing.md from the logs of the last
`run-all.sh` run of each target (fuzz/logs/<target>.log) and the corpora
(fuzz/corpus/<target>/). Usage: fuzz/summarize.py [TARGET...]"""

import re
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
STATS = re.compile(
    r"^#(\d+): cov: (\d+) ft: (\d+) corp: (\d+) exec/s: (\d+) "
    r"oom/timeout/crash: (\d+)/(\d+)/(\d+) time: (\d+)s"
)


def row(target):
    log = FUZZ / "logs" / f"{target}.log"
    last, seconds = None, None
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            m = STATS.match(line)
            if m:
                last = [int(g) for g in m.groups()]
            m = re.match(r"INFO: fuzzed for (\d+) seconds", line)
            if m:
                seconds = int(m.group(1))
    files = list((FUZZ / "corpus" / target).glob("*"))
    size = sum(f.stat().st_size for f in files)
    if last is None:
        return f"| `{target}` | not run | | | | | {len(files)} ({size / 1e6:.1f} MB) |"
    execs, cov, ft, _corp, _eps, oom, timeout, crash, t = last
    seconds = seconds or t
    return (
        f"| `{target}` | {seconds} s | {execs:,} | {execs // max(seconds, 1):,} | {cov:,} / {ft:,} "
        f"| {crash} / {timeout} / {oom} | {len(files):,} ({size / 1e6:.1f} MB) |"
    )


def main():
    targets = sys.argv[1:] or sorted(p.stem for p in (FUZZ / "fuzz_targets").glob("*.rs"))
    print("| target | fuzzed for | executions | per second | coverage (edges / features) "
          "| crashes / timeouts / OOMs | corpus kept |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for t in targets:
        print(row(t))


if __name__ == "__main__":
    main()
