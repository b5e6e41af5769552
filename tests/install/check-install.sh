#!/bin/sh
# Check an installed tree: usage: check-install.sh DESTDIR PREFIX
# pkg-config finds the library, a program builds and runs against the
# installed header and shared library, and only peercgroup_* is exported.
set -eu
dest=$1 prefix=$2
lib=$dest$prefix/lib
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_LIBDIR=
flags=$(pkg-config --cflags --libs libpeercgroup)
echo "pkg-config --cflags --libs libpeercgroup: $flags"
pkg-config --modversion libpeercgroup
work=${O:-/tmp}/check-install-work
mkdir -p "$work"
cat > "$work/smoke.c" <<'EOC'
#include <peercgroup.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	struct peercgroup_container ct;
	if (peercgroup_classify("/system.slice/sshd.service", 26, &ct) ||
	    strcmp(peercgroup_runtime_name(ct.runtime), "systemd-service"))
		return 1;
	printf("smoke: libpeercgroup %s, %s\n", peercgroup_library_version(),
	       peercgroup_strerror(-ENOPKG));
	return 0;
}
EOC
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror -o "$work/smoke" "$work/smoke.c" $flags
LD_LIBRARY_PATH="$lib" "$work/smoke"
readelf -d "$work/smoke" | grep -q 'NEEDED.*libpeercgroup.so.1' || { echo "smoke not linked to libpeercgroup.so.1"; exit 1; }
bad=$(nm -D --defined-only "$lib/libpeercgroup.so.1" | awk '$3 !~ /^peercgroup_/ && $3 !~ /^LIBPEERCGROUP_/ {print $3}')
[ -z "$bad" ] || { echo "unexpected exports: $bad"; exit 1; }
# The headers live in include/peercgroup/; include/linux/ belongs to the
# kernel's headers package.
[ ! -e "$dest$prefix/include/linux" ] || { echo "installed into $prefix/include/linux"; exit 1; }
for f in "$dest$prefix/include/peercgroup/peercgroup.h" "$dest$prefix/include/peercgroup/linux/peercgroup.h" "$lib/libpeercgroup.a" "$dest$prefix/bin/peercgroup" \
	"$dest$prefix/share/man/man1/peercgroup.1" "$dest$prefix/share/man/man3/libpeercgroup.3" \
	"$dest$prefix/share/man/man4/peercgroup.4" "$dest$prefix/share/man/man3/peercgroup_get.3"; do
	[ -e "$f" ] || { echo "missing: $f"; exit 1; }
done
echo "check-install: OK"
