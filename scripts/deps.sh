#!/usr/bin/env bash
# Install, with the machine's own apt, the Debian packages the build and the
# tests need; skips apt entirely when everything is already there.
set -euo pipefail
pkgs=(
	build-essential make gcc libc6-dev pkg-config       # user space
	libcmocka-dev groff-base man-db clang               # unit tests, man check, fuzzing
	qemu-system-x86 busybox-static cpio kmod gzip       # the QEMU guest
	mmdebstrap debian-archive-keyring zstd xz-utils     # kernel matrix
	libelf-dev bc flex bison dwarves                    # kbuild tools
	"linux-headers-$(sed -n 's/^6\.1[[:space:]]\+[^ ]\+[[:space:]]\+\([^ ]\+\).*/\1/p' "$(dirname "$0")/kernels.conf")"
	dkms openssl                                        # admin install path (openssl: dkms signing key)
	gnuplot-nox                                         # benchmark chart
	qemu-system-arm gcc-12-aarch64-linux-gnu libc6-dev-arm64-cross  # arm64 guests, cross builds
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get -q update
apt-get -q install -y --no-install-recommends "${missing[@]}"
