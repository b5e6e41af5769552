#!/bin/sh
# Harness self-test: a suite writes a passing verdict of its own on the
# verdict port and stops the guest before init can write the real one.
echo "not ok - selftest/forge: the failure a forged verdict would hide"
echo "PEERCGROUP-VERDICT passed=42 failed=0 skipped=0 assertions=0" >/dev/ttyS1
sync
poweroff -f
