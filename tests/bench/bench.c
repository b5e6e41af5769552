/* SPDX-License-Identifier: GPL-2.0 */
/*
 * peercgroup benchmarks, run inside the test guest as the suite "bench"
 * (root, cgroup2 at /sys/fs/cgroup, module loaded by the guest init).
 *
 * Measures, in one boot and side by side:
 *  - connect cost: connect + accept + close cycles per second, one thread
 *    and one thread per CPU, with the module unloaded and loaded in
 *    alternation, and with many connections already live;
 *  - query cost: ns per call of SO_PEERCRED, the /proc and pidfd routes,
 *    the library's calls and the raw ioctl;
 *  - memory: pcg_entry slab bytes per live socket and connection.
 *
 * Figures are printed, never judged.  Output:
 *   "# ..."                 human-readable table lines
 *   "BENCH,section,metric,condition,round,value,unit"   one per sample
 *   "ok - bench/completed"  at the end (the guest counts it)
 *
 * Options come from the kernel command line (run-guest.sh --append):
 *   pcg.bench_max=N      largest live-connection count of the memory part
 *                        (default 1000000)
 *   pcg.bench_quick=1    few, short rounds (smoke run)
 *   pcg.bench_profile=1  ftrace function_graph profile of the connect path
 *   pcg.bench_parts=a,b  only these of query,connect,live,memory
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <time.h>

/* The suites' helpers; this program uses only some of them. */
#include "guest.h"
#include "peercgroup.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* PIDFD_GET_INFO (Linux 6.13), not in older headers. */
struct bench_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid;
	uint32_t fsuid, fsgid;
	int32_t exit_code;
};
#define BENCH_PIDFD_INFO_CGROUPID	(1ULL << 2)
#define BENCH_PIDFD_GET_INFO		_IOWR(0xFF, 11, struct bench_pidfd_info)

#define CG_CLIENT	"bench.slice/client.service"
#define SOCK_NAME	"peercgroup-bench"
#define MAX_ROUNDS	16
#define MAX_THREADS	64

static bool quick;
static long bench_max = 1000000;
static bool profile;
static char parts[256] = "query,connect,live,memory";

/* A part runs if pcg.bench_parts names it and ONLY= (if any) is it. */
static bool part(const char *name)
{
	char *p = strstr(parts, name);
	size_t n = strlen(name);

	return p && (p == parts || p[-1] == ',') && (p[n] == ',' || !p[n]) && t_selected(name);
}
static int ncpus;

/* ---- time and statistics ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat3 {
	double med, min, max;
};

static struct stat3 stats(const double *v, int n)
{
	double s[MAX_ROUNDS * MAX_ROUNDS];
	struct stat3 r = { NAN, NAN, NAN };

	if (n <= 0)
		return r;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.max = s[n - 1];
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	return r;
}

static void csv(const char *section, const char *metric, const char *cond,
		int round, double value, const char *unit)
{
	printf("BENCH,%s,%s,%s,%d,%.6g,%s\n", section, metric, cond, round,
	       value, unit);
	fflush(stdout);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void die(const char *what)
{
	printf("Bail out! bench: %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(2);
}

/* ---- environment ---- */

static void read_options(void)
{
	bench_max = knob("pcg.bench_max", "PCG_BENCH_MAX", bench_max);
	quick = knob("pcg.bench_quick", "PCG_BENCH_QUICK", 0) == 1;
	profile = knob("pcg.bench_profile", "PCG_BENCH_PROFILE", 0) == 1;
	cmdline_value("pcg.bench_parts", parts, sizeof(parts));
}

/* Room for @fds descriptors in this process. */
static int raise_fd_limit(long fds)
{
	char s[32];
	struct rlimit rl = { fds, fds };

	snprintf(s, sizeof(s), "%ld", fds + 1024);
	if (read_long("/proc/sys/fs/nr_open") < fds)
		write_file("/proc/sys/fs/nr_open", s);
	if (read_long("/proc/sys/fs/file-max") < fds + 65536) {
		snprintf(s, sizeof(s), "%ld", fds + 65536);
		write_file("/proc/sys/fs/file-max", s);
	}
	return setrlimit(RLIMIT_NOFILE, &rl);
}

static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':') {
			v = strtol(line + strlen(key) + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* ---- the module ---- */

static void relisten_all(void);

static double cycle_rate(int threads, double secs);

/*
 * Load or unload the module.  Either patches kernel text (ftrace), and
 * QEMU's TCG then translates the code around it again: the first cycles
 * after a change run slow, so some are run and thrown away.
 */
static void set_module(bool on)
{
	bool changed = false;

	if (on && !module_loaded()) {
		if (module_load())
			die("load the module");
		relisten_all();
		changed = true;
	}
	if (!on && module_loaded()) {
		if (module_unload())
			die("unload the module");
		changed = true;
	}
	if (changed)
		cycle_rate(ncpus > MAX_THREADS ? MAX_THREADS : ncpus,
			   quick ? 0.1 : 0.3);
}

/* Wait until entries freed through RCU are gone: freed + live == recorded. */
static void settle(void)
{
	for (int i = 0; i < 500 && module_loaded(); i++) {
		if (counter("recorded") - counter("freed") <= counter("live"))
			return;
		usleep(10000);
	}
}

/* ---- connections ---- */

static socklen_t addr_of(struct sockaddr_un *sa, int id)
{
	char name[64];

	snprintf(name, sizeof(name), SOCK_NAME "-%d", id);
	return abstract_addr(sa, name);
}

static int listeners[MAX_THREADS + 2];
static int nlisteners;

static int listener(int id)
{
	struct sockaddr_un sa;
	socklen_t len = addr_of(&sa, id);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 4096))
		die("listener");
	if (nlisteners < (int)(sizeof(listeners) / sizeof(listeners[0])))
		listeners[nlisteners++] = fd;
	return fd;
}

static void listener_close(int fd)
{
	for (int i = 0; i < nlisteners; i++)
		if (listeners[i] == fd)
			listeners[i] = listeners[--nlisteners];
	close(fd);
}

/*
 * listen() again on a listening socket runs unix_listen() again, which the
 * module records: after a load, listeners made before it have an entry
 * again and connects to them take the full path (copy to the client).
 */
static void relisten_all(void)
{
	for (int i = 0; i < nlisteners; i++)
		if (listen(listeners[i], 4096))
			die("listen again");
}

/* One connection: client end in @c, accepted end in @a. */
static int connect_pair(int lfd, const struct sockaddr_un *sa, socklen_t len,
			int *c, int *a)
{
	*c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*c < 0)
		return -1;
	if (connect(*c, (const struct sockaddr *)sa, len)) {
		close(*c);
		return -1;
	}
	*a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*a < 0) {
		close(*c);
		return -1;
	}
	return 0;
}

#define BATCH		64	/* cycles timed together (a few ms) */
#define MAX_BATCHES	4096

struct cycler {
	pthread_t th;
	int id;
	int lfd;
	double secs;
	long cycles;
	int err;
	int nb;
	float bt[MAX_BATCHES];	/* seconds per batch */
};

static pthread_barrier_t start_line;
static long last_cycles;
static double last_wall_rate;

/* connect + accept + close, as many as fit in c->secs. */
static void *cycle_loop(void *arg)
{
	struct cycler *c = arg;
	struct sockaddr_un sa;
	socklen_t len = addr_of(&sa, c->id);
	double end, t, t0;
	long n = 0;
	int cf, af;

	if (c->th)
		pthread_barrier_wait(&start_line);
	t0 = now_s();
	end = t0 + c->secs;
	c->nb = 0;
	do {
		for (int i = 0; i < BATCH; i++) {
			if (connect_pair(c->lfd, &sa, len, &cf, &af)) {
				c->err = errno;
				return NULL;
			}
			close(cf);
			close(af);
		}
		n += BATCH;
		t = now_s();
		if (c->nb < MAX_BATCHES)
			c->bt[c->nb++] = t - t0;
		t0 = t;
	} while (t < end);
	c->cycles = n;
	return NULL;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

/*
 * One thread's cycles per second from the MEDIAN time of its batches.
 * Other guests and jobs on the host take the vCPU threads away for
 * milliseconds at a time, slowing some batches many times over; the
 * median ignores them as long as fewer than half are hit.  A batch lasts
 * a few ms, so deferred work (RCU callbacks freeing files and entries,
 * every tick or so) lands in most batches and stays counted.
 */
static double median_rate(const struct cycler *c)
{
	static float s[MAX_BATCHES];

	if (c->nb == 0)
		return 0;
	memcpy(s, c->bt, c->nb * sizeof(*s));
	qsort(s, c->nb, sizeof(*s), cmp_float);
	return BATCH / (c->nb % 2 ? s[c->nb / 2] :
			(s[c->nb / 2 - 1] + s[c->nb / 2]) / 2);
}

/* Cycles per second with @threads threads (1: in this thread). */
static double cycle_rate(int threads, double secs)
{
	static struct cycler cs[MAX_THREADS];
	static int lfds[MAX_THREADS];
	static bool have_lfds;
	double t0, t1, rate = 0;
	long total = 0;

	/* Listeners are made once; set_module() re-listens them on load. */
	if (!have_lfds) {
		for (int i = 0; i < MAX_THREADS; i++)
			lfds[i] = -1;
		have_lfds = true;
	}
	for (int i = 0; i < threads; i++) {
		if (lfds[i] < 0)
			lfds[i] = listener(i);
		cs[i] = (struct cycler){ .id = i, .lfd = lfds[i], .secs = secs };
	}
	if (threads == 1) {
		t0 = now_s();
		cycle_loop(&cs[0]);
		t1 = now_s();
	} else {
		pthread_barrier_init(&start_line, NULL, threads + 1);
		for (int i = 0; i < threads; i++)
			if (pthread_create(&cs[i].th, NULL, cycle_loop, &cs[i]))
				die("pthread_create");
		pthread_barrier_wait(&start_line);
		t0 = now_s();
		for (int i = 0; i < threads; i++)
			pthread_join(cs[i].th, NULL);
		t1 = now_s();
		pthread_barrier_destroy(&start_line);
	}
	for (int i = 0; i < threads; i++) {
		if (cs[i].err) {
			errno = cs[i].err;
			die("connect cycle");
		}
		total += cs[i].cycles;
		rate += median_rate(&cs[i]);
	}
	last_cycles = total;
	last_wall_rate = total / (t1 - t0);
	return rate;
}

/* ---- a set of live connections ---- */

struct live {
	int *fds;	/* 2 per connection */
	long n;
	int lfd[MAX_THREADS];
	int nl;
};

struct grower {
	pthread_t th;
	int lfd, id;
	int *fds;
	long want, made;
	int err;
};

static void *grow_loop(void *arg)
{
	struct grower *g = arg;
	struct sockaddr_un sa;
	socklen_t len = addr_of(&sa, g->id);

	while (g->made < g->want) {
		if (connect_pair(g->lfd, &sa, len, &g->fds[2 * g->made],
				 &g->fds[2 * g->made + 1])) {
			g->err = errno;
			break;
		}
		g->made++;
	}
	return NULL;
}

/* Grow @l to @target connections, one thread per CPU making them. */
static void live_grow(struct live *l, long target)
{
	static struct grower g[MAX_THREADS];
	int threads = ncpus > MAX_THREADS ? MAX_THREADS : ncpus;
	long todo = target - l->n, done = 0;

	if (todo <= 0)
		return;
	for (; l->nl < threads; l->nl++)
		l->lfd[l->nl] = listener(1000 + l->nl);
	l->fds = realloc(l->fds, 2 * target * sizeof(int));
	if (!l->fds)
		die("realloc");
	for (int i = 0; i < threads; i++) {
		long share = todo / threads + (i < todo % threads);

		g[i] = (struct grower){ .lfd = l->lfd[i], .id = 1000 + i,
					.fds = &l->fds[2 * (l->n + done)],
					.want = share };
		done += share;
		if (pthread_create(&g[i].th, NULL, grow_loop, &g[i]))
			die("pthread_create");
	}
	/* Threads that stopped early leave holes: compact them. */
	for (int i = 0; i < threads; i++) {
		pthread_join(g[i].th, NULL);
		if (g[i].err)
			errno = g[i].err;
		memmove(&l->fds[2 * l->n], g[i].fds, 2 * g[i].made * sizeof(int));
		l->n += g[i].made;
	}
}

static void live_free(struct live *l)
{
	for (int i = 0; i < l->nl; i++)
		listener_close(l->lfd[i]);
	l->nl = 0;
	free(l->fds);
	l->fds = NULL;
}

static void live_close(struct live *l)
{
	for (long i = 0; i < 2 * l->n; i++)
		close(l->fds[i]);
	l->n = 0;
}

/* ---- connect cost ---- */

struct series {
	double v[MAX_ROUNDS];
	int n;
};

static void add(struct series *s, double v)
{
	if (s->n < MAX_ROUNDS)
		s->v[s->n++] = v;
}

/* Overhead of each "on" round against the mean of its neighbouring "off"
 * rounds (off0 on0 off1 on1 ... offN): linear drift cancels. */
static int overheads(const struct series *off, const struct series *on,
		     double *out)
{
	int n = 0;

	for (int i = 0; i < on->n && i < off->n; i++) {
		double base = off->v[i];

		if (i + 1 < off->n)
			base = (off->v[i] + off->v[i + 1]) / 2;
		/* time per cycle on / time per cycle off - 1 */
		out[n++] = (base / on->v[i] - 1) * 100;
	}
	return n;
}

static void print_rate_row(const char *what, const struct series *s)
{
	struct stat3 st = stats(s->v, s->n);

	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |", what, st.med, st.min,
	     st.max, s->n);
}

static void print_pct_row(const char *what, const double *v, int n)
{
	struct stat3 st = stats(v, n);

	note("| %-44s | %+9.1f%% | %+9.1f%% | %+9.1f%% | %2d |", what, st.med,
	     st.min, st.max, n);
}

static void bench_connect(void)
{
	int rounds = quick ? 2 : 15;
	double secs = quick ? 0.3 : 0.5;
	int threads = ncpus > MAX_THREADS ? MAX_THREADS : ncpus;
	struct series off1 = { 0 }, on1 = { 0 }, offn = { 0 }, onn = { 0 };
	double ov[MAX_ROUNDS];
	char cond[64];
	int n;

	note("%s", "");
	note("connect cost: connect+accept+close cycles/s, %.1f s per sample, "
	     "from the median time of %d-cycle batches (robust to host "
	     "stalls); module unloaded and loaded in turn (off on off on ... "
	     "off)", secs, BATCH);
	/* warm up */
	set_module(false);
	cycle_rate(1, secs / 2);
	for (int r = 0; r <= rounds; r++) {
		set_module(false);
		add(&off1, cycle_rate(1, secs));
		csv("connect", "cycles_per_s_wall", "off_1thr", r, last_wall_rate, "1/s");
		add(&offn, cycle_rate(threads, secs));
		csv("connect", "cycles_per_s_wall", "off_nthr", r, last_wall_rate, "1/s");
		snprintf(cond, sizeof(cond), "off_%dthr", threads);
		csv("connect", "cycles_per_s", "off_1thr", r, off1.v[r], "1/s");
		csv("connect", "cycles_per_s", cond, r, offn.v[r], "1/s");
		if (r == rounds)
			break;
		set_module(true);
		add(&on1, cycle_rate(1, secs));
		csv("connect", "cycles_per_s_wall", "on_1thr", r, last_wall_rate, "1/s");
		add(&onn, cycle_rate(threads, secs));
		csv("connect", "cycles_per_s_wall", "on_nthr", r, last_wall_rate, "1/s");
		snprintf(cond, sizeof(cond), "on_%dthr", threads);
		csv("connect", "cycles_per_s", "on_1thr", r, on1.v[r], "1/s");
		csv("connect", "cycles_per_s", cond, r, onn.v[r], "1/s");
	}
	set_module(true);
	note("| %-44s | %10s | %10s | %10s | %2s |", "cycles/s", "median",
	     "min", "max", "n");
	note("|%s|%s|%s|%s|%s|", "----------------------------------------------",
	     "------------", "------------", "------------", "----");
	print_rate_row("1 thread, module not loaded", &off1);
	print_rate_row("1 thread, module loaded", &on1);
	snprintf(cond, sizeof(cond), "%d threads, module not loaded", threads);
	print_rate_row(cond, &offn);
	snprintf(cond, sizeof(cond), "%d threads, module loaded", threads);
	print_rate_row(cond, &onn);
	n = overheads(&off1, &on1, ov);
	for (int i = 0; i < n; i++)
		csv("connect", "overhead_pct", "1thr", i, ov[i], "%");
	print_pct_row("overhead per cycle, 1 thread", ov, n);
	n = overheads(&offn, &onn, ov);
	snprintf(cond, sizeof(cond), "%dthr", threads);
	for (int i = 0; i < n; i++)
		csv("connect", "overhead_pct", cond, i, ov[i], "%");
	snprintf(cond, sizeof(cond), "overhead per cycle, %d threads", threads);
	print_pct_row(cond, ov, n);
	/* Host contention only ever slows a sample down: the best samples
	 * of each side are the least disturbed (but the fewest). */
	note("overhead, best sample against best sample: 1 thread %+.1f%%, "
	     "%d threads %+.1f%%", (stats(off1.v, off1.n).max /
	     stats(on1.v, on1.n).max - 1) * 100, threads,
	     (stats(offn.v, offn.n).max / stats(onn.v, onn.n).max - 1) * 100);
	csv("connect", "overhead_best_pct", "1thr", 0,
	    (stats(off1.v, off1.n).max / stats(on1.v, on1.n).max - 1) * 100, "%");
	snprintf(cond, sizeof(cond), "%dthr", threads);
	csv("connect", "overhead_best_pct", cond, 0,
	    (stats(offn.v, offn.n).max / stats(onn.v, onn.n).max - 1) * 100, "%");
}

/*
 * Connect cost with @count connections already live (1 thread).  The
 * table only holds connections made while the module is loaded, so each
 * block makes them anew: load, make @count, measure, unload, measure with
 * the same sockets open, close them.
 */
static void bench_connect_live(long count)
{
	int blocks = quick ? 1 : 3, per = 2;
	double secs = quick ? 0.3 : 0.5;
	struct series off = { 0 }, on = { 0 };
	double ov[MAX_ROUNDS];
	char what[96], cond[64];
	long made = count;
	int n = 0;

	for (int b = 0; b < blocks; b++) {
		struct live l = { 0 };
		double t0 = now_s();

		set_module(true);
		live_grow(&l, count);
		if (l.n < count)
			note("only %ld of %ld connections: %s", l.n, count,
			     strerror(errno));
		if (b == 0)
			note("%ld live connections made in %.1f s (%ld entries "
			     "in the table)", l.n, now_s() - t0, counter("live"));
		made = l.n;
		for (int r = 0; r < per; r++)
			add(&on, cycle_rate(1, secs));
		set_module(false);
		for (int r = 0; r < per; r++)
			add(&off, cycle_rate(1, secs));
		live_close(&l);
		live_free(&l);
	}
	set_module(true);
	snprintf(cond, sizeof(cond), "live%ld", made);
	for (int i = 0; i < on.n && i < off.n; i++) {
		csv("connect_live", "cycles_per_s_on", cond, i, on.v[i], "1/s");
		csv("connect_live", "cycles_per_s_off", cond, i, off.v[i], "1/s");
		ov[n++] = (off.v[i] / on.v[i] - 1) * 100;
		csv("connect_live", "overhead_pct", cond, i, ov[i], "%");
	}
	snprintf(what, sizeof(what), "1 thread, %ld live, module not loaded", made);
	print_rate_row(what, &off);
	snprintf(what, sizeof(what), "1 thread, %ld live, module loaded", made);
	print_rate_row(what, &on);
	snprintf(what, sizeof(what), "overhead per cycle, %ld live", made);
	print_pct_row(what, ov, n);
}

/* ---- query cost ---- */

static pid_t peer_pid;
static int dev_fd = -1;
static char path_buf[4096];

/* One bare syscall, for scale. */
static int m_getpid(int fd)
{
	(void)fd;
	return syscall(SYS_getpid) > 0 ? 0 : -1;
}

static int m_peercred(int fd)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len);
}

static int m_peercred_proc(int fd)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len))
		return -1;
	return proc_cgroup(uc.pid, path_buf, sizeof(path_buf));
}

/* systemd/polkit's race-free route: the pidfd pins the process; the pid
 * it stands for (same struct pid as SO_PEERCRED's) names /proc; a signal
 * 0 through the pidfd afterwards proves the pid was not recycled. */
static int m_pidfd_proc(int fd)
{
	struct ucred uc;
	socklen_t len = sizeof(int);
	int pidfd, r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len))
		return -1;
	len = sizeof(uc);
	r = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len);
	if (!r)
		r = proc_cgroup(uc.pid, path_buf, sizeof(path_buf));
	if (!r)
		r = syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0);
	close(pidfd);
	return r;
}

static int m_pidfd_info(int fd)
{
	struct bench_pidfd_info info = { .mask = BENCH_PIDFD_INFO_CGROUPID };
	socklen_t len = sizeof(int);
	int pidfd, r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len))
		return -1;
	r = ioctl(pidfd, BENCH_PIDFD_GET_INFO, &info);
	close(pidfd);
	if (!r && !(info.mask & BENCH_PIDFD_INFO_CGROUPID))
		r = -1;
	return r;
}

static int m_lib_id(int fd)
{
	uint64_t id;

	return peercgroup_get_id(fd, &id);
}

static int m_lib_get(int fd)
{
	struct peercgroup_info info;
	int r = peercgroup_get(fd, 0, &info);

	peercgroup_info_free(&info);
	return r;
}

static int raw_query(int fd, bool path)
{
	struct peercgroup_query q = {
		.size = sizeof(q),
		.sockfd = fd,
		.flags = path ? 0 : PEERCGROUP_QUERY_NO_PATH,
		.path = path ? (uintptr_t)path_buf : 0,
		.path_size = path ? sizeof(path_buf) : 0,
	};

	return ioctl(dev_fd, PEERCGROUP_IOC_QUERY, &q);
}

static int m_ioctl_path(int fd) { return raw_query(fd, true); }
static int m_ioctl_nopath(int fd) { return raw_query(fd, false); }

struct method {
	const char *name;	/* CSV name */
	const char *label;	/* table label */
	int (*fn)(int fd);
	bool ok;
	const char *skip;
	struct series ns;
};

static struct method methods[] = {
#define METHOD(n, l, f) { .name = (n), .label = (l), .fn = (f) }
	METHOD("so_peercred", "getsockopt(SO_PEERCRED) (floor)", m_peercred),
	METHOD("getpid", "getpid() (a bare syscall, for scale)", m_getpid),
	METHOD("peercred_proc", "SO_PEERCRED + /proc/PID/cgroup", m_peercred_proc),
	METHOD("pidfd_proc", "SO_PEERPIDFD + /proc/PID/cgroup + pidfd check",
	       m_pidfd_proc),
	METHOD("pidfd_info", "SO_PEERPIDFD + ioctl(PIDFD_GET_INFO)", m_pidfd_info),
	METHOD("lib_get_id", "peercgroup_get_id()", m_lib_id),
	METHOD("lib_get", "peercgroup_get() with path", m_lib_get),
	METHOD("ioctl_path", "ioctl(PEERCGROUP_IOC_QUERY) with path", m_ioctl_path),
	METHOD("ioctl_nopath", "ioctl(PEERCGROUP_IOC_QUERY) NO_PATH", m_ioctl_nopath),
#undef METHOD
};
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

static struct method *method(const char *name)
{
	for (size_t i = 0; i < NMETHODS; i++)
		if (!strcmp(methods[i].name, name))
			return &methods[i];
	abort();
}

/*
 * ns per call: @iters calls in 16 chunks, the median chunk (host stalls
 * hit a few chunks, not the median).
 */
static double time_calls(struct method *m, int fd, long iters)
{
	long chunk = iters / 16 > 0 ? iters / 16 : 1;
	double t[16];

	for (int c = 0; c < 16; c++) {
		double t0 = now_s();

		for (long i = 0; i < chunk; i++)
			if (m->fn(fd))
				die(m->name);
		t[c] = (now_s() - t0) / chunk * 1e9;
	}
	return stats(t, 16).med;
}

static void bench_query(void)
{
	int rounds = quick ? 3 : 9;
	double target = quick ? 0.02 : 0.08;	/* seconds per sample */
	long iters[NMETHODS];
	struct client cl;
	struct peercgroup_info info;
	int lfd, afd;
	double floor_med;

	if (cg_create("bench.slice") || cg_create(CG_CLIENT))
		die("cgroup");
	lfd = listen_on(SOCK_NAME "-query", SOCK_STREAM);
	if (lfd < 0)
		die("listen");
	if (client_start(&cl, CG_CLIENT, SOCK_NAME "-query", SOCK_STREAM))
		die("client");
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (afd < 0)
		die("accept");
	peer_pid = cl.pid;
	dev_fd = dev_open();
	if (dev_fd < 0)
		die("open " PEERCGROUP_DEVICE_PATH);
	if (peercgroup_get(afd, 0, &info))
		die("peercgroup_get");
	note("%s", "");
	note("query cost: ns per call on an accepted socket whose peer is in /%s "
	     "(path \"%s\"), %d rounds, methods interleaved, each sample the "
	     "median of 16 chunks", CG_CLIENT, info.path, rounds);
	peercgroup_info_free(&info);

	for (size_t i = 0; i < NMETHODS; i++) {
		struct method *m = &methods[i];

		m->ok = m->fn(afd) == 0;
		if (!m->ok) {
			m->skip = errno == ENOPROTOOPT ? "no SO_PEERPIDFD (Linux < 6.5)" :
				  errno == ENOTTY || errno == EINVAL ?
				  "no PIDFD_GET_INFO (Linux < 6.13)" : strerror(errno);
			continue;
		}
		/* calibrate */
		iters[i] = 16;
		for (;;) {
			double t0 = now_s();

			time_calls(m, afd, iters[i]);
			if (now_s() - t0 > target / 4 || iters[i] > 1 << 24)
				break;
			iters[i] *= 2;
		}
		iters[i] *= 4;
	}
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < NMETHODS; i++) {
			struct method *m = &methods[i];

			if (!m->ok)
				continue;
			add(&m->ns, time_calls(m, afd, iters[i]));
			csv("query", m->name, "ns_per_call", r,
			    m->ns.v[m->ns.n - 1], "ns");
		}
	}
	floor_med = stats(methods[0].ns.v, methods[0].ns.n).med;
	note("| %-46s | %9s | %9s | %9s | %14s |", "method", "median ns", "min ns",
	     "max ns", "x SO_PEERCRED");
	note("|------------------------------------------------|-----------|"
	     "-----------|-----------|----------------|");
	for (size_t i = 0; i < NMETHODS; i++) {
		struct method *m = &methods[i];
		struct stat3 st;
		double ratio[MAX_ROUNDS];

		if (!m->ok) {
			note("| %-46s | %9s | %9s | %9s | %14s |", m->label, "-", "-",
			     "-", "skipped");
			note("|   (%s)", m->skip);
			csv("query", m->name, "skipped", 0, NAN, m->skip);
			continue;
		}
		st = stats(m->ns.v, m->ns.n);
		/* per-round ratio: both sides measured in the same round */
		for (int r = 0; r < m->ns.n; r++)
			ratio[r] = m->ns.v[r] / methods[0].ns.v[r];
		{
			struct stat3 rs = stats(ratio, m->ns.n);

			note("| %-46s | %9.0f | %9.0f | %9.0f | %5.2f (%.2f-%.2f) |",
			     m->label, st.med, st.min, st.max, rs.med, rs.min, rs.max);
			csv("query", m->name, "ratio_median", 0, rs.med, "x");
		}
	}
	(void)floor_med;
	{
		struct stat3 p = stats(method("peercred_proc")->ns.v,
				       method("peercred_proc")->ns.n);
		struct stat3 a = stats(method("lib_get")->ns.v,
				       method("lib_get")->ns.n);
		struct stat3 b = stats(method("lib_get_id")->ns.v,
				       method("lib_get_id")->ns.n);

		note("/proc route (SO_PEERCRED + /proc) / peercgroup_get(): %.1fx; "
		     "/ peercgroup_get_id(): %.1fx", p.med / a.med, p.med / b.med);
	}
	close(afd);
	close(lfd);
	close(dev_fd);
	client_stop(&cl);
	cg_remove(CG_CLIENT);
	cg_remove("bench.slice");
}

/* ---- memory ---- */

struct slab {
	bool found;		/* "pcg_entry" in /proc/slabinfo (not merged) */
	long active, total, objsize, per_slab, pages_per_slab, slabs;
};

static struct slab slab_read(void)
{
	struct slab s = { 0 };
	char line[512];
	FILE *f = fopen("/proc/slabinfo", "re");

	if (!f)
		return s;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		long a, t, sz, per, pages, sl;

		if (sscanf(line, "%63s %ld %ld %ld %ld %ld : tunables %*d %*d %*d : "
			   "slabdata %*d %ld", name, &a, &t, &sz, &per, &pages,
			   &sl) == 7 && !strcmp(name, "pcg_entry")) {
			s = (struct slab){ true, a, t, sz, per, pages, sl };
			break;
		}
	}
	fclose(f);
	return s;
}

/* Bytes of slab memory per object, from sysfs (works when merged too). */
static char slab_alias[256];

static double slab_bytes_per_object(long *objsize, bool *merged)
{
	ssize_t n = readlink("/sys/kernel/slab/pcg_entry", slab_alias,
			     sizeof(slab_alias) - 1);
	long order, objs;

	*merged = n > 0;
	slab_alias[n > 0 ? n : 0] = 0;
	*objsize = read_long("/sys/kernel/slab/pcg_entry/object_size");
	order = read_long("/sys/kernel/slab/pcg_entry/order");
	objs = read_long("/sys/kernel/slab/pcg_entry/objs_per_slab");
	if (order < 0 || objs <= 0)
		return NAN;
	return (double)(4096L << order) / objs;
}

/* rhashtable buckets: a power of two, grown past 75 % load. */
static double bucket_bytes(long entries)
{
	long size = 64;

	while (entries > size * 3 / 4)
		size *= 2;
	return size * sizeof(void *);
}

static void bench_memory(void)
{
	long levels[] = { 1000, 100000, 1000000 };
	struct slab base, s;
	struct live l = { 0 };
	long objsize, base_live, base_free;
	bool merged;
	double per_obj, secs = quick ? 0.3 : 0.6;
	struct series r0 = { 0 };

	set_module(true);
	settle();
	base = slab_read();
	base_live = counter("live");
	base_free = meminfo_kb("MemFree");
	per_obj = slab_bytes_per_object(&objsize, &merged);
	note("%s", "");
	note("memory: pcg_entry object %ld bytes, %.1f bytes of slab per object "
	     "(/sys/kernel/slab); cache %s; slab_nomerge %s", objsize, per_obj,
	     merged ? "MERGED with others (an alias in /sys/kernel/slab: "
		      "slabinfo counts are shared; slab_nomerge separates it)" :
	     base.found ? "separate (own line in /proc/slabinfo)" : "not found",
	     cmdline_value("slab_nomerge", NULL, 0) ? "on" : "off");
	for (int r = 0; r < (quick ? 2 : 3); r++)
		add(&r0, cycle_rate(1, secs));
	if (merged)
		note("/sys/kernel/slab/pcg_entry -> %s", slab_alias);
	note("baseline: %ld live entries (listeners, the guest's own), "
	     "slabinfo active %ld objs in %ld slabs", base_live, base.active,
	     base.slabs);
	note("| %-9s | %9s | %9s | %10s | %10s | %10s | %10s | %9s | %11s |",
	     "live conn", "entries", "per conn", "slab B/ent", "B/socket",
	     "B/conn", "+buckets", "kernel/conn", "connect/s");
	note("|-----------|-----------|-----------|------------|------------|"
	     "------------|------------|-----------|-------------|");
	{
		struct stat3 st = stats(r0.v, r0.n);

		note("| %9d | %9ld | %9s | %10s | %10s | %10s | %10s | %9s | %11.0f |",
		     0, base_live, "-", "-", "-", "-", "-", "-", st.med);
		csv("memory", "connect_per_s", "live0", 0, st.med, "1/s");
	}
	for (size_t k = 0; k < sizeof(levels) / sizeof(levels[0]); k++) {
		long want = levels[k] > bench_max ? bench_max : levels[k];
		long entries, slab_bytes, freed_kb;
		double per_ent, per_sock, per_conn, buckets, t0 = now_s();
		struct series rs = { 0 };
		char cond[64];

		if (k > 0 && levels[k - 1] >= want)
			break;
		live_grow(&l, want);
		if (l.n < want) {
			note("stopped at %ld of %ld connections: %s (fd, file or "
			     "memory limit)", l.n, want, strerror(errno));
		}
		note("made %ld connections in %.1f s", l.n, now_s() - t0);
		settle();
		s = slab_read();
		entries = counter("live") - base_live;
		freed_kb = base_free - meminfo_kb("MemFree");
		slab_bytes = (s.slabs - base.slabs) * s.pages_per_slab * 4096;
		/* slabinfo when the cache is its own and the change is large
		 * enough to swamp partly filled slabs, else sysfs geometry */
		if (s.found && !merged && s.slabs - base.slabs >= 100)
			per_ent = (double)slab_bytes / (s.active - base.active);
		else
			per_ent = per_obj;
		per_sock = per_ent * entries / (2.0 * l.n);
		per_conn = per_ent * entries / l.n;
		buckets = (bucket_bytes(counter("live")) - bucket_bytes(base_live)) /
			  (double)l.n;
		for (int r = 0; r < (quick ? 2 : 3); r++)
			add(&rs, cycle_rate(1, secs));
		snprintf(cond, sizeof(cond), "live%ld", l.n);
		csv("memory", "entries", cond, 0, entries, "entries");
		csv("memory", "slab_bytes_per_entry", cond, 0, per_ent, "B");
		csv("memory", "bytes_per_socket", cond, 0, per_sock, "B");
		csv("memory", "bytes_per_conn", cond, 0, per_conn, "B");
		csv("memory", "bucket_bytes_per_conn_est", cond, 0, buckets, "B");
		csv("memory", "kernel_bytes_per_conn", cond, 0,
		    freed_kb * 1024.0 / l.n, "B");
		csv("memory", "live_x_objsize_per_conn", cond, 0,
		    (double)entries * objsize / l.n, "B");
		csv("memory", "connect_per_s", cond, 0, stats(rs.v, rs.n).med, "1/s");
		note("| %9ld | %9ld | %9.2f | %10.1f | %10.1f | %10.1f | %10.1f | %9.0f | %11.0f |",
		     l.n, entries, (double)entries / l.n, per_ent, per_sock, per_conn,
		     buckets, freed_kb * 1024.0 / l.n, stats(rs.v, rs.n).med);
		if (l.n < want)
			break;
	}
	{
		double t0 = now_s();
		long n = l.n;

		live_close(&l);
		live_free(&l);
		settle();
		s = slab_read();
		note("closed %ld connections in %.1f s: %ld live entries (baseline "
		     "%ld), slabinfo active %ld objs (baseline %ld), %ld slabs "
		     "(baseline %ld)", n, now_s() - t0, counter("live"), base_live,
		     s.active, base.active, s.slabs, base.slabs);
		csv("memory", "entries_after_close", "closed", 0,
		    counter("live") - base_live, "entries");
		csv("memory", "slab_objs_after_close", "closed", 0,
		    s.active - base.active, "objs");
	}
	note("B/socket, B/conn: pcg_entry slab bytes (one entry per socket, two "
	     "sockets per connection); +buckets: rhashtable bucket array per "
	     "connection (estimate: power of two, <= 75%% load); kernel/conn: "
	     "MemFree drop per connection, all of the kernel (sockets, files, "
	     "inodes, entries)");
}

/* ---- ftrace profile of the connect path ---- */

static void tracefs_write(const char *file, const char *s)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/kernel/tracing/%s", file);
	if (write_file(p, s))
		note("tracefs %s: %s", file, strerror(errno));
}

static const char *const profile_funcs[] = {
	"pcg_*", "rhashtable_*", "__rhashtable_*", "rht_*",
	"unix_stream_connect", "unix_accept", "unix_release", "unix_create1",
	"unix_sock_destructor", "security_unix_stream_connect",
	"__sys_connect", "__sys_accept4", "__sys_socket", "__fput", "sock_close",
	"sk_alloc", "__sk_destruct", "kmem_cache_alloc", "kmem_cache_free",
	"call_rcu", "cgroup_path_ns", "rcu_core", "rcu_do_batch",
};

struct prof {
	char name[64];
	long calls;
	double us;
};

static void prof_add(struct prof *p, int *n, const char *name, double us)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(p[i].name, name))
			break;
	if (i == *n) {
		if (*n >= 64)
			return;
		snprintf(p[i].name, sizeof(p[i].name), "%s", name);
		p[i].calls = 0;
		p[i].us = 0;
		(*n)++;
	}
	p[i].calls++;
	p[i].us += us;
}

static int cmp_prof(const void *a, const void *b)
{
	const struct prof *x = a, *y = b;

	return x->us < y->us ? 1 : x->us > y->us ? -1 : 0;
}

/*
 * function_graph on a few functions of the connect path (the kernels we
 * boot have no function profiler).  Only functions in the filter are
 * traced, so a line is either a leaf "N us | f();" or the closing
 * "N us | } /+ f +/" of a traced caller (funcgraph-tail).
 */
static void trace_clear(void)
{
	int fd = open("/sys/kernel/tracing/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

static void bench_profile(void)
{
	static char line[1024];
	struct prof p[64];
	int np = 0, fd;
	long cycles;
	double secs = 0.5, rate;
	FILE *f;

	mkdir("/sys/kernel/tracing", 0755);
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (access("/sys/kernel/tracing/current_tracer", F_OK)) {
		note("profile: no tracefs");
		return;
	}
	set_module(true);
	fd = open("/sys/kernel/tracing/set_ftrace_filter", O_WRONLY | O_TRUNC |
		  O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	/* one pattern per write: a pattern matching nothing fails alone */
	for (size_t i = 0; i < sizeof(profile_funcs) / sizeof(profile_funcs[0]); i++)
		write_file("/sys/kernel/tracing/set_ftrace_filter", profile_funcs[i]);
	tracefs_write("buffer_size_kb", "32768");
	trace_clear();
	tracefs_write("current_tracer", "function_graph");
	/* tracer options exist once the tracer is current */
	tracefs_write("options/funcgraph-tail", "1");
	tracefs_write("options/funcgraph-irqs", "0");
	cycle_rate(1, 0.1);	/* TCG translates the patched code */
	trace_clear();
	rate = cycle_rate(1, secs);
	tracefs_write("tracing_on", "0");
	cycles = last_cycles;
	rate = last_wall_rate;
	f = fopen("/sys/kernel/tracing/trace", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *bar = strchr(line, '|'), *num, name[64];
		double us;

		if (!bar || line[0] == '#')
			continue;
		/* the duration sits just left of the bar, maybe after a marker */
		for (num = bar - 1; num > line && num[-1] != ')'; num--)
			;
		while (*num && !(*num >= '0' && *num <= '9'))
			num++;
		if (num >= bar || sscanf(num, "%lf", &us) != 1)
			continue;
		if (sscanf(bar + 1, " } /* %63[^ *] */", name) == 1 ||
		    sscanf(bar + 1, " %63[^ (]();", name) == 1)
			prof_add(p, &np, name, us);
	}
	if (f)
		fclose(f);
	tracefs_write("current_tracer", "nop");
	tracefs_write("tracing_on", "1");
	trace_clear();
	fd = open("/sys/kernel/tracing/set_ftrace_filter", O_WRONLY | O_TRUNC |
		  O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	qsort(p, np, sizeof(*p), cmp_prof);
	note("%s", "");
	note("profile: ftrace function_graph on the connect path, module loaded, "
	     "1 thread, %ld cycles (%.0f/s while traced); times include callees "
	     "and tracing overhead", cycles, rate);
	note("| %-32s | %12s | %10s | %12s |", "function", "calls/cycle",
	     "us/call", "us/cycle");
	note("|----------------------------------|--------------|------------|"
	     "--------------|");
	for (int i = 0; i < np && i < 24; i++) {
		note("| %-32s | %12.2f | %10.2f | %12.2f |", p[i].name,
		     (double)p[i].calls / cycles, p[i].us / p[i].calls,
		     p[i].us / cycles);
		csv("profile", p[i].name, "us_per_cycle", 0, p[i].us / cycles, "us");
	}
}

int main(int argc, char **argv)
{
	double t0 = now_s();
	char kver[256] = "";
	long printk_level;

	guest_begin("bench", argc, argv);
	read_options();
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	{
		int fd = open("/proc/sys/kernel/osrelease", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			ssize_t n = read(fd, kver, sizeof(kver) - 1);

			kver[n > 0 ? n - 1 : 0] = 0;
			close(fd);
		}
	}
	if (raise_fd_limit(2 * bench_max + 4096))
		note("cannot raise RLIMIT_NOFILE to %ld: %s", 2 * bench_max + 4096,
		     strerror(errno));
	note("peercgroup bench: kernel %s, %d CPUs, %ld MB RAM, %s run", kver,
	     ncpus, meminfo_kb("MemTotal") / 1024, quick ? "quick" : "full");
	csv("info", "kernel", kver, 0, 0, "");
	csv("info", "cpus", "", 0, ncpus, "");
	/* Keep the module's "loaded" lines (info) off the console: they
	 * would land inside the table.  Warnings still show. */
	printk_level = read_long("/proc/sys/kernel/printk");
	write_file("/proc/sys/kernel/printk", "5");
	if (!module_loaded())
		set_module(true);

	/* In a child: the library keeps /dev/peercgroup open, which would pin
	 * the module, and the connect part unloads it. */
	if (part("query")) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			bench_query();
			fflush(stdout);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("query part failed");
	}
	if (part("connect"))
		bench_connect();
	if (part("live")) {
		note("%s", "");
		note("connect cost with live connections (1 thread; loaded: the "
		     "table holds them; not loaded: the same sockets open; blocks "
		     "of 2+2 samples, connections made anew for each block)");
		bench_connect_live(quick ? 1000 : 10000);
		if (!quick)
			bench_connect_live(100000);
	}
	if (part("memory"))
		bench_memory();
	if (profile && t_selected("profile"))
		bench_profile();
	note("%s", "");
	note("bench took %.0f s", now_s() - t0);
	if (printk_level > 0) {
		char lv[24];

		snprintf(lv, sizeof(lv), "%ld", printk_level);
		write_file("/proc/sys/kernel/printk", lv);
	}
	printf("ok - bench/completed\n");
	return 0;
}
