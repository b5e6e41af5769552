#!/usr/bin/env bash
# make check-system: the Debian packages on a real Debian 12 machine under
# QEMU (TCG): systemd as PID 1, udev, dkms, the image's own initramfs.
# The image comes from scripts/system-image.sh (cached); each run works on a
# copy.  The steps (scripts/system-guest/steps.sh) run at each boot from a
# read-only payload disk (label pcgpayload: the steps, the .debs, the 6.12
# kernel's .debs); the guest writes TAP lines and a verdict on its second
# serial port, judged by scripts/guest-judge.sh as every guest boot is.
#
# Boots: install (6.1) -> boot+upgrade (6.1) -> kernel (6.12, the newest kernel
# in /boot, as a boot loader would pick).  The upgrade phase runs in the boot
# phase's boot: under TCG a systemd boot and power-off cost a minute, and
# nothing in it needs a boot of its own.  A "reboot" powers the guest off; the
# host starts it again with the kernel and initramfs read out of the disk
# image with debugfs (no loop mount, no root needed for that part).
#
# Needs: build/deb (make deb), build/deb-prev (make deb-prev).
# Prints one line per test and "system: N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/build/run/system
# Per boot.  A boot that builds the module under TCG is the long one.
timeout=${PCG_SYSTEM_TIMEOUT:-3600}
passed=0 failed=0
start=$SECONDS
die() { echo "check-system: $*" >&2; echo "system: $passed passed, $((failed + 1)) failed"; exit 1; }
# shellcheck source=scripts/guest-judge.sh
. scripts/guest-judge.sh
# shellcheck source=scripts/system-boot.sh
. scripts/system-boot.sh

rm -rf "$out"
mkdir -p "$out/payload"/{debs,prev,broken,kernel,units}

# ---- the image ----
t0=$SECONDS
image=$(scripts/system-image.sh build) || die "the image could not be made"
echo "# image $image: ready in $((SECONDS - t0))s"
t0=$SECONDS
cp --sparse=always "$image" "$out/disk.img"
echo "# copy of the image: $((SECONDS - t0))s"

# ---- the payload ----
cp build/deb/peercgroup-dkms_*.deb build/deb/libpeercgroup1_*.deb build/deb/peercgroup_*.deb \
	"$out/payload/debs/" || die "no packages in build/deb (make deb)"
cp build/deb-prev/peercgroup-dkms_*.deb build/deb-prev/libpeercgroup1_*.deb build/deb-prev/peercgroup_*.deb \
	"$out/payload/prev/" || die "no packages in build/deb-prev (make deb-prev)"
scripts/kernel.sh fetch 6.12 >/dev/null || die "scripts/kernel.sh fetch 6.12 failed"
cp build/cache/debs/6.12/*.deb "$out/payload/kernel/"
cp scripts/system-guest/steps.sh "$out/payload/"
cp scripts/system-guest/units/* examples/peercgroup-sandboxed.service "$out/payload/units/"
# A new version whose module does not compile.
scripts/deb.sh broken "$out/payload/debs" "$out/payload/broken" || die "could not make the broken package"
t0=$SECONDS
mke2fs -q -t ext4 -L pcgpayload -d "$out/payload" "$out/payload.img" 256M || die "mke2fs of the payload failed"
echo "# payload disk: $((SECONDS - t0))s ($(du -sh "$out/payload" | cut -f1))"

# boot PHASE: the newest kernel of the disk's /boot, with its initramfs.
boot() {
	local phase=$1 kver dir=$out/$1 rc secs t
	mkdir -p "$dir"
	kver=$(system_boot_kernel "$out/disk.img")
	[ -n "$kver" ] || { echo "not ok - system/$phase-boot: no kernel in the image's /boot"; failed=$((failed + 1)); return 1; }
	t=$SECONDS
	# The CPU time QEMU used is what the boot costs on an idle host (TCG
	# runs one vCPU on one host thread); the wall time depends on the load.
	local TIMEFORMAT='%0U %0S' cpu=0 u s
	{ time system_boot "$out/disk.img" "$out/payload.img" "$dir" "$kver" "$phase" "$timeout" 2>"$dir/qemu.err"; } 2>"$dir/qemu-cpu"
	rc=$?
	secs=$((SECONDS - t))
	read -r u s <"$dir/qemu-cpu" && cpu=$((u + s))
	grep -a -E '^(ok|not ok) - |^# ' "$dir/verdict.txt" | tr -d '\r'
	echo "# boot '$phase' on $kver: ${secs}s wall, ${cpu}s of QEMU CPU time"
	judge_guest "system-$phase" "$dir/console.log" "$dir/verdict.txt" "$rc" "$timeout" "$secs" "$dir" |
		grep -v '^  not ok' | tail -n 60
	local p f
	read -r _ p f _ <"$dir/result"
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -eq 0 ]
}

# PCG_SYSTEM_PHASES="install boot" stops early (each phase needs the ones
# before it on the same disk): steps 1 to 4 and 7, without the kernel
# upgrade, whose dpkg -i and second DKMS build are the slow part under TCG.
# A word joins the phases of one boot with "+".
for phase in ${PCG_SYSTEM_PHASES:-install boot+upgrade kernel}; do
	boot "$phase" || break
done
echo "# check-system took $((SECONDS - start))s"
echo "system: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
