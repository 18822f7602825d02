#!/usr/bin/env bash
# Sets up, builds everything with warnings as errors, and runs the whole test suite.
#
#   bash scripts/test.sh               (KILN_BUILD_DIR picks the build directory; default build)
#   bash scripts/test.sh -R cast       (extra arguments go to ctest)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${KILN_BUILD_DIR:-build}
jobs=$(nproc)

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_WERROR=ON >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
ctest --output-on-failure -j "$jobs" "$@"
