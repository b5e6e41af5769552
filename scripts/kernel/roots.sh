# shellcheck shell=bash
# Build roots: a minimal Debian suite (mmdebstrap) with the compiler a
# kernel of the matrix was built with, for kernels whose compiler the
# build machine lacks (kernels.conf's ROOT column).
ROOTS=$CACHE/roots

# root SUITE: a minimal Debian SUITE with the compilers of the kernels that use it and
# their kbuild tools' runtime dependencies.
root() {
	local suite=$1 n deb
	local -a pkgs=(make libc6-dev) kernels=()
	for n in $(names); do
		conf "$n"
		[[ $K_ROOT == "$suite" ]] || continue
		kernels+=("$n")
		fetch "$n" >/dev/null
		pkgs+=("$K_CC")
		for deb in "$CACHE/debs/$n"/linux-kbuild-*.deb; do
			mapfile -t -O "${#pkgs[@]}" pkgs < <(deb_depends "$deb")
		done
	done
	((${#kernels[@]})) || die "no kernel in $CONF is built in root '$suite'"
	with_lock "root-$suite" root_locked "$suite" "$(printf '%s\n' "${pkgs[@]}" | sort -u | paste -sd, -)" \
		"${kernels[@]}"
}

# make_root DIR SUITE PKG...: a minimal Debian SUITE at DIR with PKG... installed
# (mmdebstrap), remade only when the package set changes.  The caller holds DIR's lock.
make_root() {
	local dir=$1 suite=$2 want main
	shift 2
	want=$(printf '%s\n' "$@" | sort -u | paste -sd, -)
	if [[ -f $dir/.ready && $(cat "$dir/.ready") == "$want" ]]; then
		echo "root ${dir##*/}: cached"
		return 0
	fi
	install_missing "build roots" mmdebstrap
	read -r main _ < <(mirror_uris)
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "${dir%/*}"
	note "root ${dir##*/}: mmdebstrap $suite with $want"
	# the machine's own apt policy on Release dates, which mmdebstrap does not read: a
	# mirror serving a snapshot (expired Valid-Until) needs the checks off there too
	# (signatures are checked either way)
	local -a aptopts=()
	local opt val
	for opt in Acquire::Check-Valid-Until Acquire::Check-Date; do
		val=$(apt-config dump "$opt" 2>/dev/null | awk '{print $2}' | tr -d '";')
		[[ $val == false ]] && aptopts+=("--aptopt=$opt \"false\"")
	done
	# essential + the includes, no docs/man/locales: the smallest root that builds modules
	mmdebstrap --variant=essential --include="$want" --mode=root --format=directory \
		"${aptopts[@]}" \
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

# root_locked ROOT PKGS KERNEL...: make or reuse the root; unpack the kernels' headers.
# ROOT "SUITE-cross" is a root of SUITE of its own for the cross compilers (arm64 rows), so
# that the native root's package set does not change with them.
root_locked() {
	local dir=$ROOTS/$1 n deb
	local -a want
	IFS=, read -r -a want <<<"$2"
	make_root "$dir" "${1%-cross}" "${want[@]}"
	shift 2
	# the kernels' headers, unpacked at their real absolute paths inside the root
	for n in "$@"; do
		conf "$n"
		local stamp=$dir/.headers-$n
		[[ -f $stamp && $(cat "$stamp") == "$K_ABI $K_VER" ]] && continue
		for deb in "$CACHE/debs/$n"/linux-headers-*.deb "$CACHE/debs/$n"/linux-kbuild-*.deb; do
			dpkg -x "$deb" "$dir"
		done
		echo "$K_ABI $K_VER" >"$stamp"
	done
}
