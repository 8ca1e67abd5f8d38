#!/usr/bin/env bash
# usage: SYS=sf|kafka cases.sh ; env SF_OPTS (broker JVM flags), WARM_MB (512), MB (1024), FILL=1, EXTRA_WARM=cmd
set -uo pipefail
cd /work/main
J=/usr/lib/jvm/temurin-25-jdk-amd64
KAFKA_LIB=$HOME/.cache/stellflow/kafka-4.4.0/lib
SYS=${SYS:-sf}; MB=${MB:-1024}; WARM_MB=${WARM_MB:-512}
d=/tmp/exp/c-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000)); cport=$((port+1))
thr_snap() { for t in /proc/$1/task/*; do echo "$(cat $t/comm 2>/dev/null | tr -d '0-9' | tr ' ' '_') $(awk '{print $14+$15}' $t/stat 2>/dev/null)"; done | awk 'NF==2 {a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort > $2; }
thr_diff() { join -a2 -e0 -o 0,1.2,2.2 $1 $2 | awk '{d=$3-$2; if (d>=3) printf "%s=%d ", $1, d}'; echo; }
if [ "${FILL:-1}" = 1 ]; then rm -rf /tmp/exp/fill; mkdir -p /tmp/exp/fill; free=$(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 - 3072 )); dd if=/dev/zero of=/tmp/exp/fill/f bs=1M count=$free conv=fsync status=none; echo "filled $free MB"; fi
f=/tmp/exp/payload-1024.txt; f16=/tmp/exp/payload-16384.txt
[ -f $f ] || head -c $((1024*1000)) /dev/urandom | LC_ALL=C tr '\000-\377' 'A-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-Z' | fold -w 1024 > $f
[ -f $f16 ] || head -c $((16384*64)) /dev/urandom | LC_ALL=C tr '\000-\377' 'A-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-Z' | fold -w 16384 > $f16
if [ $SYS = sf ]; then
  printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\ntransport=auto\n%s\n' $port $d "${SF_PROPS:-}" > $d/server.properties
  STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="${SF_OPTS:-}" bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
  bp=$!
  for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
  sleep 1; jp=$(pgrep -f "$d/server.properties" | tail -1)
  mk() { for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic $1 --partitions 1 >/dev/null 2>&1 && return; sleep 0.5; done; }
  prod() { # topic size acks num
    STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="${C_OPTS:-}" STELLFLOW_HEAP_OPTS="-Xms256m -Xmx1g" /usr/bin/time -f "client %U+%S" bin/stellflow-perf.sh produce --bootstrap-server 127.0.0.1:$port --topic $1 --num-records $4 --record-size $2 --throughput -1 --json --producer-props acks=$3 batch.size=1048576 linger.ms=5 > $d/out 2> $d/err
    echo "$(grep -o '"mb_per_s": *[0-9.]*' $d/out | head -1) $(tail -1 $d/err)"; }
else
  cat > $d/server.properties <<P
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$d/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
socket.send.buffer.bytes=-1
socket.receive.buffer.bytes=-1
P
  printf 'rootLogger.level=WARN\nrootLogger.appenderRef.stdout.ref=STDOUT\nappender.stdout.type=Console\nappender.stdout.name=STDOUT\nappender.stdout.layout.type=PatternLayout\nappender.stdout.layout.pattern=[%%d] %%p %%m (%%c)%%n\n' > $d/log4j2.properties
  L="-Dlog4j2.configurationFile=$d/log4j2.properties"
  c=$($J/bin/java -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool random-uuid)
  $J/bin/java -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool format -t $c -c $d/server.properties > /dev/null
  $J/bin/java -Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent ${K_OPTS:-} $L -cp "$KAFKA_LIB/*" kafka.Kafka $d/server.properties > $d/broker.log 2>&1 &
  bp=$!; jp=$bp
  for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.3; done; sleep 2
  mk() { $J/bin/java $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:$port --create --topic $1 --partitions 1 --replication-factor 1 > /dev/null; }
  prod() {
    local pf=$f; [ $2 = 16384 ] && pf=$f16
    /usr/bin/time -f "client %U+%S" $J/bin/java -Xms256m -Xmx1g ${C_OPTS:-} $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.ProducerPerformance --topic $1 --num-records $4 --payload-file $pf --throughput -1 --command-property bootstrap.servers=127.0.0.1:$port acks=$3 batch.size=1048576 linger.ms=5 send.buffer.bytes=-1 receive.buffer.bytes=-1 > $d/out 2> $d/err
    echo "$(grep 'records sent' $d/out | tail -1 | grep -o '([0-9.]* MB/sec)') $(tail -1 $d/err)"; }
fi
mk w; prod w 1024 1 $((WARM_MB*1024)) > /dev/null; echo "warm-up done"
[ -n "${EXTRA_WARM:-}" ] && { eval "$EXTRA_WARM"; echo "extra warm-up done"; }
for spec in ${CASES:-1024:1 1024:-1 16384:1 16384:-1}; do
  size=${spec%%:*}; acks=${spec#*:}; t=t$size$acks$RANDOM; mk $t
  echo "CASE $size $acks start $($J/bin/jcmd $jp VM.uptime | tail -1)"; thr_snap $jp $d/s0; b0=$(awk '{print $14+$15}' /proc/$jp/stat)
  r=$(prod $t $size $acks $((MB*1048576/size)))
  b1=$(awk '{print $14+$15}' /proc/$jp/stat); thr_snap $jp $d/s1
  echo "$SYS $size acks$acks: $r broker=$((b1-b0))cs | $(thr_diff $d/s0 $d/s1)"
done
[ -n "${KEEPLOG:-}" ] && cp $d/broker.log $KEEPLOG; kill $bp; wait $bp 2>/dev/null; rm -rf $d
