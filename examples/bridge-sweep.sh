#!/bin/sh
# bridge-sweep.sh: where Bridge beats the static schedules on an optical ring
# of 64 nodes (800 Gb/s, 1 us per hop, alpha_step 1.7 us), and where it stops
# paying: the simulated time (flow mode) of each baseline divided by
# Bridge's, for every reconfiguration delay and message size. Above 1 Bridge
# wins. Bridge chooses its number of reconfigurations for each size.
#
#   sh examples/bridge-sweep.sh            (from the repository; bin/collc)
#   COLLC=collc NODES=128 sh examples/bridge-sweep.sh
set -eu
COLLC=${COLLC:-bin/collc}
NODES=${NODES:-64}
DELAYS=${DELAYS:-"1us 10us 100us 1ms 5ms"}
SIZES=${SIZES:-"64KiB 1MiB 16MiB 128MiB"}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

for d in $DELAYS; do
	cat >"$dir/$d.coll" <<COLL
network {
    link_bandwidth = 800 Gbps;
    mtu            = 4500 B;
    link_latency   = 1 us;
    router_latency = 0 ns;
    step_overhead  = 1.7 us;
    reconfig_delay = $(echo "$d" | sed 's/us$/ us/; s/ms$/ ms/');
}
topology O = optical_ring($NODES);
collective alltoall A2A on O { algorithm bridge; }
collective alltoall A2A_static on O { algorithm s_bruck; }
collective alltoall A2A_gbruck on O { algorithm g_bruck; }
collective reduce_scatter RS on O { algorithm bridge; }
collective reduce_scatter RS_ring on O { algorithm ring; }
collective reduce_scatter RS_rhd on O { algorithm r_hd(reconfigs 1); }
collective allreduce AR on O { algorithm bridge; }
collective allreduce AR_ring on O { algorithm ring; }
COLL
	for s in $SIZES; do
		"$COLLC" sim "$dir/$d.coll" --sizes "$s" --mode flow --csv | sed 1d |
			sed "s/^/$d,$s,/" >>"$dir/all.csv"
	done
done

# columns: delay,size, then collc sim's CSV: collective,kind,algorithm,size,count,type,redop,
# time_us,...,reconfigs,reconfig_s
table() { # title, the baseline collective, Bridge's
	echo
	echo "$1"
	awk -F, -v base="$2" -v br="$3" -v delays="$DELAYS" -v sizes="$SIZES" '
	{ t[$1 "," $2 "," $3] = $10; r[$1 "," $2 "," $3] = $(NF - 1) }
	END {
		nd = split(delays, D, " "); ns = split(sizes, S, " ")
		printf "%-10s", "size"
		for (i = 1; i <= nd; i++) printf "%15s", "delta " D[i]
		printf "\n"
		for (j = 1; j <= ns; j++) {
			printf "%-10s", S[j]
			for (i = 1; i <= nd; i++) {
				k = D[i] "," S[j]
				printf "%8.2fx (R%-2d)", t[k "," base] / t[k "," br], r[k "," br]
			}
			printf "\n"
		}
	}' "$dir/all.csv"
}

echo "optical_ring($NODES): simulated time of a baseline / Bridge's (R: Bridge's reconfigurations)"
table "alltoall: static Bruck (S-Bruck) / Bridge" A2A_static A2A
table "alltoall: Bruck reconfigured every step (G-Bruck) / Bridge" A2A_gbruck A2A
table "reduce_scatter: Ring / Bridge" RS_ring RS
table "reduce_scatter: R-HD (one reconfiguration) / Bridge" RS_rhd RS
table "allreduce: Ring / Bridge" AR_ring AR
