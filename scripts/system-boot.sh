# shellcheck shell=bash
# Booting a disk image of scripts/system-image.sh under QEMU (TCG), shared by
# scripts/check-system.sh and scripts/check-containers.sh.  Sourced.
#
#   system_boot_kernel DISK              the newest kernel of DISK's /boot
#   system_boot DISK PAYLOAD DIR KVER PHASE TIMEOUT
#
# system_boot starts DISK's /boot/vmlinuz-KVER with its initramfs (read out
# with debugfs: no loop mount), the disk read-write and PAYLOAD read-only,
# pcg.phase=PHASE on the command line; the console goes to DIR/console.log,
# the second serial port to DIR/verdict.txt.  Returns QEMU's exit status
# (124: killed after TIMEOUT seconds).

system_boot_kernel() {
	debugfs -R 'ls -p /boot' "$1" 2>/dev/null |
		awk -F/ '$6 ~ /^vmlinuz-/ {sub(/^vmlinuz-/, "", $6); print $6}' | sort -V | tail -n 1
}

system_boot() {
	local disk=$1 payload=$2 dir=$3 kver=$4 phase=$5 timeout=$6
	debugfs -R "dump /boot/vmlinuz-$kver $dir/vmlinuz" "$disk" >/dev/null 2>&1
	debugfs -R "dump /boot/initrd.img-$kver $dir/initrd.img" "$disk" >/dev/null 2>&1
	: >"$dir/verdict.txt"
	timeout --foreground "$timeout" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu max -smp 1 -m 2048 \
		-nodefaults -no-reboot -display none -monitor none \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 oops=panic panic_on_warn=1 softlockup_panic=1 pcg.phase=$phase" \
		-drive "file=$disk,if=virtio,format=raw" \
		-drive "file=$payload,if=virtio,format=raw,readonly=on" \
		-device virtio-rng-pci \
		-serial "file:$dir/console.log" -serial "file:$dir/verdict.txt" </dev/null
}
