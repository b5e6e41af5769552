# shellcheck shell=bash
# The debug kernel: Debian's own linux-source of a matrix kernel, built with
# scripts/debug-kernel.config (KASAN, kmemleak, lockdep, UBSAN, failslab),
# and module builds against it.
DEBUG_FRAGMENT=$TOP/scripts/debug-kernel.config

# debug NAME: "make tinyconfig" plus the fragment, "make bzImage modules" (modules: that
# writes Module.symvers).  Once: cached under build/cache/debug/NAME with vmlinuz, release,
# build-seconds and the tree the module builds against.
debug() {
	conf "$1"
	with_lock "debug-$K_NAME" debug_locked "$1"
}

debug_locked() {
	conf "$1"
	local dir=$CACHE/debug/$K_NAME pkg stamp
	pkg=linux-source-$(cut -d. -f1,2 <<<"$K_VER")
	stamp="$pkg $K_VER $(sha256sum "$DEBUG_FRAGMENT" | cut -c1-16) $(gcc -dumpfullversion)"
	if [[ -f $dir/.built && $(cat "$dir/.built") == "$stamp" ]]; then
		echo "$K_NAME debug kernel: cached ($(cat "$dir/release"), built in $(cat "$dir/build-seconds")s)"
		return 0
	fi
	install_missing "debug kernel build dependencies" make gcc flex bison bc libelf-dev libssl-dev xz-utils cpio
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
	# the fragment must hold in the final .config: olddefconfig drops an "=y" whose
	# dependency is missing, and turns an "is not set" back on if something selects it
	local line opt bad=()
	while read -r line; do
		case $line in
		CONFIG_*) grep -qx "$line" "$tree/.config" || bad+=("not $line") ;;
		*)
			opt=${line#\# }
			opt=${opt% is not set}
			! grep -q "^$opt=" "$tree/.config" || bad+=("$opt on")
			;;
		esac
	done < <(grep -E '^(CONFIG_[A-Z0-9_]+=y|# CONFIG_[A-Z0-9_]+ is not set)$' "$DEBUG_FRAGMENT")
	((${#bad[@]} == 0)) || die "$K_NAME debug kernel: the fragment does not hold: ${bad[*]}"
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
	copy_source "$src" "$base"
	make -C "$dir/tree" ARCH=x86_64 M="$base" KCFLAGS=-Werror PCG_FAULT_INJECT=y -j"$(nproc)" modules \
		>"$out/build.log" 2>&1 || rc=$?
	((rc == 0)) || { cat "$out/build.log" >&2; die "$K_NAME debug: module build failed"; }
	check_build_log "$out/build.log" "$base/peercgroup.ko" "$K_NAME debug"
	cp "$base/peercgroup.ko" "$out/"
	echo "$K_NAME debug: $out/peercgroup.ko"
}
