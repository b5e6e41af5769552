# Portability: arm64 guests and the compile breadth.
#
#   make check KERNELS="6.1-arm64 7.3-arm64"   arm64 rows of scripts/kernels.conf (cross-built
#                                module, qemu-system-aarch64 -M virt, the same suites built
#                                static for aarch64 into build/arm64/guest)
#   make check-compile           the module, warnings as errors, against every Debian
#                                linux-headers flavour of scripts/headers-breadth.list
#                                (amd64 + arm64, generic/cloud/rt/16k); SUBSET=1: CI's subset
#   make headers-breadth-refresh rewrite that list from the archive, print what changed

ARM64_CC ?= aarch64-linux-gnu-gcc-12
ARM64_AR ?= aarch64-linux-gnu-ar

.PHONY: guest-bins-arm64 check-compile headers-breadth-refresh

guest-bins-arm64:
	$(MAKE) guest-bins B=$(B)/arm64 CC=$(ARM64_CC) AR=$(ARM64_AR)

# the suites for an arm64 row are built before "check" runs them
check: $(if $(filter %-arm64,$(KERNELS)),guest-bins-arm64)

check-compile: deps
	scripts/compile-breadth.sh $(if $(filter 1,$(SUBSET)),--subset)

headers-breadth-refresh:
	scripts/compile-breadth.sh refresh
