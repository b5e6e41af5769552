#!/bin/sh
# Harness self-test: a suite writes a passing verdict of its own on the
# verdict port (as init finds it: pcg.verdict=, else ttyS1) and stops the
# guest before init can write the real one.
port=/dev/ttyS1
# shellcheck disable=SC2013 # words, not lines: the command line is one line
for word in $(cat /proc/cmdline); do
	case $word in pcg.verdict=*) port=/dev/${word#pcg.verdict=} ;; esac
done
echo "not ok - selftest/forge: the failure a forged verdict would hide"
echo "PEERCGROUP-VERDICT passed=42 failed=0 skipped=0 assertions=0" >"$port"
sync
poweroff -f
