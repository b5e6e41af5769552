/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpeercgroup against the REAL module, inside the test guest (root,
 * cgroup2 at /sys/fs/cgroup, module loaded).  Static binary.
 *
 * Output protocol: one line per test, "ok - lib/<name>" or
 * "not ok - lib/<name>: expected X, got Y".  Exit 0 when the suite ran to
 * the end, whatever the results; non-zero only if setup failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"

#define CGROOT "/sys/fs/cgroup"
#define CG_CLIENT "peercgroup-lib-client"
#define CG_SERVER "peercgroup-lib-server"

static int failures;

static void ok(const char *name)
{
	printf("ok - lib/%s\n", name);
	fflush(stdout);
}

static void not_ok(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void not_ok(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("not ok - lib/%s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures++;
}

#define CHECK_INT(name, want, got) do { \
	long long w_ = (want), g_ = (got); \
	if (w_ == g_) ok(name); \
	else not_ok(name, "expected %lld, got %lld", w_, g_); } while (0)

#define CHECK_STR(name, want, got) do { \
	const char *w_ = (want), *g_ = (got); \
	if (g_ && !strcmp(w_, g_)) ok(name); \
	else not_ok(name, "expected %s, got %s", w_, g_ ? g_ : "(null)"); } while (0)

static void die(const char *what)
{
	printf("Bail out! lib_suite setup: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int write_file(const char *fn, const char *s)
{
	int fd = open(fn, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int join_cgroup(const char *name)
{
	char fn[256], pid[32];

	snprintf(fn, sizeof(fn), CGROOT "/%s/cgroup.procs", name);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	return write_file(fn, pid);
}

static uint64_t cgroup_ino(const char *name)
{
	char fn[256];
	struct stat st;

	snprintf(fn, sizeof(fn), CGROOT "/%s", name);
	return stat(fn, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static socklen_t addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: nothing to clean up in the guest's filesystem */
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "%s", name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
}

/*
 * Client child: join CG_CLIENT, connect, check its view of the listener,
 * report through @res ("<errno> <path>"), then wait for the parent's byte
 * so that it is alive while the parent queries it.
 */
static void client(int type, const char *sockname, int res)
{
	struct sockaddr_un sa;
	socklen_t len = addr(&sa, sockname);
	char *path = NULL, buf[4200], c;
	int fd, r;

	if (join_cgroup(CG_CLIENT) < 0)
		_exit(3);
	fd = socket(AF_UNIX, type, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0)
		_exit(4);
	r = peercgroup_get_path(fd, &path);
	snprintf(buf, sizeof(buf), "%d %s", r, path ? path : "");
	free(path);
	if (write(res, buf, strlen(buf)) < 0)
		_exit(5);
	close(res);
	(void)!read(fd, &c, 1);		/* parent closes when done */
	_exit(0);
}

static void test_pair(int type, const char *tname)
{
	char name[64], sockname[64], buf[4200];
	struct sockaddr_un sa;
	struct peercgroup_info info;
	uint64_t id = 0, want_id = cgroup_ino(CG_CLIENT);
	int lfd, cfd, p[2], status, r;
	ssize_t n;
	pid_t pid;

	snprintf(sockname, sizeof(sockname), "peercgroup-lib-%s-%d", tname, (int)getpid());
	lfd = socket(AF_UNIX, type, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, addr(&sa, sockname)) < 0 ||
	    listen(lfd, 4) < 0 || pipe(p) < 0)
		die("listener");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p[0]);
		client(type, sockname, p[1]);
	}
	close(p[1]);
	cfd = accept(lfd, NULL, NULL);
	if (cfd < 0)
		die("accept");

	r = peercgroup_get(cfd, 0, &info);
	snprintf(name, sizeof(name), "%s-get", tname);
	CHECK_INT(name, 0, r);
	snprintf(name, sizeof(name), "%s-path", tname);
	CHECK_STR(name, "/" CG_CLIENT, info.path);
	snprintf(name, sizeof(name), "%s-path_len", tname);
	CHECK_INT(name, strlen("/" CG_CLIENT), info.path_len);
	snprintf(name, sizeof(name), "%s-id-is-inode", tname);
	CHECK_INT(name, want_id, info.cgroup_id);
	snprintf(name, sizeof(name), "%s-pid", tname);
	CHECK_INT(name, pid, info.pid);
	snprintf(name, sizeof(name), "%s-flags", tname);
	CHECK_INT(name, 0, info.flags);
	peercgroup_info_free(&info);

	r = peercgroup_get_id(cfd, &id);
	snprintf(name, sizeof(name), "%s-get_id", tname);
	if (r == 0)
		CHECK_INT(name, want_id, id);
	else
		not_ok(name, "expected 0, got %d (%s)", r, peercgroup_strerror(r));

	/* the client's view: the listener, in CG_SERVER since before listen() */
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(name, sizeof(name), "%s-client-sees-listener", tname);
	CHECK_STR(name, "0 /" CG_SERVER, buf);

	/* live answer: same cgroup now, and marked live */
	r = peercgroup_get(cfd, PEERCGROUP_GET_LIVE, &info);
	snprintf(name, sizeof(name), "%s-live", tname);
	if (r == 0 && (info.flags & PEERCGROUP_INFO_LIVE))
		CHECK_STR(name, "/" CG_CLIENT, info.path);
	else
		not_ok(name, "expected 0 and LIVE, got %d flags %#x", r, info.flags);
	peercgroup_info_free(&info);

	close(cfd);
	close(p[0]);
	close(lfd);
	waitpid(pid, &status, 0);
	snprintf(name, sizeof(name), "%s-client-exit", tname);
	CHECK_INT(name, 0, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* Connection made, then the client moves cgroup and exits: the record
 * stays the connect-time one, and the flags say what changed. */
static void test_connect_time(void)
{
	struct peercgroup_info info;
	int sv[2], status, r;
	pid_t pid;
	char c;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	pid = fork();
	if (pid == 0) {		/* socketpair() was made in CG_SERVER */
		close(sv[0]);
		(void)!read(sv[1], &c, 1);
		_exit(0);
	}
	close(sv[1]);
	r = peercgroup_get(sv[0], 0, &info);
	CHECK_STR("socketpair-path", "/" CG_SERVER, r == 0 ? info.path : peercgroup_strerror(r));
	CHECK_INT("socketpair-pid-is-creator", getpid(), info.pid);
	peercgroup_info_free(&info);
	(void)!write(sv[0], "x", 1);
	waitpid(pid, &status, 0);
	close(sv[0]);
}

static void test_errors(void)
{
	struct peercgroup_info info;
	int sv[2], fd;
	sa_family_t fam = AF_UNIX;

	CHECK_INT("err-ebadf", -EBADF, peercgroup_get(1000, 0, &info));
	fd = open("/", O_RDONLY | O_CLOEXEC);
	CHECK_INT("err-enotsock", -ENOTSOCK, peercgroup_get(fd, 0, &info));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK_INT("err-eafnosupport", -EAFNOSUPPORT, peercgroup_get(fd, 0, &info));
	close(fd);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0) {
		CHECK_INT("err-eopnotsupp-dgram", -EOPNOTSUPP, peercgroup_get(sv[0], 0, &info));
		close(sv[0]);
		close(sv[1]);
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_INT("err-enotconn-unconnected", -ENOTCONN, peercgroup_get(fd, 0, &info));
	if (bind(fd, (struct sockaddr *)&fam, sizeof(fam)) == 0 && listen(fd, 1) == 0)
		CHECK_INT("err-enotconn-listening", -ENOTCONN, peercgroup_get(fd, 0, &info));
	close(fd);
	CHECK_INT("err-einval-flags", -EINVAL, peercgroup_get(0, 1U << 20, &info));
}

static void test_module_info(void)
{
	struct peercgroup_module m;
	int r = peercgroup_module_info(&m);

	CHECK_INT("version-call", 0, r);
	CHECK_INT("version-abi", PEERCGROUP_ABI_VERSION, m.abi_version);
	CHECK_INT("version-query-size", sizeof(struct peercgroup_query), m.query_size);
	CHECK_INT("version-no-path-flag", PEERCGROUP_QUERY_NO_PATH,
		  m.query_flags & PEERCGROUP_QUERY_NO_PATH);
	CHECK_INT("version-stream-feature", 1, !!(m.features & PEERCGROUP_FEATURE_STREAM));
	if (m.version[0])
		ok("version-string");
	else
		not_ok("version-string", "expected non-empty, got \"\"");
}

/* The module is loaded here: point the library at a missing node. */
static void test_module_absent(void)
{
	struct peercgroup_info info;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	pcg_test_set_device("/dev/peercgroup-absent");
	CHECK_INT("absent-enopkg", -ENOPKG, peercgroup_get(sv[0], 0, &info));
	pcg_test_set_device(NULL);
	CHECK_INT("absent-recovers", 0, peercgroup_get(sv[0], 0, &info));
	peercgroup_info_free(&info);
	close(sv[0]);
	close(sv[1]);
}

/* After fork() the child must reopen, not reuse, the descriptor. */
static void test_fork(void)
{
	struct peercgroup_info info;
	int sv[2], status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	peercgroup_get(sv[0], 0, &info);	/* parent has opened the device */
	peercgroup_info_free(&info);
	pid = fork();
	if (pid == 0) {
		int fd;

		/* a daemon closing every fd: the library must not be fooled */
		for (fd = 3; fd < 64; fd++)
			if (fd != sv[0])
				close(fd);
		fd = open("/dev/null", O_RDONLY);	/* takes a freed number */
		_exit(peercgroup_get(sv[0], 0, &info) == 0 ? 0 : 1);
		(void)fd;
	}
	waitpid(pid, &status, 0);
	CHECK_INT("fork-child-reopens", 0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	char fn[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	/* setup: two fresh cgroups; the suite itself lives in CG_SERVER */
	snprintf(fn, sizeof(fn), CGROOT "/%s", CG_CLIENT);
	if (mkdir(fn, 0755) < 0 && errno != EEXIST)
		die("mkdir client cgroup");
	snprintf(fn, sizeof(fn), CGROOT "/%s", CG_SERVER);
	if (mkdir(fn, 0755) < 0 && errno != EEXIST)
		die("mkdir server cgroup");
	if (join_cgroup(CG_SERVER) < 0)
		die("join server cgroup");

	test_module_info();
	test_pair(SOCK_STREAM, "stream");
	test_pair(SOCK_SEQPACKET, "seqpacket");
	test_connect_time();
	test_errors();
	test_module_absent();
	test_fork();

	/* leave the cgroups again so they can be removed */
	write_file(CGROOT "/cgroup.procs", "0\n");
	snprintf(fn, sizeof(fn), CGROOT "/%s", CG_CLIENT);
	rmdir(fn);
	snprintf(fn, sizeof(fn), CGROOT "/%s", CG_SERVER);
	rmdir(fn);
	fprintf(stderr, "lib_suite: %d failure(s)\n", failures);
	return 0;
}
