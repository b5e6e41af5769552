# Benchmarks: what the module costs on connect, what a query costs, and the
# memory of its side table, beside SO_PEERCRED and /proc.  Figures only:
# nothing is asserted.  Not part of "make check".
#
#   make bench                      full run on 6.1 (~8 min on 2 cores)
#   make bench KERNELS="6.1 7.3"    on other kernels too
#   make bench-smoke                short rounds, 20 k connections (~1 min)
#   make bench-icount               under QEMU -icount (guest time counts
#                                   instructions), 1 vCPU, 3 boots: each
#                                   headline figure, its goal, its spread
#   make bench-icount BENCH_ARGS="--quick --boots 1"   a short icount run
#
# Outputs: build/bench/KERNEL.{txt,csv,png}, build/bench/KERNEL-icount*.
# See docs/BENCHMARKS.md.

BENCH_ARGS ?=

.PHONY: bench bench-smoke bench-icount bench-bin

# build/guest/bench: the suites' pattern rule (tests/guest/suites.list).
bench-bin: $(B)/guest/bench

bench: deps bench-bin
	scripts/bench.sh $(BENCH_ARGS) $(KERNELS)

bench-smoke: deps bench-bin
	scripts/bench.sh --quick $(BENCH_ARGS) $(firstword $(KERNELS))

bench-icount: deps bench-bin
	scripts/bench.sh --icount $(BENCH_ARGS) $(KERNELS)
