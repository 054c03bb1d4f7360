#!/bin/sh
# identity.sh BASE_TAILBONE NEW_TAILBONE [WORKDIR]
#
# Behaviour-identity check for speed work (#15): runs `detect --json` and
# `fix --no-bake` with two builds of the tool over every fixture on every
# body (`synth --onto BODY --fixture NAME`, as tests/test_fixtures.c makes
# them; the corpus bodies only when ../shared is there) and every GLB in
# ../shared/corpus, and compares the outputs byte for byte. The fixtures are
# generated once by BASE into WORKDIR (default /tmp/tb_identity) and reused,
# as are BASE's outputs.
# Prints one line per differing output and a count; exit status 1 when any
# output differs or one build fails where the other does not.
set -u
base=$1
new=$2
work=${3:-/tmp/tb_identity}
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${TB_SHARED:-$here/../shared}
mkdir -p "$work/in" "$work/out"

inputs=""
for body in synth:plain Xbot Soldier Robot; do
    case $body in
    Xbot) src=$shared/corpus/clips/Xbot_agree_run_walk.glb ;;
    Soldier) src=$shared/corpus/clips/threejs_Soldier_rexport.glb ;;
    Robot) src=$shared/corpus/clips/threejs_RobotExpressive.glb ;;
    *) src=$body ;;
    esac
    [ "$body" = synth:plain ] || [ -f "$src" ] || continue
    for fx in $("$base" synth --fixtures); do
        f=$work/in/$(echo "$body" | tr ':' '_')_$fx.glb
        [ -f "$f" ] || "$base" synth --onto "$src" --fixture "$fx" -o "$f" >/dev/null 2>&1 || continue
        inputs="$inputs $f"
    done
done
for f in "$shared"/corpus/*/*.glb; do
    [ -f "$f" ] && inputs="$inputs $f"
done

n=0
bad=0
mkdir -p "$work/out/base" "$work/out/new"
for f in $inputs; do
    n=$((n + 1))
    name=$(basename "$f" .glb)
    for tool in base new; do
        eval bin=\$$tool
        # BASE's outputs are kept from an earlier run with the same WORKDIR
        # (delete WORKDIR/out/base after changing BASE)
        [ "$tool" = base ] && [ -f "$work/out/base/$name.fix.txt" ] && continue
        # each build writes under its own folder with the same relative
        # names, so the outputs that name their file read the same
        (
            cd "$work/out/$tool" || exit 1
            "$bin" detect "$f" --json >"$name.detect.json" 2>&1
            echo "rc $?" >>"$name.detect.json"
            rm -f "$name.fix.glb" "$name.fix.json"
            "$bin" fix "$f" --no-bake -o "$name.fix.glb" --report "$name.fix.json" >"$name.fix.txt" 2>&1
            echo "rc $?" >>"$name.fix.txt"
        )
    done
    for kind in detect.json fix.txt fix.glb fix.json; do
        a=$work/out/base/$name.$kind
        b=$work/out/new/$name.$kind
        if [ -f "$a" ] || [ -f "$b" ]; then
            if ! cmp -s "$a" "$b"; then
                echo "DIFFERS: $name $kind"
                bad=$((bad + 1))
            fi
        fi
    done
done
echo "identity: $n inputs, $bad differing outputs"
[ "$bad" -eq 0 ]
