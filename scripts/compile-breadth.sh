#!/bin/bash
# compile-breadth.sh: compile the module, warnings as errors, against every Debian
# linux-headers flavour of scripts/headers-breadth.list (amd64 and arm64; generic, cloud,
# rt, 16k).  One line per package, then "compile: N passed, N failed, N refused, N skipped".
#
#   compile-breadth.sh [--subset] [--match ERE]  compile (--subset: the lines marked "ci";
#                                                --match: the lines matching ERE)
#   compile-breadth.sh refresh                   rewrite the list from the archive
#
# Why a pinned list and not the archive's current contents: CI must go red only when a
# change of ours breaks a build, not on the day the archive publishes a new ABI.  The list
# is pinned and refreshed on purpose ("refresh" prints what changed); a pinned package that
# has left the archive is reported as "skipped (gone from the archive)", never as a
# failure, and the run also names flavours the archive has that the list lacks.
#
# Headers and kbuild tools: the arm64 headers package holds arm64 build products (.config,
# generated headers, Module.symvers), which are what a cross build needs; its linux-kbuild
# package holds arm64 *host* programs, which cannot run here.  We use the amd64
# linux-kbuild package of the very same source version instead.  That is sound because
# those programs (fixdep, modpost, genksyms, ...) are built from the same source; they
# read the target's objects through the ELF class and machine fields at run time, and
# the one target-dependent input compiled into modpost, devicetable-offsets.h (offsets
# in struct *_device_id), is identical for two LP64 little-endian ABIs such as x86_64
# and arm64 (and the module has no device table).
#
# Compilers: each kernel's headers call the gcc version it was built with
# ("gcc-N", or "aarch64-linux-gnu-gcc-N" with CROSS_COMPILE).  gcc-12 is the build
# machine's (Debian 12); other versions run in the build root kernels.conf gives the kernel
# built with that compiler (compiler_root), or one of our own, build/cache/roots/breadth-SUITE.
set -euo pipefail

PROG=${0##*/}
# kernel.sh's parts: paths (TOP, CACHE), locks, private apt, build roots
# shellcheck source=scripts/kernel/standalone.sh
. "$(dirname "${BASH_SOURCE[0]}")/kernel/standalone.sh"
LIST=$TOP/scripts/headers-breadth.list
APTDIR=$CACHE/apt-breadth
APT_SUITES="$APT_SUITES sid"
BREADTH=$CACHE/breadth
FLAVOURS="amd64 cloud-amd64 rt-amd64 arm64 cloud-arm64 rt-arm64 arm64-16k"
CROSS=aarch64-linux-gnu

# compiler_root CCPKG: where compiler package CCPKG (gcc-N, or gcc-N-aarch64-linux-gnu for
# arm64) runs: "host"; the build root the deep matrix already uses for that very compiler
# (kernels.conf's ROOT: one root per compiler, so CI makes no second one); or, for a
# compiler no booted kernel uses, a root of our own "breadth-SUITE" (SUITE: the oldest
# suite that has it).  The kbuild tools of every version of a suite need the same
# libraries (libc6, libelf, libssl, zlib1g, pahole), which those roots hold.
compiler_root() {
	local r
	r=$(awk -v c="$1" '!/^[[:space:]]*(#|$)/ && $5 == c {print $6; exit}' "$TOP/scripts/kernels.conf")
	if [[ -n $r ]]; then
		echo "$r"
		return 0
	fi
	case $1 in
	gcc-15* | gcc-16*) echo breadth-sid ;;
	*) return 1 ;;
	esac
}

# ccpkg ARCH CC: the compiler package an ARCH build with the kernel's CC calls
ccpkg() { if [[ $1 == arm64 ]]; then echo "$2-$CROSS"; else echo "$2"; fi; }

breadth_apt() {
	apt_setup
	APT_OPTS+=(-o APT::Architectures::=arm64)
	[[ -f $APTDIR/updated ]] || apt_update
}

# The private lists' linux-headers-* and linux-kbuild-* stanzas, one line each:
# "SUITE ARCH PACKAGE VERSION DEPENDS,..." (read once: an apt-cache call per package over
# seven suites and two architectures takes seconds).
INDEX=
headers_index() {
	INDEX=$APTDIR/headers.idx
	[[ -f $INDEX && $INDEX -nt $APTDIR/updated ]] && return 0
	local f suite arch
	for f in "$APTDIR"/lists/*_main_binary-*_Packages*; do
		suite=${f##*_dists_}
		suite=${suite%%_main_*}
		arch=${f##*binary-}
		arch=${arch%%_*}
		/usr/lib/apt/apt-helper cat-file "$f" | awk -v s="$suite" -v a="$arch" '
			/^Package: / { p = $2; v = ""; d = "" }
			/^Version: / { v = $2 }
			/^Depends: / { d = substr($0, 10); gsub(/\([^)]*\)/, "", d); gsub(/[ ]/, "", d); gsub(/:any/, "", d) }
			/^$/ { if (p ~ /^linux-(headers|kbuild)-/) print s, a, p, v, (d == "" ? "-" : d); p = "" }'
	done >"$INDEX.tmp"
	mv "$INDEX.tmp" "$INDEX"
}

# in_archive PKG ARCH VER: is that package version in the lists?
in_archive() { awk -v p="$1" -v a="$2" -v v="$3" '$3 == p && ($2 == a) && $4 == v {f = 1} END {exit !f}' "$INDEX"; }

# deps_of PKG ARCH VER: the names in its Depends (first of each alternative)
deps_of() {
	awk -v p="$1" -v a="$2" -v v="$3" '$3 == p && $2 == a && $4 == v {print $5; exit}' "$INDEX" |
		tr ',' '\n' | sed 's/|.*//; s/:.*//' | grep -v '^-\?$' || true
}

# archive_entries: "SUITE ARCH PACKAGE VERSION COMPILER" for every flavour metapackage of
# every suite, resolved to the concrete headers package it depends on there.
archive_entries() {
	local suite arch ver flav dep cc
	headers_index
	for flav in $FLAVOURS; do
		arch=amd64
		[[ $flav == *arm64* ]] && arch=arm64
		awk -v p="linux-headers-$flav" -v a="$arch" '$3 == p && $2 == a {print $1, $4}' "$INDEX" |
			while read -r suite ver; do
				dep=$(deps_of "linux-headers-$flav" "$arch" "$ver" | grep -E '^linux-headers-[0-9]' | head -1 || true)
				[[ -n $dep ]] || { note "linux-headers-$flav=$ver: no concrete headers dependency"; continue; }
				cc=$(deps_of "$dep" "$arch" "$ver" | sed -E 's/-for-host$//; s/^linux-compiler-(gcc-[0-9]+)-.*/\1/' |
					grep -E '^gcc-[0-9]+$' | head -1 || true)
				echo "$suite $arch $dep $ver ${cc:-gcc-unknown}"
			done
	done
}

SUITE_ORDER="bullseye bookworm bookworm-security bookworm-backports trixie trixie-backports sid"
sort_entries() {
	awk -v order="$SUITE_ORDER" 'BEGIN {n = split(order, o, " "); for (i = 1; i <= n; i++) rank[o[i]] = i}
		{print rank[$1], $0}' | sort -k1,1n -k3,3 -k4,4 | cut -d' ' -f2-
}

refresh() {
	breadth_apt
	# lists older than an hour are refreshed
	[[ -n $(find "$APTDIR/updated" -mmin -60 2>/dev/null) ]] || apt_update
	local new=$LIST.new mark
	{
		sed -n '1,/^# ---- entries/p' "$LIST"
		archive_entries | sort_entries | while read -r suite arch pkg ver cc; do
			# keep the "ci" mark of a flavour that was already in CI's subset
			mark=$(awk -v s="$suite" -v a="$arch" -v p="$pkg" '$1 == s && $2 == a && $6 == "ci" {
				f = p; sub(/^linux-headers-[0-9.]+-[0-9]+(\+[a-z0-9]+)?-/, "", f)
				g = $3; sub(/^linux-headers-[0-9.]+-[0-9]+(\+[a-z0-9]+)?-/, "", g)
				if (f == g) print "ci"}' "$LIST" | head -1)
			printf '%-18s %-5s %-42s %-20s %-7s %s\n' "$suite" "$arch" "$pkg" "$ver" "$cc" "$mark" | sed 's/ *$//'
		done
	} >"$new"
	diff -u <(entries "$LIST") <(entries "$new") || true
	mv "$new" "$LIST"
	echo "$PROG: $(entries "$LIST" | wc -l) packages in ${LIST#"$TOP"/}"
}

entries() { awk '!/^[[:space:]]*(#|$)/' "$1"; }

# unpacked NAME VER ARCH: where that .deb is unpacked
unpacked() { echo "$BREADTH/unpacked/$1_$2_$3"; }

# parts PKG ARCH VER: "NAME VER ARCH" of the headers package, its -common headers and the
# (amd64: see above) kbuild tools
parts() {
	local dep
	echo "$1 $3 $2"
	for dep in $(deps_of "$1" "$2" "$3" | grep -E '^linux-(headers-.*-common(-rt)?|kbuild-.*)$'); do
		if [[ $dep == linux-kbuild-* ]]; then echo "$dep $3 amd64"; else echo "$dep $3 all"; fi
	done
}

# fetch_parts: every "NAME VER ARCH" on stdin not yet unpacked, in one apt-get download
# (apt-get reads the lists of seven suites and two architectures at each start)
fetch_parts() {
	local name ver arch dl=$BREADTH/dl deb
	local -a specs=()
	while read -r name ver arch; do
		[[ -f $(unpacked "$name" "$ver" "$arch")/.done ]] && continue
		if [[ $arch == all ]]; then specs+=("$name=$ver"); else specs+=("$name:$arch=$ver"); fi
	done
	((${#specs[@]})) || return 0
	rm -rf "$dl" && mkdir -p "$dl"
	note "downloading ${#specs[@]} packages"
	(cd "$dl" && apt-get -q "${APT_OPTS[@]}" download "${specs[@]}") >"$dl.log" 2>&1 ||
		{ cat "$dl.log" >&2; return 1; }
	for deb in "$dl"/*.deb; do
		read -r name ver arch < <(dpkg-deb -f "$deb" Package Version Architecture |
			sed 's/^[^:]*: //' | tr '\n' ' ')
		local dir
		dir=$(unpacked "$name" "$ver" "$arch")
		rm -rf "$dir" && mkdir -p "$dir" && dpkg -x "$deb" "$dir" || return 1
		touch "$dir/.done"
	done
	rm -rf "$dl"
}

# breadth_root NAME PKG...: a root of our own, breadth-SUITE (native and cross compilers)
breadth_root() {
	local name=$1 lk
	shift
	mkdir -p "$ROOTS"
	exec {lk}>"$CACHE/.lock-root-$name"
	flock "$lk"
	make_root "$ROOTS/$name" "${name#breadth-}" make libc6-dev "$@" >&2
	exec {lk}>&-
}

# ready_root WHERE PKG...: make WHERE usable (the deep matrix's roots through kernel.sh),
# once per run
declare -A READY=()
ready_root() {
	local where=$1
	shift
	[[ -z ${READY[$where]:-} ]] || return "${READY[$where]}"
	# a subshell: a root that cannot be made fails its packages, not the whole run
	case $where in
	host) ;;
	breadth-*) (breadth_root "$where" "$@") ;;
	*) "$TOP/scripts/kernel.sh" root "$where" >&2 ;;
	esac
	READY[$where]=$?
	return "${READY[$where]}"
}

# build_one ARCH ABI CC ROOTDIR LOWER...: compile in a private mount namespace where the
# unpacked headers/kbuild trees (LOWER...) are overlaid on ROOTDIR's /usr/src and /usr/lib.
build_one() {
	local arch=$1 abi=$2 cc=$3 r=$4 out=$5
	shift 5
	local srcs=() libs=() l
	for l in "$@"; do
		[[ -d $l/usr/src ]] && srcs+=("$l/usr/src")
		[[ -d $l/usr/lib ]] && libs+=("$l/usr/lib")
	done
	local lsrc lib
	lsrc=$(IFS=:; echo "${srcs[*]}")
	lib=$(IFS=:; echo "${libs[*]}")
	local base m
	if [[ $r == / ]]; then
		mkdir -p "$SCRATCH"
		base=$(mktemp -d "$SCRATCH/breadth.XXXXXX")
		m=$base
	else
		mkdir -p "$r/build"
		base=$(mktemp -d "$r/build/breadth.XXXXXX")
		m=/build/${base##*/}
	fi
	tar -C "$TOP" --exclude=./build --exclude=./.git -cf - . | tar -C "$base" -xf -
	local -a mk=(make -C "/usr/src/linux-headers-$abi" "M=$m" KCFLAGS=-Werror -j"$(nproc)" modules)
	[[ $arch == arm64 ]] && mk+=(ARCH=arm64 "CROSS_COMPILE=$CROSS-")
	local rc=0
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private -- bash -c '
		set -e
		r=$1 lsrc=$2 lib=$3; shift 3
		mount -t overlay pcg-src -o "lowerdir=$lsrc:${r%/}/usr/src" "${r%/}/usr/src"
		mount -t overlay pcg-lib -o "lowerdir=$lib:${r%/}/usr/lib" "${r%/}/usr/lib"
		[ "$r" != / ] || exec env LC_ALL=C "$@"
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C "$@"
		' _ "$r" "$lsrc" "$lib" "${mk[@]}" >"$out/build.log" 2>&1 || rc=$?
	[[ -f $base/peercgroup.ko ]] && cp "$base/peercgroup.ko" "$out/"
	rm -rf "$base"
	if ((rc)); then
		return 1
	fi
	! grep -q 'warning:' "$out/build.log" && [[ -f $out/peercgroup.ko ]]
}

run() {
	local subset=$1 match=$2 line suite arch pkg ver cc mark
	local passed=0 failed=0 skipped=0 refused=0 start=$SECONDS t0
	local -a fails=()
	exec 9>"$CACHE/.lock-apt-breadth"
	flock 9
	breadth_apt
	headers_index
	mkdir -p "$BREADTH"
	local results=$TOP/build/breadth
	rm -rf "$results"
	mkdir -p "$results"
	local -a todo=()
	while read -r suite arch pkg ver cc mark; do
		[[ $subset == 1 && ${mark:-} != ci ]] && continue
		[[ -z $match || "$suite $arch $pkg" =~ $match ]] || continue
		todo+=("$suite $arch $pkg $ver $cc")
	done < <(entries "$LIST")
	# the build roots these entries need, once each (native and cross compilers together)
	local -A root_pkgs=()
	local -a gone=()
	local where kb
	for line in "${todo[@]}"; do
		read -r suite arch pkg ver cc <<<"$line"
		where=$(compiler_root "$(ccpkg "$arch" "$cc")") || continue
		[[ $where == breadth-* ]] || continue
		root_pkgs[$where]+=" $cc $cc-$CROSS"
		# and the kbuild tools' runtime dependencies
		in_archive "$pkg" "$arch" "$ver" || continue
		for kb in $(deps_of "$pkg" "$arch" "$ver" | grep -E '^linux-kbuild-'); do
			root_pkgs[$where]+=" $(deps_of "$kb" amd64 "$ver" | tr '\n' ' ')"
		done
	done
	# every .deb of the run in one download
	for line in "${todo[@]}"; do
		read -r suite arch pkg ver cc <<<"$line"
		in_archive "$pkg" "$arch" "$ver" && parts "$pkg" "$arch" "$ver"
	done | sort -u | fetch_parts || echo "compile: some downloads failed (see the lines below)"
	# the build machine's own compiler first: a result per package comes sooner
	local -a host=() rooted=()
	for line in "${todo[@]}"; do
		read -r suite arch pkg ver cc <<<"$line"
		if [[ $(compiler_root "$(ccpkg "$arch" "$cc")" || true) == host ]]; then
			host+=("$line")
		else
			rooted+=("$line")
		fi
	done
	for line in "${host[@]}" "${rooted[@]}"; do
		read -r suite arch pkg ver cc <<<"$line"
		local name=$suite/$arch/${pkg#linux-headers-} out status
		out=$results/$suite-$arch-${pkg#linux-headers-}
		mkdir -p "$out"
		t0=$SECONDS
		if ! in_archive "$pkg" "$arch" "$ver"; then
			printf '%-62s skipped: %s=%s is gone from the archive (compile-breadth.sh refresh)\n' "$name" "$pkg" "$ver"
			skipped=$((skipped + 1))
			gone+=("$pkg")
			continue
		fi
		local abi=${pkg#linux-headers-} r cpkg
		cpkg=$(ccpkg "$arch" "$cc")
		if ! where=$(compiler_root "$cpkg"); then
			status="FAIL: no build root known for compiler $cpkg (scripts/compile-breadth.sh compiler_root)"
		else
			if [[ $where == host ]]; then
				r=/
				install_missing "compile breadth" "$cpkg"
			else
				r=$ROOTS/$where
			fi
			# the headers, their -common and the kbuild tools (amd64 ones, see above)
			local -a lower=()
			local ok=1 n v a
			while read -r n v a; do
				[[ -f $(unpacked "$n" "$v" "$a")/.done ]] || ok=0
				lower+=("$(unpacked "$n" "$v" "$a")")
			done < <(parts "$pkg" "$arch" "$ver")
			# shellcheck disable=SC2046 # a word list: one package per word
			if ! ready_root "$where" $(tr ' ' '\n' <<<"${root_pkgs[$where]:-}" | sort -u); then
				status="FAIL: build root $where for $cpkg could not be made (its messages above)"
			elif ((!ok)); then
				status="FAIL: download failed"
			elif build_one "$arch" "$abi" "$cpkg" "$r" "$out" "${lower[@]}"; then
				status=ok
			else
				# a kernel the module refuses on purpose (compat.h's #error, which the DKMS
				# guard repeats before building) is a clear message, not a failure
				status=$(grep -m1 -oE '#error "peercgroup (does not support|needs) [^"]*' "$out/build.log" || true)
				if [[ -n $status ]]; then
					status="refused (expected): ${status#\#error \"}"
				else
					status="FAIL: $(grep -m1 -E 'error:|warning:|Error [0-9]' "$out/build.log" || echo "see $out/build.log")"
				fi
			fi
		fi
		printf '%-62s %-28s %s (%ds)\n' "$name" "$ver $cc" "$status" $((SECONDS - t0))
		if [[ $status == ok ]]; then
			passed=$((passed + 1))
		elif [[ $status == refused* ]]; then
			refused=$((refused + 1))
		else
			failed=$((failed + 1))
			fails+=("$name: ${out#"$TOP"/}/build.log")
		fi
	done
	if [[ $subset == 0 ]]; then
		local missing
		missing=$(comm -13 <(entries "$LIST" | awk '{print $1, $3}' | sort -u) \
			<(archive_entries | awk '{print $1, $3}' | sort -u) || true)
		[[ -z $missing ]] || echo "note: in the archive but not in the list (compile-breadth.sh refresh):" \
			"$(tr '\n' ';' <<<"$missing")"
	fi
	((${#fails[@]} == 0)) || printf 'failed: %s\n' "${fails[@]}"
	# refused: the module's own #error for a kernel it does not support (PREEMPT_RT), as the
	# DKMS guard says too; skipped: a pinned package gone from the archive
	echo "compile: ${#todo[@]} packages in $((SECONDS - start))s"
	echo "compile: $passed passed, $failed failed, $refused refused, $skipped skipped"
	((failed == 0))
}

subset=0 match=
while (($#)); do
	case $1 in
	refresh) refresh; exit 0 ;;
	--subset) subset=1; shift ;;
	--match) match=${2:?--match wants an ERE}; shift 2 ;;
	*) echo "usage: $PROG [--subset] [--match ERE] | refresh" >&2; exit 2 ;;
	esac
done
run "$subset" "$match"
