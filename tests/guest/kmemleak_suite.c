// SPDX-License-Identifier: GPL-2.0
/*
 * Run last on a kernel booted with kmemleak=on (make check-debug): unload
 * the module (its memory must all have been freed), ask kmemleak to scan
 * twice with a pause (a young object is not reported on the first scan),
 * and report every suspected leak as a failure, with its backtrace.
 * Usage: kmemleak_suite [TEST]
 */
#include "guest.h"

#include <sys/mount.h>

#define KMEMLEAK "/sys/kernel/debug/kmemleak"

static void t_kmemleak(void)
{
	static char report[1 << 16];
	ssize_t n, len = 0;
	int fd, leaks = 0, ours = 0;

	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) && errno != EBUSY)
		FAIL("mount debugfs: %s", strerror(errno));
	CHECK(access(KMEMLEAK, F_OK) == 0, "no " KMEMLEAK ": kernel without kmemleak, or kmemleak=off");
	if (module_loaded())
		SYS(module_unload());
	for (int i = 0; i < 2; i++) {
		SYS(write_file(KMEMLEAK, "scan"));
		sleep(6);
	}
	SYS(fd = open(KMEMLEAK, O_RDONLY | O_CLOEXEC));
	while ((n = read(fd, report + len, sizeof(report) - 1 - len)) > 0)
		len += n;
	close(fd);
	report[len] = 0;
	for (char *l = strtok(report, "\n"); l; l = strtok(NULL, "\n")) {
		if (strstr(l, "unreferenced object"))
			leaks++;
		if (strstr(l, "peercgroup") || strstr(l, "pcg_"))
			ours++;
		printf("# kmemleak: %s\n", l);
	}
	printf("# kmemleak: %d suspected leaks, %d backtrace lines in the module\n", leaks, ours);
	if (!module_loaded())
		module_load();
	CHECK_INT(0, leaks);
}

int main(int argc, char **argv)
{
	guest_begin("kmemleak", argc, argv);
	RUN(t_kmemleak);
	return guest_end();
}
