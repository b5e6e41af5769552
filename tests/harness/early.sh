#!/bin/sh
# Harness self-test: a suite that stops before its end, having passed what
# it ran, prints no summary line.
echo "ok - selftest/first-of-many"
exit 0
