/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal, hidden-visibility hooks.  Not exported from libpeercgroup.so;
 * reachable only when linking libpeercgroup.a or the objects (tests).
 */
#ifndef PEERCGROUP_INTERNAL_H
#define PEERCGROUP_INTERNAL_H

#define PCG_HIDDEN __attribute__((visibility("hidden")))

/*
 * TEST ONLY: use @path instead of /dev/peercgroup (NULL restores it) and
 * drop the cached descriptor.  Lets unit tests fake the device and the
 * guest suite test "module absent" while the module is loaded.
 */
PCG_HIDDEN void pcg_test_set_device(const char *path);

/* errno from open() of the device -> library error (negative). */
PCG_HIDDEN int pcg_map_open_errno(int e);

/* errno from PEERCGROUP_IOC_QUERY -> library error (negative). */
PCG_HIDDEN int pcg_map_query_errno(int e);

#endif
