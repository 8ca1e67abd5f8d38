#!/usr/bin/env bash
# cpab.sh: which jars the produce tool loads from, and its CPU with the full lib/* classpath vs only those jars
set -uo pipefail
cd /work/main
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin
d=/tmp/exp/b-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000))
printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\ntransport=epoll\n' $port $d > $d/server.properties
STELLFLOW_AOT=off STELLFLOW_NO_BUILD=1 bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
bp=$!
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
FULL="$(ls perf/target/stellflow-perf-*.jar):perf/target/lib/*"
n=0
prod() { # label cp records size extra
  n=$((n+1)); local t=t-$n
  for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic $t --partitions 1 >/dev/null 2>&1 && break; sleep 0.5; done
  /usr/bin/time -f "%U %S %e" -o $d/time $J/java -Xms256m -Xmx1g --enable-native-access=ALL-UNNAMED ${5:-} -cp "$2" io.stellflow.tools.PerfCommand produce --bootstrap-server 127.0.0.1:$port --topic $t --num-records $3 --record-size $4 --throughput -1 --json --producer-props acks=1 batch.size=1048576 linger.ms=5 > $d/out.json 2>$d/err
  echo "$1 records=$3 size=$4 MBps=$(grep -o '"mb_per_s": *[0-9.]*' $d/out.json | grep -o '[0-9.]*$') cpu=$(awk '{print $1+$2}' $d/time) wall=$(awk '{print $3}' $d/time)"
}
prod warm "$FULL" $((1024*1024)) 1024 > /dev/null
prod trace "$FULL" 1000 1024 "-Xlog:class+load=info:file=$d/classes.txt" > /dev/null
grep -o 'source: file:[^ ]*' $d/classes.txt | sed 's/source: file://' | sort | uniq -c | sort -rn > /tmp/exp/tool-jars.txt
grep -c . $d/classes.txt > /tmp/exp/tool-classes-count.txt
MIN=$(awk '{print $2}' /tmp/exp/tool-jars.txt | grep '\.jar$' | paste -sd:)
echo "jars used: $(wc -l < /tmp/exp/tool-jars.txt), classes: $(cat /tmp/exp/tool-classes-count.txt)"
for r in 1 2 3; do
  for c in full min; do
    if [ $c = full ]; then cp="$FULL"; else cp="$MIN"; fi
    prod $c "$cp" 1000 1024
    prod $c "$cp" $((1024*1024)) 1024
    prod $c "$cp" 65536 16384
  done
done
kill $bp; wait $bp 2>/dev/null; rm -rf $d
