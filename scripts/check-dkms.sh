#!/usr/bin/env bash
# make check-dkms: install with the machine's real dkms for a Debian kernel
# whose headers are installed, check what dkms and depmod made of it, boot
# that kernel with the installed .ko and the dkms_suite, check that the
# guard refuses unsupported kernels, uninstall and check that nothing is
# left.  Needs root.  One "ok - dkms/..." or "not ok - dkms/...: why" line
# per check; the last line is "dkms: N passed, N failed".
#
#   check-dkms.sh [KERNEL]      KERNEL: a name from scripts/kernels.conf (6.1)
#
# It refuses to run over an existing peercgroup install (it would remove it
# at the end) unless PCG_DKMS_FORCE=1.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
kname=${1:-6.1}
name=peercgroup
version=$(cat VERSION)
out=$top/build/run/dkms
passed=0 failed=0
start=$(date +%s)

ok() { echo "ok - dkms/$1"; passed=$((passed + 1)); }
notok() { echo "not ok - dkms/$1: $2"; failed=$((failed + 1)); }
# check NAME WHY COMMAND...: one verdict line from a command's status.
check() {
	local n=$1 why=$2
	shift 2
	if "$@"; then ok "$n"; else notok "$n" "$why"; fi
}
finish() {
	echo "# check-dkms took $(($(date +%s) - start))s"
	echo "dkms: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

rm -rf "$out"
mkdir -p "$out"

kver=$(scripts/kernel.sh modver "$kname") || { notok setup "unknown kernel $kname"; finish; }
echo "# kernel $kname ($kver), peercgroup $version"
if [ "$(id -u)" -ne 0 ]; then notok setup "must run as root (dkms installs system-wide)"; finish; fi
if ! command -v dkms >/dev/null; then notok setup "dkms is not installed"; finish; fi
if [ ! -e "/lib/modules/$kver/build/Makefile" ]; then
	notok setup "no headers for $kver (apt install linux-headers-$kver)"
	finish
fi
if [ "${PCG_DKMS_FORCE:-0}" != 1 ] &&
	{ [ -n "$(dkms status -m $name 2>/dev/null)" ] || compgen -G "/usr/src/$name-*" >/dev/null; }; then
	notok setup "$name is already installed here; this test would remove it (PCG_DKMS_FORCE=1 to allow)"
	finish
fi
echo "# dkms $(dkms --version 2>/dev/null | sed 's/^dkms-//')"

# ---- install, as an upgrade over an older version ----
# The "previous release": this tree with another VERSION, installed first
# with its own scripts; "make dkms-install" must replace it.
old=0.0.1~prev
prev=$out/prev
mkdir -p "$prev"
# variant DIR VERSION: this tree as another version (VERSION and dkms.conf).
variant() {
	mkdir -p "$1"
	cp -r Kbuild dkms.conf module include scripts packaging "$1/"
	echo "$2" >"$1/VERSION"
	sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$2\"/" "$1/dkms.conf"
}
variant "$prev" "$old"
t0=$(date +%s)
"$prev/scripts/dkms.sh" install "$kver" >"$out/install-prev.log" 2>&1
check install-prev "installing version $old failed, see $out/install-prev.log" \
	grep -q "^$name/$old, $kver, [^:]*: installed" <<<"$(dkms status -m $name 2>&1)"
echo "# dkms-install of $old (add + build + install) took $(($(date +%s) - t0))s"
t0=$(date +%s)
if make -s dkms-install KVER="$kver" >"$out/install.log" 2>&1; then
	ok install
else
	notok install "make dkms-install KVER=$kver failed, see $out/install.log"
	tail -n 40 "$out/install.log" | sed 's/^/# /'
fi
echo "# dkms-install (add + build + install) took $(($(date +%s) - t0))s"

status=$(dkms status -m $name -v "$version" -k "$kver" 2>&1)
echo "# dkms status: $status"
check status-installed "dkms status says '$status'" \
	grep -q "^$name/$version, $kver, [^:]*: installed" <<<"$status"
check upgrade-replaces "after the upgrade: '$(dkms status -m $name 2>&1 | tr '\n' ';')', $(echo /usr/src/$name-*)" \
	[ -z "$(dkms status -m $name -v "$old" 2>&1)" -a ! -e "/usr/src/$name-$old" ]

# The source tree: exactly the files dkms needs.
src=/usr/src/$name-$version
want=$( { echo Kbuild; echo VERSION; echo packaging/Makefile.dkms; echo dkms.conf
	  ls module/*.[ch]; echo include/uapi/linux/peercgroup.h; } | sort)
got=$(cd "$src" 2>/dev/null && find . -type f | sed 's|^\./||' | sort)
check source-tree "$src holds [$(tr '\n' ' ' <<<"$got")], want [$(tr '\n' ' ' <<<"$want")]" [ "$got" = "$want" ]
check dkms-conf-version "dkms.conf's PACKAGE_VERSION is not $version" \
	grep -qx "PACKAGE_VERSION=\"$version\"" "$src/dkms.conf"

ko=$(find "/lib/modules/$kver/updates/dkms" "/lib/modules/$kver/extra" \
	-name "$name.ko*" 2>/dev/null | head -1)
echo "# installed module: ${ko:-none}"
check ko-installed "no $name.ko under /lib/modules/$kver/updates/dkms" [ -n "$ko" ]
ko=${ko:-/nonexistent}
check ko-version "modinfo version is '$(modinfo -F version "$ko" 2>&1)'" \
	[ "$(modinfo -F version "$ko" 2>/dev/null)" = "$version" ]
check ko-vermagic "vermagic '$(modinfo -F vermagic "$ko" 2>&1)' is not for $kver" \
	grep -q "^$kver " <<<"$(modinfo -F vermagic "$ko" 2>/dev/null)"
check modules-devname "no 'peercgroup peercgroup c10:250' in modules.devname" \
	grep -qx "$name $name c10:250" "/lib/modules/$kver/modules.devname"
check modules-alias "no char-major-10-250 alias in modules.alias" \
	grep -qx "alias char-major-10-250 $name" "/lib/modules/$kver/modules.alias"
# dkms signs with its MOK key when it can make one (openssl); Secure Boot
# needs that signature (docs/INSTALL.md).
if command -v openssl >/dev/null; then
	signer=$(modinfo -F signer "$ko" 2>/dev/null)
	echo "# signer: ${signer:-none}, key /var/lib/dkms/mok.pub"
	check ko-signed "the installed module is not signed" \
		[ -n "$signer" -a -f /var/lib/dkms/mok.pub ]
else
	echo "# openssl missing: dkms cannot make a MOK key, module not signed (not checked)"
fi
mapfile -t sysfiles < <(scripts/dkms.sh files)
for f in "${sysfiles[@]}"; do
	check "system-file:$f" "$f not installed" [ -f "$f" ]
done
check udev-rule-mode "the udev rule does not give mode 0666 to the static node" \
	grep -q 'KERNEL=="peercgroup", MODE="0666", OPTIONS+="static_node=peercgroup"' \
	"${sysfiles[0]}"

# ---- rollback safety: a version that does not build changes nothing ----
# A newer version, and this same version rebuilt, each with a module that
# fails to compile: the install fails, and the installed module (booted
# below) is exactly the one installed before.
ko_before=$(sha256sum <"$ko")
status_before=$(dkms status -m $name 2>&1)
for b in newer:9.9.9~broken same:$version; do
	n=${b%%:*} v=${b#*:}
	rm -rf "$out/broken-$n"
	variant "$out/broken-$n" "$v"
	echo '#error "a deliberately broken version (check-dkms)"' >>"$out/broken-$n/module/main.c"
	t0=$(date +%s)
	if "$out/broken-$n/scripts/dkms.sh" install "$kver" >"$out/install-broken-$n.log" 2>&1; then
		notok "broken-$n-fails" "installing a version that cannot build succeeded"
	else
		ok "broken-$n-fails"
	fi
	echo "# failed install of a broken $n version took $(($(date +%s) - t0))s"
	check "broken-$n-says-kept" "the failure does not say the installed version stays" \
		grep -q "stays installed\|installed version is kept" "$out/install-broken-$n.log"
	check "broken-$n-status-unchanged" "dkms status: '$(dkms status -m $name 2>&1 | tr '\n' ';')', was '$status_before'" \
		[ "$(dkms status -m $name 2>&1)" = "$status_before" ]
	check "broken-$n-ko-unchanged" "the installed $ko changed" \
		[ "$(sha256sum <"$ko" 2>/dev/null)" = "$ko_before" ]
done
check broken-no-source "/usr/src/$name-9.9.9~broken remains" [ ! -e "/usr/src/$name-9.9.9~broken" ]
check broken-source-kept "/usr/src/$name-$version no longer holds the installed sources" \
	bash -c "! grep -q 'deliberately broken' /usr/src/$name-$version/module/main.c"

# ---- the installed .ko in a guest: modprobe, autoload on first open ----
if [ -f "$ko" ]; then
	scripts/kernel.sh fetch "$kname" >"$out/fetch.log" 2>&1 ||
		notok guest-kernel "scripts/kernel.sh fetch $kname failed, see $out/fetch.log"
	srcversion=$(modinfo -F srcversion "$ko")
	t0=$(date +%s)
	scripts/run-guest.sh --name "dkms-$kname" --kernel "build/cache/kernels/$kname/vmlinuz" \
		--kver "$kver" --ko "$ko" --bins build/guest --out "$out/guest" \
		--suites "$(scripts/suites.sh dkms)" --timeout 300 --append "pcg.srcversion=$srcversion" \
		>"$out/guest.log" 2>&1
	grep -a -E '^(ok|not ok) - |^# ' "$out/guest/console.log" | tr -d '\r' | sed 's/^/  /'
	read -r _ gp gf _ <"$out/guest/result" 2>/dev/null || { gp=0; gf=1; }
	passed=$((passed + gp))
	failed=$((failed + gf))
	tail -n 1 "$out/guest.log"
	[ "$gf" -eq 0 ] || sed 's/^/# /' "$out/guest.log" | tail -n 60
	echo "# guest boot + dkms_suite took $(($(date +%s) - t0))s"
else
	notok guest "no installed module to boot with"
fi

# ---- the guard: kernels the module cannot support are refused ----
refused() { # refused NAME KVER [dkms options]
	local n=$1 k=$2 rc
	shift 2
	dkms build "$name/$version" -k "$k" "$@" >"$out/refuse-$n.log" 2>&1
	rc=$?
	check "refuses-$n" "dkms build -k $k exited $rc, want 77 (BUILD_EXCLUSIVE)" [ $rc -eq 77 ]
}
refused old-kernel 5.4.0-99-amd64
fake=$out/fake-kdir
mkdir -p "$fake"
grep -v '^CONFIG_DYNAMIC_FTRACE=' "/lib/modules/$kver/build/.config" >"$fake/.config"
refused no-ftrace 6.1.0-99-fake --kernelsourcedir "$fake"
make -s dkms-install KVER=5.4.0-99-amd64 >"$out/refuse-make.log" 2>&1
check make-refuses-old "make dkms-install KVER=5.4.0-99-amd64 did not fail with a reason" \
	grep -q "Linux 5.10 or later is required" "$out/refuse-make.log"
make -s -f packaging/Makefile.dkms check KVER=6.1.0-99-fake KDIR="$fake" >"$out/refuse-cfg.log" 2>&1
check make-names-config "the check did not name CONFIG_DYNAMIC_FTRACE" \
	grep -q "CONFIG_DYNAMIC_FTRACE is not set" "$out/refuse-cfg.log"
check still-installed "a refused build disturbed the install" \
	grep -q ": installed" <<<"$(dkms status -m $name -k "$kver" 2>&1)"

# ---- uninstall: nothing left ----
if make -s dkms-uninstall >"$out/uninstall.log" 2>&1; then
	ok uninstall
else
	notok uninstall "make dkms-uninstall failed, see $out/uninstall.log"
fi
echo "# checked after uninstall: dkms status, /usr/src/$name-*, /var/lib/dkms/$name,"
echo "#   /lib/modules/$kver/{updates,extra} and modules.{dep,alias,devname,symbols},"
echo "#   ${sysfiles[*]}, any *$name* under /usr/src /var/lib/dkms /lib/modules/$kver /etc /dev"
check gone-dkms-status "dkms status still lists $name" \
	[ -z "$(dkms status -m $name 2>&1)" ]
check gone-usr-src "/usr/src/$name-* remains" \
	bash -c "! compgen -G '/usr/src/$name-*' >/dev/null"
check gone-dkms-tree "/var/lib/dkms/$name remains" [ ! -e "/var/lib/dkms/$name" ]
for f in modules.dep modules.alias modules.devname modules.symbols; do
	check "gone-$f" "$f still names $name" \
		bash -c "! grep -qw '$name' '/lib/modules/$kver/$f' 2>/dev/null"
done
for f in "${sysfiles[@]}"; do
	check "gone:$f" "$f remains" [ ! -e "$f" ]
done
left=$(find /usr/src /var/lib/dkms "/lib/modules/$kver" /etc /dev -name "*$name*" 2>/dev/null)
check gone-anything "left behind: $(tr '\n' ' ' <<<"$left")" [ -z "$left" ]
finish
