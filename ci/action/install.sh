#!/usr/bin/env bash
# Installs memprof for the GitHub Action (action.yml): the binary released
# for this runner, downloaded from the action's own repository and checked
# against its published SHA-256; when the release has none (no such
# version yet, or an unusual runner), it says so and the action builds
# memprof with cargo instead (a cached step of action.yml), and gives that
# step its cache key.
#
# The key is a hash of what `cargo install` builds from, so a cached build
# is reused exactly as long as the action's code is the same. It cannot
# come from action.yml's hashFiles(), which reads the workspace only (the
# action is checked out elsewhere) and so hashes nothing; nor from the
# action's git commit, since GitHub downloads an action as an archive,
# without .git.
#
# Environment: MEMPROF_VERSION (x.y.z, or empty: the action's ref when it is
# a v-tag), MEMPROF_REPOSITORY (owner/name), GITHUB_ACTION_PATH (default:
# the root this script sits in), RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP,
# GITHUB_OUTPUT, GITHUB_PATH (as GitHub sets them), and for tests
# MEMPROF_RELEASES_URL (default https://github.com/OWNER/NAME/releases).
# Outputs: fallback (true/false) and, with fallback=true, cache-key.
# Exit status: 0 installed or fallback chosen; 1 a download that does not
# match its checksum (never installed, never built around).
set -euo pipefail

say() { echo "memprof-action: $*" >&2; }
if command -v sha256sum >/dev/null; then sha256=(sha256sum); else sha256=(shasum -a 256); fi
# The hash of the action's build inputs (the crate's code, the schema and
# report page it compiles in, and Cargo.lock; not its docs), each named by
# its path under the action's root, so the hash does not depend on where
# the runner put the action.
source_hash() {
    local root="${GITHUB_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
    local inputs=() path
    for path in Cargo.lock Cargo.toml build.rs src proto web/dist; do
        [[ -e "$root/$path" ]] && inputs+=("$path")
    done
    [[ ${#inputs[@]} -gt 0 ]] || { say "error: no Cargo.lock or sources under ${root}"; exit 1; }
    (cd "$root" && find "${inputs[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 "${sha256[@]}" | "${sha256[@]}" | cut -d' ' -f1)
}
fallback() {
    say "$1; building memprof with cargo instead"
    local hash
    hash="$(source_hash)"
    echo "fallback=true" >> "$GITHUB_OUTPUT"
    echo "cache-key=memprof-${RUNNER_OS:-unknown}-${RUNNER_ARCH:-unknown}-${hash}" >> "$GITHUB_OUTPUT"
    exit 0
}

version="${MEMPROF_VERSION:-}"
if [[ -z "$version" && "${ACTION_REF:-}" =~ ^v([0-9]+\.[0-9]+\.[0-9]+.*)$ ]]; then
    version="${BASH_REMATCH[1]}"
fi
[[ -n "$version" ]] || fallback "no version to download (the action's ref ${ACTION_REF:-?} is not a release tag, and no version input)"
version="${version#v}"

case "${RUNNER_OS}-${RUNNER_ARCH}" in
    Linux-X64) target=x86_64-unknown-linux-gnu archive=tar.xz ;;
    Linux-ARM64) target=aarch64-unknown-linux-gnu archive=tar.xz ;;
    macOS-X64) target=x86_64-apple-darwin archive=tar.xz ;;
    macOS-ARM64) target=aarch64-apple-darwin archive=tar.xz ;;
    Windows-X64) target=x86_64-pc-windows-msvc archive=zip ;;
    *) fallback "no released binary for ${RUNNER_OS} ${RUNNER_ARCH}" ;;
esac

base="${MEMPROF_RELEASES_URL:-https://github.com/${MEMPROF_REPOSITORY}/releases}"
name="memprof-${target}.${archive}"
url="${base}/download/v${version}/${name}"
dir="${RUNNER_TEMP}/memprof-${version}"
mkdir -p "$dir"
if ! curl -fsSL --retry 3 -o "$dir/$name" "$url" || ! curl -fsSL --retry 3 -o "$dir/$name.sha256" "$url.sha256"; then
    fallback "no ${name} in release v${version} (${url})"
fi

expected="$(cut -d' ' -f1 < "$dir/$name.sha256")"
actual="$("${sha256[@]}" "$dir/$name" | cut -d' ' -f1)"
if [[ "$expected" != "$actual" ]]; then
    say "error: ${name} does not match its published SHA-256 (expected ${expected}, got ${actual}): not installed"
    exit 1
fi

case "$archive" in
    tar.xz) tar -xJf "$dir/$name" -C "$dir"; bin="$dir/memprof-${target}" ;;
    zip) unzip -q -o "$dir/$name" -d "$dir"; bin="$dir" ;;
esac
"$bin/memprof" --version >&2
echo "$bin" >> "$GITHUB_PATH"
echo "fallback=false" >> "$GITHUB_OUTPUT"
say "installed memprof ${version} (${target}, SHA-256 checked)"
