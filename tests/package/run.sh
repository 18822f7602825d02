#!/usr/bin/env bash
# Packaging check: installs a configured Kiln build into a temporary prefix, then builds and
# runs the consumer in this directory twice, through find_package(kiln) and through
# `pkg-config --cflags --libs kiln`.
#
#   bash tests/package/run.sh <kiln-build-dir>
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:?usage: run.sh <kiln-build-dir>}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

cmake --install "$build" --prefix "$prefix" >/dev/null
echo "package: installed $(find "$prefix" -type f | wc -l) files into a temporary prefix"

# 1) CMake: find_package(kiln) -> kiln::kiln (and kiln::baker when the baker was built).
cmake -S "$here" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/kiln_consumer"
if [ -x "$tmp/consumer/kiln_consumer_baker" ]; then "$tmp/consumer/kiln_consumer_baker"; fi
echo "package: find_package(kiln) consumer ok"

# 1b) Bakes in the build graph: kiln_bake() and kiln_bake_directory() on a copy of the samples,
# with Ninja and with Makefiles. Touching one source rebakes exactly the blobs that read it; a
# build tree that starts empty with a warm cache bakes nothing and gets the same bytes.
if [ -x "$prefix/bin/kiln" ]; then
  kiln="$prefix/bin/kiln"
  src="$tmp/samples"
  mkdir -p "$src"
  cp "$here/../../samples/"*.cast "$src/"
  blobs=(level.kiln blobs/character.kiln blobs/character_walk.kiln blobs/world.kiln)
  # The files in $1 whose modification time differs from the snapshot in $2 (one per line).
  snapshot() { local f; for f in "${blobs[@]}"; do echo "$f $(stat -c %Y.%y "$1/$f")"; done; }
  changed() { snapshot "$1" | { diff "$2" - || true; } | sed -n 's/^> \([^ ]*\) .*/\1/p' | sort | tr '\n' ' '; }
  generators=("Unix Makefiles")
  if command -v ninja >/dev/null 2>&1; then generators=(Ninja "Unix Makefiles"); fi
  for gen in "${generators[@]}"; do
    b="$tmp/bake-${gen// /-}"
    cache="$tmp/cache-${gen// /-}"
    cmake -S "$here" -B "$b" -G "$gen" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
      -DKILN_SAMPLES_DIR="$src" -DKILN_BAKE_CACHE="$cache" >/dev/null
    cmake --build "$b" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    for blob in "${blobs[@]}"; do "$kiln" verify "$b/$blob" >/dev/null; done
    # The depfile the generator reads names the input.
    grep -q "^  $src/world.cast\$" "$b/blobs/world.kiln.d" ||
      { echo "package ($gen): blobs/world.kiln.d does not name $src/world.cast" >&2; exit 1; }
    # Nothing to do when nothing changed.
    snapshot "$b" >"$tmp/before"
    cmake --build "$b" >"$tmp/log" 2>&1
    if grep -q "Baking" "$tmp/log"; then echo "package ($gen): a second build baked again:" >&2; cat "$tmp/log" >&2; exit 1; fi
    # Touch the world: its own blob and the level rebake, the character's blobs do not.
    sleep 1
    touch "$src/world.cast"
    cmake --build "$b" >"$tmp/log" 2>&1
    got=$(changed "$b" "$tmp/before")
    if [ "$got" != "blobs/world.kiln level.kiln " ]; then
      echo "package ($gen): touching world.cast rebaked '$got', expected 'blobs/world.kiln level.kiln '" >&2
      cat "$tmp/log" >&2
      exit 1
    fi
    # A new, empty build tree with the warm cache: every blob is a cache hit, byte for byte.
    cmake -S "$here" -B "$b-2" -G "$gen" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
      -DKILN_SAMPLES_DIR="$src" -DKILN_BAKE_CACHE="$cache" >/dev/null
    cmake --build "$b-2" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    hits=$(grep -c "cache hit" "$tmp/log" || true)
    if [ "$hits" -ne "${#blobs[@]}" ] || grep -q "cache miss" "$tmp/log"; then
      echo "package ($gen): $hits cache hits of ${#blobs[@]} bakes in an empty build tree:" >&2
      cat "$tmp/log" >&2
      exit 1
    fi
    for blob in "${blobs[@]}"; do cmp "$b/$blob" "$b-2/$blob"; done
    echo "package: kiln_bake() with $gen: ${#blobs[@]} blobs; touching one input rebaked only its 2; warm cache: ${#blobs[@]} hits"
  done
fi

# 2) pkg-config: kiln.pc is relocatable, so the temporary prefix works as is.
pc=$(find "$prefix" -name kiln.pc -print -quit)
[ -n "$pc" ] || { echo "package: kiln.pc was not installed" >&2; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs kiln)
echo "package: pkg-config --cflags --libs kiln -> $flags"
# shellcheck disable=SC2086 # word splitting of the flags is intended
${CC:-cc} -std=c11 -Wall -Wextra -Werror -o "$tmp/kiln_consumer_pc" "$here/main.c" $flags
LD_LIBRARY_PATH="$(pkg-config --variable=libdir kiln)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/kiln_consumer_pc"
echo "package: pkg-config consumer ok"
