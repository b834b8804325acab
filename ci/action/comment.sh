#!/usr/bin/env bash
# Posts the check's report as one comment on the pull request, and updates
# that same comment on every later run (found by its hidden marker), as
# size-limit's action does: the thread holds one current report, not one per
# push.
#
# A comment that cannot be posted is skipped, with one line in the job
# summary saying why, and the step still succeeds: a pull request from a
# fork gets a read-only token, and the check's verdict, not the comment,
# is what passes or fails the job.
#
# Environment: GH_TOKEN (a token that may write pull-request comments),
# GITHUB_REPOSITORY, GITHUB_EVENT_PATH (the pull_request event), RUNNER_TEMP,
# GITHUB_STEP_SUMMARY.
set -euo pipefail

comment="$RUNNER_TEMP/memprof-comment.md"
[[ -f "$comment" ]] || { echo "memprof-action: no report to comment with" >&2; exit 0; }
pr="$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")"
[[ -n "$pr" ]] || { echo "memprof-action: not a pull request: no comment" >&2; exit 0; }

errors="$RUNNER_TEMP/memprof-gh-errors.txt"
# Says why there is no comment, in the log and the job summary, and ends
# the step successfully.
skip() {
    local why
    if grep -qE 'HTTP 40[13]|Resource not accessible' "$errors"; then
        why="the token cannot write to pull requests"
        local head base
        head="$(jq -r '.pull_request.head.repo.full_name // empty' "$GITHUB_EVENT_PATH")"
        base="$(jq -r '.pull_request.base.repo.full_name // empty' "$GITHUB_EVENT_PATH")"
        if [[ -n "$head" && "$head" != "$base" ]]; then
            why="$why (a pull request from the fork ${head} gets a read-only token)"
        else
            why="$why (the workflow needs permissions: pull-requests: write)"
        fi
    else
        why="gh failed: $(grep -m 1 . "$errors" || echo "no message")"
    fi
    cat "$errors" >&2
    echo "::warning title=memprof check::no pull-request comment: ${why}"
    if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
        printf '\n%s\n' "memprof: no pull-request comment: ${why}; the report is above." >> "$GITHUB_STEP_SUMMARY"
    fi
    exit 0
}

marker="<!-- memprof-check -->"
listing="$(gh api --paginate "repos/${GITHUB_REPOSITORY}/issues/${pr}/comments" \
    --jq ".[] | select(.body | startswith(\"${marker}\")) | .id" 2> "$errors")" || skip
existing="$(head -n 1 <<< "$listing")"
if [[ -n "$existing" ]]; then
    gh api --method PATCH "repos/${GITHUB_REPOSITORY}/issues/comments/${existing}" \
        -F "body=@${comment}" > /dev/null 2> "$errors" || skip
    echo "memprof-action: updated comment ${existing} on #${pr}" >&2
else
    gh api --method POST "repos/${GITHUB_REPOSITORY}/issues/${pr}/comments" \
        -F "body=@${comment}" > /dev/null 2> "$errors" || skip
    echo "memprof-action: commented on #${pr}" >&2
fi
