#!/usr/bin/env bash
# fresh broker (auto transport), filled page cache assumed; client produces N GiB; per-thread CPU of client and broker over a window
set -uo pipefail
cd /work/main
. /tmp/exp/thrfns.sh
SIZE=${SIZE:-16384}; ACKS=${ACKS:-1}; GB=${GB:-6}
d=/tmp/exp/b-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000))
printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\ntransport=auto\n%s\n' $port $d "${SF_PROPS:-}" > $d/server.properties
STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="${SF_OPTS:-}" bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
bp=$!
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
sleep 1; jp=$(pgrep -f "$d/server.properties" | tail -1)
for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic t --partitions 1 >/dev/null 2>&1 && break; sleep 0.5; done
STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="${COPTS:-}" bin/stellflow-perf.sh produce --bootstrap-server 127.0.0.1:$port --topic t --num-records $((GB*1073741824/SIZE)) --record-size $SIZE --throughput -1 --json --producer-props acks=$ACKS batch.size=1048576 linger.ms=5 ${PPROPS:-} > $d/out.json 2>&1 &
tp=$!
sleep 2; cp=$(pgrep -f "stellflow-perf.*produce" | head -1)
sleep ${W0:-8}
thr_snap $cp $d/c0; thr_snap $jp $d/b0; s0=$(awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8}' /proc/stat); t0=$(date +%s%N)
sleep ${W:-5}
thr_snap $cp $d/c1; thr_snap $jp $d/b1; s1=$(awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8}' /proc/stat); t1=$(date +%s%N)
idle0=0
echo "window $(( (t1-t0)/1000000 )) ms; client: $(thr_diff $d/c0 $d/c1)"
echo "broker: $(thr_diff $d/b0 $d/b1)"
wait $tp; grep -o '"mb_per_s": *[0-9.]*' $d/out.json
kill $bp; wait $bp 2>/dev/null; rm -rf $d
