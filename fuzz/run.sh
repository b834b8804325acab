#!/usr/bin/env bash
# Runs fuzz targets one at a time with the flags FUZZING.md describes.
#   fuzz/run.sh [SECONDS] [TARGET...]     (default: 600 seconds, every target)
# Needs cargo-fuzz (cargo install cargo-fuzz --locked). On a stable toolchain,
# RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass the -Z flags it needs.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=($(ls fuzz_targets | sed 's/\.rs$//'))
fi
mkdir -p logs
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    echo "== $target: ${seconds}s, log in fuzz/logs/$target.log"
    # -jobs=1 runs the fuzzer in a child whose output goes to fuzz-0.log.
    RUSTC_BOOTSTRAP=1 cargo fuzz run --debug-assertions "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -jobs=1 -workers=1 \
        -rss_limit_mb=2048 -timeout=10 -detect_leaks=0 -print_final_stats=1
    mv fuzz-0.log "logs/$target.log"
    grep -E '^stat::|^#[0-9]+.*(DONE|pulse)' "logs/$target.log" | tail -8
done
