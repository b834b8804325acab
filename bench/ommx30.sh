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
# in rounds (each round runs every command once, so that a change in the
# machine's state falls on all of them alike), and prints each one's median
# wall time and largest peak RSS, with the median over the rounds of its
# ratio to `inspect -f folded` (and, for the tree, report and advise, to
# `inspect -f tree`).
# See bench/README.md. Usage: bench/ommx30.sh   (from any folder)
#
# Environment:
#   OMMX30_PYTHON  a python with ommx==3.0.0b7: also the ommx.v2 files
#   BENCH_RUNS     rounds (default 5)
#   BENCH_LARGE_RUNS  rounds on the files over 100 MB (default 3, at most BENCH_RUNS)
#   BENCH_LARGE    1: also the 10,000,000-term LP and the 1 GB LP
#   BENCH_PAUSE    seconds to wait before each timed run (default 0): the
#                  machine's state after a pause, where a virtual machine's
#                  host may have taken back the memory it left free
#                  (bench/README.md, "After a pause")
set -euo pipefail
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${BENCH_RUNS:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_RUNS must be a positive integer" >&2; exit 2; }
pause=${BENCH_PAUSE:-0}
[[ $pause =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench: BENCH_PAUSE must be a number of seconds" >&2; exit 2; }
large_runs=${BENCH_LARGE_RUNS:-3}
[[ $large_runs =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_LARGE_RUNS must be a positive integer" >&2; exit 2; }
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

# The command timed on each input as number `$1`, into `cmd` (`$file` is
# the input, `$v2` its ommx.v2 encoding).
labels=("inspect -f folded" "inspect --accounting 3.0 -f folded" "inspect (ommx.v2 file) -f folded"
    "inspect (tree)" "report" "advise")
command_of() {
    case $1 in
    0) cmd=("$memprof" inspect "$file" -f folded --quiet) ;;
    1) cmd=("$memprof" inspect "$file" --accounting 3.0 -f folded --quiet) ;;
    2) cmd=("$memprof" inspect "$v2" -f folded --quiet) ;;
    3) cmd=("$memprof" inspect "$file" --quiet) ;;
    4) cmd=("$memprof" report "$file" -o "$tmp/page.html" --quiet) ;;
    5) cmd=("$memprof" advise "$file" --quiet) ;;
    esac
}

# The median of a column of numbers.
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.4f", v[int((NR + 1) / 2)] }'; }

echo "| input | command | wall s | peak RSS MiB | × folded (2.9.3) | × tree |"
echo "|---|---|---|---|---|---|"
for name in "${inputs[@]}"; do
    file=$out_dir/$name.pb
    v2=$out_dir/$name.v2.pb
    n=$runs
    [[ $(stat -c %s "$file") -gt 100000000 ]] && n=$((runs < large_runs ? runs : large_runs))
    commands=(0 1 2 3 4 5)
    [[ -s $v2 ]] || commands=(0 1 3 4 5)
    # A warm-up each, then rounds of every command in turn, so that a
    # change in the machine's state (this one's is shared) falls on every
    # command alike; a ratio is the median of the rounds' ratios.
    for i in "${commands[@]}"; do
        command_of "$i"
        "${cmd[@]}" >/dev/null 2>&1 || { echo "bench: failed: ${cmd[*]}" >&2; exit 1; }
        : >"$tmp/runs.$i"
    done
    for _ in $(seq "$n"); do
        for i in "${commands[@]}"; do
            command_of "$i"
            sleep "$pause"
            measure "${cmd[@]}" >>"$tmp/runs.$i"
        done
    done
    ratio() { paste "$tmp/runs.$1" "$tmp/runs.$2" | awk '{ print $1 / $3 }' | median; }
    for i in "${commands[@]}"; do
        wall=$(cut -d' ' -f1 "$tmp/runs.$i" | median)
        rss=$(awk '$2 > r { r = $2 } END { printf "%.1f", r / 1024 }' "$tmp/runs.$i")
        by_tree="-"
        ((i >= 3)) && by_tree=$(printf "%.2f" "$(ratio "$i" 3)")
        printf "| %s | %s | %.3f | %s | %.2f | %s |\n" "$name" "${labels[$i]}" "$wall" "$rss" \
            "$(ratio "$i" 0)" "$by_tree"
    done
done
