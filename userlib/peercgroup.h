/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpeercgroup - the cgroup v2 of the peer of an AF_UNIX socket.
 *
 * The peercgroup kernel module records, when an AF_UNIX stream or seqpacket
 * connection is made (connect(), listen(), socketpair()), the cgroup of each
 * side, the way SO_PEERCRED records credentials.  This library asks the
 * module for that record through /dev/peercgroup, and classifies cgroup paths
 * into container runtimes.  See libpeercgroup(3) and peercgroup(4).
 *
 * Conventions
 * - Every int-returning call returns 0 on success (peercgroup_get_path_buf():
 *   a length) or a NEGATIVE errno value on failure; errno is not used.
 *   peercgroup_strerror() describes it.
 * - -ENOPKG means the kernel module is not loaded (/dev/peercgroup missing
 *   or without a driver).  -ENODEV means it is loaded (/sys/module/peercgroup
 *   exists) but this process cannot see the node: a sandboxed service
 *   (PrivateDevices=yes).  -EACCES: the node is there but opening it is
 *   denied (DevicePolicy=, DeviceAllow=).  The library never guesses.
 * - All calls are thread-safe.  /dev/peercgroup is opened once per process,
 *   lazily (or by peercgroup_open_device()), with O_CLOEXEC, and reopened
 *   in every child: fork(), _Fork(), clone() without CLONE_VM (the cached
 *   descriptor sits in a MADV_WIPEONFORK page).
 * - An open descriptor pins the module: "modprobe -r" fails and an upgraded
 *   module takes effect once the daemons holding it restart.  "peercgroup
 *   status" lists the holders.
 * - Strings in structs are always NUL-terminated.
 */
#ifndef LIBPEERCGROUP_PEERCGROUP_H
#define LIBPEERCGROUP_PEERCGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/peercgroup.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PEERCGROUP_LIB_VERSION_MAJOR 0
#define PEERCGROUP_LIB_VERSION_MINOR 2

/* Flags for peercgroup_get() (in). */
/* Skip the path: only cgroup_id, pid and flags are filled (faster). */
#define PEERCGROUP_GET_NO_PATH	(1U << 0)
/*
 * Opt-in: do not ask the module; answer with the cgroup the peer process is
 * in NOW (SO_PEERPIDFD, or SO_PEERCRED + /proc/PID/cgroup on kernels before
 * 6.5).  The answer has PEERCGROUP_INFO_LIVE set.  Works without the module.
 */
#define PEERCGROUP_GET_LIVE	(1U << 1)

/* peercgroup_info.flags (out). */
/* The cgroup was removed since the connection was made (module answer). */
#define PEERCGROUP_INFO_CGROUP_REMOVED	(1U << 0)
/* The peer process, as SO_PEERCRED names it, has exited since (module answer). */
#define PEERCGROUP_INFO_PEER_EXITED	(1U << 1)
/* Live answer (PEERCGROUP_GET_LIVE): the peer's cgroup now, not at connect. */
#define PEERCGROUP_INFO_LIVE		(1U << 8)
/*
 * Live answer checked against the kernel's pidfd of the peer (SO_PEERPIDFD,
 * 6.5), so a recycled pid cannot fool it.
 */
#define PEERCGROUP_INFO_PIDFD		(1U << 9)

/**
 * struct peercgroup_info - what peercgroup_get() returns.
 * @cgroup_id:	cgroup v2 id (inode number of the cgroup directory).  0 for
 *		a cgroup outside the caller's cgroup namespace (a "/.." path),
 *		and for a live answer whose cgroup directory could not be
 *		looked up where the caller's cgroup namespace root is mounted,
 *		on that mount alone (not through another mount or a symlink
 *		below it), or was removed.
 * @path:	cgroup path relative to the caller's cgroup namespace, e.g.
 *		"/system.slice/sshd.service".  Allocated by the library: release
 *		with peercgroup_info_free().  NULL with PEERCGROUP_GET_NO_PATH.
 * @path_len:	strlen(@path), 0 if @path is NULL.
 * @pid:	peer's pid as of connect() (live answer: now), in the caller's
 *		pid namespace; 0 if not visible there.
 * @flags:	PEERCGROUP_INFO_*.
 */
struct peercgroup_info {
	uint64_t cgroup_id;
	char *path;
	size_t path_len;
	pid_t pid;
	unsigned int flags;
	uint64_t reserved[4];
};

/*
 * Fill @info for the connected AF_UNIX stream/seqpacket socket @sockfd.
 * @flags: PEERCGROUP_GET_*.  On failure @info is zeroed (path NULL), so
 * peercgroup_info_free() is always safe.  Errors: -EBADF, -ENOTSOCK,
 * -EAFNOSUPPORT, -EOPNOTSUPP (datagram), -ENOTCONN, -ENODATA (no record),
 * -EREMOTE (withheld: the peer is outside both the caller's pid and cgroup
 * namespaces, see peercgroup(4)), -ENAMETOOLONG (path of PATH_MAX or more),
 * -ENOPKG (module not loaded), -ENODEV (loaded, but the node is hidden
 * from this process), -EACCES (cannot open the device), -EPROTO
 * (module ABI mismatch), -EINVAL (bad argument), -ENOMEM; live answers also
 * -ESRCH (peer gone or invisible), -ENOMEDIUM (peer has no cgroup v2
 * entry).  Any other is a system call's own errno, passed on: opening the
 * device (-EMFILE, -ENFILE), the live route's getsockopt(), pidfd_open()
 * and /proc reads (-EIO for an unreadable line).
 */
int peercgroup_get(int sockfd, unsigned int flags, struct peercgroup_info *info);

/* Free @info->path and zero @info.  NULL and repeated calls are fine. */
void peercgroup_info_free(struct peercgroup_info *info);

/* Only the cgroup id (PEERCGROUP_QUERY_NO_PATH: no path copy). */
int peercgroup_get_id(int sockfd, uint64_t *cgroup_id);

/* Only the path; *@path is malloc()ed, the caller free()s it. */
int peercgroup_get_path(int sockfd, char **path);

/*
 * Only the path, into the caller's @buf of @size bytes: no allocation, one
 * ioctl.  Returns the path's length (> 0, strlen(@buf)), or a negative
 * peercgroup_get() error, or -ERANGE when @size is not above that length;
 * @size PATH_MAX always suffices (longer paths are -ENAMETOOLONG).  On
 * failure @buf is "" (if @size > 0).  -EINVAL if @buf is NULL.
 */
int peercgroup_get_path_buf(int sockfd, char *buf, size_t size);

/**
 * struct peercgroup_module - the loaded module, from PEERCGROUP_IOC_VERSION.
 * @abi_version:	PEERCGROUP_ABI_VERSION of the module.
 * @features:		PEERCGROUP_FEATURE_* (see <linux/peercgroup.h>).
 * @query_flags:	PEERCGROUP_QUERY_* flags the module accepts.
 * @query_size:		sizeof(struct peercgroup_query) in the module.
 * @version:		the module's version string.
 */
struct peercgroup_module {
	unsigned int abi_version;
	uint64_t features;
	unsigned int query_flags;
	unsigned int query_size;
	char version[PEERCGROUP_VERSION_STRING_SIZE];
	uint64_t reserved[4];
};

/* Describe the loaded module.  -ENOPKG if it is not loaded. */
int peercgroup_module_info(struct peercgroup_module *mod);

/*
 * Open /dev/peercgroup now and keep it for the process's lifetime, instead
 * of on the first query.  Call it before dropping privileges, entering a
 * chroot, a mount namespace or a seccomp/Landlock sandbox that would hide
 * or deny the device.  0, or -ENOPKG, -ENODEV, -EACCES, -EPROTO, or the
 * errno of open() (-EMFILE, -ENFILE).
 */
int peercgroup_open_device(void);

/* The library's version, e.g. "0.1.0". */
const char *peercgroup_library_version(void);

/*
 * A message for a library error (negative or positive errno), with the
 * meaning it has here: -ENODATA reads "no cgroup record for this connection
 * (made before the module was loaded?)", not "No data available".  Never NULL;
 * the string is static.
 */
const char *peercgroup_strerror(int err);

/* ---- container classifier: string functions, no I/O but one cached stat ---- */

/*
 * What the classifier recognises (see the table in libpeercgroup(3)):
 * docker (systemd and cgroupfs drivers, rootless, --cgroup-parent), podman
 * (systemd, cgroupfs, pods, quadlet and --cgroups=split payloads, conmon),
 * containerd (CRI, nerdctl, "ctr run" in the default and k8s.io
 * namespaces), CRI-O (systemd and cgroupfs, conmon), Kubernetes pods,
 * Amazon ECS, LXC/LXD/Incus (payload and monitor), systemd-nspawn (payload
 * and supervisor), machined machines, flatpak, snap, and desktop
 * applications named by systemd's app-<launcher>-<appid>-<random> rule
 * (flatpak and desktop applications only inside a user@UID.service).
 *
 * Not recognisable from the path alone, and reported as what the path shows:
 * toolbox and distrobox (they are podman or docker containers: the path
 * names no tool), containerd-shim (it lives in containerd.service's cgroup
 * unless configured otherwise), podman's --cgroups=split "runtime" sibling
 * (a sub-cgroup of the service, reported as that service), and containerd
 * namespaces other than "default" and "k8s.io" under cgroupfs.
 *
 * New runtime values may be added in any release: treat a value you do not
 * know as PEERCGROUP_RT_UNKNOWN; peercgroup_runtime_name() names it.
 */
enum peercgroup_runtime {
	PEERCGROUP_RT_UNKNOWN = 0,	/* valid path, nothing recognised */
	PEERCGROUP_RT_HOST,		/* the root cgroup "/", caller in the initial cgroup ns */
	PEERCGROUP_RT_SYSTEM_SERVICE,	/* system.slice/<unit>, init.scope */
	PEERCGROUP_RT_USER_SESSION,	/* user.slice/user-UID.slice/... */
	PEERCGROUP_RT_DOCKER,
	PEERCGROUP_RT_PODMAN,		/* podman / libpod, incl. conmon */
	PEERCGROUP_RT_CONTAINERD,	/* cri-containerd-*, nerdctl-*, ctr */
	PEERCGROUP_RT_CRIO,
	PEERCGROUP_RT_KUBERNETES,	/* cgroupfs kubepods, CRI runtime unknown */
	PEERCGROUP_RT_LXC,		/* LXC, LXD, Incus */
	PEERCGROUP_RT_NSPAWN,		/* systemd-nspawn@NAME.service */
	PEERCGROUP_RT_MACHINE,		/* machined: machine-NAME.scope (nspawn, libvirt) */
	PEERCGROUP_RT_ECS,		/* Amazon ECS: /ecs/<task>/<container> */
	PEERCGROUP_RT_FLATPAK,		/* app-flatpak-<appid>-<n>.scope */
	PEERCGROUP_RT_SNAP,		/* snap.<snap>.<app>[-<uuid>].scope|.service */
	PEERCGROUP_RT_APP,		/* app-[<launcher>-]<appid>-<random>.scope|.service */
};

/* Result flags (peercgroup_class.flags, peercgroup_container.flags). */
#define PEERCGROUP_CT_CONMON	 (1U << 0)	/* podman's or CRI-O's conmon (also MONITOR) */
#define PEERCGROUP_CT_KUBERNETES (1U << 1)	/* under kubepods */
#define PEERCGROUP_CT_ROOTLESS	 (1U << 2)	/* container inside user@UID.service */
/*
 * The runtime's own privileged helper, not the payload: conmon,
 * lxc.monitor.*, systemd-nspawn's "supervisor" cgroup.  Never trust a
 * monitor as if it were the container.
 */
#define PEERCGROUP_CT_MONITOR	 (1U << 3)
/*
 * The path starts with "/..": the peer is outside the caller's cgroup
 * namespace, peercgroup_class.up levels above its root.  What follows is
 * classified as if it were a path from the root.
 */
#define PEERCGROUP_CT_OUTSIDE	 (1U << 4)
/*
 * The caller is not in the initial cgroup namespace (or the path starts
 * with "/..", which proves it): the path is relative to the caller's
 * namespace root, "/" is not the host, and runtime HOST is never reported.
 */
#define PEERCGROUP_CT_NAMESPACED (1U << 5)
/*
 * Set by peercgroup_peer_classify() only, when the answer rests on names
 * (a container's, an application's, a pod's, "kubepods") that nothing
 * shows were given by root: the parent of the deepest cgroup so named
 * belongs to another user or is writable by others (a subtree systemd
 * delegated to a user: Delegate=yes with User=, user@UID.service), or
 * this process cannot look (no cgroup2 mount at /sys/fs/cgroup showing
 * its namespace, a peer outside it, a removed cgroup); and for every
 * peer outside the caller's cgroup namespace, name or none.  Owners are
 * as this process sees them: root is uid 0 of its user namespace.  The
 * getters answer -ENXIO.
 */
#define PEERCGROUP_CT_UNPROVEN	 (1U << 6)

/*
 * The name of one result flag ("conmon", "kubernetes", "rootless",
 * "monitor", "outside", "namespaced", "unproven"), or NULL if @flag is not
 * exactly one known flag.
 */
const char *peercgroup_class_flag_name(unsigned int flag);

#define PEERCGROUP_NAME_SIZE 256

/**
 * struct peercgroup_class - what peercgroup_classify_path() found.
 *
 * Extensible the libbpf way: the caller sets @size to sizeof(struct
 * peercgroup_class) as it was compiled (PEERCGROUP_CLASS_INIT does it); the
 * library fills min(@size, its own size) bytes, zeroes the rest up to
 * @size, and writes back into @size how many bytes it filled.  Fields are
 * only ever appended.
 *
 * @size:	in: the caller's sizeof; out: bytes filled by the library.
 * @runtime:	enum peercgroup_runtime.
 * @flags:	PEERCGROUP_CT_*.
 * @up:		number of leading "/.." components (0: inside the caller's
 *		cgroup namespace).
 * @uid:	owner from "user-UID.slice" (or user@UID.service), or -1.
 * @id:		container id (64 hex) or name (LXC, machine, nspawn, ctr; systemd
 *		\xNN escapes undone); for services, sessions and applications
 *		the unit ("sshd.service", "app-gnome-org.gnome.Maps-42.scope");
 *		"" if none.
 * @pod:	Kubernetes pod UID (dashes restored), podman pod id or ECS
 *		task; "".
 * @qos:	Kubernetes QoS class: "guaranteed", "burstable", "besteffort"; "".
 * @app:	application id: flatpak/desktop app id (unescaped, e.g.
 *		"org.gnome.Maps"), snap "<snap>.<app>"; "".
 * @launcher:	who launched the application, from its unit name ("gnome",
 *		"kde", "flatpak"); "" if the name has none.
 * @unit:	the systemd (system) unit, as sd_pid_get_unit() would say:
 *		the first component that is not a slice; "" if none.
 * @user_unit:	the unit inside user@UID.service, as sd_pid_get_user_unit()
 *		would say; "".
 */
struct peercgroup_class {
	uint32_t size;
	uint32_t runtime;
	uint32_t flags;
	uint32_t up;
	int64_t uid;
	char id[PEERCGROUP_NAME_SIZE];
	char pod[72];
	char qos[16];
	char app[PEERCGROUP_NAME_SIZE];
	char launcher[64];
	char unit[PEERCGROUP_NAME_SIZE];
	char user_unit[PEERCGROUP_NAME_SIZE];
};
/* The first published size: every library accepts at least this. */
#define PEERCGROUP_CLASS_SIZE_VER0 (offsetof(struct peercgroup_class, user_unit) + PEERCGROUP_NAME_SIZE)
#define PEERCGROUP_CLASS_INIT { .size = sizeof(struct peercgroup_class) }

/* Flags for peercgroup_classify_path(): whose view the path is in. */
/* The caller is in the initial cgroup namespace: "/" is the host. */
#define PEERCGROUP_CLASSIFY_INITIAL_NS	(1U << 0)
/* The caller is in a child cgroup namespace: "/" is its own root. */
#define PEERCGROUP_CLASSIFY_CHILD_NS	(1U << 1)

/*
 * Classify the cgroup path @path of @len bytes (no NUL needed; an embedded
 * NUL makes it invalid), as the module or /proc/PID/cgroup print it.  A
 * leading '/' is optional; a leading run of "/.." components is valid (the
 * peer is outside the caller's namespace: PEERCGROUP_CT_OUTSIDE, @out->up).
 * The outermost container wins ("docker in kubepods" is docker, "kind"
 * nodes are docker).
 *
 * @flags: 0, or one of PEERCGROUP_CLASSIFY_INITIAL_NS / _CHILD_NS.  With 0
 * the library looks once per process at /proc/self/ns/cgroup (the initial
 * cgroup namespace has the fixed inode number 0xEFFFFFFB) and caches the
 * answer; a program that later calls unshare(CLONE_NEWCGROUP) or setns()
 * passes the flag itself.  Where /proc cannot tell, the caller is assumed
 * NOT to be in the initial namespace, so "/" is never called the host.
 *
 * Returns 0 (runtime may be PEERCGROUP_RT_UNKNOWN), or -EINVAL for a path
 * that cannot be a cgroup path (empty, NUL, an empty or "." component,
 * ".." after a name, a component over 255 bytes, over 64 KiB), for bad
 * @flags, or for @out->size below PEERCGROUP_CLASS_SIZE_VER0.  @out is then zeroed (size
 * kept) with runtime UNKNOWN and uid -1, except for a size too small,
 * where nothing is written: the struct may be smaller than that.
 */
int peercgroup_classify_path(const char *path, size_t len, unsigned int flags,
			     struct peercgroup_class *out);

/* "docker", "podman", ... ; "unknown" for out-of-range values.  Never NULL. */
const char *peercgroup_runtime_name(enum peercgroup_runtime rt);

/**
 * struct peercgroup_container - the first classifier result (version 1 of
 * the library), kept for the programs built against it.  New code uses
 * struct peercgroup_class, which has the application, the unit names and
 * the namespace level.  peercgroup_classify() fills the fields it has, with
 * the same rules as peercgroup_classify_path(.., 0, ..).
 */
struct peercgroup_container {
	enum peercgroup_runtime runtime;
	unsigned int flags;
	int64_t uid;
	char id[PEERCGROUP_NAME_SIZE];
	char pod[72];
	char qos[16];
};

int peercgroup_classify(const char *path, size_t len,
			struct peercgroup_container *out);

/* ---- one fact about a peer, like sd_peer_get_*(3) ---- */

/*
 * All from the connect-time record (the module), never from the peer's
 * cgroup now, and classified as peercgroup_classify_path(.., 0, ..) does.
 * Each returns 0, a peercgroup_get() error, or -ENXIO when the peer's
 * cgroup names no such thing, or is outside the caller's cgroup namespace
 * (PEERCGROUP_CT_OUTSIDE: past "/.." the slices and units are not the top
 * of the tree, and anyone who may create cgroups beside the namespace's
 * root may have named them).  Strings are malloc()ed; the caller frees.
 */

/* The whole classification of the peer.  @flags: 0 or PEERCGROUP_GET_LIVE
 * (the peer's cgroup now, asked for explicitly).  @out->size as for
 * peercgroup_classify_path(); on failure @out is the empty result.  Unlike
 * the path's classifier, it looks at who owns the named cgroup's parent
 * (PEERCGROUP_CT_UNPROVEN): two stat()s and a statfs(). */
int peercgroup_peer_classify(int sockfd, unsigned int flags, struct peercgroup_class *out);

/* The system unit ("sshd.service", "user@1000.service", "docker-<id>.scope"),
 * as sd_peer_get_unit() names it. */
int peercgroup_peer_get_unit(int sockfd, char **unit);

/* The unit inside the user's service manager ("dbus.service",
 * "app-gnome-org.gnome.Maps-42.scope"), as sd_peer_get_user_unit(). */
int peercgroup_peer_get_user_unit(int sockfd, char **unit);

/* The uid of user-UID.slice or user@UID.service. */
int peercgroup_peer_get_owner_uid(int sockfd, uid_t *uid);

/* The machine: systemd-nspawn@NAME.service or machined's machine-NAME.scope;
 * -ENXIO where a user may have named it (ROOTLESS, UNPROVEN). */
int peercgroup_peer_get_machine_name(int sockfd, char **machine);

/* The container runtime and its id or name.  -ENXIO for anything else,
 * including a runtime's monitor (conmon, lxc.monitor, nspawn supervisor),
 * which is not the container, and a name a user may have given (ROOTLESS,
 * UNPROVEN): see peercgroup_peer_classify() for those. */
int peercgroup_peer_get_container(int sockfd, enum peercgroup_runtime *runtime, char **id);

#ifdef __cplusplus
}
#endif
#endif /* LIBPEERCGROUP_PEERCGROUP_H */
