#!/usr/bin/env bash
# suites.sh RUN     the guest suites of RUN (check, stress, debug, dkms, bench),
#                   comma-separated, in the order of tests/guest/suites.list
# suites.sh --all   every suite, one per line (what make builds)
set -euo pipefail
list=$(dirname "$0")/../tests/guest/suites.list
case ${1:-} in
--all) awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$list" ;;
'' | -*) echo "usage: suites.sh RUN | --all" >&2; exit 2 ;;
*)
	out=$(awk -v run="$1" '!/^[[:space:]]*(#|$)/ {
		for (i = 2; i <= NF; i++) if ($i == run) { print $1; break } }' "$list" | paste -sd, -)
	[ -n "$out" ] || { echo "suites.sh: no suite runs in '$1' ($list)" >&2; exit 1; }
	echo "$out"
	;;
esac
