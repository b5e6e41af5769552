# shellcheck shell=bash
# Shared by scripts/kernel.sh's parts and scripts/deps.sh: messages, paths,
# and the pipelines more than one of them runs (a package's Depends, what
# is installed, installing what is missing).
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PROG=${PROG:-${0##*/}}
CACHE=${PEERCG_CACHE:-$TOP/build/cache}
SCRATCH=$TOP/build/scratch

die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }

# deb_depends DEB: the package names of DEB's Depends, one per line (first
# of each alternative, versions dropped).
deb_depends() {
	dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^$'
}

# missing_packages PKG...: those of PKG not installed on this machine.
missing_packages() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || echo "$p"
	done
}

# install_missing WHY PKG...: installs with the machine's own apt whatever of
# PKG is missing (as a DKMS install would); WHY names the need in messages.
install_missing() {
	local why=$1 update=${INSTALL_UPDATE:-0}
	shift
	local -a missing
	mapfile -t missing < <(missing_packages "$@")
	((${#missing[@]})) || return 0
	[[ $(id -u) -eq 0 ]] || die "$why: missing packages: ${missing[*]}; run as root or install them"
	note "$why: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ((update)); then apt-get -q update >&2; fi
	apt-get -q install -y --no-install-recommends "${missing[@]}" >&2 ||
		die "$why: cannot install ${missing[*]}"
}

# with_lock NAME CMD...: runs CMD holding build/cache/.lock-NAME (parallel
# calls of the scripts share the cache).
with_lock() {
	local name=$1 lk rc=0
	shift
	mkdir -p "$CACHE"
	exec {lk}>"$CACHE/.lock-$name"
	flock "$lk"
	"$@" || rc=$?
	exec {lk}>&-
	return "$rc"
}
