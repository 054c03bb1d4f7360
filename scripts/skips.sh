#!/usr/bin/env bash
# Prints what was skipped for want of ../shared or a tool (logged by
# tests/support.c, tests/node/corpus.mjs and tests/blender/skip.sh into each
# build's skips.log), so a skip never reads as a pass. Lines "X: test
# skipped, …" are whole tests; "PROGRAM: missing FILE" is a corpus file a
# test program looked for and went on without (a test or part of one left
# out). Usage: scripts/skips.sh LOG...
n=0; whole=0; unchecked=0
for log in "$@"; do
  [ -s "$log" ] || continue
  while IFS= read -r line; do
    echo "  skipped: $line"; n=$((n + 1))
    case "$line" in
      *": test skipped"*) whole=$((whole + 1)) ;;
      *" not checked "*) unchecked=$((unchecked + 1)) ;; # a figures block left to --slow
    esac
  done < <(sort -u "$log")
done
if [ "$n" -gt 0 ]; then
  echo "skips: $whole whole test(s) skipped, $unchecked figures block(s) not checked, $((n - whole - unchecked)) absent corpus file lookup(s) (TB_REQUIRE_CORPUS=1 makes a missing corpus file fail)"
else
  echo "no test skipped"
fi
