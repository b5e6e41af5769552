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
 *   pcg.bench_profile=1  ftrace function_graph profile of the connect and query paths
 *   pcg.bench_parts=a,b  only these of query,connect,live,memory,contention
 *   pcg.bench_icount=1   the guest runs under QEMU -icount (time counts
 *                        instructions, one vCPU): the connect part measures
 *                        fixed-size blocks, no "live" part, short warm-ups
 *   pcg.bench_floor=1    "the module" is the floor build: the same hooks
 *                        with empty callbacks (tests/bench/floor.c)
 *
 * Each headline figure is printed once more at the end, beside its goal, as
 * "FIGURE|key|value|line" (value: the number the spread across boots is
 * computed on) and in the "figures" block of the table.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
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
/*
 * Real peers sit deeper: a Kubernetes pod's container under the systemd
 * driver (the bug report's 193 bytes, 4 names), and the same pod on a
 * node that itself runs in a container, as kind runs them (322 bytes,
 * 7 names: past the module's 256-byte stack buffer).
 */
#define CG_POD_ID	"0f1e2d3c_4b5a_6978_8a9b_0c1d2e3f4a5b"
#define CG_CTR_ID	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CG_NODE_ID	"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define CG_CONTAINER	"cri-containerd-" CG_CTR_ID ".scope"
#define CG_POD		"kubepods.slice/kubepods-besteffort.slice/" \
			"kubepods-besteffort-pod" CG_POD_ID ".slice/" CG_CONTAINER
#define CG_NESTED	"system.slice/docker-" CG_NODE_ID ".scope/kubelet.slice/" \
			"kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/" \
			"kubelet-kubepods-besteffort-pod" CG_POD_ID ".slice/" CG_CONTAINER
#define SOCK_NAME	"peercgroup-bench"
#define MAX_ROUNDS	16
#define MAX_THREADS	64

static bool quick;
static long bench_max = 1000000;
static bool profile;
static bool icount;
static bool floor_run;	/* the module is the floor build (tests/bench/floor.c) */
static char parts[256] = "query,connect,live,memory,contention";

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

/* CPU time of the calling thread: under icount, its instructions. */
static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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
	icount = knob("pcg.bench_icount", "PCG_BENCH_ICOUNT", 0) == 1;
	floor_run = knob("pcg.bench_floor", "PCG_BENCH_FLOOR", 0) == 1;
	cmdline_value("pcg.bench_parts", parts, sizeof(parts));
}

/* ---- headline figures, each beside its goal ---- */

#define MAX_FIGURES 64

struct figure {
	char key[48];
	double value;
	char line[200];
};

/* Shared with the children that run parts (MAP_SHARED). */
static struct figure *figures;
static int *nfigures;

static void figures_init(void)
{
	void *p = mmap(NULL, sizeof(int) + MAX_FIGURES * sizeof(struct figure),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	figures = p;
	nfigures = (int *)(figures + MAX_FIGURES);
}

/*
 * A headline figure: @key and @value for machines (the spread across boots
 * is computed on @value), the line for people, goal included.  No commas
 * in the line: it travels in a '|'-separated record.
 */
static void figure(const char *key, double value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void figure(const char *key, double value, const char *fmt, ...)
{
	struct figure *f;
	va_list ap;

	if (*nfigures >= MAX_FIGURES)
		return;
	f = &figures[(*nfigures)++];
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->value = value;
	va_start(ap, fmt);
	vsnprintf(f->line, sizeof(f->line), fmt, ap);
	va_end(ap);
}

static void figures_print(void)
{
	note("%s", "");
	note("figures (goals are targets, never asserted):");
	for (int i = 0; i < *nfigures; i++)
		note("%s", figures[i].line);
	for (int i = 0; i < *nfigures; i++)
		printf("FIGURE|%s|%.9g|%s\n", figures[i].key, figures[i].value,
		       figures[i].line);
	fflush(stdout);
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
	/* Under icount, translation takes no guest time: a short run. */
	if (changed)
		cycle_rate(ncpus > MAX_THREADS ? MAX_THREADS : ncpus,
			   icount ? 0.02 : quick ? 0.1 : 0.3);
}

/* Wait until entries freed through RCU are gone: freed + live == recorded. */
static void settle(void)
{
	for (int i = 0; i < 500 && module_loaded() && !floor_run; i++) {
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
	figure("connect_overhead_wall_1thr", 1 + stats(ov, n).med / 100,
	       "connect overhead (wall clock 1 thread): %+.1f %% (goal <= 2 %%)",
	       stats(ov, n).med);
	n = overheads(&offn, &onn, ov);
	snprintf(cond, sizeof(cond), "%dthr", threads);
	for (int i = 0; i < n; i++)
		csv("connect", "overhead_pct", cond, i, ov[i], "%");
	snprintf(cond, sizeof(cond), "overhead per cycle, %d threads", threads);
	print_pct_row(cond, ov, n);
	if (threads > 1)
		figure("connect_overhead_wall_nthr", 1 + stats(ov, n).med / 100,
		       "connect overhead (wall clock %d threads): %+.1f %% (goal <= 2 %%)",
		       threads, stats(ov, n).med);
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
 * Virtual ns per connect + accept + close cycle under icount: @batches
 * batches of BATCH cycles on the listener @lfd.  Returns the median
 * batch, and in *@mean the mean of all batches.  Guest time counts
 * instructions, so there are no host stalls to filter: the mean is the
 * whole cost, deferred work (RCU callbacks, timers, slab refills) in the
 * batches where it happens to land included; the median batch leaves
 * those out, and so can hide a design's deferred cost.
 */
static double cycle_ns(int lfd, int id, int batches, double *mean)
{
	struct sockaddr_un sa;
	socklen_t len = addr_of(&sa, id);
	double t[MAX_BATCHES], sum = 0;
	int cf, af;

	if (batches > MAX_BATCHES)
		batches = MAX_BATCHES;
	for (int b = 0; b < batches; b++) {
		double t0 = now_s();

		for (int i = 0; i < BATCH; i++) {
			if (connect_pair(lfd, &sa, len, &cf, &af))
				die("connect cycle");
			close(cf);
			close(af);
		}
		t[b] = (now_s() - t0) * 1e9 / BATCH;
		sum += t[b];
	}
	if (mean)
		*mean = sum / batches;
	qsort(t, batches, sizeof(*t), cmp_double);
	return batches % 2 ? t[batches / 2] : (t[batches / 2 - 1] + t[batches / 2]) / 2;
}

#define ICOUNT_LISTENER 500

static double icount_off_ns, icount_on_ns;	/* for the profile's calibration */

/*
 * Connect overhead under icount, in one boot: blocks with the module
 * unloaded and loaded in turn (off on off on ... off), the first pairs
 * thrown away (the first rounds of a fresh guest run 4-5 % slower: slabs,
 * dentries and page tables still filling).  The headline compares each
 * block's mean batch (cycle_ns()): median "on" block against median "off"
 * block.  Per pair against the mean of the two neighbouring "off"
 * blocks, for the spread within the boot.  The same from each block's
 * median batch is kept as a second figure, the method of earlier rounds.
 */
static void bench_connect_icount(void)
{
	int warm = quick ? 1 : 2, pairs = quick ? 3 : 8;
	int batches = quick ? 16 : 48;
	struct series off = { 0 }, on = { 0 }, offb = { 0 }, onb = { 0 };
	double ov[MAX_ROUNDS], mean;
	struct stat3 so, sn, sv, sob, snb;
	int lfd = listener(ICOUNT_LISTENER), n;

	note("%s", "");
	note("connect cost under icount (virtual ns = instructions, 1 vCPU): "
	     "ns per connect+accept+close cycle, each block the mean of %d "
	     "batches of %d cycles; module unloaded and loaded in turn, %d "
	     "pairs after %d thrown away", batches, BATCH, pairs, warm);
	for (int r = 0; r <= warm + pairs; r++) {
		double v;

		set_module(false);
		v = cycle_ns(lfd, ICOUNT_LISTENER, batches, &mean);
		csv("connect_icount", "ns_per_cycle", "off", r, v, "ns");
		csv("connect_icount", "ns_per_cycle_mean", "off", r, mean, "ns");
		if (r >= warm) {
			add(&off, mean);
			add(&offb, v);
		}
		if (r == warm + pairs)
			break;
		set_module(true);
		v = cycle_ns(lfd, ICOUNT_LISTENER, batches, &mean);
		csv("connect_icount", "ns_per_cycle", "on", r, v, "ns");
		csv("connect_icount", "ns_per_cycle_mean", "on", r, mean, "ns");
		if (r >= warm) {
			add(&on, mean);
			add(&onb, v);
		}
	}
	set_module(true);
	n = 0;
	for (int i = 0; i < on.n && i < off.n; i++) {
		double base = i + 1 < off.n ? (off.v[i] + off.v[i + 1]) / 2 : off.v[i];

		ov[n] = (on.v[i] / base - 1) * 100;
		csv("connect_icount", "overhead_pct", "pair", i, ov[n], "%");
		n++;
	}
	so = stats(off.v, off.n);
	sn = stats(on.v, on.n);
	sv = stats(ov, n);
	sob = stats(offb.v, offb.n);
	snb = stats(onb.v, onb.n);
	note("| %-44s | %10s | %10s | %10s | %2s |", "virtual ns per cycle",
	     "median", "min", "max", "n");
	note("|%s|%s|%s|%s|%s|", "----------------------------------------------",
	     "------------", "------------", "------------", "----");
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |", "module not loaded",
	     so.med, so.min, so.max, off.n);
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |", "module loaded",
	     sn.med, sn.min, sn.max, on.n);
	note("| %-44s | %+9.2f%% | %+9.2f%% | %+9.2f%% | %2d |",
	     "overhead per pair (against neighbours)", sv.med, sv.min, sv.max, n);
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |",
	     "not loaded, median batch of each block", sob.med, sob.min, sob.max,
	     offb.n);
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |",
	     "loaded, median batch of each block", snb.med, snb.min, snb.max,
	     onb.n);
	/* the profile is traced batch by batch: calibrate it on the median */
	icount_off_ns = sob.med;
	icount_on_ns = snb.med;
	if (floor_run)
		figure("connect_overhead_icount", sn.med / so.med,
		       "connect overhead of the hooks alone, empty callbacks "
		       "(icount): %+.1f %%", (sn.med / so.med - 1) * 100);
	else
		figure("connect_overhead_icount", sn.med / so.med,
		       "connect overhead (icount): %+.1f %% (goal <= 2 %%)",
		       (sn.med / so.med - 1) * 100);
	figure("connect_overhead_icount_median_batch", snb.med / sob.med,
	       "connect overhead (icount, median batch, deferred work left "
	       "out): %+.1f %%", (snb.med / sob.med - 1) * 100);
	figure("connect_ns_off_icount", so.med,
	       "connect cycle without the module (icount): %.0f ns", so.med);
	figure("connect_ns_on_icount", sn.med,
	       "connect cycle with the module (icount): %.0f ns", sn.med);
	listener_close(lfd);
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
static int pod_fd = -1, nested_fd = -1;	/* accepted from the deep peers */
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

static int m_lib_path_buf(int fd)
{
	int r = peercgroup_get_path_buf(fd, path_buf, sizeof(path_buf));

	return r < 0 ? r : 0;
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
	const int *peer;	/* the socket asked about; NULL: the client.service one */
	bool ok;
	const char *skip;
	struct series ns;
	double ratio;		/* median per-round ratio to SO_PEERCRED */
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
	METHOD("lib_path_buf", "peercgroup_get_path_buf()", m_lib_path_buf),
	METHOD("ioctl_path", "ioctl(PEERCGROUP_IOC_QUERY) with path", m_ioctl_path),
	METHOD("ioctl_nopath", "ioctl(PEERCGROUP_IOC_QUERY) NO_PATH", m_ioctl_nopath),
#define DEEP(n, l, f, fdp) { .name = (n), .label = (l), .fn = (f), .peer = (fdp) }
	DEEP("ioctl_path_pod", "ioctl with path: a pod's (193 bytes)", m_ioctl_path, &pod_fd),
	DEEP("lib_get_pod", "peercgroup_get(): a pod's path", m_lib_get, &pod_fd),
	DEEP("lib_path_buf_pod", "peercgroup_get_path_buf(): a pod's path",
	     m_lib_path_buf, &pod_fd),
	DEEP("ioctl_path_nested", "ioctl with path: a nested pod's (322 bytes)",
	     m_ioctl_path, &nested_fd),
	DEEP("lib_get_nested", "peercgroup_get(): a nested pod's path", m_lib_get,
	     &nested_fd),
	DEEP("lib_path_buf_nested", "peercgroup_get_path_buf(): a nested pod's path",
	     m_lib_path_buf, &nested_fd),
#undef DEEP
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

/* Median per-round ratio of method @a to method @b. */
static double round_ratio(const struct method *a, const struct method *b)
{
	double r[MAX_ROUNDS];
	int n = 0;

	for (int i = 0; i < a->ns.n && i < b->ns.n; i++)
		r[n++] = a->ns.v[i] / b->ns.v[i];
	return stats(r, n).med;
}

/*
 * The path figures for one peer: @sfx "" is the client.service peer,
 * "_pod" and "_nested" the peers in deep cgroups (CG_POD, CG_NESTED).
 * @what names the deep peer in the figure lines.
 */
static void path_figures(const char *sfx, const char *what)
{
	char key[48], k_lget[48], k_lbuf[48], k_path[48], on[96] = "";
	const struct method *path, *lget, *lbuf;

	snprintf(k_path, sizeof(k_path), "ioctl_path%s", sfx);
	snprintf(k_lget, sizeof(k_lget), "lib_get%s", sfx);
	snprintf(k_lbuf, sizeof(k_lbuf), "lib_path_buf%s", sfx);
	path = method(k_path);
	lget = method(k_lget);
	lbuf = method(k_lbuf);
	if (!path->ok)
		return;
	if (what)
		snprintf(on, sizeof(on), " for %s", what);
	snprintf(key, sizeof(key), "path_query%s", sfx);
	figure(key, path->ratio, "path query%s: %.2fx SO_PEERCRED (goal <= 2x)",
	       on, path->ratio);
	snprintf(key, sizeof(key), "library_path_call%s", sfx);
	if (lget->ok)
		figure(key, round_ratio(lget, path),
		       "library path call%s: %+.1f %% vs raw ioctl (goal <= 5 %%)",
		       on, (round_ratio(lget, path) - 1) * 100);
	snprintf(key, sizeof(key), "library_path_buf_call%s", sfx);
	if (lbuf->ok)
		figure(key, round_ratio(lbuf, path),
		       "library path call into the caller's buffer%s: %+.1f %% vs raw ioctl (goal <= 5 %%)",
		       on, (round_ratio(lbuf, path) - 1) * 100);
}

static void query_figures(void)
{
	const struct method *id = method("ioctl_nopath"), *lid = method("lib_get_id");

	if (id->ok)
		figure("id_query", id->ratio,
		       "id query: %.2fx SO_PEERCRED (goal <= 1.25x)", id->ratio);
	if (id->ok && lid->ok)
		figure("library_id_call", round_ratio(lid, id),
		       "library id call: %+.1f %% vs raw ioctl (goal <= 5 %%)",
		       (round_ratio(lid, id) - 1) * 100);
	path_figures("", NULL);
	path_figures("_pod", "a pod's path (193 bytes in 4 names)");
	path_figures("_nested", "a nested pod's path (322 bytes in 7 names)");
	for (size_t i = 1; i < NMETHODS; i++) {
		char key[48];

		if (!methods[i].ok)
			continue;
		snprintf(key, sizeof(key), "query_%s", methods[i].name);
		figure(key, methods[i].ratio, "query %s: %.2fx SO_PEERCRED",
		       methods[i].label, methods[i].ratio);
	}
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

static int names(const char *path)
{
	int n = 0;

	for (; *path; path++)
		n += *path == '/';
	return n;
}

static int method_fd(const struct method *m, int afd)
{
	return m->peer ? *m->peer : afd;
}

/* mkdir -p under the cgroup root. */
static int cg_create_all(const char *path)
{
	char p[PATH_MAX];

	for (size_t n = 0; ; n++) {
		if (path[n] == '/' || !path[n]) {
			memcpy(p, path, n);
			p[n] = '\0';
			if (cg_create(p))
				return -1;
			if (!path[n])
				return 0;
		}
	}
}

/* rmdir of @path and each of its parents, deepest first. */
static void cg_remove_all(const char *path)
{
	char p[PATH_MAX], *slash;

	snprintf(p, sizeof(p), "%s", path);
	do {
		cg_remove(p);
		slash = strrchr(p, '/');
		if (slash)
			*slash = '\0';
	} while (slash);
}

/* A client started in @cg, connected on @lfd; the accepted socket. */
static int deep_peer(struct client *cl, const char *cg, int lfd)
{
	int fd;

	if (cg_create_all(cg) || client_start(cl, cg, SOCK_NAME "-query", SOCK_STREAM))
		die(cg);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		die("accept");
	return fd;
}

static void deep_peer_note(int fd, const char *cg)
{
	struct peercgroup_info info;

	if (peercgroup_get(fd, 0, &info) || strcmp(info.path + 1, cg))
		die("the deep peer's path");
	note("and on one whose peer is in a cgroup %zu bytes deep (%d names): "
	     "the *_pod and *_nested methods", info.path_len, names(info.path));
	peercgroup_info_free(&info);
}

static void bench_query(void)
{
	int rounds = quick ? 3 : 9;
	double target = quick ? 0.02 : 0.08;	/* seconds per sample */
	long iters[NMETHODS];
	struct client cl, pod, nested;
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
	pod_fd = deep_peer(&pod, CG_POD, lfd);
	nested_fd = deep_peer(&nested, CG_NESTED, lfd);
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
	deep_peer_note(pod_fd, CG_POD);
	deep_peer_note(nested_fd, CG_NESTED);

	for (size_t i = 0; i < NMETHODS; i++) {
		struct method *m = &methods[i];

		m->ok = m->fn(method_fd(m, afd)) == 0;
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

			time_calls(m, method_fd(m, afd), iters[i]);
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
			add(&m->ns, time_calls(m, method_fd(m, afd), iters[i]));
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
			m->ratio = rs.med;
		}
	}
	(void)floor_med;
	query_figures();
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
	close(pod_fd);
	close(nested_fd);
	close(lfd);
	close(dev_fd);
	client_stop(&cl);
	client_stop(&pod);
	client_stop(&nested);
	cg_remove(CG_CLIENT);
	cg_remove("bench.slice");
	cg_remove_all(CG_POD);
	cg_remove_all(CG_NESTED);
}

/* ---- path queries against cgroup churn ---- */

struct contender {
	pthread_t th;
	int fd;			/* accepted socket (query threads) */
	long ops;
	double cpu_s;		/* the thread's CPU time (query threads) */
};

static int contention_stop;

static void *path_query_loop(void *arg)
{
	struct contender *c = arg;
	char buf[256];
	struct peercgroup_query q = {
		.size = sizeof(q), .sockfd = c->fd,
		.path = (uintptr_t)buf, .path_size = sizeof(buf),
	};
	double t0 = thread_cpu_s();

	while (!__atomic_load_n(&contention_stop, __ATOMIC_RELAXED)) {
		q.sockfd = c->fd;
		q.path_size = sizeof(buf);
		if (ioctl(dev_fd, PEERCGROUP_IOC_QUERY, &q))
			die("path query");
		c->ops++;
	}
	c->cpu_s = thread_cpu_s() - t0;
	return NULL;
}

/* The baseline's third thread: as busy, but in user space. */
static void *spin_loop(void *arg)
{
	struct contender *c = arg;
	volatile unsigned long x = 0;

	while (!__atomic_load_n(&contention_stop, __ATOMIC_RELAXED)) {
		for (int i = 0; i < 10000; i++)
			x += i;
		c->ops++;
	}
	return NULL;
}

/* Create and remove a cgroup, again and again: each takes cgroup_mutex. */
static void *churn_loop(void *arg)
{
	struct contender *c = arg;
	char name[64];

	while (!__atomic_load_n(&contention_stop, __ATOMIC_RELAXED)) {
		snprintf(name, sizeof(name), "bench-churn/c%ld", c->ops % 8);
		if (cg_create(name) || cg_remove(name))
			die("cgroup churn");
		c->ops++;
	}
	return NULL;
}

/*
 * Path queries per second from 2 threads while a third runs @third; in
 * *@per_cpu_s, per second of the 2 threads' own CPU time: what a query
 * costs, whatever share of the CPUs the threads got.
 */
static double contention_sample(int afd, void *(*third)(void *), double secs,
				double *third_rate, double *per_cpu_s)
{
	struct contender q[2] = { { .fd = afd }, { .fd = afd } }, t = { 0 };
	double t0, t1;

	__atomic_store_n(&contention_stop, 0, __ATOMIC_RELAXED);
	if (pthread_create(&t.th, NULL, third, &t))
		die("pthread_create");
	for (int i = 0; i < 2; i++)
		if (pthread_create(&q[i].th, NULL, path_query_loop, &q[i]))
			die("pthread_create");
	t0 = now_s();
	usleep(secs * 1e6);
	__atomic_store_n(&contention_stop, 1, __ATOMIC_RELAXED);
	t1 = now_s();
	for (int i = 0; i < 2; i++)
		pthread_join(q[i].th, NULL);
	pthread_join(t.th, NULL);
	*third_rate = t.ops / (t1 - t0);
	*per_cpu_s = (q[0].ops + q[1].ops) / (q[0].cpu_s + q[1].cpu_s);
	return (q[0].ops + q[1].ops) / (t1 - t0);
}

/*
 * Path queries per second from 2 threads while a third thread creates and
 * removes cgroups (cgroup_mutex), against the same with the third thread
 * spinning in user space (same competition for the CPUs, no cgroup work).
 * Samples interleaved: idle churn idle churn ...
 */
static void bench_contention(void)
{
	int rounds = quick ? 1 : 3;
	double secs = quick ? 0.1 : 0.4, churn_rate = 0, spin_rate, cpu;
	struct series idle = { 0 }, churn = { 0 }, ops = { 0 };
	struct series idle_cpu = { 0 }, churn_cpu = { 0 };
	struct stat3 si, sc, sic, scc;
	struct client cl;
	int lfd, afd;

	if (cg_create("bench.slice") || cg_create(CG_CLIENT) ||
	    cg_create("bench-churn"))
		die("cgroup");
	lfd = listen_on(SOCK_NAME "-churn", SOCK_STREAM);
	if (lfd < 0)
		die("listen");
	if (client_start(&cl, CG_CLIENT, SOCK_NAME "-churn", SOCK_STREAM))
		die("client");
	afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (afd < 0)
		die("accept");
	dev_fd = dev_open();
	if (dev_fd < 0)
		die("open " PEERCGROUP_DEVICE_PATH);
	for (int r = 0; r < rounds; r++) {
		add(&idle, contention_sample(afd, spin_loop, secs, &spin_rate,
					     &cpu));
		add(&idle_cpu, cpu);
		csv("contention", "path_queries_per_s", "idle", r,
		    idle.v[idle.n - 1], "1/s");
		csv("contention", "path_queries_per_cpu_s", "idle", r, cpu, "1/s");
		add(&churn, contention_sample(afd, churn_loop, secs, &churn_rate,
					      &cpu));
		add(&churn_cpu, cpu);
		csv("contention", "path_queries_per_s", "churn", r,
		    churn.v[churn.n - 1], "1/s");
		csv("contention", "path_queries_per_cpu_s", "churn", r, cpu, "1/s");
		add(&ops, churn_rate);
		csv("contention", "cgroup_mkdir_rmdir_per_s", "churn", r,
		    churn_rate, "1/s");
	}
	si = stats(idle.v, idle.n);
	sc = stats(churn.v, churn.n);
	sic = stats(idle_cpu.v, idle_cpu.n);
	scc = stats(churn_cpu.v, churn_cpu.n);
	note("%s", "");
	note("path queries under cgroup churn: raw ioctl with path from 2 "
	     "threads on one socket, %.1f s per sample, %d samples each; third "
	     "thread: mkdir+rmdir of a cgroup in a loop (churn) or a user-space "
	     "spin (idle)", secs, rounds);
	note("| %-44s | %10s | %10s | %10s | %2s |", "per second", "median",
	     "min", "max", "n");
	note("|%s|%s|%s|%s|%s|", "----------------------------------------------",
	     "------------", "------------", "------------", "----");
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |",
	     "path queries, third thread spinning", si.med, si.min, si.max, idle.n);
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |",
	     "path queries, third thread churning cgroups", sc.med, sc.min,
	     sc.max, churn.n);
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |",
	     "per CPU s of the query threads, spinning", sic.med, sic.min,
	     sic.max, idle_cpu.n);
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |",
	     "per CPU s of the query threads, churning", scc.med, scc.min,
	     scc.max, churn_cpu.n);
	note("| %-44s | %10.0f | %10.0f | %10.0f | %2d |",
	     "cgroup mkdir+rmdir pairs", stats(ops.v, ops.n).med,
	     stats(ops.v, ops.n).min, stats(ops.v, ops.n).max, ops.n);
	figure("path_queries_churn", sc.med / si.med,
	       "path queries under cgroup churn: %.0f/s vs %.0f/s idle "
	       "(goal: no drop) %+.1f %%", sc.med, si.med,
	       (sc.med / si.med - 1) * 100);
	figure("path_query_cost_churn", scc.med / sic.med,
	       "path queries per CPU second of the querying threads under "
	       "cgroup churn: %.0f vs %.0f idle %+.1f %%", scc.med, sic.med,
	       (scc.med / sic.med - 1) * 100);
	close(dev_fd);
	dev_fd = -1;
	close(afd);
	close(lfd);
	client_stop(&cl);
	for (int i = 0; i < 8; i++) {
		char name[64];

		snprintf(name, sizeof(name), "bench-churn/c%d", i);
		cg_remove(name);
	}
	cg_remove("bench-churn");
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
	double last_conn = NAN, last_buckets = NAN, last_rate = NAN;
	long last_n = 0;
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
		last_conn = per_conn;
		last_buckets = buckets;
		last_n = l.n;
		last_rate = stats(rs.v, rs.n).med;
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
	if (last_n)
		figure("connect_with_live", stats(r0.v, r0.n).med / last_rate,
		       "connect cost with %ld live connections: %+.1f %% vs none "
		       "(goal: unchanged) module loaded", last_n,
		       (stats(r0.v, r0.n).med / last_rate - 1) * 100);
	if (last_n)
		figure("bytes_per_connection", last_conn + last_buckets,
		       "bytes per connection: %.0f (goal <= 64) slab %.1f + "
		       "buckets %.1f at %ld live", last_conn + last_buckets,
		       last_conn, last_buckets, last_n);
	note("B/socket, B/conn: pcg_entry slab bytes per socket and per "
	     "connection (entries as the module counts them: one per "
	     "connection; one per socket in 0.1.0); +buckets: rhashtable "
	     "bucket array per connection (estimate: power of two, <= 75%% "
	     "load); kernel/conn: MemFree drop per connection, all of the "
	     "kernel (sockets, files, inodes, entries)");
}

/* ---- ftrace profile of the connect and query paths ---- */

static void tracefs_write(const char *file, const char *s)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/kernel/tracing/%s", file);
	if (write_file(p, s))
		note("tracefs %s: %s", file, strerror(errno));
}

/* Patterns of the connect path; one matching nothing is skipped alone. */
static const char *const connect_funcs[] = {
	"pcg_*", "rhashtable_*", "__rhashtable_*", "rht_*",
	"unix_stream_connect", "unix_accept", "unix_release", "unix_create1",
	"unix_sock_destructor", "security_unix_stream_connect", "unix_listen",
	"__sys_connect", "__sys_accept4", "__sys_socket", "__fput", "sock_close",
	"sk_alloc", "__sk_destruct", "kmem_cache_alloc", "kmem_cache_alloc_lru",
	"kmem_cache_free", "call_rcu", "put_pid", "cgroup_sk_alloc",
	"cgroup_sk_free", "rcu_core", "rcu_do_batch",
};

/* ... and of the query paths (ioctl and SO_PEERCRED). */
static const char *const query_funcs[] = {
	"pcg_*", "__x64_sys_ioctl", "__x64_sys_getsockopt", "__sys_getsockopt",
	"sock_getsockopt", "sk_getsockopt", "security_file_ioctl",
	"security_socket_getsockopt", "sockfd_lookup", "__fdget", "fput",
	"cgroup_path_ns", "cgroup_path_ns_locked", "kernfs_path_from_node",
	"mutex_lock", "mutex_unlock", "_copy_from_user", "_copy_to_user",
	"put_pid", "pid_nr_ns", "pid_vnr", "kfree", "__kmalloc",
};

#define MAX_PROF 96

struct prof {
	char name[64];
	long calls;
	double ns;	/* inclusive, less the tracer's cost (see trace_parse) */
	float *each;	/* ns of each call */
	long cap;
};

struct profile {
	struct prof p[MAX_PROF];
	int n;
	long events;		/* traced calls */
	long units;		/* cycles or queries traced */
	double plain_ns;	/* ns per unit, not traced */
	double traced_ns;	/* ns per unit, traced */
	double overhead;	/* ns the tracer adds per traced call */
	double window;		/* of which inside the traced call's own time */
};

static struct prof *prof_get(struct profile *pr, const char *name)
{
	for (int i = 0; i < pr->n; i++)
		if (!strcmp(pr->p[i].name, name))
			return &pr->p[i];
	if (pr->n >= MAX_PROF)
		return NULL;
	snprintf(pr->p[pr->n].name, sizeof(pr->p[0].name), "%s", name);
	pr->p[pr->n].calls = 0;
	pr->p[pr->n].ns = 0;
	return &pr->p[pr->n++];
}

static void prof_call(struct prof *p, double ns)
{
	if (p->calls >= p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->each = realloc(p->each, p->cap * sizeof(*p->each));
		if (!p->each)
			die("realloc");
	}
	p->each[p->calls++] = ns;
	p->ns += ns;
}

/*
 * Mean ns per call without the slowest 3 % of calls: a timer interrupt
 * (its handler untraced) or a softirq's RCU callbacks landing inside a
 * call inflate it many times over; those few calls are dropped.
 */
static double prof_trimmed(struct prof *p)
{
	long keep = p->calls - p->calls * 3 / 100;
	double sum = 0;

	if (keep <= 0)
		return 0;
	qsort(p->each, p->calls, sizeof(*p->each), cmp_float);
	for (long i = 0; i < keep; i++)
		sum += p->each[i];
	return sum / keep;
}

static void trace_clear(void)
{
	int fd = open("/sys/kernel/tracing/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

static void trace_filter_clear(void)
{
	int fd = open("/sys/kernel/tracing/set_ftrace_filter", O_WRONLY |
		      O_TRUNC | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

static bool tracefs_mounted(void)
{
	mkdir("/sys/kernel/tracing", 0755);
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	return access("/sys/kernel/tracing/current_tracer", F_OK) == 0;
}

/* function_graph on @funcs only (the kernels we boot have no function
 * profiler: CONFIG_FUNCTION_PROFILER is off in Debian's configs). */
static void trace_arm(const char *const *funcs, size_t n)
{
	trace_filter_clear();
	for (size_t i = 0; i < n; i++)
		write_file("/sys/kernel/tracing/set_ftrace_filter", funcs[i]);
	tracefs_write("buffer_size_kb", "32768");
	trace_clear();
	tracefs_write("current_tracer", "function_graph");
	/* tracer options exist once the tracer is current */
	tracefs_write("options/funcgraph-tail", "1");
	tracefs_write("options/funcgraph-irqs", "0");
	tracefs_write("tracing_on", "1");
}

static void trace_disarm(void)
{
	tracefs_write("current_tracer", "nop");
	tracefs_write("tracing_on", "1");
	trace_clear();
	trace_filter_clear();
}

/*
 * Read the function_graph trace into @pr.  Only filtered functions are
 * traced, so a line opens a traced caller ("f() {"), is a leaf with its
 * duration ("N us | f();"), or closes a caller with its duration ("N us |
 * } /+ f +/", funcgraph-tail).  A caller's duration includes the tracer's
 * whole work for its traced callees, @overhead ns each, and every traced
 * call's duration part of the tracer's work for itself, @window ns (the
 * shortest leaf call seen: a function doing next to nothing); both are
 * taken off.  Also sets pr->window to that shortest leaf call.
 */
static void trace_parse(struct profile *pr, double overhead, double window)
{
	static char line[1024];
	struct { char name[64]; long at; } st[64];
	int depth = 0;
	FILE *f = fopen("/sys/kernel/tracing/trace", "re");

	for (int i = 0; i < pr->n; i++) {
		pr->p[i].calls = 0;
		pr->p[i].ns = 0;
	}
	pr->events = 0;
	pr->window = 1e9;
	while (f && fgets(line, sizeof(line), f)) {
		char *bar = strchr(line, '|'), *num, name[64];
		struct prof *p;
		double us;
		long inner = 0;

		if (line[0] == '#')
			continue;
		if (!bar || strstr(line, "------") || strstr(line, "=>")) {
			depth = 0;	/* a context switch: lose the nesting */
			continue;
		}
		if (strstr(bar, ") {") && !strchr(bar, '}') && !strchr(bar, ';') &&
		    sscanf(bar + 1, " %63[^ (]", name) == 1) {
			pr->events++;
			if (depth < 64) {
				snprintf(st[depth].name, sizeof(st[0].name), "%s", name);
				st[depth++].at = pr->events;
			}
			continue;
		}
		/* the duration sits just left of the bar, maybe after a marker */
		for (num = bar - 1; num > line && num[-1] != ')'; num--)
			;
		while (*num && !(*num >= '0' && *num <= '9'))
			num++;
		if (num >= bar || sscanf(num, "%lf", &us) != 1)
			continue;
		if (sscanf(bar + 1, " } /* %63[^ *] */", name) == 1) {
			if (depth > 0 && !strcmp(st[depth - 1].name, name))
				inner = pr->events - st[--depth].at;
			else
				depth = 0;
		} else if (sscanf(bar + 1, " %63[^ (]();", name) == 1) {
			pr->events++;
			if (us * 1000 < pr->window)
				pr->window = us * 1000;
		} else {
			continue;
		}
		p = prof_get(pr, name);
		if (p)
			prof_call(p, us * 1000 - window - inner * overhead);
	}
	if (f)
		fclose(f);
}

/*
 * Profile @units runs of @work: its ns per unit untraced and traced, the
 * tracer's cost per traced call from the difference, then the per-function
 * figures with that cost taken off callers.
 */
static void profile_run(struct profile *pr, const char *const *funcs,
			size_t nfuncs, double (*work)(long units), long units)
{
	double window;

	work(units / 4 + 1);	/* warm */
	pr->plain_ns = work(units);
	trace_arm(funcs, nfuncs);
	work(units / 8 + 1);	/* TCG translates the patched code */
	trace_clear();
	pr->traced_ns = work(units);
	tracefs_write("tracing_on", "0");
	pr->units = units;
	trace_parse(pr, 0, 0);
	pr->overhead = pr->events ?
		(pr->traced_ns - pr->plain_ns) * units / pr->events : 0;
	if (pr->overhead < 0)
		pr->overhead = 0;
	if (pr->window > pr->overhead)
		pr->window = pr->overhead;
	window = pr->window;
	trace_parse(pr, pr->overhead, window);
	pr->window = window;
	for (int i = 0; i < pr->n; i++)
		pr->p[i].ns = prof_trimmed(&pr->p[i]) * pr->p[i].calls;
	trace_disarm();
}

static int prof_lfd = -1;

/* ns per connect + accept + close cycle, @units cycles. */
static double connect_work(long units)
{
	return cycle_ns(prof_lfd, ICOUNT_LISTENER + 1, (units + BATCH - 1) / BATCH,
			NULL);
}

static int prof_sock = -1;
static int prof_method;		/* 0: SO_PEERCRED, 1: NO_PATH, 2: path */

/* ns per query, @units queries. */
static double query_work(long units)
{
	double t0 = now_s();

	for (long i = 0; i < units; i++)
		if (prof_method ? raw_query(prof_sock, prof_method == 2) :
		    m_peercred(prof_sock))
			die("query");
	return (now_s() - t0) * 1e9 / units;
}

static int cmp_prof_delta(const void *a, const void *b, void *arg)
{
	const struct profile *off = arg;
	const struct prof *x = a, *y = b;
	double dx = x->ns, dy = y->ns;

	for (int i = 0; i < off->n; i++) {
		if (!strcmp(off->p[i].name, x->name))
			dx -= off->p[i].ns;
		if (!strcmp(off->p[i].name, y->name))
			dy -= off->p[i].ns;
	}
	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

static const char *time_unit(void)
{
	return icount ? "virtual ns (instructions)" : "ns while traced (wall clock)";
}

static void profile_connect(void)
{
	static struct profile on, off;
	long units = quick ? 128 : 1024;

	prof_lfd = listener(ICOUNT_LISTENER + 1);
	set_module(true);
	profile_run(&on, connect_funcs, sizeof(connect_funcs) / sizeof(*connect_funcs),
		    connect_work, units);
	set_module(false);
	profile_run(&off, connect_funcs, sizeof(connect_funcs) / sizeof(*connect_funcs),
		    connect_work, units);
	set_module(true);
	listener_close(prof_lfd);
	qsort_r(on.p, on.n, sizeof(on.p[0]), cmp_prof_delta, &off);
	note("%s", "");
	note("profile of the connect path: function_graph on %zu patterns, %ld "
	     "cycles, %s", sizeof(connect_funcs) / sizeof(*connect_funcs), units,
	     time_unit());
	note("per cycle: module loaded %.0f ns untraced, %.0f traced, %.1f traced "
	     "calls, tracer %.0f ns per call (%.0f inside its own time); not "
	     "loaded %.0f / %.0f, %.1f calls, %.0f (%.0f) ns per call", on.plain_ns,
	     on.traced_ns, (double)on.events / units, on.overhead, on.window,
	     off.plain_ns, off.traced_ns, (double)off.events / units,
	     off.overhead, off.window);
	note("ns: inclusive of traced and untraced callees, less the tracer's "
	     "cost (of traced callees, and inside the call's own time), mean "
	     "of all but the slowest 3 %% of calls; the module's ftrace "
	     "callbacks are notrace and count in the function they hook");
	note("| %-34s | %9s | %9s | %11s | %11s | %10s |", "function", "calls/cyc",
	     "ns/call", "ns/cycle on", "ns/cyc off", "on - off");
	note("|------------------------------------|-----------|-----------|"
	     "-------------|-------------|------------|");
	for (int i = 0; i < on.n; i++) {
		const struct prof *p = &on.p[i];
		double off_ns = 0;

		for (int j = 0; j < off.n; j++)
			if (!strcmp(off.p[j].name, p->name))
				off_ns = off.p[j].ns / units;
		note("| %-34s | %9.2f | %9.0f | %11.0f | %11.0f | %+10.0f |", p->name,
		     (double)p->calls / units, p->ns / p->calls, p->ns / units,
		     off_ns, p->ns / units - off_ns);
		csv("profile_connect", p->name, "ns_per_cycle_on", 0, p->ns / units, "ns");
		csv("profile_connect", p->name, "ns_per_cycle_off", 0, off_ns, "ns");
		csv("profile_connect", p->name, "calls_per_cycle_on", 0,
		    (double)p->calls / units, "calls");
	}
	for (int j = 0; j < off.n; j++) {
		bool seen = false;

		for (int i = 0; i < on.n; i++)
			seen |= !strcmp(on.p[i].name, off.p[j].name);
		if (!seen)
			note("| %-34s | %9s | %9s | %11s | %11.0f | %10s |",
			     off.p[j].name, "-", "-", "-", off.p[j].ns / units, "");
	}
	note("whole cycle, untraced: %.0f ns loaded, %.0f not loaded: %+.0f ns",
	     on.plain_ns, off.plain_ns, on.plain_ns - off.plain_ns);
}

static void profile_query(void)
{
	static struct profile q[3];
	static const char *const names[] = { "SO_PEERCRED", "ioctl NO_PATH",
					     "ioctl path" };
	long units = quick ? 256 : 2048;
	struct client cl;
	int lfd, a;

	/* The query part's setup: a peer in CG_CLIENT, a 4 KiB path buffer. */
	set_module(true);
	if (cg_create("bench.slice") || cg_create(CG_CLIENT))
		die("cgroup");
	lfd = listen_on(SOCK_NAME "-profile", SOCK_STREAM);
	if (lfd < 0 || client_start(&cl, CG_CLIENT, SOCK_NAME "-profile", SOCK_STREAM))
		die("client");
	a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		die("accept");
	dev_fd = dev_open();
	if (dev_fd < 0)
		die("open " PEERCGROUP_DEVICE_PATH);
	prof_sock = a;
	for (prof_method = 0; prof_method < 3; prof_method++)
		profile_run(&q[prof_method], query_funcs,
			    sizeof(query_funcs) / sizeof(*query_funcs), query_work,
			    units);
	note("%s", "");
	note("profile of the query paths: function_graph on %zu patterns, %ld "
	     "queries each on an accepted socket whose peer is in /%s, %s, per "
	     "query, less the tracer's cost", sizeof(query_funcs) /
	     sizeof(*query_funcs), units, CG_CLIENT, time_unit());
	for (int m = 0; m < 3; m++)
		note("%s: %.0f ns untraced, %.0f traced, %.1f traced calls, tracer "
		     "%.0f ns per call (%.0f inside its own time)", names[m],
		     q[m].plain_ns, q[m].traced_ns, (double)q[m].events / units,
		     q[m].overhead, q[m].window);
	note("| %-34s | %15s | %15s | %15s |", "function (calls/query x ns)",
	     names[0], names[1], names[2]);
	note("|------------------------------------|-----------------|"
	     "-----------------|-----------------|");
	/* rows: every function seen by any method, in order of first sight */
	{
		static struct profile all;

		all.n = 0;
		for (int m = 2; m >= 0; m--)
			for (int i = 0; i < q[m].n; i++)
				prof_get(&all, q[m].p[i].name);
		for (int i = 0; i < all.n; i++) {
			char cell[3][32];

			for (int m = 0; m < 3; m++) {
				const struct prof *p = NULL;

				for (int j = 0; j < q[m].n; j++)
					if (!strcmp(q[m].p[j].name, all.p[i].name))
						p = &q[m].p[j];
				if (p) {
					snprintf(cell[m], sizeof(cell[m]), "%.1f x %.0f",
						 (double)p->calls / units, p->ns / p->calls);
					csv("profile_query", p->name, names[m], 0,
					    p->ns / units, "ns");
				} else {
					snprintf(cell[m], sizeof(cell[m]), "-");
				}
			}
			note("| %-34s | %15s | %15s | %15s |", all.p[i].name,
			     cell[0], cell[1], cell[2]);
		}
	}
	close(dev_fd);
	dev_fd = -1;
	close(a);
	close(lfd);
	client_stop(&cl);
	cg_remove(CG_CLIENT);
	cg_remove("bench.slice");
}

static void bench_profile(void)
{
	if (!tracefs_mounted()) {
		note("profile: no tracefs");
		return;
	}
	profile_connect();
	profile_query();
}

/* The run reached its end: its one test, which bench.sh looks for. */
static void completed(void)
{
}

int main(int argc, char **argv)
{
	double t0 = now_s();
	char kver[256] = "";
	long printk_level;

	guest_begin("bench", argc, argv);
	read_options();
	figures_init();
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
	/* A child again: the device fd would pin the module. */
	if (part("contention")) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			bench_contention();
			fflush(stdout);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("contention part failed");
	}
	if (part("connect"))
		icount ? bench_connect_icount() : bench_connect();
	if (part("live") && !icount) {
		note("%s", "");
		note("connect cost with live connections (1 thread; loaded: the "
		     "table holds them; not loaded: the same sockets open; blocks "
		     "of 2+2 samples, connections made anew for each block)");
		bench_connect_live(quick ? 1000 : 10000);
		if (!quick)
			bench_connect_live(100000);
	}
	/* Before the memory part: its 100 k+ entries leave the tables
	 * shrinking in the background for a while. */
	if (profile && t_selected("profile"))
		bench_profile();
	if (part("memory"))
		bench_memory();
	figures_print();
	note("%s", "");
	note("bench took %.0f s%s", now_s() - t0, icount ? " (virtual)" : "");
	if (printk_level > 0) {
		char lv[24];

		snprintf(lv, sizeof(lv), "%ld", printk_level);
		write_file("/proc/sys/kernel/printk", lv);
	}
	RUN(completed);
	return guest_end();
}
