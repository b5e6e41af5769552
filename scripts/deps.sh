#!/usr/bin/env bash
# Install, with the machine's own apt, the Debian packages the build and the
# tests need; skips apt entirely when everything is already there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PROG=deps.sh
# shellcheck source=scripts/kernel/common.sh
. "$here/kernel/common.sh"
pkgs=(
	build-essential make gcc libc6-dev pkg-config       # user space
	libcmocka-dev groff-base man-db clang               # unit tests, man check, fuzzing
	qemu-system-x86 busybox-static cpio kmod gzip       # the QEMU guest
	mmdebstrap debian-archive-keyring zstd xz-utils     # kernel matrix
	libelf-dev bc flex bison dwarves                    # kbuild tools
	"linux-headers-$("$here/kernel.sh" field 6.1 abi)"  # make module's default KDIR
	dkms openssl                                        # admin install path (openssl: dkms signing key)
	gnuplot-nox                                         # benchmark chart
	qemu-system-arm gcc-12-aarch64-linux-gnu libc6-dev-arm64-cross  # arm64 guests, cross builds
	libsystemd-dev                                      # examples/responder: sd_listen_fds()
	shellcheck sparse                                   # make static
	debhelper dh-dkms dpkg-dev lintian e2fsprogs        # make deb, make check-system
	golang-go golang-golang-x-sys-dev                   # Go binding, offline
	python3 python3-pytest python3-venv python3-pip python3-setuptools python3-wheel  # Python binding
)
INSTALL_UPDATE=1 install_missing "deps.sh" "${pkgs[@]}"
