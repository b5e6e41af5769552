# Kernel coding style: module/ and the uapi header through the kernel's own
# checkpatch.pl --strict, taken from Debian's linux-source of 6.1.
#
#   make checkpatch

CHECKPATCH_KERNEL ?= 6.1
CHECKPATCH_FILES := $(wildcard module/*.c module/*.h) include/uapi/linux/peercgroup.h

.PHONY: checkpatch
checkpatch:
	perl $$(scripts/kernel.sh checkpatch $(CHECKPATCH_KERNEL)) --strict --no-tree \
		--terse --show-types -f $(CHECKPATCH_FILES)
	@echo "checkpatch: $(words $(CHECKPATCH_FILES)) files clean"
