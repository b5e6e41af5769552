// SPDX-License-Identifier: GPL-2.0
/*
 * What the module must never do: answer in another cgroup namespace's
 * terms, show a kernel pointer (ioctl output, sysfs, its kernel log
 * lines), answer for a file table other than the caller's, or give a
 * non-root caller anything root would not get.  Runs as root in the guest
 * with cgroup2 at CGROOT.  Usage: security_suite [TEST]
 */
#include "guest.h"

#include <dirent.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/klog.h>

/*
 * One recorded socket (a pair made in cgroup sec/a), seen from four
 * cgroup namespaces: each answer must read like /proc/PID/cgroup of a
 * process in sec/a, read from that namespace.
 */
struct ns_view {
	const char *cg;		/* where the viewer's namespace is rooted */
	bool new_ns;
	const char *proc_says;	/* what /proc shows there for sec/a */
	int fd;			/* the recorded socket */
	pid_t in_sec_a;		/* a process in sec/a */
};

static void answer_reads_like_proc(void *arg)
{
	const struct ns_view *v = arg;
	struct peercgroup_query q;
	char path[256], want[256];

	SYS(cg_move(v->cg, 0));
	if (v->new_ns)
		SYS(unshare(CLONE_NEWCGROUP));
	SYS(proc_cgroup(v->in_sec_a, want, sizeof(want)));
	CHECK_STR(v->proc_says, want);
	CHECK_INT(0, query(v->fd, &q, path, sizeof(path)));
	CHECK_STR(want, path);
	CHECK_INT(strlen(want), q.path_len);
	/* outside the namespace: the path /proc gives, never the id */
	CHECK_INT(strncmp(want, "/..", 3) ? (long long)cg_id("sec/a") : 0, (long long)q.cgroup_id);
}

static void s_path_relative_to_caller_ns(void)
{
	struct ns_view views[] = {
		{ .cg = "", .new_ns = false, .proc_says = "/sec/a" },
		{ .cg = "sec/a", .new_ns = true, .proc_says = "/" },
		{ .cg = "sec/a/deep", .new_ns = true, .proc_says = "/.." },
		{ .cg = "sec/b/c", .new_ns = true, .proc_says = "/../../a" },
	};
	int sv[2];
	pid_t in_sec_a;

	SYS(cg_create("sec"));
	SYS(cg_create("sec/a"));
	SYS(cg_create("sec/a/deep"));
	SYS(cg_create("sec/b"));
	SYS(cg_create("sec/b/c"));
	SYS(cg_move("sec/a", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(in_sec_a = fork());
	if (in_sec_a == 0) {
		pause();
		_exit(0);
	}
	SYS(cg_move("", 0));
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		views[i].fd = sv[1];
		views[i].in_sec_a = in_sec_a;
		t_in_child(answer_reads_like_proc, &views[i]);
	}
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

static void become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		FAIL("cannot become nobody: %s", strerror(errno));
}

struct root_answers {
	const int *fds;
	struct answer *a;
};

/* As nobody: the same answers, byte for byte, and nothing more. */
static void nobody_gets_the_same(void *arg)
{
	const struct root_answers *root = arg;
	struct answer na[NANS];

	become_nobody();
	ask_all(root->fds, na);
	for (int i = 0; i < NANS; i++) {
		struct answer *ra = &root->a[i];

		ra->q.path = na[i].q.path = 0;	/* our two buffers' addresses */
		CHECK(ra->err == na[i].err, "fd #%d: root err %d, nobody err %d",
		      i, ra->err, na[i].err);
		CHECK(!memcmp(&ra->q, &na[i].q, sizeof(ra->q)),
		      "fd #%d: the query outputs differ: root id %llu len %u pid %d flags %#x, nobody id %llu len %u pid %d flags %#x",
		      i, (unsigned long long)ra->q.cgroup_id, ra->q.path_len, ra->q.pid,
		      ra->q.result_flags, (unsigned long long)na[i].q.cgroup_id,
		      na[i].q.path_len, na[i].q.pid, na[i].q.result_flags);
		CHECK(!memcmp(ra->path, na[i].path, sizeof(ra->path)),
		      "fd #%d: paths \"%s\" vs \"%s\"", i, ra->path, na[i].path);
	}
	CHECK(root->a[0].v.size && !memcmp(&root->a[0].v, &na[0].v, sizeof(na[0].v)),
	      "the version outputs differ");
	/* nothing more: no counters, no unload */
	CHECK(open("/sys/module/peercgroup/counters/queries", O_RDONLY) < 0 && errno == EACCES,
	      "nobody can read the counters");
	CHECK(syscall(SYS_delete_module, "peercgroup", O_NONBLOCK) < 0 && errno == EPERM,
	      "nobody could unload the module");
}

static void s_non_root_nothing_more(void)
{
	struct answer ra[NANS];
	int fds[NANS], sv[2], sq[2], dg[2], lfd, cli, acc, reg, inet;
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
	/* root's answers are the documented ones, so the comparison is not vacuous */
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
	t_in_child(nobody_gets_the_same, &(struct root_answers){ .fds = fds, .a = ra });
}

/* A socket handed to a non-root process over SCM_RIGHTS answers the same. */
struct passed_fd {
	int carrier;			/* SCM_RIGHTS arrives here */
	struct peercgroup_query want;	/* root's answer */
	char want_path[256];
};

static void nobody_asks_about_passed_fd(void *arg)
{
	const struct passed_fd *p = arg;
	struct peercgroup_query q;
	char path[256];
	int fd;

	become_nobody();
	SYS(fd = recv_fd(p->carrier));
	CHECK_INT(0, query(fd, &q, path, sizeof(path)));
	CHECK_STR(p->want_path, path);
	CHECK_INT(p->want.cgroup_id, q.cgroup_id);
	CHECK_INT(p->want.pid, q.pid);
}

static void s_passed_fd_same_answer(void)
{
	struct passed_fd p;
	int sv[2], carrier[2];

	SYS(cg_create("sec"));
	SYS(cg_create("sec/a"));
	SYS(cg_move("sec/a", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(cg_move("", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, carrier));
	CHECK_INT(0, query(sv[1], &p.want, p.want_path, sizeof(p.want_path)));
	CHECK_STR("/sec/a", p.want_path);
	SYS(send_fd(carrier[0], sv[1]));
	close(sv[1]);	/* the receiver holds the only copy */
	p.carrier = carrier[1];
	t_in_child(nobody_asks_about_passed_fd, &p);
}

/*
 * The device fd passed between namespaces: an answer follows the caller's
 * namespaces at the query, whoever opened the device and wherever, as
 * SO_PEERCRED does.  A peer in sec/a, asked about through a device fd
 * that the host opened, from a pid and cgroup namespace (rooted at sec/b)
 * where neither its pid nor its cgroup is visible: withheld.  And through
 * a device fd opened in that namespace, passed out to the host: the whole
 * answer.
 */
struct passed_dev {
	int carrier;		/* the host's device fd arrives on it; ours leaves */
	int sock;		/* the recorded socket, inherited */
};

static void asks_through_a_host_dev(void *arg)
{
	const struct passed_dev *p = arg;
	struct peercgroup_query q;
	char path[256];
	int dev, own;

	CHECK_INT(1, getpid());
	SYS(dev = recv_fd(p->carrier));
	CHECK_INT(-EREMOTE, query_on(dev, p->sock, &q, path, sizeof(path)));
	SYS(own = dev_open());
	CHECK_INT(-EREMOTE, query_on(own, p->sock, &q, path, sizeof(path)));
	SYS(send_fd(p->carrier, own));
}

static void enters_sec_b_namespaces(void *arg)
{
	SYS(cg_move("sec/b", 0));
	SYS(unshare(CLONE_NEWPID | CLONE_NEWCGROUP));
	t_in_child(asks_through_a_host_dev, arg);
}

static void s_passed_dev_fd_follows_the_caller(void)
{
	struct passed_dev p;
	struct peercgroup_query q;
	char path[256];
	int sv[2], carrier[2], dev, inner;

	SYS(cg_create("sec"));
	SYS(cg_create("sec/a"));
	SYS(cg_create("sec/b"));
	SYS(cg_move("sec/a", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(cg_move("", 0));
	defer_close(sv[0]);
	defer_close(sv[1]);
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, carrier));
	defer_close(carrier[0]);
	defer_close(carrier[1]);
	SYS(dev = dev_open());
	defer_close(dev);
	SYS(send_fd(carrier[0], dev));	/* queued until the namespace takes it */
	p = (struct passed_dev){ .carrier = carrier[1], .sock = sv[1] };
	t_in_child(enters_sec_b_namespaces, &p);
	/* sent by now, or never: the child has exited */
	SYS(fcntl(carrier[0], F_SETFL, O_NONBLOCK));
	SYS(inner = recv_fd(carrier[0]));
	defer_close(inner);
	CHECK_INT(0, query_on(inner, sv[1], &q, path, sizeof(path)));
	CHECK_STR("/sec/a", path);
	CHECK_INT(cg_id("sec/a"), q.cgroup_id);
	CHECK_INT(getpid(), q.pid);
}

int main(int argc, char **argv)
{
	guest_begin("security", argc, argv);
	if (module_require())
		return 1;
	RUN(s_path_relative_to_caller_ns);
	RUN(s_other_process_fd);
	RUN(s_non_root_nothing_more);
	RUN(s_passed_fd_same_answer);
	RUN(s_passed_dev_fd_follows_the_caller);
	/* last: it reads the kernel log of everything before */
	RUN(s_no_kernel_pointers);
	return guest_end();
}
