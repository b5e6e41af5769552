# Guest suites for boundaries and namespaces (path_suite: every path length
# around a buffer or limit; ns_suite: callers in other pid and cgroup
# namespaces, fd passing).  They check the library's answers too, so they
# link the static libpeercgroup (its rule: mk/bench.mk).  Both are in the
# default SUITES of "make check".

LIB_GUEST := path_suite ns_suite

$(addprefix $(B)/guest/,$(LIB_GUEST)): $(B)/guest/%: tests/guest/%.c tests/guest/guest.h \
		include/uapi/linux/peercgroup.h userlib/peercgroup.h $(B)/userlib/libpeercgroup.a
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -I$(CURDIR)/userlib -o $@ $< $(B)/userlib/libpeercgroup.a

guest-bins: $(addprefix $(B)/guest/,$(LIB_GUEST))
