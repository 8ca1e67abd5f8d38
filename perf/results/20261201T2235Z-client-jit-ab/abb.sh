#!/usr/bin/env bash
# abb.sh: broker A/B. For each round, for each broker classpath dir in CPS (order flips per round): fresh epoll broker,
# 512 MB warm-up, then 1 GiB cases 1KiB acks1, 1KiB acks-1, 16KiB acks1, 16KiB acks-1 with the client in /tmp/exp/$CLIENT;
# prints broker CPU s and JIT s per case.
set -uo pipefail
cd /work/main
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
CPS=${CPS:-"oldcp newcp2"}; CLIENT=${CLIENT:-newcp2}
. /tmp/exp/jitcs.sh
cp_of() { echo "$(ls /tmp/exp/$1/stellflow-perf-*.jar):/tmp/exp/$1/lib/*"; }
one() { # brokercp
  local d=/tmp/exp/b-$RANDOM; mkdir -p $d; local port=$((20000 + RANDOM % 20000))
  printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\ntransport=epoll\n' $port $d > $d/server.properties
  $J -Xms256m -Xmx1g --enable-native-access=ALL-UNNAMED -Dlogback.configurationFile=/work/main/config/logback.xml -Dstellflow.log.dir=$d/logs ${BOPTS:-} -cp "$(cp_of $1)" io.stellflow.broker.StellflowServer $d/server.properties > $d/broker.log 2>&1 &
  local bp=$!
  for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
  local n=0 line="$1:"
  for c in "1024 1 warm" "1024 1" "1024 -1" "16384 1" "16384 -1"; do
    set -- $c; n=$((n+1)); local t=t$n
    for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic $t --partitions 1 >/dev/null 2>&1 && break; sleep 0.5; done
    local mb=1024; [ "${3:-}" = warm ] && mb=512
    local b0=$(awk '{print $14+$15}' /proc/$bp/stat) j0=$(jit_cs $bp)
    $J -Xms256m -Xmx1g --enable-native-access=ALL-UNNAMED -cp "$(cp_of $CLIENT)" io.stellflow.tools.PerfCommand produce --bootstrap-server 127.0.0.1:$port --topic $t --num-records $((mb*1048576/$1)) --record-size $1 --throughput -1 --json --producer-props acks=$2 batch.size=1048576 linger.ms=5 > $d/out.json 2>$d/err
    local b1=$(awk '{print $14+$15}' /proc/$bp/stat) j1=$(jit_cs $bp)
    [ "${3:-}" = warm ] && continue
    line="$line $(grep -o '"mb_per_s": *[0-9.]*' $d/out.json | grep -o '[0-9]*\.' | tr -d .)MB/s cpu=$(echo "scale=2; ($b1-$b0)/100" | bc) jit=$(echo "scale=2; ($j1-$j0)/100" | bc) |"
  done
  echo "$line"
  kill $bp; wait $bp 2>/dev/null; rm -rf $d
}
for r in $(seq 1 ${ROUNDS:-3}); do
  o=$CPS; [ $((r % 2)) = 0 ] && o=$(echo $CPS | awk '{for (i=NF;i>0;i--) printf "%s ", $i}')
  for c in $o; do one $c; done
done
