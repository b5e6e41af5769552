// SPDX-License-Identifier: GPL-2.0
/*
 * The module as dkms installed it, loaded the ways an admin's system loads
 * it: by the first open of /dev/peercgroup (a static node made from
 * modules.devname, the kernel asking modprobe for char-major-10-250) and
 * by modprobe / modprobe -r.  The guest's module tree holds the .ko that
 * dkms installed on the host; the kernel command line carries its
 * srcversion (pcg.srcversion=) so the suite can tell it is that one.
 * Usage: dkms_suite [TEST]
 */
#include "guest.h"

#include <sys/sysmacros.h>
#include <sys/utsname.h>

#ifndef PCG_EXPECT_VERSION
#error "build with -DPCG_EXPECT_VERSION=\"$(cat VERSION)\""
#endif

#define NOBODY 65534

static char want_srcversion[64];

/* Reads a whole small file into @buf; "" on failure. */
static const char *slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

static bool has_line(const char *path, const char *line)
{
	static char buf[1 << 16];
	size_t len = strlen(line);

	slurp(path, buf, sizeof(buf));
	for (char *p = buf; (p = strstr(p, line)); p += len)
		if ((p == buf || p[-1] == '\n') && (p[len] == '\n' || !p[len]))
			return true;
	return false;
}

static const char *modfile(const char *name)
{
	static char p[256];
	struct utsname u;

	uname(&u);
	snprintf(p, sizeof(p), "/lib/modules/%s/%s", u.release, name);
	return p;
}

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = 0;
}

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* PEERCGROUP_IOC_VERSION on @fd; 0 or -errno. */
static int ioc_version(int fd, struct peercgroup_version *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	return ioctl(fd, PEERCGROUP_IOC_VERSION, v) ? -errno : 0;
}

/* depmod wrote the static node line and the aliases the kernel asks for. */
static void t_modules_devname(void)
{
	CHECK(has_line(modfile("modules.devname"), "peercgroup peercgroup c10:250"),
	      "no line \"peercgroup peercgroup c10:250\" in %s", modfile("modules.devname"));
}

static void t_modules_alias(void)
{
	CHECK(has_line(modfile("modules.alias"), "alias char-major-10-250 peercgroup"),
	      "no char-major-10-250 alias in %s", modfile("modules.alias"));
	CHECK(has_line(modfile("modules.alias"), "alias devname:peercgroup peercgroup"),
	      "no devname:peercgroup alias in %s", modfile("modules.alias"));
}

/* What the init's modprobe loaded is the dkms-built module. */
static void t_loaded_is_installed(void)
{
	char buf[128];

	CHECK(module_loaded(), "the init's modprobe did not load peercgroup");
	slurp("/sys/module/peercgroup/version", buf, sizeof(buf));
	chomp(buf);
	CHECK_STR(PCG_EXPECT_VERSION, buf);
	CHECK(want_srcversion[0], "no pcg.srcversion= on the kernel command line");
	slurp("/sys/module/peercgroup/srcversion", buf, sizeof(buf));
	chomp(buf);
	CHECK_STR(want_srcversion, buf);
}

static void t_unload(void)
{
	CHECK_INT(0, module_unload());
	CHECK(!module_loaded(), "still loaded after delete_module");
}

/*
 * The kernel runs /proc/sys/kernel/modprobe (default /sbin/modprobe) to
 * load a module on demand.  The guest's busybox applets live in /bin, so
 * give it /sbin/modprobe as a distribution has.
 */
static void t_modprobe_helper(void)
{
	char helper[256];
	struct stat st;

	slurp("/proc/sys/kernel/modprobe", helper, sizeof(helper));
	chomp(helper);
	printf("# kernel.modprobe = %s\n", helper);
	if (strcmp(helper, "/sbin/modprobe")) {
		SYS(write_file("/proc/sys/kernel/modprobe", "/sbin/modprobe"));
		printf("# kernel.modprobe set to /sbin/modprobe\n");
	}
	if (lstat("/sbin/modprobe", &st)) {
		mkdir("/sbin", 0755);
		SYS(symlink("/bin/busybox", "/sbin/modprobe"));
		printf("# /sbin/modprobe -> /bin/busybox created\n");
	}
	CHECK_INT(0, access("/sbin/modprobe", X_OK));
}

/*
 * Before the module is loaded, /dev/peercgroup is a static node, made by
 * kmod static-nodes + systemd-tmpfiles from modules.devname and given mode
 * 0666 by the udev rule.  An unprivileged first open loads the module (the
 * kernel asks modprobe for char-major-10-250, which busybox modprobe must
 * resolve through modules.alias) and then works.
 */
static void t_autoload_on_open(void)
{
	struct peercgroup_version v;
	int status, fd;
	pid_t pid;

	CHECK(!module_loaded(), "loaded before the first open");
	unlink(PEERCGROUP_DEVICE_PATH);
	SYS(mknod(PEERCGROUP_DEVICE_PATH, S_IFCHR | 0666, makedev(10, PEERCGROUP_MISC_MINOR)));
	SYS(chmod(PEERCGROUP_DEVICE_PATH, 0666));
	SYS(pid = fork());
	if (pid == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		fd = open(PEERCGROUP_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(errno < 100 ? errno : 99);
		_exit(ioc_version(fd, &v) ? 101 : 0);
	}
	SYS(waitpid(pid, &status, 0));
	CHECK(WIFEXITED(status), "the opening process died");
	CHECK(WEXITSTATUS(status) != 100, "setuid(nobody) failed");
	CHECK(WEXITSTATUS(status) != 101, "PEERCGROUP_IOC_VERSION failed for nobody");
	CHECK(WEXITSTATUS(status) == 0, "open as nobody failed: %s",
	      strerror(WEXITSTATUS(status)));
	CHECK(module_loaded(), "open succeeded but the module is not loaded");
	SYS(fd = dev_open());
	status = ioc_version(fd, &v);
	close(fd);
	CHECK_INT(0, status);
	CHECK_INT(PEERCGROUP_ABI_VERSION, v.abi_version);
	CHECK_STR(PCG_EXPECT_VERSION, v.module_version);
}

static void t_modprobe_r(void)
{
	CHECK(module_loaded(), "not loaded before modprobe -r");
	CHECK_INT(0, run("modprobe -r peercgroup"));
	CHECK(!module_loaded(), "still loaded after modprobe -r");
}

/* modprobe by name; the module's own device node is char 10:250, 0666. */
static void t_modprobe(void)
{
	struct peercgroup_version v;
	struct stat st;
	int fd, err;

	CHECK(!module_loaded(), "loaded before modprobe");
	unlink(PEERCGROUP_DEVICE_PATH);
	CHECK_INT(0, run("modprobe peercgroup"));
	CHECK(module_loaded(), "not loaded after modprobe");
	SYS(stat(PEERCGROUP_DEVICE_PATH, &st));
	CHECK(S_ISCHR(st.st_mode), "/dev/peercgroup is not a character device");
	CHECK_INT(10, major(st.st_rdev));
	CHECK_INT(PEERCGROUP_MISC_MINOR, minor(st.st_rdev));
	CHECK_INT(0666, st.st_mode & 07777);
	SYS(fd = dev_open());
	err = ioc_version(fd, &v);
	close(fd);
	CHECK_INT(0, err);
	CHECK_STR(PCG_EXPECT_VERSION, v.module_version);
}

int main(int argc, char **argv)
{
	char cmdline[4096], *p;

	guest_begin("dkms_suite", argc, argv);
	slurp("/proc/cmdline", cmdline, sizeof(cmdline));
	p = strstr(cmdline, "pcg.srcversion=");
	if (p)
		sscanf(p, "pcg.srcversion=%63s", want_srcversion);
	RUN(t_modules_devname);
	RUN(t_modules_alias);
	RUN(t_loaded_is_installed);
	RUN(t_unload);
	RUN(t_modprobe_helper);
	RUN(t_autoload_on_open);
	RUN(t_modprobe_r);
	RUN(t_modprobe);
	return guest_end();
}
