#!/usr/bin/env bash
# Installs memprof for the GitHub Action (action.yml): the binary released
# for this runner, downloaded from the action's own repository and checked
# against its published SHA-256; when the release has none (no such
# version yet, or an unusual runner), it says so and the action builds
# memprof with cargo instead (a cached step of action.yml).
#
# Environment: MEMPROF_VERSION (x.y.z, or empty: the action's ref when it is
# a v-tag), MEMPROF_REPOSITORY (owner/name), RUNNER_OS, RUNNER_ARCH,
# RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_PATH (as GitHub sets them), and for
# tests MEMPROF_RELEASES_URL (default https://github.com/OWNER/NAME/releases).
# Exit status: 0 installed or fallback chosen; 1 a download that does not
# match its checksum (never installed, never built around).
set -euo pipefail

say() { echo "memprof-action: $*" >&2; }
fallback() {
    say "$1; building memprof with cargo instead"
    echo "fallback=true" >> "$GITHUB_OUTPUT"
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
if command -v sha256sum >/dev/null; then
    actual="$(sha256sum "$dir/$name" | cut -d' ' -f1)"
else
    actual="$(shasum -a 256 "$dir/$name" | cut -d' ' -f1)"
fi
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
