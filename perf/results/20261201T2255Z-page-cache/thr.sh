# thr_snap pid file: per-thread cpu (cs) by comm
thr_snap() { for t in /proc/$1/task/*; do echo "$(cat $t/comm 2>/dev/null | tr ' ' '_') $(awk '{print $14+$15}' $t/stat 2>/dev/null)"; done | awk '{a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort > $2; }
thr_diff() { join -a2 -e0 -o 0,1.2,2.2 $1 $2 | awk '{d=$3-$2; if (d>=3) printf "%s=%d ", $1, d}'; echo; }
