/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client that make check-containers starts in each container: one
 * process (so its pid is the one the host looked up before it connected),
 * static (the container image is busybox-static and this).
 *
 *   pcg-client TAG DIR SOCKET...
 *
 * Waits until DIR/go.TAG exists (the host has recorded our pid and cgroup),
 * then connects to each SOCKET in turn and prints "SOCKET: REPLY" for what
 * the server sent back.  With DIR/hold.TAG present, it stays connected to
 * the first SOCKET, creates DIR/connected.TAG and waits for DIR/read.TAG
 * before reading (the move-after-connect race of the demo).  The host
 * finds this process by its first two arguments (its name and TAG).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Waits up to 10 minutes for DIR/NAME.TAG; 0 once it exists. */
static int wait_file(const char *dir, const char *name, const char *tag)
{
	const struct timespec tick = { .tv_nsec = 50 * 1000 * 1000 };
	char fn[4096];
	int i;

	snprintf(fn, sizeof(fn), "%s/%s.%s", dir, name, tag);
	for (i = 0; i < 12000; i++) {
		if (access(fn, F_OK) == 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	fprintf(stderr, "pcg-client: %s never appeared\n", fn);
	return -1;
}

static int make_file(const char *dir, const char *name, const char *tag)
{
	char fn[4096];
	int fd;

	snprintf(fn, sizeof(fn), "%s/%s.%s", dir, name, tag);
	fd = open(fn, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int ask(const char *path, const char *dir, const char *tag, int hold)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 30 };
	char buf[8192];
	size_t len = 0;
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("%s: error: connect: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (hold && (make_file(dir, "connected", tag) < 0 || wait_file(dir, "read", tag) < 0)) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	printf("%s: %s%s", path, buf, len && buf[len - 1] == '\n' ? "" : "\n");
	fflush(stdout);
	return len ? 0 : -1;
}

int main(int argc, char **argv)
{
	char fn[4096];
	int i, hold, rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: pcg-client TAG DIR SOCKET...\n");
		return 2;
	}
	if (wait_file(argv[2], "go", argv[1]) < 0)
		return 1;
	snprintf(fn, sizeof(fn), "%s/hold.%s", argv[2], argv[1]);
	hold = access(fn, F_OK) == 0;
	for (i = 3; i < argc; i++)
		if (ask(argv[i], argv[2], argv[1], hold && i == 3) < 0)
			rc = 1;
	make_file(argv[2], "done", argv[1]);
	return rc;
}
