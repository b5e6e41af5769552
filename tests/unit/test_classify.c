/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * peercgroup_classify_path() against the shared table of cgroup paths
 * (tests/data/classify.tsv, also read by the bindings and the fuzzer's
 * seeds), and against input too large or too binary for that file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <stdio.h>
#include <sys/stat.h>

#include "peercgroup.h"

#define ID "3f9f8a62b6e4f4e1d3a0d2b9c1e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9"
#define ID2 "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

/* ---- the shared table: tests/data/classify.tsv ---- */

#ifndef CLASSIFY_TSV
#error "build with -DCLASSIFY_TSV=\"path/to/tests/data/classify.tsv\""
#endif

enum col { C_PATH, C_VALID, C_RUNTIME, C_ID, C_POD, C_QOS, C_UID, C_APP,
	   C_LAUNCHER, C_UP, C_FLAGS, C_UNIT, C_USER_UNIT, C_COUNT };
static const char *const col_names[C_COUNT] = {
	"path", "valid", "runtime", "id", "pod", "qos", "uid", "app",
	"launcher", "up", "flags", "unit", "user_unit",
};

/* The C escapes of the path column: \\ \t \n \xNN. */
static size_t unescape(const char *in, char *out)
{
	size_t o = 0;

	for (; *in; in++) {
		if (*in != '\\') {
			out[o++] = *in;
			continue;
		}
		switch (*++in) {
		case '\\': out[o++] = '\\'; break;
		case 't': out[o++] = '\t'; break;
		case 'n': out[o++] = '\n'; break;
		case 'x': {
			char hex[3] = { in[1], in[2], '\0' };
			char *end;

			out[o++] = (char)strtoul(hex, &end, 16);
			assert_true(end == hex + 2);
			in += 2;
			break;
		}
		default:
			fail_msg("bad escape \\%c in %s", *in, CLASSIFY_TSV);
		}
	}
	return o;
}

static const char *dash(const char *s)
{
	return strcmp(s, "-") ? s : "";
}

static unsigned int parse_flags(const char *s)
{
	char buf[256], *save, *w;
	unsigned int flags = 0, bit;

	if (!strcmp(s, "-"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		for (bit = 1; bit; bit <<= 1)
			if (peercgroup_class_flag_name(bit) && !strcmp(peercgroup_class_flag_name(bit), w))
				break;
		if (!bit)
			fail_msg("unknown flag name '%s'", w);
		flags |= bit;
	}
	return flags;
}

static size_t split_tabs(char *line, char **f, size_t max)
{
	size_t n = 0;

	for (;;) {
		char *tab = strchr(line, '\t');

		if (n < max)
			f[n] = line;
		n++;
		if (!tab)
			return n;
		*tab = '\0';
		line = tab + 1;
	}
}

static unsigned int rows_checked;

static void check_row(char **f, int lineno)
{
	static char path[70000];
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	size_t len = unescape(f[C_PATH], path);
	int r = peercgroup_classify_path(path, len, PEERCGROUP_CLASSIFY_INITIAL_NS, &c);
	int valid = !strcmp(f[C_VALID], "yes");
	char flags[256] = "";
	unsigned int bit;

	for (bit = 1; bit; bit <<= 1)
		if ((c.flags & bit) && peercgroup_class_flag_name(bit))
			snprintf(flags + strlen(flags), sizeof(flags) - strlen(flags), "%s%s",
				 flags[0] ? "," : "", peercgroup_class_flag_name(bit));
	if (r != (valid ? 0 : -EINVAL) ||
	    (valid && (strcmp(peercgroup_runtime_name(c.runtime), f[C_RUNTIME]) ||
		       strcmp(c.id, dash(f[C_ID])) || strcmp(c.pod, dash(f[C_POD])) ||
		       strcmp(c.qos, dash(f[C_QOS])) || c.uid != strtoll(f[C_UID], NULL, 10) ||
		       strcmp(c.app, dash(f[C_APP])) || strcmp(c.launcher, dash(f[C_LAUNCHER])) ||
		       c.up != strtoul(f[C_UP], NULL, 10) || c.flags != parse_flags(f[C_FLAGS]) ||
		       strcmp(c.unit, dash(f[C_UNIT])) || strcmp(c.user_unit, dash(f[C_USER_UNIT])))))
		fail_msg("%s:%d: %s\n got r=%d runtime=%s id='%s' pod='%s' qos='%s' uid=%lld "
			 "app='%s' launcher='%s' up=%u flags=%s unit='%s' user_unit='%s'",
			 CLASSIFY_TSV, lineno, f[C_PATH], r, peercgroup_runtime_name(c.runtime),
			 c.id, c.pod, c.qos, (long long)c.uid, c.app, c.launcher, c.up,
			 flags[0] ? flags : "-", c.unit, c.user_unit);
	if (!valid) {	/* a rejected path leaves a clean result */
		assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);
		assert_string_equal(c.id, "");
		assert_int_equal(c.uid, -1);
	}
	rows_checked++;
}

static void test_table(void **state)
{
	FILE *f = fopen(CLASSIFY_TSV, "re");
	char *line = NULL, *fields[64];
	size_t cap = 0, n, i;
	int colidx[C_COUNT], lineno = 0, have_header = 0;
	ssize_t len;

	(void)state;
	assert_non_null(f);
	while ((len = getline(&line, &cap, f)) > 0) {
		char *row[C_COUNT];

		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		n = split_tabs(line, fields, 64);
		assert_true(n <= 64);
		if (!have_header) {
			for (i = 0; i < C_COUNT; i++) {
				size_t k;

				colidx[i] = -1;
				for (k = 0; k < n; k++)
					if (!strcmp(fields[k], col_names[i]))
						colidx[i] = (int)k;
				if (colidx[i] < 0)
					fail_msg("%s: no column '%s'", CLASSIFY_TSV, col_names[i]);
			}
			have_header = 1;
			continue;
		}
		for (i = 0; i < C_COUNT; i++) {
			if ((size_t)colidx[i] >= n)
				fail_msg("%s:%d: %zu columns", CLASSIFY_TSV, lineno, n);
			row[i] = fields[colidx[i]];
		}
		check_row(row, lineno);
	}
	free(line);
	fclose(f);
	print_message("classifier table: %u paths from %s\n", rows_checked, CLASSIFY_TSV);
	assert_true(rows_checked >= 100);
}

static void expect_invalid(const char *p, size_t len)
{
	struct peercgroup_container ct;
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;

	memset(&ct, 0x5a, sizeof(ct));
	assert_int_equal(peercgroup_classify(p, len, &ct), -EINVAL);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_UNKNOWN);
	assert_string_equal(ct.id, "");
	assert_int_equal(ct.uid, -1);
	memset(c.id, 0x5a, sizeof(c.id));
	assert_int_equal(peercgroup_classify_path(p, len, 0, &c), -EINVAL);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);
	assert_string_equal(c.id, "");
	assert_int_equal(c.size, sizeof(c));
}

static struct peercgroup_class classify_initial(const char *p, size_t len)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;

	assert_int_equal(peercgroup_classify_path(p, len, PEERCGROUP_CLASSIFY_INITIAL_NS, &c), 0);
	return c;
}

/* Inputs too big or too binary for the data file. */
static void test_hostile(void **state)
{
	static const char nul[] = "/system.slice/docker-\0x.scope";
	struct peercgroup_container ct;
	struct peercgroup_class c;
	char *big;
	size_t i;

	(void)state;
	expect_invalid("", 0);
	expect_invalid(NULL, 5);
	expect_invalid(nul, sizeof(nul) - 1);
	assert_int_equal(peercgroup_classify("/", 1, NULL), -EINVAL);
	assert_int_equal(peercgroup_classify_path("/", 1, 0, NULL), -EINVAL);

	/* length is honoured: only "/docker" is looked at */
	assert_int_equal(peercgroup_classify("/docker/" ID, 7, &ct), 0);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_UNKNOWN);

	/* a 256-byte component is not a cgroup name; 255 is */
	big = malloc(70000);
	assert_non_null(big);
	big[0] = '/';
	memset(big + 1, 'a', 256);
	expect_invalid(big, 257);
	c = classify_initial(big, 256);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);

	/* 64 KiB of "/a": valid, deep, unknown */
	for (i = 0; i < 65536; i += 2)
		memcpy(big + i, "/a", 2);
	c = classify_initial(big, 65536);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);
	expect_invalid(big, 65538);	/* over the limit */

	/* 64 KiB ending in a container: still found */
	i = strlen("/docker-" ID ".scope");
	memcpy(big + 65536 - i, "/docker-" ID ".scope", i);
	c = classify_initial(big, 65536);
	assert_int_equal(c.runtime, PEERCGROUP_RT_DOCKER);
	assert_string_equal(c.id, ID);

	/* 64 KiB of "/..": 21845 levels up, nothing below */
	for (i = 0; i + 3 <= 65535; i += 3)
		memcpy(big + i, "/..", 3);
	c = classify_initial(big, i);
	assert_int_equal(c.up, i / 3);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);
	assert_true(c.flags & PEERCGROUP_CT_OUTSIDE);

	/* 64 KiB of app words: bounded, no match */
	memcpy(big, "/app-", 5);
	memset(big + 5, '-', 65536 - 5 - 6);
	memcpy(big + 65536 - 6, ".scope", 6);
	expect_invalid(big, 65536);	/* its one component is over 255 bytes */
	free(big);

	/* near misses */
	c = classify_initial("/docker-" ID "0.scope", 8 + 65 + 6);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);
	c = classify_initial("/DOCKER-" ID ".scope", 8 + 64 + 6);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);

	/* names with bytes a TSV cell cannot hold come back byte for byte */
	c = classify_initial("/lxc.payload.caf\xe9", 17);
	assert_string_equal(c.id, "caf\xe9");
	c = classify_initial("/system.slice/a\tb.service", 25);
	assert_int_equal(c.runtime, PEERCGROUP_RT_SYSTEM_SERVICE);
	assert_string_equal(c.id, "a\tb.service");
	/* an escaped NUL or '/' in a name is never unescaped into the id */
	c = classify_initial("/machine.slice/machine-a\\x2fb.scope", 35);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);
	assert_string_equal(c.id, "");
}

/* "/" is the host only for a caller in the initial cgroup namespace. */
static void test_namespace(void **state)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	struct stat st;
	int initial;

	(void)state;
	assert_int_equal(peercgroup_classify_path("/", 1, PEERCGROUP_CLASSIFY_INITIAL_NS, &c), 0);
	assert_int_equal(c.runtime, PEERCGROUP_RT_HOST);
	assert_int_equal(c.flags, 0);
	assert_int_equal(peercgroup_classify_path("/", 1, PEERCGROUP_CLASSIFY_CHILD_NS, &c), 0);
	assert_int_equal(c.runtime, PEERCGROUP_RT_UNKNOWN);
	assert_int_equal(c.flags, PEERCGROUP_CT_NAMESPACED);
	assert_int_equal(peercgroup_classify_path("/system.slice/sshd.service", 26,
						  PEERCGROUP_CLASSIFY_CHILD_NS, &c), 0);
	assert_int_equal(c.runtime, PEERCGROUP_RT_SYSTEM_SERVICE);
	assert_int_equal(c.flags, PEERCGROUP_CT_NAMESPACED);
	assert_int_equal(peercgroup_classify_path("/", 1, PEERCGROUP_CLASSIFY_INITIAL_NS |
						  PEERCGROUP_CLASSIFY_CHILD_NS, &c), -EINVAL);
	assert_int_equal(peercgroup_classify_path("/", 1, 1U << 7, &c), -EINVAL);

	/* flags 0: the library's own look agrees with the kernel's */
	initial = stat("/proc/self/ns/cgroup", &st) == 0 && st.st_ino == 0xEFFFFFFBU;
	assert_int_equal(peercgroup_classify_path("/", 1, 0, &c), 0);
	assert_int_equal(c.runtime, initial ? PEERCGROUP_RT_HOST : PEERCGROUP_RT_UNKNOWN);
	print_message("this test runs in the %s cgroup namespace\n", initial ? "initial" : "a child");
}

/* The size-versioned result, libbpf style. */
static void test_sizes(void **state)
{
	struct {
		struct peercgroup_class c;
		char newer[32];
	} big;
	struct peercgroup_class c;
	char *old;

	(void)state;
	/* too small for the first published size */
	memset(&c, 0x5a, sizeof(c));
	c.size = PEERCGROUP_CLASS_SIZE_VER0 - 1;
	assert_int_equal(peercgroup_classify_path("/", 1, 0, &c), -EINVAL);
	assert_int_equal(c.size, PEERCGROUP_CLASS_SIZE_VER0 - 1);
	assert_int_equal((unsigned char)c.id[0], 0x5a);	/* nothing written */

	/* a caller built against a newer, bigger struct: the tail is zeroed */
	memset(&big, 0x5a, sizeof(big));
	big.c.size = sizeof(big);
	assert_int_equal(peercgroup_classify_path("/docker/" ID, 72, PEERCGROUP_CLASSIFY_INITIAL_NS,
						  &big.c), 0);
	assert_int_equal(big.c.size, sizeof(struct peercgroup_class));
	assert_string_equal(big.c.id, ID);
	for (size_t i = 0; i < sizeof(big.newer); i++)
		assert_int_equal(big.newer[i], 0);

	/* exactly the first size: filled up to it, nothing past it */
	old = malloc(PEERCGROUP_CLASS_SIZE_VER0 + 8);
	assert_non_null(old);
	memset(old, 0x77, PEERCGROUP_CLASS_SIZE_VER0 + 8);
	((struct peercgroup_class *)old)->size = PEERCGROUP_CLASS_SIZE_VER0;
	assert_int_equal(peercgroup_classify_path("/docker/" ID, 72, 0, (struct peercgroup_class *)old), 0);
	assert_int_equal(old[PEERCGROUP_CLASS_SIZE_VER0], 0x77);
	free(old);
}

/* The version 1 call still fills the version 1 struct. */
static void test_v1_struct(void **state)
{
	struct peercgroup_container ct;

	(void)state;
	memset(&ct, 0x5a, sizeof(ct));
	assert_int_equal(peercgroup_classify("/machine.slice/libpod-conmon-" ID ".scope",
					     29 + 64 + 6, &ct), 0);
	assert_int_equal(ct.runtime, PEERCGROUP_RT_PODMAN);
	assert_int_equal(ct.flags, PEERCGROUP_CT_CONMON | PEERCGROUP_CT_MONITOR);
	assert_string_equal(ct.id, ID);
	assert_int_equal(ct.uid, -1);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(peercgroup_runtime_name(PEERCGROUP_RT_DOCKER), "docker");
	assert_string_equal(peercgroup_runtime_name(PEERCGROUP_RT_CRIO), "cri-o");
	assert_string_equal(peercgroup_runtime_name(PEERCGROUP_RT_APP), "app");
	assert_string_equal(peercgroup_runtime_name((enum peercgroup_runtime)(PEERCGROUP_RT_APP + 1)), "unknown");
	assert_string_equal(peercgroup_runtime_name((enum peercgroup_runtime)-1), "unknown");
	assert_string_equal(peercgroup_class_flag_name(PEERCGROUP_CT_MONITOR), "monitor");
	assert_string_equal(peercgroup_class_flag_name(PEERCGROUP_CT_NAMESPACED), "namespaced");
	assert_null(peercgroup_class_flag_name(0));
	assert_null(peercgroup_class_flag_name(PEERCGROUP_CT_MONITOR | PEERCGROUP_CT_CONMON));
	assert_null(peercgroup_class_flag_name(1U << 31));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_v1_struct),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
