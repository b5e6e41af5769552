/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* peercgroup(1): module status, demo server and client, classifier. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
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

/* Exit codes, documented in peercgroup(1). */
enum {
	EX_OK_ = 0,
	EX_FAIL = 1,		/* other failure */
	EX_USAGE_ = 2,		/* bad command line */
	EX_NOMODULE = 3,	/* module not loaded */
	EX_PERM = 4,		/* cannot open /dev/peercgroup */
	EX_ABI = 5,		/* module ABI mismatch */
	EX_SOCKET = 6,		/* socket/bind/listen/connect failed */
	EX_QUERY = 7,		/* the peer query failed */
};

static int json, live, seqpacket;
static unsigned long count;

static int exit_code(int err)
{
	switch (-err) {
	case ENOPKG: return EX_NOMODULE;
	case EACCES: return EX_PERM;
	case EPROTO: return EX_ABI;
	default: return EX_FAIL;
	}
}

/* JSON string; bytes >= 0x80 pass through (cgroup names are bytes). */
static void put_json(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Text output: one record per line, so escape what would break lines. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static void usage(FILE *f)
{
	fputs("usage: peercgroup [--json] status\n"
	      "       peercgroup [--json] [--live] [--seqpacket] [--count N] serve PATH\n"
	      "       peercgroup [--json] [--live] [--seqpacket] ask PATH\n"
	      "       peercgroup [--json] classify CGROUP_PATH\n"
	      "       peercgroup --help | --version\n"
	      "PATH starting with '@' is an abstract socket address.\n", f);
}

/* ---- status ---- */

static int cmd_status(void)
{
	static const char *const counters[] = { "live", "recorded", "alloc_failures", "queries", "misses" };
	static const char *const feats[] = { "stream", "seqpacket", "socketpair", "path", "pid" };
	struct peercgroup_module m;
	int r = peercgroup_module_info(&m);
	size_t i, n = 0;

	if (json) {
		printf("{\"library_version\":\"%s\",\"module_loaded\":%s", peercgroup_library_version(),
		       r == 0 ? "true" : "false");
		if (r < 0) {
			printf(",\"error\":\"%s\",\"message\":", pcg_errno_name(r));
			put_json(stdout, peercgroup_strerror(r));
		}
	} else {
		printf("library version: %s\n", peercgroup_library_version());
		printf("module loaded:   %s\n", r == 0 ? "yes" : r == -ENOPKG ? "no" : "unknown");
		if (r < 0)
			printf("error:           %s\n", peercgroup_strerror(r));
	}
	if (r == 0) {
		if (json) {
			printf(",\"abi_version\":%u,\"module_version\":", m.abi_version);
			put_json(stdout, m.version);
			printf(",\"query_flags\":%u,\"query_size\":%u,\"features\":[",
			       m.query_flags, m.query_size);
		} else {
			printf("module version:  %s\nABI version:     %u\nquery size:      %u\nfeatures:       ",
			       m.version, m.abi_version, m.query_size);
		}
		for (i = 0; i < sizeof(feats) / sizeof(feats[0]); i++)
			if (m.features & (1ULL << i))
				printf(json ? "%s\"%s\"" : "%s%s", json && n++ ? "," : " ", feats[i]);
		if (m.features >> i) {	/* from a newer module */
			unsigned long long rest = m.features >> i << i;

			if (json)
				printf("%s\"0x%llx\"", n ? "," : "", rest);
			else
				printf(" 0x%llx", rest);
		}
		printf(json ? "]" : "\n");
	}
	/* Counters are root-readable sysfs files; absent without the module. */
	printf(json ? ",\"counters\":{" : "counters:\n");
	for (i = 0, n = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		char fn[128];
		unsigned long long v;
		FILE *f;
		int ok;

		snprintf(fn, sizeof(fn), "/sys/module/peercgroup/counters/%s", counters[i]);
		f = fopen(fn, "re");
		ok = f && fscanf(f, "%llu", &v) == 1;
		if (f)
			fclose(f);
		if (json) {
			if (ok)
				printf("%s\"%s\":%llu", n++ ? "," : "", counters[i], v);
		} else if (ok) {
			printf("  %-15s %llu\n", counters[i], v);
		} else {
			printf("  %-15s unavailable\n", counters[i]);
		}
	}
	printf(json ? "}}\n" : "");
	return r == 0 ? EX_OK_ : exit_code(r);
}

/* ---- one peer, as serve and ask print it ---- */

/* Print the peer of @fd to @f; returns 0 or the library error. */
static int report(FILE *f, int fd)
{
	struct peercgroup_info info;
	struct peercgroup_container ct;
	int r = peercgroup_get(fd, live ? PEERCGROUP_GET_LIVE : 0, &info);

	if (r < 0) {
		if (json) {
			fprintf(f, "{\"error\":\"%s\",\"message\":", pcg_errno_name(r));
			put_json(f, peercgroup_strerror(r));
			fputs("}\n", f);
		} else {
			fprintf(f, "error=%s message=%s\n", pcg_errno_name(r), peercgroup_strerror(r));
		}
		return r;
	}
	peercgroup_classify(info.path, info.path_len, &ct);
	if (json) {
		fprintf(f, "{\"pid\":%d,\"cgroup_id\":%llu,\"runtime\":\"%s\",\"container\":",
			(int)info.pid, (unsigned long long)info.cgroup_id,
			peercgroup_runtime_name(ct.runtime));
		put_json(f, ct.id);
		fputs(",\"pod\":", f);
		put_json(f, ct.pod);
		fputs(",\"qos\":", f);
		put_json(f, ct.qos);
		fprintf(f, ",\"live\":%s,\"cgroup_removed\":%s,\"peer_exited\":%s,\"path\":",
			info.flags & PEERCGROUP_INFO_LIVE ? "true" : "false",
			info.flags & PEERCGROUP_INFO_CGROUP_REMOVED ? "true" : "false",
			info.flags & PEERCGROUP_INFO_PEER_EXITED ? "true" : "false");
		put_json(f, info.path);
		fputs("}\n", f);
	} else {
		fprintf(f, "pid=%d id=%llu runtime=%s container=", (int)info.pid,
			(unsigned long long)info.cgroup_id, peercgroup_runtime_name(ct.runtime));
		put_text(f, ct.id[0] ? ct.id : "-");
		if (ct.pod[0])
			fprintf(f, " pod=%s qos=%s", ct.pod, ct.qos);
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

static int cmd_serve(const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = make_addr(path, &sa);
	unsigned long served = 0;
	struct stat st;
	int fd, r;

	if (!len) {
		fprintf(stderr, "peercgroup: socket path empty or too long: %s\n", path);
		return EX_USAGE_;
	}
	if (!live) {	/* fail early and clearly rather than once per client */
		struct peercgroup_module m;

		r = peercgroup_module_info(&m);
		if (r < 0) {
			fprintf(stderr, "peercgroup: %s\n", peercgroup_strerror(r));
			return exit_code(r);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	fd = socket(AF_UNIX, (seqpacket ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	/* Replace a stale socket of an earlier run, never any other file. */
	if (path[0] != '@' && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 16) < 0) {
		fprintf(stderr, "peercgroup: cannot listen on %s: %s\n", path, strerror(errno));
		return EX_SOCKET;
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
			return EX_SOCKET;
		}
		/* Same line to stdout and to the client, so both sides can check. */
		mem = open_memstream(&line, &size);
		if (!mem) {
			close(c);
			return EX_FAIL;
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
	return EX_OK_;
}

static int cmd_ask(const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = make_addr(path, &sa);
	int fd, r;

	if (!len) {
		fprintf(stderr, "peercgroup: socket path empty or too long: %s\n", path);
		return EX_USAGE_;
	}
	fd = socket(AF_UNIX, (seqpacket ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0) {
		fprintf(stderr, "peercgroup: cannot connect to %s: %s\n", path, strerror(errno));
		return EX_SOCKET;
	}
	/* Our peer is the listener: its cgroup as of listen(). */
	r = report(stdout, fd);
	fflush(stdout);
	{
		/* Wait (bounded) for the server's line, so the peer is still
		 * alive when a --live server looks at it. */
		struct timeval tv = { .tv_sec = 5 };
		char buf[512];

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
	}
	close(fd);
	if (r == -ENOPKG || r == -EACCES || r == -EPROTO)
		return exit_code(r);
	return r < 0 ? EX_QUERY : EX_OK_;
}

static int cmd_classify(const char *path)
{
	struct peercgroup_container ct;
	int r = peercgroup_classify(path, strlen(path), &ct);

	if (json) {
		printf("{\"valid\":%s,\"runtime\":\"%s\",\"container\":", r ? "false" : "true",
		       peercgroup_runtime_name(ct.runtime));
		put_json(stdout, ct.id);
		fputs(",\"pod\":", stdout);
		put_json(stdout, ct.pod);
		printf(",\"qos\":\"%s\",\"uid\":%lld,\"conmon\":%s,\"kubernetes\":%s,\"rootless\":%s}\n",
		       ct.qos, (long long)ct.uid,
		       ct.flags & PEERCGROUP_CT_CONMON ? "true" : "false",
		       ct.flags & PEERCGROUP_CT_KUBERNETES ? "true" : "false",
		       ct.flags & PEERCGROUP_CT_ROOTLESS ? "true" : "false");
	} else if (r == 0) {
		printf("runtime=%s container=", peercgroup_runtime_name(ct.runtime));
		put_text(stdout, ct.id[0] ? ct.id : "-");
		if (ct.pod[0])
			printf(" pod=%s", ct.pod);
		if (ct.qos[0])
			printf(" qos=%s", ct.qos);
		if (ct.uid >= 0)
			printf(" uid=%lld", (long long)ct.uid);
		if (ct.flags & PEERCGROUP_CT_CONMON)
			fputs(" conmon", stdout);
		if (ct.flags & PEERCGROUP_CT_ROOTLESS)
			fputs(" rootless", stdout);
		if (ct.flags & PEERCGROUP_CT_KUBERNETES)
			fputs(" kubernetes", stdout);
		putchar('\n');
	}
	if (r < 0)
		fprintf(stderr, "peercgroup: not a valid cgroup path\n");
	return r < 0 ? EX_FAIL : EX_OK_;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "live", no_argument, NULL, 'l' },
		{ "seqpacket", no_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd;
	char *end;
	int o;

	while ((o = getopt_long(argc, argv, "jlsc:hV", opts, NULL)) != -1) {
		switch (o) {
		case 'j': json = 1; break;
		case 'l': live = 1; break;
		case 's': seqpacket = 1; break;
		case 'c':
			errno = 0;
			count = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-') {
				fprintf(stderr, "peercgroup: bad --count: %s\n", optarg);
				return EX_USAGE_;
			}
			break;
		case 'h': usage(stdout); return EX_OK_;
		case 'V': printf("peercgroup %s\n", peercgroup_library_version()); return EX_OK_;
		default: usage(stderr); return EX_USAGE_;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EX_USAGE_;
	}
	cmd = argv[optind++];
	if (!strcmp(cmd, "status") && optind == argc)
		return cmd_status();
	if (optind + 1 == argc) {
		if (!strcmp(cmd, "serve"))
			return cmd_serve(argv[optind]);
		if (!strcmp(cmd, "ask"))
			return cmd_ask(argv[optind]);
		if (!strcmp(cmd, "classify"))
			return cmd_classify(argv[optind]);
	}
	usage(stderr);
	return EX_USAGE_;
}
