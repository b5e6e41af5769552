# shellcheck shell=bash
# The verdict on one QEMU boot, shared by scripts/run-guest.sh (busybox
# guests) and scripts/check-system.sh (systemd guests).  Sourced.
#
#   judge_guest NAME CONSOLE VERDICT QEMU_RC TIMEOUT SECS OUT [NONCE [SKIPS]]
#
# A boot passes only if QEMU exited by itself, the console holds none of
# the kernel's warning, bug or oops reports, and the guest wrote its
# "PEERCGROUP-VERDICT passed=N failed=0" line on the second serial port
# (VERDICT) as its very last act: a panic, a WARN (panic_on_warn) or a hang
# leaves no such line, so it cannot pass.  There must be exactly one such
# line, whole, ending in "nonce=NONCE" when NONCE is given, and as many
# "not ok - " lines before it as it says failed.  With SKIPS (the format of
# tests/guest/skips.list), every "# SKIP" on the console must be one it
# allows for NAME.  Prints the failed tests and
# "NAME: N passed, N failed", writes "NAME PASSED FAILED SECS" to OUT/result
# and returns non-zero on any failure.  The verdict line may also carry
# skipped=N and assertions=N (tests are promises, one "ok" line each;
# assertions are the checks inside them): OUT/result then has
# "NAME PASSED FAILED SECS SKIPPED ASSERTIONS".
# arm64 prints "Call trace:" (lower case t), x86 "Call Trace:"
GUEST_BAD_CONSOLE='BUG:|WARNING:|Oops|Call [Tt]race|KASAN|UBSAN|suspected memory leak|Kernel panic'

# skip_allowed SKIPS NAME TEST: does SKIPS let run NAME skip TEST?
skip_allowed() {
	local test runs pat
	while read -r test runs _; do
		[ "$test" = "$3" ] || continue
		for pat in ${runs//,/ }; do
			# shellcheck disable=SC2053 # a pattern, on purpose
			[[ $2 == $pat ]] && return 0
		done
	done < <(grep -v '^#' "$1")
	return 1
}

judge_guest() {
	local name=$1 console=$2 verdict=$3 qemu_rc=$4 timeout=$5 secs=$6 out=$7 nonce=${8:-} skips=${9:-}
	local -a problems=()
	local bad line lines passed failed skipped assertions p notok test
	local whole='^PEERCGROUP-VERDICT passed=[0-9]+ failed=[0-9]+( skipped=[0-9]+ assertions=[0-9]+)?'
	[ "$qemu_rc" -eq 124 ] && problems+=("timed out after ${timeout}s")
	[ "$qemu_rc" -ne 0 ] && [ "$qemu_rc" -ne 124 ] && problems+=("qemu exited with $qemu_rc")
	bad=$(grep -aE "$GUEST_BAD_CONSOLE" "$console" | head -5 || true)
	[ -n "$bad" ] && problems+=("kernel reported: $bad")
	lines=$(tr -d '\r' <"$verdict" | grep -ac '^PEERCGROUP-VERDICT' || true)
	line=$(tr -d '\r' <"$verdict" | grep -aE "$whole${nonce:+ nonce=$nonce}\$" || true)
	[ "$lines" -le 1 ] || problems+=("$lines verdict lines: one is not the guest's")
	[ -n "$line" ] || [ "$lines" -eq 0 ] || problems+=("the verdict line is not whole, or not this boot's")
	passed=$(sed -n 's/.*passed=\([0-9]*\).*/\1/p' <<<"$line")
	failed=$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' <<<"$line")
	skipped=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' <<<"$line")
	assertions=$(sed -n 's/.*assertions=\([0-9]*\).*/\1/p' <<<"$line")
	if [ -z "$line" ]; then
		problems+=("no verdict from the guest (crash or early exit)")
		passed=${passed:-0}
		failed=$((${failed:-0} + 1))
	fi
	[ "${failed:-0}" -gt 0 ] && [ -n "$line" ] && problems+=("$failed test(s) failed")
	if [ -n "$skips" ]; then
		while read -r test; do
			skip_allowed "$skips" "$name" "$test" ||
				problems+=("$test skipped, which $(basename "$skips") does not allow on $name")
		done < <(tr -d '\r' <"$console" | sed -n 's/^# SKIP \([^ :]*\):.*/\1/p')
	fi
	notok=$(grep -ac '^not ok - ' "$verdict" || true)
	[ -z "$line" ] || [ "$notok" -eq "$failed" ] ||
		problems+=("the verdict says $failed failed, with $notok \"not ok\" lines")
	grep -a '^not ok - ' "$verdict" | sed 's/^/  /' || true

	echo "$name: boot + suites took ${secs}s"
	if [ ${#problems[@]} -gt 0 ]; then
		for p in "${problems[@]}"; do echo "$name: FAIL: $p"; done
		echo "---- last 50 console lines ($console) ----"
		tail -n 50 "$console" | tr -d '\r'
		echo "----"
		[ "$failed" -gt 0 ] || failed=1
	fi
	[ -z "$skipped$assertions" ] ||
		echo "$name: ${skipped:-0} tests skipped, ${assertions:-0} assertions checked"
	echo "$name: $passed passed, $failed failed"
	printf '%s %s %s %s %s %s\n' "$name" "$passed" "$failed" "$secs" "${skipped:-0}" "${assertions:-0}" \
		>"$out/result"
	[ ${#problems[@]} -eq 0 ]
}
