#!/usr/bin/env bash
# Moves src/ into folders by layer (issue 18, docs/structure.md "Layout"):
#
#   src/core     the ground floor: results and errors, the quaternion/matrix
#                layer over cglm, the Tail_ name rule (built into the runtime
#                library, so it has no I/O either)
#   src/runtime  pose, skinning, the spring (no I/O, no JSON)
#   src/gltf     the document: load, parse, accessors, decompress, write, file saving
#   src/model    the decoded model: skin and meshes, up/forward, humanoid roles,
#                tail chains a skeleton has, clips, weld, mesh graph, thickness
#   src/passes   one stage per file: detect (appendage), chain + weights,
#                retarget, ground, bake, measure, fix, VRM springs, the thread pool
#   src/synth    synthetic characters and fixtures
#   src/cli      the command (unchanged)
#
# Layers, lowest first: core < runtime < gltf < model < passes < synth < cli
# (scripts/structure.py --check, the `layers` test, holds the tree to it).
#
# It `git mv`s the files and rewrites every reference to their paths in the
# files git tracks: #include lines, CMake, tests/mutants/list, scripts, docs.
# Run it from a clean checkout; it stages the result and commits nothing.
#
#   scripts/relayout.sh            apply (refuses on a dirty tree; says so
#                                  and exits 0 when already applied)
#   scripts/relayout.sh --dry-run  print the moves only
set -euo pipefail

cd "$(git rev-parse --show-toplevel)"
dry=0
case "${1:-}" in
    --dry-run) dry=1 ;;
    "") ;;
    *) echo "usage: scripts/relayout.sh [--dry-run]" >&2; exit 2 ;;
esac

# old path (under src/) -> new folder (under src/); the name stays.
MAP='
runtime/base.h          core
runtime/tbmath.h        core
runtime/result.c        core
runtime/names.c         core
offline/doc_base.c      gltf
offline/doc_internal.h  gltf
offline/doc_json.h      gltf
offline/gltf_load.c     gltf
offline/gltf_parse.c    gltf
offline/gltf_write.c    gltf
offline/accessor.c      gltf
offline/decompress.c    gltf
offline/decompress_internal.h gltf
offline/draco_shim.cc   gltf
offline/model.c         model
offline/model_axes.c    model
offline/humanoid.c      model
offline/tailchain.c     model
offline/clip.c          model
offline/weld.c          model
offline/geodesic.c      model
offline/medial.c        model
offline/mesh_internal.h model
offline/appendage.c     passes
offline/appendage_internal.h passes
offline/segdist.c       passes
offline/sort.c          passes
offline/chain.c         passes
offline/weights_internal.h passes
offline/retarget.c      passes
offline/retarget_doc.c  passes
offline/retarget_internal.h passes
offline/ground.c        passes
offline/bake.c          passes
offline/measure.c       passes
offline/stretch_hist.c  passes
offline/stretch_hist.h  passes
offline/fix.c           passes
offline/report_json.c   passes
offline/report_json.h   passes
offline/vrm_fit.c       passes
offline/vrm_fit_internal.h passes
offline/vrm_spring.c    passes
offline/pool.c          passes
offline/pool_internal.h passes
offline/synth.c         synth
offline/synth_clips.c   synth
offline/synth_mesh.c    synth
offline/synth_onto.c    synth
offline/synth_internal.h synth
offline/synth_json.c    synth
offline/synth_json.h    synth
'

# ---- where the tree stands ---------------------------------------------------
if [ -z "$(git ls-files src/offline)" ] && [ -f src/core/base.h ] && [ -n "$(git ls-files src/passes)" ]; then
    echo "relayout: already applied (src/core, src/passes exist, src/offline is gone); nothing to do"
    exit 0
fi
if [ -d src/core ] || [ -d src/gltf ] || [ -d src/model ] || [ -d src/passes ] || [ -d src/synth ]; then
    echo "relayout: src/ is half moved (a new folder exists beside src/offline); start from a clean main" >&2
    exit 1
fi
if [ "$dry" = 0 ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "relayout: the work tree has uncommitted changes; commit or stash them first" >&2
    exit 1
fi

# every file of src/offline must have a place; the runtime's files not listed stay
missing=0
while read -r old new; do
    [ -n "$old" ] || continue
    if [ ! -e "src/$old" ]; then
        echo "relayout: src/$old is in the map but not in the tree" >&2
        missing=1
    fi
done <<<"$MAP"
for f in $(git ls-files src/offline); do
    if ! grep -q "^${f#src/} " <<<"$MAP"; then
        echo "relayout: $f has no place in the map (scripts/relayout.sh, MAP): add it" >&2
        missing=1
    fi
done
[ "$missing" = 0 ] || exit 1

if [ "$dry" = 1 ]; then
    while read -r old new; do
        [ -n "$old" ] && echo "src/$old -> src/$new/$(basename "$old")"
    done <<<"$MAP"
    exit 0
fi

# ---- the moves ---------------------------------------------------------------
while read -r old new; do
    [ -n "$old" ] || continue
    mkdir -p "src/$new"
    git mv "src/$old" "src/$new/$(basename "$old")"
done <<<"$MAP"
rmdir src/offline 2>/dev/null || echo "relayout: src/offline still holds files git does not track; left as they are" >&2

# ---- the references ----------------------------------------------------------
MAP="$MAP" python3 - <<'PY'
import os, re, subprocess, sys

moves = []
for line in os.environ["MAP"].splitlines():
    if line.strip():
        old, new = line.split()
        moves.append((old, new + "/" + os.path.basename(old)))

files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout.decode().split("\0")
skip = {"scripts/relayout.sh"}
# "offline/chain.c", also inside "src/offline/chain.c" or ".../src/offline/chain.c";
# not "xoffline/chain.c" nor "offline/chain.cc"
pat = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(o) for o, _ in moves) + r")(?![\w])")
new_of = dict(moves)


def sub(m):
    return new_of[m.group(1)]


def edit(path, pairs, required=True):
    with open(path, encoding="utf-8") as f:
        t = f.read()
    for a, b in pairs:
        if a not in t:
            if required:
                sys.exit(f"relayout: {path}: expected text not found: {a!r}")
            continue
        t = t.replace(a, b)
    with open(path, "w", encoding="utf-8") as f:
        f.write(t)


changed = 0
for p in files:
    # every text file git tracks (binary and large files passed over)
    if not p or p in skip or not os.path.isfile(p) or os.path.islink(p) or os.path.getsize(p) > 4 << 20:
        continue
    try:
        with open(p, encoding="utf-8") as f:
            t = f.read()
    except UnicodeDecodeError:
        continue
    if "\0" in t:
        continue
    u = pat.sub(sub, t)
    if u != t:
        with open(p, "w", encoding="utf-8") as f:
            f.write(u)
        changed += 1
print(f"relayout: paths rewritten in {changed} files")

# The build: one source list per layer. The runtime library is core + runtime
# (no I/O, no JSON); the offline layers link it; the CLI sits on both.
edit("CMakeLists.txt", [
    ("find_package(Threads REQUIRED) # the offline layer's parallel for over clips (src/passes/pool.c)",
     "find_package(Threads REQUIRED) # the passes' parallel for over clips (src/passes/pool.c)"),
    ("# Runtime: pose, skinning, spring solver. No I/O, no JSON.\n"
     "file(GLOB TB_RUNTIME_SRC CONFIGURE_DEPENDS src/runtime/*.c)\n",
     "# Folders by layer, lowest first: core < runtime < gltf < model < passes <\n"
     "# synth < cli (docs/structure.md; the `layers` test checks the calls and\n"
     "# #includes between them). The runtime library: the ground floor (core)\n"
     "# and the runtime: pose, skinning, spring solver. No I/O, no JSON.\n"
     "file(GLOB TB_RUNTIME_SRC CONFIGURE_DEPENDS src/core/*.c src/runtime/*.c)\n"),
    ("# Offline: reads and writes files, edits documents. Links the runtime.\n"
     "file(GLOB TB_OFFLINE_SRC CONFIGURE_DEPENDS src/offline/*.c)\n",
     "# Offline: the glTF document, the decoded model, the passes, the synthetic\n"
     "# characters. Reads and writes files, edits documents. Links the runtime.\n"
     "file(GLOB TB_OFFLINE_SRC CONFIGURE_DEPENDS src/gltf/*.c src/model/*.c src/passes/*.c src/synth/*.c)\n"),
])

edit("README.md", [
    ("src/runtime/        pose, clip sampling, skinning, spring solver — no I/O, no JSON, no allocation per frame\n"
     "src/offline/        glTF reading/writing, document editing, decoded models, the offline passes\n",
     "src/core/           the ground floor: results and errors, quaternions/matrices over cglm, the Tail_ names\n"
     "src/runtime/        pose, clip sampling, skinning, spring solver — no I/O, no JSON, no allocation per frame\n"
     "src/gltf/           the glTF document: load, parse, accessors, decompress, write, file saving\n"
     "src/model/          the decoded model: skin and meshes, axes, humanoid roles, tail chains, clips, weld, mesh graph\n"
     "src/passes/         the offline passes, one stage per file: detect, chain/weights, retarget, ground, bake,\n"
     "                    measure, fix, VRM springs\n"
     "src/synth/          synthetic characters and test fixtures with ground truth\n"),
    ("The runtime library (`tailbone_runtime`) depends on nothing in the offline\nlayer;",
     "The runtime library (`tailbone_runtime`: src/core and src/runtime) depends\non nothing above it;"),
], required=False)
PY

git add -A src CMakeLists.txt
git add -u
echo "relayout: done; staged, not committed. Left mentions of the old folder (check by hand):"
git grep -n "src/offline\|\"offline/\|offline/[a-z_]*\.[ch]" -- ':!scripts/relayout.sh' || echo "  none"
