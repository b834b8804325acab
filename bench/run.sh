#!/usr/bin/env bash
# Whole-process benchmark of `memprof inspect --format folded` on generated
# instances (a 1,000,000-term LP, a 2,000-variable dense QUBO, an archive of
# 1,000 small instances; with BENCH_LARGE=1 also a 10,000,000-term LP, a
# 1 GB LP and a 383 MB QUBO), optionally against OMMX 2.9.3's own
# logical_memory_profile().
# See bench/README.md. Usage: bench/run.sh   (from any folder)
#
# Environment:
#   OMMX_PYTHON  a python with ommx==2.9.3: also time OMMX and check that
#                memprof's folded output equals OMMX's profile text
#   BENCH_RUNS   timed runs per command (default 5; the median wall time is
#                reported; the large files get at most 3)
#   BENCH_LARGE  1: also the 10,000,000-term LP (~220 MB), the 1 GB LP
#                and a QUBO of 8,000 variables (one 383 MB objective; OMMX
#                is not run on these: it needs minutes and many GB)
set -euo pipefail
export LC_ALL=C

cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${BENCH_RUNS:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_RUNS must be a positive integer" >&2; exit 2; }
ommx_python=${OMMX_PYTHON:-}
out_dir=target/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ommx_snippet="import sys; from ommx.v1 import Instance; Instance.from_bytes(open(sys.argv[1],'rb').read()).logical_memory_profile()"

# How to measure one run: GNU time for the peak RSS of the measured process
# (%M, KiB), and bash's microsecond EPOCHREALTIME for wall time, because
# GNU time's %e has only 1/100 s resolution (about 10% of a memprof run).
# Without GNU time, python's os.wait4 gives the same two numbers.
if /usr/bin/time -f '%e %M' true >/dev/null 2>&1; then
    method="wall: bash EPOCHREALTIME around /usr/bin/time; peak RSS: GNU time %M (max resident set of the measured process)"
    measure() {
        local start end rss
        start=$EPOCHREALTIME
        /usr/bin/time -o "$tmp/time" -f '%e %M' "$@" >/dev/null
        end=$EPOCHREALTIME
        read -r _ rss <"$tmp/time"
        awk -v a="$start" -v b="$end" -v rss="$rss" 'BEGIN { printf "%.4f %d\n", b - a, rss }'
    }
else
    fallback_python=$(command -v python3 || true)
    [[ -n $fallback_python ]] || fallback_python=$ommx_python
    [[ -n $fallback_python ]] || { echo "bench: need GNU time (/usr/bin/time -f) or python3 to measure" >&2; exit 2; }
    method="wall: python time.perf_counter; peak RSS: ru_maxrss of os.wait4 (no GNU time here)"
    measure() {
        "$fallback_python" - "$@" <<'EOF'
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
code = os.waitstatus_to_exitcode(status)
if code != 0:
    sys.exit(f"bench: {sys.argv[1]} exited with {code}")
print(f"{wall:.4f} {usage.ru_maxrss}")
EOF
    }
fi

# Median wall and largest RSS of "wall rss_kib" lines on stdin.
summarize() {
    sort -g | awk '
        BEGIN { rss = 0 }
        { wall[NR] = $1; if ($2 > rss) rss = $2 }
        END {
            median = NR % 2 ? wall[(NR + 1) / 2] : (wall[NR / 2] + wall[NR / 2 + 1]) / 2
            printf "%.3f %.1f\n", median, rss / 1024
        }'
}

# Runs "$@" $runs times; prints "median_wall_s peak_rss_mib" (RSS: the
# largest of the runs; it hardly varies).
bench() {
    local i
    for ((i = 0; i < runs; i++)); do
        measure "$@"
    done | summarize
}

# Runs memprof on $1 and OMMX on the same file in turn, $runs times each,
# so that both see the same machine; prints "memprof_wall memprof_rss
# ommx_wall ommx_rss".
bench_pair() {
    local i
    : >"$tmp/pair.m"
    : >"$tmp/pair.o"
    for ((i = 0; i < runs; i++)); do
        measure target/release/memprof inspect "$1" --format folded --quiet >>"$tmp/pair.m"
        measure "$ommx_python" -c "$ommx_snippet" "$1" >>"$tmp/pair.o"
    done
    echo "$(summarize <"$tmp/pair.m") $(summarize <"$tmp/pair.o")"
}

echo "bench: building (cargo build --release --bins)" >&2
cargo build --release --bins --quiet

mkdir -p "$out_dir"
lp=$out_dir/lp-20000x50-of-100000.pb
qubo=$out_dir/qubo-2000.pb
archive=$out_dir/archive-1000.ommx
lp10m=$out_dir/lp-200000x50-of-1000000.pb
lp1g=$out_dir/lp-1000000x50-of-5000000.pb
qubo8k=$out_dir/qubo-8000.pb
gen() { [[ -s $1 ]] || target/release/memprof-gen "${@:2}" -o "$1"; }
# The LP and the QUBO as OMMX itself writes them (its field order, its hash
# order of quadratic terms) when OMMX is at hand; memprof-gen's sorted
# files otherwise.
if [[ -n $ommx_python ]] && "$ommx_python" -c "import ommx, numpy" 2>/dev/null; then
    inputs="written by OMMX 2.9.3's to_bytes() (bench/ommx_inputs.py)"
    lp=$out_dir/ommx-lp_1m.pb
    qubo=$out_dir/ommx-qubo_2m.pb
    [[ -s $lp ]] || "$ommx_python" bench/ommx_inputs.py lp "$lp"
    [[ -s $qubo ]] || "$ommx_python" bench/ommx_inputs.py qubo "$qubo"
else
    inputs="written by memprof-gen (no OMMX_PYTHON with ommx and numpy: keys sorted, not in OMMX's hash order)"
    gen "$lp" lp --constraints 20000 --terms 50 --variables 100000
    gen "$qubo" qubo --variables 2000
fi
echo "bench: LP and QUBO inputs $inputs" >&2
gen "$archive" archive --instances 1000
files=("$lp" "$qubo" "$archive")
if [[ ${BENCH_LARGE:-0} == 1 ]]; then
    gen "$lp10m" lp --constraints 200000 --terms 50 --variables 1000000
    gen "$lp1g" lp --constraints 1000000 --terms 50 --variables 5000000
    # One objective of 32M quadratic terms (383 MB): it is spooled to a
    # temporary file and counted there, so memory does not hold it.
    gen "$qubo8k" qubo --variables 8000
    files+=("$lp10m" "$lp1g" "$qubo8k")
fi

if [[ -n $ommx_python ]]; then
    version=$("$ommx_python" -c "import importlib.metadata as m; print(m.version('ommx'))") || {
        echo "bench: OMMX_PYTHON=$ommx_python cannot import ommx" >&2
        exit 2
    }
    if [[ $version != 2.9.3 ]]; then
        echo "bench: WARNING: OMMX_PYTHON has ommx $version, not 2.9.3; memprof reproduces 2.9.3" >&2
    fi
fi

rows=()
checks=()
phases=()
mismatches=0
all_runs=$runs
for file in "${files[@]}"; do
    name=$(basename "$file")
    echo "bench: $name" >&2
    size_mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN { printf "%.1f", b / 1e6 }')
    large=0
    [[ $file == "$lp10m" || $file == "$lp1g" || $file == "$qubo8k" ]] && large=1
    runs=$all_runs
    ((large)) && ((runs > 3)) && runs=3

    # One untimed run first: it warms the page cache and gives the output
    # that is compared with OMMX's.
    target/release/memprof inspect "$file" --format folded --quiet >"$tmp/memprof.folded"
    # Where the time goes: memprof's own phase accounting, one run.
    target/release/memprof --timings inspect "$file" --format folded --quiet 2>"$tmp/timings" >/dev/null
    phases+=("$name: $(awk '$2 ~ /ms$/ { t[$1] = $2 + 0; sum += $2 + 0 }
        /^wall/ { wall = $2 }
        END { printf "wall %s ms; busy over threads:", wall
              n = split("read decompress decode normalize aggregate check render", k, " ")
              for (i = 1; i <= n; i++) if (t[k[i]] > 0) printf " %s %.1f ms (%.0f%%)", k[i], t[k[i]], 100 * t[k[i]] / sum }' "$tmp/timings")")
    with_ommx=0
    [[ -n $ommx_python && $large == 0 && $file != "$archive" ]] && with_ommx=1
    if ((with_ommx)); then
        "$ommx_python" -c "$ommx_snippet" "$file" # warm-up: imports, page cache
        timing=$(bench_pair "$file")
        read -r m_wall m_rss o_wall o_rss <<<"$timing"
    else
        timing=$(bench target/release/memprof inspect "$file" --format folded --quiet)
        read -r m_wall m_rss <<<"$timing"
    fi
    # The same on one thread, to show what the second core buys.
    export MEMPROF_THREADS=1
    timing=$(bench target/release/memprof inspect "$file" --format folded --quiet)
    unset MEMPROF_THREADS
    read -r s_wall _ <<<"$timing"
    [[ $file == "$lp" ]] && lp_wall=$m_wall
    throughput=$(awk -v s="$size_mb" -v w="$m_wall" 'BEGIN { printf "%.0f", s / w }')
    row="| $name | $size_mb | $m_wall | $s_wall | $m_rss | $throughput |"

    total=$(awk '{ sum += $NF } END { printf "%.0f", sum }' "$tmp/memprof.folded")
    lines=$(wc -l <"$tmp/memprof.folded")
    if ((with_ommx)); then
        "$ommx_python" -c "import sys; from ommx.v1 import Instance; sys.stdout.write(Instance.from_bytes(open(sys.argv[1],'rb').read()).logical_memory_profile())" "$file" >"$tmp/ommx.folded"
        # OMMX's string has no trailing newline; memprof ends every line with one.
        printf '\n' >>"$tmp/ommx.folded"
        if cmp -s "$tmp/memprof.folded" "$tmp/ommx.folded"; then
            checks+=("$name: memprof folded output == ommx logical_memory_profile() ($lines lines, total $total bytes)")
        else
            mismatches=$((mismatches + 1))
            checks+=("$name: MISMATCH between memprof and ommx (memprof total $total bytes)")
            {
                echo "bench: ==================== MISMATCH: $name ===================="
                echo "bench: memprof's folded output differs from ommx's logical_memory_profile() (< memprof, > ommx):"
                diff "$tmp/memprof.folded" "$tmp/ommx.folded" | head -40 || true
                echo "bench: ============================================================="
            } >&2
        fi

        ratio=$(awk -v o="$o_wall" -v m="$m_wall" 'BEGIN { printf "%.1f", o / m }')
        row="$row $o_wall | $o_rss | ${ratio}× |"
    else
        checks+=("$name: $lines lines, total $total bytes (not compared with OMMX)")
        [[ -n $ommx_python ]] && row="$row - | - | - |"
    fi
    rows+=("$row")
done

echo
echo "$all_runs timed runs per command (3 for the large files) after one warm-up; wall = median, peak RSS = largest of the runs."
echo "Measured with $method. MB = 10^6 bytes, MiB = 2^20 bytes; throughput = file size / memprof wall."
echo "$(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(target/release/memprof --version)."
echo
if [[ -n $ommx_python ]]; then
    echo "| file | size MB | memprof wall s | memprof 1-thread wall s | memprof peak RSS MiB | throughput MB/s | ommx wall s | ommx peak RSS MiB | speed-up (ommx wall / memprof wall) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
else
    echo "| file | size MB | memprof wall s | memprof 1-thread wall s | memprof peak RSS MiB | throughput MB/s |"
    echo "|---|---:|---:|---:|---:|---:|"
fi
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${checks[@]}"
echo
echo "Phases (memprof --timings, one run each; busy time summed over threads, shares of that sum):"
printf '%s\n' "${phases[@]}"

# The floor and the small end: reading the LP with cat, and the largest
# fixture (fixtures/oracle/moderate.pb, 41.6 kB) through memprof.
runs=$all_runs
floor=$(bench cat "$lp")
read -r cat_wall _ <<<"$floor"
small=fixtures/oracle/moderate.pb
timing=$(bench target/release/memprof inspect "$small" --format folded --quiet)
read -r small_wall small_rss <<<"$timing"
echo
echo "cat $(basename "$lp") > /dev/null: median $cat_wall s; memprof on it: $lp_wall s ($(awk -v m="$lp_wall" -v c="$cat_wall" 'BEGIN { printf "%.1f", m / c }')× cat)"
echo "$small ($(stat -c %s "$small") bytes): memprof median $small_wall s, peak RSS $small_rss MiB"

if ((mismatches > 0)); then
    echo "bench: FAILED: $mismatches file(s) where memprof's folded output differs from ommx" >&2
    exit 1
fi
