#!/bin/sh
# Installs the build into a staging prefix, then builds and runs a tiny
# consumer against it twice: with CMake's find_package(tailbone) (shared,
# static and runtime-only targets) and with pkg-config --cflags --libs
# tailbone. Also checks the installed CLI and man page.
# usage: tests/consumer/run.sh BUILD_DIR SCRATCH_DIR
set -eu
build=$1
scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
stage=$scratch/stage
cmake --install "$build" --prefix "$stage" >/dev/null
for f in bin/tailbone include/tailbone/tailbone.h include/tailbone/gltf.h share/man/man1/tailbone.1; do
  [ -e "$stage/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
lib=$(ls -d "$stage"/lib* | head -1)
for f in libtailbone.so libtailbone.a libtailbone_runtime.a pkgconfig/tailbone.pc cmake/tailbone/tailboneConfig.cmake; do
  [ -e "$lib/$f" ] || { echo "FAIL: $lib/$f not installed"; exit 1; }
done
"$stage/bin/tailbone" --version

# CMake package
cmake -S "$here" -B "$scratch/cm" -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/cm" >/dev/null
LD_LIBRARY_PATH="$lib" "$scratch/cm/consumer"
"$scratch/cm/consumer_static"
"$scratch/cm/consumer_runtime"
# the shared consumer really uses the staged libtailbone.so
LD_LIBRARY_PATH="$lib" ldd "$scratch/cm/consumer" | grep -q "$lib/libtailbone.so" \
  || { echo "FAIL: consumer does not load the staged libtailbone.so"; exit 1; }

# pkg-config: relocatable .pc (prefix from its own folder)
export PKG_CONFIG_PATH="$lib/pkgconfig"
[ "$(pkg-config --modversion tailbone)" = "$(sed -n 's/^Version: //p' "$lib/pkgconfig/tailbone.pc")" ]
cflags=$(pkg-config --cflags tailbone)
libs=$(pkg-config --libs tailbone)
echo "pkg-config: $cflags | $libs"
cc -std=c11 $cflags "$here/main.c" -o "$scratch/pc_consumer" $libs
LD_LIBRARY_PATH="$lib" "$scratch/pc_consumer"
cc -std=c11 $cflags "$here/main.c" -o "$scratch/pc_consumer_static" "$lib/libtailbone.a" \
   $(pkg-config --libs --static tailbone | sed 's/-ltailbone//')
"$scratch/pc_consumer_static"
echo "install_consumer: ok"
