#!/bin/sh
# The exported symbols of LIB are exactly those named in MAP, each under the
# version node that names it, and nothing else.  Usage: check-symbols.sh LIB MAP
set -eu
lib=$1 map=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "name@VERSION" from the map: symbols between "global:" and "local:" or "}".
sed -e 's|/\*.*\*/||' -e '/^\/\*/,/\*\//d' "$map" | awk '
	/^[A-Za-z0-9_.]+[ \t]*\{/ { node = $1; sub(/\{.*/, "", node); g = 0; next }
	/global:/ { g = 1; next }
	/local:/ || /\}/ { g = 0; next }
	g && /;/ { s = $1; sub(/;.*/, "", s); if (s != "") print s "@" node }
' | sort > "$tmp/map"
nm -D --defined-only --with-symbol-versions "$lib" |
	awk '$2 != "A" { s = $3; sub(/@@?/, "@", s); print s }' | sort > "$tmp/nm"
if ! cmp -s "$tmp/map" "$tmp/nm"; then
	echo "check-symbols: exports differ from $map (< map, > nm -D):"
	diff "$tmp/map" "$tmp/nm" | grep '^[<>]' || true
	exit 1
fi
if grep -q '\*' "$tmp/map"; then
	echo "check-symbols: a glob in a global: list"; exit 1
fi
echo "check-symbols: OK ($(wc -l < "$tmp/nm") symbols, each under its version node)"
