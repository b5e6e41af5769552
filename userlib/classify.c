/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Container classifier: cgroup path -> runtime and identity.  Pure: no I/O,
 * no allocation, bounded work (one pass over the components).
 *
 * The path is walked from the root; the first (outermost) component that
 * matches a rule in the table decides the runtime.  Context seen on the way
 * (kubepods, QoS, pod, user-UID.slice, user@UID.service, podman pod slice)
 * is attached.  Names follow the runtimes' own code and documentation:
 *   docker:     systemd driver  <parent>/docker-<64hex>.scope
 *               cgroupfs driver /docker/<64hex>
 *   podman:     systemd  machine.slice/libpod-<64hex>.scope,
 *               libpod-conmon-<64hex>.scope, machine-libpod_pod_<id>.slice
 *               cgroupfs /libpod_parent/libpod-<64hex>, /libpod_parent/conmon
 *   kubelet:    systemd  kubepods.slice/kubepods-<qos>.slice/
 *                        kubepods-<qos>-pod<uid with _>.slice/<runtime scope>
 *               cgroupfs /kubepods/<qos>/pod<uid>/<64hex>
 *   containerd: cri-containerd-<64hex>.scope, nerdctl-<64hex>.scope
 *   CRI-O:      crio-<64hex>.scope, crio-conmon-<64hex>.scope
 *   LXC 4+, LXD, Incus: lxc.payload.<name>, lxc.monitor.<name>; older /lxc/<name>
 *   systemd:    machine.slice/systemd-nspawn@<name>.service,
 *               machine.slice/machine-<escaped name>.scope (machined)
 */
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <string.h>

#include "peercgroup.h"

#define PUBLIC __attribute__((visibility("default")))
#define MAX_PATH_LEN 65536
#define NAME_MAX_ 255		/* kernfs names are at most NAME_MAX bytes */

struct str {
	const char *s;
	size_t n;
};

enum idfmt {
	ID_HEX64,	/* exactly 64 lowercase hex digits */
	ID_NAME,	/* any non-empty name */
	ID_UNIT,	/* systemd-escaped name (\xNN), unescaped */
	ID_NONE,	/* nothing may follow the prefix */
};

struct rule {
	const char *parent;	/* required parent component, NULL: any */
	const char *prefix;
	const char *suffix;
	enum idfmt fmt;
	enum peercgroup_runtime rt;
	unsigned int flags;
};

/* Order matters: a longer prefix must precede the prefix it extends. */
static const struct rule rules[] = {
	{ NULL, "docker-", ".scope", ID_HEX64, PEERCGROUP_RT_DOCKER, 0 },
	{ "docker", "", "", ID_HEX64, PEERCGROUP_RT_DOCKER, 0 },
	{ NULL, "libpod-conmon-", ".scope", ID_HEX64, PEERCGROUP_RT_PODMAN, PEERCGROUP_CT_CONMON },
	{ NULL, "libpod-", ".scope", ID_HEX64, PEERCGROUP_RT_PODMAN, 0 },
	{ "libpod_parent", "libpod-conmon-", "", ID_HEX64, PEERCGROUP_RT_PODMAN, PEERCGROUP_CT_CONMON },
	{ "libpod_parent", "libpod-", "", ID_HEX64, PEERCGROUP_RT_PODMAN, 0 },
	{ "libpod_parent", "conmon", "", ID_NONE, PEERCGROUP_RT_PODMAN, PEERCGROUP_CT_CONMON },
	{ NULL, "cri-containerd-", ".scope", ID_HEX64, PEERCGROUP_RT_CONTAINERD, 0 },
	{ NULL, "nerdctl-", ".scope", ID_HEX64, PEERCGROUP_RT_CONTAINERD, 0 },
	{ NULL, "crio-conmon-", ".scope", ID_HEX64, PEERCGROUP_RT_CRIO, PEERCGROUP_CT_CONMON },
	{ NULL, "crio-", ".scope", ID_HEX64, PEERCGROUP_RT_CRIO, 0 },
	{ NULL, "lxc.payload.", "", ID_NAME, PEERCGROUP_RT_LXC, 0 },
	{ NULL, "lxc.monitor.", "", ID_NAME, PEERCGROUP_RT_LXC, PEERCGROUP_CT_MONITOR },
	{ "lxc", "", "", ID_NAME, PEERCGROUP_RT_LXC, 0 },
	{ NULL, "systemd-nspawn@", ".service", ID_UNIT, PEERCGROUP_RT_NSPAWN, 0 },
	{ "machine.slice", "machine-", ".scope", ID_UNIT, PEERCGROUP_RT_MACHINE, 0 },
};

static const char *const rt_names[PEERCGROUP_RT_COUNT_] = {
	[PEERCGROUP_RT_UNKNOWN] = "unknown",
	[PEERCGROUP_RT_HOST] = "host",
	[PEERCGROUP_RT_SYSTEM_SERVICE] = "systemd-service",
	[PEERCGROUP_RT_USER_SESSION] = "user-session",
	[PEERCGROUP_RT_DOCKER] = "docker",
	[PEERCGROUP_RT_PODMAN] = "podman",
	[PEERCGROUP_RT_CONTAINERD] = "containerd",
	[PEERCGROUP_RT_CRIO] = "cri-o",
	[PEERCGROUP_RT_KUBERNETES] = "kubernetes",
	[PEERCGROUP_RT_LXC] = "lxc",
	[PEERCGROUP_RT_NSPAWN] = "systemd-nspawn",
	[PEERCGROUP_RT_MACHINE] = "machined",
};

PUBLIC const char *peercgroup_runtime_name(enum peercgroup_runtime rt)
{
	if ((unsigned int)rt >= PEERCGROUP_RT_COUNT_)
		return "unknown";
	return rt_names[rt];
}

static int eq(struct str a, const char *b)
{
	return a.n == strlen(b) && !memcmp(a.s, b, a.n);
}

static int has_prefix(struct str a, const char *p)
{
	size_t n = strlen(p);

	return a.n >= n && !memcmp(a.s, p, n);
}

static int has_suffix(struct str a, const char *p)
{
	size_t n = strlen(p);

	return a.n >= n && !memcmp(a.s + a.n - n, p, n);
}

static int is_hex64(struct str a)
{
	size_t i;

	if (a.n != 64)
		return 0;
	for (i = 0; i < a.n; i++)
		if (!((a.s[i] >= '0' && a.s[i] <= '9') || (a.s[i] >= 'a' && a.s[i] <= 'f')))
			return 0;
	return 1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copy @a into @dst (size @size), undoing systemd's \xNN escapes if @unit.
 * 0 if the result would be empty, contain NUL or '/', or not fit. */
static int copy_name(char *dst, size_t size, struct str a, int unit)
{
	size_t i, o = 0;

	for (i = 0; i < a.n; i++) {
		char c = a.s[i];

		if (unit && c == '\\' && i + 3 < a.n && a.s[i + 1] == 'x' &&
		    hexval(a.s[i + 2]) >= 0 && hexval(a.s[i + 3]) >= 0) {
			c = (char)(hexval(a.s[i + 2]) << 4 | hexval(a.s[i + 3]));
			i += 3;
		}
		if (c == '\0' || c == '/' || o + 1 >= size)
			return 0;
		dst[o++] = c;
	}
	dst[o] = '\0';
	return o > 0;
}

static int match_rule(const struct rule *r, struct str parent, struct str c,
		      struct peercgroup_container *out)
{
	struct str id;
	size_t pl = strlen(r->prefix), sl = strlen(r->suffix);

	if (r->parent && !eq(parent, r->parent))
		return 0;
	if (!has_prefix(c, r->prefix) || c.n < pl + sl || !has_suffix(c, r->suffix))
		return 0;
	id.s = c.s + pl;
	id.n = c.n - pl - sl;
	switch (r->fmt) {
	case ID_HEX64:
		if (!is_hex64(id))
			return 0;
		break;
	case ID_NONE:
		if (id.n)
			return 0;
		break;
	case ID_NAME:
	case ID_UNIT:
		break;
	}
	if (r->fmt != ID_NONE &&
	    !copy_name(out->id, sizeof(out->id), id, r->fmt == ID_UNIT))
		return 0;
	out->runtime = r->rt;
	out->flags |= r->flags;
	return 1;
}

/* Kubernetes pod UID: systemd driver writes '_' for '-'. */
static void set_pod_uid(struct peercgroup_container *out, struct str uid)
{
	size_t i;

	if (uid.n == 0 || uid.n >= sizeof(out->pod))
		return;
	for (i = 0; i < uid.n; i++) {
		char c = uid.s[i] == '_' ? '-' : uid.s[i];

		if (hexval(c) < 0 && c != '-')
			return;
		out->pod[i] = c;
	}
	out->pod[uid.n] = '\0';
}

/* QoS and pod from "burstable", "pod<uid>" (cgroupfs) or from the dash
 * separated words of "kubepods-burstable-pod<uid>.slice" (systemd). */
static void kube_context(struct str c, struct peercgroup_container *out)
{
	struct str w;
	const char *end;
	int slice = has_suffix(c, ".slice");

	if (slice)
		c.n -= 6;
	end = c.s + c.n;
	while (c.s < end) {
		/* cgroupfs "pod<uid>" keeps the UID's dashes: one word */
		const char *dash = slice ? memchr(c.s, '-', (size_t)(end - c.s)) : NULL;

		w.s = c.s;
		w.n = (size_t)((dash ? dash : end) - c.s);
		if (eq(w, "burstable") || eq(w, "besteffort"))
			memcpy(out->qos, w.s, w.n), out->qos[w.n] = '\0';
		else if (has_prefix(w, "pod") && w.n > 3)
			set_pod_uid(out, (struct str){ w.s + 3, w.n - 3 });
		c.s = dash ? dash + 1 : end;
	}
}

static int is_kubepods(struct str c)
{
	return eq(c, "kubepods") || eq(c, "kubepods.slice") ||
	       has_suffix(c, "-kubepods.slice");	/* kind: kubelet-kubepods.slice */
}

/* "user-1000.slice" -> 1000, else -1. */
static int64_t slice_uid(struct str c, const char *pfx, const char *sfx)
{
	size_t pl = strlen(pfx), sl = strlen(sfx), i;
	int64_t uid = 0;

	if (!has_prefix(c, pfx) || !has_suffix(c, sfx) || c.n <= pl + sl ||
	    c.n - pl - sl > 10)
		return -1;
	for (i = pl; i < c.n - sl; i++) {
		if (c.s[i] < '0' || c.s[i] > '9')
			return -1;
		uid = uid * 10 + (c.s[i] - '0');
	}
	return uid <= 0xffffffffLL ? uid : -1;
}

static void reset(struct peercgroup_container *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime = PEERCGROUP_RT_UNKNOWN;
	out->uid = -1;
}

PUBLIC int peercgroup_classify(const char *path, size_t len,
			       struct peercgroup_container *out)
{
	struct str parent = { "", 0 }, c, unit = { NULL, 0 }, first = { NULL, 0 };
	const char *p, *end;
	int kube = 0, user_slice = 0, found = 0;
	size_t i;

	if (!out)
		return -EINVAL;
	reset(out);
	if (!path || len == 0 || len > MAX_PATH_LEN || memchr(path, '\0', len))
		return -EINVAL;
	p = path;
	end = path + len;
	if (*p == '/')
		p++;
	if (p == end) {
		out->runtime = PEERCGROUP_RT_HOST;
		return 0;
	}

	/* Validate first, so that a bad path never yields a partial answer. */
	for (c.s = p;; c.s += c.n + 1) {
		const char *slash = memchr(c.s, '/', (size_t)(end - c.s));

		c.n = (size_t)((slash ? slash : end) - c.s);
		if (c.n == 0 || c.n > NAME_MAX_ || eq(c, ".") || eq(c, ".."))
			return -EINVAL;
		if (!slash)
			break;
	}

	for (c.s = p;; parent = c, c.s += c.n + 1) {
		const char *slash = memchr(c.s, '/', (size_t)(end - c.s));
		int64_t uid;

		c.n = (size_t)((slash ? slash : end) - c.s);
		if (!first.s)
			first = c;
		for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
			if (match_rule(&rules[i], parent, c, out)) {
				found = 1;
				break;
			}
		if (found)
			break;

		if (is_kubepods(c)) {
			kube = 1;
		} else if (kube) {
			kube_context(c, out);
			/* cgroupfs driver: /kubepods/<qos>/pod<uid>/<container id> */
			if (out->pod[0] && is_hex64(c) && has_prefix(parent, "pod")) {
				memcpy(out->id, c.s, c.n);
				out->id[c.n] = '\0';
				out->runtime = PEERCGROUP_RT_KUBERNETES;
				found = 1;
				break;
			}
		}
		if (eq(c, "user.slice") && parent.n == 0)
			user_slice = 1;
		if (out->uid < 0 && (uid = slice_uid(c, "user-", ".slice")) >= 0)
			out->uid = uid;
		if (slice_uid(c, "user@", ".service") >= 0)
			out->flags |= PEERCGROUP_CT_ROOTLESS;
		/* podman pods: machine-libpod_pod_<id>.slice, user-libpod_pod_<id>.slice */
		if (has_suffix(c, ".slice")) {
			const char *pp = memmem(c.s, c.n, "libpod_pod_", 11);

			if (pp) {
				struct str id = { pp + 11, (size_t)(c.s + c.n - 6 - (pp + 11)) };

				if (is_hex64(id))
					memcpy(out->pod, id.s, 64), out->pod[64] = '\0';
			}
		}
		if (has_suffix(c, ".service") || has_suffix(c, ".scope"))
			unit = c;
		if (!slash)
			break;
	}

	if (kube) {
		out->flags |= PEERCGROUP_CT_KUBERNETES;
		if (out->pod[0] && !out->qos[0])
			strcpy(out->qos, "guaranteed");	/* no QoS level in the path */
		if (!found)
			out->runtime = PEERCGROUP_RT_KUBERNETES;
		return 0;
	}
	if (found)
		return 0;

	/* Not a container: only meaningful facts below, never a guess. */
	out->flags &= ~PEERCGROUP_CT_ROOTLESS;
	out->pod[0] = '\0';
	if (user_slice)
		out->runtime = PEERCGROUP_RT_USER_SESSION;
	else if (unit.s && (eq(first, "system.slice") || eq(first, "init.scope")))
		out->runtime = PEERCGROUP_RT_SYSTEM_SERVICE;
	if (out->runtime != PEERCGROUP_RT_UNKNOWN && unit.s)
		copy_name(out->id, sizeof(out->id), unit, 0);
	return 0;
}
