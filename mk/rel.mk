# Reliability: the storm, the ioctl fuzzer, the security checks, and a debug
# kernel (KASAN, kmemleak, lockdep, UBSAN) built from Debian's linux-source.
#
#   make check-stress   the storm (100 reloads) + 5M-iteration ioctl fuzz on 6.1,
#                       and the classifier's libFuzzer target
#   make check-debug    every guest suite + the storm (25 reloads) on the debug
#                       kernel, then a kmemleak scan
#
# Sizes (kernel command line words, read by the suites themselves):
#   pcg.storm_rounds=N  rounds per storm worker, at least (default 50)
#   pcg.storm_cycles=N  module unload/load cycles during the storm (default 8,
#                       what make check runs; these targets ask for more)
#   pcg.fuzz_iters=N    ioctl fuzz iterations (default 200000, ~2 s under TCG);
#                       pcg.fuzz_seed=S reruns a seed (printed by the suite)

STRESS_KERNEL ?= 6.1
STRESS_ROUNDS ?= 1000
STORM_CYCLES ?= 100
STRESS_FUZZ_ITERS ?= 5000000
STRESS_FUZZ_RUNS ?= 2000000
DEBUG_KERNEL ?= 6.1
DEBUG_SUITES ?= $(shell scripts/suites.sh debug)
STRESS_SUITES ?= $(shell scripts/suites.sh stress)
DEBUG_ROUNDS ?= 300
# 50 took 250 s of the debug boot, on CI's critical path; check-stress keeps 100
DEBUG_CYCLES ?= 25
DEBUG_FUZZ_ITERS ?= 200000
# race_suite under KASAN and lockdep: fewer connections (50000 on stock kernels)
DEBUG_RACE_CONNS ?= 10000

# Multi-threaded TCG can run a stale translation of kernel text that ftrace
# has just re-patched (an int3 already removed), which module unloads under
# load hit; one host thread for all vCPUs keeps the hardware's semantics.
# Read by scripts/run-guest.sh (PCG_QEMU_ACCEL), whose default is the same.
REL_ACCEL ?= tcg,thread=single

.PHONY: check-stress check-debug

check-stress: deps
	$(MAKE) guest-bins
	scripts/kernel.sh fetch $(STRESS_KERNEL)
	scripts/kernel.sh build $(STRESS_KERNEL) . $(B)/kernels/$(STRESS_KERNEL)
	PCG_QEMU_ACCEL=$(REL_ACCEL) scripts/run-guest.sh --name stress-$(STRESS_KERNEL) \
		--kernel $(B)/cache/kernels/$(STRESS_KERNEL)/vmlinuz \
		--kver $$(scripts/kernel.sh modver $(STRESS_KERNEL)) \
		--ko $(B)/kernels/$(STRESS_KERNEL)/peercgroup.ko --bins $(STRESS_BINS) \
		--out $(B)/run/stress-$(STRESS_KERNEL) --suites $(STRESS_SUITES) \
		--timeout 1800 --append "pcg.suite_timeout=1500 pcg.storm_rounds=$(STRESS_ROUNDS) pcg.storm_cycles=$(STORM_CYCLES) pcg.fuzz_iters=$(STRESS_FUZZ_ITERS)"
	@grep -a '^# \(storm\|fuzz\)' $(B)/run/stress-$(STRESS_KERNEL)/console.log | tr -d '\r' || true
	$(MAKE) -C userlib fuzz O=$(B)/userlib FUZZ_RUNS=$(STRESS_FUZZ_RUNS)

check-debug: deps
	$(MAKE) guest-bins
	scripts/kernel.sh debug $(DEBUG_KERNEL)
	scripts/kernel.sh debug-build $(DEBUG_KERNEL) . $(B)/kernels/debug-$(DEBUG_KERNEL)
	PCG_QEMU_ACCEL=$(REL_ACCEL) scripts/run-guest.sh --name debug-$(DEBUG_KERNEL) \
		--kernel $(B)/cache/debug/$(DEBUG_KERNEL)/vmlinuz \
		--kver $$(cat $(B)/cache/debug/$(DEBUG_KERNEL)/release) \
		--ko $(B)/kernels/debug-$(DEBUG_KERNEL)/peercgroup.ko --bins $(B)/guest \
		--out $(B)/run/debug-$(DEBUG_KERNEL) --suites $(DEBUG_SUITES) \
		--timeout 2400 --mem 2048 \
		--append "kmemleak=on slab_nomerge slub_debug=A,pcg_entry pcg.suite_timeout=1500 pcg.storm_rounds=$(DEBUG_ROUNDS) pcg.storm_cycles=$(DEBUG_CYCLES) pcg.fuzz_iters=$(DEBUG_FUZZ_ITERS) pcg.race_conns=$(DEBUG_RACE_CONNS)"
	@grep -a '^# \(storm\|fuzz\|kmemleak\)' $(B)/run/debug-$(DEBUG_KERNEL)/console.log | tr -d '\r' || true
	@echo "debug kernel: $$(cat $(B)/cache/debug/$(DEBUG_KERNEL)/release), built in $$(cat $(B)/cache/debug/$(DEBUG_KERNEL)/build-seconds)s"
