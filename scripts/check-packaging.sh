#!/usr/bin/env bash
# make check-packaging: the facts the packaging keeps in more than one file
# agree.  One "ok - packaging/..." or "not ok - ..." line per check.
#  - VERSION = dkms.conf's PACKAGE_VERSION = debian/changelog's version =
#    the newest CHANGELOG.md heading;
#  - every kernel option dkms.conf requires (BUILD_EXCLUSIVE_CONFIG, read
#    by packaging/Makefile.dkms too) has an #error in module/compat.h;
#  - every SPDX licence of the tree has its text in LICENSES/.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0
check() {
	local n=$1 why=$2
	shift 2
	if "$@"; then echo "ok - packaging/$n"; passed=$((passed + 1))
	else echo "not ok - packaging/$n: $why"; failed=$((failed + 1)); fi
}

version=$(cat VERSION)
conf=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
check dkms-conf-version "dkms.conf's PACKAGE_VERSION is '$conf', VERSION is '$version'" \
	[ "$conf" = "$version" ]
deb=$(dpkg-parsechangelog -S Version 2>/dev/null || sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
check debian-changelog-version "debian/changelog's version is '$deb' (upstream '${deb%-*}'), VERSION is '$version'" \
	[ "${deb%-*}" = "$version" ]
news=$(sed -n 's/^## \[\{0,1\}\([0-9][^] ]*\).*/\1/p' CHANGELOG.md | head -n 1)
check changelog-md-version "CHANGELOG.md's newest entry is '$news', VERSION is '$version'" \
	[ "$news" = "$version" ]

opts=$(sed -n 's/^BUILD_EXCLUSIVE_CONFIG="\(.*\)"$/\1/p' dkms.conf)
check config-list "no BUILD_EXCLUSIVE_CONFIG in dkms.conf" [ -n "$opts" ]
for o in $opts; do
	# An "#if ... !defined(CONFIG_X) ..." line followed by an #error.
	check "compat-errors-$o" "module/compat.h has no #error for $o (dkms.conf requires it)" \
		awk -v o="$o" '/^#if/ && index($0, "!defined(" o ")") { want = 1; next }
			want && /^#error/ { found = 1 } { want = 0 } END { exit !found }' module/compat.h
done
mk=$(make -s -f packaging/Makefile.dkms -p KVER=0 KDIR=/nonexistent 2>/dev/null |
	sed -n 's/^REQUIRED_CONFIG := //p' | head -n 1)
check makefile-reads-list "packaging/Makefile.dkms requires '$mk', dkms.conf '$opts'" [ "$mk" = "$opts" ]

# Each licence and exception named by a source file's SPDX line.
while read -r l; do
	f=LICENSES/${l%-or-later}
	f=${f%-only}
	check "license-$l" "no $f for a file under $l" [ -s "$f" ]
done < <(git ls-files -z | xargs -0 grep -hoE '^(// |/\* |# )SPDX-License-Identifier: [A-Za-z0-9.+ -]+' 2>/dev/null |
	sed 's/^.*SPDX-License-Identifier: //; s/ WITH /\n/' | sed 's/[[:space:]]*$//' | sort -u)
check copying "no COPYING" [ -s COPYING ]

echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
