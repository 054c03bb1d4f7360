#!/usr/bin/env bash
# Measures the two FBX converters on the corpus (docs/blender.md, "FBX"):
# each animated GLB goes GLB -> FBX -> GLB through Blender (blender/fbx_convert.py,
# what `tailbone fix` runs) and through assimp (assimp-utils; ASCII FBX, as
# assimp 5.2 cannot read its own binary FBX back), and scripts/compare_skinned.mjs
# compares the result with the original in three.js. Then the repair leg:
# `tailbone fix X.fbx -o X.glb` on the Blender FBX, measured (torn samples).
# Blender ($TAILBONE_BLENDER, else blender on PATH) runs in the environment the
# CLI gives it (scripts/blender_env.sh: no PYTHON*, the system's folders first
# on PATH), whatever the caller's environment.
#   scripts/fbx_converters.sh OUTDIR [CLI]      (one JSON line per file and converter)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
convert() { "$root/scripts/blender_env.sh" "${TAILBONE_BLENDER:-blender}" -b --factory-startup --python-exit-code 1 \
              --python "$root/blender/fbx_convert.py" -- "$@"; }
out="${1:?OUTDIR}"; cli="${2:-$root/build/tailbone}"; c="$root/../shared/corpus"
mkdir -p "$out"
"$cli" fix "$c/characters/banter_Wolf.glb" --clips "$c/clips/Xbot_agree_run_walk.glb" -o "$out/wolf_xbot.glb" -q
for f in "$c/reference/khronos_Fox.glb" "$c/reference/quaternius_Fox.glb" "$c/clips/Xbot_agree_run_walk.glb" "$out/wolf_xbot.glb"; do
  b=$(basename "$f" .glb)
  s=$(date +%s)
  convert "$f" "$out/$b.blender.fbx" >"$out/$b.log" 2>&1 &&
  convert "$out/$b.blender.fbx" "$out/$b.blender.glb" >>"$out/$b.log" 2>&1
  echo "{\"file\":\"$b\",\"converter\":\"blender\",\"wall_s\":$(( $(date +%s) - s ))}"
  node "$root/scripts/compare_skinned.mjs" "$f" "$out/$b.blender.glb"
  if command -v assimp >/dev/null; then
    assimp export "$f" "$out/$b.assimp.fbx" -ffbxa >/dev/null 2>&1 &&
    assimp export "$out/$b.assimp.fbx" "$out/$b.assimp.glb" -fglb2 >/dev/null 2>&1
    echo "{\"file\":\"$b\",\"converter\":\"assimp\",\"rc\":$?}"
    [ -f "$out/$b.assimp.glb" ] && node "$root/scripts/compare_skinned.mjs" "$f" "$out/$b.assimp.glb"
  fi
  if [ "$b" = wolf_xbot ]; then  # the repair leg on an unrepaired character as FBX
    convert "$c/characters/banter_Wolf.glb" "$out/wolf.fbx" >/dev/null 2>&1
    "$cli" fix "$out/wolf.fbx" --clips "$c/clips/Xbot_agree_run_walk.glb" -o "$out/wolf_fixed_from_fbx.glb" -q
    "$cli" measure "$out/wolf_fixed_from_fbx.glb" --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps({'repair_leg': [(c.get('clip', c.get('name')), c['tail']['p99'], c['tail']['torn'], c['body']['torn']) for c in d['clips']]}))"
  fi
done
