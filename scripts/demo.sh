#!/usr/bin/env bash
# make demo: boot Debian's 6.1 kernel with the module and show a server
# naming, for clients in two cgroups standing for two containers, which
# one is calling.
set -euo pipefail
cd "$(dirname "$0")/.."
k=${DEMO_KERNEL:-6.1}
scripts/kernel.sh fetch "$k" >/dev/null
scripts/kernel.sh build "$k" . "build/kernels/$k" >/dev/null
install -m 0755 tests/guest/demo.sh build/guest/demo
out=build/run/demo
mkdir -p "$out"
status=0
scripts/run-guest.sh --name "demo-$k" --kernel "build/cache/kernels/$k/vmlinuz" \
	--kver "$(scripts/kernel.sh modver "$k")" --ko "build/kernels/$k/peercgroup.ko" \
	--bins build/guest --out "$out" --suites demo >"$out.log" 2>&1 || status=$?
echo
tr -d '\r' <"$out/console.log" | sed -n 's/^demo| //p'
echo
tail -n 1 "$out.log"
exit $status
