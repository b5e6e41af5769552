#!/usr/bin/env bash
# check.sh [--suites a,b] [--only TEST] KERNEL...
# (default suites: the "check" ones of tests/guest/suites.list)
# For each kernel of scripts/kernels.conf: fetch it, build the module with
# that kernel's own compiler, boot it under QEMU and run the guest suites.
# Ends with one table row per kernel and the overall "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
suites=$(scripts/suites.sh check) only=
while [ $# -gt 0 ]; do
	case $1 in
	--suites) suites=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: check.sh [--suites a,b] [--only TEST] KERNEL..." >&2; exit 2; }

rows=() total_pass=0 total_fail=0
for k in "$@"; do
	out=build/run/$k
	rm -rf "$out"
	mkdir -p "$out"
	builds=no loads=no passed=0 failed=1 secs=- skipped=0 assertions=0
	echo "==== $k: fetch and build"
	if scripts/kernel.sh fetch "$k" && scripts/kernel.sh build "$k" . "build/kernels/$k"; then
		builds=yes
		kver=$(scripts/kernel.sh modver "$k")
		bins=build/guest   # arm64 rows: the suites cross-built by mk/portability.mk
		[ "$(scripts/kernel.sh arch "$k")" = amd64 ] || bins=build/$(scripts/kernel.sh arch "$k")/guest
		echo "==== $k: boot $kver and run $suites"
		scripts/run-guest.sh --name "$k" --kernel "build/cache/kernels/$k/vmlinuz" \
			--kver "$kver" --ko "build/kernels/$k/peercgroup.ko" \
			--bins "$bins" --out "$out" --suites "$suites" ${only:+--only "$only"}
		grep -aq 'peercgroup: version .* loaded' "$out/console.log" 2>/dev/null && loads=yes
		if [ -f "$out/result" ]; then
			read -r _ passed failed secs skipped assertions <"$out/result"
		fi
	fi
	total_pass=$((total_pass + passed))
	total_fail=$((total_fail + failed))
	rows+=("$(printf '| %-6s | %-6s | %-5s | %12s | %12s | %7s | %10s | %13s |' "$k" "$builds" "$loads" \
		"$passed" "$failed" "$skipped" "$assertions" "$secs")")
done

{
	echo "| kernel | builds | loads | tests passed | tests failed | skipped | assertions | boot+suites s |"
	echo "|--------|--------|-------|--------------|--------------|---------|------------|---------------|"
	printf '%s\n' "${rows[@]}"
} >build/run/table.md
echo
cat build/run/table.md
echo
echo "kernels: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
