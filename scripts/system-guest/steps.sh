#!/bin/bash
# The steps of "make check-system", run inside the Debian 12 guest by
# pcg-harness.service from the payload disk, one or more phases per boot:
#
#   install   (6.1)  1. apt install the three runtime packages offline;
#                       DKMS builds; /dev/peercgroup 0666 from udev
#   boot      (6.1)  2. modules-load before services; a boot-time client answered
#                    3. non-root peercgroup status / ask
#                    4. a daemon under PrivateDevices=yes, with and without
#                       the documented lines; an Accept=yes socket's instance
#                    7. a broken new version leaves the old one working
#   upgrade   (6.1)  5a. dpkg -i the 6.12 kernel + headers: DKMS autoinstall
#                       (check-system runs it in the boot phase's boot,
#                       pcg.phase=boot+upgrade: a boot less under TCG)
#   kernel    (6.12) 5b. the module is loaded on 6.12 and answers
#                    6. 0.1.0 -> current while a daemon holds /dev/peercgroup
#                    8. apt purge leaves nothing
#
# TAP lines ("ok - system/N-name", "not ok - ...: why") and "# " notes go to
# the console and to /dev/ttyS1; the last line on ttyS1 is the verdict.
set -u
phase=${1:-}
P=/run/pcg-payload
V=/dev/ttyS1
passed=0 failed=0
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
kver=$(uname -r)

emit() { echo "$*"; echo "$*" >"$V"; }
ok() { emit "ok - system/$1"; passed=$((passed + 1)); }
notok() { emit "not ok - system/$1: $2"; failed=$((failed + 1)); }
note() { emit "# $*"; }
check() { # check NAME WHY COMMAND...
	local n=$1 why=$2
	shift 2
	if "$@"; then ok "$n"; else notok "$n" "$why"; fi
}
finish() {
	emit "PEERCGROUP-VERDICT passed=$passed failed=$failed"
	exit 0
}
# Tail of a log into the notes, for a failure's reader.
show() { tail -n "${2:-25}" "$1" | sed 's/^/# | /' | while IFS= read -r l; do emit "$l"; done; }
# apt's and dkms's output also goes to the console, so that a slow build
# can be followed on the host (build/run/system/PHASE/console.log).
apt_install() {
	apt-get install -y --no-install-recommends --allow-downgrades "$@" 2>&1 | tee /dev/console
	return "${PIPESTATUS[0]}"
}
runtime_debs() { ls "$1"/peercgroup-dkms_*.deb "$1"/libpeercgroup1_*.deb "$1"/peercgroup_*.deb; }
# shellcheck disable=SC2317  # called through check()
dkms_has() { dkms status -m peercgroup -v "$1" -k "$2" 2>/dev/null | grep -q ': installed'; }
loaded_version() { cat /sys/module/peercgroup/version 2>/dev/null || echo none; }

# A client in its own transient unit (its own cgroup) asks SOCK; prints the
# listener's cgroup, then (--reply) the server's line about the client.
ask_from_unit() {
	local unit=$1 sock=$2
	systemd-run --quiet --wait --pipe --unit="$unit" /usr/bin/peercgroup ask --reply "$sock" 2>&1
}

note "phase $phase on $kver; $(systemd-analyze 2>/dev/null | head -n 1)"
# one or more phases, joined by "+", in this order, in this boot
run_phase() {
	case $1 in
	install)
		# ---- 1. apt install offline; DKMS builds; udev makes the node ----
		t0=$SECONDS
		mapfile -t debs < <(runtime_debs "$P/debs")
		note "apt install ${debs[*]##*/}"
		if apt_install "${debs[@]}" >/tmp/apt-install.log 2>&1; then
			ok 1-apt-install
		else
			notok 1-apt-install "apt-get install failed"
			show /tmp/apt-install.log
		fi
		note "apt install with the DKMS build took $((SECONDS - t0))s"
		grep -i 'building\|installed peercgroup' /tmp/apt-install.log | sed 's/^/# /' | while read -r l; do emit "$l"; done
		v=$(dpkg-query -W -f='${Version}' peercgroup-dkms)
		check 1-dkms-built "dkms status: $(dkms status 2>&1 | tr '\n' ';')" dkms_has "$v" "$kver"
		modprobe peercgroup
		udevadm settle
		mode=$(stat -c %a /dev/peercgroup 2>&1)
		check 1-dev-mode-0666 "/dev/peercgroup mode is $mode" [ "$mode" = 666 ]
		check 1-dev-from-udev "udev has no record of /dev/peercgroup" \
			bash -c "udevadm info --query=property --name=/dev/peercgroup | grep -qx 'DEVNAME=/dev/peercgroup'"
		check 1-udev-rule-from-package "the udev rule is not the package's" \
			bash -c "dpkg -S /usr/lib/udev/rules.d/60-peercgroup.rules >/dev/null"
		# systemd-modules-load says "Inserted module" only at debug level, which
		# step 2 reads at the next boot.
		mkdir -p /etc/systemd/system/systemd-modules-load.service.d
		printf '[Service]\nEnvironment=SYSTEMD_LOG_LEVEL=debug\n' \
			>/etc/systemd/system/systemd-modules-load.service.d/pcg-debug.conf
		# The boot-time server and client of step 2, started at the next boot.
		cp "$P"/units/*.service /etc/systemd/system/
		systemctl enable pcg-early.service pcg-early-client.service >/dev/null 2>&1
		;;
	boot)
		# ---- 2. loaded by systemd-modules-load, before ordinary services ----
		# Read by the process's name (-t), not by unit (-u): the service has
		# exited before journald reads its lines, so they carry no unit field.
		# (The install phase turned on its debug log, which says why if not.)
		check 2-modules-load "systemd-modules-load did not insert peercgroup: $(journalctl -b -t systemd-modules-load -o cat | tr '\n' '|')" \
			bash -c "journalctl -b -t systemd-modules-load -o cat | grep -q \"Inserted module 'peercgroup'\""
		ml=$(systemctl show -P ExecMainExitTimestampMonotonic systemd-modules-load.service)
		srv=$(systemctl show -P ExecMainStartTimestampMonotonic pcg-early.service)
		note "systemd-modules-load done at ${ml}us, pcg-early.service started at ${srv}us (monotonic)"
		check 2-before-services "modules-load ended at $ml, the service started at $srv" \
			test "${ml:-0}" -gt 0 -a "${srv:-0}" -gt "${ml:-0}"
		journalctl -b -u pcg-early.service -o cat >/tmp/early.log
		check 2-boot-client-answered "the server's log: $(tr '\n' '|' </tmp/early.log)" \
			grep -q 'pcg-early-client.service' /tmp/early.log
		check 2-no-enodata "the boot-time client was given ENODATA" \
			bash -c "! grep -q ENODATA /tmp/early.log"

		# ---- 3. a user without privileges ----
		check 3-nonroot-status "peercgroup status as pcguser: $(runuser -u pcguser -- peercgroup status 2>&1 | tr '\n' '|')" \
			runuser -u pcguser -- peercgroup status
		out=$(runuser -u pcguser -- peercgroup ask /run/pcg-early.sock 2>&1)
		note "pcguser: peercgroup ask: $(tr '\n' '|' <<<"$out")"
		check 3-nonroot-ask "the answer does not name pcg-early.service" grep -q 'pcg-early.service' <<<"$out"

		# ---- 4. a daemon under PrivateDevices=yes ----
		cp "$P"/units/peercgroup-sandboxed.service /etc/systemd/system/
		systemctl daemon-reload
		systemctl start peercgroup-sandboxed.service
		for _ in $(seq 50); do [ -S /run/peercgroup-sandboxed/sock ] && break; sleep 0.2; done
		out=$(ask_from_unit pcg-ask-sandboxed /run/peercgroup-sandboxed/sock)
		note "ask the sandboxed daemon: $(tr '\n' '|' <<<"$out")"
		check 4-sandboxed-works "the daemon did not name the client's unit" \
			grep -q 'pcg-ask-sandboxed.service' <<<"$out"
		systemctl stop peercgroup-sandboxed.service
		# Without the two lines: the daemon fails, and says what to add.
		sed -e '/^BindReadOnlyPaths=/d' -e '/^DeviceAllow=/d' -e 's/^Description=.*/Description=without the lines/' \
			/etc/systemd/system/peercgroup-sandboxed.service >/etc/systemd/system/pcg-nobind.service
		sed -i 's|/run/peercgroup-sandboxed|/run/pcg-nobind|; s|^RuntimeDirectory=.*|RuntimeDirectory=pcg-nobind|' \
			/etc/systemd/system/pcg-nobind.service
		systemctl daemon-reload
		systemctl start pcg-nobind.service
		sleep 2
		msg=$(journalctl -u pcg-nobind.service -o cat | grep peercgroup: | tail -n 1)
		note "without BindReadOnlyPaths/DeviceAllow: $msg"
		check 4-unsandboxed-fails "the daemon is running without access" \
			bash -c "! systemctl is-active -q pcg-nobind.service"
		check 4-error-says-what-to-do "the error does not name the lines to add" \
			bash -c "grep -q 'BindReadOnlyPaths=/dev/peercgroup' <<<'$msg' && grep -q 'DeviceAllow=/dev/peercgroup' <<<'$msg'"
		# Accept=yes: PID 1 listens and accepts, an instance of its own is
		# handed the connection and tells the client its unit (peer 0).
		cp "$P"/units/pcg-whoami.socket "$P"/units/pcg-whoami@.service /etc/systemd/system/
		systemctl daemon-reload
		systemctl start pcg-whoami.socket
		out=$(ask_from_unit pcg-ask-whoami /run/pcg-whoami.sock)
		note "ask the Accept=yes socket: $(tr '\n' '|' <<<"$out")"
		check 4-accept-yes-listener-is-pid1 "the listener is not PID 1 in /init.scope" \
			grep -q '^pid=1 .*path=/init\.scope$' <<<"$out"
		check 4-accept-yes-instance-names-client "the instance did not name the client's unit" \
			grep -q '^reply: pid=[0-9]* .*path=/system\.slice/pcg-ask-whoami\.service$' <<<"$out"
		systemctl stop pcg-whoami.socket

		# ---- 7. a broken new version: the old one stays ----
		old=$(dpkg-query -W -f='${Version}' peercgroup-dkms)
		ko=$(modinfo -n peercgroup)
		sum=$(sha256sum <"$ko")
		t0=$SECONDS
		if apt_install "$P"/broken/peercgroup-dkms_*.deb >/tmp/apt-broken.log 2>&1; then
			notok 7-broken-fails "installing a version that cannot build succeeded"
		else
			ok 7-broken-fails
		fi
		note "the failed upgrade took $((SECONDS - t0))s"
		grep 'dkms.sh' /tmp/apt-broken.log | sed 's/^/# /' | while read -r l; do emit "$l"; done
		check 7-old-installed "dkms status: $(dkms status 2>&1 | tr '\n' ';')" dkms_has "$old" "$kver"
		check 7-old-ko-unchanged "$ko changed" [ "$(sha256sum <"$ko" 2>/dev/null)" = "$sum" ]
		systemctl stop pcg-early.service
		if modprobe -r peercgroup && modprobe peercgroup && [ "$(loaded_version)" = "$old" ]; then
			ok 7-old-loads
		else
			notok 7-old-loads "the old module does not reload (loaded: $(loaded_version))"
		fi
		check 7-modules-load-ok "systemd-modules-load fails" systemctl restart systemd-modules-load.service
		# The admin's way back: the working version again.
		mapfile -t debs < <(runtime_debs "$P/debs")
		if apt_install "${debs[@]}" >/tmp/apt-back.log 2>&1; then
			ok 7-reinstall-good
		else
			notok 7-reinstall-good "reinstalling $old failed"
			show /tmp/apt-back.log
		fi
		check 7-state-clean "dpkg: $(dpkg -l 'peercgroup*' | tail -n +6 | awk '{print $1, $2, $3}' | tr '\n' ';'), /usr/src: $(echo /usr/src/peercgroup-*)" \
			bash -c "[ \"\$(dpkg-query -W -f='\${db:Status-Abbrev}' peercgroup-dkms)\" = 'ii ' ] && [ \"\$(echo /usr/src/peercgroup-*)\" = /usr/src/peercgroup-$old ]"
		systemctl start pcg-early.service
		;;
	upgrade)
		# ---- 5a. a newer kernel: DKMS builds for it ----
		# Only the modules this machine uses go into the new initramfs: under
		# TCG, copying and compressing all of them takes minutes.
		echo MODULES=dep >/etc/initramfs-tools/conf.d/pcg-modules-dep
		t0=$SECONDS
		if dpkg -i "$P"/kernel/*.deb 2>&1 | tee /dev/console >/tmp/kernel.log && [ "${PIPESTATUS[0]}" -eq 0 ]; then
			ok 5-kernel-install
		else
			notok 5-kernel-install "dpkg -i of the kernel failed"; show /tmp/kernel.log; fi
		note "dpkg -i of the 6.12 kernel, headers and the DKMS autoinstall took $((SECONDS - t0))s"
		new=$(find "$P"/kernel -name 'linux-image-*.deb' | sed 's|.*/linux-image-\([^_]*\)_.*|\1|')
		old=$(dpkg-query -W -f='${Version}' peercgroup-dkms)
		check 5-dkms-autoinstall "dkms status: $(dkms status 2>&1 | tr '\n' ';')" dkms_has "$old" "$new"
		;;
	kernel)
		# ---- 5b. booted on the new kernel ----
		note "running $(uname -r)"
		check 5-new-kernel "running $kver" bash -c "ls /run/pcg-payload/kernel/linux-image-${kver}_* >/dev/null 2>&1"
		check 5-loaded "the module is not loaded" [ -d /sys/module/peercgroup ]
		journalctl -b -u pcg-early.service -o cat >/tmp/early.log
		check 5-answers "the server's log: $(tr '\n' '|' </tmp/early.log)" \
			grep -q 'pcg-early-client.service' /tmp/early.log

		# ---- 6. 0.1.0 -> current while a daemon holds the device ----
		cur=$(dpkg-query -W -f='${Version}' peercgroup-dkms)
		systemctl disable -q --now pcg-early.service pcg-early-client.service
		modprobe -r peercgroup
		apt-get purge -y peercgroup-dkms peercgroup libpeercgroup1 >/tmp/purge0.log 2>&1
		mapfile -t prev < <(runtime_debs "$P/prev")
		t0=$SECONDS
		if apt_install "${prev[@]}" >/tmp/apt-prev.log 2>&1; then ok 6-install-prev; else
			notok 6-install-prev "installing ${prev[*]##*/} failed"; show /tmp/apt-prev.log; fi
		note "apt install of 0.1.0 with its DKMS build took $((SECONDS - t0))s"
		pv=$(dpkg-query -W -f='${Version}' peercgroup-dkms)
		modprobe peercgroup
		check 6-prev-loaded "loaded version $(loaded_version), want $pv" [ "$(loaded_version)" = "$pv" ]
		systemd-run --quiet --unit=pcg-holder /usr/bin/peercgroup serve /run/pcg-holder.sock
		for _ in $(seq 50); do [ -S /run/pcg-holder.sock ] && break; sleep 0.2; done
		# 0.1.0's client has no --reply: the server's own log names the client.
		out=$(systemd-run --quiet --wait --pipe --unit=pcg-ask-before /usr/bin/peercgroup ask /run/pcg-holder.sock 2>&1)
		for _ in $(seq 50); do
			journalctl -u pcg-holder.service -o cat | grep -q 'pcg-ask-before.service' && break
			sleep 0.2
		done
		check 6-daemon-answers "before the upgrade: $(tr '\n' '|' <<<"$out"); the server's log: $(journalctl -u pcg-holder.service -o cat | tr '\n' '|')" \
			bash -c "journalctl -u pcg-holder.service -o cat | grep -q 'pcg-ask-before.service'"
		t0=$SECONDS
		mapfile -t debs < <(runtime_debs "$P/debs")
		if apt_install "${debs[@]}" >/tmp/apt-up.log 2>&1; then ok 6-upgrade; else
			notok 6-upgrade "the upgrade failed"; show /tmp/apt-up.log; fi
		note "apt upgrade to $cur with its DKMS build took $((SECONDS - t0))s"
		grep 'dkms.sh: note' /tmp/apt-up.log | sed 's/^/# /' | while read -r l; do emit "$l"; done
		check 6-says-reload "the upgrade does not tell the admin that the old module is still loaded" \
			grep -q 'is still loaded' /tmp/apt-up.log
		check 6-installed-new "dkms status: $(dkms status 2>&1 | tr '\n' ';')" dkms_has "$cur" "$kver"
		check 6-old-still-loaded "loaded: $(loaded_version)" [ "$(loaded_version)" = "$pv" ]
		out=$(ask_from_unit pcg-ask-during /run/pcg-holder.sock)
		check 6-daemon-still-answers "after the upgrade: $(tr '\n' '|' <<<"$out")" grep -q 'pcg-ask-during.service' <<<"$out"
		check 6-in-use "modprobe -r succeeded while the daemon holds /dev/peercgroup" \
			bash -c "! modprobe -r peercgroup 2>/dev/null"
		# What the admin does (docs/INSTALL.md): stop, reload, start.
		systemctl stop pcg-holder.service
		if modprobe -r peercgroup && modprobe peercgroup; then ok 6-reload; else notok 6-reload "modprobe -r/modprobe failed"; fi
		check 6-new-loaded "loaded: $(loaded_version), want $cur" [ "$(loaded_version)" = "$cur" ]
		systemd-run --quiet --unit=pcg-holder2 /usr/bin/peercgroup serve /run/pcg-holder2.sock
		for _ in $(seq 50); do [ -S /run/pcg-holder2.sock ] && break; sleep 0.2; done
		out=$(ask_from_unit pcg-ask-after /run/pcg-holder2.sock)
		check 6-daemon-answers-after "after the reload: $(tr '\n' '|' <<<"$out")" grep -q 'pcg-ask-after.service' <<<"$out"
		systemctl stop pcg-holder2.service

		# ---- 8. apt purge leaves nothing ----
		if apt-get purge -y peercgroup-dkms peercgroup libpeercgroup1 >/tmp/purge.log 2>&1; then ok 8-purge; else
			notok 8-purge "apt purge failed"; show /tmp/purge.log; fi
		# stdout only: Debian 12's dkms status may say "echo: write error:
		# Broken pipe" on stderr (its own pipes), module or none.
		st=$(dkms status 2>/dev/null)
		note "dkms status after purge: '${st}'"
		check 8-dkms-status-empty "dkms status: $st; /var/lib/dkms: $(echo /var/lib/dkms/*)" \
			[ -z "$st" -a ! -e /var/lib/dkms/peercgroup ]
		left=$(find / -xdev \( -path /proc -o -path /sys -o -path /run/pcg-payload \) -prune -o \
			-iname '*peercgroup*' -print 2>/dev/null | grep -v '^/etc/systemd/system/peercgroup-sandboxed.service$')
		left_dev=$(ls -d /dev/peercgroup /sys/module/peercgroup 2>/dev/null)
		note "paths named *peercgroup* (but the test's own unit): ${left:-none}; in /dev and /sys: ${left_dev:-none}"
		check 8-no-paths "left behind: $(tr '\n' ' ' <<<"$left $left_dev")" [ -z "$left$left_dev" ]
		for k in /lib/modules/*; do
			check "8-depmod-${k##*/}" "${k##*/}'s modules.* still name peercgroup" \
				bash -c "! grep -qw peercgroup $k/modules.dep $k/modules.alias $k/modules.devname 2>/dev/null"
		done
		known=$(dpkg -l 'peercgroup*' 'libpeercgroup*' 2>/dev/null | awk '/^[a-z][a-z] / && $1 !~ /^[up]n$/ {print $1, $2}')
		check 8-dpkg-forgets "dpkg still lists: $(tr '\n' ';' <<<"$known")" [ -z "$known" ]
		;;
	*) notok harness "unknown phase '$1'" ;;
	esac
}
[ -n "${phase//+/}" ] || notok harness "no phase in pcg.phase='$phase'"
# a later phase builds on an earlier one's state: none after a failure
for p in ${phase//+/ }; do
	run_phase "$p"
	[ "$failed" -eq 0 ] || break
done
finish
