#!/usr/bin/env bash
# `tailbone fix` with FBX in and out (Blender as converter), on the corpus Wolf:
#   the Wolf as FBX -> fix --clips Xbot -> FBX, and -> GLB; the FBX result
#   read back to GLB and compared in three.js with the GLB result; Khronos
#   validator and `tailbone measure` (0 torn) on both; a missing converter
#   refused with a message naming what to install; the FBX -> GLB run made
#   under a hostile Python environment that tailbone must keep from Blender.
#   tests/blender/fbx_cli.sh CLI TMPDIR        (exit 77: skipped, with the reason)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cli="$1"; tmp="$2"
. "$root/tests/blender/skip.sh"
blender="${BLENDER:-$(command -v blender || true)}"
if [ -z "$blender" ]; then tb_skip blender_fbx_cli "blender not found (scripts/setup.sh installs Debian's; or set BLENDER)"; fi
shared="${TB_SHARED_DIR:-$root/../shared}"
wolf="$shared/corpus/characters/banter_Wolf.glb"; xbot="$shared/corpus/clips/Xbot_agree_run_walk.glb"
tb_need_corpus blender_fbx_cli "$wolf" "$xbot"
if [ ! -d "$root/node_modules/gltf-validator" ]; then tb_skip blender_fbx_cli "node_modules/gltf-validator absent (npm ci)"; fi
export TAILBONE_BLENDER="$blender"
mkdir -p "$tmp"; cd "$tmp"; rm -f wolf*.fbx wolf*.glb
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
convert() { "$root/scripts/blender_env.sh" "$blender" -b --factory-startup --python-exit-code 1 --python "$root/blender/fbx_convert.py" -- "$1" "$2" >convert.log 2>&1 || { tail -5 convert.log; return 1; }; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# a missing converter: one line saying what to install, nothing written
if TAILBONE_BLENDER=/nonexistent/blender "$cli" fix "$wolf" -o wolf_none.fbx 2>err.txt; then bad "fix without a converter succeeded"
elif grep -q "apt install blender" err.txt && [ ! -e wolf_none.fbx ]; then ok "no converter: $(cat err.txt)"
else bad "no converter: unexpected message: $(cat err.txt)"; fi

convert "$wolf" wolf.fbx && ok "the Wolf exported to FBX by Blender" || bad "Wolf to FBX"
"$cli" fix wolf.fbx --clips "$xbot" -o wolf_fixed.fbx --report fbx.json >fix_fbx.txt && ok "tailbone fix wolf.fbx -o wolf_fixed.fbx" || bad "fix fbx -> fbx: $(tail -3 fix_fbx.txt)"
# FBX -> GLB under a hostile Python environment, which tailbone must keep
# from Blender (src/cli/fbx.c): a PYTHONPATH whose numpy fails to import, a
# PYTHONHOME, and a fake Python prefix (python3.8..3.14 with their os.py
# landmarks) first on PATH; given to Blender as is, each breaks its Python.
hostile="$tmp/hostile"; rm -rf "$hostile"; mkdir -p "$hostile/pp/numpy" "$hostile/prefix/bin"
echo "raise ImportError('the PYTHONPATH numpy reached Blender')" > "$hostile/pp/numpy/__init__.py"
for m in 8 9 10 11 12 13 14; do
  printf '#!/bin/sh\nexit 1\n' > "$hostile/prefix/bin/python3.$m"; chmod +x "$hostile/prefix/bin/python3.$m"
  mkdir -p "$hostile/prefix/lib/python3.$m"; : > "$hostile/prefix/lib/python3.$m/os.py"
done
PYTHONPATH="$hostile/pp" PYTHONHOME="$hostile/prefix" PATH="$hostile/prefix/bin:$PATH" \
  "$cli" fix wolf.fbx --clips "$xbot" -o wolf_fixed.glb --report glb.json >fix_glb.txt 2>&1 \
  && ok "tailbone fix wolf.fbx -o wolf_fixed.glb (PYTHONPATH, PYTHONHOME and a fake python3.X first on PATH)" \
  || bad "fix fbx -> glb under a hostile Python environment: $(tail -3 fix_glb.txt)"
[ "$(json glb.json "d['message']")" = "1 tail chain(s) added, 0 appendage(s) bound rigidly" ] && ok "the tail found in the FBX: $(json glb.json "d['message']")" || bad "no tail chain from the FBX: $(json glb.json "d['message']")"
convert wolf_fixed.fbx wolf_back.glb && ok "wolf_fixed.fbx read back to GLB" || bad "FBX result unreadable"

for f in wolf_fixed.glb wolf_back.glb; do
  v=$(node "$root/tests/blender/validate.mjs" "$f")
  [ "$(echo "$v" | python3 -c 'import json,sys; print(json.load(sys.stdin)["errors"])')" = 0 ] && ok "$f: Khronos validator: no error" || bad "$f: validator: $v"
  "$cli" measure "$f" --json >m.json
  r=$(json m.json "' '.join('%s:%d/%d' % (c.get('clip', c.get('name', '?')), c['tail']['torn_samples'], c['tail_vertices']) for c in d['clips'])")
  n=$(json m.json "len(d['clips'])"); torn=$(json m.json "sum(c['tail']['torn_samples'] + c['body']['torn_samples'] for c in d['clips'])")
  tv=$(json m.json "min(c['tail_vertices'] for c in d['clips'])")
  [ "$n" -ge 3 ] && [ "$torn" = 0 ] && [ "$tv" -gt 100 ] && ok "$f: tailbone measure: $n clips, 0 torn, >= $tv tail vertices" || bad "$f: measure: $r"
done
# the FBX result plays as the GLB result does (three.js)
node "$root/scripts/compare_skinned.mjs" wolf_fixed.glb wolf_back.glb >cmp.json
worst=$(json cmp.json "max(c['p99'] for c in d['per_clip'].values() if isinstance(c, dict))")
missing=$(json cmp.json "sum(1 for c in d['per_clip'].values() if not isinstance(c, dict))")
echo "compare: $(cat cmp.json)"
python3 -c "import sys; sys.exit(0 if float('$worst') < 0.001 and $missing == 0 else 1)" \
  && ok "FBX result vs GLB result in three.js: every clip there, worst p99 distance $worst H (< 0.001)" \
  || bad "FBX result differs from the GLB result: worst p99 $worst H, $missing clip(s) missing"
exit $fail
