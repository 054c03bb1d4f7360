#!/usr/bin/env bash
# Runs Blender in the environment `tailbone fix x.fbx` gives it
# (src/cli/fbx.c, tb__child_env): no PYTHON* variable (PYTHONPATH,
# PYTHONHOME, ...), PATH = Blender's own folder, the system's program
# folders, then the caller's other folders, everything else as it was. A
# Blender built on the system's Python reads PYTHONPATH / PYTHONHOME and takes
# its prefix from the first pythonX.Y on PATH, so a pyenv or virtualenv Python
# of the same version ahead on PATH breaks its importers. Used by
# scripts/fbx_converters.sh and tests/blender/*.sh; test_fbx_env checks that
# this script and the CLI give Blender the same PATH and no PYTHON* variable.
#   scripts/blender_env.sh BLENDER [ARGS...]
set -euo pipefail
prog="${1:?usage: blender_env.sh BLENDER [ARGS...]}"; shift
case "$prog" in
  */*) ;;
  *) found="$(command -v "$prog" || true)"
     [ -n "$found" ] || { echo "blender_env.sh: $prog is not on PATH" >&2; exit 127; }
     prog="$found" ;;
esac
own="${prog%/*}"
path="${own:+$own:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IFS=: read -r -a inherited <<< "${PATH:-}"
for d in "${inherited[@]}"; do
  [ -n "$d" ] || continue
  case ":$path:" in *":$d:"*) ;; *) path="$path:$d" ;; esac
done
for v in $(compgen -e); do
  case "$v" in PYTHON*) unset "$v" ;; esac
done
export PATH="$path"
exec "$prog" "$@"
