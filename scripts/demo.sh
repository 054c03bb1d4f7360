#!/usr/bin/env bash
# The demo: make a broken rig (a fox-like character whose tail the "rigger"
# weighted to the left shin and both thighs), show what tailbone sees,
# repair it, and measure before and after. Everything is generated here.
set -euo pipefail
tb=${1:-build/tailbone}
out=${DEMO_DIR:-out/demo}
mkdir -p "$out"

echo "== 1. a synthetic character rigged the way auto-riggers get it wrong"
"$tb" synth --variant tail_leg -o "$out/fox_broken.glb" --truth "$out/fox_truth.json"
echo "   wrote $out/fox_broken.glb"
echo
echo "== 2. tailbone info"
"$tb" info --no-tree "$out/fox_broken.glb"
echo
echo "== 3. tailbone detect (what would be done, and why)"
"$tb" detect "$out/fox_broken.glb"
echo
echo "== 4. tailbone fix (detect, chain, bake the spring tail into every clip, report)"
"$tb" fix "$out/fox_broken.glb" -o "$out/fox_fixed.glb" --report "$out/fox_report.json"
echo "   report: $out/fox_report.json"
echo
echo "== 5. tailbone measure --compare: the SPEC C table on Walk"
"$tb" measure "$out/fox_broken.glb" --compare --clip Walk
echo
echo "== 6. tailbone preview: both side by side in one HTML page, stretch painted on the skin"
if "$tb" preview "$out/fox_broken.glb" "$out/fox_fixed.glb" -o "$out/fox_preview.html" >/dev/null; then
  echo "   preview page: $(cd "$out" && pwd)/fox_preview.html ($(( $(wc -c < "$out/fox_preview.html") / 1024 )) KiB; open it in a browser, no server needed)"
else
  echo "   (no preview page: see the line above)"
fi
echo
echo "Open $out/fox_broken.glb and $out/fox_fixed.glb in any glTF viewer and play Walk."
