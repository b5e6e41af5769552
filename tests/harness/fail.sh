#!/bin/sh
# Harness self-test: one deliberately failing test among passing ones.
echo "ok - selftest/passes"
echo "not ok - selftest/fails: deliberate failure, expected to fail the run"
echo "ok - selftest/passes-too"
echo "# selftest: 2 tests passed, 1 failed, 0 skipped, 0 assertions"
