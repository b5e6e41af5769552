#!/usr/bin/env bash
# The Debian packages (make deb, make deb-prev) and their lintian check.
#
#   deb.sh build SRC OUT          dpkg-buildpackage -us -uc -b on a copy of the
#                                 checkout SRC (tracked and new files); the .debs,
#                                 .buildinfo and .changes land in OUT
#   deb.sh prev COMMIT VERSION OUT
#                                 the tree of COMMIT (a release made before the
#                                 packaging existed) with today's debian/ and
#                                 packaging layer (dkms.conf, packaging/,
#                                 scripts/dkms.sh), as VERSION, into OUT
#   deb.sh broken DEBDIR OUT      a new version whose module does not compile:
#                                 DEBDIR's peercgroup-dkms repacked as
#                                 VERSION.1~broken with an #error, into OUT
#   deb.sh lintian OUT            lintian on OUT's .changes: fails on any error
#                                 or warning; prints a one-line summary
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "deb.sh: $*" >&2; exit 1; }

# buildpkg DIR OUT: build in DIR (named peercgroup-VERSION), move results to OUT.
buildpkg() {
	local dir=$1 out=$2 t0=$SECONDS
	(cd "$dir" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
		{ tail -n 40 "$out/build.log" >&2; die "dpkg-buildpackage failed, log in $out/build.log"; }
	local parent
	parent=$(dirname "$dir")
	mv "$parent"/*.deb "$parent"/*.changes "$parent"/*.buildinfo "$out/"
	echo "deb.sh: built in $((SECONDS - t0))s:"
	find "$out" -maxdepth 1 -name '*.deb' -printf '  %f\n' | sort
}

case ${1:-} in
build)
	src=$(cd "${2:?}" && pwd) out=${3:?}
	version=$(cat "$src/VERSION")
	rm -rf "$out"
	mkdir -p "$out/src/peercgroup-$version"
	out=$(cd "$out" && pwd)
	(cd "$src" && git ls-files -co --exclude-standard -z | grep -zv '^build/' |
		xargs -0 cp --parents -t "$out/src/peercgroup-$version")
	buildpkg "$out/src/peercgroup-$version" "$out"
	;;
prev)
	commit=${2:?} version=${3:?} out=${4:?}
	rm -rf "$out"
	d=$out/src/peercgroup-$version
	mkdir -p "$d"
	out=$(cd "$out" && pwd)
	d=$out/src/peercgroup-$version
	git -C "$top" archive "$commit" | tar -x -C "$d"
	[ "$(cat "$d/VERSION")" = "$version" ] || die "$commit has VERSION $(cat "$d/VERSION"), not $version"
	cp -r "$top/debian" "$d/"
	cp "$top/dkms.conf" "$d/"
	cp "$top/packaging/Makefile.dkms" "$d/packaging/"
	rm -f "$d/packaging/dkms.conf.in"
	cp "$top/scripts/dkms.sh" "$d/scripts/"
	sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$version\"/" "$d/dkms.conf"
	# Only that release's entry in debian/changelog.
	sed -n "/^peercgroup ($version)/,\$p" "$top/debian/changelog" >"$d/debian/changelog"
	[ -s "$d/debian/changelog" ] || die "debian/changelog has no entry for $version"
	# The symbols of the version nodes that release had, and its files.
	nodes=$(sed -n 's/^\(LIBPEERCGROUP_[0-9.]*\) *{.*/\1/p' "$d/userlib/libpeercgroup.map" | paste -sd'|')
	grep -E "^[^ ]|@($nodes) " "$top/debian/libpeercgroup1.symbols" >"$d/debian/libpeercgroup1.symbols"
	[ -e "$d/userlib/cli/peercgroup.bash" ] ||
		sed -i '/bash-completion/d' "$d/debian/peercgroup.install"
	# Headers in include/peercgroup/, as debian/libpeercgroup-dev.install wants.
	# shellcheck disable=SC2016  # $(INCLUDEDIR) is make's, in the Makefile
	sed -i -e 's|\$(INCLUDEDIR)/linux|$(INCLUDEDIR)/peercgroup/linux|g' \
		-e 's|\$(INCLUDEDIR)/peercgroup.h|$(INCLUDEDIR)/peercgroup/peercgroup.h|' "$d/userlib/Makefile"
	buildpkg "$d" "$out"
	;;
broken)
	src=${2:?} out=${3:?}
	mkdir -p "$out"
	w=$(mktemp -d)
	trap 'rm -rf "$w"' EXIT
	dpkg-deb -R "$(find "$src" -maxdepth 1 -name 'peercgroup-dkms_*.deb' | head -n 1)" "$w/p" ||
		die "no peercgroup-dkms in $src"
	v=$(sed -n 's/^Version: //p' "$w/p/DEBIAN/control")
	bv=$v.1~broken
	mv "$w/p/usr/src/peercgroup-$v" "$w/p/usr/src/peercgroup-$bv"
	echo "$bv" >"$w/p/usr/src/peercgroup-$bv/VERSION"
	sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$bv\"/" "$w/p/usr/src/peercgroup-$bv/dkms.conf"
	echo '#error "a deliberately broken version (deb.sh broken)"' >>"$w/p/usr/src/peercgroup-$bv/module/main.c"
	sed -i "s/^Version: .*/Version: $bv/" "$w/p/DEBIAN/control"
	(cd "$w/p" && find usr -type f -exec md5sum {} + >DEBIAN/md5sums)
	dpkg-deb -b -Zgzip "$w/p" "$out/peercgroup-dkms_${bv}_all.deb" >/dev/null
	;;
lintian)
	out=${2:?}
	changes=$(ls "$out"/*.changes)
	set +e
	lintian --fail-on error,warning --display-info --pedantic "$changes" >"$out/lintian.log" 2>&1
	rc=$?
	set -e
	cat "$out/lintian.log"
	n() { grep -c "^$1: " "$out/lintian.log" || true; }
	echo "$(lintian --version): $(n E) errors, $(n W) warnings, $(n I) info, $(n P) pedantic ($(basename "$changes"))"
	[ $rc -eq 0 ] && [ "$(n E)" -eq 0 ] && [ "$(n W)" -eq 0 ]
	;;
*) die "usage: deb.sh build SRC OUT | prev COMMIT VERSION OUT | broken DEBDIR OUT | lintian OUT" ;;
esac
