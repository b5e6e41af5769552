// SPDX-License-Identifier: GPL-2.0
/*
 * The guest suites' runner and helpers; see guest.h.
 */
#include "guest.h"

#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/utsname.h>

const char *t_suite = "guest";
const char *t_only;
const char *t_name;
int t_pass, t_fail;
long t_checks;
void (*t_after)(void);

static bool t_failed, t_skipped;
static int t_skips;
static int child_report_fd = -1;	/* in a t_in_child() child: the parent's pipe */
#define CHILD_DONE '\001'		/* a child's last word when it did not fail */

/* ---- deferred cleanups ---- */

enum defer_kind { D_KILL, D_CLOSE, D_CGROUP, D_WRITE, D_CALL };

struct deferred {
	enum defer_kind kind;
	int n;			/* pid or fd */
	char *s, *value;	/* cgroup name or path; value to write */
	void (*fn)(void);
};

static struct deferred deferred[256];
static int ndeferred;

/* The next free cleanup slot, or NULL between tests (the suite's own last its life). */
static struct deferred *defer_slot(enum defer_kind kind)
{
	struct deferred *d;

	if (!t_name)
		return NULL;
	if (ndeferred == (int)(sizeof(deferred) / sizeof(deferred[0]))) {
		t_failf(__FILE__, __LINE__, "more than %d deferred cleanups", ndeferred);
		return NULL;
	}
	d = &deferred[ndeferred++];
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	return d;
}

void defer_kill(pid_t pid)
{
	struct deferred *d = defer_slot(D_KILL);

	if (d)
		d->n = pid;
}

void defer_close(int fd)
{
	struct deferred *d = defer_slot(D_CLOSE);

	if (d)
		d->n = fd;
}

void defer_cgroup(const char *name)
{
	struct deferred *d = defer_slot(D_CGROUP);

	if (d)
		d->s = strdup(name);
}

void defer_write(const char *path, const char *value)
{
	struct deferred *d = defer_slot(D_WRITE);

	if (d) {
		d->s = strdup(path);
		d->value = strdup(value);
	}
}

void defer_call(void (*fn)(void))
{
	struct deferred *d = defer_slot(D_CALL);

	if (d)
		d->fn = fn;
}

/* Kills @pid if it is still an unreaped child of ours (so never a reused pid). */
static void kill_child(pid_t pid)
{
	if (pid <= 0 || waitpid(pid, NULL, WNOHANG) != 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Kills the children of this process; returns how many there were. */
static int kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[300], buf[512], *rp;
		int ppid;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/stat", e->d_name);
		if (read_text(p, buf, sizeof(buf)) <= 0)
			continue;
		/* "pid (comm) state ppid": comm may hold spaces and parentheses */
		rp = strrchr(buf, ')');
		if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == getpid()) {
			kill(atoi(e->d_name), SIGKILL);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* Every descendant the test left: killed and reaped (we are their subreaper). */
static int reap_all(void)
{
	int left = 0;

	for (;;) {
		left += kill_children();
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			return left;
	}
}

/* Removes cgroup @name and whatever is below it; kills what is in them. */
static int cg_remove_tree(const char *name)
{
	char p[512], procs[4096];
	struct dirent *e;
	DIR *d;

	snprintf(p, sizeof(p), CGROOT "/%s", name);
	d = opendir(p);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d))) {
		char sub[800];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", p, e->d_name);
		if (!stat(sub, &st) && S_ISDIR(st.st_mode)) {
			snprintf(sub, sizeof(sub), "%s/%s", name, e->d_name);
			cg_remove_tree(sub);
		}
	}
	closedir(d);
	for (int tries = 0; tries < 100; tries++) {
		snprintf(p, sizeof(p), CGROOT "/%s/cgroup.procs", name);
		if (read_text(p, procs, sizeof(procs)) > 0)
			for (char *l = strtok(procs, "\n"); l; l = strtok(NULL, "\n"))
				kill(atoi(l), SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!cg_remove(name) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		usleep(10000);
	}
	return -1;
}

/*
 * Closes what was opened since @before, but the device: the library keeps
 * its descriptor of /dev/peercgroup open across calls, by design.
 */
static int close_new_fds(const bool *before, int nbefore)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int closed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[300], target[64];
		int fd = atoi(e->d_name);
		ssize_t n;

		if (e->d_name[0] == '.' || fd == dirfd(d) || (fd < nbefore && before[fd]))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = readlink(p, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		if (strcmp(target, PEERCGROUP_DEVICE_PATH)) {
			close(fd);
			closed++;
		}
	}
	closedir(d);
	return closed;
}

static void open_fds(bool *open_now, int n)
{
	for (int fd = 0; fd < n; fd++)
		open_now[fd] = fcntl(fd, F_GETFD) >= 0;
}

/* ---- the runner ---- */

static void guest_init_once(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	/* orphans of a test's processes become ours, so the cleanup reaps them */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void guest_begin(const char *suite, int argc, char **argv)
{
	guest_init_once();
	t_suite = suite;
	t_only = argc > 1 && argv[1][0] ? argv[1] : NULL;
}

int guest_end(void)
{
	printf("# %s: %d tests passed, %d failed, %d skipped, %ld assertions\n",
	       t_suite, t_pass, t_fail, t_skips, t_checks);
	if (t_only && !t_pass && !t_fail && !t_skips)
		printf("# %s: no test named %s here\n", t_suite, t_only);
	fflush(stdout);
	return 0;
}

int module_require(void)
{
	if (module_loaded() || !module_load())
		return 0;
	printf("not ok - %s/setup: cannot load %s: %s\n", t_suite, module_path(),
	       strerror(errno));
	return 1;
}

bool t_selected(const char *name)
{
	size_t n = strlen(t_suite);

	if (!t_only || !strcmp(t_only, name))
		return true;
	return !strncmp(t_only, t_suite, n) && t_only[n] == '/' && !strcmp(t_only + n + 1, name);
}

void t_failf(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (child_report_fd >= 0) {	/* in t_in_child(): the parent reports */
		dprintf(child_report_fd, "%s:%d: ", file, line);
		va_start(ap, fmt);
		vdprintf(child_report_fd, fmt, ap);
		va_end(ap);
		_exit(1);
	}
	if (t_failed)
		return;
	t_failed = true;
	printf("not ok - %s/%s: %s:%d: ", t_suite, t_name ? t_name : "setup", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void t_skip(const char *fmt, ...)
{
	va_list ap;

	t_skipped = true;
	printf("# SKIP %s/%s: ", t_suite, t_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* After each test: everything it may have left, last made first. */
static void cleanup(const char *start_cg, const bool *fds_before, int nfds)
{
	cg_move(start_cg, 0);
	reap_all();
	while (ndeferred > 0) {
		struct deferred *d = &deferred[--ndeferred];

		switch (d->kind) {
		case D_KILL:
			kill_child(d->n);
			break;
		case D_CLOSE:
			close(d->n);
			break;
		case D_CGROUP:
			if (d->s && cg_remove_tree(d->s))
				t_failf(__FILE__, __LINE__, "cleanup: cannot remove cgroup %s: %s",
					d->s, strerror(errno));
			break;
		case D_WRITE:
			if (d->s && d->value)
				write_file(d->s, d->value);
			break;
		case D_CALL:
			d->fn();
			break;
		}
		free(d->s);
		free(d->value);
		d->s = d->value = NULL;
	}
	close_new_fds(fds_before, nfds);
	if (t_after)
		t_after();
}

void t_run(const char *name, void (*fn)(void))
{
	enum { NFDS = 1024 };
	static bool fds_before[NFDS];
	char start_cg[256];

	guest_init_once();
	if (!t_selected(name))
		return;
	t_name = name;
	t_failed = t_skipped = false;
	if (proc_cgroup(0, start_cg, sizeof(start_cg)) || start_cg[0] != '/')
		snprintf(start_cg, sizeof(start_cg), "/");
	open_fds(fds_before, NFDS);
	fflush(stdout);
	fn();
	cleanup(start_cg + 1, fds_before, NFDS);
	if (t_failed) {
		t_fail++;
	} else if (t_skipped) {
		t_skips++;
	} else {
		printf("ok - %s/%s\n", t_suite, name);
		t_pass++;
	}
	t_name = NULL;
	fflush(stdout);
}

void t_in_child(void (*fn)(void *arg), void *arg)
{
	char msg[1024];
	int p[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	fflush(stdout);
	if (pipe2(p, O_CLOEXEC)) {
		t_failf(__FILE__, __LINE__, "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		t_failf(__FILE__, __LINE__, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		long base = t_checks;

		close(p[0]);
		child_report_fd = p[1];
		t_skipped = false;
		fn(arg);
		/* what the parent counts: the child's checks, and its SKIP() */
		dprintf(p[1], "%c%ld %d", CHILD_DONE, t_checks - base, t_skipped);
		_exit(0);
	}
	close(p[1]);
	while (len < (ssize_t)sizeof(msg) - 1 &&
	       (n = read(p[0], msg + len, sizeof(msg) - 1 - len)) > 0)
		len += n;
	msg[len] = 0;
	close(p[0]);
	waitpid(pid, &status, 0);
	if (msg[0] == CHILD_DONE) {
		long checks = 0;
		int skipped = 0;

		sscanf(msg + 1, "%ld %d", &checks, &skipped);
		t_checks += checks;
		t_skipped |= skipped;
		msg[0] = 0;
	}
	if (msg[0])
		t_failf(__FILE__, __LINE__, "in child: %s", msg);
	else if (WIFSIGNALED(status))
		t_failf(__FILE__, __LINE__, "child killed by signal %d (%s)", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		t_failf(__FILE__, __LINE__, "child ended with status %#x", status);
}

void *sleep_forever(void *unused)
{
	(void)unused;
	for (;;)
		pause();
	return NULL;
}

/* ---- files ---- */

int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

int fault_arm(const char *attr, const char *times)
{
	static const char *const knobs[][2] = {
		{ "verbose", "0" },	/* no stack dump */
		{ "interval", "1" },
		{ "times", NULL },
		{ "probability", "100" },
	};
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", attr, knobs[i][0]);
		if (write_file(path, knobs[i][1] ? knobs[i][1] : times))
			return -1;
	}
	return 0;
}

ssize_t read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

int enter_mount_namespace(int more)
{
	if (unshare(CLONE_NEWNS | more))
		return -1;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

int enter_cgroup_namespace(int more)
{
	if (enter_mount_namespace(CLONE_NEWCGROUP | more) ||
	    umount2(CGROOT, MNT_DETACH) ||
	    mount("cgroup2", CGROOT, "cgroup2", 0, NULL))
		return -1;
	return 0;
}

void refuse_syscall(int nr, int err)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned int)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };

	SYS(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	SYS(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
	CHECK_INT(-1, syscall(nr, -1, NULL, NULL, 0));
	CHECK_INT(err, errno);
}

/* As root a null filter is EFAULT; EINVAL: no seccomp filters here. */
bool have_seccomp_filters(void)
{
	return !(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL) < 0 && errno == EINVAL);
}

bool refuse_syscall_if_filtered(int nr, int err, const char *name)
{
	if (!have_seccomp_filters()) {
		printf("# %s: no seccomp filters here: %s refused not tried\n", t_suite, name);
		return false;
	}
	refuse_syscall(nr, err);
	return true;
}

char proc_state(pid_t pid)
{
	char p[64], buf[512], *paren;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	if (read_text(p, buf, sizeof(buf)) <= 0)
		return 0;
	/* "pid (comm) state ...": comm may hold spaces and parentheses */
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

long read_long(const char *path)
{
	char buf[64];

	return read_text(path, buf, sizeof(buf)) > 0 ? strtol(buf, NULL, 10) : -1;
}

bool cmdline_value(const char *key, char *out, size_t size)
{
	char buf[4096], *w, *save;
	size_t len = strlen(key);

	if (read_text("/proc/cmdline", buf, sizeof(buf)) <= 0)
		return false;
	for (w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
		if (strncmp(w, key, len) || (w[len] != '=' && w[len]))
			continue;
		if (out)
			snprintf(out, size, "%s", w[len] ? w + len + 1 : "");
		return true;
	}
	return false;
}

long long knob(const char *key, const char *env, long long def)
{
	const char *e = getenv(env);
	char v[64];

	if (e && *e)
		return strtoll(e, NULL, 0);
	return cmdline_value(key, v, sizeof(v)) ? strtoll(v, NULL, 0) : def;
}

/* ---- cgroups ---- */

int cg_file(char *p, size_t size, const char *name, const char *file)
{
	int n = snprintf(p, size, CGROOT "/%s%s%s", name,
			 *name && *file ? "/" : "", file);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int cg_create(const char *name)
{
	char p[PATH_MAX];

	if (cg_file(p, sizeof(p), name, ""))
		return -1;
	if (!mkdir(p, 0755)) {
		defer_cgroup(name);
		return 0;
	}
	return errno == EEXIST ? 0 : -1;
}

int cg_remove(const char *name)
{
	char p[PATH_MAX];

	return cg_file(p, sizeof(p), name, "") ? -1 : rmdir(p);
}

int cg_move(const char *name, pid_t pid)
{
	char p[PATH_MAX], s[32];

	if (cg_file(p, sizeof(p), name, "cgroup.procs"))
		return -1;
	snprintf(s, sizeof(s), "%d", (int)pid);
	return write_file(p, s);
}

uint64_t cg_id(const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	if (cg_file(p, sizeof(p), name, ""))
		return 0;
	return stat(p, &st) ? 0 : (uint64_t)st.st_ino;
}

int proc_cgroup(pid_t pid, char *out, size_t size)
{
	char p[64], buf[4096], *l, *end;

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)(pid ? pid : getpid()));
	if (read_text(p, buf, sizeof(buf)) <= 0)
		return -1;
	for (l = buf; l; l = end ? end + 1 : NULL) {
		end = strchr(l, '\n');
		if (end)
			*end = 0;
		if (!strncmp(l, "0::", 3)) {
			if (strlen(l + 3) >= size)
				return -1;
			strcpy(out, l + 3);
			return 0;
		}
	}
	return -1;
}

/* ---- the device ---- */

int dev_open(void)
{
	return open(PEERCGROUP_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

#define OUT_CANARY 0xa5a5a5a5u

int query_on(int dev, int sockfd, struct peercgroup_query *q, char *path, size_t size)
{
	int err;

	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->sockfd = sockfd;
	q->flags = path ? 0 : PEERCGROUP_QUERY_NO_PATH;
	q->path = (uintptr_t)path;
	q->path_size = path ? size : 0;
	/* what a failure must leave as it was (peercgroup.h), in every suite */
	q->cgroup_id = (uint64_t)OUT_CANARY << 32 | OUT_CANARY;
	q->path_len = q->result_flags = OUT_CANARY;
	q->pid = (__s32)OUT_CANARY;
	err = ioctl(dev, PEERCGROUP_IOC_QUERY, q) ? -errno : 0;
	if (err && err != -ERANGE && err != -ENAMETOOLONG) {
		if (q->cgroup_id != ((uint64_t)OUT_CANARY << 32 | OUT_CANARY) ||
		    q->path_len != OUT_CANARY || (__u32)q->pid != OUT_CANARY ||
		    q->result_flags != OUT_CANARY)
			t_failf(__FILE__, __LINE__,
				"query failed (%d) and wrote back: id %#llx, path_len %#x, pid %#x, flags %#x",
				err, (unsigned long long)q->cgroup_id, q->path_len,
				(__u32)q->pid, q->result_flags);
		q->cgroup_id = 0;
		q->path_len = q->result_flags = 0;
		q->pid = 0;
	}
	return err;
}

int query(int sockfd, struct peercgroup_query *q, char *path, size_t size)
{
	int dev = dev_open();
	int ret;

	if (dev < 0)
		return -errno;
	ret = query_on(dev, sockfd, q, path, size);
	close(dev);
	return ret;
}

/* ---- sockets ---- */

socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "%s", name);
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

/* A socket of @type bound and listening at, or connected to, abstract @name. */
static int unix_socket_at(const char *name, int type, bool listening)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	int err;

	if (fd < 0)
		return -1;
	if (listening)
		err = bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 4096);
	else
		err = connect(fd, (struct sockaddr *)&sa, len);
	if (err) {
		close(fd);
		return -1;
	}
	return fd;
}

int listen_on(const char *name, int type)
{
	return unix_socket_at(name, type, true);
}

int connect_to(const char *name, int type)
{
	return unix_socket_at(name, type, false);
}

int send_fd(int via, int fd)
{
	char data = 'F', cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &data, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(via, &mh, 0) == 1 ? 0 : -1;
}

int recv_fd(int via)
{
	char data, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &data, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(via, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The client's side: one status int answers each command. */
static void client_main(int ctl, const char *cg, const char *name, int type)
{
	struct client_answer a;
	int fd, status;
	char cmd, arg[128];

	status = cg_move(cg, 0) ? -errno : 0;
	fd = status ? -1 : connect_to(name, type);
	if (!status && fd < 0)
		status = -errno;
	if (write(ctl, &status, sizeof(status)) != sizeof(status) || status)
		_exit(1);
	while (read(ctl, &cmd, 1) == 1) {
		switch (cmd) {
		case 'm': {	/* 'm' CGROUP '\n': move there */
			size_t i = 0;

			while (i < sizeof(arg) - 1 && read(ctl, &arg[i], 1) == 1 &&
			       arg[i] != '\n')
				i++;
			arg[i] = 0;
			status = cg_move(arg, 0) ? -errno : 0;
			if (write(ctl, &status, sizeof(status)) < 0)
				_exit(1);
			break;
		}
		case 'q':	/* query the own socket, send the answer */
			memset(&a, 0, sizeof(a));
			a.err = query(fd, &a.q, a.path, sizeof(a.path));
			if (write(ctl, &a, sizeof(a)) < 0)
				_exit(1);
			break;
		default:	/* 'x': exit */
			_exit(0);
		}
	}
	_exit(0);
}

int client_start(struct client *c, const char *cg, const char *name, int type)
{
	int sv[2], status = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(sv[0]);
		client_main(sv[1], cg, name, type);
	}
	close(sv[1]);
	c->ctl = sv[0];
	defer_kill(c->pid);
	if (read(c->ctl, &status, sizeof(status)) != sizeof(status) || status) {
		errno = status < 0 ? -status : EIO;
		return -1;
	}
	return 0;
}

int client_move(struct client *c, const char *cg)
{
	int status = -1;

	if (write(c->ctl, "m", 1) != 1 || write(c->ctl, cg, strlen(cg)) < 0 ||
	    write(c->ctl, "\n", 1) != 1 ||
	    read(c->ctl, &status, sizeof(status)) != sizeof(status))
		return -1;
	return status;
}

int client_query(struct client *c, struct client_answer *a)
{
	if (write(c->ctl, "q", 1) != 1 || read(c->ctl, a, sizeof(*a)) != sizeof(*a))
		return -1;
	return 0;
}

void client_stop(struct client *c)
{
	if (c->pid <= 0)
		return;
	if (write(c->ctl, "x", 1) < 0)
		kill(c->pid, SIGKILL);
	close(c->ctl);
	waitpid(c->pid, NULL, 0);
	c->pid = 0;
}

/* ---- the module ---- */

const char *module_path(void)
{
	/* run-guest.sh puts it in extra/, dkms in updates/dkms/ */
	static const char *const dirs[] = { "extra", "updates/dkms" };
	static char p[256];
	const char *env = getenv("PEERCGROUP_KO");
	struct utsname u;

	if (env && *env)
		return env;
	uname(&u);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "/lib/modules/%s/%s/peercgroup.ko", u.release, dirs[i]);
		if (!access(p, F_OK))
			break;
	}
	return p;
}

int module_load(void)
{
	int fd = open(module_path(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	return ret;
}

int module_unload(void)
{
	for (int i = 0; i < 1000; i++) {
		if (!syscall(SYS_delete_module, "peercgroup", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			return -1;
		usleep(1000);
	}
	return -1;
}

bool module_loaded(void)
{
	return access("/sys/module/peercgroup/initstate", F_OK) == 0;
}

long counter(const char *name)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/module/peercgroup/counters/%s", name);
	return read_long(p);
}
