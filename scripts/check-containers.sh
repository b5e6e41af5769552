#!/usr/bin/env bash
# make check-containers / make demo-containers: real containers started by
# the runtimes Debian 12 packages (docker, podman, containerd, nspawn, LXC)
# and systemd units, in the systemd-booted guest of scripts/system-image.sh
# with the runtimes added (scripts/containers-guest/packages), under QEMU TCG.
#
#   check-containers.sh [containers|demo]
#
# The module is built on the host against the image kernel's headers (the
# 6.1 row of scripts/kernels.conf) and loaded with insmod from the payload
# disk, with the static CLI, the responder and pcg-client
# (scripts/containers-guest/).  The guest's steps print one TAP line per
# runtime and mode; "# path CASE PATH" lines (the cgroup paths the runtimes
# made) are saved to build/run/containers/paths.tsv.
# Prints "containers: N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
phase=${1:-containers}
out=$top/build/run/$phase
kernel=6.1
timeout=${PCG_CONTAINERS_TIMEOUT:-3600}
start=$SECONDS
die() { echo "check-containers: $*" >&2; echo "$phase: 0 passed, 1 failed"; exit 1; }
# shellcheck source=scripts/guest-judge.sh
. scripts/guest-judge.sh
# shellcheck source=scripts/system-boot.sh
. scripts/system-boot.sh

rm -rf "$out"
mkdir -p "$out/payload" "$out/boot"

# ---- the payload: module, static programs, steps ----
scripts/kernel.sh fetch "$kernel" >/dev/null || die "scripts/kernel.sh fetch $kernel failed"
scripts/kernel.sh build "$kernel" . "build/kernels/$kernel" >/dev/null || die "the module did not build for $kernel"
make -s -C userlib static-cli static-responder O="$top/build/userlib" >/dev/null || die "the static CLI did not build"
gcc -std=gnu11 -Wall -Wextra -Werror -O2 -static -o "$out/payload/pcg-client" \
	scripts/containers-guest/pcg-client.c || die "pcg-client did not build"
cp "build/kernels/$kernel/peercgroup.ko" build/userlib/static/peercgroup build/userlib/static/responder \
	scripts/containers-guest/steps.sh scripts/containers-guest/policy "$out/payload/"
mke2fs -q -t ext4 -L pcgpayload -d "$out/payload" "$out/payload.img" 64M || die "mke2fs of the payload failed"

# ---- the image ----
t0=$SECONDS
image=$(PCG_IMAGE_EXTRA="$(cat scripts/containers-guest/packages)" PCG_IMAGE_SIZE=6G \
	scripts/system-image.sh build) || die "the image could not be made"
echo "# image $image: ready in $((SECONDS - t0))s"
cp --sparse=always "$image" "$out/disk.img"

# ---- one boot ----
kver=$(system_boot_kernel "$out/disk.img")
[ -n "$kver" ] || die "no kernel in the image's /boot"
t0=$SECONDS
system_boot "$out/disk.img" "$out/payload.img" "$out/boot" "$kver" "$phase" "$timeout"
rc=$?
secs=$((SECONDS - t0))
tr -d '\r' <"$out/boot/verdict.txt" | grep -a -E '^(ok|not ok) - |^# ' | grep -v '^# path '
tr -d '\r' <"$out/boot/verdict.txt" | sed -n 's/^# path \([^ ]*\) /\1\t/p' >"$out/paths.tsv"
echo "# paths the runtimes made: $out/paths.tsv ($(wc -l <"$out/paths.tsv") lines)"
echo "# boot on $kver: ${secs}s"
judge_guest "$phase-boot" "$out/boot/console.log" "$out/boot/verdict.txt" "$rc" "$timeout" "$secs" "$out/boot" |
	grep -v '^  not ok' | tail -n 60
read -r _ p f _ <"$out/boot/result"
echo "# check-containers ($phase) took $((SECONDS - start))s"
echo "$phase: $p passed, $f failed"
[ "$f" -eq 0 ]
