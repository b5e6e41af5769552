#!/bin/sh
# Harness self-test: a clean run.
echo "ok - selftest/control"
echo "# selftest: 1 tests passed, 0 failed, 0 skipped, 0 assertions"
