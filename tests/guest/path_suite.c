// SPDX-License-Identifier: GPL-2.0
/*
 * Path lengths at every boundary: the module's buffers (512 on the stack,
 * PATH_MAX + 1 on the heap), the kernel's truncating formatters
 * (scnprintf on 6.1+, strlcpy on 5.10), powers of two and PATH_MAX.
 * Every answer is compared with the kernel's own truth: /proc/PID/cgroup
 * of the peer and stat() of its cgroup directory (st_ino == cgroup_id),
 * through the ioctl (path_size len + 1, len, 0), the library and the CLI,
 * from the accepting and the connecting end.  Paths longer than PATH_MAX
 * are built with mkdirat() from directory fds.  Runs as root in the guest
 * with cgroup2 at CGROOT.  Usage: path_suite [TEST]
 */
#include "guest.h"

#include <limits.h>
#include <poll.h>
#include <sys/mount.h>

#include "peercgroup.h"	/* the library's */

/* Longest path the module answers: PATH_MAX - 1 bytes + the NUL. */
#define LONGEST (PATH_MAX - 1)
#define CANARY 0xa5

/* ---- a chain of nested cgroups whose path has an exact length ---- */

struct chain {
	int depth;		/* directories below CGROOT */
	int *fd;		/* fd[0]: CGROOT; fd[i]: level i */
	char **name;		/* name[i]: level i (1..depth) */
	char *path;		/* as the root cgroup namespace reads it */
	size_t len;
};

static void chain_free(struct chain *c)
{
	for (int i = c->depth; i >= 1; i--) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		if (c->name[i])
			unlinkat(c->fd[i - 1], c->name[i], AT_REMOVEDIR);
		free(c->name[i]);
	}
	if (c->fd && c->fd[0] >= 0)
		close(c->fd[0]);
	free(c->fd);
	free(c->name);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

/*
 * Creates the cgroups for a path of exactly @len bytes ("/" for 1) below
 * @parent_fd (a cgroup directory; -1: CGROOT, whose own path @parent_path
 * is "" then), names of at most @maxname bytes, the first one starting
 * with @tag.  Returns 0 or -errno.
 */
static int chain_make_below(struct chain *c, int parent_fd, const char *parent_path,
			    size_t len, size_t maxname, const char *tag)
{
	size_t plen = strlen(parent_path), left, max = (len + 1) / 2 + 1;
	static const char fill[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	memset(c, 0, sizeof(*c));
	c->fd = calloc(max + 1, sizeof(*c->fd));
	c->name = calloc(max + 1, sizeof(*c->name));
	c->path = malloc(plen + len + 2);
	if (!c->fd || !c->name || !c->path)
		return -ENOMEM;
	c->fd[0] = parent_fd >= 0 ? dup(parent_fd) :
		open(CGROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->fd[0] < 0)
		return -errno;
	strcpy(c->path, parent_path);
	c->len = plen;
	left = len == 1 && !plen ? 0 : len;
	while (left > 0) {
		size_t n = left - 1 > maxname ? maxname : left - 1;
		int i = ++c->depth;
		char *nm;

		if (left - (n + 1) == 1)	/* a lone byte cannot be "/x" */
			n--;
		nm = malloc(n + 1);
		if (!nm)
			return -ENOMEM;
		for (size_t k = 0; k < n; k++)
			nm[k] = fill[(k + i * 7 + len) % (sizeof(fill) - 1)];
		nm[n] = 0;
		if (i == 1)
			memcpy(nm, tag, strlen(tag) < n ? strlen(tag) : n);
		c->name[i] = nm;
		c->fd[i] = -1;
		if (mkdirat(c->fd[i - 1], nm, 0755) && errno != EEXIST)
			return -errno;
		c->fd[i] = openat(c->fd[i - 1], nm, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c->fd[i] < 0)
			return -errno;
		c->path[c->len++] = '/';
		memcpy(c->path + c->len, nm, n);
		c->len += n;
		left -= n + 1;
	}
	if (!c->len)
		c->path[c->len++] = '/';
	c->path[c->len] = 0;
	return 0;
}

static int chain_make(struct chain *c, size_t len, const char *tag)
{
	return chain_make_below(c, -1, "", len, 255, tag);
}

static int chain_enter(const struct chain *c, pid_t pid)
{
	int fd = openat(c->fd[c->depth], "cgroup.procs", O_WRONLY | O_CLOEXEC);
	char s[32];
	int n, ret;

	if (fd < 0)
		return -1;
	n = snprintf(s, sizeof(s), "%d", (int)pid);
	ret = write(fd, s, n) == n ? 0 : -1;
	close(fd);
	return ret;
}

static uint64_t chain_id(const struct chain *c)
{
	struct stat st;

	return fstat(c->fd[c->depth], &st) ? 0 : (uint64_t)st.st_ino;
}

/* The 0:: line of /proc/PID/cgroup, any length; -errno if unreadable. */
static int proc_cgroup_long(pid_t pid, char *out, size_t size)
{
	char p[64], *buf, *l;
	size_t cap = 3 * PATH_MAX, n = 0;
	ssize_t r;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while ((r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += r;
	r = r < 0 ? -errno : 0;
	close(fd);
	buf[n] = 0;
	if (!r)
		r = -ENOENT;
	for (l = strtok(buf, "\n"); l && r == -ENOENT; l = strtok(NULL, "\n"))
		if (!strncmp(l, "0::", 3))
			r = snprintf(out, size, "%s", l + 3) < (int)size ? 0 : -ENOSPC;
	free(buf);
	return r;
}

/* ---- a peer in a chain: it listens there, and connects to us ---- */

struct peer {
	pid_t pid;
	int ctl;
	char lname[48];
};

static void peer_main(const struct chain *c, const char *lname, const char *sname, int ctl)
{
	struct pollfd pf[2];
	int lfd, cfd, status = 0;

	if (chain_enter(c, 0))
		status = -errno;
	lfd = status ? -1 : listen_on(lname, SOCK_STREAM);
	if (!status && lfd < 0)
		status = -errno;
	cfd = status ? -1 : connect_to(sname, SOCK_STREAM);
	if (!status && cfd < 0)
		status = -errno;
	if (write(ctl, &status, sizeof(status)) != sizeof(status) || status)
		_exit(1);
	/* accept and drop connections (the CLI waits for our end to close) */
	pf[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	pf[1] = (struct pollfd){ .fd = ctl, .events = POLLIN };
	while (poll(pf, 2, -1) >= 0) {
		if (pf[1].revents)
			_exit(0);
		if (pf[0].revents & POLLIN) {
			int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (a >= 0)
				close(a);
		}
	}
	_exit(0);
}

static int peer_start(struct peer *p, const struct chain *c, const char *sname)
{
	static int seq;
	int sv[2], status = -1;

	snprintf(p->lname, sizeof(p->lname), "pcg-path-%d-%d", (int)getpid(), seq++);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		close(sv[0]);
		peer_main(c, p->lname, sname, sv[1]);
	}
	close(sv[1]);
	p->ctl = sv[0];
	if (read(p->ctl, &status, sizeof(status)) != sizeof(status) || status) {
		errno = status < 0 ? -status : EIO;
		return -1;
	}
	return 0;
}

static void peer_stop(struct peer *p)
{
	if (p->pid <= 0)
		return;
	close(p->ctl);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

/*
 * A peer in a chain and both ends of it here: @acc, the socket we accepted
 * from its connect(), and @cli, ours connected to its listener (its listen()).
 */
struct peer_ends {
	struct peer p;
	int lfd, acc, cli;
};

static int ends_open(struct peer_ends *e, const struct chain *c)
{
	char sname[48];

	*e = (struct peer_ends){ .lfd = -1, .acc = -1, .cli = -1 };
	snprintf(sname, sizeof(sname), "pcg-path-srv-%d", (int)getpid());
	if ((e->lfd = listen_on(sname, SOCK_STREAM)) < 0 || peer_start(&e->p, c, sname) ||
	    (e->acc = accept4(e->lfd, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
	    (e->cli = connect_to(e->p.lname, SOCK_STREAM)) < 0)
		return -1;
	return 0;
}

static void ends_close(struct peer_ends *e)
{
	if (e->acc >= 0)
		close(e->acc);
	if (e->cli >= 0)
		close(e->cli);
	if (e->lfd >= 0)
		close(e->lfd);
	peer_stop(&e->p);
}

/* ---- the checks ---- */

static bool all_canary(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != CANARY)
			return false;
	return true;
}

/*
 * One raw query offering @size bytes at @buf (@null_path: a NULL pointer
 * instead), all @cap bytes of @buf a canary before.
 */
static int raw_query(int fd, struct peercgroup_query *q, unsigned char *buf,
		     size_t cap, size_t size, bool null_path)
{
	int dev = dev_open(), ret;

	if (dev < 0)
		return -errno;
	if (buf)
		memset(buf, CANARY, cap);
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->sockfd = fd;
	q->path = null_path ? 0 : (uintptr_t)buf;
	q->path_size = size;
	ret = ioctl(dev, PEERCGROUP_IOC_QUERY, q) ? -errno : 0;
	close(dev);
	return ret;
}

/*
 * The module's answer on @fd for a peer @pid in a cgroup whose path is
 * @want (NULL: longer than the module answers) and id @id, at path_size
 * len + 1, len and 0, and without the path.
 */
static void check_raw(const char *what, int fd, const char *want, size_t len,
		      uint64_t id, pid_t pid)
{
	size_t cap = len + 64;
	unsigned char *buf = malloc(cap);
	struct peercgroup_query q;
	int err;

	CHECK(buf, "malloc");
	if (want) {
		const char *bad;

		err = raw_query(fd, &q, buf, cap, len + 1, false);
		bad = err ? "-" : memcmp(buf, want, len + 1) ? "differs" :
		      !all_canary(buf + len + 1, cap - len - 1) ? "overran" : NULL;
		if (bad || q.path_len != len) {
			free(buf);
			FAIL("%s, len %zu, path_size len+1: err %d path_len %u, path %s",
			     what, len, err, q.path_len, bad ? bad : "ok");
		}
	} else {
		err = raw_query(fd, &q, buf, cap, len + 1, false);
		if (err != -ENAMETOOLONG || q.path_len || !all_canary(buf, cap)) {
			free(buf);
			FAIL("%s, len %zu: expected ENAMETOOLONG, path_len 0, buffer untouched; got err %d path_len %u",
			     what, len, err, q.path_len);
		}
		/* even with all the room a caller could give */
		err = raw_query(fd, &q, NULL, 0, UINT32_MAX, true);
		if (err != -ENAMETOOLONG) {
			free(buf);
			FAIL("%s, len %zu, path_size 4G, NULL path: err %d", what, len, err);
		}
	}
	if (q.cgroup_id != id || q.pid != pid) {
		free(buf);
		FAIL("%s, len %zu: id %llu pid %d, want id %llu pid %d", what, len,
		     (unsigned long long)q.cgroup_id, q.pid, (unsigned long long)id, (int)pid);
	}
	/* one byte short, and no room at all: ERANGE, exact length, no write */
	for (int k = 0; want && k < 3; k++) {
		size_t size = k == 0 ? len : 0;
		bool untouched;

		err = raw_query(fd, &q, buf, cap, size, k == 2);
		untouched = all_canary(buf, cap);
		if (err != -ERANGE || q.path_len != len || q.cgroup_id != id ||
		    q.pid != pid || !untouched) {
			free(buf);
			FAIL("%s, len %zu, path_size %zu%s: expected ERANGE with path_len %zu; got err %d path_len %u id %llu%s",
			     what, len, size, k == 2 ? " (NULL)" : "", len, err, q.path_len,
			     (unsigned long long)q.cgroup_id, untouched ? "" : ", buffer written");
		}
	}
	free(buf);
	err = query(fd, &q, NULL, 0);	/* PEERCGROUP_QUERY_NO_PATH */
	CHECK(!err && !q.path_len && q.cgroup_id == id && q.pid == pid,
	      "%s, len %zu, NO_PATH: err %d path_len %u id %llu", what, len, err, q.path_len,
	      (unsigned long long)q.cgroup_id);
}

/*
 * peercgroup_get_path_buf() on @fd: PATH_MAX always suffices; the exact
 * size fits; one byte short is ERANGE; the bytes past @size stay as they were.
 */
static void check_lib_buf(const char *what, int fd, const char *want, size_t len)
{
	static char buf[PATH_MAX + 1];
	int r;

	memset(buf, 'y', sizeof(buf));
	r = peercgroup_get_path_buf(fd, buf, PATH_MAX);
	if (!want) {
		CHECK(r == -ENAMETOOLONG && !buf[0],
		      "%s, len %zu: peercgroup_get_path_buf %d, want -ENAMETOOLONG", what, len, r);
		return;
	}
	CHECK(r >= 0 && (size_t)r == len && !strcmp(buf, want),
	      "%s, len %zu: peercgroup_get_path_buf(PATH_MAX) %d", what, len, r);
	memset(buf, 'y', sizeof(buf));
	r = peercgroup_get_path_buf(fd, buf, len + 1);
	CHECK(r >= 0 && (size_t)r == len && !strcmp(buf, want) && buf[len + 1] == 'y',
	      "%s, len %zu: peercgroup_get_path_buf(len + 1) %d", what, len, r);
	memset(buf, 'y', sizeof(buf));
	r = peercgroup_get_path_buf(fd, buf, len);
	CHECK(r == -ERANGE && !buf[0] && buf[1] == 'y',
	      "%s, len %zu: peercgroup_get_path_buf(len) %d, want -ERANGE, buffer \"\"", what,
	      len, r);
}

/* libpeercgroup on @fd: peercgroup_get, _get_path, _get_path_buf and _get_id. */
static void check_lib(const char *what, int fd, const char *want, size_t len,
		      uint64_t id, pid_t pid)
{
	struct peercgroup_info info;
	uint64_t got_id = 0;
	char *path = NULL;
	int r;

	r = peercgroup_get(fd, 0, &info);
	if (want) {
		CHECK(r == 0 && info.path && !strcmp(info.path, want) && info.path_len == len &&
		      info.cgroup_id == id && info.pid == pid,
		      "%s, len %zu: peercgroup_get %d path_len %zu id %llu pid %d", what, len, r,
		      info.path_len, (unsigned long long)info.cgroup_id, (int)info.pid);
	} else {
		struct peercgroup_class c = PEERCGROUP_CLASS_INIT;

		CHECK(r == -ENAMETOOLONG && !info.path,
		      "%s, len %zu: peercgroup_get %d, want -ENAMETOOLONG", what, len, r);
		/* nothing to classify, or to prove: the error passes through */
		r = peercgroup_peer_classify(fd, 0, &c);
		CHECK(r == -ENAMETOOLONG, "%s, len %zu: peercgroup_peer_classify %d", what, len, r);
	}
	peercgroup_info_free(&info);
	r = peercgroup_get_path(fd, &path);
	if (want)
		CHECK(r == 0 && path && !strcmp(path, want),
		      "%s, len %zu: peercgroup_get_path %d", what, len, r);
	else
		CHECK(r == -ENAMETOOLONG && !path,
		      "%s, len %zu: peercgroup_get_path %d, want -ENAMETOOLONG", what, len, r);
	free(path);
	check_lib_buf(what, fd, want, len);
	r = peercgroup_get_id(fd, &got_id);
	CHECK(r == 0 && got_id == id, "%s, len %zu: peercgroup_get_id %d id %llu", what,
	      len, r, (unsigned long long)got_id);
}

/* /bin/peercgroup --json ask @NAME: the listener's path and id, or an error. */
static void check_cli(const char *lname, const char *want, size_t len, uint64_t id)
{
	static char out[3 * PATH_MAX];
	char at[64], key[64], *p;
	size_t n = 0;
	ssize_t r;
	int pfd[2], status;
	pid_t pid;

	CHECK(access("/bin/peercgroup", X_OK) == 0, "/bin/peercgroup is missing");
	snprintf(at, sizeof(at), "@%s", lname);
	SYS(pipe2(pfd, O_CLOEXEC));
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		execl("/bin/peercgroup", "peercgroup", "--json", "ask", at, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (n < sizeof(out) - 1 && (r = read(pfd[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += r;
	out[n] = 0;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (!want) {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7 && strstr(out, "{\"error\":"),
		      "CLI, len %zu: status %#x, output %.200s", len, status, out);
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "CLI, len %zu: status %#x: %.200s",
	      len, status, out);
	snprintf(key, sizeof(key), "\"cgroup_id\":%llu,", (unsigned long long)id);
	CHECK(strstr(out, key), "CLI, len %zu: no %s in %.200s", len, key, out);
	p = strstr(out, "\"path\":\"");
	CHECK(p, "CLI, len %zu: no path in %.200s", len, out);
	p += strlen("\"path\":\"");
	CHECK(!strncmp(p, want, len) && p[len] == '"' && p[len + 1] && strchr(",}", p[len + 1]),
	      "CLI, len %zu: path differs: %.100s...", len, p);
}

/*
 * A peer in a cgroup whose path is @len bytes long, from both ends: the
 * socket we accepted from it (its connect()) and the one we connected to
 * its listener (its listen()).
 */
static void one_length(size_t len)
{
	struct chain c;
	struct peer_ends e;
	char what[64], *proc = NULL;
	const char *want;
	uint64_t id;
	int err;

	err = chain_make(&c, len, "pcg");
	if (err) {
		chain_free(&c);
		FAIL("len %zu: making the cgroups: %s", len, strerror(-err));
	}
	want = len <= LONGEST ? c.path : NULL;
	id = chain_id(&c);
	if (ends_open(&e, &c)) {
		t_failf(__FILE__, __LINE__, "len %zu: setup: %s", len, strerror(errno));
		goto out;
	}
	if (c.len != len || !id) {
		t_failf(__FILE__, __LINE__, "len %zu: the chain is %zu bytes, id %llu", len,
			c.len, (unsigned long long)id);
		goto out;
	}
	/* the kernel's own view: the test's premises */
	if (want) {
		proc = malloc(PATH_MAX + 64);
		err = proc ? proc_cgroup_long(e.p.pid, proc, PATH_MAX + 64) : -ENOMEM;
		if (err || strcmp(proc, want)) {
			t_failf(__FILE__, __LINE__, "len %zu: /proc/%d/cgroup: err %d, \"%.60s...\"",
				len, (int)e.p.pid, err, err ? "" : proc);
			goto out;
		}
	}
	snprintf(what, sizeof(what), "accepted");
	check_raw(what, e.acc, want, len, id, e.p.pid);
	check_lib(what, e.acc, want, len, id, e.p.pid);
	snprintf(what, sizeof(what), "client");
	check_raw(what, e.cli, want, len, id, e.p.pid);
	check_lib(what, e.cli, want, len, id, e.p.pid);
	check_cli(e.p.lname, want, len, id);
out:
	free(proc);
	ends_close(&e);
	chain_free(&c);
}

static const size_t lengths[] = {
	1, 2, 63, 64, 127, 128, 190, 191, 192, 193, 194, 253, 254, 255, 256, 257,
	511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4093, 4094, 4095,
	/* longer than the module answers */
	4096, 4097, 6000,
};

static void p_lengths(void)
{
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
		one_length(lengths[i]);
	printf("# lengths: %zu lengths from 1 to %zu, each at path_size len+1, len, 0 (and NULL), from both ends, ioctl + library + CLI\n",
	       sizeof(lengths) / sizeof(lengths[0]), lengths[sizeof(lengths) / sizeof(lengths[0]) - 1]);
}

/*
 * The realistic case of the bug report: a Kubernetes BestEffort pod under
 * the systemd driver, 193 bytes, came back cut to 191.
 */
static void p_kubepods_193(void)
{
	static const char *names[] = {
		"kubepods.slice", "kubepods-besteffort.slice",
		"kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8a9b_0c1d2e3f4a5b.slice",
		"cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
	};
	char path[512] = "", want[512] = "", got[512];
	struct peercgroup_query q;
	int sv[2], err;

	for (size_t i = 0; i < 4; i++) {
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s", i ? "/" : "",
			 names[i]);
		SYS(cg_create(path));
	}
	snprintf(want, sizeof(want), "/%s", path);
	CHECK_INT(193, strlen(want));
	SYS(cg_move(path, 0));
	err = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ? -errno : 0;
	cg_move("", 0);
	if (!err) {
		err = query(sv[0], &q, got, sizeof(got));
		close(sv[0]);
		close(sv[1]);
	}
	for (char *slash = path + strlen(path); slash; slash = strrchr(path, '/')) {
		*slash = 0;
		cg_remove(path);
	}
	CHECK_INT(0, err);
	CHECK_INT(193, q.path_len);
	CHECK_STR(want, got);
}

/* ---- a container's name at the end of the longest path ---- */

/* The container the library names for @fd, its flags and its live id. */
static void check_named(const char *what, int fd, bool proven, const char *want,
			uint64_t id)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	struct peercgroup_info info;
	enum peercgroup_runtime rt;
	char *name = NULL;
	int r;

	r = peercgroup_peer_get_container(fd, &rt, &name);
	if (proven)
		CHECK(r == 0 && rt == PEERCGROUP_RT_LXC && name && !strcmp(name, "pcglong"),
		      "%s: peercgroup_peer_get_container %d, runtime %d, \"%s\"", what, r,
		      (int)rt, name ? name : "(null)");
	else
		CHECK(r == -ENXIO && !name,
		      "%s: peercgroup_peer_get_container %d, want -ENXIO", what, r);
	free(name);
	r = peercgroup_peer_classify(fd, 0, &c);
	CHECK(r == 0 && c.runtime == PEERCGROUP_RT_LXC && !strcmp(c.id, "pcglong") &&
	      !(c.flags & PEERCGROUP_CT_UNPROVEN) == proven,
	      "%s: peercgroup_peer_classify %d, runtime %d, id \"%s\", flags %#x", what, r,
	      (int)c.runtime, c.id, c.flags);
	/* the live route finds the same directory, so it knows the id */
	r = peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info);
	CHECK(r == 0 && info.path && !strcmp(info.path, want) && info.cgroup_id == id,
	      "%s: live: %d, id %llu, want %llu", what, r,
	      (unsigned long long)(r ? 0 : info.cgroup_id), (unsigned long long)id);
	peercgroup_info_free(&info);
}

/* Both ends of a peer in the container, asked as check_named() does. */
struct named_ends {
	int acc, cli;
	bool proven;
	const char *want;
	uint64_t id;
	bool refuse_openat2;
};

static void check_named_ends(const struct named_ends *n)
{
	const char *acc = n->proven ? "accepted" : "accepted, parent 0775";
	const char *cli = n->proven ? "client" : "client, parent 0775";

	check_named(acc, n->acc, n->proven, n->want, n->id);
	check_named(cli, n->cli, n->proven, n->want, n->id);
}

/* A sandbox whose filter predates openat2(): every look-up is the walk. */
static void named_without_openat2(void *arg)
{
	refuse_syscall(SYS_openat2, ENOSYS);
	check_named_ends(arg);
}

static void ask_named(const struct named_ends *n)
{
	if (n->refuse_openat2)
		t_in_child(named_without_openat2, (void *)n);
	else
		check_named_ends(n);
}

/*
 * An LXC container's cgroup whose path is PATH_MAX - 1 bytes: the longest
 * the module answers.  With the mount point in front, no stat() by name
 * can reach it; the library must still prove who named it, and must
 * still refuse it once a user may write its parent.  With
 * @refuse_openat2, the name-by-name walk must find that path the same.
 */
static void named_at_path_max(bool refuse_openat2)
{
	static const char tail[] = "/lxc.payload.pcglong";
	struct chain parent, ct;
	struct peer_ends e = { .lfd = -1, .acc = -1, .cli = -1 };
	struct named_ends n;
	char *proc = NULL;
	uint64_t id;
	int err;

	err = chain_make(&parent, LONGEST - (sizeof(tail) - 1), "pcg");
	if (!err)
		err = chain_make_below(&ct, parent.fd[parent.depth], parent.path,
				       sizeof(tail) - 1, 255, tail + 1);
	else
		memset(&ct, 0, sizeof(ct));
	if (err) {
		chain_free(&ct);
		chain_free(&parent);
		FAIL("making the cgroups: %s", strerror(-err));
	}
	id = chain_id(&ct);
	if (ct.len != LONGEST || strcmp(ct.path + LONGEST - (sizeof(tail) - 1), tail) || !id) {
		t_failf(__FILE__, __LINE__, "the chain is %zu bytes, id %llu", ct.len,
			(unsigned long long)id);
		goto out;
	}
	if (ends_open(&e, &ct)) {
		t_failf(__FILE__, __LINE__, "setup: %s", strerror(errno));
		goto out;
	}
	proc = malloc(PATH_MAX + 64);
	err = proc ? proc_cgroup_long(e.p.pid, proc, PATH_MAX + 64) : -ENOMEM;
	if (err || strcmp(proc, ct.path)) {
		t_failf(__FILE__, __LINE__, "/proc/%d/cgroup: err %d", (int)e.p.pid, err);
		goto out;
	}
	n = (struct named_ends){ e.acc, e.cli, true, ct.path, id, refuse_openat2 };
	ask_named(&n);
	/* a parent others may write: the name may be theirs */
	if (fchmod(parent.fd[parent.depth], 0775)) {
		t_failf(__FILE__, __LINE__, "fchmod: %s", strerror(errno));
		goto out;
	}
	n.proven = false;
	ask_named(&n);
	fchmod(parent.fd[parent.depth], 0755);
out:
	free(proc);
	ends_close(&e);
	chain_free(&ct);
	chain_free(&parent);
}

static void p_named_at_path_max(void)
{
	named_at_path_max(false);
}

static void p_named_at_path_max_without_openat2(void)
{
	if (!have_seccomp_filters())
		SKIP("this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)");
	named_at_path_max(true);
}

/*
 * The same container PATH_MAX - 1 bytes below a cgroup namespace's root:
 * past PATH_MAX from the host, where the module says ENAMETOOLONG (with
 * the id), and the longest path inside.  A daemon there, which received
 * both ends by SCM_RIGHTS and mounted cgroup2 as its namespace shows it,
 * gets the path whole from the record, the same path with the right id
 * from the live route, and the container proven through its own mount.
 */
struct ns_longest {
	const struct chain *nsroot;
	int via;		/* both ends arrive here, the accepted one first */
	const char *want;	/* the path inside: LONGEST bytes */
	uint64_t id;
	pid_t pid;
};

static void ns_longest_inside(void *arg)
{
	const struct ns_longest *k = arg;
	char *proc = malloc(PATH_MAX + 64);
	int acc, cli, err;

	CHECK(proc, "malloc");
	SYS(chain_enter(k->nsroot, 0));
	SYS(enter_cgroup_namespace(0));
	SYS(acc = recv_fd(k->via));
	SYS(cli = recv_fd(k->via));
	err = proc_cgroup_long(k->pid, proc, PATH_MAX + 64);
	CHECK(!err && strlen(proc) == LONGEST && !strcmp(proc, k->want),
	      "/proc/%d/cgroup inside: err %d, %zu bytes", (int)k->pid, err,
	      err ? 0 : strlen(proc));
	free(proc);
	check_raw("inside, accepted", acc, k->want, LONGEST, k->id, k->pid);
	check_raw("inside, client", cli, k->want, LONGEST, k->id, k->pid);
	check_named("inside, accepted", acc, true, k->want, k->id);
	check_named("inside, client", cli, true, k->want, k->id);
}

static void p_named_at_path_max_in_cgroup_ns(void)
{
	static const char tail[] = "/lxc.payload.pcglong";
	struct chain nsroot, parent, ct;
	struct peer_ends e = { .lfd = -1, .acc = -1, .cli = -1 };
	struct ns_longest k;
	char *proc = NULL;
	int err, sv[2] = { -1, -1 };

	memset(&parent, 0, sizeof(parent));
	memset(&ct, 0, sizeof(ct));
	err = chain_make(&nsroot, 32, "pcgnsroot");
	if (!err)
		err = chain_make_below(&parent, nsroot.fd[nsroot.depth], nsroot.path,
				       LONGEST - (sizeof(tail) - 1), 255, "pcg");
	if (!err)
		err = chain_make_below(&ct, parent.fd[parent.depth], parent.path,
				       sizeof(tail) - 1, 255, tail + 1);
	if (err) {
		chain_free(&ct);
		chain_free(&parent);
		chain_free(&nsroot);
		FAIL("making the cgroups: %s", strerror(-err));
	}
	k = (struct ns_longest){ &nsroot, -1, ct.path + nsroot.len, chain_id(&ct), 0 };
	if (ct.len != nsroot.len + LONGEST || strlen(k.want) != LONGEST || !k.id ||
	    strcmp(k.want + LONGEST - (sizeof(tail) - 1), tail)) {
		t_failf(__FILE__, __LINE__, "the chain is %zu bytes, id %llu", ct.len,
			(unsigned long long)k.id);
		goto out;
	}
	if (ends_open(&e, &ct) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ||
	    send_fd(sv[0], e.acc) || send_fd(sv[0], e.cli)) {
		t_failf(__FILE__, __LINE__, "setup: %s", strerror(errno));
		goto out;
	}
	k.via = sv[1];
	k.pid = e.p.pid;
	printf("# ns: %zu bytes from the host, %zu inside\n", ct.len, strlen(k.want));
	/* the host's view: too long for /proc (5.10; 6.1+ may cut it) and the module */
	proc = malloc(PATH_MAX + 64);
	err = proc ? proc_cgroup_long(e.p.pid, proc, PATH_MAX + 64) : -ENOMEM;
	if (err != -ENAMETOOLONG && (err || strlen(proc) > LONGEST))
		t_failf(__FILE__, __LINE__, "/proc/%d/cgroup on the host: err %d",
			(int)e.p.pid, err);
	check_raw("host, accepted", e.acc, NULL, ct.len, k.id, k.pid);
	check_raw("host, client", e.cli, NULL, ct.len, k.id, k.pid);
	check_lib("host, accepted", e.acc, NULL, ct.len, k.id, k.pid);
	t_in_child(ns_longest_inside, &k);
out:
	free(proc);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	ends_close(&e);
	chain_free(&ct);
	chain_free(&parent);
	chain_free(&nsroot);
}

/* ---- paths relative to a cgroup namespace: "/.." parts of any length ---- */

struct ns_case {
	const char *what;
	size_t up;		/* levels from the namespace root up to CGROOT */
	size_t below;		/* length of the peer's path below CGROOT */
};

struct ns_ask {
	const struct chain *root;	/* the namespace root: its deepest cgroup */
	int fd;				/* a socket whose peer is beside it */
	const char *want;		/* NULL: longer than the module answers */
	size_t len;
	uint64_t id;
	pid_t pid;
};

/*
 * In a child: enter the namespace root, unshare the cgroup namespace
 * there, and ask, comparing with /proc/PID/cgroup read from inside.
 */
static void ns_ask(void *arg)
{
	const struct ns_ask *k = arg;
	size_t cap = k->len + 64;
	unsigned char *buf = malloc(cap);
	char *proc = malloc(PATH_MAX + 64);
	struct peercgroup_query q;
	struct peercgroup_info info;
	int err, perr;

	CHECK(buf && proc, "malloc");
	SYS(chain_enter(k->root, 0));
	SYS(unshare(CLONE_NEWCGROUP));
	perr = proc_cgroup_long(k->pid, proc, PATH_MAX + 64);
	if (k->want)
		CHECK(!perr && !strcmp(proc, k->want),
		      "/proc/%d/cgroup: err %d \"%.80s...\", built \"%.80s...\"", (int)k->pid,
		      perr, perr ? "" : proc, k->want);
	/* 5.10 says ENAMETOOLONG; 6.1+ too, or silently cuts the names part */
	else
		CHECK(perr == -ENAMETOOLONG || (!perr && strlen(proc) <= LONGEST),
		      "/proc/%d/cgroup: err %d, a path of %zu bytes", (int)k->pid, perr,
		      perr ? 0 : strlen(proc));
	err = raw_query(k->fd, &q, buf, cap, k->len + 1, false);
	if (k->want)
		CHECK(!err && q.path_len == k->len && !memcmp(buf, k->want, k->len + 1) &&
		      all_canary(buf + k->len + 1, cap - k->len - 1),
		      "path_size len+1: err %d path_len %u", err, q.path_len);
	else
		CHECK(err == -ENAMETOOLONG && !q.path_len && all_canary(buf, cap),
		      "want ENAMETOOLONG: err %d path_len %u", err, q.path_len);
	CHECK(q.cgroup_id == k->id && q.pid == k->pid, "id %llu pid %d",
	      (unsigned long long)q.cgroup_id, q.pid);
	for (int i = 0; k->want && i < 2; i++) {
		err = raw_query(k->fd, &q, buf, cap, i ? 0 : k->len, false);
		CHECK(err == -ERANGE && q.path_len == k->len && all_canary(buf, cap),
		      "path_size %zu: err %d path_len %u", i ? 0 : k->len, err, q.path_len);
	}
	err = peercgroup_get(k->fd, 0, &info);
	if (k->want)
		CHECK(!err && !strcmp(info.path, k->want) && info.path_len == k->len,
		      "peercgroup_get: %d", err);
	else
		CHECK_INT(-ENAMETOOLONG, err);
	peercgroup_info_free(&info);
	check_lib_buf("ns", k->fd, k->want, k->len);
}

static void one_ns_case(const struct ns_case *k)
{
	struct chain root, peerc;
	struct peer p = { 0 };
	char sname[48], *want = NULL;
	size_t len;
	int lfd = -1, acc = -1, cli = -1, err;

	snprintf(sname, sizeof(sname), "pcg-path-ns-%d", (int)getpid());
	/* the namespace root: one-byte names, @up + 1 levels deep */
	err = chain_make_below(&root, -1, "", 2 * k->up + 2, 1, "n");
	if (!err)
		err = chain_make(&peerc, k->below, "pcgpeer");
	if (err) {
		chain_free(&root);
		chain_free(&peerc);
		FAIL("%s: making the cgroups: %s", k->what, strerror(-err));
	}
	len = 3 * (size_t)root.depth + peerc.len;
	if (len <= LONGEST) {
		want = malloc(len + 1);
		if (!want)
			abort();
		for (int i = 0; i < root.depth; i++)
			memcpy(want + 3 * i, "/..", 3);
		strcpy(want + 3 * root.depth, peerc.path);
	}
	if ((lfd = listen_on(sname, SOCK_STREAM)) < 0 || peer_start(&p, &peerc, sname) ||
	    (acc = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
	    (cli = connect_to(p.lname, SOCK_STREAM)) < 0) {
		t_failf(__FILE__, __LINE__, "%s: setup: %s", k->what, strerror(errno));
	} else {
		/* beside the namespace root: its path, never its id */
		struct ns_ask a = { &root, acc, want, len, 0, p.pid };

		printf("# ns %s: \"/..\" x %d + %zu bytes = %zu bytes\n", k->what, root.depth,
		       peerc.len, len);
		printf("# ns %s: the accepting end\n", k->what);
		t_in_child(ns_ask, &a);
		printf("# ns %s: the connecting end\n", k->what);
		a.fd = cli;
		t_in_child(ns_ask, &a);
	}
	if (acc >= 0)
		close(acc);
	if (cli >= 0)
		close(cli);
	if (lfd >= 0)
		close(lfd);
	peer_stop(&p);
	chain_free(&root);
	chain_free(&peerc);
	free(want);
}

/*
 * The live route reads /proc/PID/cgroup, which 6.1 and later cut at
 * PATH_MAX - 1 bytes without saying so (5.10 says ENAMETOOLONG).  A peer
 * 4,135 bytes deep, whose last name, starting with @tag, runs past the
 * cut: the live answer must be ENAMETOOLONG, as the module's is.  With
 * @neighbour, beside it is a cgroup named what the cut leaves of it.
 */
static void live_refuses_a_cut(const char *tag, bool neighbour)
{
	struct peer_ends e = { .lfd = -1, .acc = -1, .cli = -1 };
	struct chain parent, ct;
	struct peercgroup_info info = { 0 };
	char *proc = NULL, *near = NULL;
	struct stat st = { 0 };
	size_t keep;
	int err, r;

	memset(&ct, 0, sizeof(ct));
	err = chain_make(&parent, LONGEST - 20, "pcg");
	if (!err)
		err = chain_make_below(&ct, parent.fd[parent.depth], parent.path, 60, 255, tag);
	keep = LONGEST - parent.len - 1;	/* of the last name, before the cut */
	if (!err && !(near = strndup(ct.name[ct.depth], keep)))
		err = -ENOMEM;
	if (!err && neighbour && (mkdirat(parent.fd[parent.depth], near, 0755) ||
				  fstatat(parent.fd[parent.depth], near, &st, 0)))
		err = -errno;
	if (err) {
		t_failf(__FILE__, __LINE__, "making the cgroups: %s", strerror(-err));
		goto out;
	}
	if (ends_open(&e, &ct)) {
		t_failf(__FILE__, __LINE__, "setup: %s", strerror(errno));
		goto out;
	}
	proc = malloc(PATH_MAX + 64);
	err = proc ? proc_cgroup_long(e.p.pid, proc, PATH_MAX + 64) : -ENOMEM;
	printf("# /proc/%d/cgroup: %s, %zu bytes, ending \"%s\"\n", (int)e.p.pid,
	       strerror(-err), err ? 0 : strlen(proc),
	       err || strlen(proc) < keep ? "" : proc + strlen(proc) - keep);
	r = peercgroup_get(e.acc, PEERCGROUP_GET_LIVE, &info);
	if (r != -ENAMETOOLONG) {
		t_failf(__FILE__, __LINE__,
			"live: %d, path of %zu bytes, id %llu, flags %#x; the neighbour's id is %llu",
			r, info.path ? strlen(info.path) : 0, (unsigned long long)info.cgroup_id,
			info.flags, (unsigned long long)st.st_ino);
		goto out;
	}
	r = peercgroup_get(e.acc, 0, &info);
	if (r != -ENAMETOOLONG)
		t_failf(__FILE__, __LINE__, "from the module: %d, want -ENAMETOOLONG", r);
out:
	peercgroup_info_free(&info);
	ends_close(&e);
	free(proc);
	if (near && neighbour)
		unlinkat(parent.fd[parent.depth], near, AT_REMOVEDIR);
	free(near);
	chain_free(&ct);
	chain_free(&parent);
}

static void p_live_refuses_the_path_proc_cut(void)
{
	live_refuses_a_cut("lxc.payload.pcgcut", true);
	/*
	 * A live cgroup named so that the cut ends in " (deleted)", /proc's
	 * mark of a removed cgroup: what is left once it is taken off names
	 * nothing, as a removed cgroup's path does.
	 */
	live_refuses_a_cut("pcgcut.xx (deleted)", false);
}

/*
 * /proc shows a removed cgroup as its path and " (deleted)".  A removed
 * cgroup of 4,084 bytes makes a 4,094-byte line, short of 6.1's cut: the
 * live answer is that cgroup, removed.  At 4,085 bytes the line is 4,095,
 * what a cut gives too: ENAMETOOLONG, on every kernel alike.
 */
static void live_removed_of_length(size_t len, int want)
{
	struct peer_ends e = { .lfd = -1, .acc = -1, .cli = -1 };
	struct peercgroup_info info = { 0 };
	struct chain c;
	siginfo_t si;
	int err, r;

	err = chain_make(&c, len, "pcgrm");
	if (err) {
		t_failf(__FILE__, __LINE__, "making %zu bytes of cgroups: %s", len, strerror(-err));
		goto out;
	}
	if (ends_open(&e, &c) || kill(e.p.pid, SIGKILL) ||
	    waitid(P_PID, e.p.pid, &si, WEXITED | WNOWAIT) ||	/* a zombie, in it */
	    unlinkat(c.fd[c.depth - 1], c.name[c.depth], AT_REMOVEDIR)) {
		t_failf(__FILE__, __LINE__, "%zu bytes: setup: %s", len, strerror(errno));
		goto out;
	}
	r = peercgroup_get(e.acc, PEERCGROUP_GET_LIVE, &info);
	printf("# a removed cgroup of %zu bytes: live %d, path of %zu bytes, flags %#x\n",
	       len, r, info.path ? strlen(info.path) : 0, info.flags);
	if (r != want)
		t_failf(__FILE__, __LINE__, "%zu bytes: live %d, want %d", len, r, want);
	else if (!r && (strcmp(info.path, c.path) || info.cgroup_id ||
			!(info.flags & PEERCGROUP_INFO_CGROUP_REMOVED)))
		t_failf(__FILE__, __LINE__, "%zu bytes: path of %zu bytes, id %llu, flags %#x",
			len, strlen(info.path), (unsigned long long)info.cgroup_id, info.flags);
out:
	peercgroup_info_free(&info);
	ends_close(&e);
	chain_free(&c);
}

static void p_live_removed_at_the_cut(void)
{
	live_removed_of_length(LONGEST - 11, 0);
	live_removed_of_length(LONGEST - 10, -ENAMETOOLONG);
}

/*
 * A FIFO bound on the cgroup.threads of a peer whose path is PATH_MAX - 1
 * bytes, the one file the live route reads to prove such a path: the
 * answer comes (the walk opens it without waiting for a writer; a hang
 * is the suite's timeout) and is ENAMETOOLONG, as for any path it cannot
 * prove, both where openat2() refuses the mount and the walk takes over
 * and where a seccomp filter refuses openat2() itself.
 */
struct threads_fifo {
	const char *path;	/* the peer's cgroup, LONGEST bytes */
	int fd;
	uint64_t id;
	bool refuse_openat2;
};

static void live_with_fifo_on_threads(void *arg)
{
	const struct threads_fifo *f = arg;
	struct peercgroup_info info;
	char threads[64];
	int root, dir, fd, r;

	/* a library that blocks on the FIFO ends here, not at the suite's timeout */
	alarm(30);
	SYS(enter_mount_namespace(0));
	if (f->refuse_openat2)
		refuse_syscall(SYS_openat2, ENOSYS);
	/* the premise: the path is proven through cgroup.threads */
	r = peercgroup_get(f->fd, PEERCGROUP_GET_LIVE, &info);
	CHECK(r == 0 && info.path && !strcmp(info.path, f->path) && info.cgroup_id == f->id,
	      "before the FIFO: live %d, id %llu, want %llu", r,
	      (unsigned long long)(r ? 0 : info.cgroup_id), (unsigned long long)f->id);
	peercgroup_info_free(&info);
	/* made after unshare(): a bind mount's source must be in our namespace */
	SYS(mount("pcg-fifo", "/tmp", "tmpfs", 0, "size=4k"));
	SYS(mkfifo("/tmp/threads", 0600));
	/* the target too; CGROOT and the path together pass PATH_MAX */
	SYS(root = open(CGROOT, O_PATH | O_DIRECTORY | O_CLOEXEC));
	SYS(dir = openat(root, f->path + 1, O_PATH | O_DIRECTORY | O_CLOEXEC));
	SYS(fd = openat(dir, "cgroup.threads", O_PATH | O_CLOEXEC));
	snprintf(threads, sizeof(threads), "/proc/self/fd/%d", fd);
	SYS(mount("/tmp/threads", threads, NULL, MS_BIND, NULL));
	r = peercgroup_get(f->fd, PEERCGROUP_GET_LIVE, &info);
	CHECK(r == -ENAMETOOLONG && !info.path && !info.cgroup_id,
	      "a FIFO on cgroup.threads%s: live %d, id %llu, want -ENAMETOOLONG",
	      f->refuse_openat2 ? ", openat2() refused" : "", r,
	      (unsigned long long)info.cgroup_id);
}

static void p_live_fifo_on_cgroup_threads(void)
{
	struct peer_ends e = { .lfd = -1, .acc = -1, .cli = -1 };
	struct threads_fifo f;
	struct chain c;
	int err;

	err = chain_make(&c, LONGEST, "pcgfifo");
	if (err) {
		t_failf(__FILE__, __LINE__, "making the cgroups: %s", strerror(-err));
		goto out;
	}
	if (c.len != LONGEST || ends_open(&e, &c)) {
		t_failf(__FILE__, __LINE__, "setup: %zu bytes: %s", c.len, strerror(errno));
		goto out;
	}
	f = (struct threads_fifo){ c.path, e.acc, chain_id(&c), false };
	t_in_child(live_with_fifo_on_threads, &f);
	if (!have_seccomp_filters()) {
		printf("# fifo: no seccomp filters here: openat2() refused not tried\n");
		goto out;
	}
	f.refuse_openat2 = true;
	t_in_child(live_with_fifo_on_threads, &f);
out:
	ends_close(&e);
	chain_free(&c);
}

static void p_cgroup_namespace(void)
{
	/* total = 3 * (up + 1) + below */
	static const struct ns_case cases[] = {
		{ "short", 2, 20 },
		{ "191", 9, 161 },
		{ "192", 9, 162 },
		{ "254", 9, 224 },
		{ "255", 9, 225 },
		{ "256", 9, 226 },
		/* the module's stack buffer */
		{ "510", 9, 480 },
		{ "511", 9, 481 },
		{ "512", 9, 482 },
		/* the "/.." part alone overflows a 256-byte buffer (E2BIG on 6.1+) */
		{ "dotdot 300", 99, 20 },
		/* ... and the module's stack buffer */
		{ "dotdot 600", 199, 20 },
		{ "4095", 99, 3795 },
		{ "4096", 99, 3796 },
		/* the "/.." part alone is longer than PATH_MAX */
		{ "dotdot over PATH_MAX", 1400, 20 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		one_ns_case(&cases[i]);
}

int main(int argc, char **argv)
{
	guest_begin("path", argc, argv);
	if (module_require())
		return 1;
	RUN(p_lengths);
	RUN(p_kubepods_193);
	RUN(p_named_at_path_max);
	RUN(p_named_at_path_max_without_openat2);
	RUN(p_named_at_path_max_in_cgroup_ns);
	RUN(p_live_refuses_the_path_proc_cut);
	RUN(p_live_removed_at_the_cut);
	RUN(p_live_fifo_on_cgroup_threads);
	RUN(p_cgroup_namespace);
	return guest_end();
}
