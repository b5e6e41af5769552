/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Container classifier: cgroup path -> runtime and identity.  Pure (no I/O,
 * no allocation, bounded work: one pass over the components) except for
 * the one cached look at the caller's cgroup namespace.
 *
 * The path is walked from the root; the first (outermost) component that
 * matches a rule decides the runtime.  Context seen on the way (kubepods,
 * QoS, pod, user-UID.slice, user@UID.service, podman pod slice) is
 * attached.  Names follow the runtimes' own code and documentation:
 *   docker:     systemd driver  <parent>/docker-<64hex>.scope
 *               cgroupfs driver /docker/<64hex>, --cgroup-parent /<any>/<64hex>
 *   podman:     systemd  machine.slice/libpod-<64hex>.scope,
 *               libpod-conmon-<64hex>.scope, machine-libpod_pod_<id>.slice,
 *               quadlet / --cgroups=split <unit>.service/libpod-payload-<64hex>
 *               cgroupfs [/libpod_parent/[<pod>/]]libpod-<64hex>, .../conmon
 *   kubelet:    systemd  kubepods.slice/kubepods-<qos>.slice/
 *                        kubepods-<qos>-pod<uid with _>.slice/<runtime scope>
 *               cgroupfs /kubepods/<qos>/pod<uid>/<64hex> or crio-<64hex>
 *   containerd: cri-containerd-<64hex>.scope, nerdctl-<64hex>.scope,
 *               <slice>:cri-containerd:<64hex> (kubelet's systemd driver
 *               with containerd's cgroupfs driver: the name is literal),
 *               ctr (cgroupfs) /<namespace>/<id> for "default" and "k8s.io"
 *   CRI-O:      crio-<64hex>[.scope], crio-conmon-<64hex>[.scope]
 *   ECS:        /ecs/<task>/<container>
 *   LXC 4+, LXD, Incus: lxc.payload.<name>, lxc.monitor.<name>; older /lxc/<name>
 *   systemd:    machine.slice/systemd-nspawn@<name>.service[/payload|/supervisor],
 *               machine.slice/machine-<escaped name>.scope (machined)
 *   desktop:    app-flatpak-<appid>-<n>.scope (flatpak),
 *               snap.<snap>.<app>-<uuid>.scope, snap.<snap>.<app>.service,
 *               app-[<launcher>-]<escaped appid>-<random>.scope,
 *               app-[<launcher>-]<escaped appid>[@<random>].service
 *               (systemd.io/DESKTOP_ENVIRONMENTS)
 */
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

#include "peercgroup.h"
#include "internal.h"

#define MAX_PATH_LEN 65536
#define CGROUP_NAME_MAX 255	/* kernfs names are at most NAME_MAX bytes */
/* nsfs inode of the initial cgroup namespace (PROC_CGROUP_INIT_INO). */
#define INITIAL_CGROUP_NS_INO 0xEFFFFFFBU

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

enum where {
	ANYWHERE,	/* any position */
	PARENT,		/* the parent component is @ctx */
	UNDER,		/* some ancestor component is @ctx (libpod_parent, kubepods) */
	TOP,		/* the parent is @ctx and is the first component */
};

struct rule {
	enum where where;
	const char *ctx;
	const char *prefix;
	const char *suffix;
	enum idfmt fmt;
	enum peercgroup_runtime rt;
	unsigned int flags;
};

#define CONMON (PEERCGROUP_CT_CONMON | PEERCGROUP_CT_MONITOR)

/* Order matters: a longer prefix must precede the prefix it extends. */
static const struct rule rules[] = {
	{ ANYWHERE, NULL, "docker-", ".scope", ID_HEX64, PEERCGROUP_RT_DOCKER, 0 },
	{ PARENT, "docker", "", "", ID_HEX64, PEERCGROUP_RT_DOCKER, 0 },
	{ ANYWHERE, NULL, "libpod-conmon-", ".scope", ID_HEX64, PEERCGROUP_RT_PODMAN, CONMON },
	{ ANYWHERE, NULL, "libpod-payload-", ".scope", ID_HEX64, PEERCGROUP_RT_PODMAN, 0 },
	{ ANYWHERE, NULL, "libpod-payload-", "", ID_HEX64, PEERCGROUP_RT_PODMAN, 0 },
	{ ANYWHERE, NULL, "libpod-", ".scope", ID_HEX64, PEERCGROUP_RT_PODMAN, 0 },
	/* cgroupfs: under libpod_parent, or wherever --cgroup-parent says */
	{ ANYWHERE, NULL, "libpod-conmon-", "", ID_HEX64, PEERCGROUP_RT_PODMAN, CONMON },
	{ ANYWHERE, NULL, "libpod-", "", ID_HEX64, PEERCGROUP_RT_PODMAN, 0 },
	{ UNDER, "libpod_parent", "conmon", "", ID_NONE, PEERCGROUP_RT_PODMAN, CONMON },
	{ ANYWHERE, NULL, "cri-containerd-", ".scope", ID_HEX64, PEERCGROUP_RT_CONTAINERD, 0 },
	{ ANYWHERE, NULL, "nerdctl-", ".scope", ID_HEX64, PEERCGROUP_RT_CONTAINERD, 0 },
	{ TOP, "default", "", "", ID_NAME, PEERCGROUP_RT_CONTAINERD, 0 },
	{ TOP, "k8s.io", "", "", ID_NAME, PEERCGROUP_RT_CONTAINERD, 0 },
	{ ANYWHERE, NULL, "crio-conmon-", ".scope", ID_HEX64, PEERCGROUP_RT_CRIO, CONMON },
	{ ANYWHERE, NULL, "crio-", ".scope", ID_HEX64, PEERCGROUP_RT_CRIO, 0 },
	{ UNDER, "kubepods", "crio-conmon-", "", ID_HEX64, PEERCGROUP_RT_CRIO, CONMON },
	{ UNDER, "kubepods", "crio-", "", ID_HEX64, PEERCGROUP_RT_CRIO, 0 },
	{ ANYWHERE, NULL, "lxc.payload.", "", ID_NAME, PEERCGROUP_RT_LXC, 0 },
	{ ANYWHERE, NULL, "lxc.monitor.", "", ID_NAME, PEERCGROUP_RT_LXC, PEERCGROUP_CT_MONITOR },
	{ PARENT, "lxc", "", "", ID_NAME, PEERCGROUP_RT_LXC, 0 },
	{ ANYWHERE, NULL, "systemd-nspawn@", ".service", ID_UNIT, PEERCGROUP_RT_NSPAWN, 0 },
	{ PARENT, "machine.slice", "machine-", ".scope", ID_UNIT, PEERCGROUP_RT_MACHINE, 0 },
};

static const char *const rt_names[] = {
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
	[PEERCGROUP_RT_ECS] = "ecs",
	[PEERCGROUP_RT_FLATPAK] = "flatpak",
	[PEERCGROUP_RT_SNAP] = "snap",
	[PEERCGROUP_RT_APP] = "app",
};
#define RUNTIME_COUNT (sizeof(rt_names) / sizeof(rt_names[0]))

/* Indexed by bit number; the data file and the CLI use these names. */
static const char *const flag_names[] = {
	"conmon", "kubernetes", "rootless", "monitor", "outside", "namespaced",
	"unproven",
};

PUBLIC const char *peercgroup_runtime_name(enum peercgroup_runtime rt)
{
	if ((unsigned int)rt >= RUNTIME_COUNT)
		return "unknown";
	return rt_names[rt];
}

PUBLIC const char *peercgroup_class_flag_name(unsigned int flag)
{
	unsigned int bit;

	if (!flag || (flag & (flag - 1)))
		return NULL;
	bit = (unsigned int)__builtin_ctz(flag);
	return bit < sizeof(flag_names) / sizeof(flag_names[0]) ? flag_names[bit] : NULL;
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
 * 0 if the result would be empty, contain NUL or '/', or not fit; @dst is
 * then "". */
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
		if (c == '\0' || c == '/' || o + 1 >= size) {
			dst[0] = '\0';
			return 0;
		}
		dst[o++] = c;
	}
	dst[o] = '\0';
	return o > 0;
}

/* Components of a path, one at a time. */
struct walk {
	const char *end;
	struct str c;		/* current component */
	int more;		/* another component follows */
};

static void walk_start(struct walk *w, const char *p, const char *end)
{
	const char *slash = memchr(p, '/', (size_t)(end - p));

	w->end = end;
	w->c.s = p;
	w->c.n = (size_t)((slash ? slash : end) - p);
	w->more = slash != NULL;
}

static int walk_next(struct walk *w)
{
	if (!w->more)
		return 0;
	walk_start(w, w->c.s + w->c.n + 1, w->end);
	return 1;
}

/* What the walk has seen above the current component. */
struct context {
	struct str parent;
	int depth;		/* 0: first component */
	int kube;		/* under kubepods */
	int libpod;		/* under libpod_parent */
	int ecs;		/* first component is "ecs" */
};

static int match_rule(const struct rule *r, const struct context *x, struct str c,
		      struct peercgroup_class *out)
{
	struct str id;
	size_t pl = strlen(r->prefix), sl = strlen(r->suffix);

	switch (r->where) {
	case ANYWHERE:
		break;
	case PARENT:
		if (!eq(x->parent, r->ctx))
			return 0;
		break;
	case TOP:
		if (x->depth != 1 || !eq(x->parent, r->ctx))
			return 0;
		break;
	case UNDER:
		if (!(strcmp(r->ctx, "kubepods") ? x->libpod : x->kube))
			return 0;
		break;
	}
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

/*
 * "<slice>:<prefix>:<id>": an OCI systemd cgroupsPath used as a directory
 * name by a runtime on the cgroupfs driver while kubelet uses systemd's.
 */
static int match_cgroups_path(struct str c, struct peercgroup_class *out)
{
	static const struct {
		const char *tag;
		enum peercgroup_runtime rt;
	} tags[] = {
		{ ":cri-containerd:", PEERCGROUP_RT_CONTAINERD },
		{ ":crio:", PEERCGROUP_RT_CRIO },
	};
	size_t i;

	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		size_t tl = strlen(tags[i].tag);
		const char *t = c.n > 64 + tl ? memmem(c.s, c.n - 64, tags[i].tag, tl) : NULL;

		if (t && t + tl + 64 == c.s + c.n && is_hex64((struct str){ t + tl, 64 })) {
			memcpy(out->id, t + tl, 64);
			out->id[64] = '\0';
			out->runtime = tags[i].rt;
			return 1;
		}
	}
	return 0;
}

/* Kubernetes pod UID: systemd driver writes '_' for '-'.  Whether set. */
static int set_pod_uid(struct peercgroup_class *out, struct str uid)
{
	size_t i;

	if (uid.n == 0 || uid.n >= sizeof(out->pod))
		return 0;
	/* Check the whole UID first: a bad one must leave no partial pod. */
	for (i = 0; i < uid.n; i++)
		if (hexval(uid.s[i]) < 0 && uid.s[i] != '-' && uid.s[i] != '_')
			return 0;
	for (i = 0; i < uid.n; i++)
		out->pod[i] = uid.s[i] == '_' ? '-' : uid.s[i];
	out->pod[uid.n] = '\0';
	return 1;
}

/* QoS and pod from "burstable", "pod<uid>" (cgroupfs) or from the dash
 * separated words of "kubepods-burstable-pod<uid>.slice" (systemd);
 * whether @c gave either. */
static int kube_context(struct str c, struct peercgroup_class *out)
{
	struct str w;
	const char *end;
	int slice = has_suffix(c, ".slice"), took = 0;

	if (slice)
		c.n -= 6;
	end = c.s + c.n;
	while (c.s < end) {
		/* cgroupfs "pod<uid>" keeps the UID's dashes: one word */
		const char *dash = slice ? memchr(c.s, '-', (size_t)(end - c.s)) : NULL;

		w.s = c.s;
		w.n = (size_t)((dash ? dash : end) - c.s);
		if (eq(w, "burstable") || eq(w, "besteffort")) {
			memcpy(out->qos, w.s, w.n), out->qos[w.n] = '\0';
			took = 1;
		} else if (has_prefix(w, "pod") && w.n > 3) {
			took |= set_pod_uid(out, (struct str){ w.s + 3, w.n - 3 });
		}
		c.s = dash ? dash + 1 : end;
	}
	return took;
}

static int is_kubepods(struct str c)
{
	return eq(c, "kubepods") || eq(c, "kubepods.slice") ||
	       has_suffix(c, "-kubepods.slice");	/* kind: kubelet-kubepods.slice */
}

/* "user-1000.slice" -> 1000, else -1: also for the two numbers systemd's
 * uid_is_valid() refuses, (uid_t)-1 and the 16-bit -1. */
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
	return uid < 0xffffffffLL && uid != 0xffff ? uid : -1;
}

/* ---- applications (systemd.io/DESKTOP_ENVIRONMENTS) ---- */

static int all_digits(struct str a)
{
	size_t i;

	for (i = 0; i < a.n; i++)
		if (a.s[i] < '0' || a.s[i] > '9')
			return 0;
	return a.n > 0;
}

/* 8-4-4-4-12 hex digits */
static int is_uuid(struct str a)
{
	size_t i;

	if (a.n != 36)
		return 0;
	for (i = 0; i < a.n; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (a.s[i] != '-')
				return 0;
		} else if (hexval(a.s[i]) < 0) {
			return 0;
		}
	}
	return 1;
}

/* flatpak names its scope itself, with the app id unescaped. */
static int match_flatpak(struct str c, struct peercgroup_class *out)
{
	struct str body;
	const char *dash;

	if (!has_prefix(c, "app-flatpak-") || !has_suffix(c, ".scope") || c.n < 12 + 6)
		return 0;
	body.s = c.s + 12;
	body.n = c.n - 12 - 6;
	dash = body.n ? memrchr(body.s, '-', body.n) : NULL;
	if (!dash || !all_digits((struct str){ dash + 1, (size_t)(body.s + body.n - dash - 1) }))
		return 0;
	body.n = (size_t)(dash - body.s);
	if (!copy_name(out->app, sizeof(out->app), body, 1))
		return 0;
	strcpy(out->launcher, "flatpak");
	out->runtime = PEERCGROUP_RT_FLATPAK;
	return 1;
}

/* snap.<snap>.<app>-<uuid>.scope, snap.<snap>.<app>.service */
static int match_snap(struct str c, struct peercgroup_class *out)
{
	struct str body;
	int scope = has_suffix(c, ".scope");

	/* prefix and suffix must not share the dot: "snap.service" */
	if (!has_prefix(c, "snap.") || !(scope || has_suffix(c, ".service")) ||
	    c.n < 5 + (scope ? 6 : 8))
		return 0;
	body.s = c.s + 5;
	body.n = c.n - 5 - (scope ? 6 : 8);
	if (scope) {
		if (body.n < 38 || (body.s[body.n - 37] != '-' && body.s[body.n - 37] != '.') ||
		    !is_uuid((struct str){ body.s + body.n - 36, 36 }))
			return 0;
		body.n -= 37;
	}
	/* "<snap>.<app>": both parts non-empty */
	if (body.n < 3 || body.s[0] == '.' || body.s[body.n - 1] == '.' ||
	    !memchr(body.s, '.', body.n))
		return 0;
	if (!copy_name(out->app, sizeof(out->app), body, 0))
		return 0;
	out->runtime = PEERCGROUP_RT_SNAP;
	return 1;
}

/*
 * app-[<launcher>-]<appid>-<random>.scope and
 * app-[<launcher>-]<appid>[@<random>].service, where <appid> is
 * systemd-escaped (a '-' in it is \x2d), so words split on '-'.
 */
static int match_app(struct str c, struct peercgroup_class *out)
{
	struct str body, w[3], appid, launcher = { NULL, 0 };
	int scope = has_suffix(c, ".scope"), nw = 0, at_rand = 0;
	const char *p, *at, *end;

	if (!has_prefix(c, "app-") || !(scope || has_suffix(c, ".service")) ||
	    c.n < 4 + (scope ? 6 : 8))
		return 0;
	body.s = c.s + 4;
	body.n = c.n - 4 - (scope ? 6 : 8);
	if (!scope && (at = memchr(body.s, '@', body.n)) != NULL) {
		if (at + 1 == body.s + body.n)
			return 0;	/* "app-x@.service" is a template */
		body.n = (size_t)(at - body.s);
		at_rand = 1;
	}
	for (p = body.s, end = body.s + body.n;; p++) {
		const char *dash = memchr(p, '-', (size_t)(end - p));

		if (nw == 3)
			return 0;
		w[nw].s = p;
		w[nw].n = (size_t)((dash ? dash : end) - p);
		if (!w[nw++].n)
			return 0;
		if (!dash)
			break;
		p = dash;
	}
	/* scope: appid-rand, launcher-appid-rand; service: appid[@rand],
	 * launcher-appid[@rand], launcher-appid-rand */
	if (nw == (scope ? 2 : 1)) {
		appid = w[0];
	} else if (nw == 2 || (nw == 3 && !at_rand)) {
		launcher = w[0];
		appid = w[1];
	} else {
		return 0;
	}
	if (!copy_name(out->app, sizeof(out->app), appid, 1))
		return 0;
	if (launcher.s && !copy_name(out->launcher, sizeof(out->launcher), launcher, 1)) {
		out->app[0] = '\0';
		return 0;
	}
	out->runtime = PEERCGROUP_RT_APP;
	return 1;
}

/* ---- systemd units, as sd_pid_get_unit() / _user_unit() find them ---- */

static int is_unit(struct str c)
{
	return has_suffix(c, ".service") || has_suffix(c, ".scope");
}

/* First component at or after @w that is not a slice, if it is a unit. */
static int find_unit(struct walk *w, struct str *unit)
{
	do {
		if (has_suffix(w->c, ".slice"))
			continue;
		if (!is_unit(w->c))
			return 0;
		*unit = w->c;
		return 1;
	} while (walk_next(w));
	return 0;
}

static void fill_units(const char *p, const char *end, struct peercgroup_class *out)
{
	struct walk w;
	struct str unit;

	if (p == end)
		return;
	walk_start(&w, p, end);
	if (!find_unit(&w, &unit))
		return;
	copy_name(out->unit, sizeof(out->unit), unit, 0);
	if (slice_uid(unit, "user@", ".service") < 0 || !walk_next(&w))
		return;
	if (find_unit(&w, &unit))
		copy_name(out->user_unit, sizeof(out->user_unit), unit, 0);
}

/* ---- the caller's cgroup namespace ---- */

/* 0: not looked yet; 1: initial; 2: child (or cannot tell). */
static atomic_int caller_ns;

static int look_at_ns(const char *file)
{
	struct stat st;

	if (stat(file, &st) == 0)
		return st.st_ino == INITIAL_CGROUP_NS_INO ? 1 : 2;
	return 0;
}

static int caller_in_initial_ns(void)
{
	int v = atomic_load_explicit(&caller_ns, memory_order_relaxed);

	if (v == 0) {
		v = look_at_ns("/proc/self/ns/cgroup");
		v = v ? v : 2;	/* no /proc: never claim the host */
		atomic_store_explicit(&caller_ns, v, memory_order_relaxed);
	}
	return v == 1;
}

/*
 * The calling thread's: namespaces are per thread (unshare() in one
 * thread moves that one), and the module answers in the caller's.
 */
PCG_HIDDEN unsigned int pcg_caller_ns_now(void)
{
	int v = look_at_ns("/proc/thread-self/ns/cgroup");

	v = v ? v : look_at_ns("/proc/self/ns/cgroup");
	return v == 1 ? PEERCGROUP_CLASSIFY_INITIAL_NS : PEERCGROUP_CLASSIFY_CHILD_NS;
}

/* ---- the classifier ---- */

static void reset(struct peercgroup_class *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime = PEERCGROUP_RT_UNKNOWN;
	out->uid = -1;
}

/* Validates @path and skips the leading "/.." run: returns the start of
 * the rest (== end if none), or NULL if @path is not a cgroup path. */
static const char *validate(const char *path, size_t len, uint32_t *up)
{
	const char *p = path, *end = path + len, *rest;
	struct walk w;

	*up = 0;
	if (*p == '/')
		p++;
	rest = p;
	if (p == end)
		return rest;
	walk_start(&w, p, end);
	while (eq(w.c, "..")) {
		(*up)++;
		if (!walk_next(&w))
			return end;
	}
	rest = w.c.s;
	do {
		if (w.c.n == 0 || w.c.n > CGROUP_NAME_MAX || eq(w.c, ".") || eq(w.c, ".."))
			return NULL;
	} while (walk_next(&w));
	return rest;
}

/*
 * *@named: the deepest component whose name the answer rests on (the
 * container's, the application's, or, with no container found, the pod's,
 * else the QoS level's, else the first "kubepods"), or NULL.  Whoever
 * could create a cgroup beside it chose that name, and the names above it
 * are those of cgroups its maker chose to create it in
 * (pcg_cgroup_name_proven(), owner.c).
 */
static void classify(const char *p, const char *end, struct peercgroup_class *out,
		     const char **named)
{
	struct context x = { .parent = { "", 0 } };
	struct str unit = { NULL, 0 }, first;
	struct walk w;
	int user_slice = 0, found = 0, app = 0, in_user_manager = 0, leading = 1;
	size_t i;

	*named = NULL;
	walk_start(&w, p, end);
	first = w.c;
	x.ecs = eq(first, "ecs");
	for (;; x.parent = w.c, x.depth++, walk_next(&w)) {
		struct str c = w.c;
		int64_t uid;

		for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
			if (match_rule(&rules[i], &x, c, out)) {
				found = 1;
				break;
			}
		if (found) {
			*named = c.s;
			/* nspawn splits itself off from its payload */
			if ((out->runtime == PEERCGROUP_RT_NSPAWN ||
			     out->runtime == PEERCGROUP_RT_MACHINE) &&
			    walk_next(&w) && eq(w.c, "supervisor"))
				out->flags |= PEERCGROUP_CT_MONITOR;
			break;
		}
		if (match_cgroups_path(c, out)) {
			*named = c.s;
			found = 1;
			break;
		}
		if (x.ecs && x.depth == 1) {	/* /ecs/<task>[/<container>] */
			*named = c.s;
			if (c.n < sizeof(out->pod))
				copy_name(out->pod, sizeof(out->pod), c, 0);
			out->runtime = PEERCGROUP_RT_ECS;
			if (walk_next(&w)) {
				copy_name(out->id, sizeof(out->id), w.c, 0);
				*named = w.c.s;
			}
			found = 1;
			break;
		}
		if (is_kubepods(c)) {
			if (!x.kube)
				*named = c.s;
			x.kube = 1;
		} else if (x.kube) {
			/* The first pod is the peer's: below it, a container
			 * given its own subtree may name cgroups anything. */
			if (!out->pod[0] && kube_context(c, out))
				*named = c.s;
			/* cgroupfs driver: /kubepods/<qos>/pod<uid>/<container id> */
			if (out->pod[0] && is_hex64(c) && has_prefix(x.parent, "pod")) {
				memcpy(out->id, c.s, c.n);
				out->id[c.n] = '\0';
				out->runtime = PEERCGROUP_RT_KUBERNETES;
				*named = c.s;
				found = 1;
				break;
			}
		} else if (x.libpod) {
			if (is_hex64(c))	/* cgroupfs pod: /libpod_parent/<pod id>/ */
				memcpy(out->pod, c.s, 64), out->pod[64] = '\0';
		} else if (is_hex64(c)) {
			/* docker --cgroup-parent under cgroupfs: /<parent>/<id> */
			memcpy(out->id, c.s, c.n);
			out->id[c.n] = '\0';
			out->runtime = PEERCGROUP_RT_DOCKER;
			*named = c.s;
			found = 1;
			break;
		}
		if (eq(c, "libpod_parent"))
			x.libpod = 1;
		/* Desktop applications live in the user's service manager; a
		 * system unit that happens to start with "app-" is not one. */
		if (match_snap(c, out) ||
		    (in_user_manager && (match_flatpak(c, out) || match_app(c, out)))) {
			app = 1;
			unit = c;
			*named = c.s;
			break;
		}
		if (eq(c, "user.slice") && x.depth == 0)
			user_slice = 1;
		/*
		 * The owner, as systemd's cg_path_get_owner_uid() and
		 * _user_unit() find it: only in the slices from the top and
		 * the first unit after them.  Below, a delegated subtree may
		 * name its cgroups anything.
		 */
		if (leading && out->uid < 0 && (uid = slice_uid(c, "user-", ".slice")) >= 0)
			out->uid = uid;
		if (leading && (uid = slice_uid(c, "user@", ".service")) >= 0) {
			in_user_manager = 1;
			out->flags |= PEERCGROUP_CT_ROOTLESS;
			if (out->uid < 0)
				out->uid = uid;
		}
		/* podman pods: machine-libpod_pod_<id>.slice, user-libpod_pod_<id>.slice */
		if (!out->pod[0] && has_suffix(c, ".slice")) {
			const char *pp = memmem(c.s, c.n, "libpod_pod_", 11);

			if (pp) {
				struct str id = { pp + 11, (size_t)(c.s + c.n - 6 - (pp + 11)) };

				if (is_hex64(id)) {
					memcpy(out->pod, id.s, 64), out->pod[64] = '\0';
					/* kept with no container found only there */
					if (x.kube)
						*named = c.s;
				}
			}
		}
		if (is_unit(c))
			unit = c;
		leading = leading && has_suffix(c, ".slice");
		if (!w.more)
			break;
	}

	if (x.kube && !app) {
		out->flags |= PEERCGROUP_CT_KUBERNETES;
		if (out->pod[0] && !out->qos[0])
			strcpy(out->qos, "guaranteed");	/* no QoS level in the path */
		if (!found)
			out->runtime = PEERCGROUP_RT_KUBERNETES;
		return;
	}
	if (found)
		return;

	/* Not a container: only meaningful facts below, never a guess. */
	out->flags &= ~PEERCGROUP_CT_ROOTLESS;
	out->pod[0] = '\0';
	if (app)
		;	/* runtime set by the match */
	else if (user_slice)
		out->runtime = PEERCGROUP_RT_USER_SESSION;
	else if (unit.s && (eq(first, "system.slice") || eq(first, "init.scope")))
		out->runtime = PEERCGROUP_RT_SYSTEM_SERVICE;
	if (out->runtime != PEERCGROUP_RT_UNKNOWN && unit.s)
		copy_name(out->id, sizeof(out->id), unit, 0);
}

/* The whole result, into the library's own struct; *@named as classify(). */
static int classify_full(const char *path, size_t len, unsigned int flags,
			 struct peercgroup_class *out, const char **named)
{
	const char *rest, *end;
	int initial;

	*named = NULL;
	reset(out);
	if ((flags & ~(PEERCGROUP_CLASSIFY_INITIAL_NS | PEERCGROUP_CLASSIFY_CHILD_NS)) ||
	    flags == (PEERCGROUP_CLASSIFY_INITIAL_NS | PEERCGROUP_CLASSIFY_CHILD_NS))
		return -EINVAL;
	if (!path || len == 0 || len > MAX_PATH_LEN || memchr(path, '\0', len))
		return -EINVAL;
	end = path + len;
	rest = validate(path, len, &out->up);
	if (!rest)
		return -EINVAL;
	if (flags)
		initial = flags == PEERCGROUP_CLASSIFY_INITIAL_NS;
	else
		initial = caller_in_initial_ns();
	if (out->up) {	/* only a child namespace can see "/.." */
		out->flags |= PEERCGROUP_CT_OUTSIDE;
		initial = 0;
	}
	if (!initial)
		out->flags |= PEERCGROUP_CT_NAMESPACED;

	if (rest == end) {
		/* The root of the caller's view: the host only from the
		 * initial namespace; an ancestor of it is unknown. */
		if (!out->up && initial)
			out->runtime = PEERCGROUP_RT_HOST;
		return 0;
	}
	classify(rest, end, out, named);
	fill_units(rest, end, out);
	return 0;
}

PCG_HIDDEN int pcg_classify_named(const char *path, size_t len, unsigned int flags,
				  struct peercgroup_class *out, const char **named)
{
	struct peercgroup_class full;
	uint32_t size;
	int r;

	*named = NULL;
	if (!out || out->size < PEERCGROUP_CLASS_SIZE_VER0)
		return -EINVAL;
	size = out->size;
	r = classify_full(path, len, flags, &full, named);
	if (r < 0)
		reset(&full);
	full.size = size < sizeof(full) ? size : (uint32_t)sizeof(full);
	memcpy(out, &full, full.size);
	if (size > full.size)	/* a newer caller: its extra fields are empty */
		memset((char *)out + full.size, 0, size - full.size);
	return r;
}

PUBLIC int peercgroup_classify_path(const char *path, size_t len, unsigned int flags,
				    struct peercgroup_class *out)
{
	const char *named;

	return pcg_classify_named(path, len, flags, out, &named);
}

PUBLIC int peercgroup_classify(const char *path, size_t len,
			       struct peercgroup_container *out)
{
	struct peercgroup_class full;
	const char *named;
	int r;

	if (!out)
		return -EINVAL;
	r = classify_full(path, len, 0, &full, &named);
	if (r < 0)
		reset(&full);
	memset(out, 0, sizeof(*out));
	out->runtime = (enum peercgroup_runtime)full.runtime;
	out->flags = full.flags;
	out->uid = full.uid;
	memcpy(out->id, full.id, sizeof(out->id));
	memcpy(out->pod, full.pod, sizeof(out->pod));
	memcpy(out->qos, full.qos, sizeof(out->qos));
	return r;
}
