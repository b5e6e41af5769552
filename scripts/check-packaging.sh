#!/usr/bin/env bash
# make check-packaging: the facts the packaging keeps in more than one file
# agree.  One "ok - packaging/..." or "not ok - ..." line per check.
#  - VERSION = dkms.conf's PACKAGE_VERSION = debian/changelog's version =
#    the newest CHANGELOG.md heading;
#  - every kernel option dkms.conf requires (BUILD_EXCLUSIVE_CONFIG, read
#    by packaging/Makefile.dkms too) has an #error in module/compat.h;
#  - every SPDX licence of the tree has its text in LICENSES/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
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
	# "#if ... !defined(CONFIG_X)" (required) or "#if defined(CONFIG_X)"
	# (refused, written !CONFIG_X in dkms.conf), then an #error.
	case $o in
	!*) o=${o#!} cond="defined($o)" ;;
	*) cond="!defined($o)" ;;
	esac
	# shellcheck disable=SC2016  # awk's own $0
	check "compat-errors-$o" "module/compat.h has no '#if $cond' + #error (dkms.conf lists $o)" \
		awk -v c="$cond" '/^#if/ { line = $0; gsub(/!defined/, "NOT", line); cc = c; gsub(/!defined/, "NOT", cc)
				if (index(line, cc)) { want = 1; next } }
			want && /^#error/ { found = 1 } { want = 0 } END { exit !found }' module/compat.h
done
mk_req=$(make -s -f packaging/Makefile.dkms -p KVER=0 KDIR=/nonexistent 2>/dev/null | sed -n 's/^REQUIRED_CONFIG := //p' | head -n 1)
mk_ref=$(make -s -f packaging/Makefile.dkms -p KVER=0 KDIR=/nonexistent 2>/dev/null | sed -n 's/^REFUSED_CONFIG := //p' | head -n 1)
want_req=$(tr ' ' '\n' <<<"$opts" | grep -v '^!' | paste -sd' ')
want_ref=$(tr ' ' '\n' <<<"$opts" | sed -n 's/^!//p' | paste -sd' ')
check makefile-reads-list "packaging/Makefile.dkms requires '$mk_req' and refuses '$mk_ref'; dkms.conf says '$opts'" \
	test "$mk_req" = "$want_req" -a "$mk_ref" = "$want_ref"

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
