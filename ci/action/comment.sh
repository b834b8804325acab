#!/usr/bin/env bash
# Posts the check's report as one comment on the pull request, and updates
# that same comment on every later run (found by its hidden marker), as
# size-limit's action does: the thread holds one current report, not one per
# push.
#
# Environment: GH_TOKEN (a token that may write pull-request comments),
# GITHUB_REPOSITORY, GITHUB_EVENT_PATH (the pull_request event), RUNNER_TEMP.
set -euo pipefail

comment="$RUNNER_TEMP/memprof-comment.md"
[[ -f "$comment" ]] || { echo "memprof-action: no report to comment with" >&2; exit 0; }
pr="$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")"
[[ -n "$pr" ]] || { echo "memprof-action: not a pull request: no comment" >&2; exit 0; }

marker="<!-- memprof-check -->"
existing="$(gh api --paginate "repos/${GITHUB_REPOSITORY}/issues/${pr}/comments" \
    --jq ".[] | select(.body | startswith(\"${marker}\")) | .id" | head -n 1)"
if [[ -n "$existing" ]]; then
    gh api --method PATCH "repos/${GITHUB_REPOSITORY}/issues/comments/${existing}" \
        -F "body=@${comment}" > /dev/null
    echo "memprof-action: updated comment ${existing} on #${pr}" >&2
else
    gh api --method POST "repos/${GITHUB_REPOSITORY}/issues/${pr}/comments" \
        -F "body=@${comment}" > /dev/null
    echo "memprof-action: commented on #${pr}" >&2
fi
