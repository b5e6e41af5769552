// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer for the device's ioctl, run against the real module: random
 * command numbers (nr, type, direction and size bits), struct sizes,
 * flags, reserved bits, socket fds of every kind (closed, regular file,
 * pipe, AF_INET, netlink, the device itself, listening, unconnected,
 * datagram, connected) and pointers (NULL, unmapped, read-only, kernel
 * addresses, the end of a page), while another thread close()s and
 * dup2()s the fds being asked about.  Every call must end in success or
 * one of the documented errnos, and the kernel must not complain.
 *
 * Usage: fuzz_suite [TEST]
 * Size and seed: "pcg.fuzz_iters=N pcg.fuzz_seed=S" on the kernel command
 * line, or the PCG_FUZZ_ITERS / PCG_FUZZ_SEED environment variables.
 * The seed is printed: rerun a failure with it.
 */
#include "guest.h"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the fd pool ---- */

enum {
	F_CLOSED, F_NEG, F_HUGE, F_REG, F_PIPE, F_INET, F_NETLINK, F_DEV, F_LISTEN,
	F_UNCONN, F_DGRAM, F_DGRAM_PAIR, F_CONN_CLI, F_CONN_ACC, F_PAIR, F_SEQPAIR,
	F_RACY0, F_RACY1, NFD
};
static int fds[NFD];
#define RACY0 900
#define RACY1 901

static volatile int stop_racer;

/* Swaps what the racy numbers refer to, and closes them, forever. */
static void *racer(void *arg)
{
	uint64_t s = (uintptr_t)arg | 1;

	while (!stop_racer) {
		uint64_t r = rnd(&s);
		int target = (r & 1) ? RACY0 : RACY1;
		int src = fds[F_REG + (r >> 8) % (F_SEQPAIR - F_REG + 1)];

		if ((r >> 4) & 3)
			dup2(src, target);
		else
			close(target);
	}
	return NULL;
}

/* ---- pointers ---- */

static char *page_rw, *page_ro, *page_none;
static long pagesz;

static uint64_t pick_ptr(uint64_t *s, void *good)
{
	uint64_t r = rnd(s);

	switch (r % 12) {
	case 0: return 0;
	case 1: return (uintptr_t)page_none;
	case 2: return (uintptr_t)page_ro;
	case 3: return 0xffffffff81000000ULL;		/* kernel text */
	case 4: return 0xffff888000000000ULL;		/* the direct map */
	case 5: return (uintptr_t)page_rw + pagesz - 1 - (r >> 8) % 64;	/* runs into page_none */
	case 6: return r;				/* anything */
	case 7: return (uintptr_t)page_ro + (r >> 8) % pagesz;
	default: return (uintptr_t)good;
	}
}

static uint32_t pick_size(uint64_t *s)
{
	static const uint32_t sizes[] = {
		0, 1, 8, 47, 48, 49, 56, 64, 4096, 4097, 1u << 20, 0x7fffffff, 0xffffffff,
	};
	uint64_t r = rnd(s);

	if (r % 4 == 0)
		return (uint32_t)(r >> 32);
	if (r % 4 == 1)
		return sizeof(struct peercgroup_query);
	return sizes[(r >> 8) % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* ioctls the VFS answers itself, for any file: not the module's */
static bool vfs_generic(unsigned long cmd)
{
	static const unsigned long generic[] = {
		FIOCLEX, FIONCLEX, FIONBIO, FIOASYNC, FIOQSIZE, FIFREEZE, FITHAW,
		FS_IOC_FIEMAP, FIGETBSZ, FIBMAP, FICLONE, FICLONERANGE, FIDEDUPERANGE,
		FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR,
		FIONREAD,
	};

	for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if ((unsigned int)cmd == (unsigned int)generic[i])
			return true;
	return false;
}

static unsigned long pick_cmd(uint64_t *s)
{
	uint64_t r = rnd(s);
	unsigned long cmd;

	switch (r % 8) {
	case 0:
	case 1:
	case 2:
		cmd = PEERCGROUP_IOC_QUERY;
		break;
	case 3:
		cmd = PEERCGROUP_IOC_VERSION;
		break;
	case 4:	/* our magic, any nr, dir and size */
		cmd = _IOC((r >> 8) & 3, PEERCGROUP_IOC_MAGIC, (r >> 16) & 0xff, (r >> 24) & 0x3fff);
		break;
	case 5:	/* our numbers with another size or direction */
		cmd = _IOC((r >> 8) & 3, PEERCGROUP_IOC_MAGIC, 1 + ((r >> 10) & 1),
			   (r >> 24) & 0x3fff);
		break;
	default: /* anything at all, 64-bit junk in the upper half included */
		cmd = (unsigned long)(r >> 3);
		if (r & 4)
			cmd &= 0xffffffffUL;
		break;
	}
	return vfs_generic(cmd) ? PEERCGROUP_IOC_QUERY : cmd;
}

static const int allowed[] = {
	0, EBADF, ENOTSOCK, EAFNOSUPPORT, EOPNOTSUPP, ENOTCONN, ENODATA, ERANGE,
	EFAULT, EINVAL, E2BIG, ENOTTY, EREMOTE, ENAMETOOLONG, ENOMEM,
};

static void t_fuzz_ioctl(void)
{
	long long iters = knob("pcg.fuzz_iters", "PCG_FUZZ_ITERS", 200000);
	uint64_t seed = knob("pcg.fuzz_seed", "PCG_FUZZ_SEED", 0x5eed0001);
	uint64_t s = seed ? seed : 1;
	long long count[sizeof(allowed) / sizeof(allowed[0])] = { 0 };
	long long bad = 0;
	char first_bad[256] = "";
	unsigned char *arg;
	char *pathbuf;
	int sv[2], lfd, dev, nl;
	struct sockaddr_nl snl = { .nl_family = AF_NETLINK };
	pthread_t th;
	double t0, t1;
	char name[48];

	printf("# fuzz: seed %#llx, %lld iterations (pcg.fuzz_seed=, pcg.fuzz_iters=)\n",
	       (unsigned long long)seed, iters);
	pagesz = sysconf(_SC_PAGESIZE);
	page_rw = mmap(NULL, 3 * pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page_rw != MAP_FAILED, "mmap");
	page_none = page_rw + pagesz;
	page_ro = page_rw + 2 * pagesz;
	memcpy(page_ro, "/etc/passwd", 12);
	SYS(mprotect(page_none, pagesz, PROT_NONE));
	SYS(mprotect(page_ro, pagesz, PROT_READ));
	arg = malloc(8192);
	pathbuf = malloc(8192);
	CHECK(arg && pathbuf, "malloc");

	SYS(cg_create("fuzz"));
	SYS(cg_move("fuzz", 0));
	snprintf(name, sizeof(name), "pcg-fuzz-%d", (int)getpid());
	SYS(fds[F_CLOSED] = open("/proc/self/status", O_RDONLY));
	close(fds[F_CLOSED]);
	fds[F_NEG] = -1;
	fds[F_HUGE] = 0x7fffffff;
	SYS(fds[F_REG] = open("/proc/self/status", O_RDONLY | O_CLOEXEC));
	SYS(pipe2(sv, O_CLOEXEC));
	fds[F_PIPE] = sv[0];
	SYS(fds[F_INET] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	SYS(nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
	SYS(bind(nl, (struct sockaddr *)&snl, sizeof(snl)));
	fds[F_NETLINK] = nl;
	SYS(fds[F_DEV] = dev_open());
	SYS(lfd = listen_on(name, SOCK_STREAM));
	fds[F_LISTEN] = lfd;
	SYS(fds[F_UNCONN] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
	SYS(fds[F_DGRAM] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	SYS(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv));
	fds[F_DGRAM_PAIR] = sv[0];
	SYS(fds[F_CONN_CLI] = connect_to(name, SOCK_STREAM));
	SYS(fds[F_CONN_ACC] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	fds[F_PAIR] = sv[0];
	SYS(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	fds[F_SEQPAIR] = sv[1];
	fds[F_RACY0] = RACY0;
	fds[F_RACY1] = RACY1;
	SYS(cg_move("", 0));
	SYS(dev = dev_open());
	CHECK(!pthread_create(&th, NULL, racer, (void *)(uintptr_t)(seed * 31)), "pthread_create");

	t0 = now();
	for (long long i = 0; i < iters; i++) {
		uint64_t r = rnd(&s);
		unsigned long cmd = pick_cmd(&s);
		struct peercgroup_query *q = (void *)arg;
		uint64_t p;
		int e, ret, iofd = dev;
		size_t k;

		/* the struct: mostly plausible, partly random bytes */
		if (r % 16 == 0) {
			for (k = 0; k < 128; k += 8) {
				uint64_t v = rnd(&s);

				memcpy(arg + k, &v, 8);
			}
		} else {
			memset(arg, 0, 128);
		}
		q->size = pick_size(&s);
		q->flags = (r >> 8) % 4 == 0 ? (uint32_t)rnd(&s) : (r >> 10) & 1;
		q->sockfd = fds[(r >> 12) % NFD];
		q->path_size = pick_size(&s);
		if (q->path_size > 8192 && (r >> 20) % 2)
			q->path_size = 8192;
		q->path = pick_ptr(&s, pathbuf);
		if ((r >> 21) % 32 == 0)
			q->reserved = (uint32_t)rnd(&s);
		if ((r >> 26) % 32 == 0)
			arg[48 + (r >> 32) % 64] = (unsigned char)(r >> 40);
		if ((r >> 46) % 32 == 0) {
			/* the ioctl itself on a number the racer swaps: the device,
			 * a socket, a file or nothing; only our numbers there
			 */
			iofd = (r & (1ULL << 52)) ? RACY0 : RACY1;
			cmd = (r & (1ULL << 53)) ? PEERCGROUP_IOC_QUERY : PEERCGROUP_IOC_VERSION;
		}
		p = (r >> 58) % 8 == 0 ? pick_ptr(&s, arg) : (uintptr_t)arg;

		ret = ioctl(iofd, cmd, (void *)(uintptr_t)p);
		e = ret ? errno : 0;
		if (ret && ret != -1)
			e = -1;	/* a positive return: never documented */
		for (k = 0; k < sizeof(allowed) / sizeof(allowed[0]); k++)
			if (allowed[k] == e)
				break;
		if (k < sizeof(allowed) / sizeof(allowed[0])) {
			count[k]++;
			continue;
		}
		if (!bad++)
			snprintf(first_bad, sizeof(first_bad),
				 "iteration %lld: cmd %#lx size %u flags %#x sockfd %d path_size %u path %#llx arg %#llx: ret %d errno %d (%s)",
				 i, cmd, q->size, q->flags, q->sockfd, q->path_size,
				 (unsigned long long)q->path, (unsigned long long)p, ret, e,
				 strerror(e));
	}
	t1 = now();
	stop_racer = 1;
	pthread_join(th, NULL);
	printf("# fuzz: %lld iterations in %.1f s; results:", iters, t1 - t0);
	for (size_t k = 0; k < sizeof(allowed) / sizeof(allowed[0]); k++)
		if (count[k])
			printf(" %s %lld", allowed[k] ? strerrorname_np(allowed[k]) : "ok", count[k]);
	printf("; undocumented %lld\n", bad);
	CHECK(!bad, "%lld undocumented results, first: %s", bad, first_bad);
	/* the fuzzer reached the module's success path and its main errors */
	CHECK(count[0] > 0, "no successful query");

	/* the module still answers right */
	{
		struct peercgroup_query q;
		char path[256];

		CHECK_INT(0, query(fds[F_CONN_ACC], &q, path, sizeof(path)));
		CHECK_STR("/fuzz", path);
		CHECK_INT(0, query(fds[F_PAIR], &q, path, sizeof(path)));
		CHECK_STR("/fuzz", path);
	}
	for (int k = F_REG; k < F_RACY0; k++)
		if (k != F_NEG && k != F_HUGE)
			close(fds[k]);
	close(RACY0);
	close(RACY1);
	close(dev);
	free(arg);
	free(pathbuf);
	munmap(page_rw, 3 * pagesz);
}

int main(int argc, char **argv)
{
	guest_begin("fuzz", argc, argv);
	if (module_require())
		return 1;
	RUN(t_fuzz_ioctl);
	return guest_end();
}
