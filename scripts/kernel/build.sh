# shellcheck shell=bash
# Module builds: a source tree with a top-level Kbuild, built against a
# kernel of the matrix with that kernel's own compiler, warnings as errors.

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

# host_deps: on the build machine, the compiler, make and the runtime dependencies of the
# kernel's kbuild tools (e.g. pahole for module BTF on 6.12).
host_deps() {
	local -a need=(make "$K_CC")
	local deb
	for deb in "$CACHE/debs/$K_NAME"/linux-kbuild-*.deb; do
		mapfile -t -O "${#need[@]}" need < <(deb_depends "$deb")
	done
	install_missing "$K_NAME build dependencies" "${need[@]}"
}

# check_build_log LOG KO WHAT: the build succeeded without a warning and made KO
check_build_log() {
	if grep -n 'warning:' "$1" >&2; then
		die "$3: the build printed warnings (treated as errors); log in $1"
	fi
	[[ -f $2 ]] || die "$3: no peercgroup.ko produced; log in $1"
}

# copy_source SRC DIR: the tree without build/ and .git (never build inside SRC:
# parallel builds, a clean tree)
copy_source() {
	tar -C "$1" --exclude=./build --exclude=./.git -cf - . | tar -C "$2" -xf -
}

# build NAME SRC OUT: also passes $PCG_KBUILD_FLAGS to make (C=2: sparse on every file)
build() {
	conf "$1"
	local src=$2 out=$3
	[[ -f $src/Kbuild ]] || die "$src: no top-level Kbuild"
	src=$(cd "$src" && pwd)
	fetch "$K_NAME" >/dev/null
	local base inner
	local -a extra
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
	copy_source "$src" "$base"
	local log=$base.log
	local -a make_cmd=(make -C "/usr/src/linux-headers-$K_ABI" "M=$inner" KCFLAGS=-Werror "-j$(nproc)")
	read -r -a extra <<<"${PCG_KBUILD_FLAGS:-}"
	[[ $K_ARCH == arm64 ]] && make_cmd+=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	make_cmd+=("${extra[@]}" modules)
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
	check_build_log "$out/build.log" "$base/peercgroup.ko" "$K_NAME"
	cp "$base/peercgroup.ko" "$out/"
	echo "$K_NAME: $out/peercgroup.ko"
}
