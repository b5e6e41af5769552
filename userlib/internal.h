/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared between the library's files, hidden: not exported from
 * libpeercgroup.so; reachable only when linking libpeercgroup.a or the
 * objects (the CLI and the tests).
 */
#ifndef PEERCGROUP_INTERNAL_H
#define PEERCGROUP_INTERNAL_H

#include "peercgroup.h"

#define PCG_HIDDEN __attribute__((visibility("hidden")))
#define PUBLIC __attribute__((visibility("default")))

/* device.c: the device fd (>= 0), opened once per process, or a negative
 * error; *@query_flags (if not NULL): the PEERCGROUP_QUERY_* it accepts. */
PCG_HIDDEN int pcg_device(unsigned int *query_flags);

/* device.c: ioctl() retried on EINTR; 0 or -errno. */
PCG_HIDDEN int pcg_ioctl(int fd, unsigned long req, void *arg);

/* device.c: 1 if the cached fd is wiped in fork children (MADV_WIPEONFORK). */
PCG_HIDDEN int pcg_device_wipes_on_fork(void);

/*
 * TEST ONLY: use @path instead of /dev/peercgroup (NULL restores it) and
 * drop the cached descriptor.  Lets unit tests fake the device and the
 * guest suite test "module absent" while the module is loaded.
 */
PCG_HIDDEN void pcg_test_set_device(const char *path);

/* device.c: errno from open() of the device -> library error (negative);
 * @module_loaded: /sys/module/peercgroup exists. */
PCG_HIDDEN int pcg_map_open_errno(int e, int module_loaded);

/* query.c: errno from PEERCGROUP_IOC_QUERY -> library error (negative). */
PCG_HIDDEN int pcg_map_query_errno(int e);

/* live.c: the PEERCGROUP_GET_LIVE answer. */
PCG_HIDDEN int pcg_get_live(int sockfd, unsigned int flags, struct peercgroup_info *info);

/* messages.c: "ENOPKG", ...; "EOTHER" for an error the library never returns. */
PCG_HIDDEN const char *pcg_errno_name(int err);

#endif
