#!/usr/bin/env bash
# Whole-process benchmark of OMMX 3.0 against the 2.9.3 path (issue 43):
# on generated v1 instances (a 1,000,000-term LP, a 2,000-variable dense
# QUBO, an LP of 200,000 constraints x 5 terms; with BENCH_LARGE=1 also the
# 10,000,000-term LP and the 1 GB LP) and, given a Python with
# ommx==3.0.0b7, their ommx.v2 encodings (written by OMMX 3.0 itself),
# times:
#   inspect -f folded                 (2.9.3: the yardstick)
#   inspect --accounting 3.0 -f folded
#   inspect FILE.v2.pb -f folded      (native ommx.v2)
#   inspect                           (the default: tree, with the estimate)
#   report -o /dev/null, advise       (both accountings: the migration view)
# and prints each one's median wall time and peak RSS, with its ratio to
# `inspect -f folded` (and, for report and advise, to `inspect -f tree`).
# See bench/README.md. Usage: bench/ommx30.sh   (from any folder)
#
# Environment:
#   OMMX30_PYTHON  a python with ommx==3.0.0b7: also the ommx.v2 files
#   BENCH_RUNS     timed runs per command (default 5; the large files 3)
#   BENCH_LARGE    1: also the 10,000,000-term LP and the 1 GB LP
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${BENCH_RUNS:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_RUNS must be a positive integer" >&2; exit 2; }
/usr/bin/time -f '%e %M' true >/dev/null 2>&1 || { echo "bench: needs GNU time (/usr/bin/time -f)" >&2; exit 2; }
out_dir=target/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cargo build --release --quiet --bins
mkdir -p "$out_dir"
memprof=target/release/memprof

gen() { [[ -s $1 ]] || target/release/memprof-gen "${@:2}" -o "$1" >/dev/null; }
v2() {
    [[ -n ${OMMX30_PYTHON:-} && ! -s $2 ]] || return 0
    "$OMMX30_PYTHON" -c "import sys; from ommx import Instance
open(sys.argv[2], 'wb').write(Instance.from_v1_bytes(open(sys.argv[1], 'rb').read()).to_v2_bytes())" "$1" "$2"
}

inputs=(lp-20000x50-of-100000 qubo-2000 lp-200000x5-of-200000)
gen "$out_dir/lp-20000x50-of-100000.pb" lp --constraints 20000 --terms 50 --variables 100000
gen "$out_dir/qubo-2000.pb" qubo --variables 2000
gen "$out_dir/lp-200000x5-of-200000.pb" lp --constraints 200000 --terms 5 --variables 200000
if [[ ${BENCH_LARGE:-} == 1 ]]; then
    inputs+=(lp-200000x50-of-1000000 lp-1000000x50-of-5000000)
    gen "$out_dir/lp-200000x50-of-1000000.pb" lp --constraints 200000 --terms 50 --variables 1000000
    gen "$out_dir/lp-1000000x50-of-5000000.pb" lp --constraints 1000000 --terms 50 --variables 5000000
fi
for name in "${inputs[@]}"; do
    v2 "$out_dir/$name.pb" "$out_dir/$name.v2.pb"
done

# One run: wall seconds (bash's EPOCHREALTIME around GNU time) and peak RSS KiB.
measure() {
    local start end rss
    start=$EPOCHREALTIME
    /usr/bin/time -o "$tmp/time" -f '%e %M' "$@" >/dev/null 2>&1
    end=$EPOCHREALTIME
    read -r _ rss <"$tmp/time"
    awk -v a="$start" -v b="$end" -v rss="$rss" 'BEGIN { printf "%.4f %d\n", b - a, rss }'
}

# The median wall time and the largest peak RSS of `n` runs after a warm-up.
median_of() {
    local n=$1
    shift
    "$@" >/dev/null 2>&1 || { echo "bench: failed: $*" >&2; exit 1; }
    : >"$tmp/runs"
    for _ in $(seq "$n"); do measure "$@" >>"$tmp/runs"; done
    sort -n "$tmp/runs" | awk '{ w[NR] = $1; if ($2 > r) r = $2 } END { printf "%.3f %.1f\n", w[int((NR + 1) / 2)], r / 1024 }'
}

echo "| input | command | wall s | peak RSS MiB | × folded (2.9.3) | × tree |"
echo "|---|---|---|---|---|---|"
for name in "${inputs[@]}"; do
    file=$out_dir/$name.pb
    n=$runs
    [[ $(stat -c %s "$file") -gt 100000000 ]] && n=$((runs < 3 ? runs : 3))
    read -r folded folded_rss < <(median_of "$n" "$memprof" inspect "$file" -f folded --quiet)
    read -r tree tree_rss < <(median_of "$n" "$memprof" inspect "$file" --quiet)
    row() { # label wall rss [vs-tree]
        local x t="-"
        x=$(awk -v a="$2" -v b="$folded" 'BEGIN { printf "%.2f", a / b }')
        [[ -n ${4:-} ]] && t=$(awk -v a="$2" -v b="$tree" 'BEGIN { printf "%.2f", a / b }')
        echo "| $name | $1 | $2 | $3 | $x | $t |"
    }
    row "inspect -f folded" "$folded" "$folded_rss"
    read -r w r < <(median_of "$n" "$memprof" inspect "$file" --accounting 3.0 -f folded --quiet)
    row "inspect --accounting 3.0 -f folded" "$w" "$r"
    if [[ -s $out_dir/$name.v2.pb ]]; then
        read -r w r < <(median_of "$n" "$memprof" inspect "$out_dir/$name.v2.pb" -f folded --quiet)
        row "inspect (ommx.v2 file) -f folded" "$w" "$r"
    fi
    row "inspect (tree)" "$tree" "$tree_rss" 1
    read -r w r < <(median_of "$n" "$memprof" report "$file" -o "$tmp/page.html" --quiet)
    row "report" "$w" "$r" 1
    read -r w r < <(median_of "$n" "$memprof" advise "$file" --quiet)
    row "advise" "$w" "$r" 1
done
