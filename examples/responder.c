/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny SSSD-style responder: answers each client ALLOW or DENY from a
 * policy over the client's connect-time cgroup (see responder.policy).
 *
 *   responder POLICY SOCKET [COUNT]
 *
 * The cgroup comes from the kernel record made at connect(), so a client
 * cannot change the answer by moving itself to another cgroup afterwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <peercgroup.h>

enum key { K_RUNTIME, K_CONTAINER, K_CGROUP };

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
	size_t cap = 0;
	int lineno = 0;
	FILE *f = fopen(fn, "re");

	if (!f) {
		perror(fn);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		struct rule r = { .line = ++lineno };
		char *s = line + strspn(line, " \t");

		if (*s == '#' || *s == '\n' || *s == '\0')
			continue;
		if (sscanf(s, "%15s %15s %4095s", act, key, pat) != 3 ||
		    (strcmp(act, "allow") && strcmp(act, "deny"))) {
			fprintf(stderr, "%s:%d: expected: allow|deny KEY PATTERN\n", fn, lineno);
			goto fail;
		}
		r.allow = !strcmp(act, "allow");
		if (!strcmp(key, "runtime"))
			r.key = K_RUNTIME;
		else if (!strcmp(key, "container"))
			r.key = K_CONTAINER;
		else if (!strcmp(key, "cgroup"))
			r.key = K_CGROUP;
		else {
			fprintf(stderr, "%s:%d: unknown key %s\n", fn, lineno, key);
			goto fail;
		}
		r.pattern = strdup(pat);
		rules = reallocarray(rules, nrules + 1, sizeof(*rules));
		if (!r.pattern || !rules)
			goto fail;
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

/* First matching rule wins; default deny.  Returns the rule or NULL. */
static const struct rule *decide(const char *path, const struct peercgroup_container *ct)
{
	const char *rt = peercgroup_runtime_name(ct->runtime);
	char container[512];
	size_t i;

	snprintf(container, sizeof(container), "%s:%s", rt, ct->id);
	for (i = 0; i < nrules; i++) {
		const char *subject = rules[i].key == K_RUNTIME ? rt :
				      rules[i].key == K_CONTAINER ? container : path;

		/* no FNM_PATHNAME: "*" may span "/" in cgroup globs */
		if (fnmatch(rules[i].pattern, subject, 0) == 0)
			return &rules[i];
	}
	return NULL;
}

static void answer(int c)
{
	struct peercgroup_info info;
	struct peercgroup_container ct;
	const struct rule *r;
	char reply[4300];
	int e = peercgroup_get(c, 0, &info);

	if (e < 0) {
		/* No record means no proof: deny, and say why. */
		snprintf(reply, sizeof(reply), "DENY error: %s\n", peercgroup_strerror(e));
	} else {
		peercgroup_classify(info.path, info.path_len, &ct);
		r = decide(info.path, &ct);
		snprintf(reply, sizeof(reply), "%s %s %s pid=%d rule=%d\n",
			 r && r->allow ? "ALLOW" : "DENY", peercgroup_runtime_name(ct.runtime),
			 info.path, (int)info.pid, r ? r->line : 0);
		peercgroup_info_free(&info);
	}
	fputs(reply, stdout);
	fflush(stdout);
	(void)!send(c, reply, strlen(reply), MSG_NOSIGNAL);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long count = argc > 3 ? atol(argv[3]) : 0, served = 0;
	int fd;

	if (argc < 3 || argc > 4 || strlen(argv[2]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: %s POLICY SOCKET [COUNT]\n", argv[0]);
		return 2;
	}
	if (load_policy(argv[1]) < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	strcpy(sa.sun_path, argv[2]);
	unlink(argv[2]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		perror(argv[2]);
		return 1;
	}
	while (!count || served++ < count) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("accept");
			return 1;
		}
		answer(c);
		close(c);
	}
	return 0;
}
