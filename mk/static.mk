# Static analysis: shellcheck on every script, sparse on the module (make
# C=2 against Debian's 6.1 headers), gcc -fanalyzer on the library, the CLI
# and the guest runner.  In CI.
#
#   make static

.PHONY: static
static: deps
	scripts/static.sh
