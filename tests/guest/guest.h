/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest suites' runner and helpers (guest.c): every program under
 * tests/guest/ and the benchmark link it.
 *
 * A test is one promise: a function that asserts with CHECK*, FAIL and
 * SYS, run by RUN().  Output, read by the guest init:
 *   "ok - SUITE/NAME"                       the promise held
 *   "not ok - SUITE/NAME: file:line: why"   it did not (first failure only)
 *   "# SKIP SUITE/NAME: why"                not run here (not a pass)
 *   "# SUITE: N tests passed, N failed, N assertions"   at the end
 *
 * Cleanup is the runner's job, pass or fail, like a shell's
 * "trap cleanup EXIT": after each test it moves the suite back to the
 * cgroup it started in, kills and reaps every process the test left
 * (the suite is a child subreaper, so grandchildren too), runs what the
 * test deferred (last first), closes the fds it left open (but the
 * library's device fd) and removes the cgroups it made with cg_create().
 */
#ifndef PEERCGROUP_GUEST_H
#define PEERCGROUP_GUEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/peercgroup.h>

#define CGROOT "/sys/fs/cgroup"

/* ---- the runner ---- */

extern const char *t_suite;	/* "module": lines read "ok - module/NAME" */
extern const char *t_only;	/* run only this test: "NAME" or "SUITE/NAME" */
extern const char *t_name;	/* the running test, NULL between tests */
extern int t_pass, t_fail;	/* tests (promises) passed and failed */
extern long t_checks;		/* assertions evaluated */
/* Runs after each test's cleanup, pass or fail. */
extern void (*t_after)(void);

/* Starts a suite: names it, reads ONLY from argv[1]. */
void guest_begin(const char *suite, int argc, char **argv);
/* Ends it: prints the counts; the suite's exit status (0: it ran). */
int guest_end(void);
/* Loads the module if it is not loaded; reports a setup failure if it cannot. */
int module_require(void);

void t_run(const char *name, void (*fn)(void));
#define RUN(fn) t_run(#fn, fn)
bool t_selected(const char *name);

void t_failf(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void t_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Each failing assertion ends the test function it is written in. */
#define FAIL(...) do { t_failf(__FILE__, __LINE__, __VA_ARGS__); return; } while (0)
#define CHECK(cond, ...) do {						\
	t_checks++;							\
	if (!(cond))							\
		FAIL(__VA_ARGS__);					\
} while (0)
#define CHECK_INT(expected, got) do {					\
	long long e_ = (expected), g_ = (got);				\
	t_checks++;							\
	if (e_ != g_)							\
		FAIL("expected %s == %lld, got %lld (errno %d %s)",	\
		     #got, e_, g_, errno, strerror(errno));		\
} while (0)
#define CHECK_STR(expected, got) do {					\
	const char *e_ = (expected), *g_ = (got);			\
	t_checks++;							\
	if (!g_ || strcmp(e_, g_))					\
		FAIL("expected %s == \"%s\", got \"%s\"", #got, e_,	\
		     g_ ? g_ : "(null)");				\
} while (0)
/* For setup steps: a failure there is the test's failure too. */
#define SYS(call) do {							\
	if ((long)(call) < 0)						\
		FAIL("%s failed: %s", #call, strerror(errno));		\
} while (0)
/* The test cannot run here: says why, counts neither pass nor fail. */
#define SKIP(...) do { t_skip(__VA_ARGS__); return; } while (0)

/*
 * Runs @fn(@arg) in a child process, for what must happen elsewhere (as
 * another user, in a new namespace).  A failed CHECK there fails the
 * running test with the child's message; so does any exit status but 0.
 */
void t_in_child(void (*fn)(void *arg), void *arg);

/* A thread (or a process's last act) that only waits to be killed. */
void *sleep_forever(void *unused);

/* ---- cleanups the runner cannot find by itself ---- */

void defer_kill(pid_t pid);			/* SIGKILL and reap, if still our child */
void defer_close(int fd);
void defer_cgroup(const char *name);		/* leave, kill what is in it, remove */
void defer_write(const char *path, const char *value);	/* restore a knob */
void defer_call(void (*fn)(void));

/* ---- files ---- */

int write_file(const char *path, const char *s);
/*
 * Arms the debugfs fault attribute directory @attr (the module's, in the
 * debug kernel's build) to fire on each of its next @times calls, quietly.
 * 0 or -1.
 */
int fault_arm(const char *attr, const char *times);
/* Reads @path into @buf, NUL-terminated; returns the length or -1. */
ssize_t read_text(const char *path, char *buf, size_t size);
long read_long(const char *path);
/* The state letter of /proc/PID/stat: 'Z' for a zombie; 0 if unreadable. */
char proc_state(pid_t pid);
/*
 * unshare() a mount namespace, and @more (CLONE_NEW* flags), with every
 * mount in it private: what a test mounts there stays there.  0 or -1.
 */
int enter_mount_namespace(int more);
/*
 * unshare() a cgroup namespace rooted at our cgroup, and @more (CLONE_NEW*
 * flags), in a mount namespace of our own where CGROOT is a cgroup2 mount
 * made there: the tree as a daemon in that namespace sees it.  0 or -1.
 */
int enter_cgroup_namespace(int more);
/*
 * In a t_in_child() child (a failed check ends it): syscall @nr fails
 * with @err from now on, whatever its arguments: ENOSYS as in a sandbox
 * whose filter predates it, EPERM as systemd's SystemCallErrorNumber=.
 */
void refuse_syscall(int nr, int err);
/* Can this kernel filter syscalls (CONFIG_SECCOMP_FILTER)? */
bool have_seccomp_filters(void);
/*
 * refuse_syscall() where this kernel can filter syscalls: true; else
 * false, and a note that @name refused was not tried (the debug kernel
 * has no seccomp filters).
 */
bool refuse_syscall_if_filtered(int nr, int err, const char *name);
/*
 * A size knob: environment variable @env, else the word @key=N on the
 * kernel command line (run-guest.sh --append), else @def.
 */
long long knob(const char *key, const char *env, long long def);
/*
 * Is the word @key or @key=VALUE on the kernel command line?  VALUE ("" for
 * a bare word) goes into @buf unless @buf is NULL.
 */
bool cmdline_value(const char *key, char *buf, size_t size);

/* ---- cgroups (names are relative to CGROOT; "" is the root) ---- */

/* Creates @name (fine if it exists); inside a test, removed after it. */
int cg_create(const char *name);
int cg_remove(const char *name);
/* CGROOT/@name[/@file] into @p, or -1 (ENAMETOOLONG) rather than a cut path. */
int cg_file(char *p, size_t size, const char *name, const char *file);
/* Moves process @pid (0: the caller) into cgroup @name. */
int cg_move(const char *name, pid_t pid);
/* The cgroup's id: the inode number of its directory. */
uint64_t cg_id(const char *name);
/* The 0:: line of /proc/PID/cgroup (0: the caller), as the caller's namespace sees it. */
int proc_cgroup(pid_t pid, char *out, size_t size);

/* ---- the device ---- */

int dev_open(void);
/* One query; returns 0 or -errno.  @path may be NULL (NO_PATH). */
int query(int sockfd, struct peercgroup_query *q, char *path, size_t size);
/* The same through the device fd @dev, wherever it was opened. */
int query_on(int dev, int sockfd, struct peercgroup_query *q, char *path, size_t size);

/* ---- sockets (abstract addresses: nothing to clean up) ---- */

socklen_t abstract_addr(struct sockaddr_un *sa, const char *name);
int listen_on(const char *name, int type);
int connect_to(const char *name, int type);
/* One fd over SCM_RIGHTS on the unix socket @via; recv_fd's arrives O_CLOEXEC. */
int send_fd(int via, int fd);
int recv_fd(int via);

/*
 * A client process: enters cgroup @cg, connects to @name and then obeys
 * commands on its control socket: move to another cgroup, query its own
 * socket, exit.  Inside a test the runner stops it if the test does not.
 */
struct client {
	pid_t pid;
	int ctl;
};

struct client_answer {
	int err;
	struct peercgroup_query q;
	char path[256];
};

int client_start(struct client *c, const char *cg, const char *name, int type);
int client_move(struct client *c, const char *cg);
int client_query(struct client *c, struct client_answer *a);
/* Ends the client and reaps it. */
void client_stop(struct client *c);

/* ---- the module ---- */

/* Where the guest keeps the .ko: $PEERCGROUP_KO, else the kernel's module tree. */
const char *module_path(void);
int module_load(void);
/* Retries while the device is held open by a lingering process. */
int module_unload(void);
bool module_loaded(void);
long counter(const char *name);

#endif /* PEERCGROUP_GUEST_H */
