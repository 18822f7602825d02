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
