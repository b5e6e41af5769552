# shellcheck shell=bash
# checkpatch: the kernel's own scripts/checkpatch.pl, from a matrix kernel's
# Debian linux-source.

# checkpatch NAME: checkpatch.pl and the data files it reads, into
# build/cache/checkpatch/NAME; prints the script's path.
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
