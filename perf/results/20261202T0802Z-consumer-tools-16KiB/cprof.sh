#!/usr/bin/env bash
# cprof.sh STAMP: consume 16 KiB: each consumer tool's whole JVM profiled (async-profiler at JVM start, cpu, threads),
# one 1 GiB consume of 16 KiB records (written just before by the system's own producer tool), page cache filled first.
# Writes profiles/STAMP-{stellflow,kafka}-consumer-tool-16KiB-1GiB-cpu.html and OUT collapsed stacks.
set -uo pipefail
S=$1 OUT=$2; mkdir -p $OUT
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
AP=~/.cache/stellflow/async-profiler-4.2/libasyncProfiler.so
KAFKA_LIB=$HOME/.cache/stellflow/kafka-4.4.0/lib
N=65536
fill() { rm -rf /tmp/exp/fill; mkdir -p /tmp/exp/fill; local f=$(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 )); dd if=/dev/zero of=/tmp/exp/fill/fill bs=1M count=$((f-3072)) conv=fsync status=none; }
cd /work/main
# --- Stellflow
fill
d=/tmp/exp/b-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000))
printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s/data\nmetrics.port=0\n' $port $d > $d/server.properties
STELLFLOW_NO_BUILD=1 bin/stellflow-server.sh $d/server.properties > $d/broker.log 2>&1 &
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
jp=$(pgrep -f "$d/server.properties" | tail -1)
for i in $(seq 1 40); do STELLFLOW_NO_BUILD=1 bin/stellflow-topics.sh --bootstrap-server 127.0.0.1:$port --create --topic c --partitions 1 >/dev/null 2>&1 && break; sleep 0.5; done
STELLFLOW_NO_BUILD=1 bin/stellflow-perf.sh produce --bootstrap-server 127.0.0.1:$port --topic c --num-records $N --record-size 16384 --throughput -1 --json --producer-props acks=1 batch.size=1048576 linger.ms=5 >/dev/null 2>&1
for opt in "file=/work/main/profiles/$S-stellflow-consumer-tool-16KiB-1GiB-cpu.html" "collapsed,file=$OUT/stellflow-consumer-tool-16KiB-1GiB.collapsed"; do
  b0=$(awk '{print $14+$15}' /proc/$jp/stat)
  m=$(STELLFLOW_NO_BUILD=1 STELLFLOW_OPTS="-agentpath:$AP=start,event=cpu,interval=1ms,threads,$opt" /usr/bin/time -f "%U %S" -o $d/time bin/stellflow-perf.sh consume --bootstrap-server 127.0.0.1:$port --topic c --num-records $N --timeout-ms 20000 --json 2>/dev/null | grep -o '"mb_per_s": *[0-9.]*' | grep -o '[0-9.]*$')
  echo "stellflow consume 16KiB: $m MB/s, broker $(( $(awk '{print $14+$15}' /proc/$jp/stat) - b0 )) cs, tool cpu $(cat $d/time)"
done
kill $jp; wait 2>/dev/null; rm -rf $d
# --- Kafka
fill
d=/tmp/exp/k-$RANDOM; mkdir -p $d; port=$((20000 + RANDOM % 20000)); cport=$((port+1))
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
c=$($J -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool random-uuid)
$J -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool format -t $c -c $d/server.properties > /dev/null
$J -Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 $L -cp "$KAFKA_LIB/*" kafka.Kafka $d/server.properties > $d/broker.log 2>&1 &
kp=$!
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.3; done; sleep 2
f=/tmp/exp/payload-16384.txt
[ -f $f ] || head -c $((16384*64)) /dev/urandom | LC_ALL=C tr '\000-\377' 'A-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-Z' | fold -w 16384 > $f
$J -Xms256m -Xmx1g $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.ProducerPerformance --topic c --num-records $N --payload-file $f --throughput -1 --command-property bootstrap.servers=127.0.0.1:$port acks=1 batch.size=1048576 linger.ms=5 send.buffer.bytes=-1 receive.buffer.bytes=-1 > /dev/null 2>&1
for opt in "file=/work/main/profiles/$S-kafka-consumer-tool-16KiB-1GiB-cpu.html" "collapsed,file=$OUT/kafka-consumer-tool-16KiB-1GiB.collapsed"; do
  b0=$(awk '{print $14+$15}' /proc/$kp/stat)
  /usr/bin/time -f "%U %S" -o $d/time $J -Xms256m -Xmx1g "-agentpath:$AP=start,event=cpu,interval=1ms,threads,$opt" $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.ConsumerPerformance --bootstrap-server 127.0.0.1:$port --topic c --num-records $N --timeout 20000 --group g$RANDOM --fetch-size 4194304 --socket-buffer-size -1 > $d/out 2>&1
  echo "kafka consume 16KiB: $(tail -1 $d/out | cut -d, -f3-4), broker $(( $(awk '{print $14+$15}' /proc/$kp/stat) - b0 )) cs, tool cpu $(cat $d/time)"
done
kill $kp; wait 2>/dev/null; rm -rf $d /tmp/exp/fill
