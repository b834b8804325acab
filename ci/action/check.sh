#!/usr/bin/env bash
# Runs `memprof check` for the GitHub Action (action.yml), once: its JSON
# verdicts go to a file, and the markdown report it appends to the job
# summary is caught on the way, for the log, the summary and the
# pull-request comment. The comment also gets, for the first files that
# grew past a max_growth rule, the markdown diff that shows which paths
# grew (a file over an absolute limit only has no growth to show).
#
# Environment: MEMPROF_FILES (space-separated, globs quoted), MEMPROF_BASELINE,
# MEMPROF_BUDGET, MEMPROF_WARN_ONLY (true/false), MEMPROF_ARGS, RUNNER_TEMP,
# GITHUB_OUTPUT, GITHUB_STEP_SUMMARY. Writes $RUNNER_TEMP/memprof-comment.md;
# its exit status is memprof check's (0 pass, 1 exceeded, 2 error).
set -uo pipefail

read -r -a files <<< "${MEMPROF_FILES:-}"
read -r -a extra <<< "${MEMPROF_ARGS:-}"
args=()
[[ -n "${MEMPROF_BASELINE:-}" ]] && args+=(--baseline "$MEMPROF_BASELINE")
[[ -n "${MEMPROF_BUDGET:-}" ]] && args+=(--budget "$MEMPROF_BUDGET")
[[ "${MEMPROF_WARN_ONLY:-false}" == "true" ]] && args+=(--warn-only)

report="$RUNNER_TEMP/memprof-report.md"
verdicts="$RUNNER_TEMP/memprof-verdicts.json"
comment="$RUNNER_TEMP/memprof-comment.md"
rm -f "$report" "$verdicts" "$comment"
: > "$report"
GITHUB_STEP_SUMMARY="$report" memprof check "${files[@]}" "${args[@]}" "${extra[@]}" \
    --format json -o "$verdicts"
status=$?
echo "status=$status" >> "$GITHUB_OUTPUT"
if [[ ! -s "$report" ]]; then
    # An error before any verdict: memprof said why on stderr.
    exit "$status"
fi
cat "$report"
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
    cat "$report" >> "$GITHUB_STEP_SUMMARY"
fi
{
    echo "<!-- memprof-check -->"
    cat "$report"
} > "$comment"
shown=0
while IFS=$'\t' read -r file baseline; do
    [[ $shown -lt 3 ]] || break
    shown=$((shown + 1))
    {
        echo
        echo "<details><summary>Which paths changed in <code>${file}</code></summary>"
        echo
        memprof diff "$baseline" "$file" --format markdown --quiet
        echo
        echo "</details>"
    } >> "$comment"
done < <(jq -r '.files[] | select(.baseline != null)
    | select(any(.results[]; .limit == "max_growth" and (.pass | not)))
    | [.file, .baseline] | @tsv' "$verdicts")
exit "$status"
