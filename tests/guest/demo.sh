#!/bin/sh
# The demo: one server, two clients in two cgroups that stand for two
# containers (a Docker one and a Podman one).  The server names, for each
# client, which container is calling.  Lines for the audience start "demo| ".
cg=/sys/fs/cgroup
docker=system.slice/docker-4f6c2a7d9e1b3c5a8f0e2d4c6b8a1f3e5d7c9b2a4e6f8d0c1b3a5e7f9d2c4b6a.scope
podman=machine.slice/libpod-9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b.scope
mkdir -p "$cg/$docker" "$cg/$podman"

say() { echo "demo| $*"; }
say "server: peercgroup serve @demo (in cgroup $(sed -n 's/^0:://p' /proc/self/cgroup))"
peercgroup serve @demo --count 2 >/tmp/serve.out 2>&1 &
server=$!
sleep 1
for c in "$docker" "$podman"; do
	say "client: started in /$c, runs: peercgroup ask @demo"
	sh -c "echo 0 >$cg/$c/cgroup.procs && exec peercgroup ask @demo" >/tmp/ask.out 2>&1
	sed 's/^/demo|   client hears: /' /tmp/ask.out
done
wait $server
say "server printed:"
sed 's/^/demo|   /' /tmp/serve.out

# The demo is a test too: each container must be named by its own id.
for c in "$docker" "$podman"; do
	id=${c##*-}
	id=${id%.scope}
	if grep -q "$id" /tmp/serve.out; then
		echo "ok - demo/names-${c%%.*}"
	else
		echo "not ok - demo/names-${c%%.*}: container id $id not in the server's output"
	fi
done
