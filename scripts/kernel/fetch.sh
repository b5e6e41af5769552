# shellcheck shell=bash
# Stock kernels as Debian packages: image and headers of each kernel of the
# matrix, unpacked into build/cache/kernels/NAME; and a kernel's source
# package (linux-source-X.Y) for the debug kernel and checkpatch.

# The packages of kernel K_*: the image package plus its same-ABI dependencies (7.x splits
# the image into linux-binary/-base/-modules), the headers, the -common headers, the kbuild.
kernel_packages() {
	local p dep
	echo "linux-image-$K_ABI"
	for p in "linux-image-$K_ABI" "linux-headers-$K_ABI"; do
		apt-cache "${APT_OPTS[@]}" show "$(qualify "$p")=$K_VER" | awk -F': ' '$1 == "Depends" {print $2; exit}' |
			tr ',|' '\n' | sed 's/(.*//; s/[[:space:]]//g' |
			while read -r dep; do
				case $dep in
				linux-*-"$K_ABI" | linux-headers-*-common | linux-headers-*-common-rt | linux-kbuild-*) echo "$dep" ;;
				esac
			done
	done
	echo "linux-headers-$K_ABI"
}

# qualify PKG: PKG:ARCH for K_ABI's own packages of a foreign-architecture kernel.  The
# -common headers are arch "all"; linux-kbuild stays the build machine's (amd64): its
# programs (fixdep, modpost) run here, and arm64 ones could not.  They are built from the
# same source version; they read the target's objects by ELF class and machine at run
# time, and the one target-dependent table built into modpost (devicetable-offsets.h,
# offsets in struct *_device_id) is the same for x86_64 and arm64, two LP64
# little-endian ABIs; the module has no device table anyway.
qualify() {
	if [[ $K_ARCH != amd64 && $1 == *-"$K_ABI" ]]; then echo "$1:$K_ARCH"; else echo "$1"; fi
}

# fetch NAME: one process at a time per kernel (parallel "fetch", "root" and "build" calls
# are safe); the lock is released on return so no lock is held while waiting for another.
fetch() {
	with_lock "kernel-$1" fetch_locked "$1"
}

# download_kernel DIR: under the apt lock, the .debs of kernel K_* into DIR
download_kernel() {
	local dir=$1 p
	local -a pkgs=() specs=()
	apt_ready
	want "$(qualify "linux-image-$K_ABI")" "$K_VER" "$K_NAME ($K_SUITE)"
	mapfile -t pkgs < <(kernel_packages | awk '!seen[$0]++')
	for p in "${pkgs[@]}"; do
		p=$(qualify "$p")
		want "$p" "$K_VER" "$K_NAME ($K_SUITE)"
		specs+=("$p=$K_VER")
	done
	note "$K_NAME: downloading ${specs[*]}"
	apt_download "$dir" "${specs[@]}" || die "$K_NAME: download of ${specs[*]} failed"
}

fetch_locked() {
	conf "$1"
	local stamp="$K_SUITE $K_ABI $K_VER"
	if [[ -f $KDIR_CACHE/.fetched && $(cat "$KDIR_CACHE/.fetched") == "$stamp" ]]; then
		echo "$K_NAME: cached"
		return 0
	fi
	local debs=$CACHE/debs/$K_NAME
	rm -rf "$debs.tmp" "$KDIR_CACHE.tmp"
	mkdir -p "$debs.tmp" "$KDIR_CACHE.tmp"
	if [[ $K_ARCH == amd64 ]]; then
		with_lock apt download_kernel "$debs.tmp"
	else
		# a foreign architecture has private lists of its own (the amd64 ones stay as they are)
		APTDIR=$CACHE/apt-$K_ARCH APT_FOREIGN=$K_ARCH with_lock "apt-$K_ARCH" download_kernel "$debs.tmp"
	fi
	rm -rf "$debs" "$KDIR_CACHE"
	mv "$debs.tmp" "$debs"
	local deb
	for deb in "$debs"/*.deb; do
		dpkg -x "$deb" "$KDIR_CACHE.tmp"
	done
	# stable names: vmlinuz, System.map, config (relative symlinks into the unpacked tree)
	local d f src
	for d in boot usr/lib/modules/"$K_ABI" lib/modules/"$K_ABI"; do
		for f in vmlinuz System.map config; do
			src=$d/$f
			[[ $d == boot ]] && src=$d/$f-$K_ABI
			if [[ -e $KDIR_CACHE.tmp/$src && ! -e $KDIR_CACHE.tmp/$f ]]; then
				ln -s "$src" "$KDIR_CACHE.tmp/$f"
			fi
		done
	done
	[[ -e $KDIR_CACHE.tmp/vmlinuz ]] || die "$K_NAME: no vmlinuz in $(ls "$debs")"
	if [[ ! -e $KDIR_CACHE.tmp/config ]]; then
		ln -s "usr/src/linux-headers-$K_ABI/.config" "$KDIR_CACHE.tmp/config"
	fi
	echo "$stamp" >"$KDIR_CACHE.tmp/.fetched"
	mv "$KDIR_CACHE.tmp" "$KDIR_CACHE"
	echo "$K_NAME: fetched $K_ABI $K_VER"
}

# download_source DIR PKG: under the apt lock, PKG=K_VER into DIR
download_source() {
	apt_ready
	want "$2" "$K_VER" "$K_NAME ($K_SUITE)"
	note "$K_NAME: downloading $2=$K_VER"
	apt_download "$1" "$2=$K_VER"
}

# source_tarball NAME: Debian's linux-source-X.Y of NAME's version, downloaded once into
# build/cache/source/; sets SOURCE_TARBALL to its linux-source-X.Y.tar.xz.
source_tarball() {
	conf "$1"
	local pkg dir
	pkg=linux-source-$(cut -d. -f1,2 <<<"$K_VER")
	dir=$CACHE/source/$pkg-$K_VER
	SOURCE_TARBALL=$dir/usr/src/$pkg.tar.xz
	[[ -f $SOURCE_TARBALL ]] && return 0
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	with_lock apt download_source "$dir.tmp" "$pkg" || die "$K_NAME: download of $pkg=$K_VER failed"
	dpkg -x "$dir.tmp"/"$pkg"_*.deb "$dir.tmp"
	rm -f "$dir.tmp"/"$pkg"_*.deb
	mv "$dir.tmp" "$dir"
}
