#!/usr/bin/env bash
# Fuzz smoke: builds every fuzz/fuzz_*.c target with clang + libFuzzer (ASan + UBSan) and runs
# each one for a bounded time from the seeds, failing on any crash, leak, timeout or OOM.
#
#   bash fuzz/run.sh                      # ~75 s of fuzzing, split between the targets
#   KILN_FUZZ_SECONDS=600 bash fuzz/run.sh
#
# Environment:
#   KILN_FUZZ_SECONDS    total fuzzing time over all targets (default 75)
#   KILN_FUZZ_BUILD_DIR  build directory (default build-fuzz); its corpus/ keeps what was
#                        found, so later runs start from there
#   KILN_SHARED_DIR      the shared directory holding corpus/ (default ../shared)
#   CC                   clang binary (default clang)
# Seeds (per target, in <build>/seeds/): see below. Inputs are capped at 64 KiB.
# A crash leaves its input in <build>/artifacts/ (rerun: <build>/fuzz/fuzz_x <file>).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${KILN_FUZZ_BUILD_DIR:-build-fuzz}
total=${KILN_FUZZ_SECONDS:-75}
shared=${KILN_SHARED_DIR:-$root/../shared}
cc=${CC:-clang}
max_len=65536

command -v "$cc" >/dev/null || { echo "fuzz: $cc not found (bash scripts/setup.sh --fuzz)" >&2; exit 1; }

cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_BUILD_FUZZ=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF -DKILN_INSTALL=OFF \
  -DKILN_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)"

mapfile -t targets < <(find "$build/fuzz" -maxdepth 1 -type f -executable -name 'fuzz_*' 2>/dev/null | sort)
if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz: no fuzz targets were built" >&2
  exit 1
fi

# Seeds, one directory per target and per run, so libFuzzer never writes into samples/ or
# the shared corpus:
#   fuzz_cast_*  samples/*.cast, every corpus .cast up to max_len, corpus/bad/*
#   fuzz_import_unigine  corpus/unigine/**/*.mesh and *.anim up to max_len
#   fuzz_import_lod  every .lod of corpus/lod and corpus/lod/bad up to max_len
#   every target whatever its LLVMFuzzerInitialize writes into $KILN_FUZZ_WRITE_SEEDS
#                (fuzz_blob_load: generated blobs; fuzz_anim_sample: its built-in clips, raw
#                and as patch lists), and fuzz/seeds/<target>/ if present
# The time is split evenly between the targets (at least 5 s each).
rm -rf "$build/seeds"
mkdir -p "$build/artifacts"
copy_seeds() { # to-dir from-dir find-args...
  local to=$1 dir=$2; shift 2
  [ -d "$dir" ] || return 0
  find "$dir" "$@" -type f -size -$((max_len + 1))c -print0 |
    while IFS= read -r -d '' f; do
      cp "$f" "$to/$(echo "$f" | md5sum | cut -c1-12)-$(basename "$f")"
    done
}
echo "fuzz: shared dir: $shared"

per=$(( total / ${#targets[@]} ))
[ "$per" -ge 5 ] || per=5
status=0
for bin in "${targets[@]}"; do
  name=$(basename "$bin")
  work="$build/corpus/$name"
  log="$build/$name.log"
  seeds="$build/seeds/$name"
  mkdir -p "$work" "$seeds"
  case "$name" in
    fuzz_cast*)
      copy_seeds "$seeds" samples -maxdepth 1 -name '*.cast'
      copy_seeds "$seeds" "$shared/corpus" -name '*.cast'
      copy_seeds "$seeds" "$shared/corpus/bad" -maxdepth 1 ;;
    fuzz_import_unigine)
      copy_seeds "$seeds" "$shared/corpus/unigine" \( -name '*.mesh' -o -name '*.anim' \) ;;
    fuzz_import_lod*)
      copy_seeds "$seeds" "$shared/corpus/lod" -name '*.lod' ;;
  esac
  copy_seeds "$seeds" "fuzz/seeds/$name"
  KILN_FUZZ_WRITE_SEEDS="$seeds" "$bin" -runs=0 >/dev/null 2>&1 || true
  echo "fuzz: $name: $(find "$seeds" -type f | wc -l) seed files"
  echo "fuzz: $name for ${per}s"
  if "$bin" -max_total_time="$per" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" \
       -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
       "$work" "$seeds" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    echo "fuzz: $name ok: ${runs:-?} executions, ${cov:-cov: ?}, corpus $(find "$work" -type f | wc -l) files"
  else
    status=1
    echo "fuzz: $name FAILED; log tail ($log):" >&2
    tail -n 60 "$log" >&2
    ls -l "$build/artifacts" >&2 || true
  fi
done
exit "$status"
