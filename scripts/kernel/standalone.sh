# shellcheck shell=bash
# For scripts beside kernel.sh that need its paths, locks, private apt configuration and
# build roots (arm64.sh, compile-breadth.sh): the same parts, sourced the same way.
# PROG stays the caller's name in messages.
_standalone_parts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/kernel/common.sh
. "$_standalone_parts/common.sh"
# shellcheck source=scripts/kernel/apt.sh
. "$_standalone_parts/apt.sh"
# shellcheck source=scripts/kernel/roots.sh
. "$_standalone_parts/roots.sh"
unset _standalone_parts
