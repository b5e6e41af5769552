// SPDX-License-Identifier: GPL-2.0
/*
 * The module's behaviour, one test per promise, against the real module
 * in a real kernel.  Runs as root in the guest with cgroup2 at CGROOT.
 * Usage: module_suite [TEST]   (TEST: one function name, e.g. t_errors)
 */
#include "guest.h"

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/io_uring.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* Linux 6.11's opcode; Debian 12's headers predate it. */
#define PCG_IORING_OP_LISTEN 57

/* Sets up: the suite in cgroup "srv", listening on "pcg-srv". */
struct server {
	int lfd;
	int type;
	char name[32];
};

static int server_start(struct server *s, const char *cg, int type)
{
	static int seq;

	snprintf(s->name, sizeof(s->name), "pcg-%d-%d", (int)getpid(), seq++);
	s->type = type;
	if (cg_create(cg) || cg_move(cg, 0))
		return -1;
	s->lfd = listen_on(s->name, type);
	return s->lfd < 0 ? -1 : 0;
}

static void server_stop(struct server *s)
{
	close(s->lfd);
	cg_move("", 0);
}

/*
 * A connection to a server in "srv" from a client process in cgroup @cg;
 * returns the accepted socket.  The runner ends both after the test.
 */
static int connection(struct server *s, struct client *c, const char *cg, int type)
{
	if (cg_create(cg) || server_start(s, "srv", type) || client_start(c, cg, s->name, type))
		return -1;
	return accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
}

/* The path and id a query must give for cgroup @cg. */
#define CHECK_ANSWER(err, q, path, cg) do {				\
	char want_[300];						\
	snprintf(want_, sizeof(want_), "/%s", (cg));			\
	CHECK_INT(0, (err));						\
	CHECK_STR(want_, (path));					\
	CHECK_INT((long long)cg_id(cg), (long long)(q).cgroup_id);	\
	CHECK_INT((long long)strlen(want_), (q).path_len);		\
} while (0)

/* The accepting side learns the connecting task's cgroup and pid. */
static void t_stream_accept_side(void)
{
	struct peercgroup_query q;
	struct client c;
	struct server s;
	char path[256];
	int fd, err;

	SYS(fd = connection(&s, &c, "cli_a", SOCK_STREAM));
	err = query(fd, &q, path, sizeof(path));
	CHECK_ANSWER(err, q, path, "cli_a");
	CHECK_INT(c.pid, q.pid);
	CHECK_INT(0, q.result_flags);
	/* NO_PATH gives the same id, no path. */
	err = query(fd, &q, NULL, 0);
	CHECK_INT(0, err);
	CHECK_INT((long long)cg_id("cli_a"), (long long)q.cgroup_id);
	CHECK_INT(0, q.path_len);
}

/* The connecting side learns the listener's cgroup and pid. */
static void t_stream_client_side(void)
{
	struct client_answer a;
	struct client c;
	struct server s;
	int fd;

	SYS(fd = connection(&s, &c, "cli_a", SOCK_STREAM));
	SYS(client_query(&c, &a));
	CHECK_ANSWER(a.err, a.q, a.path, "srv");
	CHECK_INT(getpid(), a.q.pid);
}

/* Like SO_PEERCRED: the listener's origin is fixed by listen(), and
 * renewed by each listen() call.
 */
static void t_listener_fixed_at_listen(void)
{
	struct client_answer a1, a2;
	struct client c1, c2;
	struct server s;

	SYS(cg_create("srv2"));
	SYS(cg_create("cli_a"));
	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(cg_move("srv2", 0));
	SYS(client_start(&c1, "cli_a", s.name, SOCK_STREAM));
	SYS(client_query(&c1, &a1));
	SYS(listen(s.lfd, 128));
	SYS(client_start(&c2, "cli_a", s.name, SOCK_STREAM));
	SYS(client_query(&c2, &a2));
	client_stop(&c1);
	client_stop(&c2);
	server_stop(&s);
	CHECK_ANSWER(a1.err, a1.q, a1.path, "srv");
	CHECK_ANSWER(a2.err, a2.q, a2.path, "srv2");
}

/*
 * One submission through a ring of its own, waited for: the result in its
 * completion, or -EOPNOTSUPP where this kernel has no io_uring (or
 * kernel.io_uring_disabled).  No liburing.
 */
static int io_uring_one(const struct io_uring_sqe *op)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned int *tail;
	size_t sq_len, cq_len;
	void *sq, *cq, *sqes;
	int ring, r;

	ring = (int)syscall(__NR_io_uring_setup, 1, &p);
	if (ring < 0)
		return -EOPNOTSUPP;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE, MAP_SHARED,
		    ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	sqe = sqes;
	*sqe = *op;
	((unsigned int *)((char *)sq + p.sq_off.array))[0] = 0;
	tail = (unsigned int *)((char *)sq + p.sq_off.tail);
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	do
		r = (int)syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		r = -errno;
		goto out;
	}
	cqe = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes);
	r = cqe->res;
out:
	if (sqes != MAP_FAILED)
		munmap(sqes, p.sq_entries * sizeof(*sqe));
	if (cq != MAP_FAILED)
		munmap(cq, cq_len);
	if (sq != MAP_FAILED)
		munmap(sq, sq_len);
	close(ring);
	return r;
}

/*
 * listen(@fd, @backlog) through io_uring (IORING_OP_LISTEN, Linux 6.11);
 * -EOPNOTSUPP before it.
 */
static int io_uring_listen(int fd, unsigned int backlog)
{
	struct io_uring_sqe sqe = {
		.opcode = PCG_IORING_OP_LISTEN, .fd = fd, .len = backlog,
	};
	int r = io_uring_one(&sqe);

	/* an opcode past this kernel's IORING_OP_LAST */
	return r == -EINVAL ? -EOPNOTSUPP : r;
}

/* connect(@fd, @sa, @len) through io_uring (IORING_OP_CONNECT, Linux 5.5). */
static int io_uring_connect(int fd, const struct sockaddr_un *sa, socklen_t len)
{
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_CONNECT, .fd = fd, .addr = (uintptr_t)sa, .addr2 = len,
	};

	return io_uring_one(&sqe);
}

/*
 * A listen() made through io_uring (6.11+) is a listen() like any other:
 * its clients get the cgroup it was made from, as SO_PEERCRED gets its
 * pid.  The socket is made in "srv" and listens from "srv2".
 */
static void t_io_uring_listen(void)
{
	struct client_answer a;
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client c;
	char name[64];
	int lfd, r;

	SYS(cg_create("srv"));
	SYS(cg_create("srv2"));
	SYS(cg_create("cli_a"));
	SYS(cg_move("srv", 0));
	SYS(lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	snprintf(name, sizeof(name), "pcg-uring-%d", (int)getpid());
	SYS(bind(lfd, (struct sockaddr *)&sa, abstract_addr(&sa, name)));
	SYS(cg_move("srv2", 0));
	r = io_uring_listen(lfd, 8);
	SYS(cg_move("", 0));
	if (r == -EOPNOTSUPP) {
		close(lfd);
		SKIP("no IORING_OP_LISTEN (Linux 6.11+) here");
	}
	CHECK_INT(0, r);
	SYS(client_start(&c, "cli_a", name, SOCK_STREAM));
	SYS(client_query(&c, &a));
	/* the kernel's truth for the listener: the pid the client got */
	SYS(getsockopt(lfd, SOL_SOCKET, SO_PEERCRED, &cred, &len));
	client_stop(&c);
	close(lfd);
	CHECK_ANSWER(a.err, a.q, a.path, "srv2");
	CHECK_INT(cred.pid, a.q.pid);
	CHECK_INT(getpid(), a.q.pid);
}

/*
 * A connect() that waits for room in the listener's backlog is recorded
 * when the connection is made, from the cgroup its thread is in then:
 * where the kernel takes the credentials on 5.10 to 6.12 (7.x takes the
 * pid on entry, which a move does not change), and not where the call
 * began, which newsk->sk_cgrp_data holds (hooks.c).  The connecting
 * process moves from cli_a to cli_b while one of its threads sleeps in
 * the connect(): its own, or an io_uring worker's.
 */
struct waiting_connect {
	struct sockaddr_un sa;
	socklen_t len;
	bool uring;
};

/* The child: connects from cli_a, reports, holds its end until told. */
static void waiting_connect_child(const struct waiting_connect *w, int ctl)
{
	int fd, r;
	char b;

	fd = cg_move("cli_a", 0) ? -1 : socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		r = -errno;
	else if (w->uring)
		r = io_uring_connect(fd, &w->sa, w->len);
	else
		r = connect(fd, (const struct sockaddr *)&w->sa, w->len) ? -errno : 0;
	if (write(ctl, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	(void)!read(ctl, &b, 1);
	_exit(0);
}

/*
 * A thread of @pid asleep for room in a listener's backlog, or 0: its
 * kernel stack (wchan says 0 on 5.10's ORC unwinder) is in a stream
 * connect, asleep.
 */
static pid_t waiting_for_backlog(pid_t pid)
{
	char p[96], stack[4096];
	struct dirent *de;
	pid_t tid = 0;
	DIR *d;

	snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
	d = opendir(p);
	while (d && !tid && (de = readdir(d))) {
		pid_t t = (pid_t)atoi(de->d_name);

		if (t <= 0)
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%d/stack", (int)pid, (int)t);
		if (read_text(p, stack, sizeof(stack)) > 0 && strstr(stack, " unix_stream_connect+") &&
		    (strstr(stack, " unix_wait_for_peer+") || strstr(stack, " schedule_timeout+")))
			tid = t;
	}
	if (d)
		closedir(d);
	return tid;
}

static void connect_waits_for_room(bool uring)
{
	struct timeval tmo = { .tv_sec = 60 };
	struct waiting_connect w;
	struct peercgroup_query q;
	struct pollfd pf;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char name[64], path[256], truth[256];
	int lfd, filler, acc, ctl[2], r = -EINPROGRESS;
	pid_t pid, tid = 0;

	SYS(cg_create("srv"));
	SYS(cg_create("cli_a"));
	SYS(cg_create("cli_b"));
	SYS(cg_move("srv", 0));
	snprintf(name, sizeof(name), "pcg-wait-%d", (int)getpid());
	w = (struct waiting_connect){ .uring = uring };
	w.len = abstract_addr(&w.sa, name);
	SYS(lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	defer_close(lfd);
	SYS(bind(lfd, (struct sockaddr *)&w.sa, w.len));
	SYS(setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)));	/* accept()'s */
	SYS(listen(lfd, 0));
	/* backlog 0 queues one connection; the next one waits */
	SYS(filler = connect_to(name, SOCK_STREAM));
	defer_close(filler);
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl));
	defer_close(ctl[0]);
	SYS(pid = fork());
	if (pid == 0) {
		close(ctl[0]);
		waiting_connect_child(&w, ctl[1]);
	}
	defer_kill(pid);
	close(ctl[1]);
	/* the premise: a thread of it sleeps in that connect() */
	pf = (struct pollfd){ .fd = ctl[0], .events = POLLIN };
	for (int i = 0; i < 2000 && !tid; i++) {
		if (poll(&pf, 1, 10) > 0) {
			CHECK_INT(sizeof(r), read(ctl[0], &r, sizeof(r)));
			if (r == -EOPNOTSUPP)
				SKIP("no io_uring here");
			FAIL("the connect() ended (%d) while the backlog was full", r);
		}
		tid = waiting_for_backlog(pid);
	}
	CHECK(tid, "no thread of %d waits for room in the backlog", (int)pid);
	CHECK(uring == (tid != pid), "thread %d of %d waits, and it is %s", (int)tid, (int)pid,
	      uring ? "not an io_uring worker" : "not the caller");
	SYS(cg_move("cli_b", pid));
	/* the kernel's truth: where the waiting thread is now */
	SYS(proc_cgroup(tid, truth, sizeof(truth)));
	CHECK_STR("/cli_b", truth);
	SYS(acc = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));	/* the filler: room */
	close(acc);
	SYS(acc = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
	defer_close(acc);
	CHECK_INT(sizeof(r), read(ctl[0], &r, sizeof(r)));
	CHECK_INT(0, r);
	SYS(getsockopt(acc, SOL_SOCKET, SO_PEERCRED, &cred, &clen));
	CHECK_INT(pid, cred.pid);
	r = query(acc, &q, path, sizeof(path));
	CHECK_ANSWER(r, q, path, "cli_b");
	CHECK_INT(pid, q.pid);
	printf("# %s: thread %d of %d waited in connect(); answer %s\n",
	       uring ? "io_uring" : "connect()", (int)tid, (int)pid, path);
}

static void t_connect_waits_for_room_while_moved(void)
{
	connect_waits_for_room(false);
}

static void t_io_uring_connect_waits_in_a_worker(void)
{
	connect_waits_for_room(true);
}

/*
 * Landlock's ruleset as of its ABI 6 (6.12), which scopes abstract
 * sockets; Debian 12's <linux/landlock.h> predates .scoped.
 */
struct pcg_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define PCG_LANDLOCK_CREATE_RULESET_VERSION	(1U << 0)
#define PCG_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)

static void connect_out_of_landlock_scope(void *arg)
{
	struct pcg_landlock_ruleset_attr attr = {
		.scoped = PCG_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET,
	};
	int ruleset, fd;

	SYS(cg_move("refused", 0));
	SYS(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	SYS(ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0));
	SYS(syscall(SYS_landlock_restrict_self, ruleset, 0));
	fd = connect_to(arg, SOCK_STREAM);
	CHECK(fd < 0 && errno == EPERM, "connect out of scope: %d (%s), want EPERM",
	      fd, strerror(errno));
}

/* The BTF id of the kernel function @name in /sys/kernel/btf/vmlinux; 0 if none. */
static uint32_t btf_func_id(const char *name)
{
	const struct btf_header *h;
	size_t len = 0, cap = 8 << 20, off, end;
	uint32_t id = 0, next = 1;
	char *btf = malloc(cap);
	ssize_t n;
	int fd;

	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && btf && (n = read(fd, btf + len, cap - len)) > 0) {
		char *more = (len += n) == cap ? realloc(btf, cap *= 2) : btf;

		if (!more)
			free(btf);
		btf = more;
	}
	if (fd >= 0)
		close(fd);
	h = (const struct btf_header *)btf;
	if (!btf || len < sizeof(*h) || h->magic != BTF_MAGIC ||
	    (size_t)h->hdr_len + h->str_off + h->str_len > len)
		goto out;
	off = h->hdr_len + h->type_off;
	end = off + h->type_len;
	while (!id && off + sizeof(struct btf_type) <= end) {
		const struct btf_type *t = (const void *)(btf + off);
		uint32_t vlen = BTF_INFO_VLEN(t->info);

		if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC && t->name_off < h->str_len &&
		    !strcmp(btf + h->hdr_len + h->str_off + t->name_off, name))
			id = next;
		off += sizeof(*t);
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_INT:
		case BTF_KIND_VAR:
		case BTF_KIND_DECL_TAG:
			off += 4;
			break;
		case BTF_KIND_ARRAY:
			off += sizeof(struct btf_array);
			break;
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			off += vlen * sizeof(struct btf_member);
			break;
		case BTF_KIND_ENUM:
			off += vlen * sizeof(struct btf_enum);
			break;
		case BTF_KIND_ENUM64:
			off += vlen * 3 * sizeof(uint32_t);
			break;
		case BTF_KIND_FUNC_PROTO:
			off += vlen * sizeof(struct btf_param);
			break;
		case BTF_KIND_DATASEC:
			off += vlen * sizeof(struct btf_var_secinfo);
			break;
		}
		next++;
	}
out:
	free(btf);
	return id;
}

/*
 * connect() to @name while a BPF LSM program refuses every
 * unix_stream_connect: 0 once refused, 1 if it connected (the BPF LSM is
 * not among the kernel's active LSMs), -errno if no program could be
 * attached.
 */
static int connect_refused_by_bpf_lsm(const char *name)
{
	struct bpf_insn refuse[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -EPERM },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int prog, link, fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_LSM;
	attr.expected_attach_type = BPF_LSM_MAC;
	attr.attach_btf_id = btf_func_id("bpf_lsm_unix_stream_connect");
	attr.insns = (uintptr_t)refuse;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t)"GPL";
	if (!attr.attach_btf_id)
		return -ENOENT;
	prog = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (prog < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.prog_fd = prog;
	link = (int)syscall(SYS_bpf, BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));
	err = -errno;
	close(prog);
	if (link < 0)
		return err;
	fd = connect_to(name, SOCK_STREAM);
	err = fd < 0 ? -errno : 1;
	close(link);
	if (fd >= 0)
		close(fd);
	return err == -EPERM ? 0 : err;
}

/*
 * A connect() an LSM refuses in security_unix_stream_connect(), after
 * the hook made its record: the socket accept() would have returned dies
 * before the kernel gives it a type, and its record must go with it.  A
 * record left behind pins two cgroups (the live count shows it), and
 * answers for the next socket born at that address: the next client of
 * "srv" on this CPU may get that memory, and must be told "srv", never
 * "refused" (in the runs before the fix it did not get it, so the count
 * is the check that failed).  Refused by Landlock, which needs no policy
 * (a connect to an abstract socket outside the caller's scope, 6.12+), or
 * else by a BPF LSM program (where "bpf" is an active LSM: Debian's 6.1,
 * not its 5.10).
 */
static void t_refused_connect_leaves_no_record(void)
{
	long abi, live0, recorded0, live1, recorded1;
	struct peercgroup_query q;
	cpu_set_t all, one;
	char path[256];
	struct server s;
	int err = 0, cli, acc;

	SYS(sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	SYS(sched_setaffinity(0, sizeof(one), &one));
	SYS(cg_create("refused"));
	SYS(server_start(&s, "srv", SOCK_STREAM));
	live0 = counter("live");
	recorded0 = counter("recorded");
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, PCG_LANDLOCK_CREATE_RULESET_VERSION);
	if (abi >= 6) {
		t_in_child(connect_out_of_landlock_scope, s.name);
	} else {
		SYS(cg_move("refused", 0));
		err = connect_refused_by_bpf_lsm(s.name);
	}
	live1 = counter("live");
	recorded1 = counter("recorded");
	cli = connect_to(s.name, SOCK_STREAM);
	acc = cli < 0 ? -1 : accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC);
	if (acc >= 0)
		acc = query(cli, &q, path, sizeof(path)) ? -1 : acc;
	if (cli >= 0)
		close(cli);
	server_stop(&s);
	SYS(sched_setaffinity(0, sizeof(all), &all));
	if (err)
		SKIP("no LSM refuses: Landlock ABI %ld (scopes from 6), BPF LSM: %s (%d; 524: no BPF trampolines)",
		     abi, err > 0 ? "not active" : strerror(-err), err);
	CHECK(recorded1 == recorded0 + 1, "recorded %ld, was %ld: the hook did not run",
	      recorded1, recorded0);
	CHECK(acc >= 0, "the next client of srv: no connection or no answer");
	close(acc);
	CHECK_ANSWER(0, q, path, "srv");
	CHECK(live1 == live0, "live %ld, was %ld: the refused connection's record stayed",
	      live1, live0);
}

/*
 * listen() calls the kernel refuses record nothing: on an unbound socket,
 * and on a bound, connected one (whose answer stays the listener's).
 */
static void t_refused_listen_records_nothing(void)
{
	struct peercgroup_query q;
	struct sockaddr_un sa;
	struct server s;
	char path[256], name[64];
	long live0, live1;
	int fd, cli, acc;

	live0 = counter("live");
	SYS(fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	CHECK(listen(fd, 8) == -1 && errno == EINVAL, "listen on an unbound socket");
	close(fd);
	CHECK_INT(live0, counter("live"));

	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(cli = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	snprintf(name, sizeof(name), "pcg-bound-client-%d", (int)getpid());
	SYS(bind(cli, (struct sockaddr *)&sa, abstract_addr(&sa, name)));
	{
		socklen_t len = abstract_addr(&sa, s.name);

		SYS(connect(cli, (struct sockaddr *)&sa, len));
	}
	SYS(acc = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	live1 = counter("live");
	SYS(cg_move("", 0));
	CHECK(listen(cli, 8) == -1 && errno == EINVAL, "listen on a connected socket");
	CHECK_INT(live1, counter("live"));
	CHECK_ANSWER(query(cli, &q, path, sizeof(path)), q, path, "srv");
	close(cli);
	close(acc);
	server_stop(&s);
}

/*
 * A process that shares listener @lfd and, for each cgroup name it reads
 * from @cmd, moves there and calls listen() on it, then writes back the
 * errno (0: listening).
 */
static pid_t relistener_start(int lfd, int *cmd, int *ack)
{
	int to[2], from[2];
	pid_t pid;

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		char cg[64];
		ssize_t n;

		close(to[1]);
		close(from[0]);
		while ((n = read(to[0], cg, sizeof(cg) - 1)) > 0) {
			unsigned char e;

			cg[n] = '\0';
			e = cg_move(cg, 0) ? 255 : listen(lfd, 8) ? (unsigned char)errno : 0;
			if (write(from[1], &e, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	*cmd = to[1];
	*ack = from[0];
	defer_close(to[1]);
	defer_close(from[0]);
	if (pid > 0)
		defer_kill(pid);
	return pid;
}

static int relisten_from(int cmd, int ack, const char *cg)
{
	unsigned char e = 255;

	if (write(cmd, cg, strlen(cg)) != (ssize_t)strlen(cg) || read(ack, &e, 1) != 1)
		return -1;
	errno = e;
	return e ? -1 : 0;
}

/*
 * A listener keeps the cgroups of a few thread groups that listen() on it
 * (PCG_LISTEN_SLOTS, 4): five processes listen in turn, each from its own
 * cgroup, and then the first again from a sixth, its slot long evicted.
 * After each call, a client gets that call's cgroup, and the pid that
 * SO_PEERCRED gives for the listener.
 */
static void t_listeners_past_the_slots(void)
{
	static const int turns[] = { 0, 1, 2, 3, 4, 0 };
	int cmd[5], ack[5];
	pid_t pid[5];
	struct client_answer a;
	struct server s;
	struct ucred cred;
	struct client c;
	char cg[16];
	size_t i;

	SYS(cg_create("cli_a"));
	SYS(server_start(&s, "srv", SOCK_STREAM));
	for (i = 0; i < 5; i++)
		SYS(pid[i] = relistener_start(s.lfd, &cmd[i], &ack[i]));
	for (i = 0; i < sizeof(turns) / sizeof(turns[0]); i++) {
		socklen_t len = sizeof(cred);
		int who = turns[i];

		snprintf(cg, sizeof(cg), "lst%zu", i);
		SYS(cg_create(cg));
		SYS(relisten_from(cmd[who], ack[who], cg));
		SYS(getsockopt(s.lfd, SOL_SOCKET, SO_PEERCRED, &cred, &len));
		CHECK_INT(pid[who], cred.pid);
		SYS(client_start(&c, "cli_a", s.name, SOCK_STREAM));
		SYS(client_query(&c, &a));
		client_stop(&c);
		CHECK_ANSWER(a.err, a.q, a.path, cg);
		CHECK_INT(pid[who], a.q.pid);
	}
	server_stop(&s);
}

/* SOCK_SEQPACKET behaves like SOCK_STREAM, both directions. */
static void t_seqpacket(void)
{
	struct peercgroup_query q;
	struct client_answer a;
	struct client c;
	struct server s;
	char path[256];
	int fd, err;
	pid_t pid;

	SYS(fd = connection(&s, &c, "cli_a", SOCK_SEQPACKET));
	err = query(fd, &q, path, sizeof(path));
	SYS(client_query(&c, &a));
	pid = c.pid;
	CHECK_ANSWER(err, q, path, "cli_a");
	CHECK_INT(pid, q.pid);
	CHECK_ANSWER(a.err, a.q, a.path, "srv");
}

/* Both ends of socketpair() learn the creator, whoever holds them later. */
/*
 * In cgroup @cg, a child makes a listening socket (@pair false: bound to
 * @name) or a socketpair, sends it (both ends) over @via, and exits; it is
 * reaped.  Its pid.
 */
static pid_t made_by_a_gone_process(const char *cg, const char *name, bool pair, int via)
{
	pid_t pid = fork();

	if (pid == 0) {
		int sv[2] = { -1, -1 };

		if (cg_move(cg, 0))
			_exit(1);
		if (pair ? socketpair(AF_UNIX, SOCK_STREAM, 0, sv) :
			   (sv[0] = listen_on(name, SOCK_STREAM)) < 0)
			_exit(2);
		_exit(send_fd(via, sv[0]) || (pair && send_fd(via, sv[1])) ? 3 : 0);
	}
	if (pid > 0 && (waitpid(pid, NULL, 0) != pid))
		return -1;
	return pid;
}

/* @fd's answer names @cg and @gone, exited, as SO_PEERCRED names @gone. */
static void check_gone_peer(int fd, const char *cg, pid_t gone)
{
	struct peercgroup_query q;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[256];
	int err = query(fd, &q, path, sizeof(path));

	SYS(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len));
	CHECK_INT(gone, cred.pid);
	CHECK_ANSWER(err, q, path, cg);
	CHECK_INT(gone, q.pid);
	CHECK_INT(PEERCGROUP_RESULT_PEER_EXITED, q.result_flags);
}

/*
 * The client end when the process that listened is gone (its socket kept
 * by another), and both ends of a socketpair whose maker is gone: each
 * names the gone process, as SO_PEERCRED does, its cgroup, and that it
 * has exited.
 */
static void t_client_end_outlives_its_listener(void)
{
	int via[2], lfd, cli, acc, sv[2];
	char name[64];
	pid_t gone;

	SYS(cg_create("gone_l"));
	SYS(cg_create("gone_p"));
	SYS(cg_create("cli_a"));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, via));
	defer_close(via[0]);
	defer_close(via[1]);
	snprintf(name, sizeof(name), "pcg-gone-%d", (int)getpid());
	SYS(gone = made_by_a_gone_process("gone_l", name, false, via[1]));
	SYS(lfd = recv_fd(via[0]));
	defer_close(lfd);
	SYS(cg_move("cli_a", 0));
	SYS(cli = connect_to(name, SOCK_STREAM));
	defer_close(cli);
	SYS(acc = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
	defer_close(acc);
	check_gone_peer(cli, "gone_l", gone);

	SYS(gone = made_by_a_gone_process("gone_p", NULL, true, via[1]));
	SYS(sv[0] = recv_fd(via[0]));
	defer_close(sv[0]);
	SYS(sv[1] = recv_fd(via[0]));
	defer_close(sv[1]);
	check_gone_peer(sv[0], "gone_p", gone);
	check_gone_peer(sv[1], "gone_p", gone);
	SYS(cg_move("", 0));
}

static void t_socketpair(void)
{
	struct peercgroup_query q0, q1;
	char p0[256], p1[256];
	int sv[2], err0, err1;

	SYS(cg_create("pair"));
	SYS(cg_create("cli_b"));
	SYS(cg_move("pair", 0));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(cg_move("cli_b", 0));
	err0 = query(sv[0], &q0, p0, sizeof(p0));
	err1 = query(sv[1], &q1, p1, sizeof(p1));
	close(sv[0]);
	close(sv[1]);
	SYS(cg_move("", 0));
	CHECK_ANSWER(err0, q0, p0, "pair");
	CHECK_ANSWER(err1, q1, p1, "pair");
	CHECK_INT(getpid(), q0.pid);
	CHECK_INT(getpid(), q1.pid);

	/* seqpacket pairs too */
	SYS(cg_move("pair", 0));
	SYS(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	SYS(cg_move("", 0));
	err0 = query(sv[1], &q0, p0, sizeof(p0));
	close(sv[0]);
	close(sv[1]);
	CHECK_ANSWER(err0, q0, p0, "pair");
}

/* The answer does not follow the peer to another cgroup. */
static void t_peer_moves(void)
{
	struct peercgroup_query q;
	struct client c;
	struct server s;
	char path[256];
	int fd, err;

	SYS(cg_create("cli_a"));
	SYS(cg_create("cli_b"));
	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(client_start(&c, "cli_a", s.name, SOCK_STREAM));
	SYS(fd = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	SYS(client_move(&c, "cli_b"));
	err = query(fd, &q, path, sizeof(path));
	CHECK_ANSWER(err, q, path, "cli_a");
}

/* Nor does it change when the peer exits: only a flag says so. */
static void t_peer_exits(void)
{
	struct peercgroup_query q;
	struct client c;
	struct server s;
	char path[256];
	pid_t pid;
	int fd, err;

	SYS(fd = connection(&s, &c, "cli_a", SOCK_STREAM));
	pid = c.pid;
	err = query(fd, &q, path, sizeof(path));
	CHECK_INT(0, err);
	CHECK_INT(0, q.result_flags & PEERCGROUP_RESULT_PEER_EXITED);
	client_stop(&c);
	err = query(fd, &q, path, sizeof(path));
	close(fd);
	server_stop(&s);
	CHECK_ANSWER(err, q, path, "cli_a");
	CHECK_INT(pid, q.pid);
	CHECK_INT(PEERCGROUP_RESULT_PEER_EXITED, q.result_flags);
}

/* Connects to @name, then its main thread exits while another sleeps. */
static void leader_exits_first(const char *name, int ready)
{
	pthread_t t;
	int fd = connect_to(name, SOCK_STREAM);

	if (fd < 0 || pthread_create(&t, NULL, sleep_forever, NULL) ||
	    write(ready, "r", 1) != 1)
		_exit(1);
	pthread_exit(NULL);
}

/* The exited flag, asked from a pid namespace the peer is not in. */
struct exited_seen {
	int fd;
	uint32_t exited;	/* PEERCGROUP_RESULT_PEER_EXITED or 0 */
};

static void exited_from_outside(void *arg)
{
	const struct exited_seen *e = arg;
	struct peercgroup_query q;
	char path[256];

	CHECK_INT(0, query(e->fd, &q, path, sizeof(path)));
	CHECK_INT(0, q.pid);
	CHECK_INT(e->exited, q.result_flags & PEERCGROUP_RESULT_PEER_EXITED);
}

static void exited_in_new_pid_namespace(void *arg)
{
	SYS(unshare(CLONE_NEWPID));
	t_in_child(exited_from_outside, arg);
}

/*
 * A peer that has exited but is not reaped yet (a zombie) has exited, as
 * pidfd_poll() tells; a group leader that has exited while another thread
 * of its process runs has not.
 */
static void t_zombie_peer_has_exited(void)
{
	struct peercgroup_query q;
	struct server s;
	char path[256], state = 0, r;
	int fd = -1, ready[2], i, err;
	ssize_t n;
	pid_t pid;

	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(pipe2(ready, O_CLOEXEC));
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		leader_exits_first(s.name, ready[1]);
	}
	close(ready[1]);
	SYS(pid);
	defer_kill(pid);
	n = read(ready[0], &r, 1);
	close(ready[0]);
	CHECK(n == 1, "the client did not connect");
	SYS(fd = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	defer_close(fd);
	for (i = 0; i < 500 && (state = proc_state(pid)) != 'Z'; i++)
		usleep(10000);
	CHECK(state == 'Z', "the leader's state is '%c', not Z", state ? state : '?');
	err = query(fd, &q, path, sizeof(path));
	CHECK_INT(0, err);
	CHECK(!(q.result_flags & PEERCGROUP_RESULT_PEER_EXITED),
	      "flags %#x: exited while a thread still runs", q.result_flags);
	t_in_child(exited_in_new_pid_namespace, &(struct exited_seen){ fd, 0 });

	/* every thread gone, the process not reaped: a zombie */
	SYS(kill(pid, SIGKILL));
	for (i = 0; i < 500; i++) {
		err = query(fd, &q, path, sizeof(path));
		if (err || (q.result_flags & PEERCGROUP_RESULT_PEER_EXITED))
			break;
		usleep(10000);
	}
	CHECK_INT(0, err);
	CHECK(q.result_flags & PEERCGROUP_RESULT_PEER_EXITED,
	      "flags %#x: a zombie not told exited (state '%c')", q.result_flags,
	      proc_state(pid) ? proc_state(pid) : '?');
	CHECK_INT(pid, q.pid);
	t_in_child(exited_in_new_pid_namespace,
		   &(struct exited_seen){ fd, PEERCGROUP_RESULT_PEER_EXITED });
	server_stop(&s);
}

/*
 * A new process with the exited peer's pid, in another cgroup, changes
 * nothing: the record is of the connection, not of the pid.
 */
static void t_pid_reused(void)
{
	struct peercgroup_query q;
	struct client c;
	struct server s;
	char path[256], last[32];
	int fd, err, sync[2];
	pid_t old, again = -1;

	SYS(cg_create("cli_a"));
	SYS(cg_create("cli_b"));
	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(client_start(&c, "cli_a", s.name, SOCK_STREAM));
	SYS(fd = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	old = c.pid;
	client_stop(&c);
	SYS(pipe2(sync, O_CLOEXEC));
	for (int tries = 0; tries < 20 && again != old; tries++) {
		snprintf(last, sizeof(last), "%d", (int)old - 1);
		SYS(write_file("/proc/sys/kernel/ns_last_pid", last));
		again = fork();
		if (again == 0) {
			char b;

			close(sync[1]);
			cg_move("cli_b", 0);
			if (read(sync[0], &b, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (again != old) {
			kill(again, SIGKILL);
			waitpid(again, NULL, 0);
		}
	}
	CHECK_INT(old, again);
	usleep(10000);
	err = query(fd, &q, path, sizeof(path));
	close(sync[1]);
	waitpid(again, NULL, 0);
	close(sync[0]);
	close(fd);
	server_stop(&s);
	CHECK_ANSWER(err, q, path, "cli_a");
	CHECK_INT(old, q.pid);
	CHECK_INT(PEERCGROUP_RESULT_PEER_EXITED, q.result_flags);
}

/* In a new pid namespace, this process is pid 1: its socketpair says so. */
static void peer_is_outside_the_pid_namespace(void *accepted)
{
	struct peercgroup_query q;
	char path[256];
	int sv[2];

	CHECK_INT(0, query(*(int *)accepted, &q, path, sizeof(path)));
	CHECK_STR("/cli_a", path);
	CHECK_INT(0, q.pid);
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	CHECK_INT(0, query(sv[0], &q, NULL, 0));
	CHECK_INT(1, q.pid);
}

static void in_new_pid_namespace(void *accepted)
{
	SYS(unshare(CLONE_NEWPID));
	t_in_child(peer_is_outside_the_pid_namespace, accepted);
}

/*
 * The pid is given in the caller's pid namespace: 0 for a peer outside
 * it, the namespace's own number for one inside.
 */
static void t_pid_namespace(void)
{
	struct client c;
	struct server s;
	int fd;

	SYS(fd = connection(&s, &c, "cli_a", SOCK_STREAM));
	t_in_child(in_new_pid_namespace, &fd);
}

/* A cgroup removed after connect is still named, and flagged. */
static void t_cgroup_removed(void)
{
	struct peercgroup_query q;
	struct client c;
	struct server s;
	char path[256];
	uint64_t id;
	int fd, err;

	SYS(cg_create("gone"));
	id = cg_id("gone");
	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(client_start(&c, "gone", s.name, SOCK_STREAM));
	SYS(fd = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	SYS(client_move(&c, ""));
	SYS(cg_remove("gone"));
	err = query(fd, &q, path, sizeof(path));
	CHECK_INT(0, err);
	CHECK_STR("/gone", path);
	CHECK_INT((long long)id, (long long)q.cgroup_id);
	CHECK_INT(PEERCGROUP_RESULT_CGROUP_REMOVED,
		  q.result_flags & PEERCGROUP_RESULT_CGROUP_REMOVED);
}

/* A child in cgroup @cg calls listen() on @lfd once, and exits. */
static void relisten_in_child(int lfd, const char *cg)
{
	pid_t pid;

	cg_create(cg);
	pid = fork();
	if (pid == 0)
		_exit(cg_move(cg, 0) || listen(lfd, 128));
	waitpid(pid, NULL, 0);
}

/*
 * Connections made before the module was loaded have no record: ENODATA,
 * never a guess.  A listener from before the load still gives its new
 * connections' accepting side an answer, but not their client side, until
 * it listens again.
 */
static void t_connection_before_load(void)
{
	struct peercgroup_query q;
	struct client_answer a;
	struct client c_old, c_new, c_relisten;
	struct server s;
	char path[256];
	int sv[2], fd_old, fd_new, err_pair, err_old, err_new, err_old_cli;

	SYS(cg_create("cli_a"));
	SYS(module_unload());
	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(client_start(&c_old, "cli_a", s.name, SOCK_STREAM));
	SYS(fd_old = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	SYS(module_load());

	err_pair = query(sv[0], &q, path, sizeof(path));
	err_old = query(fd_old, &q, path, sizeof(path));
	SYS(client_query(&c_old, &a));
	err_old_cli = a.err;
	SYS(client_start(&c_new, "cli_a", s.name, SOCK_STREAM));
	SYS(fd_new = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	err_new = query(fd_new, &q, path, sizeof(path));
	CHECK_INT(-ENODATA, err_pair);
	CHECK_INT(-ENODATA, err_old);
	CHECK_INT(-ENODATA, err_old_cli);
	CHECK_ANSWER(err_new, q, path, "cli_a");
	SYS(client_query(&c_new, &a));
	CHECK_INT(-ENODATA, a.err);

	/*
	 * listen() again after the load, by the same process or another:
	 * a call the module followed from entry to return, alone in its
	 * process, set the credentials last, so clients learn its cgroup,
	 * whatever the calls the module never saw left.  The same process
	 * listening again after another is learnt again too.
	 */
	SYS(cg_create("srv3"));
	SYS(cg_move("srv3", 0));
	SYS(listen(s.lfd, 128));
	SYS(client_start(&c_relisten, "cli_a", s.name, SOCK_STREAM));
	SYS(client_query(&c_relisten, &a));
	CHECK_ANSWER(a.err, a.q, a.path, "srv3");
	client_stop(&c_relisten);
	relisten_in_child(s.lfd, "srv2");
	SYS(client_start(&c_relisten, "cli_a", s.name, SOCK_STREAM));
	SYS(client_query(&c_relisten, &a));
	CHECK_ANSWER(a.err, a.q, a.path, "srv2");
	client_stop(&c_relisten);
	SYS(listen(s.lfd, 128));
	SYS(client_start(&c_relisten, "cli_a", s.name, SOCK_STREAM));
	SYS(client_query(&c_relisten, &a));
	CHECK_ANSWER(a.err, a.q, a.path, "srv3");

	close(sv[0]);
	close(sv[1]);
	close(fd_old);
	close(fd_new);
	client_stop(&c_old);
	client_stop(&c_new);
	client_stop(&c_relisten);
	server_stop(&s);
}

/*
 * A socket born where a recorded socket died must not inherit its entry.
 * Recorded socketpairs are made and closed, then clients of a listener
 * that has no record (listening since before the load) are made in the
 * freed memory: each must answer ENODATA, never the dead pairs' cgroup.
 */
static void t_address_reuse(void)
{
	enum { ROUNDS = 20, N = 64 };
	int sv[N][2], cli[N], acc[N];
	struct peercgroup_query q;
	struct server s;
	char path[256];
	long live0;

	SYS(cg_create("reuse"));
	SYS(module_unload());
	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(module_load());
	live0 = counter("live");
	for (int r = 0; r < ROUNDS; r++) {
		SYS(cg_move("reuse", 0));
		for (int i = 0; i < N; i++)
			SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]));
		for (int i = 0; i < N; i++) {
			close(sv[i][0]);
			close(sv[i][1]);
		}
		SYS(cg_move("srv", 0));
		for (int i = 0; i < N; i++) {
			SYS(cli[i] = connect_to(s.name, SOCK_STREAM));
			SYS(acc[i] = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
		}
		for (int i = 0; i < N; i++) {
			int err = query(cli[i], &q, path, sizeof(path));

			if (err != -ENODATA)
				FAIL("round %d client %d: expected ENODATA, got %d \"%s\"",
				     r, i, err, err ? "" : path);
			err = query(acc[i], &q, path, sizeof(path));
			CHECK_ANSWER(err, q, path, "srv");
		}
		for (int i = 0; i < N; i++) {
			close(cli[i]);
			close(acc[i]);
		}
	}
	server_stop(&s);
	CHECK_INT(live0, counter("live"));
}

static int raw_ioctl(unsigned long cmd, void *arg)
{
	int dev = dev_open(), ret;

	if (dev < 0)
		return -errno;
	ret = ioctl(dev, cmd, arg) ? -errno : 0;
	close(dev);
	return ret;
}

/* Every documented errno, each for its cause. */
static void t_errors(void)
{
	struct peercgroup_query q;
	struct client c;
	struct server s;
	char path[256], *unmapped;
	int fd, sv[2], reg, inet, lsock, fresh, dgram;

	SYS(fd = connection(&s, &c, "cli_a", SOCK_STREAM));
	SYS(reg = open("/proc/self/status", O_RDONLY | O_CLOEXEC));
	SYS(inet = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	SYS(fresh = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	SYS(dgram = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	SYS(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv));
	lsock = s.lfd;
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(unmapped != MAP_FAILED, "mmap");

	CHECK_INT(-EBADF, query(-1, &q, path, sizeof(path)));
	CHECK_INT(-EBADF, query(9999, &q, path, sizeof(path)));
	CHECK_INT(-ENOTSOCK, query(reg, &q, path, sizeof(path)));
	CHECK_INT(-EAFNOSUPPORT, query(inet, &q, path, sizeof(path)));
	CHECK_INT(-EOPNOTSUPP, query(dgram, &q, path, sizeof(path)));
	CHECK_INT(-EOPNOTSUPP, query(sv[0], &q, path, sizeof(path)));
	CHECK_INT(-ENOTCONN, query(fresh, &q, path, sizeof(path)));
	CHECK_INT(-ENOTCONN, query(lsock, &q, path, sizeof(path)));

	/* ERANGE, with the needed length still returned */
	CHECK_INT(-ERANGE, query(fd, &q, path, 3));
	CHECK_INT((long long)strlen("/cli_a"), q.path_len);
	CHECK_INT((long long)cg_id("cli_a"), (long long)q.cgroup_id);
	CHECK_INT(-ERANGE, query(fd, &q, path, strlen("/cli_a")));
	CHECK_INT(0, query(fd, &q, path, strlen("/cli_a") + 1));
	CHECK_INT(-ERANGE, query(fd, &q, path, 0));

	/* EFAULT: bad path pointer, bad struct pointer */
	CHECK_INT(-EFAULT, query(fd, &q, unmapped, 256));
	CHECK_INT(-EFAULT, raw_ioctl(PEERCGROUP_IOC_QUERY, unmapped));
	CHECK_INT(-EFAULT, raw_ioctl(PEERCGROUP_IOC_QUERY, NULL));

	/* EINVAL: unknown flags, reserved field, size too small */
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.sockfd = fd;
	q.flags = 1U << 31;
	CHECK_INT(-EINVAL, raw_ioctl(PEERCGROUP_IOC_QUERY, &q));
	q.flags = PEERCGROUP_QUERY_NO_PATH;
	q.reserved = 1;
	CHECK_INT(-EINVAL, raw_ioctl(PEERCGROUP_IOC_QUERY, &q));
	q.reserved = 0;
	q.size = PEERCGROUP_QUERY_SIZE_VER0 - 8;
	CHECK_INT(-EINVAL, raw_ioctl(PEERCGROUP_IOC_QUERY, &q));
	q.size = 0;
	CHECK_INT(-EINVAL, raw_ioctl(PEERCGROUP_IOC_QUERY, &q));

	/* E2BIG: non-zero bytes the module does not know; absurd sizes */
	{
		unsigned char big[128] = { 0 };
		struct peercgroup_query *bq = (void *)big;

		bq->size = sizeof(big);
		bq->sockfd = fd;
		bq->flags = PEERCGROUP_QUERY_NO_PATH;
		CHECK_INT(0, raw_ioctl(PEERCGROUP_IOC_QUERY, big));
		CHECK_INT((long long)cg_id("cli_a"), (long long)bq->cgroup_id);
		big[100] = 1;
		CHECK_INT(-E2BIG, raw_ioctl(PEERCGROUP_IOC_QUERY, big));
		big[100] = 0;
		bq->size = 1 << 20;
		CHECK_INT(-E2BIG, raw_ioctl(PEERCGROUP_IOC_QUERY, big));
	}

	/* ENOTTY: unknown number, other magic, other direction */
	CHECK_INT(-ENOTTY, raw_ioctl(_IOWR(PEERCGROUP_IOC_MAGIC, 0x7f, struct peercgroup_query), &q));
	CHECK_INT(-ENOTTY, raw_ioctl(_IOWR('x', 0x01, struct peercgroup_query), &q));
	CHECK_INT(-ENOTTY, raw_ioctl(_IOR(PEERCGROUP_IOC_MAGIC, 0x01, struct peercgroup_query), &q));
	CHECK_INT(-ENOTTY, raw_ioctl(FIONREAD, &q));

	munmap(unmapped, 4096);
	close(reg);
	close(inet);
	close(fresh);
	close(dgram);
	close(sv[0]);
	close(sv[1]);
}

/*
 * Older and newer binaries interoperate: the module reads and writes only
 * the size the caller declares, and zero-extends older structs.
 */
static void t_abi_sizes(void)
{
	unsigned char buf[96];
	struct peercgroup_query *q = (void *)buf;
	struct peercgroup_version v;
	struct client c;
	struct server s;
	char mv[64] = "";
	int fd, vfd;

	SYS(fd = connection(&s, &c, "cli_a", SOCK_STREAM));

	/* a larger, zero-extended struct: fine, and bytes past ours untouched
	 * by the kernel beyond the declared size
	 */
	memset(buf, 0, sizeof(buf));
	q->size = 64;
	q->sockfd = fd;
	q->flags = PEERCGROUP_QUERY_NO_PATH;
	memset(buf + 64, 0xa5, sizeof(buf) - 64);
	CHECK_INT(0, raw_ioctl(PEERCGROUP_IOC_QUERY, buf));
	CHECK_INT((long long)cg_id("cli_a"), (long long)q->cgroup_id);
	for (size_t i = 64; i < sizeof(buf); i++)
		CHECK(buf[i] == 0xa5, "byte %zu past the declared size was written", i);

	/* every size around the limits: the first published one and a page */
	{
		const size_t page = (size_t)sysconf(_SC_PAGESIZE), cap = page + 64;
		const struct {
			size_t size;
			int err;
		} sizes[] = {
			{ PEERCGROUP_QUERY_SIZE_VER0 - 1, -EINVAL },
			{ PEERCGROUP_QUERY_SIZE_VER0, 0 },
			{ PEERCGROUP_QUERY_SIZE_VER0 + 1, 0 },
			{ page, 0 },
			{ page + 1, -E2BIG },
		};
		static unsigned char big[65536 + 64];

		CHECK(cap <= sizeof(big), "a page of %zu bytes", page);
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			struct peercgroup_query *bq = (void *)big;
			size_t n = sizes[k].size, i;

			memset(big, 0, n);
			memset(big + n, 0xa5, cap - n);
			bq->size = n;
			bq->sockfd = fd;
			bq->flags = PEERCGROUP_QUERY_NO_PATH;
			CHECK(raw_ioctl(PEERCGROUP_IOC_QUERY, big) == sizes[k].err,
			      "size %zu: want %d", n, sizes[k].err);
			if (!sizes[k].err)
				CHECK(bq->cgroup_id == cg_id("cli_a") && bq->pid == c.pid,
				      "size %zu: id %llu pid %d", n,
				      (unsigned long long)bq->cgroup_id, bq->pid);
			i = sizeof(*bq);
			while (i < cap && big[i] == (i < n ? 0 : 0xa5))
				i++;
			CHECK(i == cap, "size %zu: byte %zu written", n, i);
		}
	}

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	CHECK_INT(0, raw_ioctl(PEERCGROUP_IOC_VERSION, &v));
	CHECK_INT(PEERCGROUP_ABI_VERSION, v.abi_version);
	CHECK_INT(sizeof(struct peercgroup_query), v.query_size);
	CHECK_INT(PEERCGROUP_QUERY_FLAGS_ALL, v.query_flags);
	CHECK(v.features & PEERCGROUP_FEATURE_PATH, "features %#llx", (unsigned long long)v.features);
	SYS(vfd = open("/sys/module/peercgroup/version", O_RDONLY));
	CHECK(read(vfd, mv, sizeof(mv) - 1) > 0, "read version");
	close(vfd);
	mv[strcspn(mv, "\n")] = 0;
	CHECK_STR(mv, v.module_version);
	v.size = PEERCGROUP_VERSION_SIZE_VER0 - 1;
	CHECK_INT(-EINVAL, raw_ioctl(PEERCGROUP_IOC_VERSION, &v));

}

/* A server that can accept() a connection can always query it. */
static void t_ordering(void)
{
	struct peercgroup_query q;
	struct server s;
	int dev, cli, acc;

	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(dev = dev_open());
	for (int i = 0; i < 2000; i++) {
		pid_t pid = fork();
		int err;

		if (pid == 0) {
			int fd = connect_to(s.name, SOCK_STREAM);

			_exit(fd < 0);
		}
		SYS(acc = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
		err = query_on(dev, acc, &q, NULL, 0);
		if (err)
			FAIL("connection %d: query right after accept: %s", i, strerror(-err));
		CHECK_INT(pid, q.pid);
		close(acc);
		waitpid(pid, NULL, 0);
	}
	/* and the client side, right after connect() returns */
	for (int i = 0; i < 500; i++) {
		struct peercgroup_query cq;
		int err;

		SYS(cli = connect_to(s.name, SOCK_STREAM));
		err = query_on(dev, cli, &cq, NULL, 0);
		if (err)
			FAIL("client %d: query right after connect: %s", i, strerror(-err));
		SYS(acc = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
		close(acc);
		close(cli);
	}
	close(dev);
	server_stop(&s);
}

/* Counts kernel log records containing @needle; copies the first. */
static int kmsg_grep(const char *needle, char *line, size_t size)
{
	char buf[1024];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int hits = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = 0;
		if (strstr(buf, needle)) {
			const char *text = strchr(buf, ';') ? strchr(buf, ';') + 1 : buf;

			if (!hits++)
				snprintf(line, size, "%.*s", (int)size - 1, text);
		}
	}
	close(fd);
	return hits;
}

/*
 * Where the hooks cannot attach, loading fails with one clear message and
 * a proper errno.  ftrace switched off (sysctl kernel.ftrace_enabled=0) is
 * such a case; while the module is loaded, it cannot be switched off, or
 * the destructor hook would go silent and leave stale records.  From 7.x
 * on the sysctl no longer disables ftrace (writing 0 fails): then there
 * is nothing to refuse, and the module must simply load.
 */
static void t_load_fails_without_ftrace(void)
{
	const char *sysctl = "/proc/sys/kernel/ftrace_enabled";
	char line[512] = "";
	int err, hits0, hits;
	bool off;

	hits0 = kmsg_grep("peercgroup: cannot hook", line, sizeof(line));
	SYS(module_unload());
	off = write_file(sysctl, "0") == 0;
	err = module_load() ? errno : 0;
	if (off)
		write_file(sysctl, "1");
	hits = kmsg_grep("peercgroup: cannot hook", line, sizeof(line));
	if (!module_loaded())
		SYS(module_load());
	if (!off) {
		printf("# kernel.ftrace_enabled=0 is refused by this kernel\n");
		CHECK_INT(0, err);
		CHECK_INT(hits0, hits);
		return;
	}
	CHECK_INT(EBUSY, err);
	CHECK_INT(hits0 + 1, hits);
	CHECK(strstr(line, "unix_sock_destructor"), "message: %s", line);
	CHECK(write_file(sysctl, "0") != 0, "ftrace_enabled=0 accepted while loaded");
	CHECK_INT(1, read_long(sysctl));
}

/*
 * A record that cannot be allocated is no record: ENODATA, never a
 * partial answer, and a listener whose new record fails loses its old one
 * rather than keep answering with it.  Needs fault injection on the
 * module's slab cache: CONFIG_FAILSLAB and "slub_debug=A,pcg_entry" on the
 * kernel command line (make check-debug does both).
 */
#define FAILSLAB_CACHE "/sys/kernel/slab/pcg_entry/failslab"
#define FAILSLAB_DIR "/sys/kernel/debug/failslab"

static bool failslab_available(void)
{
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return read_long(FAILSLAB_CACHE) == 1 && access(FAILSLAB_DIR, F_OK) == 0;
}

/* Only caches marked for failslab fail: with cache-filter, just ours. */
static int failslab(bool on)
{
	if (on && (write_file(FAILSLAB_DIR "/cache-filter", "Y") ||
		   write_file(FAILSLAB_DIR "/interval", "1") ||
		   write_file(FAILSLAB_DIR "/times", "-1") ||
		   write_file(FAILSLAB_DIR "/verbose", "0")))
		return -1;
	return write_file(FAILSLAB_DIR "/probability", on ? "100" : "0");
}

static void t_alloc_failure_means_no_record(void)
{
	struct peercgroup_query q;
	struct server s;
	char path[256];
	long fails0;
	int cli, acc, err_cli, err_acc, err_relisten;

	if (!failslab_available())
		SKIP("needs failslab on pcg_entry (make check-debug)");
	SYS(server_start(&s, "srv", SOCK_STREAM));
	fails0 = counter("alloc_failures");
	SYS(failslab(true));
	cli = connect_to(s.name, SOCK_STREAM);
	acc = cli < 0 ? -1 : accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC);
	/*
	 * listen() again while the cache fails: listener records come from
	 * kmalloc (module/listeners.c), which failslab's cache filter spares,
	 * so this listen() is recorded and must answer the next client.
	 */
	err_relisten = listen(s.lfd, 64);
	failslab(false);
	SYS(cli);
	SYS(acc);
	SYS(err_relisten);
	err_acc = query(acc, &q, path, sizeof(path));
	err_cli = query(cli, &q, path, sizeof(path));
	close(cli);
	close(acc);
	CHECK_INT(-ENODATA, err_acc);
	CHECK_INT(-ENODATA, err_cli);
	/* the connection's one record failed */
	CHECK(counter("alloc_failures") >= fails0 + 1, "alloc_failures %ld, was %ld",
	      counter("alloc_failures"), fails0);

	/* the failed connection left nothing behind: the next one is answered */
	SYS(cli = connect_to(s.name, SOCK_STREAM));
	SYS(acc = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	CHECK_ANSWER(query(cli, &q, path, sizeof(path)), q, path, "srv");
	CHECK_ANSWER(query(acc, &q, path, sizeof(path)), q, path, "srv");
	close(cli);
	close(acc);
	server_stop(&s);
}

/*
 * A task moved inside listen(), after the probe's entry read its cgroup
 * and before the kernel took the credentials: its clients must not be
 * told the cgroup it left.  The debug kernel's peercgroup_slow_listen
 * (module/listeners.c) holds one call there until the task moves.  The
 * slot is then doubtful (ENODATA) until a listen() that ran alone and did
 * not move sets the credentials again.
 */
#define SLOW_LISTEN_DIR "/sys/kernel/debug/peercgroup_slow_listen"

/* The suite's cgroup2 mount, as the guest's init made it. */
static void cgroup_mount_default(void)
{
	mount(NULL, CGROOT, NULL, MS_REMOUNT, "");
}

static void t_move_inside_listen(void)
{
	struct client_answer a;
	struct server s;
	struct client c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct pollfd returned;
	int cmd, ack, i;
	unsigned char e;
	pid_t pid;

	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(SLOW_LISTEN_DIR, F_OK))
		SKIP("needs peercgroup_slow_listen in debugfs (make check-debug)");
	/*
	 * Else a move would wait for an RCU grace period, which the held
	 * call (its preemption off) delays until it returns.
	 */
	SYS(mount(NULL, CGROOT, NULL, MS_REMOUNT, "favordynmods"));
	defer_call(cgroup_mount_default);
	SYS(cg_create("cli_a"));
	SYS(cg_create("left"));
	SYS(cg_create("moved"));
	SYS(server_start(&s, "srv", SOCK_STREAM));
	SYS(pid = relistener_start(s.lfd, &cmd, &ack));

	defer_write(SLOW_LISTEN_DIR "/probability", "0");
	SYS(fault_arm(SLOW_LISTEN_DIR, "1"));
	SYS(write(cmd, "left", 4));
	/* "times" drops to 0 as the hold begins */
	for (i = 0; i < 1000 && read_long(SLOW_LISTEN_DIR "/times") != 0; i++)
		usleep(10000);
	CHECK_INT(0, read_long(SLOW_LISTEN_DIR "/times"));
	/* held until the move (five seconds at most): it must not have returned */
	returned = (struct pollfd){ .fd = ack, .events = POLLIN };
	CHECK(poll(&returned, 1, 0) == 0, "listen() returned before the move: the hold did not hold");
	SYS(cg_move("moved", pid));
	CHECK_INT(1, read(ack, &e, 1));
	CHECK_INT(0, e);

	SYS(getsockopt(s.lfd, SOL_SOCKET, SO_PEERCRED, &cred, &len));
	CHECK_INT(pid, cred.pid);
	SYS(client_start(&c, "cli_a", s.name, SOCK_STREAM));
	SYS(client_query(&c, &a));
	client_stop(&c);
	CHECK_INT(-ENODATA, a.err);

	/* the same process listens again, alone and unmoved: known again */
	SYS(relisten_from(cmd, ack, "moved"));
	SYS(client_start(&c, "cli_a", s.name, SOCK_STREAM));
	SYS(client_query(&c, &a));
	client_stop(&c);
	CHECK_ANSWER(a.err, a.q, a.path, "moved");
	CHECK_INT(pid, a.q.pid);
	server_stop(&s);
}

/* Counters move as documented and show numbers only, to root only. */
static void t_counters(void)
{
	static const char *const names[] = {
		"live", "recorded", "freed", "alloc_failures", "queries", "misses",
	};
	struct peercgroup_query q;
	long live0, rec0, qry0, miss0;
	struct server s;
	int sv[2], cli, acc;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char p[128], buf[64] = "";
		struct stat st;
		int fd;

		snprintf(p, sizeof(p), "/sys/module/peercgroup/counters/%s", names[i]);
		SYS(stat(p, &st));
		CHECK_INT(0400, st.st_mode & 0777);
		SYS(fd = open(p, O_RDONLY));
		CHECK(read(fd, buf, sizeof(buf) - 1) > 0, "read %s", p);
		close(fd);
		CHECK(strspn(buf, "0123456789") == strlen(buf) - 1 && buf[strlen(buf) - 1] == '\n',
		      "%s is not one decimal number: \"%s\"", p, buf);
	}

	SYS(server_start(&s, "srv", SOCK_STREAM));
	live0 = counter("live");
	rec0 = counter("recorded");
	/* one record per connection, a socketpair's included */
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	CHECK_INT(live0 + 1, counter("live"));
	SYS(cli = connect_to(s.name, SOCK_STREAM));
	SYS(acc = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC));
	CHECK_INT(live0 + 2, counter("live"));
	CHECK_INT(rec0 + 2, counter("recorded"));
	qry0 = counter("queries");
	miss0 = counter("misses");
	CHECK_INT(0, query(acc, &q, NULL, 0));
	CHECK_INT(qry0 + 1, counter("queries"));
	CHECK_INT(miss0, counter("misses"));
	close(sv[0]);
	close(sv[1]);
	close(cli);
	close(acc);
	CHECK_INT(live0, counter("live"));
	server_stop(&s);
}

/* A test that failed half-way may leave the module unloaded. */
static void ensure_loaded(void)
{
	if (!module_loaded() && module_load())
		printf("# cannot reload the module: %s\n", strerror(errno));
}

int main(int argc, char **argv)
{
	guest_begin("module", argc, argv);
	t_after = ensure_loaded;
	if (module_require())
		return 1;

	RUN(t_stream_accept_side);
	RUN(t_stream_client_side);
	RUN(t_listener_fixed_at_listen);
	RUN(t_listeners_past_the_slots);
	RUN(t_refused_listen_records_nothing);
	RUN(t_refused_connect_leaves_no_record);
	RUN(t_io_uring_listen);
	RUN(t_connect_waits_for_room_while_moved);
	RUN(t_io_uring_connect_waits_in_a_worker);
	RUN(t_seqpacket);
	RUN(t_socketpair);
	RUN(t_client_end_outlives_its_listener);
	RUN(t_peer_moves);
	RUN(t_peer_exits);
	RUN(t_zombie_peer_has_exited);
	RUN(t_pid_reused);
	RUN(t_pid_namespace);
	RUN(t_cgroup_removed);
	RUN(t_errors);
	RUN(t_abi_sizes);
	RUN(t_ordering);
	RUN(t_counters);
	RUN(t_load_fails_without_ftrace);
	RUN(t_alloc_failure_means_no_record);
	RUN(t_move_inside_listen);
	RUN(t_connection_before_load);
	RUN(t_address_reuse);

	return guest_end();
}
