/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the guest suites: a tiny TAP runner, cgroup and socket helpers,
 * and client processes that connect from a cgroup of their choosing.
 *
 * Output protocol, read by the guest init: one line per test on stdout,
 * "ok - SUITE/NAME" or "not ok - SUITE/NAME: what was expected, what came".
 * A suite exits 0 when it ran to its end, whatever the verdicts.
 */
#ifndef PEERCGROUP_GUEST_H
#define PEERCGROUP_GUEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#define MODULE_PATH_DEFAULT "/lib/modules/peercgroup.ko"

/* ---- the runner ---- */

static const char *t_suite;
static const char *t_name;
static bool t_failed;
static int t_pass, t_fail;
/* Runs after each test, pass or fail: restores what a test may have left. */
static void (*t_after)(void);

static void t_failf(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void t_failf(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (t_failed)
		return;
	t_failed = true;
	printf("not ok - %s/%s: %s:%d: ", t_suite, t_name, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#define FAIL(...) do { t_failf(__FILE__, __LINE__, __VA_ARGS__); return; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)
#define CHECK_INT(expected, got) do {					\
	long long e_ = (expected), g_ = (got);				\
	if (e_ != g_)							\
		FAIL("expected %s == %lld, got %lld (errno %d %s)",	\
		     #got, e_, g_, errno, strerror(errno));		\
} while (0)
#define CHECK_STR(expected, got) do {					\
	const char *e_ = (expected), *g_ = (got);			\
	if (strcmp(e_, g_))						\
		FAIL("expected %s == \"%s\", got \"%s\"", #got, e_, g_);\
} while (0)
/* For setup steps: a failure there is the test's failure too. */
#define SYS(call) do {							\
	if ((long)(call) < 0)						\
		FAIL("%s failed: %s", #call, strerror(errno));		\
} while (0)

static void t_run(const char *name, void (*fn)(void))
{
	t_name = name;
	t_failed = false;
	fflush(stdout);
	fn();
	if (t_after)
		t_after();
	if (!t_failed) {
		printf("ok - %s/%s\n", t_suite, name);
		t_pass++;
	} else {
		t_fail++;
	}
	fflush(stdout);
}

#define RUN(fn) do {							\
	if (!t_only || !strcmp(t_only, #fn))				\
		t_run(#fn, fn);						\
} while (0)
static const char *t_only;

/* ---- small file helpers ---- */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Reads @path into @buf, NUL-terminated; returns the length or -1. */
static ssize_t read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

static long read_long(const char *path)
{
	char buf[64];

	return read_text(path, buf, sizeof(buf)) > 0 ? strtol(buf, NULL, 10) : -1;
}

/*
 * A size knob of a suite: environment variable @env, else the word
 * @key=N on the kernel command line (run-guest.sh --append), else @def.
 */
static __attribute__((unused)) long long
knob(const char *key, const char *env, long long def)
{
	char buf[4096], *w, *save;
	const char *e = getenv(env);
	size_t len = strlen(key);

	if (e && *e)
		return strtoll(e, NULL, 0);
	if (read_text("/proc/cmdline", buf, sizeof(buf)) <= 0)
		return def;
	for (w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (!strncmp(w, key, len) && w[len] == '=')
			return strtoll(w + len + 1, NULL, 0);
	return def;
}

/* ---- cgroups ---- */

static int cg_create(const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), CGROOT "/%s", name);
	return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

static int cg_remove(const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), CGROOT "/%s", name);
	return rmdir(p);
}

/* Move process @pid (0: the caller) into cgroup @name ("" is the root). */
static int cg_move(const char *name, pid_t pid)
{
	char p[256], s[32];

	snprintf(p, sizeof(p), CGROOT "/%s%scgroup.procs", name, *name ? "/" : "");
	snprintf(s, sizeof(s), "%d", (int)pid);
	return write_file(p, s);
}

static uint64_t cg_id(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), CGROOT "/%s", name);
	return stat(p, &st) ? 0 : (uint64_t)st.st_ino;
}

/* The 0:: line of /proc/PID/cgroup, as seen from the caller's namespace. */
static int proc_cgroup(pid_t pid, char *out, size_t size)
{
	char p[64], buf[4096];

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	if (read_text(p, buf, sizeof(buf)) <= 0)
		return -1;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		if (!strncmp(l, "0::", 3)) {
			snprintf(out, size, "%s", l + 3);
			return 0;
		}
	}
	return -1;
}

/* ---- the device ---- */

static int dev_open(void)
{
	return open(PEERCGROUP_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

/* One query; returns 0 or -errno.  @path may be NULL (NO_PATH). */
static int query(int sockfd, struct peercgroup_query *q, char *path, size_t size)
{
	int dev = dev_open();
	int ret;

	if (dev < 0)
		return -errno;
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->sockfd = sockfd;
	q->flags = path ? 0 : PEERCGROUP_QUERY_NO_PATH;
	q->path = (uintptr_t)path;
	q->path_size = path ? size : 0;
	ret = ioctl(dev, PEERCGROUP_IOC_QUERY, q) ? -errno : 0;
	close(dev);
	return ret;
}

/* ---- sockets (abstract addresses: nothing to clean up) ---- */

static socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "%s", name);
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

static int listen_on(const char *name, int type)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 4096)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_to(const char *name, int type)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A client process: enters cgroup @cg, connects to @name and then obeys
 * one-byte commands on its control socket: 'm' + cgroup name + '\n'
 * moves it, 'q' makes it query its own socket and send back the result,
 * 'x' makes it exit.  It answers each command with one status int.
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

static void client_main(int ctl, const char *cg, const char *name, int type)
{
	struct client_answer a;
	int fd, status;
	char cmd, arg[128];

	status = cg_move(cg, 0) ? -errno : 0;
	fd = status ? -1 : connect_to(name, type);
	if (!status && fd < 0)
		status = -errno;
	if (write(ctl, &status, sizeof(status)) != sizeof(status) || status)
		_exit(1);
	while (read(ctl, &cmd, 1) == 1) {
		switch (cmd) {
		case 'm': {
			size_t i = 0;

			while (i < sizeof(arg) - 1 && read(ctl, &arg[i], 1) == 1 &&
			       arg[i] != '\n')
				i++;
			arg[i] = 0;
			status = cg_move(arg, 0) ? -errno : 0;
			if (write(ctl, &status, sizeof(status)) < 0)
				_exit(1);
			break;
		}
		case 'q':
			memset(&a, 0, sizeof(a));
			a.err = query(fd, &a.q, a.path, sizeof(a.path));
			if (write(ctl, &a, sizeof(a)) < 0)
				_exit(1);
			break;
		default:
			_exit(0);
		}
	}
	_exit(0);
}

static int client_start(struct client *c, const char *cg, const char *name, int type)
{
	int sv[2], status = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(sv[0]);
		client_main(sv[1], cg, name, type);
	}
	close(sv[1]);
	c->ctl = sv[0];
	if (read(c->ctl, &status, sizeof(status)) != sizeof(status) || status) {
		errno = status < 0 ? -status : EIO;
		return -1;
	}
	return 0;
}

static int client_move(struct client *c, const char *cg)
{
	int status = -1;

	if (write(c->ctl, "m", 1) != 1 || write(c->ctl, cg, strlen(cg)) < 0 ||
	    write(c->ctl, "\n", 1) != 1 ||
	    read(c->ctl, &status, sizeof(status)) != sizeof(status))
		return -1;
	return status;
}

static int client_query(struct client *c, struct client_answer *a)
{
	if (write(c->ctl, "q", 1) != 1 || read(c->ctl, a, sizeof(*a)) != sizeof(*a))
		return -1;
	return 0;
}

/* Ends the client and reaps it. */
static void client_stop(struct client *c)
{
	if (c->pid <= 0)
		return;
	if (write(c->ctl, "x", 1) < 0)
		kill(c->pid, SIGKILL);
	close(c->ctl);
	waitpid(c->pid, NULL, 0);
	c->pid = 0;
}

/* ---- the module ---- */

static const char *module_path(void)
{
	const char *p = getenv("PEERCGROUP_KO");

	return p ? p : MODULE_PATH_DEFAULT;
}

static int module_load(void)
{
	int fd = open(module_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

/* Retries while the device is held open by a lingering process. */
static int module_unload(void)
{
	for (int i = 0; i < 1000; i++) {
		if (!syscall(SYS_delete_module, "peercgroup", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			return -1;
		usleep(1000);
	}
	return -1;
}

static bool module_loaded(void)
{
	return access("/sys/module/peercgroup/initstate", F_OK) == 0;
}

static long counter(const char *name)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/module/peercgroup/counters/%s", name);
	return read_long(p);
}

#endif /* PEERCGROUP_GUEST_H */
