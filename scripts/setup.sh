#!/usr/bin/env bash
# Installs what Kiln needs to build and test from the distribution's packages (Debian, Ubuntu).
#
#   bash scripts/setup.sh              # compiler, cmake, ninja, pkg-config, cglm, meshoptimizer, stb, zlib, Criterion
#   bash scripts/setup.sh --fuzz       # + clang and its libFuzzer runtime
#   bash scripts/setup.sh --valgrind   # + valgrind
#   bash scripts/setup.sh --browser    # + chromium and python3, for tests/browser/run.sh only
#   bash scripts/setup.sh --all        # everything
#
# Safe to run again: installed packages are detected with dpkg-query and, when nothing is
# missing, the script returns at once without touching apt. Uses sudo when not run as root.
set -euo pipefail

packages=(build-essential cmake ninja-build pkg-config libcglm-dev libmeshoptimizer-dev libstb-dev zlib1g-dev libcriterion-dev)
optional=() # installed when the distribution has them
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang); optional+=(libclang-rt-dev) ;;
    --valgrind) packages+=(valgrind) ;;
    --browser) packages+=(chromium python3) ;;
    --all) packages+=(clang valgrind chromium python3); optional+=(libclang-rt-dev) ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup: unknown option '$arg' (try --help)" >&2; exit 1 ;;
  esac
done

installed() { [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]; }

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: not a Debian-based system; install these (or your distribution's equivalents) yourself:" >&2
  echo "  ${packages[*]}" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
available() { apt-cache show "$1" >/dev/null 2>&1; }
missing_optional=()
for p in "${optional[@]}"; do installed "$p" || ! available "$p" || missing_optional+=("$p"); done
if [ "${#missing[@]}" -eq 0 ] && [ "${#missing_optional[@]}" -eq 0 ]; then
  echo "setup: all ${#packages[@]} required packages are installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup: need root (or sudo) to install: ${missing[*]} ${missing_optional[*]}" >&2
    exit 1
  fi
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Use-Pty=0)

echo "setup: installing ${missing[*]} ${missing_optional[*]}"
"${apt[@]}" update
for p in "${optional[@]}"; do
  # Packaged on some releases only (Debian 12 splits libFuzzer out of clang's own packages).
  if ! installed "$p" && available "$p"; then missing+=("$p"); fi
done
"${apt[@]}" install --no-install-recommends "${missing[@]}"
echo "setup: done"
