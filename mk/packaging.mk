# Packaging: Debian packages, "make uninstall", the facts the packaging
# repeats, and a real Debian 12 machine booted by systemd under QEMU.
#
#   make uninstall        removes what "make install" installed (PREFIX, DESTDIR)
#   make check-packaging  VERSION, dkms.conf, debian/changelog, CHANGELOG.md agree;
#                         dkms.conf's required kernel options have their #error in
#                         module/compat.h; LICENSES/ has each SPDX licence
#   make deb              dpkg-buildpackage -us -uc -b; the .debs, .buildinfo and
#                         .changes in build/deb/; then lintian on the .changes
#   make deb-prev         the previous release (PREV_COMMIT) as packages, in
#                         build/deb-prev/ (today's debian/ over that tree)
#   make check-deb-chroot the maintainer scripts for real (dpkg, dkms) in a chroot of the
#                         check-system image: 0.1.0 -> current, a broken version,
#                         back, purge; minutes, no QEMU (scripts/check-deb-chroot.sh)
#   make check-system     the packages on a Debian 12 machine under QEMU
#                         (scripts/check-system.sh; image: scripts/system-image.sh,
#                         PCG_IMAGE_EXTRA="pkg ..." adds Debian packages to it)

DEB_OUT := $(B)/deb
# 0.1.0: the tree as it stood when this round began (no git tag was made).
PREV_VERSION ?= 0.1.0
PREV_COMMIT ?= $(shell git rev-parse -q --verify v$(PREV_VERSION)^{commit} 2>/dev/null || echo 00ff966e85998857719744ebffc5af32300c82d0)

.PHONY: uninstall check-packaging deb deb-prev lintian check-system check-deb-chroot

# The list of files is the one "make install" makes: install into a scratch
# DESTDIR, then remove the same paths under the real one.
uninstall:
	@rm -rf $(B)/uninstall-stage
	@$(MAKE) -s -C userlib install O=$(B)/userlib DESTDIR=$(B)/uninstall-stage >/dev/null
	@cd $(B)/uninstall-stage && find . \( -type f -o -type l \) | sed 's|^\.||' | sort | \
		while read -r f; do \
			if [ -e "$(DESTDIR)$$f" ] || [ -L "$(DESTDIR)$$f" ]; then rm -f "$(DESTDIR)$$f" && echo "removed $(DESTDIR)$$f"; fi; \
		done
	@cd $(B)/uninstall-stage && find . -mindepth 1 -type d | sed 's|^\.||' | sort -r | \
		while read -r d; do rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done
	@rm -rf $(B)/uninstall-stage

check-packaging:
	scripts/check-packaging.sh

deb:
	scripts/deb.sh build . $(DEB_OUT)
	scripts/deb.sh lintian $(DEB_OUT)

deb-prev:
	scripts/deb.sh prev $(PREV_COMMIT) $(PREV_VERSION) $(B)/deb-prev

# Uses build/deb and build/deb-prev as they are, building them only when
# missing (CI runs "make deb" just before): "make deb check-system" after a
# change.
check-system: deps
	@[ -n "$$(ls $(DEB_OUT)/peercgroup-dkms_*.deb 2>/dev/null)" ] || $(MAKE) deb
	@[ -n "$$(ls $(B)/deb-prev/peercgroup-dkms_*.deb 2>/dev/null)" ] || $(MAKE) deb-prev
	scripts/check-system.sh

check-deb-chroot: deps
	@[ -n "$$(ls $(DEB_OUT)/peercgroup-dkms_*.deb 2>/dev/null)" ] || $(MAKE) deb
	@[ -n "$$(ls $(B)/deb-prev/peercgroup-dkms_*.deb 2>/dev/null)" ] || $(MAKE) deb-prev
	scripts/check-deb-chroot.sh
