#!/usr/bin/env bash
# Scaling table: `memprof inspect FILE --format folded` on large generated
# instances at several thread counts (MEMPROF_THREADS), against `cat FILE >
# /dev/null`, the floor of reading the file. One command gives the table of
# issue 31 on any machine. See bench/README.md.
# Usage: bench/scaling.sh   (from any folder)
#
# Environment:
#   SCALING_INPUTS   which inputs, by name (default: "lp198m qubo215m lp1g lp4g")
#                      lp198m    memprof-gen lp, 1M variables, 200,000 x 50 (198 MB)
#                      qubo215m  memprof-gen qubo, 6,000 binaries (215 MB)
#                      qubo2m    memprof-gen qubo, 2,000 binaries (23.8 MB: qubo_2m)
#                      lp1g      memprof-gen lp, 5M variables, 1M x 50 (1.03 GB)
#                      lp4g      memprof-gen lp, 20M variables, 4M x 50 (4.2 GB)
#   SCALING_THREADS  thread counts (default: 1 2 4 8 16 ..., those up to the
#                    machine's CPUs); the default setting (MEMPROF_THREADS
#                    unset) is always run too
#   SCALING_RUNS     runs per cell after one warm-up (default 3; the best is
#                    reported, as the page cache is warm)
set -euo pipefail
export LC_ALL=C

cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${SCALING_RUNS:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "scaling: SCALING_RUNS must be a positive integer" >&2; exit 2; }
cpus=$(nproc)
if [[ -n ${SCALING_THREADS:-} ]]; then
    read -r -a counts <<<"$SCALING_THREADS"
else
    counts=()
    for t in 1 2 4 8 16 32 64; do
        ((t <= cpus)) && counts+=("$t")
    done
fi
read -r -a inputs <<<"${SCALING_INPUTS:-lp198m qubo215m lp1g lp4g}"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
out_dir=target/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/time -f '%e %M' true >/dev/null 2>&1 || {
    echo "scaling: needs GNU time (/usr/bin/time -f) for the peak RSS" >&2
    exit 2
}

# One run of "$@": "wall_s rss_kib", wall from bash's microsecond clock.
measure() {
    local start end rss
    start=$EPOCHREALTIME
    /usr/bin/time -o "$tmp/time" -f '%e %M' "$@" >/dev/null
    end=$EPOCHREALTIME
    read -r _ rss <"$tmp/time"
    awk -v a="$start" -v b="$end" -v rss="$rss" 'BEGIN { printf "%.4f %d\n", b - a, rss }'
}

# "$@" once untimed, then $runs times: "best_wall_s largest_rss_kib".
best() {
    local i
    "$@" >/dev/null
    for ((i = 0; i < runs; i++)); do
        measure "$@"
    done | sort -g | awk 'NR == 1 { wall = $1 } { if ($2 > rss) rss = $2 } END { printf "%.4f %d\n", wall, rss }'
}

echo "scaling: building (cargo build --release --bins)" >&2
cargo build --release --bins --quiet
mkdir -p "$out_dir"

header="| input | size MB | cat s (GB/s) |"
rule="|---|---:|---:|"
for t in "${counts[@]}"; do
    header="$header $t thread$([[ $t == 1 ]] || echo s) MB/s |"
    rule="$rule---:|"
done
header="$header default MB/s | peak RSS MiB | 1 → ${counts[-1]} |"
rule="$rule---:|---:|---:|"
rows=()
for name in "${inputs[@]}"; do
    case $name in
        lp198m) file=$out_dir/lp-200000x50-of-1000000.pb gen=(lp --constraints 200000 --terms 50 --variables 1000000) ;;
        qubo215m) file=$out_dir/qubo-6000.pb gen=(qubo --variables 6000) ;;
        qubo2m) file=$out_dir/qubo-2000.pb gen=(qubo --variables 2000) ;;
        lp1g) file=$out_dir/lp-1000000x50-of-5000000.pb gen=(lp --constraints 1000000 --terms 50 --variables 5000000) ;;
        lp4g) file=$out_dir/lp-4000000x50-of-20000000.pb gen=(lp --constraints 4000000 --terms 50 --variables 20000000) ;;
        *) echo "scaling: unknown input $name (lp198m, qubo215m, qubo2m, lp1g, lp4g)" >&2; exit 2 ;;
    esac
    [[ -s $file ]] || target/release/memprof-gen "${gen[@]}" -o "$file"
    bytes=$(stat -c %s "$file")
    echo "scaling: $name ($(basename "$file"), $bytes bytes)" >&2
    rate() { awk -v b="$bytes" -v w="$1" 'BEGIN { printf "%.0f", b / 1e6 / w }'; }

    read -r cat_wall _ <<<"$(best cat "$file")"
    row="| $name | $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') | $cat_wall ($(awk -v b="$bytes" -v w="$cat_wall" 'BEGIN { printf "%.1f", b / 1e9 / w }')) |"
    peak=0
    sums=()
    first=""
    for t in "${counts[@]}" default; do
        if [[ $t == default ]]; then
            unset MEMPROF_THREADS
        else
            export MEMPROF_THREADS=$t
        fi
        read -r wall rss <<<"$(best target/release/memprof inspect "$file" --format folded --quiet)"
        target/release/memprof inspect "$file" --format folded --quiet | md5sum >"$tmp/sum"
        sums+=("$(cut -d' ' -f1 "$tmp/sum")")
        ((rss > peak)) && peak=$rss
        [[ -z $first ]] && first=$wall
        [[ $t == "${counts[-1]}" ]] && last=$wall
        row="$row $(rate "$wall") |"
    done
    unset MEMPROF_THREADS
    if [[ $(printf '%s\n' "${sums[@]}" | sort -u | wc -l) != 1 ]]; then
        echo "scaling: FAILED: $name's folded output differs between thread counts" >&2
        exit 1
    fi
    row="$row $(awk -v k="$peak" 'BEGIN { printf "%.1f", k / 1024 }') | $(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.2f×", a / b }') |"
    rows+=("$row")
done

echo
echo "Best of $runs runs after one warm-up (page cache warm), whole process; MB/s = file size / wall; peak RSS = largest over every run of the row (GNU time %M)."
echo "$cpus CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(target/release/memprof --version)."
echo "Outputs identical at every thread count (md5 of the folded output)."
echo
echo "$header"
echo "$rule"
printf '%s\n' "${rows[@]}"
