# Portability: arm64 guests and the compile breadth.
#
#   make check KERNELS="6.1-arm64 7.3-arm64"   arm64 rows of scripts/kernels.conf (cross-built
#                                module, qemu-system-aarch64 -M virt, the same suites built
#                                static for aarch64 into build/arm64/guest)
#   make check-compile           the module, warnings as errors, against every Debian
#                                linux-headers flavour of scripts/headers-breadth.list
#                                (amd64 + arm64, generic/cloud/rt/16k); SUBSET=1: CI's subset;
#                                MATCH=ERE: the lines matching ERE ("sid", "arm64.*7\.3")
#   make headers-breadth-refresh rewrite that list from the archive, print what changed

ARM64_CC ?= aarch64-linux-gnu-gcc-12
ARM64_AR ?= aarch64-linux-gnu-ar

.PHONY: guest-bins-arm64 check-compile headers-breadth-refresh

# py_suite is a named skip on arm64: bindings/python/guest-rootfs.sh copies the build
# machine's own (amd64) python3 and the libraries ldd finds for it; an arm64 guest would
# need Debian's arm64 python3 packages unpacked and their libraries resolved without ldd.
PY_SUITE_ARM64_SKIP := py_suite/all: no arm64 Python in the guest (guest-rootfs.sh copies the amd64 python3 of the build machine)

guest-bins-arm64:
	GOARCH=arm64 $(MAKE) guest-bins B=$(B)/arm64 CC=$(ARM64_CC) AR=$(ARM64_AR)
	rm -rf $(B)/arm64/guest/py_suite.rootfs
	printf '#!/bin/sh\necho "# SKIP %s"\necho "# py: 0 tests passed, 0 failed, 1 skipped, 0 assertions"\n' \
		'$(PY_SUITE_ARM64_SKIP)' >$(B)/arm64/guest/py_suite

# the suites for an arm64 row are built before "check" runs them
check: $(if $(filter %-arm64,$(KERNELS)),guest-bins-arm64)

# check-stress on an arm64 row (STRESS_KERNEL=6.1-arm64): the suites cross-built
STRESS_BINS = $(if $(filter %-arm64,$(STRESS_KERNEL)),$(B)/arm64/guest,$(B)/guest)
check-stress: $(if $(filter %-arm64,$(STRESS_KERNEL)),guest-bins-arm64)

check-compile: deps
	scripts/compile-breadth.sh $(if $(filter 1,$(SUBSET)),--subset) $(if $(MATCH),--match '$(MATCH)')

headers-breadth-refresh:
	scripts/compile-breadth.sh refresh

# arm64 rows run on demand and in CI's own stage (check-arm64), not in check-matrix:
# under TCG an arm64 boot with the suites takes several minutes.
ARM64_MATRIX := $(filter %-arm64,$(MATRIX))
MATRIX := $(filter-out %-arm64,$(MATRIX))
ARM64_KERNELS ?= 6.1-arm64 7.3-arm64

.PHONY: check-arm64 check-matrix-arm64

# the suites on arm64 rows only (CI: after check-matrix ran the unit tests and the
# harness's self-test)
check-arm64: deps guest-bins-arm64
	scripts/check.sh --suites $(SUITES) $(if $(ONLY),--only $(ONLY)) $(ARM64_KERNELS)

check-matrix-arm64: deps
	$(MAKE) check KERNELS="$(ARM64_MATRIX)"
