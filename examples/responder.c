/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small SSSD-style responder: answers each client ALLOW or DENY from a
 * policy over the client's connect-time cgroup (see responder.policy).
 *
 *   responder POLICY [SOCKET [COUNT]]
 *
 * SOCKET is a path, or @name for an abstract address.  Without SOCKET the
 * listening socket comes from systemd socket activation (sd_listen_fds(3);
 * see responder.socket and responder.service).
 *
 * The cgroup comes from the kernel record made at connect(), so a client
 * cannot change the answer by moving itself to another cgroup afterwards.
 * The device is opened before serving (peercgroup_open_device()), so a
 * sandbox set up later cannot hide it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <peercgroup.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#else
/* The socket-activation protocol (sd_listen_fds(3)), for builds without
 * libsystemd: fds 3.. are ours if LISTEN_PID is our pid. */
#define SD_LISTEN_FDS_START 3
static int sd_listen_fds(int unset_environment)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int n = -1;

	if (pid && fds && strtol(pid, NULL, 10) == (long)getpid())
		n = (int)strtol(fds, NULL, 10);
	if (unset_environment) {
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
	}
	return n < 0 ? 0 : n;
}
#endif

/*
 * Keys: what a rule's glob is matched against.  A runtime's monitor
 * (conmon, lxc.monitor, the nspawn supervisor) is privileged and not the
 * payload: "container" never matches it; only a "monitor" rule can.
 * Neither matches inside a user's service manager (rootless), where the
 * user names the cgroups, after any container if it likes: match such
 * peers by "cgroup", under that user's slice.
 */
enum key { K_RUNTIME, K_CONTAINER, K_MONITOR, K_APP, K_UNIT, K_CGROUP };
static const char *const key_names[] = {
	[K_RUNTIME] = "runtime", [K_CONTAINER] = "container", [K_MONITOR] = "monitor",
	[K_APP] = "app", [K_UNIT] = "unit", [K_CGROUP] = "cgroup",
};

struct rule {
	int allow;
	enum key key;
	char *pattern;
	int line;
};

static struct rule *rules;
static size_t nrules;

static int load_policy(const char *fn)
{
	char *line = NULL, act[16], key[16], pat[4096];
	size_t cap = 0, k;
	int lineno = 0;
	FILE *f = fopen(fn, "re");

	if (!f) {
		perror(fn);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		struct rule r = { .line = ++lineno };
		char *s = line + strspn(line, " \t");
		struct rule *nr;

		if (*s == '#' || *s == '\n' || *s == '\0')
			continue;
		if (sscanf(s, "%15s %15s %4095s", act, key, pat) != 3 ||
		    (strcmp(act, "allow") && strcmp(act, "deny"))) {
			fprintf(stderr, "%s:%d: expected: allow|deny KEY PATTERN\n", fn, lineno);
			goto fail;
		}
		r.allow = !strcmp(act, "allow");
		for (k = 0; k < sizeof(key_names) / sizeof(key_names[0]); k++)
			if (!strcmp(key, key_names[k]))
				break;
		if (k == sizeof(key_names) / sizeof(key_names[0])) {
			fprintf(stderr, "%s:%d: unknown key %s (runtime, container, monitor, "
				"app, unit, cgroup)\n", fn, lineno, key);
			goto fail;
		}
		r.key = (enum key)k;
		r.pattern = strdup(pat);
		nr = reallocarray(rules, nrules + 1, sizeof(*rules));
		if (!r.pattern || !nr) {
			free(r.pattern);
			goto fail;
		}
		rules = nr;
		rules[nrules++] = r;
	}
	free(line);
	fclose(f);
	return 0;
fail:
	free(line);
	fclose(f);
	return -1;
}

/* What each key sees for this peer; NULL: the key does not apply. */
static const char *subject(enum key k, const char *path, const struct peercgroup_class *c,
			   const char *who)
{
	int monitor = !!(c->flags & PEERCGROUP_CT_MONITOR);
	/* a user may have named this cgroup after any container */
	int user_named = !!(c->flags & (PEERCGROUP_CT_ROOTLESS | PEERCGROUP_CT_UNPROVEN));

	switch (k) {
	case K_RUNTIME: return peercgroup_runtime_name(c->runtime);
	case K_CONTAINER: return c->id[0] && !monitor && !user_named ? who : NULL;
	case K_MONITOR: return monitor && !user_named ? who : NULL;
	case K_APP: return c->app[0] ? c->app : NULL;
	case K_UNIT: return c->unit[0] ? c->unit : NULL;
	case K_CGROUP: return path;
	}
	return NULL;
}

/* First matching rule wins; default deny.  Returns the rule or NULL. */
static const struct rule *decide(const char *path, const struct peercgroup_class *c)
{
	char who[PEERCGROUP_NAME_SIZE + 32];
	size_t i;

	snprintf(who, sizeof(who), "%s:%s", peercgroup_runtime_name(c->runtime), c->id);
	for (i = 0; i < nrules; i++) {
		const char *s = subject(rules[i].key, path, c, who);

		/* no FNM_PATHNAME: "*" may span "/" in cgroup globs */
		if (s && fnmatch(rules[i].pattern, s, 0) == 0)
			return &rules[i];
	}
	return NULL;
}

static void answer(int c)
{
	struct peercgroup_info info;
	struct peercgroup_class cls = PEERCGROUP_CLASS_INIT;
	const struct rule *r;
	char reply[4400];
	int e = peercgroup_get(c, 0, &info);

	/* the same record, classified with a look at who named its cgroup */
	if (e == 0) {
		e = peercgroup_peer_classify(c, 0, &cls);
		if (e < 0)
			peercgroup_info_free(&info);
	}
	if (e < 0) {
		/* No record means no proof: deny, and say why. */
		snprintf(reply, sizeof(reply), "DENY error: %s\n", peercgroup_strerror(e));
	} else {
		r = decide(info.path, &cls);
		snprintf(reply, sizeof(reply), "%s %s%s %s pid=%d rule=%d\n",
			 r && r->allow ? "ALLOW" : "DENY", peercgroup_runtime_name(cls.runtime),
			 cls.flags & PEERCGROUP_CT_MONITOR ? "(monitor)" : "",
			 info.path, (int)info.pid, r ? r->line : 0);
		peercgroup_info_free(&info);
	}
	fputs(reply, stdout);
	fflush(stdout);
	(void)!send(c, reply, strlen(reply), MSG_NOSIGNAL);
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	socklen_t len;
	struct stat st;
	int fd;

	if (n == 0 || n >= sizeof(sa.sun_path)) {
		fprintf(stderr, "%s: empty or longer than %zu bytes\n", path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract: no file, no stale socket */
	else if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);		/* a stale socket, never another file */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] != '@'));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 16) < 0) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	long count = argc > 3 ? atol(argv[3]) : 0, served = 0;
	int fd, r;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s POLICY [SOCKET|@NAME [COUNT]]\n"
			"without SOCKET: socket activation (LISTEN_FDS)\n", argv[0]);
		return 2;
	}
	if (load_policy(argv[1]) < 0)
		return 1;
	/* Open the device now: a daemon that sandboxes itself later keeps it. */
	r = peercgroup_open_device();
	if (r < 0)
		fprintf(stderr, "responder: %s; every client will be denied\n", peercgroup_strerror(r));
	signal(SIGPIPE, SIG_IGN);
	if (argc > 2) {
		fd = listen_on(argv[2]);
	} else {
		r = sd_listen_fds(1);
		if (r != 1) {
			fprintf(stderr, "responder: no SOCKET given and %d sockets passed by the "
				"service manager (want 1)\n", r);
			return 2;
		}
		fd = SD_LISTEN_FDS_START;
	}
	if (fd < 0)
		return 1;
	while (!count || served++ < count) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("accept");
			return 1;
		}
		answer(c);
		close(c);
	}
	return 0;
}
