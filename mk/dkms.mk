# Install as an admin would: dkms builds the module for each kernel, the
# module loads on first open of /dev/peercgroup or at boot, and uninstall
# leaves nothing behind.  See docs/INSTALL.md.
#
#   make dkms-install [KVER=...]   sources to /usr/src, dkms add/build/install,
#                                  system files (BOOTLOAD=0: no modules-load.d)
#   make dkms-uninstall            every version out of dkms, /usr/src, system files
#   make install-system            udev rule + modules-load.d entry (DESTDIR)
#   make uninstall-system
#   make check-dkms                the above for real, on Debian's 6.1, then the
#                                  installed .ko in a 6.1 guest (dkms_suite)
DKMS_KERNEL ?= 6.1

.PHONY: dkms-install dkms-uninstall install-system uninstall-system check-dkms

dkms-install:
	scripts/dkms.sh install $(KVER)

dkms-uninstall:
	scripts/dkms.sh uninstall

install-system:
	scripts/dkms.sh install-system

uninstall-system:
	scripts/dkms.sh uninstall-system

check-dkms: deps $(B)/guest/dkms_suite
	scripts/check-dkms.sh $(DKMS_KERNEL)
