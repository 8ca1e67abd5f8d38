#!/usr/bin/env bash
# fresh epoll broker, 512 MiB warm-up, then ROUNDS x alternate produce 1 GiB with lib-old / lib-new
set -uo pipefail
cd /work/main
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
tool() { local lib=$1; shift; $J -Xms256m -Xmx1g --enable-native-access=ALL-UNNAMED -Dlogback.configurationFile=/work/main/config/tools-logback.xml -cp "/tmp/exp/perf.jar:/tmp/exp/$lib/*" io.stellflow.tools.PerfCommand "$@"; }
SIZE=${SIZE:-1024}
d=/tmp/exp/b-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000))
printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\ntransport=epoll\n' $port $d > $d/server.properties
STELLFLOW_NO_BUILD=1 bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
bp=$!
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
jp=$(pgrep -f "$d/server.properties" | tail -1)
mk() { for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic $1 --partitions 1 >/dev/null 2>&1 && return; sleep 0.5; done; }
mk w; tool lib-new produce --bootstrap-server 127.0.0.1:$port --topic w --num-records 524288 --record-size 1024 --throughput -1 --json --producer-props acks=1 batch.size=1048576 linger.ms=5 >/dev/null 2>&1
n=$((1073741824 / SIZE))
for r in $(seq 1 ${ROUNDS:-3}); do
  for lib in ${ORDER:-lib-old lib-new}; do
    mk t$r$lib
    b0=$(awk '{print $14+$15}' /proc/$jp/stat)
    /usr/bin/time -f "cpu %U+%S wall %e" -o $d/time bash -c "$(declare -f tool); J=$J; tool $lib produce --bootstrap-server 127.0.0.1:$port --topic t$r$lib --num-records $n --record-size $SIZE --throughput -1 --json --producer-props acks=1 batch.size=1048576 linger.ms=5" > $d/out.json 2> $d/err
    b1=$(awk '{print $14+$15}' /proc/$jp/stat)
    echo "$lib: $(grep -o '"mb_per_s": *[0-9.]*' $d/out.json) broker $((b1-b0))cs client $(tail -1 $d/time)"
  done
done
kill $bp; wait $bp 2>/dev/null; rm -rf $d
