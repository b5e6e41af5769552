#!/usr/bin/env bash
# bench.sh [--icount] [--floor] [--boots N] [--parts LIST] [--quick] [--max N] [--mem MB] [--no-profile] KERNEL...
# For each kernel of scripts/kernels.conf: fetch and build it, boot it under
# QEMU with the benchmark program (suite "bench", build/guest/bench), then
# pull its figures out of the console log:
#   build/bench/KERNEL.txt   the table, as the guest printed it
#   build/bench/KERNEL.csv   kernel,section,metric,condition,round,value,unit
#   build/bench/KERNEL.png   connect overhead and query latency per method
# and print the table.  Figures are reported, never judged: the exit status
# only says whether the run itself worked.
#
# --icount boots the same guest under QEMU -icount shift=0,sleep=off with one
# vCPU (guest time counts instructions: deterministic), --boots times (3),
# and writes per boot build/bench/KERNEL-icount-bootN.{txt,csv}, then
# build/bench/KERNEL-icount.txt: each headline figure beside its goal with
# its spread across the boots.
#
#   --icount      instruction-counted virtual time, 1 vCPU, 100 k connections
#   --floor       --icount's connect part with the floor build in place of the
#                 module: its hooks with empty callbacks (tests/bench/floor.c),
#                 what ftrace alone costs; build/bench/KERNEL-floor-icount*
#   --boots N     boots of an --icount run (3)
#   --parts LIST  only these parts: query,connect,live,memory,contention
#                 ("none" with the profile: the profile alone)
#   --quick       short rounds and 20 k connections at most (bench-smoke)
#   --max N       largest live-connection count of the memory part (1000000)
#   --mem MB      guest memory (default 8192: 1 M connections need ~6 GB)
#   --no-profile  skip the ftrace function profile of the connect path
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
quick=0 max='' mem='' profile=1 icount=0 boots=3 parts='' floor=0
while [ $# -gt 0 ]; do
	case $1 in
	--icount) icount=1; shift ;;
	--floor) floor=1; icount=1; parts=connect; profile=0; shift ;;
	--boots) boots=$2; shift 2 ;;
	--parts) parts=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--max) max=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--no-profile) profile=0; shift ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: bench.sh [--icount] [--floor] [--boots N] [--parts LIST] [--quick] [--max N] [--mem MB] [--no-profile] KERNEL..." >&2; exit 2; }
# 1 M connections need ~6 GB of guest memory; icount runs stop at 100 k.
if [ $quick = 1 ]; then
	: "${max:=20000}" "${mem:=2048}"
elif [ $icount = 1 ]; then
	: "${max:=100000}" "${mem:=2048}"
fi
: "${max:=1000000}" "${mem:=8192}"
[ $icount = 1 ] || boots=1
[ -x build/guest/bench ] || { echo "bench.sh: build/guest/bench missing (make bench builds it)" >&2; exit 2; }

# Plot connect overhead (median, min-max bars) and query ns per method.
plot() {
	local csv=$1 png=$2 title=$3 dat
	command -v gnuplot >/dev/null || { echo "bench.sh: no gnuplot, no chart" >&2; return 0; }
	dat=$(mktemp -d)
	# overhead per condition: median min max
	awk -F, '($2=="connect" || $2=="connect_live") && $3=="overhead_pct" { v[$4]=v[$4] " " $6 }
		function sortn(s, a,   n, i, j, t) { n = split(s, a, " ");
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return n }
		function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END {
			for (k in v) { n = sortn(v[k], a); printf "\"%s\" %g %g %g\n", k, med(a, n), a[1], a[n] }
		}' "$csv" | sort -V >"$dat/overhead"
	awk -F, '$2=="query" && $4=="ns_per_call" { v[$3]=v[$3] " " $6; if (!($3 in o)) o[$3] = ++n_o }
		function sortn(s, a,   n, i, j, t) { n = split(s, a, " ");
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return n }
		function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		END { for (k in v) { n = sortn(v[k], a); printf "%d \"%s\" %g %g %g\n", o[k], k, med(a, n), a[1], a[n] } }' \
		"$csv" | sort -n | cut -d' ' -f2- >"$dat/query"
	gnuplot <<EOF
set terminal pngcairo size 1200,500 font "sans,10" noenhanced
set output "$png"
set multiplot layout 1,2 title "$title"
set style data histogram
set style histogram errorbars lw 1
set style fill solid 0.6 border -1
set boxwidth 0.7
set grid ytics
set xtics rotate by -30
set title "connect+accept+close: overhead with the module (median, min-max)"
set ylabel "% more time per cycle"
plot "$dat/overhead" using 2:3:4:xtic(1) notitle lc rgb "#4477aa"
set title "peer query: ns per call (median, min-max), log scale"
set ylabel "ns per call"
set logscale y
plot "$dat/query" using 2:3:4:xtic(1) notitle lc rgb "#cc6677"
unset multiplot
EOF
	rm -rf "$dat"
}

# One boot: the guest's table in $2.txt, its samples in $2.csv, its
# headline figures in $2.fig ("key|value|line").  Returns non-zero when the
# run itself failed.
boot() {
	local k=$1 base=$2 out=$3 kver append rc log accel_env=()
	kver=$(scripts/kernel.sh modver "$k")
	append="slab_nomerge pcg.bench_max=$max pcg.suite_timeout=3000"
	[ $floor = 1 ] && append+=" pcg.bench_floor=1"
	[ $quick = 1 ] && append+=" pcg.bench_quick=1"
	[ $profile = 1 ] && append+=" pcg.bench_profile=1"
	[ -n "$parts" ] && [ $icount = 0 ] && append+=" pcg.bench_parts=$parts"
	if [ $icount = 1 ]; then
		append+=" pcg.bench_icount=1 pcg.bench_parts=${parts:-query,connect,memory,contention}"
		accel_env=("PCG_QEMU_ICOUNT=shift=0,sleep=off")
		echo "==== $k: boot $kver, run the benchmarks (guest: ${mem} MB, 1 vCPU, QEMU TCG -icount shift=0,sleep=off)"
	else
		echo "==== $k: boot $kver, run the benchmarks (guest: ${mem} MB, 2 vCPUs, QEMU TCG)"
	fi
	rm -rf "$out"
	mkdir -p "$out"
	env "${accel_env[@]}" scripts/run-guest.sh --name "$(basename "$out")" \
		--kernel "build/cache/kernels/$k/vmlinuz" \
		--kver "$kver" --ko "build/kernels/$k$variant/peercgroup.ko" --bins build/guest \
		--out "$out" --suites "$(scripts/suites.sh bench)" --mem "$mem" --timeout 3600 \
		--append "$append" >"$out/run-guest.txt" 2>&1
	rc=$?
	tail -n 3 "$out/run-guest.txt"
	log=$out/console.log
	tr -d '\r' <"$log" | grep -a '^# ' | sed -n '/^# peercgroup bench:/,$p' >"$base.txt"
	{
		echo "kernel,section,metric,condition,round,value,unit"
		tr -d '\r' <"$log" | grep -a '^BENCH,' | sed "s/^BENCH,/$k,/"
	} >"$base.csv"
	tr -d '\r' <"$log" | grep -a '^FIGURE|' | cut -d'|' -f2- >"$base.fig"
	if [ $rc -ne 0 ] || ! tr -d '\r' <"$log" | grep -aq '^ok - bench/completed'; then
		echo "bench.sh: $k: the run failed; see $out/run-guest.txt and $log" >&2
		return 1
	fi
}

# Each figure of the boots' .fig files: the line of the median boot, and
# the spread (max - min) / median of its value across boots.
spread() {
	awk -F'|' '
		{ if (!($1 in n)) order[++keys] = $1
		  i = ++n[$1]; v[$1, i] = $2; l[$1, i] = $3 }
		END {
			for (k = 1; k <= keys; k++) {
				key = order[k]; m = n[key]
				for (i = 1; i <= m; i++) { s[i] = v[key, i]; idx[i] = i }
				for (i = 2; i <= m; i++)
					for (j = i; j > 1 && s[j - 1] + 0 > s[j] + 0; j--) {
						t = s[j]; s[j] = s[j - 1]; s[j - 1] = t
						t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t
					}
				med = s[int((m + 1) / 2)]
				sp = med != 0 ? (s[m] - s[1]) / (med < 0 ? -med : med) * 100 : 0
				printf "%s [%d boots: spread %.2f %%]\n", l[key, idx[int((m + 1) / 2)]], m, sp
			}
		}' "$@"
}

mkdir -p build/bench
status=0
variant=''
if [ $floor = 1 ]; then
	variant=-floor
	export PCG_KBUILD_FLAGS="${PCG_KBUILD_FLAGS:+$PCG_KBUILD_FLAGS }PCG_BENCH_FLOOR=y"
fi
for k in "$@"; do
	echo "==== $k: fetch and build"
	if ! scripts/kernel.sh fetch "$k" || ! scripts/kernel.sh build "$k" . "build/kernels/$k$variant"; then
		echo "bench.sh: $k: cannot build the module" >&2
		status=1
		continue
	fi
	if [ $icount = 0 ]; then
		boot "$k" "build/bench/$k" "build/run/bench-$k" || status=1
		if [ "$(wc -l <"build/bench/$k.csv")" -gt 1 ]; then
			plot "build/bench/$k.csv" "build/bench/$k.png" \
				"peercgroup on $(scripts/kernel.sh modver "$k") (QEMU TCG, 2 vCPUs)"
		fi
		echo
		sed 's/^# \{0,1\}//' "build/bench/$k.txt"
		echo
		echo "$k: table build/bench/$k.txt, samples build/bench/$k.csv, chart build/bench/$k.png"
		continue
	fi
	start=$(date +%s)
	figs=()
	for b in $(seq 1 "$boots"); do
		base=build/bench/$k$variant-icount-boot$b
		if boot "$k" "$base" "build/run/bench-icount-$k$variant-$b"; then
			figs+=("$base.fig")
		else
			status=1
		fi
	done
	secs=$(($(date +%s) - start))
	{
		echo "# peercgroup bench-icount: kernel $(scripts/kernel.sh modver "$k"), ${#figs[@]} boots, QEMU TCG -icount shift=0,sleep=off, 1 vCPU, $secs s"
		[ ${#figs[@]} -gt 0 ] && spread "${figs[@]}" | sed 's/^/# /'
	} >"build/bench/$k$variant-icount.txt"
	echo
	sed 's/^# \{0,1\}//' "build/bench/$k$variant-icount-boot1.txt" 2>/dev/null
	echo
	echo "==== $k$variant: figures across boots"
	sed 's/^# \{0,1\}//' "build/bench/$k$variant-icount.txt"
	echo
	echo "$k: figures build/bench/$k$variant-icount.txt; per boot build/bench/$k$variant-icount-bootN.{txt,csv}; ${boots} boots took ${secs}s"
done
exit $status
