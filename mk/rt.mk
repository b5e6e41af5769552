# PREEMPT_RT: Debian's -rt flavours (scripts/kernels-rt.conf) are refused, with
# one clear message, by the module build (module/compat.h) and by the DKMS
# pre-build check (packaging/Makefile.dkms; dkms.conf's BUILD_EXCLUSIVE_CONFIG
# says the same to dkms itself).
#
#   make check-rt   fetch each rt kernel's headers; both must refuse it

RT_CONF := $(CURDIR)/scripts/kernels-rt.conf
RT_KERNELS ?= $(shell PCG_KERNELS_CONF=$(RT_CONF) scripts/kernel.sh list 2>/dev/null)
RT_MESSAGE := does not support PREEMPT_RT kernels

.PHONY: check-rt
check-rt:
	@set -e; mkdir -p $(B)/kernels; n=0; \
	[ -n "$(strip $(RT_KERNELS))" ] || { echo "check-rt: no kernel in $(RT_CONF)" >&2; exit 1; }; \
	for k in $(RT_KERNELS); do \
		export PCG_KERNELS_CONF=$(RT_CONF); \
		scripts/kernel.sh fetch $$k; \
		abi=$$(scripts/kernel.sh modver $$k); \
		if scripts/kernel.sh build $$k . $(B)/kernels/$$k >$(B)/kernels/rt-build.log 2>&1; then \
			echo "check-rt: $$k: the module built for a PREEMPT_RT kernel" >&2; exit 1; fi; \
		grep -q '$(RT_MESSAGE)' $(B)/kernels/$$k/build.log || { \
			echo "check-rt: $$k: the build failed without saying why:" >&2; \
			tail -20 $(B)/kernels/$$k/build.log >&2; exit 1; }; \
		if $(MAKE) -s -f packaging/Makefile.dkms check KVER=$$abi \
			KDIR=$(B)/cache/kernels/$$k/usr/src/linux-headers-$$abi \
			KCONFIG=$(B)/cache/kernels/$$k/config >$(B)/kernels/$$k/dkms-check.log 2>&1; then \
			echo "check-rt: $$k: the DKMS check accepted a PREEMPT_RT kernel" >&2; exit 1; fi; \
		grep -q 'PREEMPT_RT' $(B)/kernels/$$k/dkms-check.log || { \
			cat $(B)/kernels/$$k/dkms-check.log >&2; exit 1; }; \
		echo "check-rt: $$k ($$abi): refused by the build and by the DKMS check"; \
		n=$$((n + 1)); \
	done; \
	echo "rt: $$n passed, 0 failed"
