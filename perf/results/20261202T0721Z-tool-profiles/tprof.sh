#!/usr/bin/env bash
# tprof.sh: fresh epoll broker, 1024 MB warm-up, then ROUNDS produce cases (SIZE, MB) with async-profiler loaded into the TOOL from its start (cpu, threads)
set -uo pipefail
cd /work/main
AP=~/.cache/stellflow/async-profiler-4.2/libasyncProfiler.so
d=/tmp/exp/b-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000))
printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\ntransport=epoll\n' $port $d > $d/server.properties
STELLFLOW_NO_BUILD=1 bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
bp=$!
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
jp=$(pgrep -f "$d/server.properties" | tail -1)
topic() { for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic $1 --partitions 1 >/dev/null 2>&1 && return; sleep 0.5; done; }
prod() { STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="${5:-}" /usr/bin/time -f "%U %S %e" -o $d/time bin/stellflow-perf.sh produce --bootstrap-server 127.0.0.1:$port --topic $1 --num-records $2 --record-size $3 --throughput -1 --json --producer-props acks=$4 batch.size=1048576 linger.ms=5 2>/dev/null | grep -o '"mb_per_s": *[0-9.]*'; }
topic warm; prod warm $((${WARM_MB:-1024}*1024)) 1024 1 >/dev/null
SIZE=${SIZE:-1024}; MB=${MB:-1024}
for r in $(seq 1 ${ROUNDS:-2}); do
  t=t$r; topic $t
  o=""; [ -n "${PROF:-}" ] && o="-agentpath:$AP=start,event=cpu,interval=1ms,threads,collapsed,file=/tmp/exp/tool-r$r-$SIZE.collapsed"
  b0=$(awk '{print $14+$15}' /proc/$jp/stat)
  m=$(prod $t $((MB*1024*1024/SIZE)) $SIZE ${ACKS:-1} "$o ${TOPTS:-}")
  b1=$(awk '{print $14+$15}' /proc/$jp/stat)
  echo "r$r size=$SIZE $m broker_cs=$((b1-b0)) tool(user sys wall)=$(cat $d/time)"
done
kill $bp; wait $bp 2>/dev/null; rm -rf $d
