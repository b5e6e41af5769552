#!/bin/sh
# peercgroup(1) without the module: help, errors that name the fix, and
# JSON that is valid UTF-8 whatever bytes a cgroup name holds.
# Usage: test_cli.sh PATH/TO/peercgroup
set -u
cli=$1 fails=0 n=0
ok() { n=$((n + 1)); echo "ok - cli/$1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok - cli/$1: $2"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name" "$*"; fi; }

out=$("$cli" help); rc=$?
check help-exit-0 [ "$rc" = 0 ]
for c in status serve ask peer classify help; do
	check "help-lists-$c" sh -c "printf '%s\n' \"\$1\" | grep -q '^  $c '" _ "$out"
done
check dash-dash-help-same [ "$("$cli" --help)" = "$out" ]
check short-options-documented sh -c "printf '%s\n' \"\$1\" | grep -q '^  -j, --json '" _ "$out"
check short-options-same [ "$("$cli" -j classify /lxc.payload.x)" = "$("$cli" --json classify /lxc.payload.x)" ]

err=$("$cli" frobnicate 2>&1); rc=$?
check unknown-exit-2 [ "$rc" = 2 ]
check unknown-named sh -c "printf '%s' \"\$1\" | grep -q \"unknown command 'frobnicate'\"" _ "$err"

err=$("$cli" classify 2>&1); rc=$?
check missing-arg-exit-2 [ "$rc" = 2 ]
check missing-arg-named sh -c "printf '%s' \"\$1\" | grep -q 'classify takes one CGROUP_PATH'" _ "$err"

err=$("$cli" peer 3x 2>&1); rc=$?
check peer-not-a-number-exit-2 [ "$rc" = 2 ]
check peer-not-a-number-named sh -c "printf '%s' \"\$1\" | grep -q \"peer takes a file descriptor number, not '3x'\"" _ "$err"
for bad in -1 '' 2147483648; do
	"$cli" peer "$bad" >/dev/null 2>&1; rc=$?
	check "peer-rejects-'$bad'" [ "$rc" = 2 ]
done
# --live needs no module: a file that is no socket is the query's error
out=$("$cli" --live peer 0 </dev/null 2>&1); rc=$?
check peer-live-not-a-socket-exit-7 [ "$rc" = 7 ]
check peer-live-not-a-socket-named sh -c "printf '%s' \"\$1\" | grep -q '^error=ENOTSOCK '" _ "$out"

err=$("$cli" classify /a//b 2>&1); rc=$?
check invalid-exit-1 [ "$rc" = 1 ]
check invalid-empty-once sh -c "[ \$(printf '%s' \"\$1\" | grep -o 'empty' | wc -l) = 2 ]" _ "$err"

# invalid UTF-8 (latin-1 e-acute), a control character, a quote
bad=$(printf '/lxc.payload.caf\351\001"x')
json=$("$cli" --json classify "$bad")
check json-valid-utf8 sh -c "printf '%s' \"\$1\" | iconv -f UTF-8 -t UTF-8 >/dev/null" _ "$json"
check json-escapes-byte sh -c "printf '%s' \"\$1\" | grep -q 'caf\\\\udce9\\\\u0001\\\\\"x'" _ "$json"
check text-escapes-byte sh -c "\"\$1\" classify \"\$2\" | grep -q 'container=caf\\\\xe9\\\\x01\"x'" _ "$cli" "$bad"
if command -v python3 >/dev/null; then
	check json-parses python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["container"]["id"].encode("utf-8","surrogateescape")==b"caf\xe9\x01\"x"' "$json"
fi

# the module is absent on this host (or not visible): the message names the fix
if [ ! -e /dev/peercgroup ]; then
	err=$("$cli" serve @test-cli 2>&1); rc=$?
	check serve-no-module-exit-3 [ "$rc" = 3 ]
	check serve-no-module-names-fix sh -c "printf '%s' \"\$1\" | grep -q 'modprobe peercgroup'" _ "$err"
fi
# serve replaces a stale socket file, never one a server listens on
# (--live needs no module)
sock=$(mktemp -u /tmp/pcg-cli-XXXXXX)
"$cli" --live serve "$sock" 2>/dev/null &
first=$!
i=0; while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
timeout 5 "$cli" --live serve "$sock" >/dev/null 2>&1; rc=$?
check serve-keeps-a-live-socket [ "$rc" = 6 ]
check serve-first-still-listening kill -0 "$first"
kill "$first"; wait "$first" 2>/dev/null
check serve-stale-left-behind [ -S "$sock" ]
"$cli" --live --count 1 serve "$sock" >/dev/null 2>&1 &
second=$!
i=0; while ! "$cli" --live ask "$sock" >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
wait "$second"; rc=$?
check serve-replaces-a-stale-socket [ "$rc" = 0 ]
rm -f "$sock"

# a device that speaks no ABI of ours (here /dev/null at the device's path,
# in a mount namespace of our own): loaded or not, status cannot tell
if unshare -rm true 2>/dev/null; then
	keep=$(mktemp)	# /dev/null kept reachable under the new /dev
	# shellcheck disable=SC2016 # the inner shell expands them
	json=$(unshare -rm sh -c 'mount --bind /dev/null "$2" && mount -t tmpfs none /dev &&
		touch /dev/peercgroup && mount --bind "$2" /dev/peercgroup &&
		exec "$1" --json status' _ "$cli" "$keep")
	rm -f "$keep"
	check status-foreign-device-loaded-null sh -c "printf '%s' \"\$1\" | grep -q '\"module_loaded\":null,\"error\":\"EPROTO\"'" _ "$json"
else
	echo "# skip status-foreign-device-loaded-null: no user namespace to mount in"
fi
echo "# cli: $((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
