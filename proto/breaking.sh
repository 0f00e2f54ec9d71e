#!/usr/bin/env bash
# `buf breaking` of the contract in proto/ against the last released one
# (proto/released/parterre-v1.binpb, a buf image), with the WIRE rules of
# buf.yaml. A finding fails unless its message is listed, word for word, in
# proto/released/accepted-breaks.txt: the breaks a release decided to make
# (each with its reason in docs/bots.md "Contract changes and releases").
# A release rebuilds the image and empties the list:
#   buf build proto --exclude-source-info -o proto/released/parterre-v1.binpb
#   : > proto/released/accepted-breaks.txt
# Usage: bash proto/breaking.sh [BUF]   (BUF: the buf binary, default `buf`)
set -euo pipefail
cd "$(dirname "$0")/.."
buf="${1:-buf}"
accepted=proto/released/accepted-breaks.txt
findings=$("$buf" breaking --against proto/released/parterre-v1.binpb 2>&1 || true)
status=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  message="${line#*:*:*:}"   # drop "path:line:column:"
  if grep -qxF -- "$message" <(grep -v '^#' "$accepted"); then
    echo "buf breaking: accepted: $message"
  else
    echo "buf breaking: NOT ACCEPTED: $line" >&2
    status=1
  fi
done <<< "$findings"
exit "$status"
