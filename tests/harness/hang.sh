#!/bin/sh
# Harness self-test: a test leaves a child behind that holds the output,
# and the suite hangs.  The suite's timeout must end both, and the run
# fail at once with a verdict, not at the host's timeout without one.
echo "ok - selftest/before-the-hang"
sleep 100000 &
sleep 100000
