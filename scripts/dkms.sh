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
#   dkms.sh copy-sources DIR    the dkms source tree of this checkout into DIR
#   dkms.sh activate VERSION [KVER...]
#                               the package's postinst: build VERSION (already
#                               in /usr/src) and swap it in, rollback-safe
#   dkms.sh remove-all          the package's prerm: unload if unused, every
#                               version out of dkms
#
# Upgrades are rollback-safe: the new version is built for every kernel
# first, beside the installed one; only when every build succeeded are the
# old versions removed and the new one installed.  A failed build leaves
# the old module installed and loadable (and loaded at the next boot).
#
# Environment: DESTDIR (system files only), BOOTLOAD=0 to leave out the
# modules-load.d entry, UDEVDIR, MODLOADDIR, SRCDIR_BASE.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
name=peercgroup
# Installed by the package as /usr/lib/peercgroup-dkms/dkms.sh, away from a
# checkout: "activate" and "remove-all" are given or need no VERSION.
version=$(cat "$top/VERSION" 2>/dev/null || echo unknown)
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

# Exactly what dkms needs to build, in the checkout's layout: Kbuild,
# VERSION, dkms.conf, the module's sources, the uapi header and the
# Makefile of dkms.conf's MAKE line.  debian/peercgroup-dkms.install
# lists the same files.
copy_sources() {
	local dst=$1
	rm -rf "$dst"
	install -d -m 0755 "$dst/module" "$dst/include/uapi/linux" "$dst/packaging"
	install -m 0644 "$top/Kbuild" "$top/VERSION" "$top/dkms.conf" "$dst/"
	install -m 0644 "$top"/module/*.[ch] "$dst/module/"
	install -m 0644 "$top"/include/uapi/linux/peercgroup.h "$dst/include/uapi/linux/"
	install -m 0644 "$top/packaging/Makefile.dkms" "$dst/packaging/"
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

# Kernels a new version is built for: those given, those any version is
# installed for now, the running one; each only if its headers are there.
target_kernels() {
	{
		printf '%s\n' "$@"
		dkms status -m "$name" 2>/dev/null |
			sed -n "s|^$name/[^,]*, \([^,]*\), [^:]*: installed.*|\1|p"
		uname -r
	} | awk 'NF && !seen[$0]++' | while read -r k; do
		if [ -e "/lib/modules/$k/build/Makefile" ]; then echo "$k"; else
			say "kernel $k: no headers, skipped" >&2; fi
	done
}

# trial_build SRC KVER: dkms.conf's MAKE line, outside dkms, in a copy.
trial_build() {
	local d
	d=$(mktemp -d)
	cp -a "$1/." "$d/"
	make -s -C "$d" -f packaging/Makefile.dkms KVER="$2" KDIR="/lib/modules/$2/build" >"$d.log" 2>&1
	local rc=$?
	[ $rc -eq 0 ] || tail -n 30 "$d.log" >&2
	rm -rf "$d" "$d.log"
	return $rc
}

owned() { command -v dpkg-query >/dev/null && dpkg-query -S "$1" >/dev/null 2>&1; }

installed_summary() {
	local st
	st=$(dkms status -m "$name" 2>/dev/null | tr '\n' ';')
	echo "${st:-no $name version is installed}"
}

# activate VERSION [KVER...]: VERSION's sources are in /usr/src.  Build it
# for every target kernel beside whatever is installed; then, and only
# then, remove the other versions and install it.  On a failed build,
# VERSION leaves dkms again and the installed version is untouched.
activate() {
	local v=$1 k rc
	shift
	local -a kernels=() built=()
	mapfile -t kernels < <(target_kernels "$@")
	registered_versions | grep -qxF "$v" || dkms add "$name/$v" >/dev/null ||
		{ say "dkms add $name/$v failed"; return 1; }
	for k in "${kernels[@]}"; do
		rc=0
		if dkms status -m "$name" -v "$v" -k "$k" 2>/dev/null | grep -q ': \(built\|installed\)'; then
			built+=("$k")
			continue
		fi
		dkms build "$name/$v" -k "$k" || rc=$?
		case $rc in
		0) built+=("$k") ;;
		77) say "kernel $k cannot have $name (BUILD_EXCLUSIVE), skipped" ;;
		*)
			local log=/var/lib/dkms/$name/$v/build/make.log
			[ -f "$log" ] && { echo "---- $log (last 30 lines) ----"; tail -n 30 "$log"; } >&2
			say "the build of $name $v failed for kernel $k; the installed version is kept"
			dkms remove "$name/$v" --all >/dev/null 2>&1 || true
			return 1
			;;
		esac
	done
	local o
	for o in $(registered_versions); do
		[ "$o" = "$v" ] && continue
		remove_version "$o"
		owned "$srcbase/$name-$o" || rm -rf "${srcbase:?}/$name-$o"
	done
	for k in "${built[@]}"; do
		if ! dkms status -m "$name" -v "$v" -k "$k" 2>/dev/null | grep -q ': installed'; then
			dkms install "$name/$v" -k "$k" || { say "dkms install $name/$v -k $k failed"; return 1; }
		fi
		say "installed $name $v for kernel $k"
	done
	if [ -d /sys/module/$name ] && [ "$(cat /sys/module/$name/version)" != "$v" ]; then
		say "note: version $(cat /sys/module/$name/version) is still loaded; it is replaced at" \
			"the next boot, or now: stop the services that use /dev/$name, then" \
			"modprobe -r $name && modprobe $name, and start them again (connections" \
			"made before the reload have no record)"
	fi
}

# Before the modules leave /lib/modules: modprobe -r finds a module through
# modules.dep.  A module in use stays loaded until the reboot.  The static
# node kmod-static-nodes makes at boot from modules.devname (char 10:250)
# goes once the module is out.
unload() {
	if [ -d /sys/module/$name ]; then
		modprobe -r "$name" 2>/dev/null ||
			say "warning: $name is loaded and in use; it stays loaded until reboot"
	fi
	if [ ! -d /sys/module/$name ] && [ -c /dev/$name ] &&
		[ "$(stat -c %t:%T /dev/$name)" = a:fa ]; then
		rm -f /dev/$name
	fi
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
	src=$srcbase/$name-$version
	if registered_versions | grep -qxF "$version"; then
		# Reinstalling the same version: dkms holds one build per version,
		# so try these sources first, outside dkms, for every kernel.
		stage=$(mktemp -d)
		trap 'rm -rf "$stage"' EXIT
		copy_sources "$stage/src"
		for k in $(target_kernels "$kver"); do
			trial_build "$stage/src" "$k" ||
				die "the build failed for kernel $k (see above); $name $version stays installed as it was"
		done
		remove_version "$version"
	fi
	new_src=0
	[ -d "$src" ] || new_src=1
	copy_sources "$src"
	say "sources in $src"
	if ! activate "$version" "$kver"; then
		[ $new_src -eq 0 ] || rm -rf "$src"
		die "nothing was changed: $(installed_summary)"
	fi
	install_system
	;;
activate)
	v=${2:?usage: dkms.sh activate VERSION [KVER...]}
	shift 2
	need_root "dkms activate"
	activate "$v" "$@" || die "$name $v is not installed: $(installed_summary)"
	;;
remove-all)
	need_root "dkms remove-all"
	unload
	for v in $(registered_versions); do
		remove_version "$v"
		owned "$srcbase/$name-$v" || rm -rf "${srcbase:?}/$name-$v"
	done
	;;
copy-sources)
	copy_sources "${2:?usage: dkms.sh copy-sources DIR}"
	;;
uninstall)
	need_root "dkms uninstall"
	unload
	if command -v dkms >/dev/null; then
		for v in $(registered_versions); do
			remove_version "$v"
		done
	fi
	rm -rf "${srcbase:?}/$name"-* /var/lib/dkms/"$name"
	uninstall_system
	say "uninstalled"
	;;
install-system) install_system ;;
uninstall-system) uninstall_system ;;
files) echo "$udev_rule"; echo "$modload" ;;
*) die "usage: dkms.sh install KVER | uninstall | install-system | uninstall-system | files" ;;
esac
