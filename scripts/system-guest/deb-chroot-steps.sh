#!/bin/bash
# Run by scripts/check-deb-chroot.sh inside the image's root (a chroot):
# the maintainer scripts of the packages, with the real dpkg and dkms.
set -u
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
k=6.1.0-57-amd64
P=/payload
n=0 f=0
ok() { echo "ok - deb-chroot/$1"; n=$((n+1)); }
no() { echo "not ok - deb-chroot/$1: $2"; f=$((f+1)); }
chk() { local t=$1 w=$2; shift 2; if "$@"; then ok "$t"; else no "$t" "$w"; fi; }
inst() { apt-get install -y --no-install-recommends --allow-downgrades "$@"; }
st() { dkms status -m peercgroup 2>&1 | tr '\n' ';'; }
t0=$SECONDS
inst $P/prev/peercgroup-dkms_*.deb $P/prev/libpeercgroup1_*.deb $P/prev/peercgroup_*.deb >/tmp/i1.log 2>&1; rc=$?
echo "# install 0.1.0: rc=$rc, $((SECONDS-t0))s; dkms: $(st)"
chk install-prev "rc=$rc" [ $rc -eq 0 ]
chk prev-built "$(st)" grep -q "peercgroup/0.1.0, $k, x86_64: installed" <<<"$(st)"
t0=$SECONDS
inst $P/debs/peercgroup-dkms_*.deb $P/debs/libpeercgroup1_*.deb $P/debs/peercgroup_*.deb >/tmp/i2.log 2>&1; rc=$?
echo "# upgrade to 0.2.0: rc=$rc, $((SECONDS-t0))s; dkms: $(st); /usr/src: $(echo /usr/src/peercgroup-*)"
chk upgrade "rc=$rc" [ $rc -eq 0 ]
chk upgrade-installed "$(st)" test "$(st)" = "peercgroup/0.2.0, $k, x86_64: installed;"
chk upgrade-src "$(echo /usr/src/peercgroup-*)" test "$(echo /usr/src/peercgroup-*)" = /usr/src/peercgroup-0.2.0
chk upgrade-no-saved "/var/lib/peercgroup-dkms remains" test ! -e /var/lib/peercgroup-dkms
ko=/lib/modules/$k/updates/dkms/peercgroup.ko
sum=$(sha256sum <$ko)
t0=$SECONDS
inst $P/broken/peercgroup-dkms_*.deb >/tmp/i3.log 2>&1; rc=$?
echo "# broken 0.2.0.1~broken: rc=$rc, $((SECONDS-t0))s; dkms: $(st); /usr/src: $(echo /usr/src/peercgroup-*)"
grep 'dkms.sh' /tmp/i3.log | sed 's/^/#   /'
chk broken-fails "rc=$rc" [ $rc -ne 0 ]
chk broken-old-installed "$(st)" test "$(st)" = "peercgroup/0.2.0, $k, x86_64: installed;"
chk broken-ko-same "ko changed" test "$(sha256sum <$ko)" = "$sum"
chk broken-old-src "no /usr/src/peercgroup-0.2.0/dkms.conf" test -f /usr/src/peercgroup-0.2.0/dkms.conf
chk broken-modinfo "$(modinfo -F version $ko)" test "$(modinfo -F version $ko)" = 0.2.0
t0=$SECONDS
inst $P/debs/peercgroup-dkms_*.deb >/tmp/i4.log 2>&1; rc=$?
echo "# back to 0.2.0: rc=$rc, $((SECONDS-t0))s; dkms: $(st); /usr/src: $(echo /usr/src/peercgroup-*); dpkg: $(dpkg-query -W -f='${db:Status-Abbrev}${Version}' peercgroup-dkms)"
chk back "rc=$rc" [ $rc -eq 0 ]
chk back-clean "/usr/src: $(echo /usr/src/peercgroup-*)" test "$(echo /usr/src/peercgroup-*)" = /usr/src/peercgroup-0.2.0
chk back-ko-same "ko changed" test "$(sha256sum <$ko)" = "$sum"
apt-get purge -y peercgroup-dkms peercgroup libpeercgroup1 >/tmp/i5.log 2>&1; rc=$?
left=$(find / -xdev \( -path /proc -o -path /sys -o -path /payload \) -prune -o -iname '*peercgroup*' -print 2>/dev/null)
echo "# purge: rc=$rc; dkms: '$(dkms status 2>&1)'; paths named *peercgroup*: ${left:-none}"
chk purge "rc=$rc" [ $rc -eq 0 ]
chk purge-dkms "$(dkms status)" test -z "$(dkms status 2>&1)"
chk purge-nothing-left "$left" test -z "$left"
chk purge-depmod "modules.* name it" bash -c "! grep -qw peercgroup /lib/modules/$k/modules.dep /lib/modules/$k/modules.alias /lib/modules/$k/modules.devname"
echo "deb-chroot: $n passed, $f failed"
