#!/bin/sh
# Harness self-test: a clean run.
echo "ok - selftest/control"
