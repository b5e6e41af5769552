#!/bin/bash
# Fetch Debian stock kernels and build the module against them with the right compiler.
# The matrix is pinned in scripts/kernels.conf.  Everything lands under build/cache/
# (kernels, .debs, private apt state, build roots) and build/scratch/.
# The machine's own apt configuration and /usr/src are never modified: apt runs with a
# private configuration, and absolute /usr/src paths of the headers are made to resolve
# in a private mount namespace (unshare -m) or inside a build root (chroot).
set -euo pipefail

PROG=${0##*/}
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONF=$TOP/scripts/kernels.conf
CACHE=${PEERCG_CACHE:-$TOP/build/cache}
SCRATCH=$TOP/build/scratch
APTDIR=$CACHE/apt
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
SUITES="bullseye bookworm bookworm-security bookworm-backports trixie trixie-backports"

die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }

usage() {
	cat <<EOF
usage: $PROG list                  names of the kernels in scripts/kernels.conf
       $PROG fetch NAME            download + unpack image and headers into build/cache/kernels/NAME
       $PROG root SUITE            make the build root build/cache/roots/SUITE (mmdebstrap)
       $PROG kdir NAME             the kernel build directory (make -C KDIR M=SRC)
       $PROG build NAME SRC OUT    build SRC (top-level Kbuild) against NAME, copy peercgroup.ko to OUT/
       $PROG modver NAME           the kernel's release string (uname -r), for /lib/modules/VER
       $PROG arch NAME             its Debian architecture (amd64, arm64)
       $PROG debug NAME            build a debug kernel (KASAN, kmemleak, lockdep, UBSAN) from
                                   Debian's linux-source of NAME into build/cache/debug/NAME
       $PROG debug-build NAME SRC OUT   build SRC against that debug kernel, copy peercgroup.ko to OUT/
       $PROG checkpatch NAME       the path of checkpatch.pl from NAME's linux-source (fetched once)
EOF
	exit "${1:-2}"
}

# --- the matrix ----------------------------------------------------------------------

# conf NAME: sets K_NAME K_SUITE K_ABI K_VER K_CC K_ROOT, and K_ARCH (Debian architecture):
# an ABI ending in -arm64 is an arm64 kernel, cross-built (kernels.conf names the rule)
conf() {
	local line
	line=$(awk -v n="$1" '!/^[[:space:]]*(#|$)/ && $1 == n' "$CONF")
	[[ -n $line ]] || die "unknown kernel '$1' (known: $(names | tr '\n' ' '))"
	read -r K_NAME K_SUITE K_ABI K_VER K_CC K_ROOT <<<"$line"
	[[ -n ${K_ROOT:-} ]] || die "$CONF: malformed line for '$1'"
	K_ARCH=amd64
	[[ $K_ABI == *-arm64 ]] && K_ARCH=arm64
	KDIR_CACHE=$CACHE/kernels/$K_NAME
}

names() { awk '!/^[[:space:]]*(#|$)/ {print $1}' "$CONF"; }

# --- private apt ---------------------------------------------------------------------

# The archive URIs come from the machine's own apt sources at run time (never hard-coded).
# Prints "MAIN SECURITY".
mirror_uris() {
	local main=${PEERCG_MIRROR:-} sec=${PEERCG_SECURITY_MIRROR:-} f
	local -a files=()
	for f in /etc/apt/sources.list.d/*.sources; do [[ -e $f ]] && files+=("$f"); done
	if ((${#files[@]})); then
		# deb822 stanzas: pair each stanza's URIs with its Suites
		while read -r uri suites; do
			if [[ " $suites " == *-security* ]]; then : "${sec:=$uri}"; else : "${main:=$uri}"; fi
		done < <(awk '
			function flush() { if (uri != "" && types ~ /(^| )deb( |$)/) print uri, suites; uri = ""; suites = ""; types = "" }
			/^[[:space:]]*$/ { flush(); next }
			/^[[:space:]]*#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0 " " }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			END { flush() }' "${files[@]}")
	fi
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -e $f ]] || continue
		while read -r uri suite; do
			if [[ $suite == *-security* ]]; then : "${sec:=$uri}"; else : "${main:=$uri}"; fi
		done < <(awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } print $i, $(i + 1) }' "$f")
	done
	[[ -n $main ]] || die "no Debian archive URI found in the machine's apt sources (set PEERCG_MIRROR)"
	if [[ -z $sec ]]; then
		sec=${main%/}-security
		note "no security URI in the machine's apt sources; trying $sec"
	fi
	echo "${main%/} ${sec%/}"
}

APT_OPTS=()
apt_setup() {
	local main sec s want
	read -r main sec < <(mirror_uris)
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
	want=$(for s in $SUITES; do
		if [[ $s == *-security ]]; then echo "deb [signed-by=$KEYRING] $sec $s main"
		else echo "deb [signed-by=$KEYRING] $main $s main"; fi
	done)
	if [[ ! -f $APTDIR/sources.list || $(cat "$APTDIR/sources.list") != "$want" ]]; then
		echo "$want" >"$APTDIR/sources.list"
		rm -f "$APTDIR/updated"
	fi
	: >"$APTDIR/status"
	APT_OPTS=(
		-o "Dir::Etc::SourceList=$APTDIR/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o "Dir::Etc::Preferences=/dev/null" -o Dir::Etc::PreferencesParts=/dev/null
		-o "Dir::State::Lists=$APTDIR/lists"
		-o "Dir::State::status=$APTDIR/status"
		-o "Dir::Cache=$APTDIR/cache"
		-o APT::Architecture=amd64 -o APT::Architectures::=amd64
		${APT_FOREIGN:+-o APT::Architectures::=$APT_FOREIGN}
		-o APT::Sandbox::User=root -o Acquire::Languages=none
		-o Debug::NoLocking=1
	)
}

apt_update() {
	note "apt-get update (private lists under build/cache/apt)"
	apt-get -q "${APT_OPTS[@]}" update >"$APTDIR/update.log" 2>&1 ||
		{ cat "$APTDIR/update.log" >&2; die "apt-get update failed"; }
	grep -E '^(W|E):' "$APTDIR/update.log" >&2 || true
	touch "$APTDIR/updated"
}

# has PKG VER: is PKG=VER in the (private) package lists?
# (apt-cache show PKG=VER exits 0 even when VER is unknown: compare madison's versions)
has() {
	apt-cache "${APT_OPTS[@]}" madison "$1" 2>/dev/null |
		awk -F'|' -v v="$2" '{gsub(/[[:space:]]/, "", $2)} $2 == v {found = 1} END {exit !found}'
}

# --- fetch ---------------------------------------------------------------------------

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
				linux-*-"$K_ABI" | linux-headers-*-common | linux-kbuild-*) echo "$dep" ;;
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
	local lk rc=0
	mkdir -p "$CACHE"
	exec {lk}>"$CACHE/.lock-kernel-$1"
	flock "$lk"
	fetch_locked "$1" || rc=$?
	exec {lk}>&-
	return "$rc"
}

fetch_locked() {
	conf "$1"
	local stamp="$K_SUITE $K_ABI $K_VER"
	if [[ -f $KDIR_CACHE/.fetched && $(cat "$KDIR_CACHE/.fetched") == "$stamp" ]]; then
		echo "$K_NAME: cached"
		return 0
	fi
	# a foreign architecture has its own private lists (the amd64 ones stay as they are)
	local lock=$CACHE/.lock-apt
	if [[ $K_ARCH != amd64 ]]; then
		APTDIR=$CACHE/apt-$K_ARCH APT_FOREIGN=$K_ARCH lock=$CACHE/.lock-apt-$K_ARCH
	fi
	exec 9>"$lock"
	flock 9
	apt_setup
	[[ -f $APTDIR/updated ]] || apt_update
	if ! has "$(qualify "linux-image-$K_ABI")" "$K_VER"; then
		apt_update   # stale lists?
		has "$(qualify "linux-image-$K_ABI")" "$K_VER" ||
			die "$K_NAME: linux-image-$K_ABI version $K_VER is not in the archive ($K_SUITE);" \
				"(archive has:$(apt-cache "${APT_OPTS[@]}" madison "linux-image-$K_ABI" | awk -F'|' '{gsub(/[[:space:]]/, "", $2); printf " %s", $2}')))." \
				"Update scripts/kernels.conf."
	fi
	local -a pkgs=() specs=()
	local p v debs=$CACHE/debs/$K_NAME
	mapfile -t pkgs < <(kernel_packages | awk '!seen[$0]++')
	for p in "${pkgs[@]}"; do
		v=$K_VER
		p=$(qualify "$p")
		has "$p" "$v" || die "$K_NAME: $p version $v is not in the archive ($K_SUITE)"
		specs+=("$p=$v")
	done
	rm -rf "$debs.tmp" "$KDIR_CACHE.tmp"
	mkdir -p "$debs.tmp" "$KDIR_CACHE.tmp"
	note "$K_NAME: downloading ${specs[*]}"
	(cd "$debs.tmp" && apt-get -q "${APT_OPTS[@]}" download "${specs[@]}") >&2 ||
		die "$K_NAME: download of ${specs[*]} failed"
	flock -u 9
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
	[[ -e $KDIR_CACHE.tmp/vmlinuz ]] || die "$K_NAME: no vmlinuz in ${pkgs[*]}"
	if [[ ! -e $KDIR_CACHE.tmp/config ]]; then
		ln -s "usr/src/linux-headers-$K_ABI/.config" "$KDIR_CACHE.tmp/config"
	fi
	echo "$stamp" >"$KDIR_CACHE.tmp/.fetched"
	mv "$KDIR_CACHE.tmp" "$KDIR_CACHE"
	echo "$K_NAME: fetched $K_ABI $K_VER"
}

# --- build roots ---------------------------------------------------------------------

ROOTS=$CACHE/roots

# make_root DIR SUITE PKG...: a minimal Debian SUITE at DIR with PKG... installed (mmdebstrap),
# remade only when the package set changes.  The caller holds DIR's lock.
make_root() {
	local dir=$1 suite=$2 want
	shift 2
	want=$(printf '%s\n' "$@" | sort -u | paste -sd, -)
	if [[ -f $dir/.ready && $(cat "$dir/.ready") == "$want" ]]; then
		echo "root ${dir##*/}: cached"
		return 0
	fi
	command -v mmdebstrap >/dev/null || {
		note "installing mmdebstrap"
		DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends mmdebstrap >&2
	}
	local main sec
	read -r main sec < <(mirror_uris)
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "${dir%/*}"
	note "root ${dir##*/}: mmdebstrap $suite with $want"
	# essential + the includes, no docs/man/locales: the smallest root that builds modules
	mmdebstrap --variant=essential --include="$want" --mode=root --format=directory \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		"$suite" "$dir.tmp" "deb [signed-by=$KEYRING] $main $suite main" >&2 ||
		die "root ${dir##*/}: mmdebstrap failed"
	rm -rf "$dir.tmp/var/lib/apt/lists"/* "$dir.tmp/var/cache/apt"/*
	echo "$want" >"$dir.tmp/.ready"
	mv "$dir.tmp" "$dir"
	echo "root ${dir##*/}: created"
}

# root SUITE: a minimal Debian SUITE with the compilers of the kernels that use it and
# their kbuild tools' runtime dependencies.
root() {
	# "SUITE-cross": a root of SUITE of its own for the cross compilers (arm64 rows), so that
	# the native root's package set does not change with them
	local suite=${1%-cross} dir=$ROOTS/$1 n
	local -a pkgs=(make libc6-dev)
	local -a kernels=()
	for n in $(names); do
		conf "$n"
		[[ $K_ROOT == "$1" ]] || continue
		kernels+=("$n")
		fetch "$n" >/dev/null
		pkgs+=("$K_CC")
		local deb
		for deb in "$CACHE/debs/$n"/linux-kbuild-*.deb; do
			mapfile -t -O "${#pkgs[@]}" pkgs < <(dpkg-deb -f "$deb" Depends | tr ',' '\n' |
				sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^$')
		done
	done
	((${#kernels[@]})) || die "no kernel in $CONF is built in root '$1'"
	local lk
	exec {lk}>"$CACHE/.lock-root-$1"
	flock "$lk"
	make_root "$dir" "$suite" "${pkgs[@]}"
	# the kernels' headers, unpacked at their real absolute paths inside the root
	for n in "${kernels[@]}"; do
		conf "$n"
		local stamp=$dir/.headers-$n
		[[ -f $stamp && $(cat "$stamp") == "$K_ABI $K_VER" ]] && continue
		for deb in "$CACHE/debs/$n"/linux-headers-*.deb "$CACHE/debs/$n"/linux-kbuild-*.deb; do
			dpkg -x "$deb" "$dir"
		done
		echo "$K_ABI $K_VER" >"$stamp"
	done
	exec {lk}>&-
}

# --- kdir / modver -------------------------------------------------------------------

kdir() {
	conf "$1"
	if [[ $K_ROOT == host ]]; then
		[[ -d $KDIR_CACHE ]] || die "$K_NAME: not fetched (run: $PROG fetch $K_NAME)"
		echo "$KDIR_CACHE/usr/src/linux-headers-$K_ABI"
		note "note: its Makefile includes /usr/src/linux-headers-$K_ABI's -common tree by absolute" \
			"path; '$PROG build' resolves it in a private mount namespace"
	else
		echo "$ROOTS/$K_ROOT/usr/src/linux-headers-$K_ABI"
		note "note: $K_NAME is built with $K_CC inside the $K_ROOT build root" \
			"(chroot; make -C /usr/src/linux-headers-$K_ABI there); use '$PROG build'"
	fi
}

modver() {
	conf "$1"
	# the image's modules directory is named after its release (the headers'
	# include/config/kernel.release holds only the upstream version on 5.10/6.1)
	local d rel=$K_ABI
	for d in "$KDIR_CACHE"/lib/modules/* "$KDIR_CACHE"/usr/lib/modules/*; do
		[[ -e $d/modules.order || -e $d/modules.builtin ]] && rel=${d##*/}
	done
	echo "$rel"
}

# --- build ---------------------------------------------------------------------------

# host_deps: on the build machine, the compiler, make and the runtime dependencies of the
# kernel's kbuild tools (e.g. pahole for module BTF on 6.12) must be installed; install the
# missing ones with the machine's apt (like mmdebstrap), as a DKMS install would.
host_deps() {
	local -a need=(make "$K_CC") missing=()
	local deb p
	for deb in "$CACHE/debs/$K_NAME"/linux-kbuild-*.deb; do
		mapfile -t -O "${#need[@]}" need < <(dpkg-deb -f "$deb" Depends | tr ',' '\n' |
			sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^$')
	done
	for p in "${need[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	note "$K_NAME: installing build dependencies on this machine: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends "${missing[@]}" >&2 ||
		die "$K_NAME: cannot install ${missing[*]}"
}

build() {
	conf "$1"
	local src=$2 out=$3
	[[ -f $src/Kbuild ]] || die "$src: no top-level Kbuild"
	src=$(cd "$src" && pwd)
	fetch "$K_NAME" >/dev/null
	local base inner
	if [[ $K_ROOT == host ]]; then
		host_deps
		mkdir -p "$SCRATCH"
		base=$(mktemp -d "$SCRATCH/$K_NAME.XXXXXX")
		inner=$base
	else
		root "$K_ROOT" >/dev/null
		conf "$1"   # root() walked the matrix
		mkdir -p "$ROOTS/$K_ROOT/build"
		base=$(mktemp -d "$ROOTS/$K_ROOT/build/$K_NAME.XXXXXX")
		inner=/build/${base##*/}
	fi
	# shellcheck disable=SC2064 # expand now: $base is local
	trap "rm -rf '$base'" EXIT
	# copy the source: never build inside SRC (parallel builds, a clean tree)
	tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$base" -xf -
	local log=$base.log
	local -a make_cmd=(make -C "/usr/src/linux-headers-$K_ABI" "M=$inner" KCFLAGS=-Werror "-j$(nproc)" modules)
	[[ $K_ARCH == arm64 ]] && make_cmd+=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	local rc=0
	note "$K_NAME: ${make_cmd[*]} ($K_CC, ${K_ROOT})"
	if [[ $K_ROOT == host ]]; then
		# Private mount namespace: the fetched /usr/src tree and kbuild (usr/lib/linux-kbuild-*)
		# are overlaid on the machine's /usr/src and /usr/lib, read-only, for this build only.
		# shellcheck disable=SC2016 # expanded by the inner shell
		unshare -m --propagation private -- bash -c '
			set -e
			mount -t overlay peercg-src -o "lowerdir=$1/usr/src:/usr/src" /usr/src
			mount -t overlay peercg-lib -o "lowerdir=$1/usr/lib:/usr/lib" /usr/lib
			shift; exec env LC_ALL=C "$@"' _ "$KDIR_CACHE" "${make_cmd[@]}" >"$log" 2>&1 || rc=$?
	else
		local r=$ROOTS/$K_ROOT
		# shellcheck disable=SC2016 # expanded by the inner shell
		unshare -m --propagation private -- bash -c '
			set -e
			r=$1; shift
			mount -t proc proc "$r/proc"
			mount --rbind /dev "$r/dev"
			exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C "$@"
			' _ "$r" "${make_cmd[@]}" >"$log" 2>&1 || rc=$?
	fi
	mkdir -p "$out"
	cp "$log" "$out/build.log"
	rm -f "$log"
	if ((rc)); then
		cat "$out/build.log" >&2
		die "$K_NAME: build failed (exit $rc); log in $out/build.log"
	fi
	if grep -n 'warning:' "$out/build.log" >&2; then
		die "$K_NAME: the build printed warnings (treated as errors); log in $out/build.log"
	fi
	[[ -f $base/peercgroup.ko ]] || die "$K_NAME: no peercgroup.ko produced; log in $out/build.log"
	cp "$base/peercgroup.ko" "$out/"
	echo "$K_NAME: $out/peercgroup.ko"
}

# --- debug kernel --------------------------------------------------------------------

DEBUG_FRAGMENT=$TOP/scripts/debug-kernel.config

# debug NAME: Debian's own linux-source-X.Y of NAME's version, "make tinyconfig" plus
# scripts/debug-kernel.config, "make bzImage modules" (no modules: that writes
# Module.symvers).  Once: cached under build/cache/debug/NAME with vmlinuz, release,
# build-seconds and the tree the module builds against.
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
	(
		exec 9>"$CACHE/.lock-apt"
		flock 9
		apt_setup
		[[ -f $APTDIR/updated ]] || apt_update
		has "$pkg" "$K_VER" || apt_update
		has "$pkg" "$K_VER" || die "$K_NAME: $pkg version $K_VER is not in the archive ($K_SUITE)"
		note "$K_NAME: downloading $pkg=$K_VER"
		cd "$dir.tmp" && apt-get -q "${APT_OPTS[@]}" download "$pkg=$K_VER" >&2
	) || die "$K_NAME: download of $pkg=$K_VER failed"
	dpkg -x "$dir.tmp"/"$pkg"_*.deb "$dir.tmp"
	rm -f "$dir.tmp"/"$pkg"_*.deb
	mv "$dir.tmp" "$dir"
}

# checkpatch NAME: the kernel's own scripts/checkpatch.pl (and the data files it reads)
# from NAME's linux-source, into build/cache/checkpatch/; prints the script's path.
checkpatch() {
	local out=$CACHE/checkpatch/$1 top
	if [[ ! -f $out/scripts/checkpatch.pl ]]; then
		source_tarball "$1"
		top=$(basename "$SOURCE_TARBALL" .tar.xz)
		rm -rf "$out" && mkdir -p "$out"
		tar -C "$out" --strip-components=1 -xaf "$SOURCE_TARBALL" \
			"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
			"$top/scripts/const_structs.checkpatch"
	fi
	echo "$out/scripts/checkpatch.pl"
}

debug() {
	conf "$1"
	local dir=$CACHE/debug/$K_NAME pkg lk stamp
	pkg=linux-source-$(cut -d. -f1,2 <<<"$K_VER")
	stamp="$pkg $K_VER $(sha256sum "$DEBUG_FRAGMENT" | cut -c1-16) $(gcc -dumpfullversion)"
	mkdir -p "$CACHE"
	exec {lk}>"$CACHE/.lock-debug-$K_NAME"
	flock "$lk"
	if [[ -f $dir/.built && $(cat "$dir/.built") == "$stamp" ]]; then
		echo "$K_NAME debug kernel: cached ($(cat "$dir/release"), built in $(cat "$dir/build-seconds")s)"
		exec {lk}>&-
		return 0
	fi
	local -a need=(make gcc flex bison bc libelf-dev libssl-dev xz-utils cpio) missing=()
	local p
	for p in "${need[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p")
	done
	if ((${#missing[@]})); then
		note "debug kernel: installing build dependencies on this machine: ${missing[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends "${missing[@]}" >&2 ||
			die "debug kernel: cannot install ${missing[*]}"
	fi
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	source_tarball "$1"
	note "$K_NAME: unpacking $pkg"
	tar -C "$dir.tmp" -xaf "$SOURCE_TARBALL"
	mv "$dir.tmp/$pkg" "$dir.tmp/tree"
	local tree=$dir.tmp/tree log=$dir.tmp/build.log start secs
	local -a mk=(make -C "$tree" ARCH=x86_64 LOCALVERSION=-pcgdebug)
	{
		"${mk[@]}" tinyconfig &&
			(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$DEBUG_FRAGMENT") &&
			"${mk[@]}" olddefconfig
	} >"$log" 2>&1 || { tail -30 "$log" >&2; die "$K_NAME debug kernel: configuration failed"; }
	# every "=y" of the fragment must have survived olddefconfig (a missing dependency drops it)
	local line bad=()
	while read -r line; do
		grep -qx "$line" "$tree/.config" || bad+=("$line")
	done < <(grep -E '^CONFIG_[A-Z0-9_]+=y$' "$DEBUG_FRAGMENT")
	((${#bad[@]} == 0)) || die "$K_NAME debug kernel: not in the final .config: ${bad[*]}"
	note "$K_NAME debug kernel: make -j$(nproc) bzImage modules (log: $log)"
	start=$(date +%s)
	"${mk[@]}" -j"$(nproc)" bzImage modules >>"$log" 2>&1 ||
		{ tail -30 "$log" >&2; die "$K_NAME debug kernel: build failed; log in $log"; }
	secs=$(($(date +%s) - start))
	"${mk[@]}" -s kernelrelease >"$dir.tmp/release"
	echo "$secs" >"$dir.tmp/build-seconds"
	ln -s tree/arch/x86/boot/bzImage "$dir.tmp/vmlinuz"
	echo "$stamp" >"$dir.tmp/.built"
	mv "$dir.tmp" "$dir"
	# the tree's absolute paths (M= builds) are recorded at build time: keep them valid
	echo "$K_NAME debug kernel: built $(cat "$dir/release") in ${secs}s"
	exec {lk}>&-
}

debug_build() {
	conf "$1"
	local src=$2 out=$3 dir=$CACHE/debug/$K_NAME base rc=0
	[[ -f $dir/.built ]] || die "$K_NAME: no debug kernel (run: $PROG debug $K_NAME)"
	src=$(cd "$src" && pwd)
	mkdir -p "$SCRATCH" "$out"
	base=$(mktemp -d "$SCRATCH/debug-$K_NAME.XXXXXX")
	# shellcheck disable=SC2064 # expand now: $base is local
	trap "rm -rf '$base'" EXIT
	tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$base" -xf -
	make -C "$dir/tree" ARCH=x86_64 M="$base" KCFLAGS=-Werror -j"$(nproc)" modules \
		>"$out/build.log" 2>&1 || rc=$?
	((rc == 0)) || { cat "$out/build.log" >&2; die "$K_NAME debug: module build failed"; }
	if grep -n 'warning:' "$out/build.log" >&2; then
		die "$K_NAME debug: the build printed warnings (treated as errors)"
	fi
	cp "$base/peercgroup.ko" "$out/"
	echo "$K_NAME debug: $out/peercgroup.ko"
}

# --- main ----------------------------------------------------------------------------

# sourced (another script reusing the functions above): no command to run
[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0

(($#)) || usage
cmd=$1
shift
case $cmd in
list) (($# == 0)) || usage; names ;;
fetch) (($# == 1)) || usage; fetch "$1" ;;
root) (($# == 1)) || usage; root "$1" ;;
kdir) (($# == 1)) || usage; kdir "$1" ;;
modver) (($# == 1)) || usage; modver "$1" ;;
arch) (($# == 1)) || usage; conf "$1"; echo "$K_ARCH" ;;
build) (($# == 3)) || usage; build "$@" ;;
debug) (($# == 1)) || usage; debug "$1" ;;
debug-build) (($# == 3)) || usage; debug_build "$@" ;;
checkpatch) (($# == 1)) || usage; checkpatch "$1" ;;
-h | --help | help) usage 0 ;;
*) usage ;;
esac
