// SPDX-License-Identifier: GPL-2.0
/*
 * What the module must never do: answer in another cgroup namespace's
 * terms, show a kernel pointer (ioctl output, sysfs, its kernel log
 * lines), answer for a file table other than the caller's, or give a
 * non-root caller anything root would not get.  Runs as root in the guest
 * with cgroup2 at CGROOT.  Usage: security_suite [TEST]
 */
/* guest.h's client helpers serve the other suites */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "guest.h"

#include <dirent.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/klog.h>

/* Runs @fn in a child; the child's message (if any) is the failure. */
static void in_child(void (*fn)(int out), char *msg, size_t size, int *status)
{
	int p[2];
	ssize_t n;
	pid_t pid;

	msg[0] = 0;
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(msg, size, "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		fn(p[1]);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], msg, size - 1);
	msg[n > 0 ? n : 0] = 0;
	close(p[0]);
	waitpid(pid, status, 0);
}

static int pair_fd[2];

/*
 * One recorded socket (a pair made in cgroup sec/a), seen from four
 * cgroup namespaces: each answer must read like /proc/self/cgroup of a
 * process in sec/a read from that namespace.
 */
static void ns_view(int out, const char *cg, bool newns, pid_t creator, const char *fixed)
{
	struct peercgroup_query q;
	char path[256], want[256];
	int err;

	if (cg_move(cg, 0) || (newns && unshare(CLONE_NEWCGROUP)))
		_exit(dprintf(out, "%s: setup: %s", cg, strerror(errno)) && 0);
	if (proc_cgroup(creator, want, sizeof(want)))
		_exit(dprintf(out, "%s: /proc/%d/cgroup", cg, (int)creator) && 0);
	if (strcmp(want, fixed))
		_exit(dprintf(out, "ns at %s: /proc says \"%s\", not \"%s\"", cg, want, fixed) && 0);
	err = query(pair_fd[1], &q, path, sizeof(path));
	if (err || strcmp(path, want) || q.path_len != strlen(want))
		_exit(dprintf(out, "ns at %s: expected \"%s\", got err %d \"%s\"", cg, want,
			      err, err ? "" : path) && 0);
	_exit(0);
}

static pid_t sec_creator;
static void ns_root(int out) { ns_view(out, "", false, sec_creator, "/sec/a"); }
static void ns_same(int out) { ns_view(out, "sec/a", true, sec_creator, "/"); }
static void ns_below(int out) { ns_view(out, "sec/a/deep", true, sec_creator, "/.."); }
static void ns_beside(int out) { ns_view(out, "sec/b/c", true, sec_creator, "/../../a"); }

static void s_path_relative_to_caller_ns(void)
{
	void (*views[])(int) = { ns_root, ns_same, ns_below, ns_beside };
	char msg[512];
	int status, holder[2];
	pid_t holder_pid;

	SYS(cg_create("sec"));
	SYS(cg_create("sec/a"));
	SYS(cg_create("sec/a/deep"));
	SYS(cg_create("sec/b"));
	SYS(cg_create("sec/b/c"));
	/* a process that stays in sec/a makes the pair; /proc/PID/cgroup of it
	 * is the reference in every namespace
	 */
	SYS(pipe2(holder, O_CLOEXEC));
	SYS(cg_move("sec/a", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair_fd));
	holder_pid = fork();
	if (holder_pid == 0) {
		char b;

		close(holder[1]);
		_exit(read(holder[0], &b, 1) < 0);
	}
	close(holder[0]);
	SYS(cg_move("", 0));
	sec_creator = holder_pid;
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		in_child(views[i], msg, sizeof(msg), &status);
		if (msg[0] || status)
			break;
	}
	close(holder[1]);
	waitpid(holder_pid, NULL, 0);
	close(pair_fd[0]);
	close(pair_fd[1]);
	CHECK(!msg[0], "%s", msg);
	CHECK_INT(0, status);
}

/* A kernel address printed in hex: "ffff" + 12 more hex digits, or any
 * run of 16 hex digits.
 */
static bool has_kernel_pointer(const char *s, size_t n)
{
	size_t run = 0;

	for (size_t i = 0; i < n; i++) {
		bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			   (s[i] >= 'A' && s[i] <= 'F');

		run = hex ? run + 1 : 0;
		if (run >= 16)
			return true;
		if (run >= 12 && i >= 11 && !strncasecmp(&s[i - 11], "ffff", 4))
			return true;
	}
	return false;
}

static bool word_is_kernel_address(const void *p, size_t n)
{
	for (size_t off = 0; off + 8 <= n; off += 4) {
		uint64_t v;

		memcpy(&v, (const char *)p + off, 8);
		if (v >= 0xffff800000000000ULL)
			return true;
	}
	return false;
}

static int scan_dir(const char *dir, char *bad, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int files = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[512], buf[4096];
		struct stat st;
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			files += scan_dir(p, bad, size);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		files++;
		if (n > 0 && has_kernel_pointer(buf, n) && !bad[0])
			snprintf(bad, size, "%.100s: %.*s", p, (int)(n > 80 ? 80 : n), buf);
	}
	closedir(d);
	return files;
}

static void s_no_kernel_pointers(void)
{
	struct peercgroup_query q;
	struct peercgroup_version v;
	char path[256], bad[256] = "", *log, *line;
	int sv[2], dev, len, files, lines = 0;

	/* ioctl output: no word of it looks like a kernel address */
	SYS(cg_create("sec"));
	SYS(cg_move("sec", 0));
	SYS(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	SYS(cg_move("", 0));
	CHECK_INT(0, query(sv[0], &q, path, sizeof(path)));
	CHECK(!word_is_kernel_address(&q, sizeof(q)), "query output holds a kernel address");
	CHECK(!has_kernel_pointer(path, strlen(path)), "path \"%s\"", path);
	memset(&q, 0, sizeof(q));
	CHECK_INT(-ERANGE, query(sv[0], &q, path, 1));
	CHECK(!word_is_kernel_address(&q, sizeof(q)), "ERANGE output holds a kernel address");
	close(sv[0]);
	close(sv[1]);
	SYS(dev = dev_open());
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	SYS(ioctl(dev, PEERCGROUP_IOC_VERSION, &v));
	close(dev);
	CHECK(!word_is_kernel_address(&v, sizeof(v)), "version output holds a kernel address");

	/* sysfs: the module's own files */
	/* (not the kernel's own attributes: srcversion is a hash, sections are
	 * addresses by design, both root-only)
	 */
	files = scan_dir("/sys/module/peercgroup/counters", bad, sizeof(bad));
	files += scan_dir("/sys/module/peercgroup/parameters", bad, sizeof(bad));
	{
		char vb[128] = "";
		int vfd = open("/sys/module/peercgroup/version", O_RDONLY | O_CLOEXEC);

		if (vfd >= 0) {
			ssize_t n = read(vfd, vb, sizeof(vb) - 1);

			close(vfd);
			files++;
			if (n > 0 && has_kernel_pointer(vb, n))
				snprintf(bad, sizeof(bad), "version: %s", vb);
		}
	}
	CHECK(files >= 7, "only %d files under /sys/module/peercgroup", files);
	CHECK(!bad[0], "kernel pointer in %s", bad);

	/* the kernel log: every line of the module (loads, unloads, storms) */
	len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	SYS(len);
	log = malloc(len + 1);
	CHECK(log, "malloc");
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, len);
	if (len < 0) {
		free(log);
		FAIL("klogctl: %s", strerror(errno));
	}
	log[len] = 0;
	for (line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strstr(line, "peercgroup"))
			continue;
		lines++;
		/* skip the "[   12.345678] " timestamp */
		if (has_kernel_pointer(line, strlen(line)) && !bad[0])
			snprintf(bad, sizeof(bad), "%s", line);
	}
	free(log);
	printf("# no-pointers: %d sysfs files, %d kernel log lines of the module\n", files, lines);
	CHECK(lines > 0, "no kernel log line of the module");
	CHECK(!bad[0], "kernel pointer in the log: %s", bad);
}

/*
 * The device answers for the caller's own file table only: a number open
 * (on a recorded socket) in another process but not in the caller gives
 * EBADF; a number that is something else in the caller gives the answer
 * for the caller's object.
 */
static void s_other_process_fd(void)
{
	struct peercgroup_query q;
	char path[256], b;
	int sync[2], ready[2], reg, status;
	pid_t pid;

	SYS(cg_create("sec"));
	SYS(pipe2(sync, O_CLOEXEC));
	SYS(pipe2(ready, O_CLOEXEC));
	pid = fork();
	if (pid == 0) {
		int sv[2];

		close(sync[1]);
		close(ready[0]);
		if (cg_move("sec", 0) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ||
		    dup2(sv[0], 700) != 700 || dup2(sv[1], 701) != 701)
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(sync[0], &b, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(sync[0]);
	close(ready[1]);
	CHECK_INT(1, read(ready[0], &b, 1));
	CHECK(fcntl(700, F_GETFD) < 0 && fcntl(701, F_GETFD) < 0, "fd 700/701 open here");
	CHECK_INT(-EBADF, query(700, &q, path, sizeof(path)));
	CHECK_INT(-EBADF, query(701, &q, NULL, 0));
	SYS(reg = open("/proc/self/status", O_RDONLY | O_CLOEXEC));
	SYS(dup2(reg, 700));
	CHECK_INT(-ENOTSOCK, query(700, &q, path, sizeof(path)));
	close(700);
	close(reg);
	close(sync[1]);
	close(ready[0]);
	waitpid(pid, &status, 0);
	CHECK_INT(0, status);
}

/*
 * Everything a non-root caller can ask, it gets exactly as root does:
 * byte for byte, for each kind of socket and each error, including a
 * socket it received from root over SCM_RIGHTS; and nothing more.
 */
struct answer {
	int err;
	struct peercgroup_query q;
	char path[64];
	struct peercgroup_version v;
};

#define NANS 9

static void ask_all(const int *fds, struct answer *a)
{
	int dev = dev_open();

	for (int i = 0; i < NANS; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].err = query(fds[i], &a[i].q, a[i].path, i == 3 ? 2 : sizeof(a[i].path));
	}
	memset(&a[0].v, 0, sizeof(a[0].v));
	a[0].v.size = sizeof(a[0].v);
	if (dev < 0 || ioctl(dev, PEERCGROUP_IOC_VERSION, &a[0].v))
		a[0].v.size = 0;
	if (dev >= 0)
		close(dev);
}

static void s_non_root_nothing_more(void)
{
	struct answer ra[NANS], na[NANS];
	int fds[NANS], sv[2], sq[2], dg[2], lfd, cli, acc, reg, inet, res[2], status;
	pid_t pid;
	char name[48];

	SYS(cg_create("sec"));
	SYS(cg_create("sec/a"));
	snprintf(name, sizeof(name), "pcg-sec-%d", (int)getpid());
	SYS(cg_move("sec", 0));
	SYS(lfd = listen_on(name, SOCK_STREAM));
	SYS(cg_move("sec/a", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sq));
	SYS(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, dg));
	SYS(cli = connect_to(name, SOCK_STREAM));
	SYS(acc = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
	SYS(cg_move("", 0));
	SYS(reg = open("/proc/self/status", O_RDONLY | O_CLOEXEC));
	SYS(inet = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	fds[0] = sv[0];
	fds[1] = sq[1];
	fds[2] = cli;
	fds[3] = acc;	/* with a 2-byte buffer: ERANGE */
	fds[4] = dg[0];
	fds[5] = lfd;
	fds[6] = reg;
	fds[7] = inet;
	fds[8] = 999;
	ask_all(fds, ra);
	SYS(pipe2(res, O_CLOEXEC));
	pid = fork();
	if (pid == 0) {
		close(res[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		cg_move("", 0);	/* not allowed for nobody: stays where it is */
		ask_all(fds, na);
		if (write(res[1], na, sizeof(na)) != sizeof(na))
			_exit(3);
		/* nothing more: no counters, no unload, no way to make records */
		if (open("/sys/module/peercgroup/counters/queries", O_RDONLY) >= 0)
			_exit(4);
		if (!syscall(SYS_delete_module, "peercgroup", O_NONBLOCK) || errno != EPERM)
			_exit(5);
		_exit(0);
	}
	close(res[1]);
	CHECK_INT((long long)sizeof(na), read(res[0], na, sizeof(na)));
	close(res[0]);
	waitpid(pid, &status, 0);
	CHECK_INT(0, status);
	for (int i = 0; i < NANS; i++) {
		ra[i].q.path = na[i].q.path = 0;	/* our two buffers' addresses */
		CHECK(ra[i].err == na[i].err, "fd #%d: root err %d, nobody err %d",
		      i, ra[i].err, na[i].err);
		CHECK(!memcmp(&ra[i].q, &na[i].q, sizeof(ra[i].q)),
		      "fd #%d: the query outputs differ: root id %llu len %u pid %d flags %#x, nobody id %llu len %u pid %d flags %#x",
		      i, (unsigned long long)ra[i].q.cgroup_id, ra[i].q.path_len, ra[i].q.pid,
		      ra[i].q.result_flags, (unsigned long long)na[i].q.cgroup_id,
		      na[i].q.path_len, na[i].q.pid, na[i].q.result_flags);
		CHECK(!memcmp(ra[i].path, na[i].path, sizeof(ra[i].path)),
		      "fd #%d: paths \"%s\" vs \"%s\"", i, ra[i].path, na[i].path);
	}
	CHECK(ra[0].v.size && !memcmp(&ra[0].v, &na[0].v, sizeof(ra[0].v)),
	      "the version outputs differ");
	/* the answers are the documented ones, so the comparison is not vacuous */
	CHECK_INT(0, ra[0].err);
	CHECK_INT(0, ra[1].err);
	CHECK_INT(0, ra[2].err);
	CHECK_INT(-ERANGE, ra[3].err);
	CHECK_INT(-EOPNOTSUPP, ra[4].err);
	CHECK_INT(-ENOTCONN, ra[5].err);
	CHECK_INT(-ENOTSOCK, ra[6].err);
	CHECK_INT(-EAFNOSUPPORT, ra[7].err);
	CHECK_INT(-EBADF, ra[8].err);
	CHECK_STR("/sec", ra[2].path);
	CHECK_STR("/sec/a", ra[0].path);
	for (int i = 0; i < 2; i++) {
		close(sv[i]);
		close(sq[i]);
		close(dg[i]);
	}
	close(cli);
	close(acc);
	close(lfd);
	close(reg);
	close(inet);
}

/* A socket handed to a non-root process over SCM_RIGHTS answers the same. */
static void s_passed_fd_same_answer(void)
{
	struct peercgroup_query q;
	char path[256], cmsgbuf[CMSG_SPACE(sizeof(int))], b = 'f';
	int sv[2], carrier[2], res[2], status;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cmsgbuf, .msg_controllen = sizeof(cmsgbuf) };
	struct cmsghdr *cm;
	pid_t pid;

	SYS(cg_create("sec"));
	SYS(cg_create("sec/a"));
	SYS(cg_move("sec/a", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(cg_move("", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, carrier));
	SYS(pipe2(res, O_CLOEXEC));
	CHECK_INT(0, query(sv[1], &q, path, sizeof(path)));
	CHECK_STR("/sec/a", path);
	pid = fork();
	if (pid == 0) {
		struct peercgroup_query nq;
		char npath[256], nb;
		struct iovec niov = { .iov_base = &nb, .iov_len = 1 };
		char ncm[CMSG_SPACE(sizeof(int))];
		struct msghdr nmh = { .msg_iov = &niov, .msg_iovlen = 1,
				      .msg_control = ncm, .msg_controllen = sizeof(ncm) };
		int fd, err;

		close(res[0]);
		close(sv[0]);
		close(sv[1]);	/* only the passed one */
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		if (recvmsg(carrier[1], &nmh, 0) != 1 || !CMSG_FIRSTHDR(&nmh))
			_exit(3);
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&nmh)), sizeof(fd));
		err = query(fd, &nq, npath, sizeof(npath));
		if (dprintf(res[1], "%d %s %llu %d", err, err ? "-" : npath,
			    (unsigned long long)nq.cgroup_id, nq.pid) < 0)
			_exit(4);
		_exit(0);
	}
	close(res[1]);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &sv[1], sizeof(int));
	CHECK_INT(1, sendmsg(carrier[0], &mh, 0));
	{
		char got[300] = "", want[300];
		ssize_t n = read(res[0], got, sizeof(got) - 1);

		got[n > 0 ? n : 0] = 0;
		snprintf(want, sizeof(want), "0 /sec/a %llu %d",
			 (unsigned long long)q.cgroup_id, q.pid);
		waitpid(pid, &status, 0);
		close(res[0]);
		close(carrier[0]);
		close(carrier[1]);
		close(sv[0]);
		close(sv[1]);
		CHECK_INT(0, status);
		CHECK_STR(want, got);
	}
}

int main(int argc, char **argv)
{
	t_suite = "security";
	t_only = argc > 1 ? argv[1] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!module_loaded() && module_load()) {
		printf("not ok - security/setup: cannot load %s: %s\n", module_path(),
		       strerror(errno));
		return 1;
	}
	RUN(s_path_relative_to_caller_ns);
	RUN(s_other_process_fd);
	RUN(s_non_root_nothing_more);
	RUN(s_passed_fd_same_answer);
	/* last: it reads the kernel log of everything before */
	RUN(s_no_kernel_pointers);
	printf("# security: %d passed, %d failed\n", t_pass, t_fail);
	return 0;
}
