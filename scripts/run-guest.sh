#!/usr/bin/env bash
# Boot a kernel under QEMU with the module and the guest suites, and judge
# the run: the guest's verdict line (second serial port) and a clean
# console.  Prints "NAME: N passed, N failed" and exits non-zero on any
# failure, crash, kernel warning or timeout.
#
# run-guest.sh --name NAME --kernel VMLINUZ --kver KVER --ko PEERCGROUP_KO \
#              --bins DIR --out DIR [--suites a,b] [--only TEST] [--timeout S]
#              [--list SUITES_LIST]
# (default suites: the "check" ones of tests/guest/suites.list, which is
# also the default list of how many tests each suite has)
set -euo pipefail

name='' kernel='' kver='' ko='' bins='' out='' suites='' only='' timeout=900
mem=1024 append_extra='' list=''
while [ $# -gt 0 ]; do
	case $1 in
	--name) name=$2 ;;
	--kernel) kernel=$2 ;;
	--kver) kver=$2 ;;
	--ko) ko=$2 ;;
	--bins) bins=$2 ;;
	--out) out=$2 ;;
	--suites) suites=$2 ;;
	--only) only=$2 ;;
	--timeout) timeout=$2 ;;
	--mem) mem=$2 ;;
	--append) append_extra=$2 ;;
	--list) list=$2 ;;
	*) echo "run-guest.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift 2
done
for v in name kernel kver ko bins out; do
	[ -n "${!v}" ] || { echo "run-guest.sh: --$v is required" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")" && pwd)
[ -n "$suites" ] || suites=$("$here/suites.sh" check)
mkdir -p "$out"
root=$(mktemp -d "$out/initramfs.XXXXXX")
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT

# The initramfs: static busybox, the module where modprobe finds it, the
# suites, and nothing else.
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,tests,lib/modules/"$kver"/extra}
# The architecture comes from the kernel image: an arm64 Image has "ARM\x64" at offset 56.
arch=x86_64
[ "$(od -An -c -j56 -N4 "$kernel" | tr -d ' ')" = ARMd ] && arch=arm64
if [ $arch = arm64 ]; then
	cp "$("$here/arm64.sh" busybox)" "$root/bin/busybox"
	# its verdict channel, a virtio console, needs two of the kernel's own modules
	mkdir -p "$root/lib/modules/$kver/kernel"
	arm64_mods=$("$here/arm64.sh" modules "$(dirname "$kernel")" "$kver")
	if [ -n "$arm64_mods" ]; then
		echo "$arm64_mods" | xargs cp -t "$root/lib/modules/$kver/kernel/"
	fi
else
	cp "$(command -v busybox)" "$root/bin/busybox"
fi
install -m 0755 "$here/guest-init" "$root/init"
cp "$ko" "$root/lib/modules/$kver/extra/peercgroup.ko"
touch "$root/lib/modules/$kver/"modules.{order,builtin,builtin.modinfo}
depmod -b "$root" "$kver"
for s in ${suites//,/ }; do
	install -m 0755 "$bins/$s" "$root/tests/$s"
	# A suite may bring a tree of its own (py_suite: an interpreter).
	if [ -d "$bins/$s.rootfs" ]; then cp -a "$bins/$s.rootfs/." "$root/"; fi
done
# The CLI, for suites that act as an admin would.
[ -x "$bins/peercgroup" ] && install -m 0755 "$bins/peercgroup" "$root/bin/peercgroup"
# The example responder, for the suite of its policy decisions.
[ -x "$bins/responder" ] && install -m 0755 "$bins/responder" "$root/bin/responder"
# How many tests each suite has, for init to count against.
"$here/suites.sh" --tests ${list:+"$list"} >"$root/suite-tests"
# The judge's: the kernel reports init looks for in the log too, and the
# boot's nonce, which init reads and deletes first (guest-init).
# shellcheck source=scripts/guest-judge.sh
. "$here/guest-judge.sh"
printf '%s\n' "$GUEST_BAD_CONSOLE" >"$root/bad-console"
nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$nonce" >"$root/verdict-nonce"
initrd="$out/initramfs.cpio.gz"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd"

console="$out/console.log"
verdict="$out/verdict.txt"
rm -f "$console" "$verdict"
: >"$verdict"

# One host thread for both vCPUs by default: with multi-threaded TCG a vCPU
# can keep executing a stale translation of code that ftrace has just
# re-patched (an int3 already gone from memory), which hangs or oopses the
# guest when the module is unloaded under load.  PCG_QEMU_ACCEL=tcg selects
# multi-threaded TCG anyway.
accel=${PCG_QEMU_ACCEL:-tcg,thread=single}
# PCG_QEMU_ICOUNT=shift=0,sleep=off: deterministic virtual time (guest time
# is a function of instructions executed), with one vCPU.
smp=2 icount=()
[ -n "${PCG_QEMU_ICOUNT:-}" ] && smp=1 icount=(-icount "$PCG_QEMU_ICOUNT")
append="console=ttyS0 panic=-1 oops=panic panic_on_warn=1 softlockup_panic=1"
append+=" pcg.suites=$suites${only:+ pcg.only=$only} $append_extra"
# arm64: -M virt has a single PL011 (the console); the verdict goes to a virtio console,
# which exists only once the guest has loaded its driver: a crash before that is no verdict.
# pauth-impdef: pointer authentication with a cheap hash (QARMA under TCG is very slow).
qemu=(qemu-system-x86_64 -cpu max -serial "file:$console" -serial "file:$verdict")
if [ $arch = arm64 ]; then
	append=${append/console=ttyS0/console=ttyAMA0}" pcg.verdict=hvc0"
	# the ones not built in, in load order
	preload=$(echo "$arm64_mods" | sed 's|.*/||; s|\.ko$||' | paste -sd, -)
	[ -z "$preload" ] || append+=" pcg.preload=$preload"
	# shellcheck disable=SC2054 # "max,pauth-impdef=on" is one QEMU argument
	qemu=(qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -serial "file:$console"
		-device virtio-serial-device -chardev "file,id=verdict,path=$verdict"
		-device virtconsole,chardev=verdict)
fi
start=$(date +%s)
set +e
timeout --foreground "$timeout" "${qemu[@]}" \
	-accel "$accel" "${icount[@]}" -smp "$smp" -m "$mem" \
	-nodefaults -no-reboot -display none -monitor none \
	-kernel "$kernel" -initrd "$initrd" -append "$append" </dev/null
qemu_rc=$?
set -e
secs=$(($(date +%s) - start))

judge_guest "$name" "$console" "$verdict" "$qemu_rc" "$timeout" "$secs" "$out" "$nonce" \
	"$here/../tests/guest/skips.list"
