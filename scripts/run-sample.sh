#!/usr/bin/env bash
# Sets up, builds the kiln tool and runs it on the bundled samples: `kiln inspect` on each
# samples/*.cast, then (when the tool has the commands) `kiln bake` of all of them into
# <build>/samples.kiln and `kiln verify` of that blob. Exits non-zero if any step fails.
#
#   bash scripts/run-sample.sh         (KILN_BUILD_DIR picks the build directory; default build)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${KILN_BUILD_DIR:-build}

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target kiln_cli
kiln="$build/kiln"

shopt -s nullglob
samples=(samples/*.cast)
if [ "${#samples[@]}" -eq 0 ]; then
  echo "run-sample: no samples/*.cast found" >&2
  exit 1
fi
for f in "${samples[@]}"; do
  echo "== kiln inspect $f"
  "$kiln" inspect "$f"
done
echo "run-sample: ${#samples[@]} samples inspected"

if "$kiln" bake --help >/dev/null 2>&1 && "$kiln" verify --help >/dev/null 2>&1; then
  blob="$build/samples.kiln"
  echo "== kiln bake -v ${samples[*]} -o $blob"
  "$kiln" bake -v "${samples[@]}" -o "$blob"
  echo "== kiln verify $blob"
  "$kiln" verify "$blob"
fi
