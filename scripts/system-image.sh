#!/usr/bin/env bash
# A real Debian 12 machine for "make check-system": systemd as PID 1, udev,
# dkms, build-essential and the pinned 6.1 kernel (image + headers) of
# scripts/kernels.conf, made with mmdebstrap and written to an ext4 disk
# image with mke2fs -d (no loop mount).  Cached under build/cache/system/.
#
#   system-image.sh build       make (or reuse) the image; prints its path
#   system-image.sh path        the path the image has (or will have)
#
# Parameters (each is part of the cache key, so a change makes a new image):
#   PCG_IMAGE_EXTRA="pkg1 pkg2"   more Debian packages (bookworm), e.g. container
#                                 runtimes: PCG_IMAGE_EXTRA="podman crun"
#   PCG_IMAGE_SIZE=4G             the disk's size (sparse)
#   PCG_IMAGE_KERNEL=6.1          the installed kernel (a name of kernels.conf)
#   PCG_IMAGE_NEXT_KERNEL=6.12    a kernel whose dependencies are preinstalled,
#                                 so its .debs install offline in the guest
#
# The image has no network: everything a test installs in the guest is
# either in it already or copied in on the payload disk.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${PEERCG_CACHE:-$top/build/cache}
kernel=${PCG_IMAGE_KERNEL:-6.1}
next=${PCG_IMAGE_NEXT_KERNEL:-6.12}
size=${PCG_IMAGE_SIZE:-4G}
extra=${PCG_IMAGE_EXTRA:-}

die() { echo "system-image.sh: $*" >&2; exit 1; }
note() { echo "system-image.sh: $*" >&2; }

# The base system, with what the 6.12 backports kernel's packages depend on
# (pahole, gcc-12), so that they install offline.
packages() {
	echo systemd systemd-sysv udev dbus kmod initramfs-tools e2fsprogs
	echo dkms build-essential openssl linux-compiler-gcc-12-x86
	echo linux-base pahole
	echo "$extra"
}

# Everything that decides the image's contents.
key() {
	{
		packages
		echo "$size $kernel $next"
		ls "$cache/debs/$kernel"
		cat "$0" "$top"/scripts/system-guest/pcg-harness*
	} | sha256sum | cut -c1-16
}

dir() { echo "$cache/system/$(key)"; }

# make_disk DIR: DIR/rootfs.tar -> DIR/disk.img, an ext4 file system
# populated by mke2fs -d (Debian 12's mke2fs 1.47.0 reads a directory,
# not yet a tarball: unpack it first, as root, owners and nodes kept).
make_disk() {
	local d=$1
	rm -rf "$d/rootfs" "$d/disk.img"
	mkdir "$d/rootfs"
	tar -C "$d/rootfs" --numeric-owner -xpf "$d/rootfs.tar" || die "unpacking the root tarball failed"
	truncate -s "$size" "$d/disk.img"
	mke2fs -q -t ext4 -L pcgroot -d "$d/rootfs" "$d/disk.img" || die "mke2fs -d failed"
	rm -rf "$d/rootfs" "$d/rootfs.tar"
}

build() {
	"$top/scripts/kernel.sh" fetch "$kernel" >&2
	"$top/scripts/kernel.sh" fetch "$next" >&2
	local d lk
	d=$(dir)
	mkdir -p "$cache/system"
	exec {lk}>"$cache/system/.lock"
	flock "$lk"
	if [ -f "$d/disk.img" ]; then
		echo "$d/disk.img"
		return 0
	fi
	command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (scripts/deps.sh)"
	[ "$(id -u)" -eq 0 ] || die "building the image needs root (mmdebstrap --mode=root)"
	# The archive: bookworm's lines of the private apt configuration that
	# scripts/kernel.sh wrote from the machine's own sources.
	local sources=$cache/apt/sources.list
	[ -f "$sources" ] || die "$sources is missing (scripts/kernel.sh fetch writes it)"
	local mirrors
	mirrors=$(grep -E ' bookworm(-security)? main$' "$sources") ||
		die "no bookworm lines in $sources"
	local -a debs=()
	mapfile -t debs < <(find "$cache/debs/$kernel" -name '*.deb' | sort)
	rm -rf "$d.tmp"
	mkdir -p "$d.tmp"
	local t0=$SECONDS incl
	incl=$(packages | tr -s ' \n' ',,' | sed 's/^,//; s/,$//')
	note "mmdebstrap bookworm: $incl + ${debs[*]##*/}"
	# The kernel's .debs are installed by dpkg inside the chroot (mmdebstrap's
	# --include of a file path needs it to be visible there).
	local kdebs
	kdebs=$(printf '%q ' "${debs[@]}")
	# customize: a test user, fstab, hostname, the harness unit that runs
	# the payload disk's script at boot, no getty or timers to wait for.
	# The hooks are run by mmdebstrap's shell, with the root as $1.
	# shellcheck disable=SC2016
	mmdebstrap --variant=minbase --mode=root --format=tar \
		--include="$incl" \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--customize-hook="mkdir -p \"\$1/tmp/kdebs\" && cp $kdebs \"\$1/tmp/kdebs/\"" \
		--customize-hook='chroot "$1" sh -c "dpkg -i /tmp/kdebs/*.deb" && rm -rf "$1/tmp/kdebs"' \
		--customize-hook='echo pcg-guest >"$1/etc/hostname"' \
		--customize-hook='printf "/dev/vda / ext4 defaults 0 1\n" >"$1/etc/fstab"' \
		--customize-hook='chroot "$1" useradd -m -u 1000 -s /bin/bash pcguser' \
		--customize-hook='chroot "$1" passwd -d root' \
		--customize-hook="copy-in $top/scripts/system-guest/pcg-harness.service /etc/systemd/system" \
		--customize-hook="copy-in $top/scripts/system-guest/pcg-harness /usr/local/sbin" \
		--customize-hook='chroot "$1" systemctl enable pcg-harness.service' \
		--customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer getty@tty1.service serial-getty@ttyS0.service' \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/cache/apt/archives/*.deb' \
		bookworm "$d.tmp/rootfs.tar" "$mirrors" >&2 ||
		die "mmdebstrap failed"
	note "mmdebstrap took $((SECONDS - t0))s"
	t0=$SECONDS
	make_disk "$d.tmp"
	note "mke2fs -d took $((SECONDS - t0))s"
	rm -rf "$d"
	mv "$d.tmp" "$d"
	echo "$d/disk.img"
}

case ${1:-} in
build) build ;;
path) echo "$(dir)/disk.img" ;;
*) die "usage: system-image.sh build | path" ;;
esac
