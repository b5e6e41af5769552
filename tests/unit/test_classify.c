/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * peercgroup_classify() against cgroup paths as the runtimes create them
 * (naming taken from each runtime's docs/source, see userlib/classify.c),
 * and against hostile input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "peercgroup.h"

#define ID "3f9f8a62b6e4f4e1d3a0d2b9c1e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9"
#define ID2 "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define UID_ "0f3c5d6e-1a2b-4c3d-9e8f-7a6b5c4d3e2f"
#define UID_US "0f3c5d6e_1a2b_4c3d_9e8f_7a6b5c4d3e2f"

struct tcase {
	const char *path;
	enum peercgroup_runtime rt;
	const char *id;
	unsigned int flags;
	const char *pod;
	const char *qos;
	int64_t uid;
};

#define K PEERCGROUP_CT_KUBERNETES
static const struct tcase cases[] = {
	/* host and plain systemd */
	{ "/", PEERCGROUP_RT_HOST, "", 0, "", "", -1 },
	{ "/init.scope", PEERCGROUP_RT_SYSTEM_SERVICE, "init.scope", 0, "", "", -1 },
	{ "/system.slice/sshd.service", PEERCGROUP_RT_SYSTEM_SERVICE, "sshd.service", 0, "", "", -1 },
	{ "system.slice/sshd.service", PEERCGROUP_RT_SYSTEM_SERVICE, "sshd.service", 0, "", "", -1 },
	{ "/system.slice/system-getty.slice/getty@tty1.service", PEERCGROUP_RT_SYSTEM_SERVICE, "getty@tty1.service", 0, "", "", -1 },
	{ "/system.slice/docker.service", PEERCGROUP_RT_SYSTEM_SERVICE, "docker.service", 0, "", "", -1 },
	{ "/user.slice/user-1000.slice/session-3.scope", PEERCGROUP_RT_USER_SESSION, "session-3.scope", 0, "", "", 1000 },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.service", PEERCGROUP_RT_USER_SESSION, "dbus.service", 0, "", "", 1000 },
	{ "/user.slice/user-0.slice/session-c1.scope", PEERCGROUP_RT_USER_SESSION, "session-c1.scope", 0, "", "", 0 },
	{ "/system.slice", PEERCGROUP_RT_UNKNOWN, "", 0, "", "", -1 },
	{ "/foo/bar", PEERCGROUP_RT_UNKNOWN, "", 0, "", "", -1 },
	/* docker: systemd and cgroupfs drivers, rootless */
	{ "/system.slice/docker-" ID ".scope", PEERCGROUP_RT_DOCKER, ID, 0, "", "", -1 },
	{ "/docker/" ID, PEERCGROUP_RT_DOCKER, ID, 0, "", "", -1 },
	{ "/docker/" ID "/init", PEERCGROUP_RT_DOCKER, ID, 0, "", "", -1 },
	{ "/user.slice/user-1000.slice/user@1000.service/docker-" ID ".scope", PEERCGROUP_RT_DOCKER, ID, PEERCGROUP_CT_ROOTLESS, "", "", 1000 },
	{ "/docker/abc", PEERCGROUP_RT_UNKNOWN, "", 0, "", "", -1 },
	{ "/system.slice/docker-" ID ".scope.bak", PEERCGROUP_RT_UNKNOWN, "", 0, "", "", -1 },
	/* podman */
	{ "/machine.slice/libpod-" ID ".scope", PEERCGROUP_RT_PODMAN, ID, 0, "", "", -1 },
	{ "/machine.slice/libpod-" ID ".scope/container", PEERCGROUP_RT_PODMAN, ID, 0, "", "", -1 },
	{ "/machine.slice/libpod-conmon-" ID ".scope", PEERCGROUP_RT_PODMAN, ID, PEERCGROUP_CT_CONMON, "", "", -1 },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope", PEERCGROUP_RT_PODMAN, ID, PEERCGROUP_CT_ROOTLESS, "", "", 1000 },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-conmon-" ID ".scope", PEERCGROUP_RT_PODMAN, ID, PEERCGROUP_CT_ROOTLESS | PEERCGROUP_CT_CONMON, "", "", 1000 },
	{ "/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope", PEERCGROUP_RT_PODMAN, ID, 0, ID2, "", -1 },
	{ "/libpod_parent/libpod-" ID, PEERCGROUP_RT_PODMAN, ID, 0, "", "", -1 },
	{ "/libpod_parent/conmon", PEERCGROUP_RT_PODMAN, "", PEERCGROUP_CT_CONMON, "", "", -1 },
	/* kubernetes, systemd driver */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_US ".slice/cri-containerd-" ID ".scope",
	  PEERCGROUP_RT_CONTAINERD, ID, K, UID_, "burstable", -1 },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_US ".slice/crio-" ID ".scope",
	  PEERCGROUP_RT_CRIO, ID, K, UID_, "besteffort", -1 },
	{ "/kubepods.slice/kubepods-pod" UID_US ".slice/crio-conmon-" ID ".scope",
	  PEERCGROUP_RT_CRIO, ID, K | PEERCGROUP_CT_CONMON, UID_, "guaranteed", -1 },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_US ".slice/docker-" ID ".scope",
	  PEERCGROUP_RT_DOCKER, ID, K, UID_, "burstable", -1 },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_US ".slice",
	  PEERCGROUP_RT_KUBERNETES, "", K, UID_, "burstable", -1 },
	{ "/kubepods.slice", PEERCGROUP_RT_KUBERNETES, "", K, "", "", -1 },
	/* kubernetes, cgroupfs driver */
	{ "/kubepods/besteffort/pod" UID_ "/" ID, PEERCGROUP_RT_KUBERNETES, ID, K, UID_, "besteffort", -1 },
	{ "/kubepods/burstable/pod" UID_ "/" ID, PEERCGROUP_RT_KUBERNETES, ID, K, UID_, "burstable", -1 },
	{ "/kubepods/pod" UID_ "/" ID, PEERCGROUP_RT_KUBERNETES, ID, K, UID_, "guaranteed", -1 },
	/* kind: kubelet inside a docker container; the outermost wins */
	{ "/system.slice/docker-" ID2 ".scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_US ".slice/cri-containerd-" ID ".scope", PEERCGROUP_RT_DOCKER, ID2, 0, "", "", -1 },
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_US
	  ".slice/cri-containerd-" ID ".scope", PEERCGROUP_RT_CONTAINERD, ID, K, UID_, "besteffort", -1 },
	/* containerd without kubernetes */
	{ "/system.slice/nerdctl-" ID ".scope", PEERCGROUP_RT_CONTAINERD, ID, 0, "", "", -1 },
	/* LXC 4+, LXD, Incus; legacy LXC */
	{ "/lxc.payload.web01", PEERCGROUP_RT_LXC, "web01", 0, "", "", -1 },
	{ "/lxc.payload.web01/system.slice/sshd.service", PEERCGROUP_RT_LXC, "web01", 0, "", "", -1 },
	{ "/lxc.payload.default_c1", PEERCGROUP_RT_LXC, "default_c1", 0, "", "", -1 },
	{ "/lxc.monitor.web01", PEERCGROUP_RT_LXC, "web01", PEERCGROUP_CT_MONITOR, "", "", -1 },
	{ "/lxc/web01", PEERCGROUP_RT_LXC, "web01", 0, "", "", -1 },
	{ "/lxc.payload.", PEERCGROUP_RT_UNKNOWN, "", 0, "", "", -1 },
	/* systemd-nspawn, machined (nspawn, libvirt) */
	{ "/machine.slice/systemd-nspawn@debian.service", PEERCGROUP_RT_NSPAWN, "debian", 0, "", "", -1 },
	{ "/machine.slice/systemd-nspawn@debian.service/payload/system.slice/sshd.service", PEERCGROUP_RT_NSPAWN, "debian", 0, "", "", -1 },
	{ "/machine.slice/machine-debian.scope", PEERCGROUP_RT_MACHINE, "debian", 0, "", "", -1 },
	{ "/machine.slice/machine-qemu\\x2d1\\x2dfedora.scope", PEERCGROUP_RT_MACHINE, "qemu-1-fedora", 0, "", "", -1 },
	{ "/machine.slice/machine-\\x00.scope", PEERCGROUP_RT_UNKNOWN, "", 0, "", "", -1 },
};

static void check_case(const struct tcase *t)
{
	struct peercgroup_container ct;
	int r;

	memset(&ct, 0x5a, sizeof(ct));
	r = peercgroup_classify(t->path, strlen(t->path), &ct);
	if (r != 0 || ct.runtime != t->rt || strcmp(ct.id, t->id) ||
	    ct.flags != t->flags || strcmp(ct.pod, t->pod) ||
	    strcmp(ct.qos, t->qos) || ct.uid != t->uid)
		print_error("path %s\n got r=%d rt=%s id='%s' flags=%#x pod='%s' qos='%s' uid=%lld\n",
			    t->path, r, peercgroup_runtime_name(ct.runtime), ct.id,
			    ct.flags, ct.pod, ct.qos, (long long)ct.uid);
	assert_int_equal(r, 0);
	assert_string_equal(peercgroup_runtime_name(ct.runtime), peercgroup_runtime_name(t->rt));
	assert_string_equal(ct.id, t->id);
	assert_int_equal(ct.flags, t->flags);
	assert_string_equal(ct.pod, t->pod);
	assert_string_equal(ct.qos, t->qos);
	assert_int_equal(ct.uid, t->uid);
}

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
}

static void expect_invalid(const char *p, size_t len)
{
	struct peercgroup_container ct;

	memset(&ct, 0x5a, sizeof(ct));
	assert_int_equal(peercgroup_classify(p, len, &ct), -EINVAL);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_UNKNOWN);
	assert_string_equal(ct.id, "");
	assert_int_equal(ct.uid, -1);
}

static void test_hostile(void **state)
{
	static const char nul[] = "/system.slice/docker-\0x.scope";
	struct peercgroup_container ct;
	char *big;
	size_t i;

	(void)state;
	expect_invalid("", 0);
	expect_invalid(NULL, 5);
	expect_invalid(nul, sizeof(nul) - 1);
	expect_invalid("/..", 3);
	expect_invalid("/system.slice/../docker/" ID, strlen("/system.slice/../docker/" ID));
	expect_invalid("/./x", 4);
	expect_invalid("//", 2);
	expect_invalid("/a//b", 5);
	expect_invalid("/a/", 3);
	assert_int_equal(peercgroup_classify("/", 1, NULL), -EINVAL);

	/* length is honoured: only "/docker" is looked at */
	assert_int_equal(peercgroup_classify("/docker/" ID, 7, &ct), 0);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_UNKNOWN);

	/* a 256-byte component is not a cgroup name */
	big = malloc(70000);
	assert_non_null(big);
	big[0] = '/';
	memset(big + 1, 'a', 256);
	expect_invalid(big, 257);

	/* 64 KiB of "/a": valid, deep, unknown */
	for (i = 0; i < 65536; i += 2)
		memcpy(big + i, "/a", 2);
	assert_int_equal(peercgroup_classify(big, 65536, &ct), 0);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_UNKNOWN);
	expect_invalid(big, 65538);	/* over the limit */

	/* 64 KiB ending in a container: still found */
	i = strlen("/docker-" ID ".scope");
	memcpy(big + 65536 - i, "/docker-" ID ".scope", i);
	assert_int_equal(peercgroup_classify(big, 65536, &ct), 0);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_DOCKER);
	assert_string_equal(ct.id, ID);
	free(big);

	/* near misses */
	assert_int_equal(peercgroup_classify("/docker-" ID "0.scope", 8 + 65 + 6, &ct), 0);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_UNKNOWN);
	assert_int_equal(peercgroup_classify("/DOCKER-" ID ".scope", 8 + 64 + 6, &ct), 0);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_UNKNOWN);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(peercgroup_runtime_name(PEERCGROUP_RT_DOCKER), "docker");
	assert_string_equal(peercgroup_runtime_name(PEERCGROUP_RT_CRIO), "cri-o");
	assert_string_equal(peercgroup_runtime_name(PEERCGROUP_RT_COUNT_), "unknown");
	assert_string_equal(peercgroup_runtime_name((enum peercgroup_runtime)-1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_names),
	};

	print_message("classifier table: %zu paths\n", sizeof(cases) / sizeof(cases[0]));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
