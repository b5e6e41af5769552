#!/usr/bin/env bash
# Install peercgroup as an admin would, with the distribution's dkms, and
# take it out again without a trace.  Called by "make dkms-install",
# "make dkms-uninstall", "make install-system", "make uninstall-system".
#
#   dkms.sh install KVER        sources to /usr/src/peercgroup-VERSION,
#                               dkms add/build/install for KVER, system files
#   dkms.sh uninstall           every version out of dkms and /usr/src,
#                               system files removed
#   dkms.sh install-system      udev rule, modules-load.d entry
#   dkms.sh uninstall-system
#   dkms.sh files               list the installed system files
#
# Environment: DESTDIR (system files only), BOOTLOAD=0 to leave out the
# modules-load.d entry, UDEVDIR, MODLOADDIR, SRCDIR_BASE.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
name=peercgroup
version=$(cat "$top/VERSION")
srcbase=${SRCDIR_BASE:-/usr/src}
udevdir=${UDEVDIR:-/etc/udev/rules.d}
modloaddir=${MODLOADDIR:-/etc/modules-load.d}
udev_rule=$udevdir/60-peercgroup.rules
modload=$modloaddir/peercgroup.conf

say() { echo "dkms.sh: $*"; }
die() { echo "dkms.sh: $*" >&2; exit 1; }
trap 'echo "dkms.sh: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
need_root() { [ "$(id -u)" -eq 0 ] || die "$1 needs root"; }

# The versions dkms knows, from lines like "peercgroup/0.1.0, 6.1.0-57-amd64, x86_64: installed".
registered_versions() {
	dkms status -m "$name" 2>/dev/null | sed -n "s|^$name/\([^,:]*\)[,:].*|\1|p" | sort -u
}

# Exactly what dkms needs to build: Kbuild, VERSION, the module's sources,
# the uapi header, a Makefile for dkms' MAKE line and dkms.conf.
copy_sources() {
	local dst=$1
	rm -rf "$dst"
	install -d -m 0755 "$dst/module" "$dst/include/uapi/linux"
	install -m 0644 "$top/Kbuild" "$top/VERSION" "$dst/"
	install -m 0644 "$top"/module/*.[ch] "$dst/module/"
	install -m 0644 "$top"/include/uapi/linux/peercgroup.h "$dst/include/uapi/linux/"
	install -m 0644 "$top/packaging/Makefile.dkms" "$dst/Makefile"
	sed "s/@VERSION@/$version/g" "$top/packaging/dkms.conf.in" >"$dst/dkms.conf"
	chmod 0644 "$dst/dkms.conf"
}

install_system() {
	local d=${DESTDIR:-}
	install -D -m 0644 "$top/packaging/60-peercgroup.rules" "$d$udev_rule"
	if [ "${BOOTLOAD:-1}" != 0 ]; then
		install -D -m 0644 "$top/packaging/modules-load.conf" "$d$modload"
	fi
	# Let a running udev pick up the rule (no-op in a chroot or container).
	if [ -z "$d" ] && command -v udevadm >/dev/null && [ -d /run/udev ]; then
		udevadm control --reload-rules 2>/dev/null || true
	fi
	say "installed $d$udev_rule$([ "${BOOTLOAD:-1}" = 0 ] || echo " $d$modload")"
}

uninstall_system() {
	local d=${DESTDIR:-}
	rm -f "$d$udev_rule" "$d$modload"
	if [ -z "$d" ] && command -v udevadm >/dev/null && [ -d /run/udev ]; then
		udevadm control --reload-rules 2>/dev/null || true
	fi
	say "removed $d$udev_rule $d$modload"
}

remove_version() {
	local v=$1
	say "dkms remove $name/$v --all"
	dkms remove "$name/$v" --all || die "dkms remove $name/$v failed"
}

case ${1:-} in
install)
	kver=${2:?usage: dkms.sh install KVER}
	need_root "dkms install"
	command -v dkms >/dev/null || die "dkms is not installed (Debian: apt install dkms)"
	# Refuse an unsupported kernel with a sentence, before touching anything.
	make -s -C "$top" -f packaging/Makefile.dkms check KVER="$kver" ||
		die "kernel $kver cannot have peercgroup (see above); nothing was installed"
	# Upgrade or reinstall: whatever version dkms has is replaced, and the
	# new one is installed for KVER and every kernel the old one was.
	others=$(dkms status -m "$name" 2>/dev/null |
		sed -n "s|^$name/[^,]*, \([^,]*\), [^:]*: installed.*|\1|p" | sort -u | grep -vxF "$kver" || true)
	for v in $(registered_versions); do
		remove_version "$v"
		[ "$v" = "$version" ] || rm -rf "$srcbase/$name-$v"
	done
	src=$srcbase/$name-$version
	copy_sources "$src"
	say "sources in $src"
	dkms add "$name/$version"
	for k in "$kver" $others; do
		if [ "$k" != "$kver" ] && [ ! -d "/lib/modules/$k/build" ]; then
			say "kernel $k: no headers any more, skipped"
			continue
		fi
		if ! dkms build "$name/$version" -k "$k"; then
			log=/var/lib/dkms/$name/$version/build/make.log
			[ -f "$log" ] && { echo "---- $log (last 30 lines) ----"; tail -n 30 "$log"; }
			die "dkms build failed for kernel $k"
		fi
		dkms install "$name/$version" -k "$k"
		say "installed $name $version for kernel $k"
	done
	install_system
	if [ -d /sys/module/$name ] && [ "$(cat /sys/module/$name/version)" != "$version" ]; then
		say "note: version $(cat /sys/module/$name/version) is still loaded; it is replaced at" \
			"the next boot (or now: modprobe -r $name && modprobe $name, which forgets" \
			"the connections made so far)"
	fi
	;;
uninstall)
	need_root "dkms uninstall"
	if [ -d /sys/module/$name ]; then
		modprobe -r "$name" 2>/dev/null ||
			say "warning: $name is loaded and in use; it stays loaded until reboot"
	fi
	if command -v dkms >/dev/null; then
		for v in $(registered_versions); do
			remove_version "$v"
		done
	fi
	rm -rf "${srcbase:?}/$name"-* /var/lib/dkms/"$name"
	# The static node made at boot from modules.devname (char 10:250).
	if [ ! -d /sys/module/$name ] && [ -c /dev/$name ] &&
		[ "$(stat -c %t:%T /dev/$name)" = a:fa ]; then
		rm -f /dev/$name
	fi
	uninstall_system
	say "uninstalled"
	;;
install-system) install_system ;;
uninstall-system) uninstall_system ;;
files) echo "$udev_rule"; echo "$modload" ;;
*) die "usage: dkms.sh install KVER | uninstall | install-system | uninstall-system | files" ;;
esac
