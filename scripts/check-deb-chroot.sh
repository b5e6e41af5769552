#!/usr/bin/env bash
# make check-deb-chroot: the packages' maintainer scripts for real, in
# minutes, without QEMU: the root of the check-system image (read out with
# debugfs rdump, no loop mount) as a chroot in a private mount namespace,
# where dpkg and dkms build for the image's 6.1 kernel.  Checks 0.1.0 ->
# current upgrade, a broken newer version (the installed one stays),
# going back, and purge (nothing left).  No udev, no module loading (the
# host's kernel is not the image's): those are check-system's.  Needs root.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/build/run/deb-chroot
root=$out/root
die() { echo "check-deb-chroot: $*" >&2; echo "deb-chroot: 0 passed, 1 failed"; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (chroot, mounts)"
image=$(scripts/system-image.sh build) || die "no image"
rm -rf "$out"
mkdir -p "$root"
t0=$SECONDS
debugfs -R "rdump / $root" "$image" >/dev/null 2>&1 || die "debugfs rdump failed"
echo "# image root unpacked in $((SECONDS - t0))s"
mkdir -p "$root/payload"/{debs,prev,broken}
cp build/deb/peercgroup-dkms_*.deb build/deb/libpeercgroup1_*.deb build/deb/peercgroup_*.deb \
	"$root/payload/debs/" || die "no packages in build/deb (make deb)"
cp build/deb-prev/peercgroup-dkms_*.deb build/deb-prev/libpeercgroup1_*.deb build/deb-prev/peercgroup_*.deb \
	"$root/payload/prev/" || die "no packages in build/deb-prev (make deb-prev)"
scripts/deb.sh broken build/deb "$root/payload/broken" || die "could not make the broken package"
install -m 0755 scripts/system-guest/deb-chroot-steps.sh "$root/payload/"
unshare -m sh -c "mount -t proc proc '$root/proc' && mount -t sysfs sys '$root/sys' &&
	mount --rbind /dev '$root/dev' && chroot '$root' /payload/deb-chroot-steps.sh" | tee "$out/log"
rm -rf "$root"
grep -q '^deb-chroot: [0-9]* passed, 0 failed$' "$out/log"
