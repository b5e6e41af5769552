#!/usr/bin/env bash
# bench.sh [--quick] [--max N] [--mem MB] [--no-profile] KERNEL...
# For each kernel of scripts/kernels.conf: fetch and build it, boot it under
# QEMU with the benchmark program (suite "bench", build/guest/bench), then
# pull its figures out of the console log:
#   build/bench/KERNEL.txt   the table, as the guest printed it
#   build/bench/KERNEL.csv   kernel,section,metric,condition,round,value,unit
#   build/bench/KERNEL.png   connect overhead and query latency per method
# and print the table.  Figures are reported, never judged: the exit status
# only says whether the run itself worked.
#
#   --quick       short rounds and 20 k connections at most (bench-smoke)
#   --max N       largest live-connection count of the memory part (1000000)
#   --mem MB      guest memory (default 8192: 1 M connections need ~6 GB)
#   --no-profile  skip the ftrace function profile of the connect path
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
quick=0 max=1000000 mem=8192 profile=1
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; max=20000; mem=2048; shift ;;
	--max) max=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--no-profile) profile=0; shift ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: bench.sh [--quick] [--max N] [--mem MB] [--no-profile] KERNEL..." >&2; exit 2; }
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

mkdir -p build/bench
status=0
for k in "$@"; do
	out=build/run/bench-$k
	rm -rf "$out"
	mkdir -p "$out"
	echo "==== $k: fetch and build"
	if ! scripts/kernel.sh fetch "$k" || ! scripts/kernel.sh build "$k" . "build/kernels/$k"; then
		echo "bench.sh: $k: cannot build the module" >&2
		status=1
		continue
	fi
	kver=$(scripts/kernel.sh modver "$k")
	append="slab_nomerge pcg.bench_max=$max pcg.suite_timeout=1500"
	[ $quick = 1 ] && append+=" pcg.bench_quick=1"
	[ $profile = 1 ] && append+=" pcg.bench_profile=1"
	echo "==== $k: boot $kver, run the benchmarks (guest: ${mem} MB, 2 vCPUs, QEMU TCG)"
	scripts/run-guest.sh --name "bench-$k" --kernel "build/cache/kernels/$k/vmlinuz" \
		--kver "$kver" --ko "build/kernels/$k/peercgroup.ko" --bins build/guest \
		--out "$out" --suites "$(scripts/suites.sh bench)" --mem "$mem" --timeout 1800 \
		--append "$append" >"$out/run-guest.txt" 2>&1
	rc=$?
	tail -n 3 "$out/run-guest.txt"
	log=$out/console.log
	tr -d '\r' <"$log" | grep -a '^# ' | sed -n '/^# peercgroup bench:/,$p' >"build/bench/$k.txt"
	{
		echo "kernel,section,metric,condition,round,value,unit"
		tr -d '\r' <"$log" | grep -a '^BENCH,' | sed "s/^BENCH,/$k,/"
	} >"build/bench/$k.csv"
	if [ $rc -ne 0 ] || ! tr -d '\r' <"$log" | grep -aq '^ok - bench/completed'; then
		echo "bench.sh: $k: the run failed; see $out/run-guest.txt and $log" >&2
		status=1
	fi
	if [ "$(wc -l <"build/bench/$k.csv")" -gt 1 ]; then
		plot "build/bench/$k.csv" "build/bench/$k.png" "peercgroup on $kver (QEMU TCG, 2 vCPUs)"
	fi
	echo
	sed 's/^# \{0,1\}//' "build/bench/$k.txt"
	echo
	echo "$k: table build/bench/$k.txt, samples build/bench/$k.csv, chart build/bench/$k.png"
done
exit $status
