#!/usr/bin/env bash
# static.sh: the static checks CI runs (make static), each clean or failing:
#   scripts     shellcheck on every shell script git tracks (by name or #! line); the parts of
#               scripts/kernel/ through scripts/kernel.sh, which sources them
#   sparse      the module, "make C=2" against Debian's 6.1 headers
#   analyzer    gcc -fanalyzer on libpeercgroup, the CLI and the guest runner
# Prints one line per check and "static: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
kernel=${STATIC_KERNEL:-6.1}
pass=0 fail=0
result() {
	if [ "$2" -eq 0 ]; then echo "ok - static/$1"; pass=$((pass + 1))
	else echo "not ok - static/$1"; fail=$((fail + 1)); fi
}

mapfile -t scripts < <(git ls-files | while read -r f; do
	[ -f "$f" ] || continue
	case $f in
	scripts/kernel/*.sh) ;;     # sourced by scripts/kernel.sh, checked with it (-x)
	*.sh | .ci/run) echo "$f" ;;
	*) head -c 64 "$f" | grep -qE '^#!.*(/|env )(ba|da|busybox )?sh' && echo "$f" ;;
	esac
done)
shellcheck -x "${scripts[@]}"
result "shellcheck (${#scripts[@]} scripts)" $?

out=build/static/sparse
rm -rf "$out"
PCG_KBUILD_FLAGS=C=2 scripts/kernel.sh build "$kernel" . "$out" >/dev/null
rc=$?
[ $rc -eq 0 ] && { grep -q 'CHECK' "$out/build.log" || { echo "sparse did not run"; rc=1; }; }
result "sparse (module, $kernel headers)" $rc

rc=0
make -s -C userlib analyze O="$PWD/build/userlib" || rc=1
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -fanalyzer -Iuserlib -Iinclude/uapi \
	-c -o /dev/null tests/guest/guest.c || rc=1
result "analyzer (gcc -fanalyzer: userlib, CLI, guest runner)" $rc

echo "static: $pass passed, $fail failed"
[ $fail -eq 0 ]
