#!/bin/bash
# shellcheck disable=SC2317  # the start functions are called through kase()
# The steps of "make check-containers" (phase "containers") and "make
# demo-containers" (phase "demo"), run inside the systemd-booted Debian 12
# guest by pcg-harness.service from the payload disk.
#
# The module (built on the host against the image kernel's headers), the
# static CLI, the responder and pcg-client come from the payload.  Two host
# daemons listen in /run/pcg/sock, which every container gets bind-mounted
# at /pcg: "peercgroup serve --json" and examples/responder with policy.
# Each case starts pcg-client in a container (or a unit) the way an admin
# would; pcg-client waits until the host has looked up its pid and cgroup
# (the kernel's truth: /proc/PID/cgroup, stat() of the directory) and asked
# the runtime about the container, then connects to both daemons.  Per case:
# runtime and id as the runtime says, cgroup id == the directory's inode,
# pid == the host pid, the responder's ALLOW/DENY == the policy's.
#
# TAP lines go to the console and /dev/ttyS1; "# path CASE PATH" lines are
# the fixtures the host saves; the last line on ttyS1 is the verdict.
set -u
phase=${1:-containers}
P=/run/pcg-payload
V=/dev/ttyS1
S=/run/pcg/sock		# the daemons' sockets, /pcg in every container
W=/run/pcg		# logs
passed=0 failed=0
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export DEBIAN_FRONTEND=noninteractive
IMG=pcg/busybox
# The image has AppArmor in the kernel but not the apparmor package (its
# profiles, apparmor_parser): docker and podman refuse to start a container
# with their default profile then, so the cases ask for none.
NOAA=--security-opt=apparmor=unconfined

emit() { echo "$*"; echo "$*" >"$V"; }
ok() { emit "ok - $*"; passed=$((passed + 1)); }
notok() { emit "not ok - $*"; failed=$((failed + 1)); }
note() { emit "# $*"; }
show() { tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/# | /' | while IFS= read -r l; do emit "$l"; done; }
finish() { emit "PEERCGROUP-VERDICT passed=$passed failed=$failed"; exit 0; }
now() { date +%s.%N | cut -c1-14; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# find_client TAG: the host pid of pcg-client TAG (its argv[0]'s base name
# and argv[1]), waiting up to 180 s (runtimes start slowly under TCG).
find_client() {
	local tag=$1 f end=$((SECONDS + 180))
	local -a av
	while [ $SECONDS -lt $end ]; do
		for f in /proc/[0-9]*/cmdline; do
			mapfile -d '' -t av <"$f" 2>/dev/null || continue
			[ "${#av[@]}" -ge 2 ] && [ "${av[0]##*/}" = pcg-client ] && [ "${av[1]}" = "$tag" ] &&
				{ f=${f#/proc/}; echo "${f%/cmdline}"; return 0; }
		done
		sleep 0.2
	done
	return 1
}

# Filled by each case's start function: the id the runtime reports, and a
# pid the runtime reports for the container (empty: the runtime has none
# for this client, e.g. docker exec).
rt_id='' rt_pid='' rt_what=''
serve_pid=''

# kase NAME RUNTIME EXPECT_ID_FROM DECISION START [ARGS...]: one case.
# "START NAME ARGS..." starts "pcg-client NAME DIR SOCKETS..." detached, the
# way the runtime is used, and may set rt_id/rt_pid; RUNTIME and DECISION are what the
# classifier and the policy must say.  EXPECT_ID_FROM: "runtime" (the id
# is rt_id) or a literal id.
kase() {
	local name=$1 runtime=$2 want_id=$3 decision=$4
	shift 4
	local t0 pid cg ino line resp why=() got_rt got_id got_pid got_cgid got_path
	rt_id='' rt_pid='' rt_what=''
	t0=$(now)
	local start=$1
	shift
	if ! "$start" "$name" "$@" >"$W/$name.start.log" 2>&1; then
		notok "$name: could not be started: $(tail -n 3 "$W/$name.start.log" | tr '\n' '|')"
		return 1
	fi
	if ! pid=$(find_client "$name"); then
		notok "$name: pcg-client never ran: $(tail -n 3 "$W/$name.start.log" | tr '\n' '|')"
		return 1
	fi
	local started
	started=$(since "$t0")
	cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	ino=$(stat -c %i "/sys/fs/cgroup$cg")
	[ -n "${POST_START:-}" ] && $POST_START "$name" "$pid"
	[ "$want_id" = runtime ] && want_id=$rt_id
	touch "$S/go.$name"
	for _ in $(seq 300); do [ -e "$S/done.$name" ] && break; sleep 0.2; done
	emit "# path $name $cg"
	line=$(jq -c "select(.pid == $pid)" "$W/serve.jsonl" 2>/dev/null | tail -n 1)
	resp=$(grep " pid=$pid " "$W/resp.log" | tail -n 1)
	if [ -z "$line" ]; then
		notok "$name: peercgroup serve has no line for pid $pid (cgroup $cg)"
		show "$W/$name.start.log" 5
		return 1
	fi
	got_rt=$(jq -r .container.runtime <<<"$line")
	got_id=$(jq -r .container.id <<<"$line")
	got_pid=$(jq -r .pid <<<"$line")
	got_cgid=$(jq -r .cgroup_id <<<"$line")
	got_path=$(jq -r .path <<<"$line")
	[ "$got_rt" = "$runtime" ] || why+=("runtime $got_rt, expected $runtime")
	[ -n "$want_id" ] && [ "$got_id" = "$want_id" ] || why+=("id '$got_id', the runtime says '$want_id'")
	[ "$got_pid" = "$pid" ] || why+=("pid $got_pid, the host sees $pid")
	[ -z "$rt_pid" ] || [ "$rt_pid" = "$pid" ] || why+=("the runtime's pid $rt_pid is not the client's $pid")
	[ "$got_cgid" = "$ino" ] || why+=("cgroup id $got_cgid, inode of $cg is $ino")
	[ "$got_path" = "$cg" ] || why+=("path $got_path, /proc says $cg")
	case $resp in
	"$decision "*) ;;
	*) why+=("responder said '${resp:-nothing}', the policy says $decision") ;;
	esac
	if [ ${#why[@]} -eq 0 ]; then
		local short=$got_id
		[ ${#got_id} -le 24 ] || short="${got_id:0:4}…${got_id: -5}"
		ok "$name: $runtime $short, id $got_cgid, pid $pid, $decision; started in ${started}s${rt_what:+; $rt_what}"
	else
		notok "$name: $(printf '%s; ' "${why[@]}")"
		note "$name: serve: $line"
		note "$name: responder: $resp"
	fi
}

# ---- set-up: module, programs, daemons, the image ----
setup() {
	local t0
	t0=$(now)
	insmod "$P/peercgroup.ko" || { notok "setup: insmod peercgroup.ko failed"; finish; }
	udevadm settle
	[ -c /dev/peercgroup ] || { notok "setup: no /dev/peercgroup"; finish; }
	install -m 0755 "$P/peercgroup" "$P/responder" "$P/pcg-client" /usr/local/bin/
	mkdir -p "$S"
	chmod 0777 "$S"
	peercgroup serve --json "$S/serve.sock" >"$W/serve.jsonl" 2>"$W/serve.err" &
	serve_pid=$!
	responder "$P/policy" "$S/resp.sock" >"$W/resp.log" 2>&1 &
	for _ in $(seq 300); do [ -S "$S/serve.sock" ] && [ -S "$S/resp.sock" ] && break; sleep 0.1; done
	# Containers with a user namespace (nspawn -U, rootless podman) are
	# "others" to the sockets' owner.
	chmod 0666 "$S/serve.sock" "$S/resp.sock"
	# The image: busybox-static and pcg-client, nothing else.
	local r=/var/lib/pcg/rootfs
	mkdir -p $r/bin $r/usr/bin $r/pcg $r/proc $r/sys $r/dev $r/etc $r/tmp $r/run $r/var
	cp /bin/busybox $r/bin/busybox
	chroot $r /bin/busybox --install -s /bin
	cp /usr/local/bin/pcg-client /usr/local/bin/peercgroup $r/usr/bin/
	echo 'root:x:0:0:root:/:/bin/sh' >$r/etc/passwd
	echo 'root:x:0:' >$r/etc/group
	tar -C $r -cf /var/lib/pcg/rootfs.tar .
	note "setup (module, daemons, rootfs) took $(since "$t0")s; $(systemd-analyze 2>/dev/null | head -n 1)"
}

client() { echo pcg-client "$1" /pcg /pcg/serve.sock /pcg/resp.sock; }
host_client() { echo /usr/local/bin/pcg-client "$1" "$S" "$S/serve.sock" "$S/resp.sock"; }

# ---- docker and podman: the same commands, ENGINE is either ----
# engine_image ENGINE: the busybox image, imported.
engine_image() {
	local engine=$1 t0
	t0=$(now)
	[ "$engine" != docker ] || systemctl is-active -q docker || systemctl start docker
	"$engine" import /var/lib/pcg/rootfs.tar "$IMG" >/dev/null
	note "$engine: import took $(since "$t0")s"
}
# engine_run ENGINE NAME [OPTIONS...]
engine_run() {
	local engine=$1 name=$2 ref=$IMG
	shift 2
	[ "$engine" != podman ] || ref=localhost/$IMG
	# shellcheck disable=SC2046
	"$engine" run -d --name "$name" --network none "$NOAA" -v "$S:/pcg" "$@" "$ref" $(client "$name") || return 1
	rt_id=$("$engine" inspect -f '{{.Id}}' "$name")
	rt_pid=$("$engine" inspect -f '{{.State.Pid}}' "$name")
	rt_what="$engine inspect: pid $rt_pid"
}
docker_image() { engine_image docker; }
docker_run() { engine_run docker "$@"; }
docker_exec() {
	local name=$1
	docker run -d --name "$name-box" --network none "$NOAA" -v "$S:/pcg" "$IMG" sleep 100000 || return 1
	# shellcheck disable=SC2046
	docker exec -d "$name-box" $(client "$name") || return 1
	rt_id=$(docker inspect -f '{{.Id}}' "$name-box")
}
docker_driver() {
	local t0
	t0=$(now)
	mkdir -p /etc/docker
	if [ "$1" = systemd ]; then rm -f /etc/docker/daemon.json
	else echo "{\"exec-opts\": [\"native.cgroupdriver=$1\"]}" >/etc/docker/daemon.json; fi
	systemctl restart docker
	note "docker: restart with the $1 driver took $(since "$t0")s ($(docker info -f '{{.CgroupDriver}}' 2>&1))"
}

# ---- podman ----
podman_image() { engine_image podman; }
podman_run() { engine_run podman "$@"; }
podman_pod() {
	local name=$1
	podman pod create --name "$name-pod" --network none || return 1
	podman_run "$name" --pod "$name-pod"
}
# --cgroups=split: podman run in a unit of its own (as quadlet does).
podman_split() {
	local name=$1
	# shellcheck disable=SC2046
	systemd-run --unit="$name" --quiet podman run --name "$name" --cgroups=split --network none "$NOAA" \
		-v "$S:/pcg" "localhost/$IMG" $(client "$name") || return 1
	for _ in $(seq 600); do rt_id=$(podman inspect -f '{{.Id}}' "$name" 2>/dev/null) && break; sleep 0.2; done
}
user_env() { echo XDG_RUNTIME_DIR=/run/user/1000 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus; }
as_user() {
	# shellcheck disable=SC2046
	(cd /tmp && runuser -u pcguser -- env $(user_env) "$@")
}
linger() {
	grep -q '^pcguser:' /etc/subuid || usermod --add-subuids 100000-165535 --add-subgids 100000-165535 pcguser
	loginctl enable-linger pcguser
	for _ in $(seq 600); do [ -S /run/user/1000/bus ] && break; sleep 0.2; done
	[ -S /run/user/1000/bus ]
}
podman_rootless() {
	local name=$1
	linger || return 1
	as_user podman import /var/lib/pcg/rootfs.tar "$IMG" >/dev/null || return 1
	# shellcheck disable=SC2046
	as_user podman run -d --name "$name" --network none "$NOAA" -v "$S:/pcg" "localhost/$IMG" $(client "$name") || return 1
	rt_id=$(as_user podman inspect -f '{{.Id}}' "$name")
	rt_pid=$(as_user podman inspect -f '{{.State.Pid}}' "$name")
	rt_what="podman inspect: pid $rt_pid"
}

# ---- containerd ----
ctr_run() {
	local name=$1
	docker save "$IMG" | ctr -n default images import - >/dev/null || return 1
	# shellcheck disable=SC2046
	ctr -n default run -d --mount "type=bind,src=$S,dst=/pcg,options=rbind:rw" \
		"docker.io/$IMG:latest" "$name" $(client "$name") || return 1
	rt_id=$(ctr -n default containers ls -q | grep -x "$name")
	rt_pid=$(ctr -n default tasks ls | awk -v n="$name" '$1 == n { print $2 }')
	rt_what="ctr tasks ls: pid $rt_pid"
}

# ---- systemd-nspawn through machinectl ----
nspawn_start() {
	local name=$1 m=pcgct
	rm -rf /var/lib/machines/"$m"
	mkdir -p /var/lib/machines /etc/systemd/nspawn
	cp -a /var/lib/pcg/rootfs /var/lib/machines/"$m"
	cat >/etc/systemd/nspawn/"$m".nspawn <<-EOF
		[Exec]
		Boot=no
		Parameters=$(client "$name")
		[Files]
		Bind=$S:/pcg
		[Network]
		VirtualEthernet=no
	EOF
	machinectl start "$m" || return 1
	for _ in $(seq 600); do rt_pid=$(machinectl show "$m" -p Leader --value 2>/dev/null) && [ -n "$rt_pid" ] && break; sleep 0.2; done
	rt_id=$(machinectl show "$m" -p Name --value)
	rt_what="machinectl show: leader $rt_pid, unit $(machinectl show "$m" -p Unit --value)"
}

# ---- LXC ----
lxc_start() {
	local name=$1 c=pcglxc
	mkdir -p /var/lib/lxc/"$c"
	rm -rf /var/lib/pcg/lxcroot
	cp -a /var/lib/pcg/rootfs /var/lib/pcg/lxcroot
	cat >/var/lib/lxc/"$c"/config <<-EOF
		lxc.uts.name = $c
		lxc.rootfs.path = dir:/var/lib/pcg/lxcroot
		lxc.net.0.type = empty
		lxc.apparmor.profile = unconfined
		lxc.mount.auto = proc:mixed sys:ro cgroup:mixed
		lxc.mount.entry = $S pcg none bind 0 0
		lxc.init.cmd = $(client "$name")
	EOF
	lxc-start -n "$c" -d -l DEBUG -o "$W/lxc.log" || { show "$W/lxc.log"; return 1; }
	for _ in $(seq 600); do rt_pid=$(lxc-info -n "$c" -p -H 2>/dev/null) && [ -n "$rt_pid" ] && break; sleep 0.2; done
	rt_id=$(lxc-info -n "$c" -H -s >/dev/null && echo "$c")
	rt_what="lxc-info: pid $rt_pid"
}

# ---- systemd units and desktop-style scopes ----
unit_service() {	# unit_service NAME UNIT
	# shellcheck disable=SC2046
	systemd-run --quiet --unit="$2" $(host_client "$1")
	rt_id=$2.service
}
user_service() {
	linger || return 1
	# shellcheck disable=SC2046
	systemd-run --quiet --user --machine=pcguser@ --unit="$2" $(host_client "$1")
	rt_id=$2.service
}
# user_scope NAME UNIT: systemd-run --user --scope, as a desktop launcher does.
user_scope() {
	linger || return 1
	# shellcheck disable=SC2046
	as_user systemd-run --quiet --user --scope --unit="$2" $(host_client "$1") >"$W/$1.out" 2>&1 &
	rt_id=$2
}
# deleg_service NAME UNIT: a service with Delegate=yes and User=pcguser,
# whose cgroup systemd chown()s to that user; the user names a cgroup of
# its own there after the LXC container, and its client runs in it.  (No
# "$" in the command: systemd would expand it; "0" moves the writer.)
deleg_service() {
	local cg=/sys/fs/cgroup/system.slice/$2.service/lxc.payload.pcglxc
	systemd-run --quiet --unit="$2" -p Delegate=yes -p User=pcguser /bin/sh -c \
		"mkdir $cg && echo 0 >$cg/cgroup.procs && exec $(host_client "$1")"
	rt_id=pcglxc
}
kube_scope() {
	# shellcheck disable=SC2046
	systemd-run --quiet --scope --slice="$2" --unit="$3" $(host_client "$1") >"$W/$1.out" 2>&1 &
	rt_id=$4
}

# ---- the daemon inside a docker container ----
# "peercgroup serve --json" in a container (private cgroup namespace, the
# docker default on cgroup v2), asked by clients in the same container, in
# a sibling container and on the host; with --pid=host, the kernel lets it
# see the sibling and the host, relative to its cgroup namespace (/..).
I=/run/pcg/inner
inner_daemon() {	# inner_daemon NAME [docker run options]
	local name=$1
	shift
	mkdir -p "$I/$name"
	chmod 0777 "$I/$name"
	docker run -d --name "$name" --network none "$NOAA" --device /dev/peercgroup \
		-v "$I/$name:/pcg" "$@" "$IMG" peercgroup serve --json /pcg/in.sock || return 1
	for _ in $(seq 300); do [ -S "$I/$name/in.sock" ] && break; sleep 0.2; done
	chmod 0666 "$I/$name/in.sock"
}
# inner_case NAME DAEMON WHERE EXPECT: WHERE is same, sibling or host;
# EXPECT is EREMOTE, or "path" (the answer must be the client's cgroup
# relative to the daemon's, its pid as the daemon's pid namespace numbers
# it, the cgroup's id only inside the daemon's cgroup namespace (0 above
# its root), the classification named with "outside" there).
inner_case() {
	local name=$1 d=$2 where=$3 expect=$4 pid cg dcg rel ino line why=() nspid id=''
	local dir=$I/$d
	case $where in
	same) docker exec -d "$d" pcg-client "$name" /pcg /pcg/in.sock ;;
	sibling) docker run -d --name "$name" --network none "$NOAA" -v "$dir:/pcg" "$IMG" pcg-client "$name" /pcg /pcg/in.sock
		id=$(docker inspect -f '{{.Id}}' "$name") ;;
	host) systemd-run --quiet --unit="$name" /usr/local/bin/pcg-client "$name" "$dir" "$dir/in.sock"
		id=$name.service ;;
	esac >"$W/$name.start.log" 2>&1 || { notok "$name: could not be started"; show "$W/$name.start.log" 5; return 1; }
	pid=$(find_client "$name") || { notok "$name: pcg-client never ran"; return 1; }
	cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	ino=$(stat -c %i "/sys/fs/cgroup$cg")
	dcg=$(sed -n 's/^0:://p' "/proc/$(docker inspect -f '{{.State.Pid}}' "$d")/cgroup")
	nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$pid/status")
	touch "$dir/go.$name"
	for _ in $(seq 300); do [ -e "$dir/done.$name" ] && break; sleep 0.2; done
	emit "# path $name $cg"
	# the daemon's line for this client: by pid, as its pid namespace numbers it
	local want_pid=$pid want_cgid=0
	[ "$where" = same ] && want_pid=$nspid want_cgid=$ino
	line=$(docker logs "$d" 2>/dev/null | grep -v '"error"' | jq -c "select(.pid == $want_pid)" 2>/dev/null | tail -n 1)
	[ -n "$line" ] || line=$(docker logs "$d" 2>/dev/null | grep '"error"' | tail -n 1)
	if [ "$expect" = EREMOTE ]; then
		case $line in
		*'"error":"EREMOTE"'*) ok "$name: $where client (cgroup $cg) withheld from the daemon in $d: EREMOTE" ;;
		*) notok "$name: expected EREMOTE, the daemon said: ${line:-nothing}" ;;
		esac
		return
	fi
	# The client's cgroup relative to the daemon's: /.. per level up.
	rel=$(awk -v a="$dcg" -v b="$cg" 'BEGIN {
		if (b == a) { print "/"; exit }
		if (index(b, a "/") == 1) { print substr(b, length(a) + 1); exit }
		n = split(a, x, "/"); up = ""; p = a
		while (index(b, p "/") != 1) { sub(/\/[^\/]*$/, "", p); up = up "/.."; if (p == "") break }
		print up substr(b, length(p) + 1) }')
	local got_path got_pid got_rt got_id got_flags
	got_path=$(jq -r .path <<<"$line")
	got_pid=$(jq -r .pid <<<"$line")
	got_rt=$(jq -r .container.runtime <<<"$line")
	got_id=$(jq -r .container.id <<<"$line")
	got_flags=$(jq -r '.container.flags | join(",")' <<<"$line")
	[ "$got_path" = "$rel" ] || why+=("path '$got_path', expected '$rel' ($cg relative to $dcg)")
	[ "$(jq -r .cgroup_id <<<"$line")" = "$want_cgid" ] ||
		why+=("cgroup id $(jq -r .cgroup_id <<<"$line"), expected $want_cgid (the inode of $cg is $ino)")
	case $where in
	same) [ "$got_pid" = "$nspid" ] || why+=("pid $got_pid, the container numbers it $nspid") ;;
	*) [ "$got_pid" = "$pid" ] || why+=("pid $got_pid, the host's $pid")
		# A unit above the daemon's root is named, but not called a
		# systemd service: its slice is out of sight (the classifier
		# never guesses).  A container keeps its runtime and id.
		if [ "$where" = host ]; then
			got_id=$(jq -r .container.unit <<<"$line")
			[ "$got_rt" = unknown ] || why+=("runtime $got_rt for a unit whose slice is out of sight")
		fi
		[ "$got_id" = "$id" ] || why+=("id '$got_id', expected '$id'")
		case ,$got_flags, in *,outside,*) ;; *) why+=("flags '$got_flags' lack outside") ;; esac ;;
	esac
	if [ ${#why[@]} -eq 0 ]; then
		ok "$name: $where client seen by the daemon in $d as $got_path: $got_rt ${got_id:0:12}, flags ${got_flags:--}, pid $got_pid"
	else
		notok "$name: $(printf '%s; ' "${why[@]}")"
		note "$name: daemon said: $line"
	fi
}
inner_phase() {
	inner_daemon pcg-daemon || { notok "daemon-in-container: the daemon container did not start"; return; }
	inner_case in-same pcg-daemon same path
	inner_case in-sibling pcg-daemon sibling EREMOTE
	inner_case in-host pcg-daemon host EREMOTE
	inner_daemon pcg-daemon-pidhost --pid=host || { notok "daemon-in-container: the --pid=host daemon did not start"; return; }
	inner_case in-pidhost-sibling pcg-daemon-pidhost sibling path
	inner_case in-pidhost-host pcg-daemon-pidhost host path
}

containers_phase() {
	setup
	local hex=3f9f8a62b6e4f4e1d3a0d2b9c1e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9
	local pod=0f3c5d6e_1a2b_4c3d_9e8f_7a6b5c4d3e2f
	# Systemd first: nothing to start but the unit.
	kase unit-service systemd-service runtime ALLOW unit_service pcg-svc
	kase user-service user-session runtime DENY user_service pcg-usvc
	kase app-flatpak flatpak runtime ALLOW user_scope app-flatpak-org.gnome.Maps-4242.scope
	kase app-gnome app runtime DENY user_scope app-gnome-org.gnome.Terminal-4243.scope
	kase app-snap snap runtime DENY user_scope snap.firefox.firefox-6f1c0c3e-2a7b-4b8e-9c1d-3e5f7a9b0c2d.scope
	kase kubepods-besteffort containerd "$hex" DENY kube_scope \
		"kubepods-besteffort-pod$pod.slice" "cri-containerd-$hex.scope" "$hex"
	# docker, systemd driver (Debian's default on cgroup v2)
	docker_image
	kase docker-systemd docker runtime ALLOW docker_run
	kase docker-cgroupns-host docker runtime ALLOW docker_run --cgroupns=host
	kase docker-exec docker runtime ALLOW docker_exec
	inner_phase
	# podman, rootful, systemd manager
	podman_image
	kase podman-systemd podman runtime DENY podman_run
	# systemd-nspawn through machinectl
	kase nspawn systemd-nspawn pcgct ALLOW nspawn_start
	# the cgroupfs managers and the other modes
	kase podman-cgroupfs podman runtime DENY podman_run --cgroup-manager=cgroupfs
	kase podman-pod podman runtime DENY podman_pod
	kase podman-split podman runtime DENY podman_split
	kase podman-rootless podman runtime DENY podman_rootless
	kase ctr containerd ctr DENY ctr_run
	kase lxc lxc pcglxc ALLOW lxc_start
	# the same name, given by a user in the cgroup systemd delegated to it
	kase delegated-lxc-name lxc pcglxc DENY deleg_service pcg-deleg
	docker_driver cgroupfs
	kase docker-cgroupfs docker runtime ALLOW docker_run
	note "containers phase took $(since "$t_all")s"
}

# What serve said about the client PID, in the CLI's words.
said() {
	jq -r "select(.pid == $1) | \"peercgroup serve: pid=\\(.pid) cgroup_id=\\(.cgroup_id) runtime=\\(.container.runtime) container=\\(.container.id) path=\\(.path)\"" \
		"$W/serve.jsonl" | tail -n 1
}

# The race this project exists for: the client connects, then moves to
# another cgroup before the server looks.  /proc shows the new cgroup;
# peercgroup keeps the one of connect().
race() {
	local name=race pid
	mkdir -p /sys/fs/cgroup/pcg-moved
	touch "$S/hold.$name"
	# shellcheck disable=SC2046
	systemd-run --quiet --unit=pcg-race /usr/local/bin/pcg-client "$name" "$S" "$S/serve.sock"
	pid=$(find_client "$name") || { notok "race: pcg-client never ran"; return 1; }
	note "race: client pid $pid starts in $(sed -n 's/^0:://p' "/proc/$pid/cgroup")"
	kill -STOP "$serve_pid"		# the server is slow to look
	touch "$S/go.$name"
	for _ in $(seq 300); do [ -e "$S/connected.$name" ] && break; sleep 0.1; done
	note "race: connected; now it is moved: echo $pid > /sys/fs/cgroup/pcg-moved/cgroup.procs"
	echo "$pid" >/sys/fs/cgroup/pcg-moved/cgroup.procs
	local now_cg
	now_cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	note "race: /proc/$pid/cgroup now says $now_cg"
	kill -CONT "$serve_pid"
	for _ in $(seq 100); do [ -n "$(said "$pid")" ] && break; sleep 0.1; done
	touch "$S/read.$name"
	note "race: $(said "$pid")"
	local got
	got=$(jq -r "select(.pid == $pid) | .path" "$W/serve.jsonl" | tail -n 1)
	if [ "$got" = /system.slice/pcg-race.service ] && [ "$now_cg" = /pcg-moved ]; then
		ok "race: /proc says $now_cg, peercgroup keeps the connect-time $got"
	else
		notok "race: peercgroup said '$got' (connect-time /system.slice/pcg-race.service), /proc '$now_cg'"
	fi
}

demo_phase() {
	setup
	docker_image
	kase docker docker runtime ALLOW docker_run
	note "$(said "$(jq -r 'select(.container.runtime == "docker") | .pid' "$W/serve.jsonl" | tail -n 1)")"
	podman_image
	kase podman podman runtime DENY podman_run
	note "$(said "$(jq -r 'select(.container.runtime == "podman") | .pid' "$W/serve.jsonl" | tail -n 1)")"
	kase nspawn systemd-nspawn pcgct ALLOW nspawn_start
	note "$(said "$(jq -r 'select(.container.runtime == "systemd-nspawn") | .pid' "$W/serve.jsonl" | tail -n 1)")"
	race
}

t_all=$(now)
note "phase $phase on $(uname -r)"
case $phase in
containers) containers_phase ;;
demo) demo_phase ;;
*) notok "harness: unknown phase $phase" ;;
esac
finish
