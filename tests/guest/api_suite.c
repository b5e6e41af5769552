// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library's daemon-facing API against the real module: the
 * sd_peer_get_*()-like getters (compared with the kernel's own
 * /proc/PID/cgroup), the sandboxed-daemon errors (a node hidden by a private
 * /dev, a node the caller may not open), the device cache in a _Fork()
 * child, and the example responder's policy decisions over real clients.
 * Runs as root in the guest, cgroup2 at CGROOT.  Usage: api_suite [TEST]
 */
#include "guest.h"

#include <linux/net.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>

#include "peercgroup.h"
#include "internal.h"

#define RESPONDER "/bin/responder"

/* mkdir -p under CGROOT; each level created is removed after the test. */
static int cg_make(const char *path)
{
	char p[PATH_MAX];
	size_t i;

	snprintf(p, sizeof(p), "%s", path);
	for (i = 0; p[i]; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		if (cg_create(p))
			return -1;
		p[i] = '/';
	}
	return cg_create(p);
}

/* The runner kills, closes and removes what a test leaves; these say so
 * where a value is at hand. */
static pid_t defer_kill_pid(pid_t pid)
{
	if (pid > 0)
		defer_kill(pid);
	return pid;
}

static int defer_close_fd(int fd)
{
	if (fd >= 0)
		defer_close(fd);
	return fd;
}

/*
 * A peer: a child that enters @cg, connects to the abstract @name and
 * stays until the server closes.  Returns its pid.
 */
static pid_t peer_in(const char *cg, const char *name)
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;
		int fd;

		if (cg_move(cg, 0))
			_exit(10);
		fd = connect_to(name, SOCK_STREAM);
		if (fd < 0)
			_exit(11);
		while (read(fd, &c, 1) > 0)
			;
		_exit(0);
	}
	return pid;
}

/* The server side of one peer in @cg: *@fd is the accepted socket.  Each
 * call listens on a new name: earlier peers still hold their copy of the
 * earlier listeners. */
static int accept_peer(const char *cg, int *fd, pid_t *pid)
{
	static int calls;
	char name[32];
	int l;

	snprintf(name, sizeof(name), "api-getters-%d", calls++);
	l = listen_on(name, SOCK_STREAM);
	*fd = -1;
	if (l < 0)
		return -1;
	*pid = defer_kill_pid(peer_in(cg, name));
	if (*pid > 0)
		*fd = defer_close_fd(accept4(l, NULL, NULL, SOCK_CLOEXEC));
	close(l);
	return *fd < 0 ? -1 : 0;
}

struct want {
	const char *cg;
	const char *unit, *user_unit, *machine, *container;
	long long uid;
	enum peercgroup_runtime runtime;
};

static const struct want wants[] = {
	{ "system.slice/sshd.service", "sshd.service", NULL, NULL, NULL, -1,
	  PEERCGROUP_RT_SYSTEM_SERVICE },
	{ "user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.gnome.Maps-42.scope",
	  "user@1000.service", "app-gnome-org.gnome.Maps-42.scope", NULL, NULL, 1000,
	  PEERCGROUP_RT_APP },
	{ "machine.slice/systemd-nspawn@deb.service/payload", "systemd-nspawn@deb.service", NULL,
	  "deb", "deb", -1, PEERCGROUP_RT_NSPAWN },
	/* the supervisor is nspawn itself: a machine, not a container */
	{ "machine.slice/systemd-nspawn@deb.service/supervisor", "systemd-nspawn@deb.service", NULL,
	  "deb", NULL, -1, PEERCGROUP_RT_NSPAWN },
	{ "lxc.payload.web01", NULL, NULL, NULL, "web01", -1, PEERCGROUP_RT_LXC },
	{ "lxc.monitor.web01", NULL, NULL, NULL, NULL, -1, PEERCGROUP_RT_LXC },
	/* any user may name a cgroup of its own after a real container */
	{ "user.slice/user-1001.slice/user@1001.service/app.slice/lxc.payload.web01",
	  "user@1001.service", NULL, NULL, NULL, 1001, PEERCGROUP_RT_LXC },
	{ "user.slice/user-1001.slice/user@1001.service/app.slice/systemd-nspawn@deb.service/payload",
	  "user@1001.service", "systemd-nspawn@deb.service", NULL, NULL, 1001,
	  PEERCGROUP_RT_NSPAWN },
};

/* -ENXIO, or 0 and the string equal to @want. */
#define CHECK_GOT(r, s, want) do {						\
	if (want) {								\
		CHECK((r) == 0 && (s) && !strcmp((s), (want)),			\
		      "%s: %s: expected \"%s\", got %d \"%s\"", w->cg, #r,	\
		      (want), (r), (s) ? (s) : "(null)");			\
	} else {								\
		CHECK((r) == -ENXIO, "%s: %s: expected -ENXIO, got %d \"%s\"",	\
		      w->cg, #r, (r), (s) ? (s) : "(null)");			\
	}									\
	free(s);								\
	s = NULL;								\
} while (0)

static void check_getters(const struct want *w)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	enum peercgroup_runtime rt;
	char truth[PATH_MAX], *s = NULL;
	int fd, r;
	pid_t pid;
	uid_t uid;

	SYS(cg_make(w->cg));
	SYS(accept_peer(w->cg, &fd, &pid));
	/* the kernel's own truth: the peer's /proc/PID/cgroup */
	SYS(proc_cgroup(pid, truth, sizeof(truth)));
	CHECK(truth[0] == '/' && !strcmp(truth + 1, w->cg), "peer is in %s, not /%s", truth, w->cg);
	r = peercgroup_peer_classify(fd, 0, &c);
	CHECK_INT(0, r);
	CHECK_INT(w->runtime, c.runtime);
	r = peercgroup_peer_get_unit(fd, &s);
	CHECK_GOT(r, s, w->unit);
	r = peercgroup_peer_get_user_unit(fd, &s);
	CHECK_GOT(r, s, w->user_unit);
	r = peercgroup_peer_get_machine_name(fd, &s);
	CHECK_GOT(r, s, w->machine);
	r = peercgroup_peer_get_container(fd, &rt, &s);
	CHECK_GOT(r, s, w->container);
	r = peercgroup_peer_get_owner_uid(fd, &uid);
	if (w->uid >= 0) {
		CHECK_INT(0, r);
		CHECK_INT(w->uid, uid);
	} else {
		CHECK_INT(-ENXIO, r);
	}
}

static void a_getters_match_the_kernel(void)
{
	size_t i;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		check_getters(&wants[i]);
}

/*
 * A service with Delegate=yes and User= owns its cgroup (systemd chown()s
 * it to the user), so the cgroups the user makes below may bear any
 * container's name.  Such a name is flagged and named by no getter; the
 * same names in a parent that root owns are the container's.
 */
#define DELEGATED "system.slice/deleg.service"
#define DELEGATED_UID 1000
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* mkdir @cg as the delegated user, as that user's own service would. */
static int user_mkdir(const char *cg)
{
	char p[PATH_MAX];
	int status;
	pid_t pid;

	if (cg_file(p, sizeof(p), cg, ""))
		return -1;
	pid = fork();
	if (pid == 0)
		_exit(setresgid(DELEGATED_UID, DELEGATED_UID, DELEGATED_UID) ||
		      setresuid(DELEGATED_UID, DELEGATED_UID, DELEGATED_UID) ||
		      mkdir(p, 0755));
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	defer_cgroup(cg);	/* removed before its parent */
	return 0;
}

/* The peer in @cg, its owner by stat() beside: UNPROVEN iff @unproven. */
static void check_named(const char *cg, uid_t owner, uid_t parent_owner, bool unproven,
			enum peercgroup_runtime runtime, const char *id)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	char p[PATH_MAX], truth[PATH_MAX], *s = NULL;
	enum peercgroup_runtime rt;
	uint64_t cgid;
	struct stat st;
	int fd, r;
	pid_t pid;

	SYS(accept_peer(cg, &fd, &pid));
	/* the kernel's truth: where the peer is, who owns it, its id */
	SYS(proc_cgroup(pid, truth, sizeof(truth)));
	CHECK(truth[0] == '/' && !strcmp(truth + 1, cg), "peer is in %s, not /%s", truth, cg);
	SYS(cg_file(p, sizeof(p), cg, ".."));
	SYS(stat(p, &st));
	CHECK_INT(parent_owner, st.st_uid);
	SYS(cg_file(p, sizeof(p), cg, ""));
	SYS(stat(p, &st));
	CHECK_INT(owner, st.st_uid);
	CHECK_INT(0, peercgroup_get_id(fd, &cgid));
	CHECK(st.st_ino == cgid, "%s: inode %llu, module id %llu", cg,
	      (unsigned long long)st.st_ino, (unsigned long long)cgid);

	CHECK_INT(0, peercgroup_peer_classify(fd, 0, &c));
	CHECK_INT(runtime, c.runtime);
	CHECK(!strcmp(c.id, id), "%s: id \"%s\"", cg, c.id);
	CHECK(!!(c.flags & PEERCGROUP_CT_UNPROVEN) == unproven, "%s: flags %#x", cg, c.flags);
	r = peercgroup_peer_get_container(fd, &rt, &s);
	if (unproven) {
		CHECK(r == -ENXIO && !s, "%s: container %d \"%s\"", cg, r, s ? s : "");
	} else {
		CHECK(r == 0 && s && !strcmp(s, id) && rt == runtime,
		      "%s: container %d \"%s\"", cg, r, s ? s : "");
	}
	free(s);
	s = NULL;
	if (runtime == PEERCGROUP_RT_NSPAWN) {
		r = peercgroup_peer_get_machine_name(fd, &s);
		CHECK(unproven ? r == -ENXIO : r == 0 && !strcmp(s, id),
		      "%s: machine %d \"%s\"", cg, r, s ? s : "");
		free(s);
	}
}

static void a_delegated_subtree_names_no_container(void)
{
	static const struct {
		const char *name, *id;
		enum peercgroup_runtime runtime;
	} names[] = {
		{ "lxc.payload.web01", "web01", PEERCGROUP_RT_LXC },
		{ HEX64, HEX64, PEERCGROUP_RT_DOCKER },	/* cgroupfs --cgroup-parent */
		{ "systemd-nspawn@deb.service", "deb", PEERCGROUP_RT_NSPAWN },
		{ "libpod-payload-" HEX64, HEX64, PEERCGROUP_RT_PODMAN },	/* quadlet */
	};
	char cg[PATH_MAX - 64];
	size_t i;

	SYS(cg_make(DELEGATED));
	SYS(cg_make("system.slice/root.service"));
	SYS(chown(CGROOT "/" DELEGATED, DELEGATED_UID, DELEGATED_UID));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(cg, sizeof(cg), DELEGATED "/%s", names[i].name);
		SYS(user_mkdir(cg));
		check_named(cg, DELEGATED_UID, DELEGATED_UID, true,
			    names[i].runtime, names[i].id);
		/* root's own service: root chose the name */
		snprintf(cg, sizeof(cg), "system.slice/root.service/%s", names[i].name);
		SYS(cg_make(cg));
		check_named(cg, 0, 0, false, names[i].runtime, names[i].id);
	}
	/* the parent's owner decides, not who made the cgroup itself */
	snprintf(cg, sizeof(cg), DELEGATED "/%s", names[0].name);
	SYS(chown(CGROOT "/" DELEGATED, 0, 0));
	check_named(cg, DELEGATED_UID, 0, false, names[0].runtime, names[0].id);
	/* nor may anyone but root write that parent */
	SYS(chmod(CGROOT "/" DELEGATED, 0775));
	check_named(cg, DELEGATED_UID, 0, true, names[0].runtime, names[0].id);
	SYS(chmod(CGROOT "/" DELEGATED, 0755));
}

/*
 * A container given its own subtree (a pod that runs systemd, rootless
 * podman in a pod) may name its cgroups after another pod, and a task's
 * cgroup given to a user may hold any container's name.  The first pod
 * below kubepods is the peer's, and the proof looks at the cgroup the
 * deepest name read was made in.
 */
#define POD_A "kubepods/burstable/pod0f3c5d6e-1a2b-4c3d-9e8f-7a6b5c4d3e2f"
#define POD_B "pod11111111-2222-3333-4444-555555555555"

static void a_container_subtree_names_no_pod(void)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	int fd;
	pid_t pid;

	SYS(cg_make(POD_A "/ctr"));
	SYS(chown(CGROOT "/" POD_A "/ctr", DELEGATED_UID, DELEGATED_UID));
	SYS(user_mkdir(POD_A "/ctr/" POD_B));
	SYS(accept_peer(POD_A "/ctr/" POD_B, &fd, &pid));
	CHECK_INT(0, peercgroup_peer_classify(fd, 0, &c));
	CHECK_INT(PEERCGROUP_RT_KUBERNETES, c.runtime);
	CHECK(!strcmp(c.pod, "0f3c5d6e-1a2b-4c3d-9e8f-7a6b5c4d3e2f"), "pod \"%s\"", c.pod);
	CHECK(!(c.flags & PEERCGROUP_CT_UNPROVEN), "flags %#x", c.flags);

	SYS(cg_make("ecs/task1"));
	SYS(chown(CGROOT "/ecs/task1", DELEGATED_UID, DELEGATED_UID));
	SYS(user_mkdir("ecs/task1/" HEX64));
	check_named("ecs/task1/" HEX64, DELEGATED_UID, DELEGATED_UID, true,
		    PEERCGROUP_RT_ECS, HEX64);
	SYS(cg_make("ecs/task2/" HEX64));
	check_named("ecs/task2/" HEX64, 0, 0, false, PEERCGROUP_RT_ECS, HEX64);
}

/*
 * A mount below the cgroup2 mount shows what it holds at a cgroup's path:
 * a root-owned tmpfs on the user's cgroup, the peer's own cgroup bound
 * inside it, would make the user's name look root's.  The proof looks on
 * the cgroup2 mount alone, where only a cgroup bound on its own path shows
 * the same directory.
 */
struct mounted_parent {
	int fd;
	uint64_t id;
};

static void proof_under_a_mount(void *arg)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	struct mounted_parent *m = arg;
	char src[64];
	struct stat st;
	int cg_fd;

	SYS(enter_mount_namespace(0));
	/* of this namespace's mount: bind mounts take no other */
	SYS(cg_fd = open(CGROOT "/" DELEGATED "/" HEX64, O_PATH | O_DIRECTORY | O_CLOEXEC));
	SYS(mount("tmpfs", CGROOT "/" DELEGATED, "tmpfs", 0, "mode=0755"));
	SYS(mkdir(CGROOT "/" DELEGATED "/" HEX64, 0755));
	snprintf(src, sizeof(src), "/proc/self/fd/%d", cg_fd);
	SYS(mount(src, CGROOT "/" DELEGATED "/" HEX64, NULL, MS_BIND, NULL));
	/* what a look-up that crosses mounts sees: the id, a parent of root's */
	SYS(stat(CGROOT "/" DELEGATED "/" HEX64, &st));
	CHECK_INT(m->id, st.st_ino);
	SYS(stat(CGROOT "/" DELEGATED, &st));
	CHECK(st.st_uid == 0 && (st.st_mode & 0777) == 0755, "tmpfs %o, uid %u",
	      st.st_mode & 0777, st.st_uid);
	CHECK_INT(0, peercgroup_peer_classify(m->fd, 0, &c));
	CHECK_INT(PEERCGROUP_RT_DOCKER, c.runtime);
	CHECK(c.flags & PEERCGROUP_CT_UNPROVEN, "flags %#x: the user's name proven", c.flags);

	/* cgroups bound on themselves (systemd-nspawn's, writable) are theirs */
	SYS(umount2(CGROOT "/" DELEGATED "/" HEX64, MNT_DETACH));
	SYS(umount2(CGROOT "/" DELEGATED, MNT_DETACH));
	SYS(chown(CGROOT "/" DELEGATED, 0, 0));
	SYS(mount(CGROOT "/" DELEGATED, CGROOT "/" DELEGATED, NULL, MS_BIND, NULL));
	SYS(mount(CGROOT "/" DELEGATED "/" HEX64, CGROOT "/" DELEGATED "/" HEX64, NULL,
		  MS_BIND, NULL));
	CHECK_INT(0, peercgroup_peer_classify(m->fd, 0, &c));
	CHECK(!(c.flags & PEERCGROUP_CT_UNPROVEN), "flags %#x: root's name unproven", c.flags);
}

static void a_mount_proves_no_name(void)
{
	struct mounted_parent m;
	pid_t pid;

	SYS(cg_make(DELEGATED));
	SYS(chown(CGROOT "/" DELEGATED, DELEGATED_UID, DELEGATED_UID));
	SYS(user_mkdir(DELEGATED "/" HEX64));
	SYS(accept_peer(DELEGATED "/" HEX64, &m.fd, &pid));
	CHECK_INT(0, peercgroup_get_id(m.fd, &m.id));
	t_in_child(proof_under_a_mount, &m);
}

/*
 * A daemon whose cgroup namespace is rooted inside a user's service
 * manager (a container started by that user, say) does not see
 * user@UID.service in the path, so nothing in the path says rootless; the
 * cgroup that bears the container's name is still the user's.  It sees
 * cgroup2 as its namespace shows it (a mount made there), gets the socket
 * by SCM_RIGHTS once inside, and no getter names the container.
 */
#define USER_MANAGER "user.slice/user-1001.slice/user@1001.service"

static void rootless_from_its_namespace(void *arg)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	enum peercgroup_runtime rt;
	char path[PATH_MAX], *s = NULL;
	int fd, r;

	SYS(cg_move(USER_MANAGER, 0));
	SYS(enter_cgroup_namespace(0));
	/* the socket arrives here, as a daemon's would from its listener */
	SYS(fd = recv_fd(*(int *)arg));
	r = peercgroup_get_path_buf(fd, path, sizeof(path));
	CHECK(r > 0 && !strcmp(path, "/app.slice/lxc.payload.web01"), "%d \"%s\"", r, path);
	CHECK_INT(0, peercgroup_peer_classify(fd, 0, &c));
	CHECK_INT(PEERCGROUP_RT_LXC, c.runtime);
	CHECK(!strcmp(c.id, "web01"), "id \"%s\"", c.id);
	CHECK(!(c.flags & PEERCGROUP_CT_ROOTLESS), "flags %#x: rootless seen", c.flags);
	CHECK(c.flags & PEERCGROUP_CT_UNPROVEN, "flags %#x: not unproven", c.flags);
	r = peercgroup_peer_get_container(fd, &rt, &s);
	CHECK(r == -ENXIO && !s, "container %d \"%s\"", r, s ? s : "");
	free(s);
	/* the same, where the user's cgroup is root's: the name is proven */
	SYS(chown(CGROOT "/app.slice", 0, 0));
	r = peercgroup_peer_get_container(fd, &rt, &s);
	CHECK(r == 0 && s && !strcmp(s, "web01"), "container %d \"%s\"", r, s ? s : "");
	free(s);
}

static void a_rootless_seen_from_its_cgroup_namespace(void)
{
	char path[PATH_MAX];
	int fd, sv[2];
	pid_t pid;

	SYS(cg_make(USER_MANAGER "/app.slice/lxc.payload.web01"));
	SYS(chown(CGROOT "/" USER_MANAGER "/app.slice", 1001, 1001));
	SYS(accept_peer(USER_MANAGER "/app.slice/lxc.payload.web01", &fd, &pid));
	SYS(proc_cgroup(pid, path, sizeof(path)));
	CHECK(!strcmp(path, "/" USER_MANAGER "/app.slice/lxc.payload.web01"), "peer in %s", path);
	/* passed by SCM_RIGHTS, and ours closed: the daemon has the only one */
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(send_fd(sv[0], fd));
	close(fd);
	t_in_child(rootless_from_its_namespace, &sv[1]);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A daemon in a pod's container, in that container's cgroup namespace (as
 * Kubernetes runs every container on cgroup v2), with the namespace's own
 * cgroup2 mount.  A peer in the pod's other container is outside its
 * namespace: /proc there says "/../<id>", and so does the module; the
 * name cannot be proven, and no getter names the container, the pod or a
 * unit.  A peer below its own container's cgroup is inside: namespaced,
 * never the host, and no pod either (kubepods is not in its path), though
 * the daemon classified a path before it entered its namespace.
 */
#define POD_CTR_A POD_A "/" HEX64
#define HEX64_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

/* @arg: where the two sockets come, by SCM_RIGHTS: the sibling's first */
static void pod_from_its_namespace(void *arg)
{
	int via = *(int *)arg;
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	enum peercgroup_runtime rt;
	char path[PATH_MAX], *s = NULL;
	int sibling, inside, r;

	/* the library's once-per-process look, taken in the host's namespace */
	CHECK_INT(0, peercgroup_classify_path("/", 1, 0, &c));
	CHECK_INT(PEERCGROUP_RT_HOST, c.runtime);
	SYS(cg_move(POD_CTR_A, 0));
	SYS(enter_cgroup_namespace(0));
	SYS(sibling = recv_fd(via));
	SYS(inside = recv_fd(via));

	r = peercgroup_get_path_buf(sibling, path, sizeof(path));
	CHECK(r > 0 && !strcmp(path, "/../" HEX64_B), "%d \"%s\"", r, path);
	CHECK_INT(0, peercgroup_peer_classify(sibling, 0, &c));
	CHECK(!strcmp(c.id, HEX64_B), "id \"%s\"", c.id);
	CHECK_STR("", c.pod);
	CHECK_INT(1, c.up);
	CHECK((c.flags & (PEERCGROUP_CT_OUTSIDE | PEERCGROUP_CT_NAMESPACED |
			  PEERCGROUP_CT_UNPROVEN)) ==
	      (PEERCGROUP_CT_OUTSIDE | PEERCGROUP_CT_NAMESPACED | PEERCGROUP_CT_UNPROVEN),
	      "flags %#x", c.flags);
	r = peercgroup_peer_get_container(sibling, &rt, &s);
	CHECK(r == -ENXIO && !s, "container %d \"%s\"", r, s ? s : "");
	CHECK_INT(-ENXIO, peercgroup_peer_get_unit(sibling, &s));

	r = peercgroup_get_path_buf(inside, path, sizeof(path));
	CHECK(r > 0 && !strcmp(path, "/sub"), "%d \"%s\"", r, path);
	CHECK_INT(0, peercgroup_peer_classify(inside, 0, &c));
	CHECK_STR("", c.pod);
	CHECK_INT(0, c.up);
	CHECK(c.runtime != PEERCGROUP_RT_HOST, "runtime %d: the host", (int)c.runtime);
	CHECK((c.flags & (PEERCGROUP_CT_OUTSIDE | PEERCGROUP_CT_NAMESPACED)) ==
	      PEERCGROUP_CT_NAMESPACED, "flags %#x", c.flags);
	r = peercgroup_peer_get_container(inside, &rt, &s);
	CHECK(r == -ENXIO && !s, "container %d \"%s\"", r, s ? s : "");
}

static void a_pod_seen_from_its_container_namespace(void)
{
	int sibling, inside, sv[2];
	pid_t pid;

	SYS(cg_make(POD_CTR_A "/sub"));
	SYS(cg_make(POD_A "/" HEX64_B));
	SYS(accept_peer(POD_A "/" HEX64_B, &sibling, &pid));
	SYS(accept_peer(POD_CTR_A "/sub", &inside, &pid));
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	SYS(send_fd(sv[0], sibling));
	SYS(send_fd(sv[0], inside));
	t_in_child(pod_from_its_namespace, &sv[1]);
	close(sv[0]);
	close(sv[1]);
}

/* The getters answer from the connect-time record; only GET_LIVE sees a move. */
static void a_getters_are_connect_time(void)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	char *unit = NULL;
	int fd, r;
	pid_t pid;

	SYS(cg_make("system.slice/before.service"));
	SYS(cg_make("system.slice/after.service"));
	SYS(accept_peer("system.slice/before.service", &fd, &pid));
	SYS(cg_move("system.slice/after.service", pid));
	r = peercgroup_peer_get_unit(fd, &unit);
	CHECK(r == 0 && unit && !strcmp(unit, "before.service"), "unit: %d %s", r, unit);
	free(unit);
	SYS(peercgroup_peer_classify(fd, PEERCGROUP_GET_LIVE, &c));
	CHECK_STR("after.service", c.unit);
}

/* PrivateDevices=yes: a fresh /dev without our node. */
static int hide_dev(void)
{
	if (enter_mount_namespace(0))
		return -1;
	return mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755");
}

static void hidden_node(void *arg)
{
	int r;

	(void)arg;
	SYS(hide_dev());
	r = peercgroup_open_device();
	CHECK_INT(-ENODEV, r);
	CHECK(strstr(peercgroup_strerror(r), "DeviceAllow=/dev/peercgroup") &&
	      strstr(peercgroup_strerror(r), "BindReadOnlyPaths=/dev/peercgroup"),
	      "message names no fix: %s", peercgroup_strerror(r));
}

static void a_sandbox_hidden_node_says_deviceallow(void)
{
	t_in_child(hidden_node, NULL);
}

static void open_then_hide(void *arg)
{
	struct peercgroup_info info;
	int sv[2];

	(void)arg;
	SYS(peercgroup_open_device());
	SYS(hide_dev());
	SYS(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK_INT(0, peercgroup_get(sv[0], 0, &info));
	CHECK_INT(getpid(), info.pid);
	peercgroup_info_free(&info);
}

static void a_sandbox_open_before_hiding_keeps_working(void)
{
	t_in_child(open_then_hide, NULL);
}

/* A node this (unprivileged) caller may not open. */
static void denied_node(void *arg)
{
	struct stat st;
	int r;

	(void)arg;
	SYS(stat(PEERCGROUP_DEVICE_PATH, &st));
	SYS(hide_dev());
	SYS(mknod(PEERCGROUP_DEVICE_PATH, S_IFCHR | 0600, st.st_rdev));
	SYS(setgid(65534));
	SYS(setuid(65534));
	r = peercgroup_open_device();
	CHECK_INT(-EACCES, r);
	CHECK(strstr(peercgroup_strerror(r), "DeviceAllow=/dev/peercgroup"),
	      "message names no fix: %s", peercgroup_strerror(r));
}

static void a_sandbox_denied_node_says_deviceallow(void)
{
	t_in_child(denied_node, NULL);
}

/*
 * A _Fork() child (no atfork handlers) closes the library's descriptor and
 * a regular file takes its number: the query must still reach the module.
 */
static void a_fork_child_never_reuses_a_stale_fd(void)
{
	struct peercgroup_info info;
	int sv[2], status, devfd = -1, fd;
	struct stat dev, st;
	pid_t pid;

	SYS(peercgroup_open_device());
	SYS(stat(PEERCGROUP_DEVICE_PATH, &dev));
	for (fd = 3; fd < 1024 && devfd < 0; fd++)
		if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == dev.st_rdev)
			devfd = fd;
	CHECK(devfd >= 0, "the library's descriptor not found");
	SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = _Fork();
	if (pid == 0) {
		close(devfd);
		if (open("/proc/self/status", O_RDONLY) != devfd)
			_exit(10);
		if (peercgroup_get(sv[0], 0, &info))
			_exit(11);
		_exit(info.pid == getppid() ? 0 : 12);	/* the pair's creator */
	}
	SYS(pid);
	SYS(waitpid(pid, &status, 0));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	close(sv[0]);
	close(sv[1]);
}

/* Until a socket listens on the abstract @name.  Read from /proc/net/unix:
 * a probe that bound the name would hold it for an instant, and a server
 * binding then fails (seen under the debug kernel); a probe that connected
 * would be served as a client. */
static bool wait_listening(const char *name)
{
	char want[sizeof(((struct sockaddr_un *)0)->sun_path) + 1], line[512];
	int i;

	snprintf(want, sizeof(want), "@%s", name);
	for (i = 0; i < 1000; i++) {
		FILE *f = fopen("/proc/net/unix", "re");
		bool listening = false;

		/* Num RefCount Protocol Flags Type St Inode Path */
		while (f && !listening && fgets(line, sizeof(line), f)) {
			char path[sizeof(want)] = "";
			unsigned long flags;

			if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %108s", &flags, path) == 2 &&
			    (flags & __SO_ACCEPTCON) && !strcmp(path, want))
				listening = true;
		}
		if (f)
			fclose(f);
		if (listening)
			return true;
		usleep(10000);
	}
	return false;
}

/* ---- the example responder's decisions ---- */

static const char policy[] =
	"allow  runtime    systemd-service\n"
	"allow  container  lxc:web*\n"
	"allow  app        org.gnome.Maps\n"
	"deny   runtime    kubernetes\n"
	"deny   runtime    *\n";

static const struct {
	const char *cg;
	const char *verdict;
} decisions[] = {
	{ "lxc.payload.web01", "ALLOW" },
	/* the monitor of that very container is not let in by its rule */
	{ "lxc.monitor.web01", "DENY" },
	{ "system.slice/foo.service", "ALLOW" },
	{ "user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.gnome.Maps-7.scope", "ALLOW" },
	{ "user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.evil.Maps-8.scope", "DENY" },
	{ "kubepods/besteffort/pod0f3c5d6e-1a2b-4c3d-9e8f-7a6b5c4d3e2f", "DENY" },
	{ "lxc.payload.db01", "DENY" },
	/* a user's own cgroup, named after that container */
	{ "user.slice/user-1001.slice/user@1001.service/app.slice/lxc.payload.web01", "DENY" },
	/* the same in a service delegated to a user (chown()ed below) */
	{ DELEGATED "/lxc.payload.web01", "DENY" },
	{ "system.slice/root.service/lxc.payload.web01", "ALLOW" },
};

/* A client in @cg asks the responder at @name; *@reply is its first line. */
static int ask_from(const char *cg, const char *name, char *reply, size_t size)
{
	int p[2], status;
	ssize_t n;
	pid_t pid;

	reply[0] = '\0';
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		char buf[512];
		ssize_t got = 0, k;
		int fd;

		close(p[0]);
		if (cg_move(cg, 0) || (fd = connect_to(name, SOCK_STREAM)) < 0)
			_exit(1);
		while ((k = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
			got += k;
		if (write(p[1], buf, (size_t)got) != got)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], reply, size - 1);
	reply[n > 0 ? n : 0] = '\0';
	reply[strcspn(reply, "\n")] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void a_responder_decisions(void)
{
	size_t i, n = sizeof(decisions) / sizeof(decisions[0]);
	char reply[512], count[16];
	int status;
	pid_t rsp;

	if (access(RESPONDER, X_OK)) {
		FAIL("%s missing from the guest", RESPONDER);
	}
	{
		FILE *f = fopen("/tmp/api.policy", "we");

		CHECK(f && fputs(policy, f) >= 0 && fclose(f) == 0, "write policy");
	}
	for (i = 0; i < n; i++)
		SYS(cg_make(decisions[i].cg));
	SYS(chown(CGROOT "/" DELEGATED, DELEGATED_UID, DELEGATED_UID));
	snprintf(count, sizeof(count), "%zu", n);
	rsp = fork();
	if (rsp == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execl(RESPONDER, "responder", "/tmp/api.policy", "@api-responder", count, (char *)NULL);
		_exit(127);
	}
	SYS(defer_kill_pid(rsp));	/* killed if a check fails before it ends */
	CHECK(wait_listening("api-responder"), "the responder never listened");
	for (i = 0; i < n; i++) {
		CHECK(ask_from(decisions[i].cg, "api-responder", reply, sizeof(reply)) == 0,
		      "client in /%s got no reply", decisions[i].cg);
		CHECK(!strncmp(reply, decisions[i].verdict, strlen(decisions[i].verdict)) &&
		      reply[strlen(decisions[i].verdict)] == ' ',
		      "client in /%s: expected %s, got \"%s\"", decisions[i].cg,
		      decisions[i].verdict, reply);
	}
	SYS(waitpid(rsp, &status, 0));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "responder exit %#x", status);
}

/* peercgroup status: every counter the module has, and us as a holder. */
static void a_status_shows_counters_and_holders(void)
{
	char out[8192], line[64];
	size_t n = 0;
	FILE *p;

	SYS(peercgroup_open_device());
	p = popen("/bin/peercgroup status", "r");
	CHECK(p, "popen: %s", strerror(errno));
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	CHECK(strstr(out, "  freed "), "no freed counter in:\n%s", out);
	CHECK(strstr(out, "  live "), "no live counter in:\n%s", out);
	snprintf(line, sizeof(line), "\n  %d api_suite\n", (int)getpid());
	CHECK(strstr(out, line), "this suite (pid %d) not among the holders:\n%s", (int)getpid(), out);
	CHECK(strstr(out, "module refcnt:"), "no refcnt in:\n%s", out);
}

/* "container":{...} to the end of a JSON line, without the closing '}' */
static const char *container_part(char *line)
{
	char *c = strstr(line, "\"container\":");
	size_t n;

	if (!c)
		return "";
	n = strlen(c);
	while (n && (c[n - 1] == '\n' || c[n - 1] == '}'))
		n--;
	c[n] = '\0';
	return c;
}

/* serve --json describes a client's container exactly as classify --json
 * describes its cgroup path. */
static void a_cli_json_same_container_shape(void)
{
	static const char cg[] = "lxc.payload.cli01";
	char served[4096] = "", classified[4096] = "", *a, *b;
	FILE *srv, *cls;
	pid_t client;

	SYS(cg_make(cg));
	srv = popen("/bin/peercgroup --json --count 1 serve @api-cli", "r");
	CHECK(srv, "popen serve: %s", strerror(errno));
	CHECK(wait_listening("api-cli"), "serve never listened");
	client = defer_kill_pid(peer_in(cg, "api-cli"));
	SYS(client);
	if (!fgets(served, sizeof(served), srv))
		served[0] = '\0';
	pclose(srv);
	cls = popen("/bin/peercgroup --json classify /lxc.payload.cli01", "r");
	CHECK(cls, "popen classify: %s", strerror(errno));
	if (!fgets(classified, sizeof(classified), cls))
		classified[0] = '\0';
	pclose(cls);
	a = strdup(served);
	b = strdup(classified);
	CHECK(a && b, "strdup");
	CHECK(strstr(served, "\"path\":\"/lxc.payload.cli01\""), "serve: %s", served);
	CHECK(strstr(classified, "\"runtime\":\"lxc\",\"id\":\"cli01\""), "classify: %s", classified);
	CHECK(!strcmp(container_part(a), container_part(b)),
	      "serve and classify differ:\n  serve:    %s  classify: %s", served, classified);
	free(a);
	free(b);
}

/*
 * peercgroup peer FD in an inetd-style service: the server accepts, and a
 * process of another user in another cgroup, handed the socket as its
 * stdin, prints the client's cgroup and pid, as SO_PEERCRED gives it.
 */
/*
 * Runs "peercgroup --json peer 0" with @fd as its stdin, as uid 65534 and,
 * if @cg, in that cgroup: an inetd-style instance.  Its output goes to
 * @line; returns its wait status, or -1.
 */
static int cli_peer_json(int fd, const char *cg, char *line, size_t size)
{
	size_t len = 0;
	int out[2], status;
	ssize_t n;
	pid_t svc;

	line[0] = '\0';
	if (pipe2(out, O_CLOEXEC))
		return -1;
	svc = fork();
	if (svc == 0) {
		if ((cg && cg_move(cg, 0)) || dup2(fd, 0) < 0 || dup2(out[1], 1) < 0 ||
		    setgid(65534) || setuid(65534))
			_exit(126);
		execl("/bin/peercgroup", "peercgroup", "--json", "peer", "0", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	while (svc > 0 && len < size - 1 && (n = read(out[0], line + len, size - 1 - len)) > 0)
		len += n;
	line[len] = '\0';
	close(out[0]);
	if (svc < 0 || waitpid(svc, &status, 0) < 0)
		return -1;
	return status;
}

static void a_cli_peer_of_a_handed_socket(void)
{
	static const char cg[] = "system.slice/pcg-inetd-client.service";
	char line[4096], want[256];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, status;
	pid_t client;

	SYS(cg_make(cg));
	SYS(cg_make("system.slice/pcg-inetd@0.service"));
	SYS(accept_peer(cg, &fd, &client));
	SYS(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len));
	CHECK_INT(client, cred.pid);
	status = cli_peer_json(fd, "system.slice/pcg-inetd@0.service", line, sizeof(line));
	CHECK(status == 0, "status %#x: %s", status, line);
	snprintf(want, sizeof(want), "{\"pid\":%d,\"cgroup_id\":%llu,\"path\":\"/%s\",", (int)client,
		 (unsigned long long)cg_id(cg), cg);
	CHECK(!strncmp(line, want, strlen(want)), "got %s, want %s...", line, want);
	CHECK(strstr(line, "\"runtime\":\"systemd-service\""), "not a service: %s", line);
}

/*
 * The same instance in a container: a cgroup namespace at CLI_BOX with its
 * own cgroup2 mount, and then a pid namespace too.  Each answer must be
 * what /proc shows there: the path of /proc/PID/cgroup ("/.." included
 * for a client outside the container), and no pid once the client has no
 * number in the instance's pid namespace.  With neither visible, nothing:
 * EREMOTE, exit 7.
 */
#define CLI_BOX "pcg-cli-box"

struct cli_peer {
	int fd;
	pid_t pid;
	uint64_t id;
	const char *container;	/* what its "container" object must hold */
	bool new_pidns;
};

static void cli_peer_from_its_namespace(void *arg)
{
	const struct cli_peer *p = arg;
	char line[4096], path[PATH_MAX], want[PATH_MAX + 128];
	int status;

	SYS(cg_move(CLI_BOX, 0));
	SYS(enter_cgroup_namespace(p->new_pidns ? CLONE_NEWPID : 0));
	/* this process keeps the old /proc's pid namespace; the instance does not */
	SYS(proc_cgroup(p->pid, path, sizeof(path)));
	status = cli_peer_json(p->fd, NULL, line, sizeof(line));
	if (p->new_pidns && !strncmp(path, "/../", 4)) {
		static const char eremote[] = "{\"error\":\"EREMOTE\",";

		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7 &&
		      !strncmp(line, eremote, strlen(eremote)),
		      "status %#x, want exit 7 and EREMOTE alone: %s", status, line);
		return;
	}
	CHECK(status == 0, "status %#x: %s", status, line);
	snprintf(want, sizeof(want), "{\"pid\":%d,\"cgroup_id\":%llu,\"path\":\"%s\",",
		 p->new_pidns ? 0 : (int)p->pid, (unsigned long long)p->id, path);
	CHECK(!strncmp(line, want, strlen(want)), "got %s, want %s...", line, want);
	CHECK(strstr(line, p->container), "got %s, want %s", line, p->container);
	/* the unit getter: past "/.." no name is the top of the tree */
	if (!p->new_pidns) {
		char *unit = NULL;
		int r = peercgroup_peer_get_unit(p->fd, &unit);

		if (!strncmp(path, "/../", 4))
			CHECK(r == -ENXIO && !unit, "outside: unit %d \"%s\"", r, unit ? unit : "");
		else
			CHECK(r == 0 && unit && !strcmp(unit, "pcg-box-client.service"),
			      "inside: unit %d \"%s\"", r, unit ? unit : "");
		free(unit);
	}
}

static void a_cli_peer_inside_a_cgroup_namespace(void)
{
	static const char *const cg[] = {
		CLI_BOX "/system.slice/pcg-box-client.service",
		"system.slice/pcg-host-client.service",
	};
	static const char *const container[] = {
		"\"unit\":\"pcg-box-client.service\"",
		"\"up\":1,\"monitor\":false,\"flags\":[\"outside\",\"namespaced\",\"unproven\"]",
	};
	struct cli_peer p;
	char path[PATH_MAX];
	int i;

	for (i = 0; i < 4; i++) {
		p = (struct cli_peer){ .container = container[i % 2], .new_pidns = i >= 2 };
		SYS(cg_make(cg[i % 2]));
		SYS(accept_peer(cg[i % 2], &p.fd, &p.pid));
		p.id = i % 2 ? 0 : cg_id(cg[i % 2]);	/* outside: never the id */
		SYS(proc_cgroup(p.pid, path, sizeof(path)));
		CHECK(path[0] == '/' && !strcmp(path + 1, cg[i % 2]), "peer in %s", path);
		t_in_child(cli_peer_from_its_namespace, &p);
	}
}

int main(int argc, char **argv)
{
	guest_begin("api", argc, argv);
	if (module_require())
		return 1;
	signal(SIGPIPE, SIG_IGN);
	RUN(a_getters_match_the_kernel);
	RUN(a_getters_are_connect_time);
	RUN(a_delegated_subtree_names_no_container);
	RUN(a_container_subtree_names_no_pod);
	RUN(a_mount_proves_no_name);
	RUN(a_rootless_seen_from_its_cgroup_namespace);
	RUN(a_pod_seen_from_its_container_namespace);
	RUN(a_sandbox_hidden_node_says_deviceallow);
	RUN(a_sandbox_open_before_hiding_keeps_working);
	RUN(a_sandbox_denied_node_says_deviceallow);
	RUN(a_fork_child_never_reuses_a_stale_fd);
	RUN(a_responder_decisions);
	RUN(a_status_shows_counters_and_holders);
	RUN(a_cli_json_same_container_shape);
	RUN(a_cli_peer_of_a_handed_socket);
	RUN(a_cli_peer_inside_a_cgroup_namespace);
	return guest_end();
}
