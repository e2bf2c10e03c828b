#!/bin/sh
# Run fuzz targets one after another at the lowest CPU priority, each for
# SECS seconds (default 600), one libFuzzer process at a time, with stable
# Rust (RUSTC_BOOTSTRAP=1 lets stable rustc take cargo-fuzz's -Z flags).
# Usage: fuzz/run-all.sh [SECS] [TARGET...]   (no targets: all of them)
#
# Builds once, then runs the built binaries directly, so library code can be
# edited (and rebuilt) while a run is going. libFuzzer's fork mode with
# -fork=1 keeps exactly one fuzzing process but carries on after a crash,
# leaving each crashing input in fuzz/artifacts/<target>/. Logs go to
# fuzz/logs/<target>.log; new corpus entries to fuzz/corpus/<target>/
# (not in git: the seeds are written first by seed_corpora.py).
set -u
cd "$(dirname "$0")"
python3 seed_corpora.py || exit 1
secs=${1:-600}
[ $# -gt 0 ] && shift
export RUSTC_BOOTSTRAP=1
# libgit2 (linked in via wfx) defines two static tables with one name in
# llhttp; ASan reports that as an ODR violation at start-up.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_odr_violation=0}
nice -n 19 cargo fuzz build || exit 1
targets=${*:-$(cargo fuzz list)}
bin=target/$(rustc -vV | sed -n 's/^host: //p')/release
mkdir -p logs
for t in $targets; do
    mkdir -p "corpus/$t" "artifacts/$t"
    echo "$(date -u +%FT%TZ) start $t (${secs}s)"
    nice -n 19 "$bin/$t" "corpus/$t" -artifact_prefix="artifacts/$t/" \
        -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -print_funcs=0 > "logs/$t.log" 2>&1
    echo "$(date -u +%FT%TZ) end $t rc=$?"
done
