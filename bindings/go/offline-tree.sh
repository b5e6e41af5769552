#!/usr/bin/env bash
# offline-tree.sh SRC DEST
# Builds the Go binding and its example without a network: copies them
# from the source tree SRC into DEST, with a vendor/ directory made from
# Debian's golang-golang-x-sys-dev (/usr/share/gocode), so that
#   cd DEST/bindings/go && GOFLAGS=-mod=vendor GOPROXY=off go test
# works.  The source tree itself stays free of vendored code: users with
# a network resolve golang.org/x/sys through go.mod and go.sum as usual.
set -euo pipefail
src=$1 dest=$2
gocode=${GOCODE:-/usr/share/gocode/src}
xsys=$gocode/golang.org/x/sys/unix
mod=github.com/peercgroup/peercgroup/bindings/go
[ -d "$xsys" ] || { echo "offline-tree.sh: $xsys missing (golang-golang-x-sys-dev)" >&2; exit 1; }

xsys_version=$(sed -n 's/^require golang.org\/x\/sys \(v[^ ]*\).*/\1/p' "$src/bindings/go/go.mod")
deb_version=$(dpkg-query -W -f='${Version}' golang-golang-x-sys-dev 2>/dev/null || true)
case $deb_version in
"${xsys_version#v}"-*) ;;
*) echo "offline-tree.sh: note: go.mod wants golang.org/x/sys $xsys_version, Debian has ${deb_version:-?}" >&2 ;;
esac

# vendor_xsys DIR: golang.org/x/sys/unix (no tests) into DIR/vendor.
vendor_xsys() {
	mkdir -p "$1/vendor/golang.org/x/sys/unix"
	cp "$xsys"/*.go "$xsys"/*.s "$1/vendor/golang.org/x/sys/unix/"
	rm -f "$1"/vendor/golang.org/x/sys/unix/*_test.go
}

rm -rf "$dest/bindings/go" "$dest/examples/go-api-socket"
mkdir -p "$dest/bindings/go" "$dest/examples/go-api-socket"
cp "$src"/bindings/go/*.go "$src"/bindings/go/go.mod "$dest/bindings/go/"
vendor_xsys "$dest/bindings/go"
printf '# golang.org/x/sys %s\n## explicit; go 1.17\ngolang.org/x/sys/unix\n' "$xsys_version" \
	>"$dest/bindings/go/vendor/modules.txt"

ex=$dest/examples/go-api-socket
cp "$src"/examples/go-api-socket/*.go "$src"/examples/go-api-socket/go.mod "$ex/"
vendor_xsys "$ex"
mkdir -p "$ex/vendor/$mod"
cp "$src"/bindings/go/*.go "$ex/vendor/$mod/"
rm -f "$ex/vendor/$mod"/*_test.go
{
	printf '# %s v0.0.0-00010101000000-000000000000 => ../../bindings/go\n## explicit; go 1.19\n%s\n' "$mod" "$mod"
	printf '# golang.org/x/sys %s\n## explicit; go 1.17\ngolang.org/x/sys/unix\n' "$xsys_version"
	printf '# %s => ../../bindings/go\n' "$mod"
} >"$ex/vendor/modules.txt"
