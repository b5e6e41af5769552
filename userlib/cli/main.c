/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peercgroup(1): module status, demo server and client, classifier. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"
#include "json.h"

/* Exit codes, documented in peercgroup(1). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* other failure */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_NOMODULE = 3,	/* module not loaded (or not visible: ENODEV) */
	EXIT_PERM = 4,		/* cannot open /dev/peercgroup */
	EXIT_ABI = 5,		/* module ABI mismatch */
	EXIT_SOCKET = 6,	/* socket/bind/listen/connect failed */
	EXIT_QUERY = 7,		/* the peer query failed */
};

#define MODULE_SYSFS "/sys/module/peercgroup"

static bool json, live, seqpacket, show_reply;
static unsigned long count;

static int exit_code(int err)
{
	switch (-err) {
	case ENOPKG:
	case ENODEV: return EXIT_NOMODULE;
	case EACCES: return EXIT_PERM;
	case EPROTO: return EXIT_ABI;
	default: return EXIT_FAIL;
	}
}

/* Text output: one record per line, so escape what would break lines or
 * terminals: control characters, backslashes, bytes that are not UTF-8. */
static void put_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n) {
		size_t len = utf8_sequence(p, n);

		if (len == 0 || (len == 1 && (*p < 0x20 || *p == 0x7f || *p == '\\'))) {
			fprintf(f, "\\x%02x", *p);
			len = 1;
		} else {
			fwrite(p, 1, len, f);
		}
		p += len;
		n -= len;
	}
}

static const struct command {
	const char *name;
	const char *args;
	const char *help;
} commands[] = {
	{ "status", "", "whether the module is loaded, its version, counters and holders" },
	{ "serve", "PATH", "listen on PATH; print (and send) each client's connect-time cgroup" },
	{ "ask", "PATH", "connect to PATH; print the listener's cgroup (--reply: and the answer)" },
	{ "peer", "FD", "print the connect-time cgroup of the peer of socket FD, which we were given" },
	{ "classify", "CGROUP_PATH", "name the runtime, container, app and unit of a cgroup path" },
	{ "help", "", "this list" },
};

static void usage(FILE *f)
{
	size_t i;

	fputs("usage: peercgroup [OPTIONS] COMMAND [ARG]\n\ncommands:\n", f);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %-12s %s\n", commands[i].name, commands[i].args, commands[i].help);
	fputs("\noptions:\n"
	      "  -j, --json       one JSON object per line\n"
	      "  -l, --live       serve/ask/peer: the peer's cgroup now, not at connect (no module needed)\n"
	      "  -s, --seqpacket  serve/ask: SOCK_SEQPACKET instead of SOCK_STREAM\n"
	      "  -c, --count N    serve: stop after N clients\n"
	      "  -r, --reply      ask: also print what the server replied\n"
	      "  -h, --help, -V, --version\n"
	      "PATH starting with '@' is an abstract socket address.  See peercgroup(1).\n", f);
}

/* ---- a classification, the same shape everywhere ---- */

static void text_class(FILE *f, const struct peercgroup_class *c)
{
	unsigned int bit;
	bool first = true;

	fprintf(f, "runtime=%s container=", peercgroup_runtime_name(c->runtime));
	put_text(f, c->id[0] ? c->id : "-");
	if (c->pod[0]) {
		fputs(" pod=", f);
		put_text(f, c->pod);
	}
	if (c->qos[0])
		fprintf(f, " qos=%s", c->qos);
	if (c->uid >= 0)
		fprintf(f, " uid=%lld", (long long)c->uid);
	if (c->app[0]) {
		fputs(" app=", f);
		put_text(f, c->app);
	}
	if (c->launcher[0]) {
		fputs(" launcher=", f);
		put_text(f, c->launcher);
	}
	if (c->up)
		fprintf(f, " up=%u", c->up);
	for (bit = 1; bit; bit <<= 1)
		if ((c->flags & bit) && peercgroup_class_flag_name(bit)) {
			fprintf(f, "%s%s", first ? " flags=" : ",", peercgroup_class_flag_name(bit));
			first = false;
		}
}

static void json_class(struct json *j, const struct peercgroup_class *c)
{
	unsigned int bit;

	json_key(j, "container");
	json_object_begin(j);
	json_kv_string(j, "runtime", peercgroup_runtime_name(c->runtime));
	json_kv_string(j, "id", c->id);
	json_kv_string(j, "pod", c->pod);
	json_kv_string(j, "qos", c->qos);
	json_kv_int(j, "uid", c->uid);
	json_kv_string(j, "app", c->app);
	json_kv_string(j, "launcher", c->launcher);
	json_kv_string(j, "unit", c->unit);
	json_kv_string(j, "user_unit", c->user_unit);
	json_kv_uint(j, "up", c->up);
	json_kv_bool(j, "monitor", c->flags & PEERCGROUP_CT_MONITOR);
	json_key(j, "flags");
	json_array_begin(j);
	for (bit = 1; bit; bit <<= 1)
		if ((c->flags & bit) && peercgroup_class_flag_name(bit))
			json_string(j, peercgroup_class_flag_name(bit));
	json_array_end(j);
	json_object_end(j);
}

static void json_error(struct json *j, int err)
{
	json_kv_string(j, "error", pcg_errno_name(err));
	json_kv_string(j, "message", peercgroup_strerror(err));
}

/* ---- status ---- */

static bool read_ull(const char *fn, unsigned long long *v)
{
	FILE *f = fopen(fn, "re");
	bool ok = f && fscanf(f, "%llu", v) == 1;

	if (f)
		fclose(f);
	return ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every counter the module has: the names come from sysfs, not from us.
 * One buffer: the sorted names, NUL-separated, then NUL. */
static char *counter_names(void)
{
	DIR *d = opendir(MODULE_SYSFS "/counters");
	char *list = NULL, **v = NULL, *out = NULL, *p;
	size_t len = 0, n = 0, i;
	struct dirent *e;
	FILE *f;

	if (!d)
		return NULL;
	f = open_memstream(&list, &len);
	if (!f) {
		closedir(d);
		return NULL;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			fputs(e->d_name, f);
			fputc('\0', f);
			n++;
		}
	closedir(d);
	if (fclose(f) || !n)
		goto out;
	v = calloc(n, sizeof(*v));
	out = malloc(len + 1);
	if (!v || !out)
		goto out;
	for (i = 0, p = list; i < n; i++, p += strlen(p) + 1)
		v[i] = p;
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0, p = out; i < n; i++, p += strlen(p) + 1)
		strcpy(p, v[i]);
	*p = '\0';
out:
	free(v);
	free(list);
	return out;
}

struct holder {
	pid_t pid;
	char comm[32];
};

/* Processes (other than us) with /dev/peercgroup open: they pin the module.
 * *@partial: some /proc/PID/fd could not be read (not root). */
static size_t find_holders(struct holder **out, bool *partial)
{
	struct stat dev;
	struct dirent *p;
	size_t n = 0;
	DIR *proc;

	*out = NULL;
	*partial = false;
	if (stat(PEERCGROUP_DEVICE_PATH, &dev) < 0 || !(proc = opendir("/proc")))
		return 0;
	while ((p = readdir(proc))) {
		char fn[PATH_MAX];
		struct dirent *fd;
		bool holds = false;
		DIR *fds;
		pid_t pid;

		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		pid = (pid_t)atoi(p->d_name);
		if (pid == getpid())
			continue;
		snprintf(fn, sizeof(fn), "/proc/%d/fd", (int)pid);
		fds = opendir(fn);
		if (!fds) {
			if (errno == EACCES)
				*partial = true;
			continue;
		}
		while (!holds && (fd = readdir(fds))) {
			struct stat st;

			snprintf(fn, sizeof(fn), "/proc/%d/fd/%s", (int)pid, fd->d_name);
			holds = fd->d_name[0] != '.' && stat(fn, &st) == 0 &&
				S_ISCHR(st.st_mode) && st.st_rdev == dev.st_rdev;
		}
		closedir(fds);
		if (holds) {
			struct holder *nh = realloc(*out, (n + 1) * sizeof(**out));
			FILE *f;

			if (!nh)
				break;
			*out = nh;
			nh[n].pid = pid;
			strcpy(nh[n].comm, "?");
			snprintf(fn, sizeof(fn), "/proc/%d/comm", (int)pid);
			if ((f = fopen(fn, "re"))) {
				if (fgets(nh[n].comm, sizeof(nh[n].comm), f))
					nh[n].comm[strcspn(nh[n].comm, "\n")] = '\0';
				fclose(f);
			}
			n++;
		}
	}
	closedir(proc);
	return n;
}

static const char *const features[] = {
	"stream", "seqpacket", "socketpair", "path", "pid", "ns-withhold",
};

static int cmd_status(void)
{
	struct peercgroup_module m;
	struct holder *holders;
	struct json j;
	char *names;
	const char *name;
	size_t i, nholders;
	unsigned long long v;
	bool partial;
	int r = peercgroup_module_info(&m);
	/* ENOPKG: not loaded; an ABI or other error: loaded or not, unknown */
	bool loaded = r == 0 || r == -ENODEV || r == -EACCES, known = loaded || r == -ENOPKG;

	names = counter_names();
	nholders = find_holders(&holders, &partial);
	json_start(&j, stdout);
	if (json) {
		json_object_begin(&j);
		json_kv_string(&j, "library_version", peercgroup_library_version());
		json_key(&j, "module_loaded");
		if (known)
			json_bool(&j, loaded);
		else
			json_null(&j);
		if (r < 0)
			json_error(&j, r);
	} else {
		printf("library version: %s\n", peercgroup_library_version());
		printf("module loaded:   %s\n", loaded ? "yes" : known ? "no" : "unknown");
		if (r < 0)
			printf("error:           %s\n", peercgroup_strerror(r));
	}
	if (r == 0) {
		if (json) {
			json_kv_uint(&j, "abi_version", m.abi_version);
			json_kv_string(&j, "module_version", m.version);
			json_kv_uint(&j, "query_flags", m.query_flags);
			json_kv_uint(&j, "query_size", m.query_size);
			json_key(&j, "features");
			json_array_begin(&j);
		} else {
			printf("module version:  %s\nABI version:     %u\nquery size:      %u\nfeatures:       ",
			       m.version, m.abi_version, m.query_size);
		}
		for (i = 0; i < sizeof(features) / sizeof(features[0]); i++)
			if (m.features & (1ULL << i)) {
				if (json)
					json_string(&j, features[i]);
				else
					printf(" %s", features[i]);
			}
		if (m.features >> i) {	/* from a newer module */
			char rest[32];

			snprintf(rest, sizeof(rest), "0x%llx",
				 (unsigned long long)(m.features >> i << i));
			if (json)
				json_string(&j, rest);
			else
				printf(" %s", rest);
		}
		if (json)
			json_array_end(&j);
		else
			putchar('\n');
	}
	/* Counters are root-readable sysfs files; absent without the module. */
	if (json) {
		json_key(&j, "counters");
		json_object_begin(&j);
	} else {
		printf("counters:%s\n", names ? "" : "        unavailable");
	}
	for (name = names; name && *name; name += strlen(name) + 1) {
		char fn[PATH_MAX];
		bool ok;

		snprintf(fn, sizeof(fn), MODULE_SYSFS "/counters/%s", name);
		ok = read_ull(fn, &v);
		if (json) {
			json_key(&j, name);
			if (ok)
				json_uint(&j, v);
			else
				json_null(&j);
		} else if (ok) {
			printf("  %-15s %llu\n", name, v);
		} else {
			printf("  %-15s unavailable (%s)\n", name, strerror(errno));
		}
	}
	free(names);
	if (json)
		json_object_end(&j);

	/* Who pins the module: an upgrade takes effect once they restart. */
	if (json) {
		json_key(&j, "refcnt");
		if (read_ull(MODULE_SYSFS "/refcnt", &v))
			json_uint(&j, v);
		else
			json_null(&j);
		json_key(&j, "holders");
		json_array_begin(&j);
		for (i = 0; i < nholders; i++) {
			json_object_begin(&j);
			json_kv_int(&j, "pid", holders[i].pid);
			json_kv_string(&j, "comm", holders[i].comm);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_kv_bool(&j, "holders_complete", !partial);
		json_object_end(&j);
	} else {
		if (read_ull(MODULE_SYSFS "/refcnt", &v))
			printf("module refcnt:   %llu (open descriptors of /dev/peercgroup, this one included)\n", v);
		printf("holders:         %zu process%s%s\n", nholders, nholders == 1 ? "" : "es",
		       partial ? " visible (run as root to see all)" : "");
		for (i = 0; i < nholders; i++) {
			printf("  %d ", (int)holders[i].pid);
			put_text(stdout, holders[i].comm);
			putchar('\n');
		}
		if (nholders)
			puts("  (a new module version takes effect once these restart)");
	}
	free(holders);
	return r == 0 ? EXIT_OK : exit_code(r);
}

/* ---- one peer, as serve and ask print it ---- */

/* Print the peer of @fd to @f; returns 0 or the library error. */
static int report(FILE *f, int fd)
{
	struct peercgroup_info info;
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	struct json j;
	int r = peercgroup_get(fd, live ? PEERCGROUP_GET_LIVE : 0, &info);

	json_start(&j, f);
	if (r < 0) {
		if (json) {
			json_object_begin(&j);
			json_error(&j, r);
			json_object_end(&j);
		} else {
			fprintf(f, "error=%s message=%s\n", pcg_errno_name(r), peercgroup_strerror(r));
		}
		return r;
	}
	/* as peercgroup_peer_classify() would: who named the cgroup counts */
	pcg_classify_peer(info.path, info.path_len, info.cgroup_id, &c);
	if (json) {
		json_object_begin(&j);
		json_kv_int(&j, "pid", info.pid);
		json_kv_uint(&j, "cgroup_id", info.cgroup_id);
		json_key(&j, "path");
		json_string_n(&j, info.path, info.path_len);
		json_kv_bool(&j, "live", info.flags & PEERCGROUP_INFO_LIVE);
		json_kv_bool(&j, "cgroup_removed", info.flags & PEERCGROUP_INFO_CGROUP_REMOVED);
		json_kv_bool(&j, "peer_exited", info.flags & PEERCGROUP_INFO_PEER_EXITED);
		json_class(&j, &c);
		json_object_end(&j);
	} else {
		fprintf(f, "pid=%d id=%llu ", (int)info.pid, (unsigned long long)info.cgroup_id);
		text_class(f, &c);
		if (info.flags & PEERCGROUP_INFO_LIVE)
			fputs(" live", f);
		if (info.flags & PEERCGROUP_INFO_CGROUP_REMOVED)
			fputs(" cgroup-removed", f);
		if (info.flags & PEERCGROUP_INFO_PEER_EXITED)
			fputs(" peer-exited", f);
		fputs(" path=", f);		/* last: the rest of the line */
		put_text(f, info.path);
		fputc('\n', f);
	}
	peercgroup_info_free(&info);
	return 0;
}

/* The exit status for report()'s result: the module's state, or the query's. */
static int report_exit(int r)
{
	if (r == -ENOPKG || r == -ENODEV || r == -EACCES || r == -EPROTO)
		return exit_code(r);
	return r < 0 ? EXIT_QUERY : EXIT_OK;
}

static socklen_t make_addr(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n == 0 || n >= sizeof(sa->sun_path))
		return 0;
	memcpy(sa->sun_path, path, n);
	if (path[0] == '@')
		sa->sun_path[0] = '\0';	/* abstract namespace */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] != '@'));
}

/* Does a server accept connections at @sa?  Only then is its file live. */
static bool socket_listened_on(const struct sockaddr_un *sa, socklen_t len, bool seqpacket)
{
	int fd = socket(AF_UNIX, (seqpacket ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return true;	/* cannot tell: leave it */
	live = connect(fd, (const struct sockaddr *)sa, len) == 0 || errno != ECONNREFUSED;
	close(fd);
	return live;
}

static int cmd_serve(const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = make_addr(path, &sa);
	unsigned long served = 0;
	struct stat st;
	int fd, r;

	if (!len) {
		fprintf(stderr, "peercgroup: socket path empty or longer than %zu bytes: %s\n",
			sizeof(sa.sun_path) - 1, path);
		return EXIT_USAGE;
	}
	if (!live) {	/* fail early and clearly rather than once per client */
		r = peercgroup_open_device();
		if (r < 0) {
			fprintf(stderr, "peercgroup: %s\n", peercgroup_strerror(r));
			return exit_code(r);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	fd = socket(AF_UNIX, (seqpacket ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	/* Replace a stale socket of an earlier run, never any other file, nor
	 * a socket someone still listens on (EADDRINUSE below). */
	if (path[0] != '@' && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    !socket_listened_on(&sa, len, seqpacket))
		unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 16) < 0) {
		fprintf(stderr, "peercgroup: cannot listen on %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_SOCKET;
	}
	if (!json)
		fprintf(stderr, "peercgroup: listening on %s\n", path);
	while (!count || served < count) {
		char *line = NULL;
		size_t size = 0;
		FILE *mem;
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			fprintf(stderr, "peercgroup: accept: %s\n", strerror(errno));
			close(fd);
			return EXIT_SOCKET;
		}
		/* Same line to stdout and to the client, so both sides can check. */
		mem = open_memstream(&line, &size);
		if (!mem) {
			close(c);
			close(fd);
			return EXIT_FAIL;
		}
		report(mem, c);
		fclose(mem);
		fputs(line, stdout);
		fflush(stdout);
		(void)!send(c, line, size, MSG_NOSIGNAL);
		free(line);
		close(c);
		served++;
	}
	close(fd);
	if (path[0] != '@')
		unlink(path);
	return EXIT_OK;
}

/* What the server sent, until it closes (bounded wait: a --live server
 * must still see us alive while it looks). */
static void read_reply(int fd)
{
	struct timeval tv = { .tv_sec = 5 };
	char buf[4096];
	size_t have = 0;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0)) > 0) {
		have += (size_t)n;
		if (have == sizeof(buf) - 1)
			break;
	}
	if (!show_reply)
		return;
	buf[have] = '\0';
	if (have && buf[have - 1] == '\n')
		buf[--have] = '\0';
	if (json) {
		struct json j;

		json_start(&j, stdout);
		json_object_begin(&j);
		json_key(&j, "reply");
		json_string_n(&j, buf, have);
		json_object_end(&j);
	} else {
		fputs("reply: ", stdout);
		put_text(stdout, buf);
		putchar('\n');
	}
}

static int cmd_ask(const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = make_addr(path, &sa);
	int fd, r;

	if (!len) {
		fprintf(stderr, "peercgroup: socket path empty or longer than %zu bytes: %s\n",
			sizeof(sa.sun_path) - 1, path);
		return EXIT_USAGE;
	}
	fd = socket(AF_UNIX, (seqpacket ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0) {
		fprintf(stderr, "peercgroup: cannot connect to %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_SOCKET;
	}
	/* Our peer is the listener: its cgroup as of listen(). */
	r = report(stdout, fd);
	read_reply(fd);
	fflush(stdout);
	close(fd);
	return report_exit(r);
}

/*
 * A socket someone else accepted and handed us: an inetd-style service
 * (systemd's Accept=yes: fd 3, or 0 with StandardInput=socket).
 */
static int cmd_peer(const char *arg)
{
	char *end;
	long fd;
	int r;

	errno = 0;
	fd = strtol(arg, &end, 10);
	if (errno || *end || !*arg || fd < 0 || fd > INT_MAX) {
		fprintf(stderr, "peercgroup: peer takes a file descriptor number, not '%s'\n", arg);
		return EXIT_USAGE;
	}
	r = report(stdout, (int)fd);
	fflush(stdout);
	return report_exit(r);
}

static int cmd_classify(const char *path)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	int r = peercgroup_classify_path(path, strlen(path), 0, &c);

	if (json) {
		struct json j;

		json_start(&j, stdout);
		json_object_begin(&j);
		json_kv_bool(&j, "valid", r == 0);
		json_kv_string(&j, "path", path);
		if (r == 0)
			json_class(&j, &c);
		json_object_end(&j);
	} else if (r == 0) {
		text_class(stdout, &c);
		putchar('\n');
	}
	if (r < 0)
		fprintf(stderr, "peercgroup: not a cgroup path (empty, a NUL byte, an empty or \".\" "
			"component, \"..\" after a name, a name over 255 bytes, or over 64 KiB): %s\n",
			path);
	return r < 0 ? EXIT_FAIL : EXIT_OK;
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "live", no_argument, NULL, 'l' },
		{ "seqpacket", no_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "reply", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct command *cmd;
	char *end;
	int o, nargs;

	while ((o = getopt_long(argc, argv, "jlsc:rhV", opts, NULL)) != -1) {
		switch (o) {
		case 'j': json = true; break;
		case 'l': live = true; break;
		case 's': seqpacket = true; break;
		case 'r': show_reply = true; break;
		case 'c':
			errno = 0;
			count = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-') {
				fprintf(stderr, "peercgroup: --count takes a number, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': printf("peercgroup %s\n", peercgroup_library_version()); return EXIT_OK;
		default:
			fputs("peercgroup: see 'peercgroup help'\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		fprintf(stderr, "peercgroup: unknown command '%s'; see 'peercgroup help'\n", argv[optind]);
		return EXIT_USAGE;
	}
	optind++;
	nargs = argc - optind;
	if (nargs != (cmd->args[0] ? 1 : 0)) {
		if (cmd->args[0])
			fprintf(stderr, "peercgroup: %s takes one %s\n", cmd->name, cmd->args);
		else
			fprintf(stderr, "peercgroup: %s takes no argument\n", cmd->name);
		return EXIT_USAGE;
	}
	if (!strcmp(cmd->name, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd->name, "status"))
		return cmd_status();
	if (!strcmp(cmd->name, "serve"))
		return cmd_serve(argv[optind]);
	if (!strcmp(cmd->name, "ask"))
		return cmd_ask(argv[optind]);
	if (!strcmp(cmd->name, "peer"))
		return cmd_peer(argv[optind]);
	return cmd_classify(argv[optind]);
}
