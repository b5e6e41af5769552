# peercgroup: build, install and test.  "make help" lists the targets.

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
B := $(CURDIR)/build
# Kernels the guest suites run on: "make check KERNELS='6.1 7.3'".
KERNELS ?= 6.1
MATRIX := $(shell scripts/kernel.sh list 2>/dev/null)
# The guest suites and the runs they are part of: tests/guest/suites.list.
SUITES ?= $(shell scripts/suites.sh check)
ALL_SUITES := $(shell scripts/suites.sh --all)

GUEST_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -static \
	-I$(CURDIR)/include/uapi -I$(CURDIR)/tests/guest -I$(CURDIR)/userlib \
	-DPCG_EXPECT_VERSION='"$(shell cat VERSION)"'

.PHONY: all module userlib guest-bins unit deps check check-matrix demo \
	install clean help FORCE

all: module userlib

help:
	@echo "make module        build peercgroup.ko against KDIR=$(KDIR)"
	@echo "make userlib       libpeercgroup, the peercgroup CLI (outputs in build/userlib)"
	@echo "make check         unit tests + the guest suites on Debian's 6.1 under QEMU"
	@echo "make check KERNELS='6.1 6.12'   the guest suites on chosen kernels"
	@echo "make check-matrix  the guest suites on every kernel of scripts/kernels.conf"
	@echo "make demo          a server naming which cgroup ('container') each client is in"
	@echo "make install       library, CLI, headers, man pages (PREFIX, DESTDIR)"
	@echo "make dkms-install  the module through DKMS (KVER=...), udev rule, modules-load.d"
	@echo "make dkms-uninstall  every trace of the DKMS install"
	@echo "make check-dkms    install with DKMS, boot the installed module, uninstall"
	@echo "make bench         benchmarks on 6.1 (KERNELS=...), results in build/bench/"
	@echo "make bench-smoke   a short benchmark run (< 1 min)"
	@echo "make bench-icount  the benchmarks under QEMU -icount (deterministic), 3 boots"
	@echo "make check-stress  the storm (100 reloads), 5M ioctl fuzz, classifier libFuzzer"
	@echo "make check-debug   every suite + the storm on a KASAN/lockdep/UBSAN 6.1 kernel"
	@echo "make checkpatch    checkpatch.pl --strict on the module and the uapi header"
	@echo "make static        shellcheck, sparse (module), gcc -fanalyzer (library, CLI)"
	@echo "make check-rt      Debian's PREEMPT_RT kernels are refused by the build and DKMS"
	@echo "make check-bindings  Go and Python bindings: tests, parity with the C classifier"
	@echo "make uninstall     undo make install (PREFIX, DESTDIR)"
	@echo "make check-packaging  VERSION, dkms.conf, changelogs, licences agree"
	@echo "make deb           the Debian packages in build/deb/, then lintian"
	@echo "make check-deb-chroot  package install, upgrade, broken version, purge in a chroot"
	@echo "make check-system  the packages on a systemd-booted Debian 12 guest (slow under TCG)"
	@echo "make check-containers  real docker, podman, containerd, nspawn, LXC containers in that guest"
	@echo "make demo-containers   a daemon naming real containers; the move-after-connect race"
	@echo "make check-arm64   the guest suites on the arm64 rows of scripts/kernels.conf"
	@echo "make check-compile the module against every headers package of scripts/headers-breadth.list"
	@echo "ONLY=TEST or ONLY=SUITE/TEST runs one test; suites: tests/guest/suites.list"

# packaging/Makefile.dkms is the one module build (dkms runs it too);
# make clean cleans with the KDIR the last build used (build/module.kdir).
module:
	@mkdir -p $(B)
	echo '$(KDIR)' >$(B)/module.kdir
	$(MAKE) -f packaging/Makefile.dkms KVER=$(KVER) KDIR=$(KDIR)

userlib:
	$(MAKE) -C userlib all O=$(B)/userlib

deps:
	@scripts/deps.sh

# Static guest programs: every suite of tests/guest/suites.list, each one
# source file linked with the runner (guest.c) and the library; the CLI.
GUEST_LIB := $(B)/userlib/libpeercgroup.a
GUEST_DEPS := $(B)/guest/obj/guest.o tests/guest/guest.h \
	include/uapi/linux/peercgroup.h userlib/peercgroup.h VERSION $(GUEST_LIB)

$(B)/guest/obj/guest.o: tests/guest/guest.c tests/guest/guest.h include/uapi/linux/peercgroup.h
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -c -o $@ $<

$(B)/guest/%: tests/guest/%.c $(GUEST_DEPS)
	$(CC) $(GUEST_CFLAGS) -o $@ $< $(B)/guest/obj/guest.o $(GUEST_LIB) $(GUEST_LDFLAGS) -lpthread -lm

# lib_suite makes a mount, and recycles a pid, inside the library's open()
# and fopen() calls.
$(B)/guest/lib_suite: private GUEST_LDFLAGS := -Wl,--wrap=open -Wl,--wrap=fopen

$(B)/guest/%: tests/bench/%.c $(GUEST_DEPS)
	$(CC) $(GUEST_CFLAGS) -o $@ $< $(B)/guest/obj/guest.o $(GUEST_LIB) -lpthread -lm

# Always ask userlib: it knows when its archive is stale.
$(GUEST_LIB): FORCE
	$(MAKE) -C userlib static-lib O=$(B)/userlib

guest-bins: $(addprefix $(B)/guest/,$(ALL_SUITES))
	$(MAKE) -C userlib static-cli O=$(B)/userlib
	$(MAKE) -C userlib static-responder O=$(B)/userlib
	cp $(B)/userlib/static/peercgroup $(B)/userlib/static/responder $(B)/guest/

unit:
	$(MAKE) -C userlib check check-install O=$(B)/userlib

check: deps
	$(MAKE) unit
	$(MAKE) guest-bins
	scripts/selftest-harness.sh $(firstword $(KERNELS))
	scripts/check.sh --suites $(SUITES) $(if $(ONLY),--only $(ONLY)) $(KERNELS)

FORCE:

check-matrix: deps
	$(MAKE) check KERNELS="$(MATRIX)"

demo: deps guest-bins
	scripts/demo.sh

install:
	$(MAKE) -C userlib install O=$(B)/userlib

clean:
	-$(MAKE) -f packaging/Makefile.dkms KVER=$(KVER) KDIR=$$(cat $(B)/module.kdir 2>/dev/null || echo '$(KDIR)') clean
	rm -rf build

# Feature fragments (install, benchmarks, reliability, style) add their
# own targets here.
-include $(sort $(wildcard mk/*.mk))
