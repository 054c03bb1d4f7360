#!/usr/bin/env bash
# Installs what tailbone needs to build and test on a Debian machine:
# system packages (only those missing) and the pinned npm tools.
# Safe to run again: it does nothing when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# libdraco-dev, libmeshoptimizer-dev: compressed glTF input (optional at build
# time; installed here so the tests cover it). groff-base: the man page check.
for p in build-essential cmake pkg-config libjansson-dev libcglm-dev libcmocka-dev \
         clang libclang-rt-14-dev nodejs npm libdraco-dev libmeshoptimizer-dev groff-base \
         emscripten chromium; do
  have_pkg "$p" || need+=("$p")
done
# Blender: the add-on's test and FBX in `tailbone fix` (docs/blender.md); assimp-utils:
# the other FBX converter, measured against it (scripts/fbx_converters.sh)
for p in blender assimp-utils; do
  have_pkg "$p" || command -v "${p%-utils}" >/dev/null || need+=("$p")
done
# nodejs from another source may provide node/npm without the Debian package.
if command -v node >/dev/null && command -v npm >/dev/null; then
  need=("${need[@]/nodejs}"); need=("${need[@]/npm}")
fi
pkgs=()
for p in "${need[@]}"; do [ -n "$p" ] && pkgs+=("$p"); done
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "setup: installing ${pkgs[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi

# npm tools used by tests, pinned by package-lock.json.
if [ ! -d node_modules/gltf-validator ] || [ ! -d node_modules/three ] || [ ! -d node_modules/@gltf-transform/cli ] \
   || [ ! -d node_modules/@pixiv/three-vrm ] || [ ! -d node_modules/esbuild ] || [ ! -d node_modules/puppeteer-core ] \
   || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm tools (gltf-validator, three, @gltf-transform/cli, @pixiv/three-vrm, esbuild, puppeteer-core)"
  npm ci --no-audit --no-fund --loglevel=error
fi
