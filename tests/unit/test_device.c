/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device side of libpeercgroup against a FAKED module: the device path
 * is pointed at /dev/null (internal test hook) and ioctl() is replaced at
 * link time (-Wl,--wrap=ioctl), so each kernel errno and answer can be
 * played and the library's mapping checked exactly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sched.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>
#include <cmocka.h>

#include "peercgroup.h"
#include "internal.h"

/* ---- the fake module ---- */

static struct {
	int version_errno;		/* VERSION fails with this */
	unsigned int abi;		/* VERSION answers this ABI */
	unsigned int query_flags;	/* VERSION: accepted query flags */
	int query_errno;		/* QUERY fails with this */
	const char *path;		/* QUERY answers this path */
	int no_nul;			/* ... without its NUL (buggy module) */
	uint64_t id;
	int32_t pid;
	uint32_t result_flags;
	void (*on_closed_fd)(void);	/* runs when a query meets a closed fd */
	void (*on_fstat_fail)(void);	/* runs when fstat() fails the Nth time */
	int fstat_fails_before;		/* N - 1 */
	struct peercgroup_query last;	/* what the library sent last */
	int wrong_file;			/* an ioctl went to something else */
	int version_calls, query_calls;
	int fstatat_calls;		/* a cgroup's owner looked at */
} fake;

int __real_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	__atomic_add_fetch(&fake.fstatat_calls, 1, __ATOMIC_SEQ_CST);
	return __real_fstatat(dirfd, path, st, flags);
}

int __real_fstat(int fd, struct stat *st);
int __wrap_fstat(int fd, struct stat *st);
int __wrap_fstat(int fd, struct stat *st)
{
	int r = __real_fstat(fd, st), e = errno;

	if (r < 0 && fake.on_fstat_fail && fake.fstat_fails_before-- == 0) {
		void (*fn)(void) = fake.on_fstat_fail;

		fake.on_fstat_fail = NULL;
		fn();		/* what another thread did meanwhile */
		errno = e;
	}
	return r;
}

int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	struct stat st;

	/* Only ever the device the test named (a character device). */
	if (fstat(fd, &st) < 0) {
		void (*fn)(void) = fake.on_closed_fd;

		fake.on_closed_fd = NULL;
		if (fn)
			fn();		/* what another thread did meanwhile */
		errno = EBADF;		/* as the kernel: no such descriptor */
		return -1;
	}
	if (!S_ISCHR(st.st_mode)) {
		__atomic_add_fetch(&fake.wrong_file, 1, __ATOMIC_SEQ_CST);
		errno = ENOTTY;		/* as any file but a device would */
		return -1;
	}
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);

	if (req == PEERCGROUP_IOC_VERSION) {
		struct peercgroup_version *v = arg;

		__atomic_add_fetch(&fake.version_calls, 1, __ATOMIC_SEQ_CST);
		if (fake.version_errno) {
			errno = fake.version_errno;
			return -1;
		}
		assert_true(v->size >= PEERCGROUP_VERSION_SIZE_VER0);
		v->abi_version = fake.abi;
		v->features = PEERCGROUP_FEATURE_STREAM | PEERCGROUP_FEATURE_PATH;
		v->query_flags = fake.query_flags;
		v->query_size = sizeof(struct peercgroup_query);
		strcpy(v->module_version, "9.8.7-fake");
		return 0;
	}
	if (req == PEERCGROUP_IOC_QUERY) {
		struct peercgroup_query *q = arg;
		size_t len = fake.path ? strlen(fake.path) : 0;

		__atomic_add_fetch(&fake.query_calls, 1, __ATOMIC_SEQ_CST);
		fake.last = *q;
		if (fake.query_errno) {
			errno = fake.query_errno;
			return -1;
		}
		q->cgroup_id = fake.id;
		q->pid = fake.pid;
		q->result_flags = fake.result_flags;
		q->path_len = (uint32_t)len;
		if (q->flags & PEERCGROUP_QUERY_NO_PATH)
			return 0;
		if (q->path_size < len + 1) {
			errno = ERANGE;
			return -1;
		}
		memcpy((char *)(uintptr_t)q->path, fake.path, len + 1);
		if (fake.no_nul)
			((char *)(uintptr_t)q->path)[len] = 'X';
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

static int setup(void **state)
{
	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.abi = PEERCGROUP_ABI_VERSION;
	fake.query_flags = PEERCGROUP_QUERY_FLAGS_ALL;
	fake.path = "/system.slice/sshd.service";
	fake.id = 4242;
	fake.pid = 77;
	pcg_test_set_device("/dev/null");	/* a char device that opens */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pcg_test_set_device(NULL);
	return 0;
}

/* ---- tests ---- */

static void test_success(void **state)
{
	struct peercgroup_info info;

	(void)state;
	fake.result_flags = PEERCGROUP_RESULT_PEER_EXITED;
	assert_int_equal(peercgroup_get(5, 0, &info), 0);
	assert_string_equal(info.path, "/system.slice/sshd.service");
	assert_int_equal(info.path_len, strlen("/system.slice/sshd.service"));
	assert_int_equal(info.cgroup_id, 4242);
	assert_int_equal(info.pid, 77);
	assert_int_equal(info.flags, PEERCGROUP_INFO_PEER_EXITED);
	/* what went to the kernel */
	assert_int_equal(fake.last.size, sizeof(struct peercgroup_query));
	assert_int_equal(fake.last.flags, 0);
	assert_int_equal(fake.last.sockfd, 5);
	assert_int_equal(fake.last.reserved, 0);
	assert_true(fake.last.path != 0 && fake.last.path_size > 0);
	peercgroup_info_free(&info);
	assert_null(info.path);
	peercgroup_info_free(&info);	/* twice is fine */
	peercgroup_info_free(NULL);
}

static void test_removed_flag(void **state)
{
	struct peercgroup_info info;

	(void)state;
	fake.result_flags = PEERCGROUP_RESULT_CGROUP_REMOVED | (1U << 30);
	assert_int_equal(peercgroup_get(5, 0, &info), 0);
	/* unknown future bits are not passed on as library flags */
	assert_int_equal(info.flags, PEERCGROUP_INFO_CGROUP_REMOVED);
	peercgroup_info_free(&info);
}

static void test_get_id_no_path(void **state)
{
	uint64_t id = 1;

	(void)state;
	assert_int_equal(peercgroup_get_id(3, &id), 0);
	assert_int_equal(id, 4242);
	assert_int_equal(fake.last.flags, PEERCGROUP_QUERY_NO_PATH);
	assert_int_equal(fake.last.path, 0);
	assert_int_equal(peercgroup_get_id(3, NULL), -EINVAL);
}

static void test_no_path_unsupported(void **state)
{
	uint64_t id = 0;

	(void)state;
	fake.query_flags = 0;	/* a module without NO_PATH: full query */
	pcg_test_set_device("/dev/null");
	assert_int_equal(peercgroup_get_id(3, &id), 0);
	assert_int_equal(id, 4242);
	assert_int_equal(fake.last.flags, 0);
}

static void test_get_path(void **state)
{
	char *p = (char *)1;

	(void)state;
	assert_int_equal(peercgroup_get_path(3, &p), 0);
	assert_string_equal(p, "/system.slice/sshd.service");
	free(p);
	fake.query_errno = ENODATA;
	p = (char *)1;
	assert_int_equal(peercgroup_get_path(3, &p), -ENODATA);
	assert_null(p);
}

/* The caller's buffer: exact length, the bytes around it, and "" on failure. */
static void test_get_path_buf(void **state)
{
	const char *want = "/system.slice/sshd.service";
	size_t len = strlen(want);
	char buf[PATH_MAX];

	(void)state;
	memset(buf, 'y', sizeof(buf));
	assert_int_equal(peercgroup_get_path_buf(3, buf, sizeof(buf)), (int)len);
	assert_string_equal(buf, want);
	assert_int_equal(fake.last.path_size, sizeof(buf));
	assert_int_equal(fake.last.flags, 0);
	assert_int_equal(peercgroup_get_path_buf(3, buf, len + 1), (int)len);
	assert_string_equal(buf, want);
	/* one byte short: ERANGE, "", and nothing written past size */
	memset(buf, 'y', sizeof(buf));
	assert_int_equal(peercgroup_get_path_buf(3, buf, len), -ERANGE);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(buf[1], 'y');
	assert_int_equal(peercgroup_get_path_buf(3, buf, 1), -ERANGE);
	assert_int_equal(buf[0], '\0');
	/* size 0: nothing written at all */
	buf[0] = 'y';
	assert_int_equal(peercgroup_get_path_buf(3, buf, 0), -ERANGE);
	assert_int_equal(buf[0], 'y');
	/* a buffer larger than the ABI's 32 bits is clamped, not wrapped */
	assert_int_equal(peercgroup_get_path_buf(3, buf, (size_t)UINT32_MAX + 2), (int)len);
	assert_int_equal(fake.last.path_size, UINT32_MAX);
	/* bad arguments never reach the module */
	fake.query_calls = 0;
	assert_int_equal(peercgroup_get_path_buf(3, NULL, sizeof(buf)), -EINVAL);
	memset(buf, 'y', sizeof(buf));
	assert_int_equal(peercgroup_get_path_buf(-1, buf, sizeof(buf)), -EBADF);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(fake.query_calls, 0);
	/* errors pass through mapped, the buffer emptied */
	fake.query_errno = ENODATA;
	buf[0] = 'y';
	assert_int_equal(peercgroup_get_path_buf(3, buf, sizeof(buf)), -ENODATA);
	assert_int_equal(buf[0], '\0');
	fake.query_errno = EINVAL;
	assert_int_equal(peercgroup_get_path_buf(3, buf, sizeof(buf)), -EPROTO);
	fake.query_errno = 0;
	/* a module that leaves the string unterminated */
	fake.no_nul = 1;
	assert_int_equal(peercgroup_get_path_buf(3, buf, sizeof(buf)), -EPROTO);
	assert_int_equal(buf[0], '\0');
	fake.no_nul = 0;
	/* no module */
	pcg_test_set_device("/nonexistent/peercgroup");
	buf[0] = 'y';
	assert_int_equal(peercgroup_get_path_buf(3, buf, sizeof(buf)), -ENOPKG);
	assert_int_equal(buf[0], '\0');
}

/* The longest path the ABI allows takes one ioctl, into PATH_MAX. */
static void test_longest_path(void **state)
{
	struct peercgroup_info info;
	char *longp = malloc(PATH_MAX), *big;

	(void)state;
	assert_non_null(longp);
	memset(longp, 'x', PATH_MAX - 1);
	longp[0] = '/';
	longp[PATH_MAX - 1] = '\0';
	fake.path = longp;
	fake.query_calls = 0;
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	assert_int_equal(fake.query_calls, 1);
	assert_int_equal(fake.last.path_size, PATH_MAX);
	assert_int_equal(info.path_len, PATH_MAX - 1);
	assert_string_equal(info.path, longp);
	peercgroup_info_free(&info);
	/* one byte longer breaks the ABI (ENAMETOOLONG): no string */
	longp = realloc(longp, PATH_MAX + 1);
	assert_non_null(longp);
	memset(longp, 'x', PATH_MAX);
	longp[0] = '/';
	longp[PATH_MAX] = '\0';
	fake.path = longp;
	fake.query_calls = 0;
	assert_int_equal(peercgroup_get(3, 0, &info), -EPROTO);
	assert_int_equal(fake.query_calls, 1);
	assert_null(info.path);
	/* even into a caller's buffer that holds it: its length is no int path */
	big = malloc(PATH_MAX + 1);
	assert_non_null(big);
	assert_int_equal(peercgroup_get_path_buf(3, big, PATH_MAX + 1), -EPROTO);
	assert_int_equal(big[0], '\0');
	/* the longest one the ABI allows still fits that buffer */
	longp[PATH_MAX - 1] = '\0';
	assert_int_equal(peercgroup_get_path_buf(3, big, PATH_MAX + 1), PATH_MAX - 1);
	assert_string_equal(big, longp);
	free(big);
	free(longp);
}

static void test_buggy_module(void **state)
{
	struct peercgroup_info info;

	(void)state;
	fake.no_nul = 1;	/* path without its NUL */
	assert_int_equal(peercgroup_get(3, 0, &info), -EPROTO);
	assert_null(info.path);
	fake.no_nul = 0;
	/* ERANGE although the path fitted */
	fake.query_errno = ERANGE;
	assert_int_equal(peercgroup_get(3, 0, &info), -EPROTO);
	assert_null(info.path);
}

static void check_errno_map(int kernel, int lib)
{
	struct peercgroup_info info;

	fake.query_errno = kernel;
	memset(&info, 0x5a, sizeof(info));
	if (peercgroup_get(3, 0, &info) != lib)
		print_error("kernel errno %d\n", kernel);
	fake.query_errno = kernel;
	assert_int_equal(peercgroup_get(3, 0, &info), lib);
	assert_null(info.path);		/* zeroed on failure */
	assert_int_equal(info.cgroup_id, 0);
	assert_int_equal(info.pid, 0);
}

static void test_query_errnos(void **state)
{
	(void)state;
	check_errno_map(EBADF, -EBADF);
	check_errno_map(ENOTSOCK, -ENOTSOCK);
	check_errno_map(EAFNOSUPPORT, -EAFNOSUPPORT);
	check_errno_map(EOPNOTSUPP, -EOPNOTSUPP);
	check_errno_map(ENOTCONN, -ENOTCONN);
	check_errno_map(ENODATA, -ENODATA);
	check_errno_map(EFAULT, -EFAULT);
	check_errno_map(ENOMEM, -ENOMEM);
	/* the library never sends bad flags/sizes: these mean ABI mismatch */
	check_errno_map(EINVAL, -EPROTO);
	check_errno_map(E2BIG, -EPROTO);
	check_errno_map(ENOTTY, -EPROTO);
	assert_int_equal(pcg_map_query_errno(EIO), -EIO);
}

static void test_open_errnos(void **state)
{
	(void)state;
	assert_int_equal(pcg_map_open_errno(ENOENT, 0), -ENOPKG);
	/* loaded but the node is hidden: a sandboxed service */
	assert_int_equal(pcg_map_open_errno(ENOENT, 1), -ENODEV);
	assert_int_equal(pcg_map_open_errno(ENXIO, 0), -ENOPKG);
	assert_int_equal(pcg_map_open_errno(ENODEV, 1), -ENOPKG);
	assert_int_equal(pcg_map_open_errno(EACCES, 1), -EACCES);
	assert_int_equal(pcg_map_open_errno(EPERM, 1), -EACCES);
	assert_int_equal(pcg_map_open_errno(EMFILE, 1), -EMFILE);
}

static void test_module_absent(void **state)
{
	struct peercgroup_info info;
	struct peercgroup_module mod;
	uint64_t id;
	char *p;

	(void)state;
	pcg_test_set_device("/nonexistent/peercgroup");
	assert_int_equal(peercgroup_get(3, 0, &info), -ENOPKG);
	assert_int_equal(peercgroup_get_id(3, &id), -ENOPKG);
	assert_int_equal(peercgroup_get_path(3, &p), -ENOPKG);
	assert_int_equal(peercgroup_module_info(&mod), -ENOPKG);
	assert_int_equal(fake.version_calls, 0);
	/* a regular file where the device should be is no module either */
	pcg_test_set_device("/proc/self/status");
	assert_int_equal(peercgroup_get(3, 0, &info), -ENOPKG);
	/* not cached: once the module appears, calls work */
	pcg_test_set_device("/dev/null");
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	peercgroup_info_free(&info);
}

static void test_version(void **state)
{
	struct peercgroup_module mod;

	(void)state;
	assert_int_equal(peercgroup_module_info(&mod), 0);
	assert_int_equal(mod.abi_version, PEERCGROUP_ABI_VERSION);
	assert_int_equal(mod.features, PEERCGROUP_FEATURE_STREAM | PEERCGROUP_FEATURE_PATH);
	assert_int_equal(mod.query_flags, PEERCGROUP_QUERY_FLAGS_ALL);
	assert_int_equal(mod.query_size, sizeof(struct peercgroup_query));
	assert_string_equal(mod.version, "9.8.7-fake");
	assert_int_equal(peercgroup_module_info(NULL), -EINVAL);
}

static void test_abi_mismatch(void **state)
{
	struct peercgroup_info info;
	struct peercgroup_module mod;

	(void)state;
	fake.abi = PEERCGROUP_ABI_VERSION + 1;
	assert_int_equal(peercgroup_get(3, 0, &info), -EPROTO);
	assert_int_equal(peercgroup_module_info(&mod), -EPROTO);
	fake.abi = PEERCGROUP_ABI_VERSION;
	fake.version_errno = ENOTTY;	/* not the peercgroup device */
	assert_int_equal(peercgroup_get(3, 0, &info), -EPROTO);
}

static void test_bad_args(void **state)
{
	struct peercgroup_info info;

	(void)state;
	assert_int_equal(peercgroup_get(3, 0, NULL), -EINVAL);
	assert_int_equal(peercgroup_get(3, 1U << 7, &info), -EINVAL);
	assert_int_equal(peercgroup_get(-1, 0, &info), -EBADF);
	assert_int_equal(peercgroup_get_path(3, NULL), -EINVAL);
	assert_int_equal(fake.query_calls, 0);
}

static void test_open_once(void **state)
{
	struct peercgroup_info info;
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		assert_int_equal(peercgroup_get(3, 0, &info), 0);
		peercgroup_info_free(&info);
	}
	assert_int_equal(fake.version_calls, 1);
}

static void *thread_main(void *arg)
{
	struct peercgroup_info info;
	intptr_t bad = 0;
	int i;

	(void)arg;
	for (i = 0; i < 200; i++) {
		if (peercgroup_get(3, 0, &info) != 0 ||
		    strcmp(info.path, "/system.slice/sshd.service"))
			bad++;
		peercgroup_info_free(&info);
	}
	return (void *)bad;
}

static void test_threads(void **state)
{
	pthread_t t[8];
	void *ret;
	int i;

	(void)state;
	for (i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, thread_main, NULL), 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_int_equal((intptr_t)ret, 0);
	}
	assert_int_equal(fake.version_calls, 1);	/* opened once */
	assert_int_equal(fake.query_calls, 1600);
}

static void test_fork_reopens(void **state)
{
	struct peercgroup_info info;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	peercgroup_info_free(&info);
	assert_int_equal(fake.version_calls, 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* the child reopens (one more VERSION) and works */
		int ok = peercgroup_get(3, 0, &info) == 0 && fake.version_calls == 2;

		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the parent keeps its descriptor */
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	peercgroup_info_free(&info);
	assert_int_equal(fake.version_calls, 1);
}

/* The library's device descriptor: the one fd open on /dev/full here. */
static int device_fd(void)
{
	struct stat want, st;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int fd = -1;

	assert_non_null(dir);
	assert_int_equal(stat("/dev/full", &want), 0);
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && atoi(d->d_name) != dirfd(dir) &&
		    fstat(atoi(d->d_name), &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == want.st_rdev)
			fd = atoi(d->d_name);
	closedir(dir);
	return fd;
}

/*
 * In a child made without atfork handlers, close the inherited device fd,
 * let a regular file take its number, and query: the library must reopen
 * the device, never send its ioctl to that file.
 */
static int child_reuses_fd(int devfd)
{
	struct peercgroup_info info;
	int other, r;

	close(devfd);
	other = open("/proc/self/status", O_RDONLY);
	if (other != devfd)
		return 10;	/* the test's premise */
	r = peercgroup_get(3, 0, &info);
	if (r != 0)
		return 11;
	peercgroup_info_free(&info);
	if (fake.wrong_file)
		return 12;
	return fake.version_calls == 2 ? 0 : 13;	/* reopened once */
}

static void open_in_parent(int *devfd)
{
	struct peercgroup_info info;

	pcg_test_set_device("/dev/full");
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	peercgroup_info_free(&info);
	assert_int_equal(fake.version_calls, 1);
	*devfd = device_fd();
	assert_true(*devfd >= 0);
}

static void wait_ok(pid_t pid)
{
	int status;

	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The program closes the library's descriptor (closefrom(), a daemon's
 * loop) and a file of its own takes the number: the next query opens the
 * device again and answers; the program's file stays open.  Only that one
 * query reaches the file, which the library cannot know before it asks.
 */
static void test_program_closed_device(void **state)
{
	struct peercgroup_info info;
	struct stat st;
	int devfd, other;

	(void)state;
	open_in_parent(&devfd);
	close(devfd);
	other = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	assert_int_equal(other, devfd);
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	assert_string_equal(info.path, "/system.slice/sshd.service");
	peercgroup_info_free(&info);
	assert_int_equal(fake.version_calls, 2);	/* opened again, once */
	assert_int_equal(fake.wrong_file, 1);
	assert_int_equal(fstat(other, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* closed and not reused: EBADF is the descriptor's, not the socket's */
	devfd = device_fd();
	assert_true(devfd >= 0 && devfd != other);
	close(devfd);
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	peercgroup_info_free(&info);
	assert_int_equal(fake.version_calls, 3);
	assert_int_equal(fake.wrong_file, 1);
	/* the module's own EBADF (a bad socket) is passed on, after one check */
	fake.query_errno = EBADF;
	assert_int_equal(peercgroup_get(3, 0, &info), -EBADF);
	assert_int_equal(fake.version_calls, 3);
	close(other);
}

/* Another thread, meeting the closed descriptor first, opens the device
 * again: at the lowest free number, the one that failed. */
static void other_thread_reopens(void)
{
	uint64_t id;

	assert_int_equal(peercgroup_get_id(3, &id), 0);
}

/*
 * The program closed the descriptor, and another thread opens the device
 * again, at the same number, when *@hook (set here) runs: this thread's
 * query answers from that descriptor, and neither opens a third nor
 * leaves the reopened one behind.
 */
static void closed_and_reopened_when(void (**hook)(void))
{
	struct peercgroup_info info;
	int devfd;

	open_in_parent(&devfd);
	close(devfd);
	*hook = other_thread_reopens;
	assert_int_equal(peercgroup_get(3, 0, &info), 0);
	assert_string_equal(info.path, "/system.slice/sshd.service");
	peercgroup_info_free(&info);
	assert_null(*hook);
	assert_int_equal(device_fd(), devfd);	/* the same number, reopened */
	assert_int_equal(fake.version_calls, 2);	/* opened again, once */
	assert_int_equal(fake.wrong_file, 0);
}

/*
 * The other thread meets the closed descriptor first: this one's EBADF
 * came from the old descriptor, not from its socket, although the number
 * is the device's again when it looks, so it asks once more rather than
 * answer EBADF.
 */
static void test_closed_device_two_threads(void **state)
{
	(void)state;
	closed_and_reopened_when(&fake.on_closed_fd);
}

/*
 * The other thread reopens after this one found the descriptor closed
 * (its ioctl's check, then the library's own) and before it takes the
 * lock.
 */
static void test_closed_device_reopened_before_the_lock(void **state)
{
	(void)state;
	fake.fstat_fails_before = 1;
	closed_and_reopened_when(&fake.on_fstat_fail);
}

/* After closefrom(), open_device() and module_info() open it again. */
static void test_closed_device_open_and_info(void **state)
{
	struct peercgroup_module mod;
	int devfd, other;

	(void)state;
	open_in_parent(&devfd);
	close(devfd);
	assert_int_equal(peercgroup_open_device(), 0);
	assert_int_equal(device_fd(), devfd);	/* lowest free number again */
	assert_int_equal(fake.version_calls, 2);
	close(devfd);
	other = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	assert_int_equal(other, devfd);
	assert_int_equal(peercgroup_module_info(&mod), 0);
	assert_string_equal(mod.version, "9.8.7-fake");
	assert_int_equal(fake.wrong_file, 0);	/* never asked the program's file */
	assert_true(device_fd() >= 0 && device_fd() != other);
	assert_int_equal(fcntl(other, F_GETFD), FD_CLOEXEC);
	close(other);
}

/* A fork child never closes a descriptor the program reused. */
static void test_fork_keeps_program_fd(void **state)
{
	int devfd, other;
	pid_t pid;

	(void)state;
	open_in_parent(&devfd);
	close(devfd);
	other = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	assert_int_equal(other, devfd);
	pid = fork();
	if (pid == 0)
		_exit(fcntl(other, F_GETFD) < 0 ? 1 : 0);
	wait_ok(pid);
	close(other);
}

static void test_underscore_fork(void **state)
{
	int devfd;
	pid_t pid;

	(void)state;
	assert_true(pcg_device_wipes_on_fork());
	open_in_parent(&devfd);
	pid = _Fork();	/* no atfork handlers */
	if (pid == 0)
		_exit(child_reuses_fd(devfd));
	wait_ok(pid);
	assert_int_equal(fake.wrong_file, 0);
	assert_int_equal(fcntl(devfd, F_GETFD), FD_CLOEXEC);	/* the parent's is intact */
}

static void test_raw_clone(void **state)
{
	int devfd;
	pid_t pid;

	(void)state;
	open_in_parent(&devfd);
	/* clone() without CLONE_VM: a copy of memory, no libc fork path */
	pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(child_reuses_fd(devfd));
	wait_ok(pid);
	assert_int_equal(fake.wrong_file, 0);
}

static void test_vfork_exec(void **state)
{
	char cmd[64];
	int devfd;
	pid_t pid;

	(void)state;
	open_in_parent(&devfd);
	/* the exec'd program does not inherit the device (O_CLOEXEC) */
	snprintf(cmd, sizeof(cmd), "test ! -e /proc/self/fd/%d", devfd);
	pid = vfork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	wait_ok(pid);
	/* the shared page was not touched: the parent keeps its descriptor */
	{
		struct peercgroup_info info;

		assert_int_equal(peercgroup_get(3, 0, &info), 0);
		peercgroup_info_free(&info);
	}
	assert_int_equal(fake.version_calls, 1);
	assert_int_equal(device_fd(), devfd);
}

/* ---- a fake cgroup tree: directories whose inodes are the ids ---- */

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UUID "12345678-1234-1234-1234-123456789abc"

static char cgroup_tree[64];

static void tree_setup(void)
{
	strcpy(cgroup_tree, "/tmp/pcg-cgroups-XXXXXX");
	assert_non_null(mkdtemp(cgroup_tree));
	pcg_test_set_cgroup_root(cgroup_tree, getuid());
}

static void tree_teardown(void)
{
	char cmd[96];

	pcg_test_set_cgroup_root(NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cgroup_tree);
	assert_int_equal(system(cmd), 0);
}

/*
 * An O_PATH fd of the directory at the first @len bytes of @path in the
 * tree, made if missing.  By fds: the tree's name and a path near PATH_MAX
 * together pass it, as a real mount point and such a path do.
 */
static int tree_dir(const char *path, size_t len)
{
	const char *p = path, *end = path + len, *next;
	char name[NAME_MAX + 1];
	int dfd = open(cgroup_tree, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

	assert_true(dfd >= 0);
	for (; p < end; p = next) {
		p += *p == '/';
		next = memchr(p, '/', (size_t)(end - p));
		next = next ? next : end;
		if (next == p)
			continue;
		assert_true(next - p <= NAME_MAX);
		snprintf(name, sizeof(name), "%.*s", (int)(next - p), p);
		assert_true(mkdirat(dfd, name, 0755) == 0 || errno == EEXIST);
		fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		assert_true(fd >= 0);
		close(dfd);
		dfd = fd;
	}
	return dfd;
}

/* The peer is in @path, which exists in the tree: its inode is the id. */
static void fake_cgroup(const char *path)
{
	struct stat st;
	int fd = tree_dir(path, strlen(path));

	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	fake.path = path;
	fake.id = st.st_ino;
}

static void chmod_cgroup(const char *path, mode_t mode)
{
	const char *name = strrchr(path, '/') + 1;
	int fd = tree_dir(path, (size_t)(name - path));

	assert_int_equal(fchmodat(fd, name, mode, 0), 0);
	close(fd);
}

/* The getters, over the fake module's answer. */
static void test_getters(void **state)
{
	enum peercgroup_runtime rt;
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	char *s;
	uid_t uid;

	(void)state;
	tree_setup();
	fake.path = "/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.gnome.Maps-42.scope";
	assert_int_equal(peercgroup_peer_get_unit(3, &s), 0);
	assert_string_equal(s, "user@1000.service");
	free(s);
	assert_int_equal(peercgroup_peer_get_user_unit(3, &s), 0);
	assert_string_equal(s, "app-gnome-org.gnome.Maps-42.scope");
	free(s);
	assert_int_equal(peercgroup_peer_get_owner_uid(3, &uid), 0);
	assert_int_equal(uid, 1000);
	assert_int_equal(peercgroup_peer_get_machine_name(3, &s), -ENXIO);
	assert_null(s);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_string_equal(c.app, "org.gnome.Maps");
	assert_string_equal(c.launcher, "gnome");

	fake_cgroup("/machine.slice/systemd-nspawn@deb.service/payload");
	assert_int_equal(peercgroup_peer_get_machine_name(3, &s), 0);
	assert_string_equal(s, "deb");
	free(s);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), 0);
	assert_int_equal(rt, PEERCGROUP_RT_NSPAWN);
	assert_string_equal(s, "deb");
	free(s);
	assert_int_equal(peercgroup_peer_get_owner_uid(3, &uid), -ENXIO);
	assert_int_equal(peercgroup_peer_get_user_unit(3, &s), -ENXIO);

	/* a monitor is not its container */
	fake_cgroup("/lxc.monitor.web");
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	fake_cgroup("/lxc.payload.web");
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), 0);
	assert_int_equal(rt, PEERCGROUP_RT_LXC);
	free(s);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_false(c.flags & PEERCGROUP_CT_UNPROVEN);

	/*
	 * A name whose parent another may write: a user may have given it.
	 * (The tree's owner stands for root: the parent's owner is tested in
	 * api_suite, on a real cgroup2 tree.)
	 */
	fake_cgroup("/system.slice/svc.service/lxc.payload.web");
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), 0);
	free(s);
	chmod_cgroup("/system.slice/svc.service", 0775);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	assert_null(s);
	assert_int_equal(rt, PEERCGROUP_RT_UNKNOWN);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_int_equal(c.runtime, PEERCGROUP_RT_LXC);
	assert_string_equal(c.id, "web");
	assert_true(c.flags & PEERCGROUP_CT_UNPROVEN);
	/* only the parent counts: the grandparent, or the cgroup itself, do not */
	chmod_cgroup("/system.slice/svc.service", 0755);
	chmod_cgroup("/system.slice", 0777);
	chmod_cgroup("/system.slice/svc.service/lxc.payload.web", 0777);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), 0);
	free(s);
	fake_cgroup("/system.slice/svc.service/" HEX64);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), 0);
	assert_int_equal(rt, PEERCGROUP_RT_DOCKER);
	free(s);
	chmod_cgroup("/system.slice/svc.service", 0757);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	/* a pod's container: its pod's cgroup; a pod: where "kubepods" is */
	fake_cgroup("/system.slice/svc.service/kubepods/besteffort/pod" UUID "/" HEX64);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_int_equal(c.runtime, PEERCGROUP_RT_KUBERNETES);
	assert_false(c.flags & PEERCGROUP_CT_UNPROVEN);
	chmod_cgroup("/system.slice/svc.service/kubepods/besteffort/pod" UUID, 0775);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_true(c.flags & PEERCGROUP_CT_UNPROVEN);
	/* a pod with no container found: its own name's parent, not kubepods' */
	chmod_cgroup("/system.slice/svc.service", 0755);
	fake_cgroup("/system.slice/svc.service/kubepods/besteffort/pod" UUID);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_string_equal(c.pod, UUID);
	assert_false(c.flags & PEERCGROUP_CT_UNPROVEN);
	chmod_cgroup("/system.slice/svc.service/kubepods/besteffort", 0775);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_true(c.flags & PEERCGROUP_CT_UNPROVEN);
	/* ECS: the container's name's parent is its task's cgroup */
	fake_cgroup("/ecs/task1/" HEX64);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), 0);
	assert_int_equal(rt, PEERCGROUP_RT_ECS);
	assert_string_equal(s, HEX64);
	free(s);
	chmod_cgroup("/ecs/task1", 0775);
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	fake_cgroup("/ecs/task1");
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_string_equal(c.pod, "task1");
	assert_false(c.flags & PEERCGROUP_CT_UNPROVEN);
	/* a name that is no container's or application's needs no proof */
	fake_cgroup("/system.slice/svc.service/sub");
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_int_equal(c.runtime, PEERCGROUP_RT_SYSTEM_SERVICE);
	assert_false(c.flags & PEERCGROUP_CT_UNPROVEN);

	/*
	 * The longest path the module gives, PATH_MAX - 1 bytes: the tree's
	 * name in front of it passes PATH_MAX, and the check still looks.
	 */
	{
		static char longest[PATH_MAX];
		static const char tail[] = "/lxc.payload.web";
		size_t n = 0;

		while (n < sizeof(longest) - sizeof(tail)) {
			size_t k = sizeof(longest) - sizeof(tail) - n - 1;

			k = k > 200 ? 200 : k;
			assert_true(k > 0);
			longest[n++] = '/';
			memset(longest + n, 'd', k);
			n += k;
		}
		memcpy(longest + n, tail, sizeof(tail));
		assert_int_equal(strlen(longest), PATH_MAX - 1);
		assert_true(strlen(cgroup_tree) + strlen(longest) >= PATH_MAX);
		fake_cgroup(longest);
		assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), 0);
		assert_string_equal(s, "web");
		free(s);
		longest[n] = '\0';
		chmod_cgroup(longest, 0775);
		longest[n] = '/';
		assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	}

	/* the tree must show the peer's own cgroup: its inode is the id */
	fake_cgroup("/lxc.payload.web");
	fake.id++;
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	fake.id = 0;		/* no id: nothing to compare */
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	fake.path = "/lxc.payload.gone";	/* removed, or never seen here */
	fake.id = 4242;
	assert_int_equal(peercgroup_peer_get_container(3, &rt, &s), -ENXIO);
	fake.path = "/../lxc.payload.web";	/* outside the namespace */
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_true(c.flags & PEERCGROUP_CT_UNPROVEN);
	/* the path's own classifier never looks */
	assert_int_equal(peercgroup_classify_path("/lxc.payload.gone", 17, 0, &c), 0);
	assert_false(c.flags & PEERCGROUP_CT_UNPROVEN);
	assert_string_equal(peercgroup_class_flag_name(PEERCGROUP_CT_UNPROVEN), "unproven");
	tree_teardown();

	/* errors of the query pass through; the result is the empty one */
	fake.query_errno = ENODATA;
	memset(c.id, 'x', sizeof(c.id));
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), -ENODATA);
	assert_string_equal(c.id, "");
	assert_int_equal(peercgroup_peer_get_unit(3, &s), -ENODATA);
	assert_int_equal(peercgroup_peer_classify(3, PEERCGROUP_GET_NO_PATH, &c), -EINVAL);
	assert_int_equal(peercgroup_peer_get_unit(3, NULL), -EINVAL);
	/* a module answer that is no cgroup path is a protocol error */
	fake.query_errno = 0;
	fake.path = "/a//b";
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), -EPROTO);
}

/*
 * The unit and owner getters read no name an owner must prove: they look
 * at no cgroup's owner.  peercgroup_peer_classify() on the same peer does,
 * which shows the count sees a look.
 */
static void test_unit_getters_look_at_no_owner(void **state)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	char *s;
	uid_t uid;
	int looks;

	(void)state;
	tree_setup();
	fake_cgroup("/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.gnome.Maps-42.scope");
	looks = fake.fstatat_calls;
	assert_int_equal(peercgroup_peer_get_unit(3, &s), 0);
	free(s);
	assert_int_equal(peercgroup_peer_get_user_unit(3, &s), 0);
	free(s);
	assert_int_equal(peercgroup_peer_get_owner_uid(3, &uid), 0);
	assert_int_equal(uid, 1000);
	assert_int_equal(fake.fstatat_calls, looks);
	assert_int_equal(peercgroup_peer_classify(3, 0, &c), 0);
	assert_false(c.flags & PEERCGROUP_CT_UNPROVEN);
	assert_int_not_equal(fake.fstatat_calls, looks);
	tree_teardown();
}

static void test_open_device(void **state)
{
	(void)state;
	assert_int_equal(peercgroup_open_device(), 0);
	assert_int_equal(fake.version_calls, 1);
	assert_int_equal(peercgroup_open_device(), 0);
	assert_int_equal(fake.version_calls, 1);	/* kept */
	pcg_test_set_device("/nonexistent/peercgroup");
	assert_int_equal(peercgroup_open_device(), -ENOPKG);	/* the test path: never ENODEV */
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(peercgroup_strerror(-ENOPKG), peercgroup_strerror(ENOPKG));
	assert_non_null(strstr(peercgroup_strerror(-ENOPKG), "not loaded"));
	/* each message names its fix */
	assert_non_null(strstr(peercgroup_strerror(-ENOPKG), "modprobe peercgroup"));
	assert_non_null(strstr(peercgroup_strerror(-ENOPKG), "dkms status"));
	assert_non_null(strstr(peercgroup_strerror(-ENODEV), "DeviceAllow=/dev/peercgroup"));
	assert_non_null(strstr(peercgroup_strerror(-ENODEV), "peercgroup_open_device()"));
	assert_non_null(strstr(peercgroup_strerror(-EACCES), "DeviceAllow="));
	assert_string_equal(pcg_errno_name(-ENODEV), "ENODEV");
	assert_string_equal(pcg_errno_name(ENOPKG), "ENOPKG");
	assert_string_equal(pcg_errno_name(-EREMOTE), "EREMOTE");
	assert_non_null(strstr(peercgroup_strerror(-EREMOTE), "withheld"));
	assert_string_equal(pcg_errno_name(-EIO), "EOTHER");
	assert_non_null(peercgroup_strerror(INT_MIN));
	assert_non_null(strstr(peercgroup_strerror(-ENODATA), "before the module"));
	assert_non_null(strstr(peercgroup_strerror(-EPROTO), "ABI"));
	assert_string_equal(peercgroup_strerror(0), "success");
	assert_non_null(peercgroup_strerror(-99999));
	assert_string_equal(peercgroup_library_version(), PEERCGROUP_LIB_VERSION_STRING);
}

/* ---- live answers: real sockets, no module involved ---- */

static void self_cgroup(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[4096];

	buf[0] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, size, "%s", line + 3);
		}
	fclose(f);
}

static void test_live(void **state)
{
	struct peercgroup_info info;
	char want[4096];
	int sv[2], fd;

	(void)state;
	self_cgroup(want, sizeof(want));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(peercgroup_get(sv[0], PEERCGROUP_GET_LIVE, &info), 0);
	assert_int_equal(info.pid, getpid());
	assert_string_equal(info.path, want);
	assert_true(info.flags & PEERCGROUP_INFO_LIVE);
	peercgroup_info_free(&info);
	assert_int_equal(fake.query_calls, 0);	/* the module was not asked */
	assert_int_equal(peercgroup_get(sv[0], PEERCGROUP_GET_LIVE | PEERCGROUP_GET_NO_PATH, &info), 0);
	assert_null(info.path);
	close(sv[0]);
	close(sv[1]);

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	assert_int_equal(peercgroup_get(sv[0], PEERCGROUP_GET_LIVE, &info), -EOPNOTSUPP);
	close(sv[0]);
	close(sv[1]);

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info), -ENOTCONN);
	{
		/* autobind to an abstract address, then listen */
		sa_family_t fam = AF_UNIX;

		assert_int_equal(bind(fd, (struct sockaddr *)&fam, sizeof(fam)), 0);
	}
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info), -ENOTCONN);
	close(fd);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info), -EAFNOSUPPORT);
	close(fd);

	assert_int_equal(pipe(sv), 0);
	assert_int_equal(peercgroup_get(sv[0], PEERCGROUP_GET_LIVE, &info), -ENOTSOCK);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(peercgroup_get(sv[0], PEERCGROUP_GET_LIVE, &info), -EBADF);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_success), T(test_removed_flag), T(test_get_id_no_path),
		T(test_no_path_unsupported), T(test_get_path), T(test_get_path_buf),
		T(test_longest_path),
		T(test_buggy_module), T(test_query_errnos), T(test_open_errnos),
		T(test_module_absent), T(test_version), T(test_abi_mismatch),
		T(test_bad_args), T(test_open_once), T(test_threads),
		T(test_fork_reopens), T(test_underscore_fork), T(test_raw_clone),
		T(test_program_closed_device), T(test_closed_device_two_threads),
		T(test_closed_device_reopened_before_the_lock),
		T(test_closed_device_open_and_info), T(test_fork_keeps_program_fd),
		T(test_vfork_exec), T(test_getters), T(test_unit_getters_look_at_no_owner),
		T(test_open_device),
		T(test_strerror), T(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
