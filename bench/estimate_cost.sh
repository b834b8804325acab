#!/usr/bin/env bash
# What the real-memory estimate costs: the default `memprof inspect FILE` (a
# tree, which runs the estimate, OMMX 2.9.3's load simulated call by call)
# against `inspect FILE -f folded` (the pass alone), as whole processes, on
# bench/run.sh's 1,000,000-term LP and 2,000,000-term QUBO (memprof-gen).
#
#   bench/estimate_cost.sh                 # 9 runs of each, interleaved
#   BENCH_RUNS=15 bench/estimate_cost.sh
#
# Prints, per file, each command's median wall time and largest peak RSS
# (GNU time %M), the ratio of the medians, and the target of issue 44: the
# default at most 2x folded's time plus 20 ms, in at most 64 MiB. Wall time
# from bash's EPOCHREALTIME around the run; quote medians from an idle
# machine (the estimate runs on one thread, the pass on all).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${BENCH_RUNS:-9}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "estimate_cost: BENCH_RUNS must be a positive integer" >&2; exit 2; }
/usr/bin/time -f '%e %M' true >/dev/null 2>&1 || { echo "estimate_cost: needs GNU time (/usr/bin/time -f)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cargo build --release --locked --bin memprof --bin memprof-gen --quiet
out_dir=target/bench
mkdir -p "$out_dir"
lp=$out_dir/lp-20000x50-of-100000.pb
qubo=$out_dir/qubo-2000.pb
[[ -s $lp ]] || target/release/memprof-gen lp --constraints 20000 --terms 50 --variables 100000 -o "$lp" 2>/dev/null
[[ -s $qubo ]] || target/release/memprof-gen qubo --variables 2000 -o "$qubo" 2>/dev/null

measure() { # OUT COMMAND...: appends "wall_s rss_kib"
    local out=$1 start end rss
    shift
    start=$EPOCHREALTIME
    /usr/bin/time -o "$tmp/time" -f '%e %M' "$@" >/dev/null
    end=$EPOCHREALTIME
    read -r _ rss <"$tmp/time"
    awk -v a="$start" -v b="$end" -v rss="$rss" 'BEGIN { printf "%.4f %d\n", b - a, rss }' >>"$out"
}

summarize() { # FILE: "median_wall_s max_rss_mib"
    sort -g "$1" | awk '
        { wall[NR] = $1; if ($2 > rss) rss = $2 }
        END {
            median = NR % 2 ? wall[(NR + 1) / 2] : (wall[NR / 2] + wall[NR / 2 + 1]) / 2
            printf "%.3f %.1f\n", median, rss / 1024
        }'
}

echo "| input | default (tree) wall s | peak RSS MiB | folded wall s | peak RSS MiB | ratio | target: <= 2 x folded + 0.020 s, <= 64 MiB |"
echo "|---|---:|---:|---:|---:|---:|---|"
for file in "$lp" "$qubo"; do
    : >"$tmp/tree"
    : >"$tmp/folded"
    # One untimed run of each warms the page cache.
    target/release/memprof inspect "$file" --quiet >/dev/null
    target/release/memprof inspect "$file" -f folded --quiet >/dev/null
    for ((i = 0; i < runs; i++)); do
        measure "$tmp/tree" target/release/memprof inspect "$file" --quiet
        measure "$tmp/folded" target/release/memprof inspect "$file" -f folded --quiet
    done
    read -r tree tree_rss < <(summarize "$tmp/tree")
    read -r folded folded_rss < <(summarize "$tmp/folded")
    awk -v f="$(basename "$file")" -v t="$tree" -v tr="$tree_rss" -v o="$folded" -v orss="$folded_rss" 'BEGIN {
        ok = (t <= 2 * o + 0.020 && tr <= 64) ? "met" : "missed"
        printf "| %s | %.3f | %.1f | %.3f | %.1f | %.2f | %s (limit %.3f s) |\n", f, t, tr, o, orss, t / o, ok, 2 * o + 0.020
    }'
done
echo
echo "estimate_cost: $runs runs of each command, interleaved; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
