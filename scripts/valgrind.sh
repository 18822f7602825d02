#!/usr/bin/env bash
# Runs the whole ctest suite of a configured build under valgrind memcheck: every test
# executable, and every process it starts (Criterion runs each test in a child process,
# which valgrind follows with --trace-children). A test fails when it fails on its own or
# when any of its processes reports a memory error or a leak.
#
#   bash scripts/valgrind.sh [build-dir] [ctest arguments...]     (default build dir: build)
#
# The build directory is reconfigured with KILN_TEST_LAUNCHER pointing at this script (which
# only rewrites the ctest files) and reset afterwards. Logs: <build>/valgrind/.
set -euo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")

if [ "${1:-}" = "--exec" ]; then
  # Launcher mode: --exec <log-root> <command> [args...]
  logroot=$2; shift 2
  mkdir -p "$logroot"
  logs=$(mktemp -d "$logroot/$(basename "$1").XXXXXX")
  set +e
  valgrind --trace-children=yes --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --num-callers=30 \
    --suppressions="$(dirname "$self")/valgrind.supp" \
    --log-file="$logs/%p.log" "$@"
  rc=$?
  set -e
  bad=$(grep -L 'ERROR SUMMARY: 0 errors' "$logs"/*.log || true)
  if [ -n "$bad" ]; then
    for f in $bad; do
      echo "---- valgrind: $f"
      cat "$f"
    done
    echo "valgrind: memory errors or leaks in $(echo "$bad" | wc -l) process(es) of: $*" >&2
    [ "$rc" -ne 0 ] || rc=1
  fi
  exit "$rc"
fi

command -v valgrind >/dev/null || { echo "valgrind not found (bash scripts/setup.sh --valgrind)" >&2; exit 1; }
build=$(cd "${1:-build}" && pwd)
shift || true
[ -f "$build/CMakeCache.txt" ] || { echo "valgrind: $build is not a configured build directory" >&2; exit 1; }
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")

rm -rf "$build/valgrind"
mkdir -p "$build/valgrind"

# Corpus tests read files of up to 63 MB, which take many minutes each under valgrind: by
# default they see no corpus and skip. The fuzz replay still reads every corpus file up to
# 1 MiB (its paths are fixed at configure time). KILN_VALGRIND_SHARED_DIR=<dir> opts back in.
test_shared_dir="${KILN_VALGRIND_SHARED_DIR:-$build/valgrind/no-shared-dir}"
echo "valgrind: tests see KILN_SHARED_DIR=$test_shared_dir"
reset() { cmake -S "$src" -B "$build" -DKILN_TEST_LAUNCHER= >/dev/null; }
trap reset EXIT
cmake -S "$src" -B "$build" "-DKILN_TEST_LAUNCHER=bash;$self;--exec;$build/valgrind" >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build"
# KILN_TEST_QUICK: tests that sweep the large benchmark clips keep one small clip (memcheck
# runs 20-50x slower; the normal, sanitizer and scalar runs keep full coverage).
KILN_TEST_QUICK=1 KILN_SHARED_DIR="$test_shared_dir" ctest --output-on-failure -j "$(nproc)" "$@"
# The importers' corpus tests are small (every bad/ file's outcome, every good case, the byte
# sweeps cut to two files by KILN_TEST_QUICK): they run again with the real corpus, so those
# outcomes hold under memcheck too.
shared=$(sed -n 's/^KILN_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt")
if [ -z "${KILN_VALGRIND_SHARED_DIR:-}" ] && [ -d "$shared/corpus" ]; then
  echo "valgrind: the importer tests again, with KILN_SHARED_DIR=$shared"
  KILN_TEST_QUICK=1 KILN_SHARED_DIR="$shared" ctest --output-on-failure -j "$(nproc)" -R '^test_import_' "$@"
fi
