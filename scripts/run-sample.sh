#!/usr/bin/env bash
# Sets up, builds the kiln tool and runs it on the bundled samples: `kiln inspect` on each
# samples/*.cast, `kiln bake` of all of them into <build>/samples.kiln, `kiln verify` of that
# blob, `kiln pose` of the walk cycle on the character (from the blob) at a few frames, and one
# line of `kiln_bench` on that clip. Exits non-zero if any step fails.
#
#   bash scripts/run-sample.sh         (KILN_BUILD_DIR picks the build directory; default build)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${KILN_BUILD_DIR:-build}

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target kiln_cli kiln_bench
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

blob="$build/samples.kiln"
echo "== kiln bake -v ${samples[*]} -o $blob"
"$kiln" bake -v "${samples[@]}" -o "$blob"
echo "== kiln verify $blob"
"$kiln" verify "$blob"
echo "== kiln pose $blob --clip walk --frames 0,7.5,15"
"$kiln" pose "$blob" --clip walk --frames 0,7.5,15
echo "== kiln_bench --quick --sample (the walk cycle on the character)"
"$build/bench/kiln_bench" --quick --sample
