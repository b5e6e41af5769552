// SPDX-License-Identifier: GPL-2.0
/*
 * Run last on the debug kernel, booted with kmemleak=on (make check-debug):
 * - unload the module (its memory must all have been freed), ask kmemleak
 *   to scan twice with a pause (a young object is not reported on the
 *   first scan), and report every suspected leak as a failure, with its
 *   backtrace;
 * - then, last of all, as it leaves the module in memory for good: an
 *   unload whose hooks ftrace refuses to take back.
 * Usage: kmemleak_suite [TEST]
 */
#include "guest.h"

#include <sys/mount.h>
#include <sys/prctl.h>

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

#define FAIL_UNHOOK "/sys/kernel/debug/peercgroup_fail_unhook"

/*
 * A child of no test process: delete_module() of the module, its stdio on
 * /dev/null (the suite's output pipe must reach its end), in a session of
 * its own (it never returns, and the suite's process group must not
 * outlive the suite).  Its pid, or -1.
 */
static pid_t rmmod_detached(void)
{
	pid_t pid = -1, mid;
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -1;
	/* orphaned, it goes to init rather than to us, which would wait for it */
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	mid = fork();
	if (mid == 0) {
		pid_t me;
		int null;

		if (fork() != 0)
			_exit(0);
		setsid();
		me = getpid();
		null = open("/dev/null", O_RDWR);
		if (write(p[1], &me, sizeof(me)) != sizeof(me) || null < 0)
			_exit(1);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		_exit(syscall(SYS_delete_module, "peercgroup", O_NONBLOCK) ? 2 : 0);
	}
	close(p[1]);
	if (mid > 0 && (waitpid(mid, NULL, 0) != mid || read(p[0], &pid, sizeof(pid)) != sizeof(pid)))
		pid = -1;
	close(p[0]);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return pid;
}

/* Entries in the module's cache now (slab_nomerge: its own), or -1. */
static long entries_in_use(void)
{
	return read_long("/sys/kernel/slab/pcg_entry/objects");
}

/*
 * Once a bug has made ftrace disable itself, it refuses to take a hook
 * back, and the patched calls still call it.  Unloading must then never
 * return to the loader, which would free the code and tables they use:
 * rmmod waits, idle, the module stays "going", and AF_UNIX traffic through
 * the hooks left behind runs on memory still there (KASAN would report a
 * use after free, the judge any oops).  The refusal is fault injection's,
 * of the first two hooks unloading takes back (connect and socketpair,
 * which make entries); the listen hook is then taken back, and the
 * destructor must stay, to take away the entries the others still make:
 * after as many connections and socketpairs again, the cache holds no
 * more entries than before.
 */
static void t_unhook_refused_stays_resident(void)
{
	char state[32] = "", st = 0;
	long before, after;
	pid_t rmmod;
	int i;

	if (!module_loaded())
		SYS(module_load());
	CHECK(access(FAIL_UNHOOK, F_OK) == 0,
	      "no " FAIL_UNHOOK ": not the debug kernel's build (PCG_FAULT_INJECT=y)");
	SYS(fault_arm(FAIL_UNHOOK, "2"));
	SYS(rmmod = rmmod_detached());
	for (i = 0; i < 3000 && (st = proc_state(rmmod)) != 'I'; i++)
		usleep(10000);
	CHECK(st == 'I', "rmmod is '%c', not waiting idle: the loader may free the module",
	      st ? st : '-');
	read_text("/sys/module/peercgroup/initstate", state, sizeof(state));
	CHECK(!strncmp(state, "going", 5), "initstate \"%s\"", state);
	before = entries_in_use();
	CHECK(before >= 0, "no /sys/kernel/slab/pcg_entry: not booted with slab_nomerge?");
	for (i = 0; i < 1000; i++) {
		int sv[2], l, c, a;

		SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
		close(sv[0]);
		close(sv[1]);
		SYS(l = listen_on("pcg-resident", SOCK_STREAM));
		SYS(c = connect_to("pcg-resident", SOCK_STREAM));
		SYS(a = accept4(l, NULL, NULL, SOCK_CLOEXEC));
		close(a);
		close(c);
		close(l);
	}
	/*
	 * Sockets, and so entries, are freed after RCU grace periods.  SLUB
	 * counts the free objects of its per-CPU slabs as in use: a few slabs
	 * of slack, far below the 1000 either kind of entry left would add.
	 */
	for (i = 0; i < 100 && (after = entries_in_use()) >= before + 500; i++)
		usleep(20000);
	printf("# kmemleak: entries in the cache: %ld before 1000 connections and socketpairs, %ld after\n",
	       before, after);
	CHECK(after < before + 500, "%ld entries before, %ld after: the destructor is gone",
	      before, after);
	CHECK(proc_state(rmmod) == 'I', "rmmod returned");
}

int main(int argc, char **argv)
{
	guest_begin("kmemleak", argc, argv);
	RUN(t_kmemleak);
	RUN(t_unhook_refused_stays_resident);
	return guest_end();
}
