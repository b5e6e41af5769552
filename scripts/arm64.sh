#!/bin/bash
# arm64.sh: what an arm64 guest needs besides the kernel (fetched by kernel.sh).
#
#   arm64.sh busybox        the path of an arm64 static busybox (Debian's busybox-static:arm64,
#                           downloaded with the private apt configuration, unpacked once)
#   arm64.sh modules DIR KVER
#                           the virtio console modules of the kernel unpacked at DIR, with their
#                           dependencies, decompressed (busybox modprobe reads plain .ko), one
#                           path per line in load order; none for those built in
set -euo pipefail
PROG=${0##*/}
# kernel.sh's parts: paths (TOP, CACHE), locks, private apt, build roots
# shellcheck source=scripts/kernel/standalone.sh
. "$(dirname "${BASH_SOURCE[0]}")/kernel/standalone.sh"

busybox_arm64() {
	local dir=$CACHE/busybox-arm64 lk
	if [[ ! -x $dir/usr/bin/busybox && ! -x $dir/bin/busybox ]]; then
		# shellcheck disable=SC2034 # read by the apt helpers (scripts/kernel/apt.sh)
		APTDIR=$CACHE/apt-arm64 APT_FOREIGN=arm64
		exec {lk}>"$CACHE/.lock-apt-arm64"
		flock "$lk"
		apt_setup
		[[ -f $APTDIR/updated ]] || apt_update
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
		(cd "$dir.tmp" && apt-get -q "${APT_OPTS[@]}" download busybox-static:arm64) >&2 ||
			die "download of busybox-static:arm64 failed"
		dpkg -x "$dir.tmp"/busybox-static_*_arm64.deb "$dir.tmp"
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
		exec {lk}>&-
	fi
	if [[ -x $dir/usr/bin/busybox ]]; then echo "$dir/usr/bin/busybox"; else echo "$dir/bin/busybox"; fi
}

# The verdict channel of an arm64 guest is a virtio console (-M virt has one PL011 UART):
# Debian builds virtio_mmio and virtio_console as modules.  The image package has no
# modules.dep (depmod runs at install): dependencies come from each module's modinfo.
modules() {
	local kdir=$1 kver=$2 out
	out=$CACHE/guest-modules/$kver
	mkdir -p "$out"
	local -a order=()
	add() {
		local m=$1 f d name
		[[ " ${order[*]} " == *" $m "* ]] && return 0
		f=$(find "$kdir"/lib/modules/"$kver" "$kdir"/usr/lib/modules/"$kver" -name "$m.ko*" 2>/dev/null | head -1 || true)
		if [[ -z $f ]]; then
			# built in (7.3: CONFIG_VIRTIO_CONSOLE=y): nothing to load
			grep -qsE "(^|/)$m\.ko$" "$kdir"/lib/modules/"$kver"/modules.builtin \
				"$kdir"/usr/lib/modules/"$kver"/modules.builtin && return 0
			die "module $m of $kver not found under $kdir"
		fi
		for d in $(modinfo -F depends "$f" | tr ',' ' '); do add "$d"; done
		name=$m.ko
		case $f in
		*.xz) xz -dc "$f" >"$out/$name" ;;
		*.zst) zstd -qdc "$f" >"$out/$name" ;;
		*) cp "$f" "$out/$name" ;;
		esac
		order+=("$m")
		echo "$out/$name"
	}
	add virtio_mmio
	add virtio_console
}

case ${1:-} in
busybox) busybox_arm64 ;;
modules) (($# == 3)) || die "usage: $PROG modules DIR KVER"; modules "$2" "$3" ;;
*) echo "usage: $PROG busybox | modules DIR KVER" >&2; exit 2 ;;
esac
