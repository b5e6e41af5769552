// SPDX-License-Identifier: GPL-2.0
/*
 * Callers in other namespaces: a caller never learns more about a peer
 * than SO_PEERCRED, /proc and its own cgroupfs view tell it.
 *
 * The matrix: callers in {the host's, a container's} pid namespace x
 * {the host's, a container's} cgroup namespace, and a rootless
 * container's (nobody, root of a user namespace of its own), ask about
 * peers in
 * {the host's, the container's} pid namespace x {inside, outside} the
 * container's cgroup namespace, from both ends of each connection (the
 * socket accepted from the peer's connect(), the socket connected to the
 * peer's listen()), and about socketpairs.  Every socket reaches every
 * caller by SCM_RIGHTS, and each caller also connects to each peer
 * itself.  Expected, for each (caller, peer):
 *  - withheld (EREMOTE, nothing written, the library says -EREMOTE) when
 *    the peer's pid has no number in the caller's pid namespace AND its
 *    cgroup is outside the caller's cgroup namespace; the callers but
 *    the rootless one are root with CAP_SYS_ADMIN, so no capability
 *    overrides this, and the rootless one is told the same;
 *  - otherwise the answer: pid == SO_PEERCRED's (0 when not visible),
 *    path as /proc/PID/cgroup reads from the caller ("/../host" or
 *    "/app" inside the container's cgroup namespace), cgroup id ==
 *    st_ino of the cgroup directory, and == the id the kernel's own
 *    PIDFD_GET_INFO (6.13+) gives the caller for a visible pid, cgroup
 *    namespace or not.
 * Runs as root in the guest with cgroup2 at CGROOT.  Usage: ns_suite [TEST]
 */
#include "guest.h"

#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#include "peercgroup.h"	/* the library's */

#define CG_TOP "pcgns"
#define CG_BOX "pcgns/box"		/* the container's cgroup namespace root */
#define CG_APP "pcgns/box/app"		/* inside it */
#define CG_HOST "pcgns/host"		/* outside it */

/*
 * PIDFD_GET_INFO and the first version of its struct (<linux/pidfd.h>,
 * Linux 6.13), which the build machine's headers may predate.
 */
struct kernel_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	uint32_t spare0;
};
#define KERNEL_PIDFD_INFO_CGROUPID (1ULL << 2)
#define KERNEL_PIDFD_GET_INFO _IOWR(0xFF, 11, struct kernel_pidfd_info)

/* ---- who: peers and callers ---- */

enum { PEERS = 4 };
struct peer_kind {
	bool box_pid;		/* made in the container's pid namespace */
	const char *cg;		/* CG_APP (inside) or CG_HOST (outside) */
};
static const struct peer_kind peer_kinds[PEERS] = {
	{ false, CG_HOST }, { false, CG_APP }, { true, CG_HOST }, { true, CG_APP },
};

enum { CALLERS = 5 };
struct caller_kind {
	bool box_pid;		/* runs in the container's pid namespace */
	bool box_cgns;		/* unshares a cgroup namespace at CG_BOX */
	bool userns;		/* as nobody, root of a user namespace of its own */
	const char *what;
};
static const struct caller_kind caller_kinds[CALLERS] = {
	{ false, false, false, "host caller" },
	{ false, true, false, "host pid ns, container cgroup ns" },
	{ true, false, false, "container pid ns, host cgroup ns" },
	{ true, true, false, "container caller" },
	{ true, true, true, "rootless container caller" },
};

/*
 * The sockets each caller is asked about: per peer the accepted end and
 * the client end (both passed), then two socketpairs made by the test in
 * CG_HOST and CG_APP (passed), then per peer a connection the caller
 * makes itself.
 */
enum { PASSED = 2 * PEERS + 2, ASKED = PASSED + PEERS };

struct origin {
	pid_t host_pid;		/* the peer's pid in the host's pid namespace */
	pid_t box_pid;		/* in the container's, 0 if none */
	const char *cg;
	char lname[48];		/* the peer's listener */
};

struct answer {
	int err;		/* ioctl with a path buffer */
	int err_nopath;		/* ioctl with PEERCGROUP_QUERY_NO_PATH */
	int lib_err;		/* peercgroup_get() */
	int proc_err;		/* reading /proc/PID/cgroup, when pid != 0 */
	int pidfd_err;		/* PIDFD_GET_INFO's cgroup id, when pid != 0 */
	uint64_t pidfd_cgroup_id;
	bool untouched;		/* the path buffer, on failure */
	pid_t cred_pid;		/* SO_PEERCRED, as the caller sees it */
	struct peercgroup_query q, qn;
	char path[128], lib_path[128], proc[128];
};

/*
 * The write end of the pipe the peers wait on: every child closes its copy
 * first, so that the test closing its own ends them all.
 */
static int end_writer = -1;

static void child_init(void)
{
	if (end_writer >= 0)
		close(end_writer);
}

/* ---- the peer: listens in its cgroup and connects to the test ---- */

static void peer_main(int idx, const char *sname, const char *lname, int ready, int end)
{
	int lfd, cfd, status = 0;
	char b = (char)idx;

	child_init();
	if (cg_move(peer_kinds[idx].cg, 0))
		status = -errno;
	lfd = status ? -1 : listen_on(lname, SOCK_STREAM);
	if (!status && lfd < 0)
		status = -errno;
	cfd = status ? -1 : connect_to(sname, SOCK_STREAM);
	if (!status && cfd < 0)
		status = -errno;
	/* tell the test which peer this connection is */
	if (!status && write(cfd, &b, 1) != 1)
		status = -EIO;
	{
		int msg[3] = { idx, (int)getpid(), status };

		if (write(ready, msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
	}
	/* lives until the test closes @end */
	while (read(end, &b, 1) > 0)
		;
	_exit(0);
}

/* ---- the caller ---- */

/*
 * The cgroup id the kernel itself gives this caller for @pid, from a pidfd
 * (PIDFD_GET_INFO): -ENOTTY before 6.13 (-EINVAL on 6.9 to 6.12, whose
 * pidfd ioctls take no argument).
 */
static int pidfd_cgroup_id(pid_t pid, uint64_t *id)
{
	struct kernel_pidfd_info info = { .mask = KERNEL_PIDFD_INFO_CGROUPID };
	int pidfd, err = 0;

	if (pid <= 0)
		return -ESRCH;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	if (ioctl(pidfd, KERNEL_PIDFD_GET_INFO, &info))
		err = -errno;
	else if (!(info.mask & KERNEL_PIDFD_INFO_CGROUPID))
		err = -ENODATA;
	close(pidfd);
	*id = info.cgroupid;
	return err;
}

static void ask(int fd, struct answer *a)
{
	struct peercgroup_info info;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	memset(a, 0, sizeof(*a));
	memset(a->path, 0x5a, sizeof(a->path));
	a->err = query(fd, &a->q, a->path, sizeof(a->path));
	a->untouched = true;
	for (size_t i = 0; i < sizeof(a->path); i++)
		a->untouched &= (unsigned char)a->path[i] == 0x5a;
	if (a->err)
		a->path[0] = 0;
	a->path[sizeof(a->path) - 1] = 0;
	a->err_nopath = query(fd, &a->qn, NULL, 0);
	a->cred_pid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ? -1 : cred.pid;
	a->lib_err = peercgroup_get(fd, 0, &info);
	if (!a->lib_err)
		snprintf(a->lib_path, sizeof(a->lib_path), "%s", info.path);
	peercgroup_info_free(&info);
	a->proc_err = -ESRCH;
	if (a->cred_pid > 0)
		a->proc_err = proc_cgroup(a->cred_pid, a->proc, sizeof(a->proc)) ? -errno : 0;
	a->pidfd_err = pidfd_cgroup_id(a->cred_pid, &a->pidfd_cgroup_id);
}

/*
 * Drops to nobody (65534), then unshares a user namespace where it is
 * root (uid and gid 0 map to 65534), as a rootless container's process
 * is: it has every capability there, none over the host's namespaces.
 */
static int enter_user_namespace_as_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534) || prctl(PR_SET_DUMPABLE, 1) ||
	    unshare(CLONE_NEWUSER))
		return -1;
	return write_file("/proc/self/setgroups", "deny") ||
	       write_file("/proc/self/uid_map", "0 65534 1") ||
	       write_file("/proc/self/gid_map", "0 65534 1") ? -1 : 0;
}

/*
 * Enters its namespaces, receives the passed sockets on @carrier, asks
 * about each, connects to each peer's listener and asks again, and sends
 * the answers back.
 */
static void caller_main(const struct caller_kind *k, int carrier, const struct origin *o)
{
	struct answer a[ASKED];
	int fds[PASSED];
	char cmsgbuf[CMSG_SPACE(sizeof(fds))], b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cmsgbuf, .msg_controllen = sizeof(cmsgbuf) };
	struct cmsghdr *cm;
	int err = 0;

	child_init();
	if (k->box_cgns && cg_move(CG_BOX, 0))
		err = -errno;
	/* a /proc of its own pid namespace, as a container has */
	if (!err && k->box_pid &&
	    (enter_mount_namespace(0) || mount("proc", "/proc", "proc", 0, NULL)))
		err = -errno;
	if (!err && k->userns && enter_user_namespace_as_nobody())
		err = -errno;
	if (!err && k->box_cgns && unshare(CLONE_NEWCGROUP))
		err = -errno;
	if (recvmsg(carrier, &mh, MSG_CMSG_CLOEXEC) != 1 || !(cm = CMSG_FIRSTHDR(&mh)) ||
	    cm->cmsg_len != CMSG_LEN(sizeof(fds)))
		_exit(2);
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	memset(a, 0, sizeof(a));
	for (int i = 0; i < PASSED && !err; i++)
		ask(fds[i], &a[i]);
	for (int i = 0; i < PEERS && !err; i++) {
		int fd = connect_to(o[i].lname, SOCK_STREAM);

		if (fd < 0) {
			err = -errno;
			break;
		}
		ask(fd, &a[PASSED + i]);
		close(fd);
	}
	if (write(carrier, &err, sizeof(err)) != sizeof(err) ||
	    write(carrier, a, sizeof(a)) != sizeof(a))
		_exit(3);
	_exit(0);
}

/* ---- the container: a pid namespace whose init spawns the box ends ---- */

static void box_init(const char *sname, struct origin *o, int ready, int end,
		     const int *carriers)
{
	int n = 0;

	for (int i = 0; i < PEERS; i++) {
		if (!peer_kinds[i].box_pid)
			continue;
		if (fork() == 0)
			peer_main(i, sname, o[i].lname, ready, end);
		n++;
	}
	for (int i = 0; i < CALLERS; i++) {
		if (!caller_kinds[i].box_pid)
			continue;
		if (fork() == 0)
			caller_main(&caller_kinds[i], carriers[i], o);
		n++;
	}
	while (n > 0 && wait(NULL) > 0)
		n--;
	_exit(0);
}

/* ---- the test ---- */

struct setup {
	struct origin o[PEERS];
	int lfd, ready[2], end[2];
	int carrier[CALLERS][2];
	int passed[PASSED];
	pid_t kids[PEERS + CALLERS + 1];
	int nkids;
	uint64_t id_app, id_host;
};

static void setup_free(struct setup *s)
{
	if (s->end[1] >= 0)
		close(s->end[1]);
	end_writer = -1;
	for (int i = 0; i < CALLERS; i++)
		if (s->carrier[i][0] >= 0)
			close(s->carrier[i][0]);
	for (int i = 0; i < s->nkids; i++)
		waitpid(s->kids[i], NULL, 0);
	for (int i = 0; i < PASSED; i++)
		if (s->passed[i] >= 0)
			close(s->passed[i]);
	if (s->lfd >= 0)
		close(s->lfd);
	cg_move("", 0);
	cg_remove(CG_APP);
	cg_remove(CG_BOX);
	cg_remove(CG_HOST);
	cg_remove(CG_TOP);
}

/* What caller @c must get about peer @p (box_pid/cg of the origin). */
static void expect(const struct caller_kind *c, bool peer_box_pid, pid_t host_pid,
		   pid_t box_pid, const char *cg, int *err, pid_t *pid, char *path, size_t size)
{
	bool inside = !c->box_cgns || !strcmp(cg, CG_APP);

	*pid = c->box_pid ? (peer_box_pid ? box_pid : 0) : host_pid;
	*err = *pid || inside ? 0 : -EREMOTE;
	if (!c->box_cgns)
		snprintf(path, size, "/%s", cg);
	else
		snprintf(path, size, "%s", inside ? "/app" : "/../host");
}

/* @moved: the peer left @cg since, so /proc no longer shows it there. */
static void check_answer(const struct caller_kind *c, const char *sock, const struct answer *a,
			 bool peer_box_pid, pid_t host_pid, pid_t box_pid, const char *cg,
			 uint64_t id, bool moved)
{
	char want[64];
	int err;
	pid_t pid;

	expect(c, peer_box_pid, host_pid, box_pid, cg, &err, &pid, want, sizeof(want));
	/* the kernel's own view first: the test's premises */
	CHECK(a->cred_pid == pid, "%s, %s: SO_PEERCRED pid %d, expected %d", c->what, sock,
	      a->cred_pid, pid);
	CHECK(a->err == err && a->err_nopath == err && a->lib_err == err,
	      "%s, %s: errors %d (path) %d (no path) %d (library), expected %d", c->what, sock,
	      a->err, a->err_nopath, a->lib_err, err);
	if (err) {
		CHECK(a->untouched, "%s, %s: withheld, yet the path buffer was written",
		      c->what, sock);
		return;
	}
	CHECK(a->q.pid == pid && a->qn.pid == pid, "%s, %s: pid %d/%d, expected %d", c->what,
	      sock, a->q.pid, a->qn.pid, pid);
	/* a cgroup outside the caller's namespace: its path, never its id */
	if (strncmp(want, "/../", 4) == 0)
		id = 0;
	CHECK(a->q.cgroup_id == id && a->qn.cgroup_id == id, "%s, %s: id %llu, expected %llu",
	      c->what, sock, (unsigned long long)a->q.cgroup_id, (unsigned long long)id);
	CHECK(!strcmp(a->path, want) && a->q.path_len == strlen(want) &&
	      !strcmp(a->lib_path, want), "%s, %s: path \"%s\" (library \"%s\"), expected \"%s\"",
	      c->what, sock, a->path, a->lib_path, want);
	if (pid && !moved)
		CHECK(!a->proc_err && !strcmp(a->proc, want),
		      "%s, %s: /proc/%d/cgroup \"%s\" (err %d), expected \"%s\"", c->what, sock,
		      (int)pid, a->proc, a->proc_err, want);
	/*
	 * Where the kernel has PIDFD_GET_INFO, it gives this caller the same
	 * id for a cgroup inside its namespace; outside, it gives the id too
	 * (6.13+), the module does not (older kernels give none).
	 */
	if (pid && !moved && id && a->pidfd_err != -ENOTTY && a->pidfd_err != -EINVAL)
		CHECK(!a->pidfd_err && a->pidfd_cgroup_id == id,
		      "%s, %s: PIDFD_GET_INFO id %llu (err %d), expected %llu", c->what, sock,
		      (unsigned long long)a->pidfd_cgroup_id, a->pidfd_err,
		      (unsigned long long)id);
}

static int start_box(struct setup *s, const char *sname)
{
	pid_t b = fork();

	if (b == 0) {
		pid_t init;

		child_init();
		if (unshare(CLONE_NEWPID))
			_exit(5);
		init = fork();
		if (init == 0) {
			int carriers[CALLERS];

			for (int i = 0; i < CALLERS; i++)
				carriers[i] = s->carrier[i][1];
			box_init(sname, s->o, s->ready[1], s->end[0], carriers);
		}
		_exit(init > 0 && waitpid(init, NULL, 0) == init ? 0 : 6);
	}
	if (b < 0)
		return -1;
	s->kids[s->nkids++] = b;
	return 0;
}

static void n_matrix(void)
{
	struct setup s = { .lfd = -1, .end = { -1, -1 } };
	struct answer ans[ASKED];
	char sname[48], cmsgbuf[CMSG_SPACE(sizeof(s.passed))];
	struct timeval tmo = { .tv_sec = 60 };
	int sp[2][2], got = 0, cerr;
	const char *cgs[2] = { CG_HOST, CG_APP };

	for (int i = 0; i < CALLERS; i++)
		s.carrier[i][0] = s.carrier[i][1] = -1;
	for (int i = 0; i < PASSED; i++)
		s.passed[i] = -1;
	SYS(cg_create(CG_TOP));
	SYS(cg_create(CG_BOX));
	SYS(cg_create(CG_APP));
	SYS(cg_create(CG_HOST));
	s.id_app = cg_id(CG_APP);
	s.id_host = cg_id(CG_HOST);
	snprintf(sname, sizeof(sname), "pcg-ns-srv-%d", (int)getpid());
	for (int i = 0; i < PEERS; i++) {
		snprintf(s.o[i].lname, sizeof(s.o[i].lname), "pcg-ns-%d-%d", (int)getpid(), i);
		s.o[i].cg = peer_kinds[i].cg;
	}
	SYS(s.lfd = listen_on(sname, SOCK_STREAM));
	SYS(setsockopt(s.lfd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)));
	SYS(pipe2(s.ready, O_CLOEXEC));
	SYS(pipe2(s.end, O_CLOEXEC));
	end_writer = s.end[1];
	for (int i = 0; i < CALLERS; i++)
		SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s.carrier[i]));
	/* the callers wait for their sockets: two here, two in the container */
	for (int i = 0; i < CALLERS; i++) {
		pid_t pid;

		if (caller_kinds[i].box_pid)
			continue;
		pid = fork();
		if (pid == 0)
			caller_main(&caller_kinds[i], s.carrier[i][1], s.o);
		s.kids[s.nkids++] = pid;
	}

	/* the peers: two here, two in the container */
	for (int i = 0; i < PEERS; i++) {
		pid_t pid;

		if (peer_kinds[i].box_pid)
			continue;
		pid = fork();
		if (pid == 0)
			peer_main(i, sname, s.o[i].lname, s.ready[1], s.end[0]);
		s.kids[s.nkids++] = pid;
	}
	if (start_box(&s, sname)) {
		setup_free(&s);
		FAIL("fork: %s", strerror(errno));
	}
	close(s.ready[1]);
	close(s.end[0]);
	for (int i = 0; i < CALLERS; i++) {
		close(s.carrier[i][1]);
		s.carrier[i][1] = -1;
	}
	for (int n = 0; n < PEERS; n++) {
		int msg[3];

		if (read(s.ready[0], msg, sizeof(msg)) != sizeof(msg) || msg[2] ||
		    msg[0] < 0 || msg[0] >= PEERS) {
			close(s.ready[0]);
			setup_free(&s);
			FAIL("a peer failed to start");
		}
		if (peer_kinds[msg[0]].box_pid)
			s.o[msg[0]].box_pid = msg[1];
	}
	close(s.ready[0]);
	/* their connections to us (their connect()), ours to them (their listen()) */
	for (int n = 0; n < PEERS; n++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC);
		/* a peer index: unsigned, as plain char is on arm64 */
		unsigned char b;

		if (fd < 0 || read(fd, &b, 1) != 1 || b >= PEERS ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			setup_free(&s);
			FAIL("accepting the peers: %s", strerror(errno));
		}
		s.passed[2 * b] = fd;
		s.o[(int)b].host_pid = cred.pid;
	}
	for (int i = 0; i < PEERS; i++)
		SYS(s.passed[2 * i + 1] = connect_to(s.o[i].lname, SOCK_STREAM));
	/* socketpairs made here, in each cgroup */
	for (int i = 0; i < 2; i++) {
		SYS(cg_move(cgs[i], 0));
		SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp[i]));
		s.passed[2 * PEERS + i] = sp[i][0];
	}
	SYS(cg_move("", 0));

	for (int i = 0; i < CALLERS; i++) {
		const struct caller_kind *c = &caller_kinds[i];
		char b = 'f';
		struct iovec iov = { .iov_base = &b, .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cmsgbuf, .msg_controllen = sizeof(cmsgbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(s.passed));
		memcpy(CMSG_DATA(cm), s.passed, sizeof(s.passed));
		if (sendmsg(s.carrier[i][0], &mh, 0) != 1 ||
		    read(s.carrier[i][0], &cerr, sizeof(cerr)) != sizeof(cerr) ||
		    read(s.carrier[i][0], ans, sizeof(ans)) != sizeof(ans)) {
			t_failf(__FILE__, __LINE__, "%s: no answers: %s", c->what, strerror(errno));
			break;
		}
		if (cerr) {
			t_failf(__FILE__, __LINE__, "%s: setup: %s", c->what, strerror(-cerr));
			break;
		}
		for (int p = 0; p < PEERS; p++) {
			const struct origin *o = &s.o[p];
			uint64_t id = !strcmp(o->cg, CG_APP) ? s.id_app : s.id_host;
			char sock[160];
			static const char *const ends[3] = {
				"accepted from its connect()", "connected to its listen()",
				"connected by the caller to its listen()",
			};

			for (int e = 0; e < 3; e++) {
				int k = e < 2 ? 2 * p + e : PASSED + p;

				snprintf(sock, sizeof(sock),
					 "peer in %s pid ns and %s, socket %s",
					 peer_kinds[p].box_pid ? "container" : "host", o->cg, ends[e]);
				check_answer(c, sock, &ans[k], peer_kinds[p].box_pid, o->host_pid,
					     o->box_pid, o->cg, id, false);
				got++;
			}
		}
		for (int i2 = 0; i2 < 2; i2++) {
			char sock[96];

			snprintf(sock, sizeof(sock), "socketpair made by the test in %s", cgs[i2]);
			check_answer(c, sock, &ans[2 * PEERS + i2], false, getpid(), 0, cgs[i2],
				     i2 ? s.id_app : s.id_host, true);
			got++;
		}
	}
	for (int i = 0; i < 2; i++) {
		close(sp[i][1]);
	}
	setup_free(&s);
	printf("# matrix: %d callers x %d sockets = %d answers checked\n", CALLERS, ASKED, got);
}

/*
 * The main uses stay unaffected: a host daemon asking about a container
 * client, and a daemon in a container asking about a client of its own
 * namespaces; and the container's client asking about the host daemon
 * is withheld even with the socket it made itself.
 */
static void n_main_uses(void)
{
	int res[2], status;
	char msg[256] = "", sname[48];
	int lfd, fd;
	pid_t pid;
	struct peercgroup_query q;
	struct timeval tmo = { .tv_sec = 60 };
	char path[128] = "";

	SYS(cg_create(CG_TOP));
	SYS(cg_create(CG_BOX));
	SYS(cg_create(CG_APP));
	snprintf(sname, sizeof(sname), "pcg-ns-daemon-%d", (int)getpid());
	SYS(lfd = listen_on(sname, SOCK_STREAM));
	SYS(setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)));
	SYS(pipe2(res, O_CLOEXEC));
	pid = fork();
	if (pid == 0) {
		/* a container: own pid and cgroup namespaces, a daemon and a client */
		pid_t init;

		close(res[0]);
		if (cg_move(CG_BOX, 0) || unshare(CLONE_NEWPID))
			_exit(dprintf(res[1], "setup: %s", strerror(errno)) && 0);
		init = fork();
		if (init == 0) {
			char iname[64];
			int ilfd, cfd, acc, err;
			pid_t cli;

			if (unshare(CLONE_NEWCGROUP))
				_exit(dprintf(res[1], "unshare: %s", strerror(errno)) && 0);
			snprintf(iname, sizeof(iname), "%s-in", sname);
			ilfd = listen_on(iname, SOCK_STREAM);
			cli = fork();
			if (cli == 0) {
				/* the container's client: in /app, asks the host daemon */
				if (cg_move(CG_APP, 0))
					_exit(1);
				cfd = connect_to(iname, SOCK_STREAM);
				fd = connect_to(sname, SOCK_STREAM);
				if (cfd < 0 || fd < 0)
					_exit(2);
				err = query(fd, &q, path, sizeof(path));
				_exit(err == -EREMOTE ? 0 : 3);
			}
			acc = accept4(ilfd, NULL, NULL, SOCK_CLOEXEC);
			err = acc < 0 ? -errno : query(acc, &q, path, sizeof(path));
			if (err || strcmp(path, "/app") || q.pid != cli)
				_exit(dprintf(res[1], "daemon in the container: err %d path \"%s\" pid %d, expected /app %d",
					      err, path, q.pid, (int)cli) && 0);
			if (waitpid(cli, &status, 0) != cli || status)
				_exit(dprintf(res[1], "the container's client: status %#x", status) && 0);
			_exit(0);
		}
		_exit(init > 0 && waitpid(init, &status, 0) == init && !status ? 0 : 7);
	}
	close(res[1]);
	/* the host daemon: accepts the container's client */
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0 && query(fd, &q, path, sizeof(path)))
		path[0] = 0;
	if (read(res[0], msg, sizeof(msg) - 1) < 0)
		msg[0] = 0;
	close(res[0]);
	waitpid(pid, &status, 0);
	close(lfd);
	if (fd >= 0)
		close(fd);
	cg_move("", 0);
	cg_remove(CG_APP);
	cg_remove(CG_BOX);
	cg_remove(CG_TOP);
	CHECK(!msg[0], "%s", msg);
	CHECK_INT(0, status);
	CHECK(fd >= 0, "the host daemon accepted nothing");
	CHECK_STR("/" CG_APP, path);
	CHECK(q.pid > 0, "the host daemon sees pid %d", q.pid);
}

int main(int argc, char **argv)
{
	guest_begin("ns", argc, argv);
	if (module_require())
		return 1;
	RUN(n_matrix);
	RUN(n_main_uses);
	return guest_end();
}
