#!/usr/bin/env bash
# fcprof.sh OUTDIR: the first recorded case after the warm-up vs the next one, profiled. Broker from its AOT cache
# (broker/target/stellflow-broker.aot), page cache filled leaving RESERVE_MB free (lab: 2048; the lab's Kafka warm-up
# takes another 1024 MB of it, so the default here is 1024), 1024 MB warm-up (1 KiB, acks=1), then ROUNDS cases of
# 1 GiB 1 KiB acks=1 each with async-profiler (cpu, threads) on the broker; broker CPU and /proc/vmstat reclaim counters per case.
set -uo pipefail
OUT=$1; mkdir -p $OUT
cd /work/main
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
AP=~/.cache/stellflow/async-profiler-4.2/libasyncProfiler.so
PCP="$(ls perf/target/stellflow-perf-*-SNAPSHOT.jar):perf/target/lib/*"
rm -rf /tmp/exp/fill; mkdir -p /tmp/exp/fill; free_mb=$(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 ))
dd if=/dev/zero of=/tmp/exp/fill/fill bs=1M count=$((free_mb - ${RESERVE_MB:-1024})) conv=fsync status=none
echo "free after fill: $(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 )) MB"
d=/tmp/exp/b-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000))
printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\nmetrics.port=0\n' $port $d > $d/server.properties
STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="-Xlog:aot=info" bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
jp=$(pgrep -f "$d/server.properties" | tail -1)
grep -q "Using AOT-linked classes: true" $d/broker.log && echo "broker uses its AOT cache" || echo "broker WITHOUT AOT cache"
topic() { for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic $1 --partitions 1 >/dev/null 2>&1 && return; sleep 0.5; done; }
prod() { STELLFLOW_NO_BUILD=1 bin/stellflow-perf.sh produce --bootstrap-server 127.0.0.1:$port --topic $1 --num-records $2 --record-size 1024 --throughput -1 --json --producer-props acks=1 batch.size=1048576 linger.ms=5 2>/dev/null | grep -o '"mb_per_s": *[0-9.]*' | grep -o '[0-9.]*$'; }
vm() { awk '/^(pgscan_direct|pgsteal_direct|allocstall_normal|allocstall_movable|pgscan_kswapd|pgsteal_kswapd) / {printf "%s=%s ", $1, $2}' /proc/vmstat; }
topic warm; prod warm $((1024*1024)) >/dev/null
echo "after warm-up: free $(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 )) MB"
for r in $(seq 1 ${ROUNDS:-3}); do
  topic t$r
  $J -cp "$PCP" io.stellflow.perf.lab.ProfilerAttach $jp $AP "start,event=cpu,interval=1ms,threads" >/dev/null
  v0=$(vm); b0=$(awk '{print $14+$15}' /proc/$jp/stat); u0=$(awk '{print $14}' /proc/$jp/stat)
  m=$(prod t$r $((1024*1024)))
  b1=$(awk '{print $14+$15}' /proc/$jp/stat); u1=$(awk '{print $14}' /proc/$jp/stat); v1=$(vm)
  $J -cp "$PCP" io.stellflow.perf.lab.ProfilerAttach $jp $AP "dump,collapsed,file=$OUT/broker-case$r.collapsed" >/dev/null; $J -cp "$PCP" io.stellflow.perf.lab.ProfilerAttach $jp $AP "stop,file=$OUT/broker-case$r-cpu.html" >/dev/null
  echo "case $r: $m MB/s, broker cpu $(( b1 - b0 )) cs (user $(( u1 - u0 ))), free after $(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 )) MB"
  echo "   vmstat before: $v0"; echo "   vmstat after:  $v1"
done
kill $jp; wait 2>/dev/null; rm -rf $d /tmp/exp/fill
