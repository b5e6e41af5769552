// SPDX-License-Identifier: GPL-2.0
/*
 * Races on one listening socket.  Two processes in two cgroups hold it
 * (passed with SCM_RIGHTS) and call listen() on it again and again while
 * clients connect.  Every answer, on both ends of every connection and of
 * socketpairs made meanwhile, must name the process SO_PEERCRED names and
 * the cgroup that process lives in.  "Unknown" (ENODATA) is allowed while
 * listen() calls race, never a wrong answer; once they stop, every answer
 * is known.  Runs as root in the guest with cgroup2 at CGROOT.
 *
 * Usage: race_suite [TEST]
 * Sizes: pcg.race_conns=N connections during the race (default 50000),
 *        pcg.rest_conns=N connections after it (default 3000).
 */
#include "guest.h"

#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>

#define RACE_CLIENTS 2

/* What the client, acceptor and socketpair checks found in one phase. */
struct tally {
	long checked, mismatched, unknown, errors;
};

enum { DURING, AFTER, PHASES };

struct race {
	uint64_t cg_a, cg_b, cg_cli;
	pid_t listener_a, listener_b;
	/* one process whose two threads listen from two threaded cgroups */
	pid_t threaded;
	uint64_t cg_t1, cg_t2;
	int stop_listening;		/* the relisteners stop looping */
	int listeners_idle;		/* how many have stopped */
	int phase;
	long target, started;		/* connections wanted, begun (this phase) */
	long connected, accepted;	/* over both phases */
	int clients_done;
	struct tally client[PHASES], accepted_side[PHASES], pair[PHASES];
	long relistens;
	char first_wrong[256];
};

static struct race *race;

static void note_wrong(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note_wrong(const char *fmt, ...)
{
	static int noted;
	va_list ap;

	if (noted++)
		return;
	va_start(ap, fmt);
	vsnprintf(race->first_wrong, sizeof(race->first_wrong), fmt, ap);
	va_end(ap);
}

static void add(long *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static int race_query(int dev, int fd, struct peercgroup_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->sockfd = fd;
	q->flags = PEERCGROUP_QUERY_NO_PATH;
	return ioctl(dev, PEERCGROUP_IOC_QUERY, q) ? -errno : 0;
}

/*
 * The module's answer on @fd against the kernel's: the same pid as
 * SO_PEERCRED, and the cgroup that pid lives in (@expect_cg if not 0,
 * else the relistener's).
 */
static void judge(int dev, int fd, uint64_t expect_cg, struct tally *t, const char *side)
{
	struct peercgroup_query q;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uint64_t want = expect_cg;
	int err;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		add(&t->errors);
		note_wrong("%s: SO_PEERCRED: %s", side, strerror(errno));
		return;
	}
	err = race_query(dev, fd, &q);
	add(&t->checked);
	if (err == -ENODATA) {
		add(&t->unknown);
		return;
	}
	if (err) {
		add(&t->errors);
		note_wrong("%s: query: %s", side, strerror(-err));
		return;
	}
	if (!want)
		want = cred.pid == race->listener_a ? race->cg_a :
		       cred.pid == race->listener_b ? race->cg_b : 0;
	/* Either thread's cgroup may be the one the kernel's credentials came from. */
	if (!expect_cg && cred.pid == race->threaded &&
	    (q.cgroup_id == race->cg_t1 || q.cgroup_id == race->cg_t2))
		want = q.cgroup_id;
	if ((pid_t)q.pid != cred.pid || q.cgroup_id != want) {
		add(&t->mismatched);
		note_wrong("%s: SO_PEERCRED pid %d (cgroup %llu), module pid %u cgroup %llu",
			   side, (int)cred.pid, (unsigned long long)want, q.pid,
			   (unsigned long long)q.cgroup_id);
	}
}

/*
 * A relistener: lives in @cg, receives the listening socket over @via,
 * listens once and reports, then calls listen() in a loop until told to
 * stop, and stays alive (so its pid stays its own) until killed.
 */
static void relisten_loop(int fd)
{
	int backlog = 64;

	while (!__atomic_load_n(&race->stop_listening, __ATOMIC_ACQUIRE)) {
		backlog = backlog == 4096 ? 64 : 4096;
		if (listen(fd, backlog))
			_exit(2);
		add(&race->relistens);
	}
	__atomic_fetch_add(&race->listeners_idle, 1, __ATOMIC_RELEASE);
}

static int relisten_fd;
static const char *second_thread_cg;

/* The second thread: moves itself into its own threaded cgroup. */
static void *relisten_thread(void *ready)
{
	char p[256], tid[32];

	snprintf(p, sizeof(p), CGROOT "/%s/cgroup.threads", second_thread_cg);
	snprintf(tid, sizeof(tid), "%d", (int)gettid());
	if (write_file(p, tid))
		_exit(3);
	__atomic_store_n((int *)ready, 1, __ATOMIC_RELEASE);
	relisten_loop(relisten_fd);
	return NULL;
}

/*
 * A relistener: lives in @cg, receives the listening socket over @via,
 * listens once and reports, then calls listen() in a loop until told to
 * stop, and stays alive (so its pid stays its own) until killed.  With
 * @thread_cg, a second thread in that (threaded) cgroup loops too.
 */
static pid_t relistener_start(const char *cg, int via, const char *thread_cg)
{
	pid_t pid = fork();
	int ready = 1, thread_ready = 0;
	pthread_t th;

	if (pid)
		return pid;
	if (cg_move(cg, 0))
		_exit(1);
	relisten_fd = recv_fd(via);
	if (relisten_fd < 0 || listen(relisten_fd, 4096))
		_exit(1);
	if (thread_cg) {
		second_thread_cg = thread_cg;
		if (pthread_create(&th, NULL, relisten_thread, &thread_ready))
			_exit(1);
		while (!__atomic_load_n(&thread_ready, __ATOMIC_ACQUIRE))
			usleep(100);
	}
	if (write(via, &ready, sizeof(ready)) != sizeof(ready))
		_exit(1);
	relisten_loop(relisten_fd);
	for (;;)
		pause();
}

/* A client: connects until the phase has its connections. */
static pid_t client_start_racing(const char *name, int seq)
{
	pid_t pid = fork();
	int dev, phase;

	if (pid)
		return pid;
	if (cg_move("race/cli", 0) || (dev = dev_open()) < 0)
		_exit(1);
	phase = race->phase;
	while (__atomic_fetch_add(&race->started, 1, __ATOMIC_RELAXED) < race->target) {
		int fd = connect_to(name, SOCK_STREAM);

		if (fd < 0) {
			add(&race->client[phase].errors);
			note_wrong("client: connect: %s", strerror(errno));
			continue;
		}
		add(&race->connected);
		judge(dev, fd, 0, &race->client[phase], "client");
		close(fd);
		if ((race->started + seq) % 16 == 0) {
			int sv[2];

			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
				add(&race->pair[phase].errors);
				continue;
			}
			judge(dev, sv[0], race->cg_cli, &race->pair[phase], "socketpair");
			judge(dev, sv[1], race->cg_cli, &race->pair[phase], "socketpair");
			close(sv[0]);
			close(sv[1]);
		}
	}
	_exit(0);
}

/* The acceptor: accepts and judges until told the clients are done. */
static pid_t acceptor_start(int lfd)
{
	pid_t pid = fork();
	int dev;

	if (pid)
		return pid;
	if ((dev = dev_open()) < 0)
		_exit(1);
	for (;;) {
		struct pollfd p = { lfd, POLLIN, 0 };
		int fd;

		if (poll(&p, 1, 50) <= 0) {
			if (__atomic_load_n(&race->clients_done, __ATOMIC_ACQUIRE) &&
			    race->accepted >= race->connected)
				_exit(0);
			continue;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		/* The phase of the connect, roughly: only counts differ. */
		judge(dev, fd, race->cg_cli, &race->accepted_side[race->phase], "accepted");
		add(&race->accepted);
		close(fd);
	}
}

static int run_clients(const char *name, long target)
{
	pid_t pids[RACE_CLIENTS];
	int status, bad = 0;

	race->started = 0;
	race->target = target;
	for (int i = 0; i < RACE_CLIENTS; i++)
		pids[i] = client_start_racing(name, i);
	for (int i = 0; i < RACE_CLIENTS; i++) {
		waitpid(pids[i], &status, 0);
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	}
	return bad ? -1 : 0;
}

static void print_tally(const char *what, const struct tally *t)
{
	printf("# race: %-22s %7ld checked, %ld wrong, %ld unknown, %ld errors\n",
	       what, t->checked, t->mismatched, t->unknown, t->errors);
}

/*
 * The promise: for every connection, the pid the module reports is the
 * one SO_PEERCRED reports, and its cgroup is that process's; unknown is
 * allowed only while listen() calls race.
 */
static void r_relisten_race_matches_peercred(void)
{
	long race_conns = knob("pcg.race_conns", "PCG_RACE_CONNS", 50000);
	long rest_conns = knob("pcg.rest_conns", "PCG_REST_CONNS", 3000);
	int lfd, via_a[2], via_b[2], ready, status;
	struct sockaddr_un sa;
	char name[64];
	pid_t acceptor;

	memset(race, 0, sizeof(*race));
	SYS(cg_create("race"));
	SYS(cg_create("race/a"));
	SYS(cg_create("race/b"));
	SYS(cg_create("race/cli"));
	race->cg_a = cg_id("race/a");
	race->cg_b = cg_id("race/b");
	race->cg_cli = cg_id("race/cli");

	snprintf(name, sizeof(name), "pcg-race-%d", (int)getpid());
	SYS(lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	SYS(bind(lfd, (struct sockaddr *)&sa, abstract_addr(&sa, name)));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, via_a));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, via_b));
	race->listener_a = relistener_start("race/a", via_a[1], NULL);
	SYS(send_fd(via_a[0], lfd));
	CHECK(read(via_a[0], &ready, sizeof(ready)) == sizeof(ready), "listener a");
	race->listener_b = relistener_start("race/b", via_b[1], NULL);
	SYS(send_fd(via_b[0], lfd));
	CHECK(read(via_b[0], &ready, sizeof(ready)) == sizeof(ready), "listener b");
	acceptor = acceptor_start(lfd);

	race->phase = DURING;
	SYS(run_clients(name, race_conns));
	__atomic_store_n(&race->stop_listening, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&race->listeners_idle, __ATOMIC_ACQUIRE) < 2)
		usleep(1000);
	race->phase = AFTER;
	SYS(run_clients(name, rest_conns));
	__atomic_store_n(&race->clients_done, 1, __ATOMIC_RELEASE);
	waitpid(acceptor, &status, 0);
	kill(race->listener_a, SIGKILL);
	kill(race->listener_b, SIGKILL);
	waitpid(race->listener_a, NULL, 0);
	waitpid(race->listener_b, NULL, 0);
	close(lfd);

	printf("# race: %ld listen() calls, %ld connections\n", race->relistens, race->connected);
	print_tally("client, during:", &race->client[DURING]);
	print_tally("client, after:", &race->client[AFTER]);
	print_tally("accepted, during:", &race->accepted_side[DURING]);
	print_tally("accepted, after:", &race->accepted_side[AFTER]);
	print_tally("socketpair, during:", &race->pair[DURING]);
	print_tally("socketpair, after:", &race->pair[AFTER]);
	if (race->first_wrong[0])
		printf("# race: first wrong answer: %s\n", race->first_wrong);

	CHECK(race->connected >= race_conns + rest_conns, "only %ld connections", race->connected);
	CHECK(race->relistens > 0, "the listeners never raced");
	for (int p = DURING; p < PHASES; p++) {
		CHECK_INT(0, race->client[p].mismatched);
		CHECK_INT(0, race->accepted_side[p].mismatched);
		CHECK_INT(0, race->pair[p].mismatched);
		CHECK_INT(0, race->client[p].errors + race->accepted_side[p].errors +
			  race->pair[p].errors);
		/* The connector's own side is always known. */
		CHECK_INT(0, race->accepted_side[p].unknown);
		CHECK_INT(0, race->pair[p].unknown);
	}
	/* At rest, nothing is left to doubt. */
	CHECK_INT(0, race->client[AFTER].unknown);
}

/*
 * Two threads of one process, in two threaded cgroups, call listen() in
 * a loop on one socket: SO_PEERCRED names the same pid whichever wins, so
 * the module cannot tell which cgroup the kernel's credentials came from.
 * Every answer names that pid and one of the two cgroups, or is unknown.
 * Once another process listens, its clients learn it again.
 */
static void r_threads_in_two_cgroups(void)
{
	long race_conns = knob("pcg.thread_race_conns", "PCG_THREAD_RACE_CONNS", 5000);
	int lfd, via_t[2], via_c[2], ready, status;
	struct sockaddr_un sa;
	char name[64];
	pid_t acceptor;

	memset(race, 0, sizeof(*race));
	SYS(cg_create("race"));
	SYS(cg_create("race/cli"));
	SYS(cg_create("race/c"));
	SYS(cg_create("race/thr"));
	SYS(cg_create("race/thr/t1"));
	SYS(cg_create("race/thr/t2"));
	SYS(write_file(CGROOT "/race/thr/t1/cgroup.type", "threaded"));
	SYS(write_file(CGROOT "/race/thr/t2/cgroup.type", "threaded"));
	race->cg_cli = cg_id("race/cli");
	race->cg_t1 = cg_id("race/thr/t1");
	race->cg_t2 = cg_id("race/thr/t2");

	snprintf(name, sizeof(name), "pcg-thr-race-%d", (int)getpid());
	SYS(lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	SYS(bind(lfd, (struct sockaddr *)&sa, abstract_addr(&sa, name)));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, via_t));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, via_c));
	race->threaded = relistener_start("race/thr/t1", via_t[1], "race/thr/t2");
	SYS(send_fd(via_t[0], lfd));
	CHECK(read(via_t[0], &ready, sizeof(ready)) == sizeof(ready), "threaded listener");
	acceptor = acceptor_start(lfd);

	race->phase = DURING;
	SYS(run_clients(name, race_conns));
	__atomic_store_n(&race->stop_listening, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&race->listeners_idle, __ATOMIC_ACQUIRE) < 2)
		usleep(1000);
	/* another process listens once, from race/c */
	race->cg_a = cg_id("race/c");
	race->listener_a = relistener_start("race/c", via_c[1], NULL);
	SYS(send_fd(via_c[0], lfd));
	CHECK(read(via_c[0], &ready, sizeof(ready)) == sizeof(ready), "listener c");
	race->phase = AFTER;
	SYS(run_clients(name, race_conns / 5));
	__atomic_store_n(&race->clients_done, 1, __ATOMIC_RELEASE);
	waitpid(acceptor, &status, 0);

	printf("# race: threads: %ld listen() calls, %ld connections\n", race->relistens,
	       race->connected);
	print_tally("threads, client:", &race->client[DURING]);
	print_tally("threads, then c:", &race->client[AFTER]);
	print_tally("threads, accepted:", &race->accepted_side[DURING]);
	if (race->first_wrong[0])
		printf("# race: first wrong answer: %s\n", race->first_wrong);
	CHECK(race->relistens > 0, "the threads never raced");
	for (int p = DURING; p < PHASES; p++) {
		CHECK_INT(0, race->client[p].mismatched);
		CHECK_INT(0, race->accepted_side[p].mismatched);
		CHECK_INT(0, race->pair[p].mismatched);
		CHECK_INT(0, race->client[p].errors + race->accepted_side[p].errors +
			  race->pair[p].errors);
	}
	CHECK_INT(0, race->client[AFTER].unknown);
}

/* ---- a peer that exits while its connection is queried ---- */

struct exit_watch {
	int dev, fd;
	uint64_t cg;
	pid_t pid;
	int stop;
	long queries;		/* made by the watcher, this round */
	long alive, exited;	/* its answers with the exited flag unset, set */
	long wrong;		/* another pid or cgroup, an error, the flag unset again */
	char first_wrong[160];
};

/*
 * One answer on the exiting peer's connection: 1 told exited, 0 alive,
 * -1 wrong (@why says how).
 */
static int exit_answer(const struct exit_watch *w, bool exited_before, char *why, size_t size)
{
	struct peercgroup_query q;
	int err = race_query(w->dev, w->fd, &q);
	bool exited = q.result_flags & PEERCGROUP_RESULT_PEER_EXITED;

	if (err)
		snprintf(why, size, "query: %s", strerror(-err));
	else if ((pid_t)q.pid != w->pid || q.cgroup_id != w->cg)
		snprintf(why, size, "pid %u cgroup %llu, want pid %d cgroup %llu", q.pid,
			 (unsigned long long)q.cgroup_id, (int)w->pid,
			 (unsigned long long)w->cg);
	else if (exited_before && !exited)
		snprintf(why, size, "flags %#x: alive again after exited", q.result_flags);
	else
		return exited;
	return -1;
}

static void *exit_watcher(void *arg)
{
	struct exit_watch *w = arg;
	bool exited = false;
	char why[sizeof(w->first_wrong)];

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		switch (exit_answer(w, exited, why, sizeof(why))) {
		case 1:
			exited = true;
			w->exited++;
			break;
		case 0:
			w->alive++;
			break;
		default:
			if (!w->wrong++)
				memcpy(w->first_wrong, why, sizeof(why));
		}
		__atomic_fetch_add(&w->queries, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void wait_for_queries(struct exit_watch *w, long more)
{
	long want = __atomic_load_n(&w->queries, __ATOMIC_ACQUIRE) + more;

	while (__atomic_load_n(&w->queries, __ATOMIC_ACQUIRE) < want)
		sched_yield();
}

/* In cgroup @cg, connects to @name, starts threads that sleep, says so, sleeps. */
static void exiting_peer(const char *cg, const char *name, int threads, int ready)
{
	pthread_t t;
	int fd = cg_move(cg, 0) ? -1 : connect_to(name, SOCK_STREAM);

	if (fd < 0)
		_exit(1);
	while (--threads > 0)
		if (pthread_create(&t, NULL, sleep_forever, NULL))
			_exit(1);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	sleep_forever(NULL);
}

/*
 * The peer is killed, becomes a zombie and is reaped while another thread
 * queries its connection without pause.  Every answer names the peer's pid
 * and the cgroup it connected from; the exited flag, once set, stays set;
 * the zombie and the reaped peer are told exited.  Its threads exit one by
 * one (the leader may go first), and the reaped task is freed after a grace
 * period, beneath the watcher's read of it (KASAN, in the debug run).
 */
static void r_peer_exits_during_queries(void)
{
	long rounds = knob("pcg.exit_rounds", "PCG_EXIT_ROUNDS", 200);
	long turned = 0, alive = 0, exited = 0, i;
	struct exit_watch w = { .cg = 0 };
	int lfd, ready[2], zombie, reaped;
	char name[64], why[160], r;
	pthread_t watcher;
	siginfo_t si;

	SYS(cg_create("exit_peer"));
	w.cg = cg_id("exit_peer");
	SYS(w.dev = dev_open());
	defer_close(w.dev);
	snprintf(name, sizeof(name), "pcg-exit-race-%d", (int)getpid());
	SYS(lfd = listen_on(name, SOCK_STREAM));
	defer_close(lfd);
	for (i = 0; i < rounds; i++) {
		SYS(pipe2(ready, O_CLOEXEC));
		w.pid = fork();
		if (w.pid == 0) {
			close(ready[0]);
			exiting_peer("exit_peer", name, 1 + i % 4, ready[1]);
		}
		close(ready[1]);
		SYS(w.pid);
		CHECK(read(ready[0], &r, 1) == 1, "round %ld: the peer did not connect", i);
		close(ready[0]);
		SYS(w.fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
		w.stop = 0;
		w.queries = w.alive = w.exited = 0;
		CHECK_INT(0, pthread_create(&watcher, NULL, exit_watcher, &w));
		wait_for_queries(&w, 1 + i % 3);
		kill(w.pid, SIGKILL);
		/* every thread gone, not reaped yet */
		zombie = waitid(P_PID, w.pid, &si, WEXITED | WNOWAIT) ? -1 :
			 exit_answer(&w, false, why, sizeof(why));
		reaped = waitid(P_PID, w.pid, &si, WEXITED);
		wait_for_queries(&w, 3);
		__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
		pthread_join(watcher, NULL);
		CHECK(zombie == 1, "round %ld: a zombie: %s", i, zombie ? why : "not told exited");
		CHECK(!reaped, "round %ld: waitid: %s", i, strerror(errno));
		reaped = exit_answer(&w, false, why, sizeof(why));
		CHECK(reaped == 1, "round %ld: reaped: %s", i, reaped ? why : "not told exited");
		close(w.fd);
		alive += w.alive;
		exited += w.exited;
		turned += w.alive && w.exited;
		if (w.wrong)
			break;
	}
	printf("# race: exits: %ld rounds, %ld answers alive, %ld exited; the flag turned between two answers in %ld rounds\n",
	       i, alive, exited, turned);
	CHECK(!w.wrong, "round %ld: %ld wrong answers, the first: %s", i, w.wrong, w.first_wrong);
	CHECK(alive > 0 && exited > 0, "the watcher never saw the peer alive and exited");
}

/* ---- askers: threads that ask about one socket without pause ---- */

/*
 * @judge says what is wrong with one answer, into @why ("" if nothing),
 * and may set a flag of the asking thread's own (*@seen: "removed" seen,
 * say), after which answers are counted in @flagged too.
 */
struct asker {
	int fd, stop;
	pid_t pid;		/* what a right answer names */
	uint64_t id;
	long answers, flagged, wrong;
	char first_wrong[160];
	void (*judge)(const struct asker *a, int err, const struct peercgroup_query *q,
		      const char *path, bool *seen, char *why, size_t size);
};

static void *ask_without_pause(void *arg)
{
	struct asker *a = arg;
	struct peercgroup_query q;
	char path[256], why[sizeof(a->first_wrong)];
	int dev = dev_open(), err;
	bool seen = false;

	while (dev >= 0 && !__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		err = query_on(dev, a->fd, &q, path, sizeof(path));
		why[0] = 0;
		a->judge(a, err, &q, path, &seen, why, sizeof(why));
		if (why[0] && !__atomic_fetch_add(&a->wrong, 1, __ATOMIC_RELAXED))
			memcpy(a->first_wrong, why, sizeof(why));
		if (seen)
			__atomic_fetch_add(&a->flagged, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&a->answers, 1, __ATOMIC_RELEASE);
	}
	if (dev >= 0)
		close(dev);
	return NULL;
}

/* Starts @n threads asking with @a, afresh, about @fd. */
static int askers_start(struct asker *a, int fd, pthread_t *t, int n)
{
	a->fd = fd;
	a->stop = 0;
	a->answers = a->flagged = 0;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, ask_without_pause, a))
			return -1;
	return 0;
}

static void askers_stop(struct asker *a, pthread_t *t, int n)
{
	__atomic_store_n(&a->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* ---- a peer's cgroup chain removed while its path is asked ---- */

/* The whole path, its id and the pid; "removed", once seen, stays. */
static void judge_chain(const struct asker *a, int err, const struct peercgroup_query *q,
			const char *path, bool *removed, char *why, size_t size)
{
	if (err)
		snprintf(why, size, "query: %s", strerror(-err));
	else if (strcmp(path, "/pw/a/b/c") || q->path_len != 9 || q->cgroup_id != a->id ||
		 (pid_t)q->pid != a->pid)
		snprintf(why, size, "\"%.64s\" (%u) id %llu pid %d", path, q->path_len,
			 (unsigned long long)q->cgroup_id, q->pid);
	else if (*removed && !(q->result_flags & PEERCGROUP_RESULT_CGROUP_REMOVED))
		snprintf(why, size, "flags %#x: removed, then not", q->result_flags);
	*removed = *removed || (!err && (q->result_flags & PEERCGROUP_RESULT_CGROUP_REMOVED));
}

/*
 * A peer in pw/a/b/c is asked for its path by two threads without pause
 * while it moves out and the whole chain is removed, c first, siblings
 * made and removed beside it meanwhile.  The path is formatted from the
 * cgroups' names with no cgroup lock held: every answer must be the whole
 * path, its id and the peer's pid, and "removed" once set stays set; once
 * the chain is gone the answer says so (KASAN and PROVE_RCU, in the debug
 * run, watch the walk).
 */
static void r_path_while_chain_removed(void)
{
	long rounds = knob("pcg.chain_rounds", "PCG_CHAIN_ROUNDS", 30);
	static const char *const chain[] = { "pw/a/b/c", "pw/a/b", "pw/a", "pw" };
	struct asker w = { .fd = -1, .judge = judge_chain };
	pthread_t askers[2];
	struct client c;
	char name[64], sib[64];
	long r, told_removed = 0, answers = 0;
	int lfd, fd, i, n;

	snprintf(name, sizeof(name), "pcg-chain-%d", (int)getpid());
	SYS(lfd = listen_on(name, SOCK_STREAM));
	defer_close(lfd);
	for (r = 0; r < rounds && !w.wrong; r++) {
		for (i = 3; i >= 0; i--)
			SYS(cg_create(chain[i]));
		SYS(client_start(&c, "pw/a/b/c", name, SOCK_STREAM));
		SYS(fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
		w.id = cg_id("pw/a/b/c");
		w.pid = c.pid;
		SYS(askers_start(&w, fd, askers, 2));
		SYS(client_move(&c, ""));
		for (i = 0; i < 4; i++) {
			if (i < 3) {	/* a sibling made and removed beside the chain */
				snprintf(sib, sizeof(sib), CGROOT "/pw/a/s%ld", r);
				mkdir(sib, 0755);
				rmdir(sib);
			}
			if (cg_remove(chain[i]))
				break;
		}
		for (n = 0; n < 5000 && !__atomic_load_n(&w.wrong, __ATOMIC_ACQUIRE); n++) {
			if (__atomic_load_n(&w.answers, __ATOMIC_ACQUIRE) >= 200 &&
			    __atomic_load_n(&w.flagged, __ATOMIC_ACQUIRE))
				break;
			usleep(1000);
		}
		askers_stop(&w, askers, 2);
		CHECK(i == 4, "round %ld: cannot remove %s: %s", r, chain[i], strerror(errno));
		told_removed += w.flagged > 0;
		answers += w.answers;
		close(fd);
		client_stop(&c);
	}
	printf("# race: chain: %ld rounds, %ld answers, removal seen in %ld\n", r, answers,
	       told_removed);
	CHECK(!w.wrong, "round %ld: %ld wrong answers, the first: %s", r - 1, w.wrong,
	      w.first_wrong);
	CHECK_INT(r, told_removed);
}

/* ---- a client whose peer is closed while it is asked ---- */

/* The listener's cgroup and pid, or none (*@gone), and then none again. */
static void judge_drop(const struct asker *a, int err, const struct peercgroup_query *q,
		       const char *path, bool *gone, char *why, size_t size)
{
	if (err == -ENOTCONN || err == -ENODATA)
		*gone = true;
	else if (err)
		snprintf(why, size, "query: %s", strerror(-err));
	else if (*gone)
		snprintf(why, size, "an answer after none");
	else if (strcmp(path, "/dp_lst") || q->cgroup_id != a->id || (pid_t)q->pid != a->pid)
		snprintf(why, size, "\"%.64s\" id %llu pid %d", path,
			 (unsigned long long)q->cgroup_id, q->pid);
}

/* In dp_noise until killed: socketpairs made and closed, their entries freed. */
static void churn_entries(void)
{
	int sv[2];

	if (cg_move("dp_noise", 0))
		_exit(1);
	for (;;)
		if (!socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
			close(sv[0]);
			close(sv[1]);
		}
}

/*
 * A seqpacket client asked without pause while its accepted end is
 * closed and it sends, while another process makes and frees entries of
 * its own cgroup.  Every answer is the listener's cgroup and pid, or none
 * (ENOTCONN, ENODATA) and then none again: never the cgroup of an entry
 * freed and made anew beneath the query.  5.10's send can drop a peer
 * that died during it (peercgroup.h), but in this sequence these sends
 * fail with EPIPE and keep the peer, on 5.10 as on later kernels: that
 * path is not reached here.
 */
static void r_seqpacket_peer_closed(void)
{
	long rounds = knob("pcg.drop_rounds", "PCG_DROP_ROUNDS", 300);
	struct asker w = { .fd = -1, .judge = judge_drop };
	long r, answers = 0, dropped = 0, seen;
	pthread_t asker;
	char name[64];
	pid_t noise;
	int lfd, fd, acc, i;

	SYS(cg_create("dp_lst"));
	SYS(cg_create("dp_cli"));
	SYS(cg_create("dp_noise"));
	SYS(cg_move("dp_lst", 0));
	snprintf(name, sizeof(name), "pcg-drop-%d", (int)getpid());
	SYS(lfd = listen_on(name, SOCK_SEQPACKET));
	defer_close(lfd);
	SYS(cg_move("dp_cli", 0));
	w.id = cg_id("dp_lst");
	w.pid = getpid();
	SYS(noise = fork());
	if (noise == 0)
		churn_entries();
	for (r = 0; r < rounds && !w.wrong; r++) {
		SYS(fd = connect_to(name, SOCK_SEQPACKET));
		SYS(acc = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
		SYS(askers_start(&w, fd, &asker, 1));
		while (__atomic_load_n(&w.answers, __ATOMIC_ACQUIRE) < 1 + r % 3)
			sched_yield();
		close(acc);
		for (i = 0; i < 3; i++)
			send(fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		seen = __atomic_load_n(&w.answers, __ATOMIC_ACQUIRE);
		for (i = 0; i < 1000 && __atomic_load_n(&w.answers, __ATOMIC_ACQUIRE) < seen + 20; i++)
			usleep(100);
		askers_stop(&w, &asker, 1);
		answers += w.answers;
		dropped += w.flagged > 0;
		close(fd);
	}
	kill(noise, SIGKILL);
	waitpid(noise, NULL, 0);
	printf("# race: closed peer: %ld rounds, %ld answers, the client left with none in %ld\n",
	       r, answers, dropped);
	CHECK(!w.wrong, "round %ld: %ld wrong answers, the first: %s", r - 1, w.wrong,
	      w.first_wrong);
}

int main(int argc, char **argv)
{
	guest_begin("race", argc, argv);
	if (module_require())
		return guest_end();
	race = mmap(NULL, sizeof(*race), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (race == MAP_FAILED) {
		printf("not ok - race/setup: mmap: %s\n", strerror(errno));
		return guest_end();
	}
	RUN(r_relisten_race_matches_peercred);
	RUN(r_threads_in_two_cgroups);
	RUN(r_peer_exits_during_queries);
	RUN(r_path_while_chain_removed);
	RUN(r_seqpacket_peer_closed);
	return guest_end();
}
