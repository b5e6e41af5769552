# shellcheck shell=bash
# A private apt configuration under build/cache/apt: the Debian suites the
# matrix needs, from the mirror the machine's own apt sources name.  The
# machine's apt setup is never changed.
APTDIR=$CACHE/apt
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
APT_SUITES="bullseye bookworm bookworm-security bookworm-backports trixie trixie-backports"

# The archive URIs come from the machine's own apt sources at run time (never hard-coded).
# Prints "MAIN SECURITY".
mirror_uris() {
	local main=${PEERCG_MIRROR:-} sec=${PEERCG_SECURITY_MIRROR:-} f uri suites suite
	local -a files=()
	for f in /etc/apt/sources.list.d/*.sources; do [[ -e $f ]] && files+=("$f"); done
	if ((${#files[@]})); then
		# deb822 stanzas: pair each stanza's URIs with its Suites
		while read -r uri suites; do
			if [[ " $suites " == *-security* ]]; then : "${sec:=$uri}"; else : "${main:=$uri}"; fi
		done < <(awk '
			function flush() { if (uri != "" && types ~ /(^| )deb( |$)/) print uri, suites; uri = ""; suites = ""; types = "" }
			/^[[:space:]]*$/ { flush(); next }
			/^[[:space:]]*#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0 " " }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			END { flush() }' "${files[@]}")
	fi
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -e $f ]] || continue
		while read -r uri suite; do
			if [[ $suite == *-security* ]]; then : "${sec:=$uri}"; else : "${main:=$uri}"; fi
		done < <(awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } print $i, $(i + 1) }' "$f")
	done
	[[ -n $main ]] || die "no Debian archive URI found in the machine's apt sources (set PEERCG_MIRROR)"
	if [[ -z $sec ]]; then
		sec=${main%/}-security
		note "no security URI in the machine's apt sources; trying $sec"
	fi
	echo "${main%/} ${sec%/}"
}

APT_OPTS=()
apt_setup() {
	local main sec s want
	read -r main sec < <(mirror_uris)
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
	want=$(for s in $APT_SUITES; do
		if [[ $s == *-security ]]; then echo "deb [signed-by=$KEYRING] $sec $s main"
		else echo "deb [signed-by=$KEYRING] $main $s main"; fi
	done)
	if [[ ! -f $APTDIR/sources.list || $(cat "$APTDIR/sources.list") != "$want" ]]; then
		echo "$want" >"$APTDIR/sources.list"
		rm -f "$APTDIR/updated"
	fi
	: >"$APTDIR/status"
	APT_OPTS=(
		-o "Dir::Etc::SourceList=$APTDIR/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o "Dir::Etc::Preferences=/dev/null" -o Dir::Etc::PreferencesParts=/dev/null
		-o "Dir::State::Lists=$APTDIR/lists"
		-o "Dir::State::status=$APTDIR/status"
		-o "Dir::Cache=$APTDIR/cache"
		-o APT::Architecture=amd64 -o APT::Architectures::=amd64
		${APT_FOREIGN:+-o APT::Architectures::=$APT_FOREIGN}
		-o APT::Sandbox::User=root -o Acquire::Languages=none
		-o Debug::NoLocking=1
	)
}

apt_update() {
	note "apt-get update (private lists under build/cache/apt)"
	apt-get -q "${APT_OPTS[@]}" update >"$APTDIR/update.log" 2>&1 ||
		{ cat "$APTDIR/update.log" >&2; die "apt-get update failed"; }
	grep -E '^(W|E):' "$APTDIR/update.log" >&2 || true
	touch "$APTDIR/updated"
}

# apt_ready: the private configuration, its lists fetched once.  Callers hold
# the "apt" lock (with_lock apt ...).
apt_ready() {
	apt_setup
	[[ -f $APTDIR/updated ]] || apt_update
}

# has PKG VER: is PKG=VER in the (private) package lists?
# (apt-cache show PKG=VER exits 0 even when VER is unknown: compare madison's versions)
has() {
	apt-cache "${APT_OPTS[@]}" madison "$1" 2>/dev/null |
		awk -F'|' -v v="$2" '{gsub(/[[:space:]]/, "", $2)} $2 == v {found = 1} END {exit !found}'
}

# versions PKG: the versions of PKG the archive has, on one line
versions() {
	apt-cache "${APT_OPTS[@]}" madison "$1" | awk -F'|' '{gsub(/[[:space:]]/, "", $2); printf " %s", $2}'
}

# want PKG VER WHY: dies unless PKG=VER is in the archive (updating stale lists once)
want() {
	has "$1" "$2" && return 0
	apt_update
	has "$1" "$2" || die "$3: $1 version $2 is not in the archive (it has:$(versions "$1"))." \
		"Update scripts/kernels.conf."
}

# apt_download DIR PKG=VER...: the .debs into DIR
apt_download() {
	local dir=$1
	shift
	(cd "$dir" && apt-get -q "${APT_OPTS[@]}" download "$@") >&2
}
