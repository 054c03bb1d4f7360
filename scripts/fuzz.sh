#!/usr/bin/env bash
# Runs a libFuzzer target for a fixed time on a seed corpus made here.
# usage: scripts/fuzz.sh FUZZER SECONDS
set -euo pipefail
fuzzer=$1
seconds=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(dirname "$fuzzer")/run-$(basename "$fuzzer")
rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
# Seeds: small valid documents of each shape the reader handles.
printf '{"asset":{"version":"2.0"}}' >"$work/seeds/min.gltf"
printf '{"asset":{"version":"2.0"},"buffers":[{"byteLength":12,"uri":"data:application/octet-stream;base64,AAAAAAAAgD8AAAAA"}],"bufferViews":[{"buffer":0,"byteLength":12}],"accessors":[{"bufferView":0,"componentType":5126,"count":1,"type":"VEC3","min":[0,1,0],"max":[0,1,0]}],"meshes":[{"primitives":[{"attributes":{"POSITION":0},"mode":0}]}],"nodes":[{"mesh":0,"children":[1]},{"name":"Hips","rotation":[0,0,0,1]}],"scenes":[{"nodes":[0]}],"scene":0}' >"$work/seeds/point.gltf"
if [ "$(basename "$fuzzer")" = fuzz_fix ]; then
  # fuzz_fix: tiny characters with a tail (350 vertices, one 5-key clip,
  # ~21 kB): thousands of whole jobs a minute. fuzz_seeds fails when a seed
  # no longer reaches the bake, so the fuzzer never silently tests only the loader.
  "$(dirname "$fuzzer")/fuzz_seeds" "$work/seeds"
elif [ -x "$root/build/tailbone" ]; then
  if "$root/build/tailbone" synth --list >/dev/null 2>&1; then
    "$root/build/tailbone" synth --variant "$("$root/build/tailbone" synth --list | head -1)" -o "$work/seeds/synth.glb" >/dev/null 2>&1 || true
  fi
  "$root/build/tailbone" copy -q "$work/seeds/point.gltf" "$work/seeds/point.glb" >/dev/null 2>&1 || true
fi
echo "fuzz: running $(basename "$fuzzer") for ${seconds}s"
# -rss_limit_mb keeps a pathological allocation from looking like a hang.
"$fuzzer" "$work/corpus" "$work/seeds" -max_total_time="$seconds" -max_len=$(( $(wc -c <"$(ls -S "$work"/seeds/* | head -1)") + 4096 )) \
  -rss_limit_mb=2048 -timeout=20 -artifact_prefix="$work/artifacts/" -print_final_stats=1 2>"$work/log" || {
  tail -50 "$work/log"
  echo "fuzz: FAILED (artifacts in $work/artifacts)"
  exit 1
}
grep -E "stat::number_of_executed_units|Done" "$work/log" | tail -2
echo "fuzz: no finding"
