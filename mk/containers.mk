# Real containers: docker, podman, containerd, systemd-nspawn, LXC and systemd
# units in a systemd-booted Debian 12 guest (QEMU TCG), each client's
# connect-time cgroup checked against what the runtime and the kernel say.
#
#   make check-containers   one line per runtime and mode, then a summary
#   make demo-containers    one docker, one podman, one nspawn container, and
#                           the move-after-connect race

.PHONY: check-containers demo-containers
check-containers: deps
	scripts/check-containers.sh containers

demo-containers: deps
	scripts/check-containers.sh demo
