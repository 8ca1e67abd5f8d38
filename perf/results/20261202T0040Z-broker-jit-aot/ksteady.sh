#!/usr/bin/env bash
# kafka broker; ProducerPerformance GB GiB of SIZE; print the 5 s interval lines
set -uo pipefail
J=/usr/lib/jvm/temurin-25-jdk-amd64
KAFKA_LIB=$HOME/.cache/stellflow/kafka-4.4.0/lib
SIZE=${SIZE:-16384}; ACKS=${ACKS:-1}; GB=${GB:-16}
. /tmp/exp/thrfns.sh
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
c=$($J/bin/java -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool random-uuid)
$J/bin/java -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool format -t $c -c $d/server.properties > /dev/null
$J/bin/java -Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent $L -cp "$KAFKA_LIB/*" kafka.Kafka $d/server.properties > $d/broker.log 2>&1 &
bp=$!
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.3; done; sleep 2
f=/tmp/exp/payload-$SIZE.txt
$J/bin/java $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:$port --create --topic t --partitions 1 --replication-factor 1 > /dev/null
$J/bin/java -Xms256m -Xmx1g $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.ProducerPerformance --topic t --num-records $((GB*1073741824/SIZE)) --payload-file $f --throughput -1 --command-property bootstrap.servers=127.0.0.1:$port acks=$ACKS batch.size=1048576 linger.ms=5 send.buffer.bytes=-1 receive.buffer.bytes=-1 > $d/out 2>&1 &
tp=$!
sleep 2; cp=$(pgrep -f "ProducerPerformance" | head -1)
sleep ${W0:-8}
thr_snap $cp $d/c0; thr_snap $bp $d/b0; t0=$(date +%s%N)
sleep ${W:-5}
thr_snap $cp $d/c1; thr_snap $bp $d/b1; t1=$(date +%s%N)
echo "window $(( (t1-t0)/1000000 )) ms; client: $(thr_diff $d/c0 $d/c1)"
echo "broker: $(thr_diff $d/b0 $d/b1)"
wait $tp; grep -o "([0-9.]* MB/sec)" $d/out | tr '\n' ' '; echo
kill $bp; wait $bp 2>/dev/null; rm -rf $d
