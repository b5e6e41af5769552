#!/usr/bin/env bash
# guest-rootfs.sh SRC DEST
# A Python for the busybox test guest, made from this machine's Debian
# python3 (never downloaded): DEST becomes a tree to copy over the
# initramfs root, holding
#   /usr/bin/python3 and the shared libraries ldd lists for it;
#   the standard library modules that the guest suite and the package can
#   import: the static closure of their import statements (modulefinder
#   follows imports inside functions too), the whole encodings package
#   (codecs are imported by name), the extension modules among them with
#   their own libraries, and Debian's compiled .pyc beside each source;
#   /opt/peercgroup-python: the package, tests/guest_suite.py and
#   examples/python-responder.py;
#   /tests/py_suite, the suite the guest's init runs.
set -euo pipefail
src=$1 dest=$2
py=$(readlink -f "${PYTHON:-/usr/bin/python3}")
rm -rf "$dest"
mkdir -p "$dest/usr/bin" "$dest/opt/peercgroup-python/peercgroup" "$dest/tests"

# copy_lib FILE: FILE at the same path in DEST, symlinks resolved.
copy_lib() {
	mkdir -p "$dest$(dirname "$1")"
	[ -e "$dest$1" ] || cp -L "$1" "$dest$1"
}
# copy_libs ELF: the libraries the dynamic loader would map for ELF.
copy_libs() {
	ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do copy_lib "$lib"; done
}

cp "$py" "$dest/usr/bin/python3"
copy_libs "$py"

pkg=$dest/opt/peercgroup-python
cp "$src"/bindings/python/peercgroup/*.py "$pkg/peercgroup/"
cp -L "$src/VERSION" "$pkg/peercgroup/VERSION"
cp "$src/bindings/python/tests/guest_suite.py" "$src/examples/python-responder.py" "$pkg/"

stdlib=$("$py" -S -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')
"$py" -S - "$pkg" "$pkg/guest_suite.py" "$pkg/python-responder.py" >"$dest/.files" <<'PY'
import modulefinder, sys
mf = modulefinder.ModuleFinder(path=[sys.argv[1]] + sys.path)
for script in sys.argv[2:]:
    mf.run_script(script)
mf.import_hook("encodings")
for name, m in mf.modules.items():
    if m.__file__:
        print(m.__file__)
PY
find "$stdlib/encodings" -name '*.py' >>"$dest/.files"
# The stdlib files (not the package, copied above), Debian's .pyc beside
# each source, in one cpio pass that keeps paths and mtimes (a .pyc is
# only used while its source's mtime matches).
tag=cpython-$("$py" -S -c 'import sys; print("%d%d" % sys.version_info[:2])')
sort -u "$dest/.files" | grep "^$stdlib/" | sed -E "p; s|^(.*)/([^/]*)\.py$|\1/__pycache__/\2.$tag.pyc|; t; d" |
	while read -r f; do [ -f "$f" ] && echo "$f"; done | cpio -pdm --quiet "$dest"
grep '\.so$' "$dest/.files" | while read -r so; do copy_libs "$so"; done
rm "$dest/.files"

cat >"$dest/tests/py_suite" <<'SH'
#!/bin/sh
# The Python binding's guest suite (bindings/python/tests/guest_suite.py).
exec /usr/bin/python3 -E -s -S /opt/peercgroup-python/guest_suite.py "$@"
SH
chmod 0755 "$dest/tests/py_suite"
echo "guest-rootfs.sh: $(find "$dest" -type f | wc -l) files, $(du -sh "$dest" | cut -f1)"
