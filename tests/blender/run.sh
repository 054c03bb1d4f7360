#!/usr/bin/env bash
# CTest entry of the Blender add-on test: builds the add-on zip, runs
# tests/blender/test_addon.py in Blender 3.4+ headless. Exit 77 (skipped) with
# a message when Blender, node's validator or ../shared is missing.
#   tests/blender/run.sh CLI TMPDIR [SHOT.png]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cli="$1"; tmp="$2"; shot="${3:-}"
. "$root/tests/blender/skip.sh"
blender="${BLENDER:-$(command -v blender || true)}"
if [ -z "$blender" ]; then tb_skip blender_addon "blender not found (scripts/setup.sh installs Debian's; or set BLENDER)"; fi
wolf="${TB_SHARED_DIR:-$root/../shared}/corpus/characters/banter_Wolf.glb"
tb_need_corpus blender_addon "$wolf"
if [ ! -d "$root/node_modules/gltf-validator" ]; then tb_skip blender_addon "node_modules/gltf-validator absent (npm ci)"; fi
mkdir -p "$tmp"
rm -rf "$tmp/user"
python3 "$root/blender/make_zip.py" "$tmp/tailbone_blender.zip" >/dev/null
# a private user folder: the install must not touch the user's own Blender
export BLENDER_USER_SCRIPTS="$tmp/user/scripts" BLENDER_USER_CONFIG="$tmp/user/config"
# Blender in the environment the CLI gives it (scripts/blender_env.sh)
exec "$root/scripts/blender_env.sh" "$blender" -b --factory-startup --python-exit-code 1 --python "$root/tests/blender/test_addon.py" -- \
  "$tmp/tailbone_blender.zip" "$cli" "$wolf" "$tmp" $shot
