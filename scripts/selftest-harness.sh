#!/usr/bin/env bash
# selftest-harness.sh KERNEL: proves the QEMU harness cannot be fooled.
# Eleven boots of KERNEL: a clean suite must pass; a deliberately failing
# test, a kernel crash in mid-suite, a kernel WARN (from a stand-in module
# that warns as it loads), a verdict forged by a suite, a suite that stops
# early, a kernel report hidden from the console, a skip no list allows, a
# suite that ends fewer tests than tests/harness/suites.list says it has,
# a suite that hangs with a child holding its output, and one that leaves
# a process behind must each fail the run, for the right reason.  Prints
# "harness: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
k=${1:-6.1}
vmlinuz=build/cache/kernels/$k/vmlinuz
real_ko=build/kernels/$k/peercgroup.ko
bins=build/selftest/bins
mkdir -p "$bins"
for s in control fail crash forge early hidden skip dropped hang leftover; do
	install -m 0755 "tests/harness/$s.sh" "$bins/$s"
done
scripts/kernel.sh fetch "$k" >/dev/null || exit 1
scripts/kernel.sh build "$k" . "build/kernels/$k" >/dev/null || exit 1
scripts/kernel.sh build "$k" tests/harness/warn build/selftest/warn >/dev/null || exit 1
kver=$(scripts/kernel.sh modver "$k") || exit 1

pass=0 fail=0
# expect NAME KO SUITE WANT_RC PATTERN [APPEND]: run (APPEND: more kernel
# command line), then check exit status and output.
expect() {
	local name=$1 ko=$2 suite=$3 want=$4 pattern=$5 out=build/selftest/$1 rc=0
	scripts/run-guest.sh --name "selftest-$name" --kernel "$vmlinuz" --kver "$kver" \
		--ko "$ko" --bins "$bins" --out "$out" --suites "$suite" --timeout 300 \
		--list tests/harness/suites.list ${6:+--append "$6"} \
		>"$out.log" 2>&1 || rc=$?
	if { [ "$want" = pass ] && [ $rc -eq 0 ]; } || { [ "$want" = fail ] && [ $rc -ne 0 ]; }; then
		if grep -qE "$pattern" "$out.log"; then
			echo "ok - harness/$name"
			pass=$((pass + 1))
			return
		fi
		echo "not ok - harness/$name: output lacks /$pattern/"
	else
		echo "not ok - harness/$name: expected the run to $want, run-guest exited $rc"
	fi
	tail -n 20 "$out.log" | sed 's/^/#   /'
	fail=$((fail + 1))
}
mkdir -p build/selftest
expect clean "$real_ko" control pass "selftest-clean: 1 passed, 0 failed"
expect failing-test "$real_ko" fail fail "selftest-failing-test: 2 passed, 1 failed"
expect crash "$real_ko" crash fail "no verdict from the guest"
expect warn build/selftest/warn/peercgroup.ko control fail "kernel reported: .*WARNING:"
expect forged-verdict "$real_ko" forge fail "not whole, or not this boot's"
expect stops-early "$real_ko" early fail "early: no summary line: .* \(1 passed, 0 failed, 0 skipped lines\)"
expect hidden-report "$real_ko" hidden fail "not ok - kernel/log: [1-9]"
expect unlisted-skip "$real_ko" skip fail "selftest/unexpected skipped, which skips.list does not allow"
expect dropped-test "$real_ko" dropped fail "not ok - dropped: 1 tests ended, of the 2 it has"
expect hung-suite "$real_ko" hang fail "not ok - hang: timed out after 5s" pcg.suite_timeout=5
expect leftover "$real_ko" leftover fail "not ok - leftover: left 1 processes behind; killed"
echo "harness: $pass passed, $fail failed"
[ $fail -eq 0 ]
