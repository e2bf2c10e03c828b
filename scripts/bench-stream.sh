#!/bin/sh
# Streaming benchmark of the process layer (docs/runner.md): 1 GiB of
# synthetic test output through process::run into a log, 5 runs, medians,
# against `cat > /dev/null` of the same stream. Debug profile, like every
# other build on the shared machines; set WFX_BENCH_BYTES / WFX_BENCH_RUNS
# to change the size or the number of runs.
set -eu
cd "$(dirname "$0")/.."
exec cargo bench --bench stream --profile dev "$@"
