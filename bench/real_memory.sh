#!/usr/bin/env bash
# Measures what OMMX 2.9.3 and 3.0.0b7 really take to load instances of every shape, and writes
# the table of measured against estimated (bench/real_memory.json). See bench/real_memory.md.
#
# usage: bench/real_memory.sh [NAMES]   NAMES: comma-separated instance names (default: all)
#   REAL_MEMORY_VENVS  where the two virtualenvs are made or reused (default target/real_memory)
#   REAL_MEMORY_RUNS   measurements per instance and runtime, the median kept (default 1: the
#                      figures repeat to the page on an idle machine)
#   REAL_MEMORY_REUSE  a table whose measurements to keep, estimates redone
#
# The largest instance (lp-5m, 1 GB) needs about 11 GiB of memory free while OMMX 2.9.3 loads it.
set -euo pipefail
cd "$(dirname "$0")/.."
venvs="${REAL_MEMORY_VENVS:-target/real_memory}"
mkdir -p "$venvs"
make_venv() { # DIR PACKAGES...
    local dir="$1"
    shift
    if [ ! -x "$dir/bin/python" ]; then
        "${PYTHON:-python3}" -m venv "$dir"
    fi
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}
# The versions measured (protobuf: the newest that ommx 2.9.3 allows, as pip picks it).
make_venv "$venvs/ommx29" "ommx==2.9.3" "protobuf==5.29.6"
make_venv "$venvs/ommx30" "ommx==3.0.0b7"
cargo build --release --locked --bin memprof --bin memprof-gen
args=(table --py29 "$venvs/ommx29/bin/python" --py30 "$venvs/ommx30/bin/python"
    --memprof target/release/memprof --gen target/release/memprof-gen
    --dir "$venvs/instances" --runs "${REAL_MEMORY_RUNS:-1}")
[ -n "${1:-}" ] && args+=(--only "$1")
[ -n "${REAL_MEMORY_REUSE:-}" ] && args+=(--reuse "$REAL_MEMORY_REUSE")
python3 bench/real_memory.py "${args[@]}" bench/real_memory.json
python3 bench/real_memory.py show bench/real_memory.json
# A fresh process's first load against a second (src/real_memory/first_load.json, which memprof
# reads): small instances of the table, in fresh processes of each runtime.
first=()
for name in lp-tiny metadata-500 qubo-500 tiny_constraints-5k; do
    if [ -s "$venvs/instances/$name.pb" ]; then first+=("$venvs/instances/$name.pb"); fi
done
if [ ${#first[@]} -gt 0 ]; then
    python3 bench/real_memory.py first-loads --py29 "$venvs/ommx29/bin/python" \
        --py30 "$venvs/ommx30/bin/python" src/real_memory/first_load.json "${first[@]}"
fi
