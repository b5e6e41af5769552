#!/usr/bin/env bash
# suites.sh RUN            the guest suites of RUN (check, stress, debug, dkms,
#                          bench), comma-separated, in the order of the list
# suites.sh --all          every suite, one per line (what make builds)
# suites.sh --tests [LIST] "SUITE TESTS" per line: how many tests each has
# The list is tests/guest/suites.list unless LIST is given.
set -euo pipefail
list=$(dirname "$0")/../tests/guest/suites.list
entries() { awk '!/^[[:space:]]*(#|$)/' "${1:-$list}"; }
case ${1:-} in
--all) entries | awk '{ print $1 }' ;;
--tests) entries "${2:-}" | awk '{ print $1, $2 }' ;;
'' | -*) echo "usage: suites.sh RUN | --all | --tests [LIST]" >&2; exit 2 ;;
*)
	out=$(entries | awk -v run="$1" '{
		for (i = 3; i <= NF; i++) if ($i == run) { print $1; break } }' | paste -sd, -)
	[ -n "$out" ] || { echo "suites.sh: no suite runs in '$1' ($list)" >&2; exit 1; }
	echo "$out"
	;;
esac
