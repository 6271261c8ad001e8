#!/usr/bin/env bash
# `make demo`: the main job on the embedded default (SQLite ledger, extractive answerer),
# over Python's own language reference. Every command below is one a user would type.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export ABORIST_HOME="${ABORIST_HOME:-$PWD/.aborist-demo}"
unset ABORIST_DB_URL ABORIST_LLM_BASE_URL
rm -rf "$ABORIST_HOME"

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

run $BIN/aborist-ledger migrate
run $BIN/python scripts/export_pyref.py "$ABORIST_HOME/python-reference"
run $BIN/aborist ingest "$ABORIST_HOME/python-reference" --shard python-reference

run $BIN/aborist query "What does the nonlocal statement do?" --shard python-reference
run $BIN/aborist query "When is the else clause of a for loop executed?" --mode quote
run $BIN/aborist query "What is the airspeed velocity of an unladen swallow?"
# The same question again: served from the answer cache, and recorded as its own run.
run $BIN/aborist query "What does the nonlocal statement do?" --shard python-reference

run $BIN/aborist runs --limit 5
first=$($BIN/aborist runs --limit 4 --json | $BIN/python -c 'import json,sys; print(json.load(sys.stdin)["runs"][-1]["run_id"])')
run $BIN/aborist show "$first"

say "$BIN/aborist-ledger checkpoint --json > $ABORIST_HOME/checkpoint.json"
$BIN/aborist-ledger checkpoint --json > "$ABORIST_HOME/checkpoint.json"
cat "$ABORIST_HOME/checkpoint.json"
run $BIN/aborist-ledger replay --deep --checkpoint "$ABORIST_HOME/checkpoint.json"
run $BIN/aborist-ledger prove 3
run $BIN/aborist-ledger export --run "$first" -o "$ABORIST_HOME/bundle.json"
run $BIN/aborist-ledger verify-bundle "$ABORIST_HOME/bundle.json" --checkpoint "$ABORIST_HOME/checkpoint.json"
run $BIN/aborist-ledger report "$first" -o "$ABORIST_HOME/run.html"
printf '\nThe ledger is at %s/ledger.db, the audit page at %s/run.html;\ntry: %s/aborist-ledger events --limit 20\n' "$ABORIST_HOME" "$ABORIST_HOME" "$BIN"
