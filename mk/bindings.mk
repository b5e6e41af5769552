# The Go and Python bindings (bindings/go, bindings/python).
#
#   make check-bindings   host tests of both: go vet + go test (classifier
#                         parity on tests/data/classify.tsv and on 20000
#                         generated paths against the C classifier, error
#                         mapping, ABI numbers against the uapi header), the
#                         example builds, pytest, pip install into a venv.
#                         "make unit" (and so "make check") runs it.
#   go_suite, py_suite    the same bindings against the real module in the
#                         guest (make check; SUITES=go_suite,py_suite).
#   make bench-bindings   ns per call of the Go and Python get next to the
#                         C library's and SO_PEERCRED (KERNELS=...).
#
# Go builds offline with GOFLAGS=-mod=vendor: bindings/go/offline-tree.sh
# copies the binding and its example into build/go with a vendor/ tree
# made from Debian's golang-golang-x-sys-dev.  The source tree keeps only
# go.mod and go.sum, as users with a network expect.

GO ?= go
PYTHON ?= /usr/bin/python3
GO_TREE := $(B)/go
GO_ENV := GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GOCACHE=$(GO_TREE)/cache \
	GOPATH=$(GO_TREE)/gopath CGO_ENABLED=0 PEERCGROUP_SRC=$(CURDIR)
GO_SRC := $(wildcard bindings/go/*.go bindings/go/go.mod examples/go-api-socket/*.go \
	examples/go-api-socket/go.mod) bindings/go/offline-tree.sh
PY_SRC := $(wildcard bindings/python/peercgroup/*.py bindings/python/tests/*.py) examples/python-responder.py \
	bindings/python/guest-rootfs.sh VERSION

.PHONY: check-bindings check-go check-python bench-bindings go-tree

check-bindings: check-go check-python

# Differential parity: the C classifier's answers for CLASSIFY_DIFF_PATHS
# paths made from the table's components (cut, mixed, mutated), which the
# Go and Python classifiers must give too.
CLASSIFY_DIFF_PATHS ?= 20000
CLASSIFY_DIFF_SEED ?= 1
CLASSIFY_DIFF := $(B)/bindings/classify-diff.tsv
# The C programs that print the C library's answers for these tests.
$(B)/bindings/%-dump: bindings/tests/%-dump.c $(GUEST_LIB)
	@mkdir -p $(@D)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -I$(CURDIR)/userlib -I$(CURDIR)/include/uapi \
		-o $@ $< $(GUEST_LIB)

$(CLASSIFY_DIFF): $(B)/bindings/classify-dump bindings/tests/classify-paths.py tests/data/classify.tsv
	$(PYTHON) bindings/tests/classify-paths.py tests/data/classify.tsv \
		$(CLASSIFY_DIFF_PATHS) $(CLASSIFY_DIFF_SEED) | $(B)/bindings/classify-dump >$@.tmp
	mv $@.tmp $@

# Message parity: the C library's peercgroup_strerror() texts, which the
# Go and Python packages must give too.
MESSAGES := $(B)/bindings/messages.tsv
$(MESSAGES): $(B)/bindings/strerror-dump
	$< >$@.tmp
	mv $@.tmp $@

go-tree:
	bindings/go/offline-tree.sh $(CURDIR) $(GO_TREE)

check-go: go-tree $(CLASSIFY_DIFF) $(MESSAGES)
	@bad=$$(gofmt -l bindings/go examples/go-api-socket); \
	 [ -z "$$bad" ] || { echo "gofmt: reformat $$bad" >&2; exit 1; }
	cd $(GO_TREE)/bindings/go && $(GO_ENV) $(GO) vet . && \
		PEERCGROUP_CLASSIFY_DIFF=$(CLASSIFY_DIFF) PEERCGROUP_MESSAGES=$(MESSAGES) \
		$(GO_ENV) $(GO) test -count=1 .
	cd $(GO_TREE)/examples/go-api-socket && $(GO_ENV) $(GO) vet . && \
		$(GO_ENV) $(GO) build -o $(GO_TREE)/go-api-socket .

# pytest on the source tree; then "pip install" as a user would, from a
# copy (setuptools writes build/ and *.egg-info beside pyproject.toml),
# without network or build isolation, into a scratch venv.
check-python: $(CLASSIFY_DIFF) $(MESSAGES)
	PEERCGROUP_SRC=$(CURDIR) PEERCGROUP_CLASSIFY_DIFF=$(CLASSIFY_DIFF) \
		PEERCGROUP_MESSAGES=$(MESSAGES) \
		$(PYTHON) -m pytest -q -p no:cacheprovider bindings/python/tests
	rm -rf $(B)/python && mkdir -p $(B)/python
	cp -rL bindings/python $(B)/python/src
	$(PYTHON) -m venv --system-site-packages $(B)/python/venv
	$(B)/python/venv/bin/pip install -q --no-index --no-build-isolation \
		--disable-pip-version-check $(B)/python/src
	cd $(B)/python && venv/bin/python -c 'import peercgroup, peercgroup.aio, sys; \
		v = open("$(CURDIR)/VERSION").read().strip(); \
		sys.exit(0 if peercgroup.__version__ == v else "installed version %s" % peercgroup.__version__)'

unit: check-bindings

# Guest suites: a static Go test binary, and a Python interpreter with the
# stdlib subset it needs (bindings/python/guest-rootfs.sh), which
# run-guest.sh copies over the initramfs from $(B)/guest/py_suite.rootfs.
$(B)/guest/go_suite: $(GO_SRC)
	bindings/go/offline-tree.sh $(CURDIR) $(GO_TREE)
	@mkdir -p $(@D)
	cd $(GO_TREE)/bindings/go && $(GO_ENV) $(GO) test -c -o $@ .

$(B)/guest/py_suite: $(PY_SRC)
	@mkdir -p $(@D)
	bindings/python/guest-rootfs.sh $(CURDIR) $@.rootfs
	cp $@.rootfs/tests/py_suite $@


# Figures, not a test: one boot per kernel running the C benchmark's query
# part and both bindings' loops (pcg.bench_bindings=1).
bench-bindings: deps guest-bins bench-bin
	@for k in $(KERNELS); do \
		out=build/bench/bindings-$$k; rm -rf $$out; mkdir -p $$out; \
		scripts/kernel.sh fetch $$k && scripts/kernel.sh build $$k . build/kernels/$$k && \
		scripts/run-guest.sh --name bindings-$$k --kernel build/cache/kernels/$$k/vmlinuz \
			--kver $$(scripts/kernel.sh modver $$k) --ko build/kernels/$$k/peercgroup.ko \
			--bins $(B)/guest --out $$out --suites bench,go_suite,py_suite --timeout 1800 \
			--append "pcg.bench_parts=query pcg.bench_bindings=1" >$$out/run-guest.txt 2>&1; \
		echo "== $$k"; grep -a -E '^# \|' $$out/console.log | tr -d '\r'; \
	done
