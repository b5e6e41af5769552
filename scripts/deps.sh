#!/usr/bin/env bash
# Install, with the machine's own apt, the Debian packages the build and the
# tests need; skips apt entirely when everything is already there.
set -euo pipefail
pkgs=(
	build-essential make gcc libc6-dev pkg-config       # user space
	libcmocka-dev groff-base man-db clang               # unit tests, man check, fuzzing
	qemu-system-x86 busybox-static cpio kmod gzip       # the QEMU guest
	mmdebstrap debian-archive-keyring zstd xz-utils     # kernel matrix
	libelf-dev bc flex bison dwarves sparse             # kbuild tools, sparse (make C=2)
	"linux-headers-$(sed -n 's/^6\.1[[:space:]]\+[^ ]\+[[:space:]]\+\([^ ]\+\).*/\1/p' "$(dirname "$0")/kernels.conf")"
	dkms openssl                                        # admin install path (openssl: dkms signing key)
	gnuplot-nox                                         # benchmark chart
	libsystemd-dev                                      # examples/responder: sd_listen_fds()
	golang-go golang-golang-x-sys-dev                   # Go binding, offline
	python3 python3-pytest python3-venv python3-pip python3-setuptools python3-wheel  # Python binding
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
