/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Messages: each library error's name and meaning, in one table. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "peercgroup.h"
#include "internal.h"

#ifndef PEERCGROUP_LIB_VERSION_STRING
#error "PEERCGROUP_LIB_VERSION_STRING comes from the VERSION file (see userlib/Makefile)"
#endif

static const struct {
	int err;
	const char *name;
	const char *message;	/* says what to do where there is something to do */
} errors[] = {
	{ 0, "OK", "success" },
	{ ENOPKG, "ENOPKG", "peercgroup kernel module is not loaded (no /dev/peercgroup): "
	  "run 'modprobe peercgroup'; if that fails, 'dkms status peercgroup'" },
	{ ENODEV, "ENODEV", "peercgroup module is loaded but /dev/peercgroup is not visible here "
	  "(a sandboxed service? with PrivateDevices=yes add BindReadOnlyPaths=/dev/peercgroup "
	  "and DeviceAllow=/dev/peercgroup r, or open the device before sandboxing: "
	  "peercgroup_open_device())" },
	{ EACCES, "EACCES", "permission denied opening /dev/peercgroup (a service with "
	  "DevicePolicy= or PrivateDevices= needs DeviceAllow=/dev/peercgroup r; "
	  "the node itself is mode 0666)" },
	{ EPROTO, "EPROTO", "peercgroup module speaks an incompatible ABI "
	  "(library and module from different releases? 'dkms status peercgroup')" },
	{ ENODATA, "ENODATA", "no cgroup record for this connection (made before the module was loaded?)" },
	{ EREMOTE, "EREMOTE", "withheld: the peer is outside both this process's pid and cgroup "
	  "namespaces, so the kernel would not tell it either" },
	{ ENXIO, "ENXIO", "the peer's cgroup names no such unit, owner, machine or container" },
	{ ENOTCONN, "ENOTCONN", "socket is not connected (or is listening)" },
	{ EOPNOTSUPP, "EOPNOTSUPP", "not a stream or seqpacket socket (datagram sockets have no peer record)" },
	{ EAFNOSUPPORT, "EAFNOSUPPORT", "not an AF_UNIX socket" },
	{ ENOTSOCK, "ENOTSOCK", "file descriptor is not a socket" },
	{ EBADF, "EBADF", "bad file descriptor" },
	{ ESRCH, "ESRCH", "peer process is gone or not visible (live query)" },
	{ ENOMEDIUM, "ENOMEDIUM", "peer process has no cgroup v2 membership (live query)" },
	{ EINVAL, "EINVAL", "invalid argument" },
	{ ENOMEM, "ENOMEM", "out of memory" },
	{ EFAULT, "EFAULT", "bad address" },
	{ ENAMETOOLONG, "ENAMETOOLONG", "the peer's cgroup path does not fit in PATH_MAX" },
};

static int find(int err)
{
	size_t i;

	if (err == INT_MIN)
		return -1;
	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == err)
			return (int)i;
	return -1;
}

PCG_HIDDEN const char *pcg_errno_name(int err)
{
	int i = find(err);

	return i < 0 ? "EOTHER" : errors[i].name;
}

PUBLIC const char *peercgroup_strerror(int err)
{
	int i = find(err);

	/* glibc's strerror() is thread-safe for known values (2.32+). */
	if (i >= 0)
		return errors[i].message;
	return err == INT_MIN ? "unknown error" : strerror(err < 0 ? -err : err);
}

PUBLIC const char *peercgroup_library_version(void)
{
	return PEERCGROUP_LIB_VERSION_STRING;
}
