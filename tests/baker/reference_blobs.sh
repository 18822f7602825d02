#!/bin/sh
# Re-bakes every line of reference_blobs.txt and compares the blob's SHA-256 with the one the
# baker produced before the source-layer refactor: the refactor must not change any output.
#
#   reference_blobs.sh KILN_CLI REFERENCE_LIST SHARED_DIR
#
# Exits 0 when every blob matches, 1 on a mismatch or a failed bake. Prints "SKIPPED" and exits
# 0 when the corpus is absent (ctest turns the message into a skip, see SKIP_REGULAR_EXPRESSION).
set -u
kiln=$1
list=$2
shared=${KILN_SHARED_DIR:-$3}
corpus=$shared/corpus

if [ ! -d "$corpus" ]; then
    echo "SKIPPED: no corpus at $corpus (set KILN_SHARED_DIR)"
    exit 0
fi
if command -v sha256sum >/dev/null 2>&1; then
    hash() { sha256sum "$1" | cut -d' ' -f1; }
else
    hash() { shasum -a 256 "$1" | cut -d' ' -f1; }
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

failed=0
checked=0
while IFS='|' read -r name options inputs expected; do
    case $name in '#'*|'') continue ;; esac
    name=$(echo $name)
    expected=$(echo $expected)
    # The inputs are relative to the corpus: instance paths are stored as given.
    # shellcheck disable=SC2086
    if ! (cd "$corpus" && "$kiln" bake $options $inputs -o "$tmp/$name.kiln") >"$tmp/log" 2>&1; then
        echo "FAIL $name: kiln bake$options $inputs failed:"
        cat "$tmp/log"
        failed=$((failed + 1))
        continue
    fi
    got=$(hash "$tmp/$name.kiln")
    if [ "$got" != "$expected" ]; then
        echo "FAIL $name: sha256 $got, expected $expected"
        failed=$((failed + 1))
    fi
    checked=$((checked + 1))
done <"$list"

echo "$checked blobs compared, $failed differ or failed"
[ "$failed" -eq 0 ] && [ "$checked" -gt 0 ]
