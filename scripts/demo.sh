#!/usr/bin/env bash
# `make demo`: the main job on the embedded default (SQLite ledger, extractive answerer),
# over Python's own language reference. Every command shown is one a user would type,
# quoted so that it can be pasted as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
# Its own home, wiped first: never $ABORIST_HOME, which may hold someone's real data.
DEMO_HOME="${ABORIST_DEMO_HOME:-$PWD/.aborist-demo}"
unset ABORIST_DB_URL ABORIST_LLM_BASE_URL ABORIST_CONFIG
rm -rf "$DEMO_HOME"
export ABORIST_HOME="$DEMO_HOME"

# One shell word as it must be typed: bare when it is safe, else in single quotes.
quote() {
  if [[ $1 =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}
if [ -t 1 ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD='' PLAIN=''; fi
say() {
  local line="" word
  for word in "$@"; do line+="$(quote "$word") "; done
  printf '\n%s$ %s%s\n' "$BOLD" "${line% }" "$PLAIN"
}
run() { say "$@"; "$@"; }

say export ABORIST_HOME="$ABORIST_HOME"
run $BIN/python scripts/export_pyref.py "$ABORIST_HOME/python-reference"
# The first ingest creates the home and its SQLite ledger: no migrate step.
run $BIN/aborist ingest "$ABORIST_HOME/python-reference" --shard python-reference

run $BIN/aborist query "What does the nonlocal statement do?" --shard python-reference
run $BIN/aborist query "When is the else clause of a for loop executed?" --mode quote
run $BIN/aborist query "What is the airspeed velocity of an unladen swallow?"
# The same question again: served from the answer cache, and recorded as its own run.
run $BIN/aborist query "What does the nonlocal statement do?" --shard python-reference

run $BIN/aborist runs --limit 5
first=$($BIN/aborist runs --limit 4 --json | $BIN/python -c 'import json,sys; print(json.load(sys.stdin)["runs"][-1]["run_id"])')
run $BIN/aborist show "$first"
run $BIN/aborist runs --label VERIFIED --format csv

printf '\n%s$ %s > %s%s\n' "$BOLD" "$BIN/aborist-ledger checkpoint --json" "$(quote "$ABORIST_HOME/checkpoint.json")" "$PLAIN"
$BIN/aborist-ledger checkpoint --json > "$ABORIST_HOME/checkpoint.json"
cat "$ABORIST_HOME/checkpoint.json"
run $BIN/aborist-ledger replay --deep --checkpoint "$ABORIST_HOME/checkpoint.json"
run $BIN/aborist-ledger prove 3
run $BIN/aborist-ledger export --run "$first" -o "$ABORIST_HOME/bundle.json"
run $BIN/aborist-ledger verify-bundle "$ABORIST_HOME/bundle.json" --checkpoint "$ABORIST_HOME/checkpoint.json"
run $BIN/aborist-ledger report "$first" -o "$ABORIST_HOME/run.html"

cat <<EOT

The demo's ledger is $ABORIST_HOME/ledger.db and its audit page $ABORIST_HOME/run.html.
Without ABORIST_HOME, aborist keeps its data in your per-user directory
(\`$BIN/aborist config\` shows where and why).

Now ingest your own folder:

  $BIN/aborist ingest ~/Documents/handbook --shard handbook
  $BIN/aborist query 'Who approves exceptions?' --shard handbook
EOT
