#!/bin/sh
# Harness self-test: a suite that passes but leaves a process of its group
# behind, off its output; the run must fail and say so.
sleep 100000 >/dev/null 2>&1 &
echo "ok - selftest/leaves-a-child"
echo "# selftest: 1 tests passed, 0 failed, 0 skipped, 0 assertions"
