# shellcheck shell=bash
# The kernel matrix: scripts/kernels.conf, read here and nowhere else.
CONF=${PCG_KERNELS_CONF:-$TOP/scripts/kernels.conf}

# conf NAME: sets K_NAME K_SUITE K_ABI K_VER K_CC K_ROOT and KDIR_CACHE
conf() {
	local line
	line=$(awk -v n="$1" '!/^[[:space:]]*(#|$)/ && $1 == n' "$CONF")
	[[ -n $line ]] || die "unknown kernel '$1' (known: $(names | tr '\n' ' '))"
	read -r K_NAME K_SUITE K_ABI K_VER K_CC K_ROOT <<<"$line"
	[[ -n ${K_ROOT:-} ]] || die "$CONF: malformed line for '$1'"
	# an ABI ending in -arm64 is an arm64 kernel, cross-built (kernels.conf names the rule)
	K_ARCH=amd64
	[[ $K_ABI == *-arm64 ]] && K_ARCH=arm64
	KDIR_CACHE=$CACHE/kernels/$K_NAME
}

names() { awk '!/^[[:space:]]*(#|$)/ {print $1}' "$CONF"; }

# field NAME FIELD: one field of a kernel's line (suite, abi, version, cc, root)
field() {
	conf "$1"
	case $2 in
	suite) echo "$K_SUITE" ;;
	abi) echo "$K_ABI" ;;
	version) echo "$K_VER" ;;
	cc) echo "$K_CC" ;;
	root) echo "$K_ROOT" ;;
	*) die "unknown field '$2' (suite, abi, version, cc, root)" ;;
	esac
}
