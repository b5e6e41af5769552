/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpeercgroup against the real module, in the test guest: one test per
 * promise of libpeercgroup(3).  The raw ioctl's own promises are
 * module_suite's; these are what the library adds or passes on.
 * Usage: lib_suite [TEST]
 */
#include "guest.h"

#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "peercgroup.h"
#include "internal.h"

#define CG_SERVER "lib-server"
#define CG_CLIENT "lib-client"

/* The suite's server: in CG_SERVER since before listen(). */
static int serve(int type, char *name, size_t size)
{
	static int seq;

	snprintf(name, size, "pcg-lib-%d-%d", (int)getpid(), seq++);
	if (cg_create(CG_SERVER) || cg_create(CG_CLIENT) || cg_move(CG_SERVER, 0))
		return -1;
	return listen_on(name, type);
}

/* peercgroup_get() on the accepted socket gives the client's cgroup at connect time. */
static void accept_side_answers(int type)
{
	struct peercgroup_info info;
	struct client c;
	char name[64], buf[PATH_MAX];
	uint64_t id = 0;
	int lfd, fd, err;

	SYS(lfd = serve(type, name, sizeof(name)));
	SYS(client_start(&c, CG_CLIENT, name, type));
	SYS(fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
	err = peercgroup_get(fd, 0, &info);
	CHECK_INT(0, err);
	CHECK_STR("/" CG_CLIENT, info.path);
	CHECK_INT(strlen("/" CG_CLIENT), info.path_len);
	CHECK_INT(cg_id(CG_CLIENT), info.cgroup_id);
	CHECK_INT(c.pid, info.pid);
	CHECK_INT(0, info.flags);
	peercgroup_info_free(&info);
	CHECK_INT(0, peercgroup_get_id(fd, &id));
	CHECK_INT(cg_id(CG_CLIENT), id);
	CHECK_INT(strlen("/" CG_CLIENT), peercgroup_get_path_buf(fd, buf, sizeof(buf)));
	CHECK_STR("/" CG_CLIENT, buf);
}

static void t_stream_accept_side(void)
{
	accept_side_answers(SOCK_STREAM);
}

static void t_seqpacket_accept_side(void)
{
	accept_side_answers(SOCK_SEQPACKET);
}

/* In the client: its connected socket names the listener's cgroup. */
static void client_sees_listener(void *name)
{
	char *path = NULL, buf[PATH_MAX];
	int fd;

	SYS(cg_move(CG_CLIENT, 0));
	SYS(fd = connect_to(name, SOCK_STREAM));
	CHECK_INT(0, peercgroup_get_path(fd, &path));
	CHECK_STR("/" CG_SERVER, path);
	free(path);
	CHECK_INT(strlen("/" CG_SERVER), peercgroup_get_path_buf(fd, buf, sizeof(buf)));
	CHECK_STR("/" CG_SERVER, buf);
}

static void t_client_side_names_listener(void)
{
	char name[64];

	SYS(serve(SOCK_STREAM, name, sizeof(name)));
	t_in_child(client_sees_listener, name);
}

/* A client in cgroup @cg connected to a new server of ours: the accepted socket. */
static int accept_client(struct client *c, const char *cg)
{
	char name[64];
	int lfd, fd;

	lfd = serve(SOCK_STREAM, name, sizeof(name));
	if (lfd < 0 || client_start(c, cg, name, SOCK_STREAM))
		return -1;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	return fd;
}

/* PEERCGROUP_GET_LIVE answers the peer's cgroup now, and says so. */
static void t_live_answer(void)
{
	struct peercgroup_info info;
	struct client c;
	int fd;

	SYS(cg_create("lib-moved"));
	SYS(fd = accept_client(&c, CG_CLIENT));
	SYS(client_move(&c, "lib-moved"));
	CHECK_INT(0, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK(info.flags & PEERCGROUP_INFO_LIVE, "flags %#x lack PEERCGROUP_INFO_LIVE", info.flags);
	CHECK_STR("/lib-moved", info.path);
	peercgroup_info_free(&info);
	/* the connect-time answer did not move */
	CHECK_INT(0, peercgroup_get(fd, 0, &info));
	CHECK_STR("/" CG_CLIENT, info.path);
	peercgroup_info_free(&info);
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77		/* Linux 6.5, asm-generic */
#endif

/* Does this kernel give pidfds of peers (SO_PEERPIDFD, 6.5)? */
static bool have_peerpidfd(void)
{
	socklen_t len = sizeof(int);
	int sv[2], pidfd;
	bool have;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	have = getsockopt(sv[0], SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0;
	if (have)
		close(pidfd);
	close(sv[0]);
	close(sv[1]);
	return have;
}

/* A process that waits to be killed, with pid @pid, born in cgroup @cg. */
static pid_t spawn_with_pid(pid_t pid, const char *cg)
{
	struct {	/* struct clone_args up to .cgroup (CLONE_ARGS_SIZE_VER2) */
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
		uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
	} args = { .exit_signal = SIGCHLD, .set_tid_size = 1 };
	char dir[PATH_MAX];
	long r;
	int cfd;

	snprintf(dir, sizeof(dir), CGROOT "/%s", cg);
	cfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cfd < 0)
		return -1;
	args.flags = 0x200000000ULL;	/* CLONE_INTO_CGROUP */
	args.cgroup = (uint64_t)cfd;
	args.set_tid = (uintptr_t)&pid;
	r = syscall(SYS_clone3, &args, sizeof(args));
	if (r == 0) {
		/* holding no pipe of the parent's, which may wait for its end */
		syscall(SYS_close_range, 3, ~0U, 0);
		for (;;)
			pause();
	}
	close(cfd);
	return (pid_t)r;
}

/*
 * A live answer about a peer that was reaped, its pid now another
 * process's: never that process's cgroup as the peer's.  A kernel with
 * SO_PEERPIDFD knows the peer is gone (6.5 to 6.15 by refusing it a
 * pidfd); on older ones the documented /proc route may be fooled, but
 * must not claim a pidfd.
 */
static void t_live_recycled_pid(void)
{
	struct peercgroup_info info;
	struct client c;
	pid_t peer, again;
	int fd, r;

	SYS(cg_create("lib-recycled"));
	SYS(fd = accept_client(&c, CG_CLIENT));
	peer = c.pid;
	client_stop(&c);		/* exits and is reaped: its pid is free */
	SYS(again = spawn_with_pid(peer, "lib-recycled"));
	defer_kill(again);
	CHECK_INT(peer, again);
	r = peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info);
	if (have_peerpidfd())
		CHECK_INT(-ESRCH, r);
	else
		CHECK(r == -ESRCH || (r == 0 && !(info.flags & PEERCGROUP_INFO_PIDFD)),
		      "r %d, flags %#x: a pidfd claimed without SO_PEERPIDFD", r, info.flags);
	peercgroup_info_free(&info);
}

/* Drop to uid and gid 65534, no supplementary groups: 0 or -1. */
static int become_nobody(void)
{
	return setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	       setresuid(65534, 65534, 65534) ? -1 : 0;
}

/* A server that may not signal its peer still gets the live answer. */
static void live_as_nobody(void *arg)
{
	struct peercgroup_info info;
	int fd = *(int *)arg;

	SYS(become_nobody());
	CHECK_INT(0, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK_STR("/" CG_CLIENT, info.path);
	CHECK_INT(cg_id(CG_CLIENT), info.cgroup_id);
	CHECK_INT(have_peerpidfd(), !!(info.flags & PEERCGROUP_INFO_PIDFD));
	peercgroup_info_free(&info);
}

static void t_live_peer_of_another_uid(void)
{
	struct client c;
	int fd;

	SYS(fd = accept_client(&c, CG_CLIENT));
	t_in_child(live_as_nobody, &fd);
}

/*
 * The peer reaped, and its pid given to a process in another cgroup,
 * between the library's reading of the peer's number and of its
 * /proc/PID/cgroup: never that process's cgroup as the peer's.  The
 * caller changed its uid, which on 5.10 refuses it its own fdinfo, and a
 * seccomp filter refuses pidfd_send_signal() with EPERM, for any process.
 * This suite is linked with --wrap=fopen: the library's fopen() of that
 * file asks the recycler, a thread of the parent's (whose child the peer
 * is), to make the window, and waits for it.
 */
struct recycled_window {
	struct client c;
	int fd, ctl[2];		/* ctl[0]: the recycler's end */
	pid_t peer, again;
	int err;		/* spawn_with_pid()'s errno */
};

static pid_t window_peer;	/* recycled as its /proc/PID/cgroup is opened */
static int window_ctl = -1, window_reached;

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);

FILE *__wrap_fopen(const char *path, const char *mode)
{
	char fn[64], byte = 'r';

	if (window_peer > 0) {
		snprintf(fn, sizeof(fn), "/proc/%d/cgroup", (int)window_peer);
		if (!strcmp(path, fn)) {
			window_peer = 0;
			window_reached = write(window_ctl, &byte, 1) == 1 &&
					 read(window_ctl, &byte, 1) == 1;
		}
	}
	return __real_fopen(path, mode);
}

static void *recycle_on_request(void *arg)
{
	struct recycled_window *w = arg;
	char byte;

	if (read(w->ctl[0], &byte, 1) != 1)
		return NULL;	/* the window was never reached */
	client_stop(&w->c);	/* the peer exits and is reaped: its pid is free */
	w->again = spawn_with_pid(w->peer, "lib-window");
	w->err = w->again < 0 ? errno : 0;
	if (write(w->ctl[0], "d", 1) != 1)
		w->err = errno;
	return NULL;
}

static void ask_across_recycled_pid(void *arg)
{
	struct recycled_window *w = arg;
	struct peercgroup_info info;
	int r;

	SYS(become_nobody());
	refuse_syscall_if_filtered(SYS_pidfd_send_signal, EPERM, "pidfd_send_signal()");
	window_ctl = w->ctl[1];
	window_peer = w->peer;
	r = peercgroup_get(w->fd, PEERCGROUP_GET_LIVE, &info);
	CHECK(window_reached, "the library never read /proc/%d/cgroup: the window is not reached",
	      (int)w->peer);
	CHECK(r == -ESRCH, "r %d (%s), path %s: the answer must be -ESRCH", r, strerror(-r),
	      r == 0 ? info.path : "none");
	peercgroup_info_free(&info);
}

static void t_live_pid_recycled_while_read(void)
{
	struct recycled_window w = { .again = -1 };
	pthread_t t;

	SYS(cg_create("lib-window"));
	SYS(w.fd = accept_client(&w.c, CG_CLIENT));
	w.peer = w.c.pid;
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, w.ctl));
	defer_close(w.ctl[0]);
	defer_close(w.ctl[1]);
	CHECK_INT(0, pthread_create(&t, NULL, recycle_on_request, &w));
	t_in_child(ask_across_recycled_pid, &w);
	shutdown(w.ctl[1], SHUT_WR);	/* a recycler still waiting: the window never came */
	pthread_join(t, NULL);
	if (w.again > 0)
		defer_kill(w.again);
	CHECK(!w.err, "recycling pid %d: %s", (int)w.peer, strerror(w.err));
	CHECK(w.again < 0 || w.again == w.peer, "the new process got pid %d, not %d",
	      (int)w.again, (int)w.peer);
}

/*
 * A /proc that hides others' processes, hidepid=1 (EPERM on their files)
 * or 2 (not there: ENOENT): the peer is not visible.  The module's record
 * does not follow /proc's mount options (peercgroup(4)).
 */
struct behind_hidepid {
	int fd;
	const char *option;
};

static void live_behind_hidepid(void *arg)
{
	const struct behind_hidepid *h = arg;
	struct peercgroup_info info;

	SYS(enter_mount_namespace(0));
	SYS(mount("proc", "/proc", "proc", 0, h->option));
	SYS(become_nobody());
	CHECK_INT(-ESRCH, peercgroup_get(h->fd, PEERCGROUP_GET_LIVE, &info));
	CHECK(info.path == NULL && info.cgroup_id == 0, "%s: info not zeroed", h->option);
	CHECK_INT(0, peercgroup_get(h->fd, 0, &info));
	CHECK_STR("/" CG_CLIENT, info.path);
	peercgroup_info_free(&info);
}

static void t_live_behind_hidepid(void)
{
	struct behind_hidepid h = { .option = "hidepid=1" };
	struct client c;

	SYS(h.fd = accept_client(&c, CG_CLIENT));
	t_in_child(live_behind_hidepid, &h);
	h.option = "hidepid=2";
	t_in_child(live_behind_hidepid, &h);
}

/*
 * /proc marks a removed cgroup with " (deleted)", which a live cgroup's
 * name may also end in.  A peer in a removed cgroup (only an exiting one
 * can be) is answered as such; a peer in a live cgroup so named, next to
 * one named without it, is not answered at all rather than as the other.
 */
static void t_live_removed_cgroup(void)
{
	struct peercgroup_info info;
	struct client c;
	siginfo_t si;
	int fd;

	SYS(cg_create("lib-gone"));
	SYS(fd = accept_client(&c, "lib-gone"));
	SYS(kill(c.pid, SIGKILL));
	SYS(waitid(P_PID, c.pid, &si, WEXITED | WNOWAIT));	/* a zombie, in lib-gone */
	SYS(cg_remove("lib-gone"));
	CHECK_INT(0, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK_STR("/lib-gone", info.path);
	CHECK(info.flags & PEERCGROUP_INFO_CGROUP_REMOVED, "flags %#x", info.flags);
	CHECK_INT(0, info.cgroup_id);
	peercgroup_info_free(&info);
}

static void t_live_deleted_in_a_name(void)
{
	struct peercgroup_info info;
	struct client c;
	int fd;

	SYS(cg_create("lib-svc"));
	SYS(cg_create("lib-svc (deleted)"));
	SYS(fd = accept_client(&c, "lib-svc (deleted)"));
	CHECK_INT(-ESRCH, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK_INT(0, peercgroup_get(fd, 0, &info));	/* the record is exact */
	CHECK_STR("/lib-svc (deleted)", info.path);
	CHECK_INT(cg_id("lib-svc (deleted)"), info.cgroup_id);
	peercgroup_info_free(&info);
}

/*
 * In a cgroup namespace, under the host's /sys/fs/cgroup mount: the path
 * is the namespace's, so the id is the peer's cgroup's or 0, never that
 * of the host cgroup the same path names, nor anything for "/..".
 */
struct ns_peers {
	int inside, above;
	uint64_t inside_id;
};

static void live_in_cgroup_ns(void *arg)
{
	struct ns_peers *p = arg;
	struct peercgroup_info info;

	SYS(cg_move("lib-nsroot", 0));
	SYS(unshare(CLONE_NEWCGROUP));
	CHECK_INT(0, peercgroup_get(p->inside, PEERCGROUP_GET_LIVE, &info));
	CHECK_STR("/lib-decoy", info.path);
	CHECK(info.cgroup_id == 0 || info.cgroup_id == p->inside_id,
	      "id %llu is not the peer's cgroup's (%llu)",
	      (unsigned long long)info.cgroup_id, (unsigned long long)p->inside_id);
	peercgroup_info_free(&info);
	CHECK_INT(0, peercgroup_get(p->above, PEERCGROUP_GET_LIVE, &info));
	CHECK_STR("/..", info.path);
	CHECK_INT(0, info.cgroup_id);
	peercgroup_info_free(&info);
}

static void t_live_in_cgroup_namespace(void)
{
	struct client in, up;
	struct ns_peers p;

	SYS(cg_create("lib-decoy"));
	SYS(cg_create("lib-nsroot"));
	SYS(cg_create("lib-nsroot/lib-decoy"));
	p.inside_id = cg_id("lib-nsroot/lib-decoy");
	SYS(p.inside = accept_client(&in, "lib-nsroot/lib-decoy"));
	SYS(p.above = accept_client(&up, ""));
	t_in_child(live_in_cgroup_ns, &p);
}

/*
 * A server in a pid namespace of its own that kept its parent's /proc
 * (unshare -p -f without --mount-proc): SO_PEERCRED names its peer by
 * the namespace's pid, 2, which that /proc gives to another process
 * (kthreadd).  The live answer is the peer's cgroup or -ESRCH, never
 * the other process's, and its pid is the server's name for the peer.
 * Root gets the answer; a user cannot read its own fdinfo on 5.10, and
 * may get -ESRCH.
 */
static void live_pid_ns_answer(int fd, pid_t peer, uint64_t id, bool may_refuse)
{
	struct peercgroup_info info;
	int r;

	r = peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info);
	if (r == -ESRCH && may_refuse)
		return;
	CHECK_INT(0, r);
	CHECK_STR("/lib-pidns-peer", info.path);
	CHECK_INT(id, info.cgroup_id);
	CHECK_INT(peer, info.pid);
	peercgroup_info_free(&info);
}

struct pid_ns_case {
	uint64_t id;
	bool root_may_refuse;
};

static void live_as_pid_ns_init(void *arg)
{
	struct pid_ns_case *p = arg;
	struct client c;
	int fd;

	CHECK_INT(1, getpid());
	SYS(fd = accept_client(&c, "lib-pidns-peer"));
	CHECK_INT(2, c.pid);
	live_pid_ns_answer(fd, c.pid, p->id, p->root_may_refuse);
	SYS(become_nobody());
	live_pid_ns_answer(fd, c.pid, p->id, true);
}

static void live_in_new_pid_ns(void *arg)
{
	SYS(unshare(CLONE_NEWPID));
	t_in_child(live_as_pid_ns_init, arg);
}

static void t_live_pid_ns_with_parents_proc(void)
{
	struct pid_ns_case p = { .root_may_refuse = false };	/* root reads its fdinfo */

	SYS(cg_create(CG_SERVER));
	SYS(cg_create(CG_CLIENT));
	SYS(cg_create("lib-pidns-peer"));
	p.id = cg_id("lib-pidns-peer");
	t_in_child(live_in_new_pid_ns, &p);
}

/*
 * An accepted socket passed by SCM_RIGHTS into a pid namespace that has
 * its own /proc, where the peer has no pid: SO_PEERCRED says 0 there, and
 * SO_PEERPIDFD's pidfd has no number in that /proc.  The live answer is
 * -ESRCH, never another process's cgroup; the connect-time record is
 * still there, with no pid.
 */
static void live_passed_as_pid_ns_init(void *arg)
{
	struct peercgroup_info info;
	int fd, via = *(int *)arg;

	CHECK_INT(1, getpid());
	SYS(mount("proc", "/proc", "proc", 0, NULL));
	SYS(fd = recv_fd(via));
	CHECK_INT(-ESRCH, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK_INT(0, peercgroup_get(fd, 0, &info));
	CHECK_STR("/lib-pass-peer", info.path);
	CHECK_INT(cg_id("lib-pass-peer"), info.cgroup_id);
	CHECK_INT(0, info.pid);
	peercgroup_info_free(&info);
}

static void live_passed_into_new_pid_ns(void *arg)
{
	SYS(enter_mount_namespace(CLONE_NEWPID));
	t_in_child(live_passed_as_pid_ns_init, arg);
}

static void t_live_passed_into_pid_ns(void)
{
	struct client c;
	int fd, sv[2];

	SYS(cg_create(CG_SERVER));
	SYS(cg_create(CG_CLIENT));
	SYS(cg_create("lib-pass-peer"));
	SYS(fd = accept_client(&c, "lib-pass-peer"));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	defer_close(sv[0]);
	defer_close(sv[1]);
	SYS(send_fd(sv[0], fd));	/* queued until the new namespace takes it */
	t_in_child(live_passed_into_new_pid_ns, &sv[1]);
}

/* A client and the accepted end of its connection. */
struct accepted {
	struct client c;
	int fd;
};

/*
 * A sandbox whose seccomp filter refuses pidfd_open() (ENOSYS, as on
 * kernels before 5.3): the live route without SO_PEERPIDFD still answers
 * where /proc is of the caller's pid namespace, and in a pid namespace
 * that kept its parent's /proc answers right or -ESRCH.
 */
static void live_without_pidfd_open(void *arg)
{
	struct pid_ns_case p = { .root_may_refuse = true };
	struct peercgroup_info info;
	struct accepted *a = arg;
	int fd = a->fd;

	refuse_syscall(SYS_pidfd_open, ENOSYS);
	CHECK_INT(0, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK_STR("/lib-pidns-peer", info.path);
	CHECK_INT(cg_id("lib-pidns-peer"), info.cgroup_id);
	CHECK_INT(a->c.pid, info.pid);
	CHECK_INT(have_peerpidfd(), !!(info.flags & PEERCGROUP_INFO_PIDFD));
	peercgroup_info_free(&info);
	p.id = cg_id("lib-pidns-peer");
	live_in_new_pid_ns(&p);
}

static void t_live_without_pidfd_open(void)
{
	struct accepted a;

	if (!have_seccomp_filters())
		SKIP("this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)");
	SYS(cg_create("lib-pidns-peer"));
	SYS(a.fd = accept_client(&a.c, "lib-pidns-peer"));
	t_in_child(live_without_pidfd_open, &a);
}

/*
 * The peer moves out of its cgroup, which is removed and made again at
 * the same path, while live answers are asked: an answer's id must be of
 * a cgroup the peer was in while it was asked, never of the next one made
 * at that path.  A mover process cycles the peer between lib-rc/y and
 * lib-rc/x, made again each time, and publishes its step in shared
 * memory, so that each answer can be placed: x's j-th incarnation holds
 * the peer only between step 3j+2 (published before the move in) and
 * 3j+3 (published after the move out).  The asker parses a long
 * mountinfo (200 mounts of its own), which widens the gap between
 * its read of /proc and its look-up of the id.  An answer may have no id
 * (the peer moved while asked), never a wrong one.
 */
#define RECREATED_MAX 2048
#define RECREATED_ANSWERS 65536

struct recreated {
	long step;		/* the mover's, see above */
	long rounds;
	int stop;
	pid_t peer;
	int fd;
	char x[32];		/* x's cgroup */
	uint64_t y, x_ids[RECREATED_MAX];
};

struct placed_answer {
	long before, after;	/* the mover's step then */
	uint64_t id;
	char where;		/* 'x', 'y', or '0': either, without an id */
};

static void move_between_x_and_y(struct recreated *m)
{
	struct timespec gap = { 0, 300000 };
	char x[PATH_MAX];

	snprintf(x, sizeof(x), CGROOT "/%s", m->x);
	for (long j = 0; j < m->rounds; j++) {
		__atomic_store_n(&m->step, 3 * j + 2, __ATOMIC_RELEASE);
		if (cg_move(m->x, m->peer))
			_exit(1);
		nanosleep(&gap, NULL);
		if (cg_move("lib-rc/y", m->peer))
			_exit(2);
		__atomic_store_n(&m->step, 3 * j + 3, __ATOMIC_RELEASE);
		/* not cg_create(): this process runs no cleanups */
		if (rmdir(x) || mkdir(x, 0755))
			_exit(3);
		m->x_ids[j + 1] = cg_id(m->x);
		__atomic_store_n(&m->step, 3 * j + 4, __ATOMIC_RELEASE);
		nanosleep(&gap, NULL);
	}
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
	_exit(0);
}

/* A mount namespace with 200 more mounts: a slower parse of mountinfo. */
static int slow_mountinfo(void)
{
	if (enter_mount_namespace(0) || (mkdir("/tmp/lib-rc", 0700) && errno != EEXIST))
		return -1;
	for (int i = 0; i < 200; i++)
		if (mount("lib-rc", "/tmp/lib-rc", "tmpfs", 0, "size=4k"))
			return -1;
	return 0;
}

static void ask_while_recreated(void *arg)
{
	struct recreated *m = arg;
	struct placed_answer *a;
	struct peercgroup_info info;
	long n = 0, counts[3] = { 0 }, i, j;
	int r;

	SYS(slow_mountinfo());
	a = calloc(RECREATED_ANSWERS, sizeof(*a));
	CHECK(a, "calloc");
	while (n < RECREATED_ANSWERS && !__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		a[n].before = __atomic_load_n(&m->step, __ATOMIC_ACQUIRE);
		r = peercgroup_get(m->fd, PEERCGROUP_GET_LIVE, &info);
		a[n].after = __atomic_load_n(&m->step, __ATOMIC_ACQUIRE);
		CHECK(r == 0, "answer %ld: %s", n, strerror(-r));
		a[n].id = info.cgroup_id;
		a[n].where = !info.cgroup_id ? '0' : !strcmp(info.path, "/lib-rc/y") ? 'y' :
			     !strcmp(info.path, "/lib-rc/x") ? 'x' : '?';
		CHECK(!strcmp(info.path, "/lib-rc/y") || !strcmp(info.path, "/lib-rc/x"),
		      "answer %ld: %s", n, info.path);
		peercgroup_info_free(&info);
		n++;
	}
	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* every incarnation's id is published now */
	for (i = 0; i < n; i++) {
		counts[a[i].where == 'y' ? 0 : a[i].where == 'x' ? 1 : 2]++;
		if (a[i].where == 'y')
			CHECK_INT(m->y, a[i].id);
		if (a[i].where != 'x')
			continue;
		for (j = 0; j <= m->rounds && m->x_ids[j] != a[i].id; j++)
			;
		CHECK(j <= m->rounds, "answer %ld: id %llu, of no x", i,
		      (unsigned long long)a[i].id);
		CHECK(a[i].after >= 3 * j + 2 && a[i].before < 3 * j + 3,
		      "answer %ld: the id of x's incarnation %ld, which the peer was not in while asked (steps %ld to %ld)",
		      i, j, a[i].before, a[i].after);
	}
	free(a);
	printf("# lib: recreated: %ld rounds, %ld answers: %ld in y, %ld in x, %ld without an id (moved while asked)\n",
	       m->rounds, n, counts[0], counts[1], counts[2]);
	CHECK(counts[1] > 0, "never answered x with its id");
}

/* Shared memory for the mover and the asker, set up for x named @x. */
static struct recreated *recreated_setup(const char *x)
{
	static struct recreated *m;

	if (!m)
		m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->rounds = knob("pcg.recreated_rounds", "PCG_RECREATED_ROUNDS", 1000);
	if (m->rounds <= 0 || m->rounds >= RECREATED_MAX)
		m->rounds = 1000;
	snprintf(m->x, sizeof(m->x), "lib-rc/%s", x);
	if (cg_create("lib-rc") || cg_create("lib-rc/y") || cg_create(m->x))
		return NULL;
	m->y = cg_id("lib-rc/y");
	m->x_ids[0] = cg_id(m->x);
	m->step = 1;
	return m;
}

/* The peer, accepted on m->fd, and the mover: its pid, or -1. */
static pid_t recreated_start(struct recreated *m)
{
	struct client c;
	pid_t mover;

	m->fd = accept_client(&c, "lib-rc/y");
	if (m->fd < 0)
		return -1;
	m->peer = c.pid;
	mover = fork();
	if (mover == 0)
		move_between_x_and_y(m);
	return mover;
}

static void t_live_recreated_cgroup(void)
{
	struct recreated *m = recreated_setup("x");
	pid_t mover;

	CHECK(m, "setup: %s", strerror(errno));
	SYS(mover = recreated_start(m));
	t_in_child(ask_while_recreated, m);
	CHECK_INT(mover, waitpid(mover, NULL, 0));
}

/*
 * The same mover, x named "x (deleted)" beside a live "x": /proc's line
 * for the peer in it is what it would be for a removed x.  Once that
 * cgroup is gone from its path (left and removed meanwhile), the peer,
 * alive, must not be told in x, removed: it is in y, or unknown.
 */
static void ask_while_deleted_name_recreated(void *arg)
{
	struct recreated *m = arg;
	struct peercgroup_info info;
	long n = 0, in_y = 0, unknown = 0;
	int r;

	SYS(slow_mountinfo());
	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		r = peercgroup_get(m->fd, PEERCGROUP_GET_LIVE, &info);
		n++;
		if (r == -ESRCH) {
			unknown++;
			continue;
		}
		CHECK(r == 0, "answer %ld: %s", n, strerror(-r));
		CHECK(!strcmp(info.path, "/lib-rc/y") && !(info.flags & PEERCGROUP_INFO_CGROUP_REMOVED),
		      "answer %ld: %s, flags %#x: the peer is alive, in y or in \"x (deleted)\"",
		      n, info.path, info.flags);
		in_y++;
		peercgroup_info_free(&info);
	}
	printf("# lib: deleted name: %ld rounds, %ld answers: %ld in y, %ld unknown\n",
	       m->rounds, n, in_y, unknown);
	CHECK(in_y > 0 && unknown > 0, "never asked while in y and while in \"x (deleted)\"");
}

static void t_live_deleted_name_recreated(void)
{
	struct recreated *m = recreated_setup("x (deleted)");
	pid_t mover;

	CHECK(m, "setup: %s", strerror(errno));
	SYS(cg_create("lib-rc/x"));
	SYS(mover = recreated_start(m));
	t_in_child(ask_while_deleted_name_recreated, m);
	CHECK_INT(mover, waitpid(mover, NULL, 0));
}

/*
 * A thread with a file table of its own (unshare(CLONE_FILES)) gets its
 * peer's cgroup, never that of the process that a descriptor of the same
 * number in the main thread's table refers to (/proc/self is the main
 * thread's; /proc/thread-self its own).
 */
struct own_table {
	int fd, decoy_pidfd, r;
	char path[64];
	uint64_t id;
};

static void *live_with_own_file_table(void *arg)
{
	struct own_table *o = arg;
	struct peercgroup_info info;

	if (unshare(CLONE_FILES)) {
		o->r = -errno;
		return NULL;
	}
	close(o->decoy_pidfd);	/* in this table only: the next pidfd gets its number */
	o->r = peercgroup_get(o->fd, PEERCGROUP_GET_LIVE, &info);
	if (!o->r) {
		snprintf(o->path, sizeof(o->path), "%s", info.path);
		o->id = info.cgroup_id;
		peercgroup_info_free(&info);
	}
	return NULL;
}

static void t_live_thread_with_own_file_table(void)
{
	struct own_table o = { .r = -1 };
	struct client c;
	pthread_t t;
	pid_t decoy;

	SYS(cg_create("lib-own-peer"));
	SYS(cg_create("lib-own-decoy"));
	SYS(o.fd = accept_client(&c, "lib-own-peer"));
	SYS(decoy = fork());
	if (decoy == 0)
		sleep_forever(NULL);
	SYS(cg_move("lib-own-decoy", decoy));
	SYS(o.decoy_pidfd = (int)syscall(SYS_pidfd_open, decoy, 0));
	defer_close(o.decoy_pidfd);
	CHECK_INT(0, pthread_create(&t, NULL, live_with_own_file_table, &o));
	pthread_join(t, NULL);
	CHECK_INT(0, o.r);
	CHECK_STR("/lib-own-peer", o.path);
	CHECK_INT(cg_id("lib-own-peer"), o.id);
}

/*
 * A mount on the peer's cgroup directory (another cgroup bound there)
 * puts another inode at the path /proc gives: the live answer keeps the
 * path, and its id is 0 (unknown), never the bound cgroup's.  The same
 * where a seccomp filter refuses openat2() (ENOSYS, as filters written
 * before 5.6 do), and there the look-up still finds the peer's cgroup.
 * The cgroup bound on itself shows the same cgroup: its id, both ways.
 * Both bound cases go through the walk too (openat2() says EXDEV); a
 * kernel without seccomp filters (the debug kernel) tries no refusal.
 */
struct mounted_over {
	int fd;
	uint64_t peer_id;
};

static void live_id_is(int fd, uint64_t want)
{
	struct peercgroup_info info;

	CHECK_INT(0, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK_STR("/lib-mnt-peer", info.path);
	CHECK_INT(want, info.cgroup_id);
	peercgroup_info_free(&info);
}

static void live_with_mount_on_peer_cgroup(void *arg)
{
	struct mounted_over *m = arg;

	SYS(enter_mount_namespace(0));
	live_id_is(m->fd, m->peer_id);
	/* systemd-nspawn without a cgroup namespace: the cgroup on itself */
	SYS(mount(CGROOT "/lib-mnt-peer", CGROOT "/lib-mnt-peer", NULL, MS_BIND, NULL));
	live_id_is(m->fd, m->peer_id);
	SYS(umount2(CGROOT "/lib-mnt-peer", MNT_DETACH));
	SYS(mount(CGROOT "/lib-mnt-decoy", CGROOT "/lib-mnt-peer", NULL, MS_BIND, NULL));
	live_id_is(m->fd, 0);
	if (!refuse_syscall_if_filtered(SYS_openat2, ENOSYS, "openat2()"))
		return;
	live_id_is(m->fd, 0);
	SYS(umount2(CGROOT "/lib-mnt-peer", MNT_DETACH));
	live_id_is(m->fd, m->peer_id);
	SYS(mount(CGROOT "/lib-mnt-peer", CGROOT "/lib-mnt-peer", NULL, MS_BIND, NULL));
	live_id_is(m->fd, m->peer_id);
}

static void t_live_mount_on_peer_cgroup(void)
{
	struct mounted_over m;
	struct client c;

	SYS(cg_create("lib-mnt-peer"));
	SYS(cg_create("lib-mnt-decoy"));
	m.peer_id = cg_id("lib-mnt-peer");
	SYS(m.fd = accept_client(&c, "lib-mnt-peer"));
	t_in_child(live_with_mount_on_peer_cgroup, &m);
}

/*
 * A mount made on the cgroup2 mount point itself, after mountinfo was
 * read and before the mount point is opened by name, and detached again
 * once it is open: no mountinfo line ever shows it.  A subtree of the
 * cgroup tree bound there, with the peer's path in it too, would give
 * the id of another cgroup.  This suite is linked with --wrap=open: while
 * open_decoy is set, each open() of CGROOT makes that mount in that
 * window.  The live answer keeps the peer's path, with id 0 (unknown).
 * Left mounted, mountinfo shows a mount of another part of the tree: id
 * 0 as well.
 */
static const char *open_decoy;	/* bound on CGROOT at each open() of it */
static int open_decoys, open_decoy_err;

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);

int __wrap_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;
	int fd, err;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!open_decoy || strcmp(path, CGROOT))
		return __real_open(path, flags, mode);
	if (mount(open_decoy, CGROOT, NULL, MS_BIND, NULL)) {
		open_decoy_err = errno;
		return __real_open(path, flags, mode);
	}
	open_decoys++;
	fd = __real_open(path, flags, mode);
	err = errno;
	if (umount2(CGROOT, MNT_DETACH))
		open_decoy_err = errno;
	errno = err;
	return fd;
}

/*
 * Armed, then not: id 0, then the peer's.  Then cgroup2 mounted on the
 * mount point's parent: CGROOT is a cgroup's directory there (a cgroup
 * named "cgroup", with the peer's path below it too), on a mount whose
 * root is the namespace's: id 0 as well.
 */
static void mount_in_open_answers(struct mounted_over *m)
{
	int before = open_decoys;

	open_decoy = CGROOT "/lib-mnt-root";
	live_id_is(m->fd, 0);
	open_decoy = NULL;
	CHECK(!open_decoy_err, "the mount in open(): %s", strerror(open_decoy_err));
	CHECK(open_decoys > before, "the library never open()ed " CGROOT ": the window is not reached");
	live_id_is(m->fd, m->peer_id);
	SYS(mount("cgroup2", "/sys/fs", "cgroup2", 0, NULL));
	live_id_is(m->fd, 0);
	SYS(umount2("/sys/fs", MNT_DETACH));
	live_id_is(m->fd, m->peer_id);
}

static void live_with_mount_in_open(void *arg)
{
	struct mounted_over *m = arg;

	SYS(enter_mount_namespace(0));
	mount_in_open_answers(m);
	/* the mount's id from fdinfo instead */
	if (refuse_syscall_if_filtered(SYS_statx, ENOSYS, "statx()")) {
		printf("# lib: statx() refused\n");
		mount_in_open_answers(m);
	}
	SYS(mount(CGROOT "/lib-mnt-root", CGROOT, NULL, MS_BIND, NULL));
	live_id_is(m->fd, 0);
}

static void t_live_mount_on_cgroup2_mount(void)
{
	struct mounted_over m;
	struct client c;

	SYS(cg_create("lib-mnt-peer"));
	SYS(cg_create("lib-mnt-root"));
	SYS(cg_create("lib-mnt-root/lib-mnt-peer"));
	SYS(cg_create("cgroup"));
	SYS(cg_create("cgroup/lib-mnt-peer"));
	m.peer_id = cg_id("lib-mnt-peer");
	SYS(m.fd = accept_client(&c, "lib-mnt-peer"));
	t_in_child(live_with_mount_in_open, &m);
}

/*
 * A mount storm below the cgroup tree while live answers are asked: a
 * thread binds a decoy cgroup on the peer's cgroup lib-mr/a/b/peer, then
 * another on its parent, then on its grandparent, unmounting each again,
 * over and over.  The decoy tree has the same names below it, so the
 * peer's path then leads into it: a look-up that crossed a mount would
 * give the decoy's id.  Each answer is the peer's path with its id, or
 * with id 0 (not provable while something was mounted there), never
 * another id.  With openat2(), and, where a seccomp filter refuses it,
 * name by name.  Every eighth mount (on each level in turn), and every
 * eighth unmount, the storm waits for two answers: one at least was
 * asked wholly with the decoy there, and one without, so both kinds
 * come, and a library that takes the decoy for the peer's cgroup is
 * caught, however the rest interleave.
 */
#define MOUNT_RACE_PEER "lib-mr/a/b/peer"

static const char *const mount_race_on[] = { MOUNT_RACE_PEER, "lib-mr/a/b", "lib-mr/a" };
static const char *const mount_race_decoy[] = { "lib-mr-decoy/b/peer", "lib-mr-decoy/b",
						"lib-mr-decoy" };

struct mount_race {
	int fd, stop, err;	/* err: the storm's errno */
	long answers, asked, mounts;
	uint64_t peer_id, decoy_id;	/* decoy_id: lib-mr-decoy/b/peer's */
};

/* Until the asker has given two more answers, or stopped. */
static void mount_storm_hold(struct mount_race *m)
{
	long from = __atomic_load_n(&m->asked, __ATOMIC_ACQUIRE);

	while (__atomic_load_n(&m->asked, __ATOMIC_ACQUIRE) < from + 2 &&
	       !__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *mount_storm(void *arg)
{
	struct mount_race *m = arg;
	char on[PATH_MAX], decoy[PATH_MAX];
	int l;

	for (m->mounts = 0; !__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE); m->mounts++) {
		l = m->mounts % 3;
		snprintf(on, sizeof(on), CGROOT "/%s", mount_race_on[l]);
		snprintf(decoy, sizeof(decoy), CGROOT "/%s", mount_race_decoy[l]);
		if (mount(decoy, on, NULL, MS_BIND, NULL)) {
			m->err = errno;
			break;
		}
		if (m->mounts % 8 == 0)
			mount_storm_hold(m);
		/* detached: the asker may hold a directory in it open */
		if (umount2(on, MNT_DETACH)) {
			m->err = errno;
			break;
		}
		if (m->mounts % 8 == 4)
			mount_storm_hold(m);
	}
	return NULL;
}

static void ask_in_mount_storm(struct mount_race *m, const char *how)
{
	struct peercgroup_info info;
	long n, right = 0, unknown = 0;
	pthread_t t;
	int r;

	m->stop = m->err = 0;
	m->asked = 0;
	CHECK_INT(0, pthread_create(&t, NULL, mount_storm, m));
	for (n = 0; n < m->answers; n++) {
		r = peercgroup_get(m->fd, PEERCGROUP_GET_LIVE, &info);
		CHECK(r == 0, "%s: answer %ld: %s", how, n, strerror(-r));
		CHECK_STR("/" MOUNT_RACE_PEER, info.path);
		CHECK(!info.cgroup_id || info.cgroup_id == m->peer_id,
		      "%s: answer %ld: id %llu, %s (the peer's is %llu)", how, n,
		      (unsigned long long)info.cgroup_id,
		      info.cgroup_id == m->decoy_id ? "the decoy's" : "of no cgroup the peer is in",
		      (unsigned long long)m->peer_id);
		if (info.cgroup_id)
			right++;
		else
			unknown++;
		peercgroup_info_free(&info);
		__atomic_store_n(&m->asked, n + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK(!m->err, "%s: mount storm: %s", how, strerror(m->err));
	printf("# lib: mount race, %s: %ld mounts, %ld answers: %ld with the peer's id, %ld unknown (id 0)\n",
	       how, m->mounts, m->answers, right, unknown);
	fflush(stdout);
	/* the storm got in the way, and the peer's id still came through: the holds */
	CHECK(right > 0 && unknown > 0, "%s: %ld right, %ld unknown: one kind never came",
	      how, right, unknown);
}

static void live_in_mount_storm(void *arg)
{
	struct mount_race *m = arg;

	/* bind sources must be in our own mount namespace: all after this */
	SYS(enter_mount_namespace(0));
	ask_in_mount_storm(m, "openat2()");
	if (!refuse_syscall_if_filtered(SYS_openat2, ENOSYS, "openat2()"))
		return;
	ask_in_mount_storm(m, "openat2() refused");
}

static void t_live_mount_race(void)
{
	struct mount_race m = { 0 };
	struct client c;

	SYS(cg_create("lib-mr"));
	for (size_t i = 3; i-- > 0;) {	/* parents first */
		SYS(cg_create(mount_race_on[i]));
		SYS(cg_create(mount_race_decoy[i]));
	}
	m.peer_id = cg_id(MOUNT_RACE_PEER);
	m.decoy_id = cg_id(mount_race_decoy[0]);
	m.answers = knob("pcg.mount_race_answers", "PCG_MOUNT_RACE_ANSWERS", 2000);
	SYS(m.fd = accept_client(&c, MOUNT_RACE_PEER));
	t_in_child(live_in_mount_storm, &m);
}

/* A caller out of descriptors is told so (EMFILE), not that its peer is gone. */
static void live_out_of_descriptors(void *arg)
{
	struct rlimit one_more;
	struct peercgroup_info info;
	int fd = *(int *)arg, next;

	SYS(next = fcntl(fd, F_DUPFD_CLOEXEC, 0));
	close(next);
	one_more.rlim_cur = one_more.rlim_max = next + 1;	/* the peer's pidfd, no more */
	SYS(setrlimit(RLIMIT_NOFILE, &one_more));
	CHECK_INT(-EMFILE, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
}

static void t_live_out_of_descriptors(void)
{
	struct client c;
	int fd;

	SYS(fd = accept_client(&c, CG_CLIENT));
	t_in_child(live_out_of_descriptors, &fd);
}

/* Both ends of a socketpair name its creator, whoever holds them later. */
static void t_socketpair_names_creator(void)
{
	struct peercgroup_info info;
	int sv[2];

	SYS(cg_create(CG_SERVER));
	SYS(cg_move(CG_SERVER, 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(cg_move("", 0));
	CHECK_INT(0, peercgroup_get(sv[1], 0, &info));
	CHECK_STR("/" CG_SERVER, info.path);
	CHECK_INT(getpid(), info.pid);
	peercgroup_info_free(&info);
}

/* Each bad input gives its documented negative errno. */
static void t_errors(void)
{
	struct peercgroup_info info;
	sa_family_t unnamed = AF_UNIX;
	char buf[PATH_MAX];
	int sv[2], fd;

	CHECK_INT(-EBADF, peercgroup_get(1000, 0, &info));
	SYS(fd = open("/", O_RDONLY | O_CLOEXEC));
	CHECK_INT(-ENOTSOCK, peercgroup_get(fd, 0, &info));
	SYS(fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	CHECK_INT(-EAFNOSUPPORT, peercgroup_get(fd, 0, &info));
	SYS(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv));
	CHECK_INT(-EOPNOTSUPP, peercgroup_get(sv[0], 0, &info));
	SYS(fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	CHECK_INT(-ENOTCONN, peercgroup_get(fd, 0, &info));
	CHECK_INT(-ENOTCONN, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	SYS(bind(fd, (struct sockaddr *)&unnamed, sizeof(unnamed)));	/* autobind */
	SYS(listen(fd, 1));
	CHECK_INT(-ENOTCONN, peercgroup_get(fd, 0, &info));
	CHECK_INT(-ENOTCONN, peercgroup_get(fd, PEERCGROUP_GET_LIVE, &info));
	CHECK_INT(-EINVAL, peercgroup_get(0, 1U << 20, &info));
	/* the same errors from the buffer call, which leaves "" behind */
	buf[0] = 'y';
	CHECK_INT(-ENOTCONN, peercgroup_get_path_buf(fd, buf, sizeof(buf)));
	CHECK_INT(0, buf[0]);
	CHECK_INT(-EOPNOTSUPP, peercgroup_get_path_buf(sv[0], buf, sizeof(buf)));
	CHECK_INT(-EBADF, peercgroup_get_path_buf(1000, buf, sizeof(buf)));
	CHECK_INT(-EINVAL, peercgroup_get_path_buf(fd, NULL, sizeof(buf)));
}

/* peercgroup_module_info() reports the loaded module's ABI. */
static void t_module_info(void)
{
	struct peercgroup_module m;

	CHECK_INT(0, peercgroup_module_info(&m));
	CHECK_INT(PEERCGROUP_ABI_VERSION, m.abi_version);
	CHECK_INT(sizeof(struct peercgroup_query), m.query_size);
	CHECK(m.query_flags & PEERCGROUP_QUERY_NO_PATH, "query flags %#x", m.query_flags);
	CHECK(m.features & PEERCGROUP_FEATURE_STREAM, "features %#llx",
	      (unsigned long long)m.features);
	CHECK(m.version[0], "empty module version");
}

static void use_real_device(void)
{
	pcg_test_set_device(NULL);
}

/* Without the device the answer is ENOPKG, and the library recovers once it is back. */
static void t_module_absent_enopkg(void)
{
	struct peercgroup_info info;
	char buf[PATH_MAX];
	int sv[2];

	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pcg_test_set_device("/dev/peercgroup-absent");
	defer_call(use_real_device);
	CHECK_INT(-ENOPKG, peercgroup_get(sv[0], 0, &info));
	CHECK_INT(-ENOPKG, peercgroup_get_path_buf(sv[0], buf, sizeof(buf)));
	pcg_test_set_device(NULL);
	CHECK_INT(0, peercgroup_get(sv[0], 0, &info));
	peercgroup_info_free(&info);
}

/* A forked child that closed every fd (a daemon) still gets answers. */
static void child_closes_all_and_asks(void *arg)
{
	struct peercgroup_info info;
	int keep = *(int *)arg;

	for (int fd = 3; fd < 64; fd++)
		if (fd != keep)
			close(fd);
	SYS(open("/dev/null", O_RDONLY));	/* takes the library's old number */
	CHECK_INT(0, peercgroup_get(keep, 0, &info));
	peercgroup_info_free(&info);
}

static void t_fork_child_reopens(void)
{
	struct peercgroup_info info;
	int sv[2];

	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	CHECK_INT(0, peercgroup_get(sv[0], 0, &info));	/* the device is open now */
	peercgroup_info_free(&info);
	t_in_child(child_closes_all_and_asks, &sv[0]);
}

/* Descriptors of this process open on the device. */
static int device_fds(void)
{
	char target[64];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	ssize_t len;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		len = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = 0;
			n += !strcmp(target, PEERCGROUP_DEVICE_PATH);
		}
	}
	closedir(d);
	return n;
}

enum { FIRST_ASKERS = 32 };

struct first_queries {
	pthread_barrier_t go;
	int fd, err[FIRST_ASKERS];
};

struct first_asker {
	struct first_queries *f;
	int i;
};

static void *ask_first(void *arg)
{
	struct first_asker *a = arg;
	struct peercgroup_info info;

	pthread_barrier_wait(&a->f->go);
	a->f->err[a->i] = peercgroup_get(a->f->fd, 0, &info);
	peercgroup_info_free(&info);
	return NULL;
}

/* In a fork child, whose library has opened nothing yet. */
static void first_queries_at_once(void *arg)
{
	struct first_asker askers[FIRST_ASKERS];
	pthread_t t[FIRST_ASKERS];
	struct first_queries f = { .fd = *(int *)arg };
	int i;

	CHECK_INT(0, device_fds());
	CHECK_INT(0, pthread_barrier_init(&f.go, NULL, FIRST_ASKERS));
	for (i = 0; i < FIRST_ASKERS; i++) {
		askers[i] = (struct first_asker){ &f, i };
		CHECK_INT(0, pthread_create(&t[i], NULL, ask_first, &askers[i]));
	}
	for (i = 0; i < FIRST_ASKERS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < FIRST_ASKERS; i++)
		CHECK(f.err[i] == 0, "thread %d: %s", i, strerror(-f.err[i]));
	CHECK_INT(1, device_fds());
}

/*
 * 32 threads make a process's first queries at once: each is answered,
 * and the process holds one descriptor of the device, not one per thread.
 */
static void t_first_queries_at_once(void)
{
	struct client c;
	int fd;

	SYS(fd = accept_client(&c, CG_CLIENT));
	t_in_child(first_queries_at_once, &fd);
}

int main(int argc, char **argv)
{
	guest_begin("lib", argc, argv);
	if (module_require())
		return 1;
	RUN(t_module_info);
	RUN(t_stream_accept_side);
	RUN(t_seqpacket_accept_side);
	RUN(t_client_side_names_listener);
	RUN(t_live_answer);
	RUN(t_live_recycled_pid);
	RUN(t_live_peer_of_another_uid);
	RUN(t_live_pid_recycled_while_read);
	RUN(t_live_behind_hidepid);
	RUN(t_live_removed_cgroup);
	RUN(t_live_deleted_in_a_name);
	RUN(t_live_in_cgroup_namespace);
	RUN(t_live_pid_ns_with_parents_proc);
	RUN(t_live_passed_into_pid_ns);
	RUN(t_live_without_pidfd_open);
	RUN(t_live_recreated_cgroup);
	RUN(t_live_deleted_name_recreated);
	RUN(t_live_thread_with_own_file_table);
	RUN(t_live_out_of_descriptors);
	RUN(t_live_mount_on_peer_cgroup);
	RUN(t_live_mount_on_cgroup2_mount);
	RUN(t_live_mount_race);
	RUN(t_socketpair_names_creator);
	RUN(t_errors);
	RUN(t_module_absent_enopkg);
	RUN(t_fork_child_reopens);
	RUN(t_first_queries_at_once);
	return guest_end();
}
