#!/usr/bin/env bash
# abopt.sh: one fresh epoll broker, WARM_MB warm-up, then ROUNDS x (client JVM options A then B, order flips each round):
# produce MB MiB of SIZE-byte records acks=ACKS with the current perf jar; OA / OB are the client JVM options.
set -uo pipefail
cd /work/main
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
SIZE=${SIZE:-1024} MB=${MB:-1024} ACKS=${ACKS:-1}
d=/tmp/exp/b-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000))
printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\ntransport=epoll\n%s\n' $port $d "${BPROPS:-}" > $d/server.properties
STELLFLOW_AOT=off STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="${BOPTS:-}" bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
bp=$!
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
jp=$(pgrep -f "$d/server.properties" | tail -1)
n=0
CP="$(ls perf/target/stellflow-perf-*.jar):perf/target/lib/*"
prod() { # label opts topic records size acks
  n=$((n+1)); local t=$3-$n
  for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic $t --partitions 1 >/dev/null 2>&1 && break; sleep 0.5; done
  local b0=$(awk '{print $14+$15}' /proc/$jp/stat)
  /usr/bin/time -f "%U %S %e" -o $d/time $J -Xms256m -Xmx1g --enable-native-access=ALL-UNNAMED $2 -cp "$CP" io.stellflow.tools.PerfCommand produce --bootstrap-server 127.0.0.1:$port --topic $t --num-records $4 --record-size $5 --throughput -1 --json --producer-props acks=$6 batch.size=1048576 linger.ms=5 > $d/out.json 2>$d/err
  local b1=$(awk '{print $14+$15}' /proc/$jp/stat)
  echo "$1 size=$5 acks=$6 MBps=$(grep -o '"mb_per_s": *[0-9.]*' $d/out.json | grep -o '[0-9.]*$') client_cpu=$(awk '{print $1+$2}' $d/time) wall=$(awk '{print $3}' $d/time) broker_cpu=$(echo "scale=2; ($b1-$b0)/100" | bc)"
}
prod warm "" warm $((${WARM_MB:-1024}*1024)) 1024 1 > /dev/null
for r in $(seq 1 ${ROUNDS:-3}); do
  for s in ${SIZES:-1024 16384}; do
    if [ $((r % 2)) = 1 ]; then o="A B"; else o="B A"; fi
    for c in $o; do if [ $c = A ]; then prod A "${OA:-}" t $((MB*1048576/s)) $s $ACKS; else prod B "${OB:-}" t $((MB*1048576/s)) $s $ACKS; fi; done
  done
done
kill $bp; wait $bp 2>/dev/null; rm -rf $d
