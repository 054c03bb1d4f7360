#!/usr/bin/env bash
# Prints the tests skipped for want of ../shared (logged by tests/support.c
# and tests/node/corpus.mjs into each build's skips.log), so a skip never
# reads as a pass. Usage: scripts/skips.sh LOG...
n=0
for log in "$@"; do
  [ -s "$log" ] || continue
  while IFS= read -r line; do echo "  skipped: $line"; n=$((n + 1)); done < <(sort -u "$log")
done
if [ "$n" -gt 0 ]; then
  echo "$n test(s) skipped for missing corpus files (TB_REQUIRE_CORPUS=1 makes them fail)"
else
  echo "no test skipped"
fi
