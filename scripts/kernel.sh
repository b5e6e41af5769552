#!/bin/bash
# Debian stock kernels for the module: the matrix, fetching, build roots, module builds,
# the debug kernel and checkpatch, one file each under scripts/kernel/.  This is their
# command line.  Everything lands under build/cache/ (kernels, .debs, private apt state,
# build roots) and build/scratch/.  The machine's own apt configuration and /usr/src are
# never modified: apt runs with a private configuration, and absolute /usr/src paths of the
# headers are made to resolve in a private mount namespace (unshare -m) or inside a build
# root (chroot).
set -euo pipefail

PROG=${0##*/}
parts=$(cd "$(dirname "${BASH_SOURCE[0]}")/kernel" && pwd)
# shellcheck source=scripts/kernel/common.sh
. "$parts/common.sh"     # messages, paths, Depends, installed packages, locks
# shellcheck source=scripts/kernel/matrix.sh
. "$parts/matrix.sh"     # scripts/kernels.conf
# shellcheck source=scripts/kernel/apt.sh
. "$parts/apt.sh"        # the private apt configuration
# shellcheck source=scripts/kernel/fetch.sh
. "$parts/fetch.sh"      # kernel and source packages into build/cache
# shellcheck source=scripts/kernel/roots.sh
. "$parts/roots.sh"      # mmdebstrap build roots
# shellcheck source=scripts/kernel/build.sh
. "$parts/build.sh"      # module builds
# shellcheck source=scripts/kernel/debug.sh
. "$parts/debug.sh"      # the debug kernel
# shellcheck source=scripts/kernel/checkpatch.sh
. "$parts/checkpatch.sh" # checkpatch.pl

usage() {
	cat <<USAGE
usage: $PROG list                  names of the kernels in scripts/kernels.conf
       $PROG field NAME FIELD      one field of NAME's line: suite, abi, version, cc, root
       $PROG fetch NAME            download + unpack image and headers into build/cache/kernels/NAME
       $PROG root SUITE            make the build root build/cache/roots/SUITE (mmdebstrap)
       $PROG kdir NAME             the kernel build directory (make -C KDIR M=SRC)
       $PROG build NAME SRC OUT    build SRC (top-level Kbuild) against NAME, copy peercgroup.ko to OUT/
       $PROG modver NAME           the kernel's release string (uname -r), for /lib/modules/VER
       $PROG arch NAME             its Debian architecture (amd64, arm64)
       $PROG debug NAME            build a debug kernel (KASAN, kmemleak, lockdep, UBSAN) from
                                   Debian's linux-source of NAME into build/cache/debug/NAME
       $PROG debug-build NAME SRC OUT   build SRC against that debug kernel, copy peercgroup.ko to OUT/
       $PROG checkpatch NAME       the path of checkpatch.pl from NAME's linux-source (fetched once)
USAGE
	exit "${1:-2}"
}

(($#)) || usage
cmd=$1
shift
case $cmd in
list) (($# == 0)) || usage; names ;;
field) (($# == 2)) || usage; field "$@" ;;
fetch) (($# == 1)) || usage; fetch "$1" ;;
root) (($# == 1)) || usage; root "$1" ;;
kdir) (($# == 1)) || usage; kdir "$1" ;;
modver) (($# == 1)) || usage; modver "$1" ;;
arch) (($# == 1)) || usage; conf "$1"; echo "$K_ARCH" ;;
build) (($# == 3)) || usage; build "$@" ;;
debug) (($# == 1)) || usage; debug "$1" ;;
debug-build) (($# == 3)) || usage; debug_build "$@" ;;
checkpatch) (($# == 1)) || usage; checkpatch "$1" ;;
-h | --help | help) usage 0 ;;
*) usage ;;
esac
