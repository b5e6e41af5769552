// SPDX-License-Identifier: GPL-2.0
/*
 * The module under load, against the real module in a real kernel (root,
 * cgroup2 at CGROOT).
 *
 * Usage: stress_suite [TEST]
 * Size: "pcg.storm_rounds=N" on the kernel command line (or the
 * PCG_STORM_ROUNDS environment variable): rounds per worker (at least),
 * 50; "pcg.storm_cycles=N" (PCG_STORM_CYCLES): unload/load cycles, 8.
 * The defaults are make check's; make check-stress and check-debug ask
 * for more.
 *
 * The storm: workers in several cgroups make stream and seqpacket
 * connections to their own listeners and socketpairs, fork clients that
 * move and exit, query both ends, and move between cgroups themselves,
 * while the main process unloads and reloads the module a fixed number
 * of times, spread evenly over the storm by the workers' progress.  Every
 * answer must be the cgroup the questioner knows (the client's at
 * connect(), the listener's at listen(), the creator's at socketpair())
 * or ENODATA; a missing device is allowed while the module is unloaded.
 * Afterwards the live counter is back to its baseline and, once the
 * cgroups are removed, no removed cgroup stays pinned (nr_dying_descendants).
 */
#include "guest.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>

#define NCG 4
#define WORKERS 6

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static const char *const cgs[NCG] = { "st0", "st1", "st1/deep", "st2" };

/* ---- shared tallies ---- */

struct tally {
	long right, nodata, nodev, wrong;
	long rounds, forks, moves, pairs, exits_first, relistens, done;
	char first_wrong[200];
};

static struct tally *shared;	/* [WORKERS + 1]: per worker, and the sum */

static void wrongf(struct tally *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void wrongf(struct tally *t, const char *fmt, ...)
{
	va_list ap;

	if (t->wrong++)
		return;
	va_start(ap, fmt);
	vsnprintf(t->first_wrong, sizeof(t->first_wrong), fmt, ap);
	va_end(ap);
}

/* Judge one query of @fd: @cg / @pid are what the questioner knows. */
static void judge(struct tally *t, int fd, const char *cg, pid_t pid, const char *what)
{
	struct peercgroup_query q;
	char path[256], want[64];
	int err = query(fd, &q, path, sizeof(path));

	snprintf(want, sizeof(want), "/%s", cg);
	if (!err && !strcmp(path, want) && q.cgroup_id == cg_id(cg) && q.pid == pid &&
	    q.path_len == strlen(want) && !(q.result_flags & ~3U))
		t->right++;
	else if (err == -ENODATA)
		t->nodata++;
	else if (err == -ENOENT || err == -ENXIO || err == -ENODEV)
		t->nodev++;	/* the device is gone while the module is unloaded */
	else
		wrongf(t, "%s: want \"%s\" pid %d, got err %d \"%s\" id %llu (want %llu) pid %d",
		       what, want, (int)pid, err, err ? "" : path,
		       (unsigned long long)q.cgroup_id, (unsigned long long)cg_id(cg), q.pid);
}

/*
 * The client child: moved to @cg, connects to @name, queries its own end
 * (the listener's cgroup at listen(), @lcg, pid @lpid), maybe moves on or
 * exits at once, and reports its tally through @res.
 */
static void storm_client(int res, const char *cg, const char *other, const char *name,
			 int type, const char *lcg, pid_t lpid, unsigned int how)
{
	struct tally t = { 0 };
	int fd;
	char b;

	if (cg_move(cg, 0))
		_exit(10);
	fd = connect_to(name, type);
	if (fd < 0)
		_exit(11);
	if (how & 1)		/* exit before anyone queried */
		_exit(0);
	judge(&t, fd, lcg, lpid, "client side");
	if (how & 2)		/* move after connect: the answer must not follow */
		cg_move(other, 0);
	if (write(fd, "x", 1) != 1 || read(fd, &b, 1) < 0)
		_exit(12);
	if (write(res, &t, sizeof(t)) != sizeof(t))
		_exit(13);
	_exit(0);
}

static void add(struct tally *sum, const struct tally *t)
{
	sum->right += t->right;
	sum->nodata += t->nodata;
	sum->nodev += t->nodev;
	if (t->wrong && !sum->wrong)
		memcpy(sum->first_wrong, t->first_wrong, sizeof(sum->first_wrong));
	sum->wrong += t->wrong;
}

static void storm_worker(int w, long rounds)
{
	struct tally *t = &shared[w];
	static const int types[2] = { SOCK_STREAM, SOCK_SEQPACKET };
	char name[2][48], lcg[2][32];
	int lfd[2], res[2];
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (w + 1);
	int cur = w % NCG;

	if (cg_move(cgs[cur], 0) || pipe2(res, O_CLOEXEC))
		_exit(2);
	for (int k = 0; k < 2; k++) {
		snprintf(name[k], sizeof(name[k]), "pcg-stress-%d-%d", (int)getpid(), k);
		lfd[k] = listen_on(name[k], types[k]);
		if (lfd[k] < 0)
			_exit(3);
		snprintf(lcg[k], sizeof(lcg[k]), "%s", cgs[cur]);
	}
	for (long i = 0; i < rounds || !__atomic_load_n(&shared[WORKERS].done, __ATOMIC_ACQUIRE); i++) {
		uint64_t r = rnd(&seed);
		int k = r & 1, acc, sv[2], cc = (r >> 8) % NCG, oc = (r >> 16) % NCG;
		unsigned int how = (r >> 24) & 3;
		pid_t pid;
		char b;

		switch ((r >> 32) % 8) {
		case 0:	/* a socketpair: both ends name the creator */
		case 1:
			if (socketpair(AF_UNIX, types[k] | SOCK_CLOEXEC, 0, sv))
				_exit(4);
			judge(t, sv[0], cgs[cur], getpid(), "socketpair[0]");
			judge(t, sv[1], cgs[cur], getpid(), "socketpair[1]");
			close(sv[0]);
			close(sv[1]);
			t->pairs++;
			break;
		case 2:	/* the worker moves; sometimes listens again there */
			cur = cc;
			if (cg_move(cgs[cur], 0))
				_exit(5);
			t->moves++;
			if (how & 1) {
				if (listen(lfd[k], 4096))
					_exit(6);
				snprintf(lcg[k], sizeof(lcg[k]), "%s", cgs[cur]);
				t->relistens++;
			}
			break;
		default: /* a client process in cgroup cc */
			pid = fork();
			if (pid < 0)
				_exit(7);
			if (pid == 0)
				storm_client(res[1], cgs[cc], cgs[oc], name[k], types[k],
					     lcg[k], getppid(), how);
			t->forks++;
			acc = accept4(lfd[k], NULL, NULL, SOCK_CLOEXEC);
			if (acc < 0)
				_exit(8);
			if (how & 1) {	/* the client exits first */
				waitpid(pid, NULL, 0);
				t->exits_first++;
				judge(t, acc, cgs[cc], pid, "accept side, peer exited");
			} else {
				struct tally ct;

				if (read(acc, &b, 1) != 1)
					_exit(9);
				judge(t, acc, cgs[cc], pid, "accept side");
				if (write(acc, "y", 1) != 1 ||
				    read(res[0], &ct, sizeof(ct)) != sizeof(ct))
					_exit(14);
				add(t, &ct);
				waitpid(pid, NULL, 0);
			}
			close(acc);
			break;
		}
		__atomic_add_fetch(&shared[WORKERS].rounds, 1, __ATOMIC_RELAXED);
	}
	close(lfd[0]);
	close(lfd[1]);
	_exit(0);
}

/* Unload, retrying while a worker holds the device open (bounded). */
static int unload_retrying(long *busy)
{
	for (int i = 0; i < 20000; i++) {
		if (!syscall(SYS_delete_module, "peercgroup", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			return -1;
		(*busy)++;
		usleep(500);
	}
	return -1;
}

static long cgroup_stat(const char *key)
{
	char buf[1024], *p;

	if (read_text(CGROOT "/cgroup.stat", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, key);
	return p ? strtol(p + strlen(key) + 1, NULL, 10) : -1;
}

static void t_storm(void)
{
	long rounds = knob("pcg.storm_rounds", "PCG_STORM_ROUNDS", 50);
	long total = rounds * WORKERS, busy = 0, live0, dying = -1;
	int cycles_want = knob("pcg.storm_cycles", "PCG_STORM_CYCLES", 8);
	long per_cycle = total / (cycles_want + 1) > WORKERS ? total / (cycles_want + 1) : WORKERS;
	pid_t pids[WORKERS];
	int cycles = 0, status;
	double t0, t1, waited;
	char err[160] = "";
	/* pcg.storm_control=1: a diagnosis aid, see above */
	bool control = knob("pcg.storm_control", "PCG_STORM_CONTROL", 0);

	for (int i = 0; i < NCG; i++)
		SYS(cg_create(cgs[i]));
	shared = mmap(NULL, sizeof(*shared) * (WORKERS + 1), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(shared, 0, sizeof(*shared) * (WORKERS + 1));
	/* a fresh module: the baseline counts only what exists from now on */
	SYS(module_unload());
	SYS(module_load());
	live0 = counter("live");
	if (control) {
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
		SYS(write_file("/sys/kernel/tracing/set_ftrace_filter",
			       "security_unix_stream_connect"));
	}

	t0 = now();
	for (int w = 0; w < WORKERS; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			storm_worker(w, rounds);
		SYS(pids[w]);
	}
	/*
	 * Each cycle starts once the workers made per_cycle rounds since the
	 * last load (they go on during the unload and load, too); the workers
	 * stop when the cycles are done and they made their rounds.
	 */
	for (; cycles < cycles_want && !err[0]; cycles++) {
		long due = __atomic_load_n(&shared[WORKERS].rounds, __ATOMIC_RELAXED) + per_cycle;

		waited = now();
		while (__atomic_load_n(&shared[WORKERS].rounds, __ATOMIC_RELAXED) < due &&
		       !err[0]) {
			if (now() - waited > 120)
				snprintf(err, sizeof(err), "storm stalled at %ld rounds",
					 shared[WORKERS].rounds);
			usleep(1000);
		}
		if (control) {
			/* the control experiment: the kernel's own function tracer on
			 * the same functions, switched on and off instead of the module
			 */
			if (write_file("/sys/kernel/tracing/current_tracer", "function") ||
			    write_file("/sys/kernel/tracing/current_tracer", "nop"))
				snprintf(err, sizeof(err), "cycle %d: tracer: %s", cycles,
					 strerror(errno));
			continue;
		}
		if (!err[0] && unload_retrying(&busy))
			snprintf(err, sizeof(err), "cycle %d: unload: %s", cycles, strerror(errno));
		if (!err[0] && module_load())
			snprintf(err, sizeof(err), "cycle %d: load: %s", cycles, strerror(errno));
	}
	__atomic_store_n(&shared[WORKERS].done, 1, __ATOMIC_RELEASE);
	if (!module_loaded())
		module_load();
	for (int w = 0; w < WORKERS; w++) {
		SYS(waitpid(pids[w], &status, 0));
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "worker %d status %#x", w, status);
	}
	t1 = now();
	CHECK(!err[0], "%s", err);
	for (int w = 0; w < WORKERS; w++) {
		add(&shared[WORKERS], &shared[w]);
		shared[WORKERS].forks += shared[w].forks;
		shared[WORKERS].moves += shared[w].moves;
		shared[WORKERS].pairs += shared[w].pairs;
		shared[WORKERS].exits_first += shared[w].exits_first;
		shared[WORKERS].relistens += shared[w].relistens;
	}
	{
		struct tally *s = &shared[WORKERS];

		printf("# storm: %d workers, %ld rounds (at least %ld each), %d cgroups, %d unload/load cycles (each after %ld rounds with the module loaded) in %.1f s\n",
		       WORKERS, s->rounds, rounds, NCG, cycles, per_cycle, t1 - t0);
		printf("# storm: %ld client processes (%ld exited before the query), %ld socketpairs, %ld worker moves, %ld re-listens, %ld unload retries\n",
		       s->forks, s->exits_first, s->pairs, s->moves, s->relistens, busy);
		printf("# storm: answers: %ld right, %ld ENODATA, %ld no device, %ld wrong\n",
		       s->right, s->nodata, s->nodev, s->wrong);
		CHECK(!s->wrong, "%ld wrong answers, first: %s", s->wrong, s->first_wrong);
		CHECK(s->right > 0, "no right answer at all");
	}
	CHECK(module_loaded(), "module not loaded after the storm");
	CHECK_INT(live0, counter("live"));

	/* no cgroup stays pinned once removed: deepest first */
	SYS(cg_move("", 0));
	for (int i = NCG - 1; i >= 0; i--)
		SYS(cg_remove(cgs[i]));
	waited = now();
	while ((dying = cgroup_stat("nr_dying_descendants")) > 0 && now() - waited < 60)
		usleep(50000);
	printf("# storm: nr_dying_descendants %ld after %.1f s\n", dying, now() - waited);
	CHECK_INT(0, dying);
	munmap(shared, sizeof(*shared) * (WORKERS + 1));
}

int main(int argc, char **argv)
{
	guest_begin("stress", argc, argv);
	if (module_require())
		return 1;
	RUN(t_storm);
	return guest_end();
}
