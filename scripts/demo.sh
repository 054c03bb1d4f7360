#!/usr/bin/env bash
# The demo: make a broken rig (a fox-like character whose tail is weighted
# to the left shin and both thighs), show what tailbone sees, repair it and
# measure the result. Everything it needs is generated here.
set -euo pipefail
tb=${1:-build/tailbone}
out=${DEMO_DIR:-out/demo}
mkdir -p "$out"
has() { "$tb" --help | grep -qE "^  $1 "; }

echo "== 1. a synthetic character rigged the way auto-riggers get it wrong"
"$tb" synth --variant tail_leg -o "$out/fox_broken.glb" --truth "$out/fox_truth.json"
echo "   wrote $out/fox_broken.glb"
echo
echo "== 2. tailbone info"
"$tb" info --no-tree "$out/fox_broken.glb"
if has detect; then
  echo
  echo "== 3. tailbone detect"
  "$tb" detect "$out/fox_broken.glb"
fi
if has fix; then
  echo
  echo "== 4. tailbone fix"
  "$tb" fix "$out/fox_broken.glb" -o "$out/fox_fixed.glb" --report "$out/fox_report.json"
  echo "   wrote $out/fox_fixed.glb and $out/fox_report.json"
fi
if has measure; then
  echo
  echo "== 5. tailbone measure --compare (SPEC C table, Walk)"
  "$tb" measure "$out/fox_broken.glb" --compare --clip Walk
fi
