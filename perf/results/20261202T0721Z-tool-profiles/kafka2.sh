#!/usr/bin/env bash
# start a kafka node, then run "$@" specs: label=opts ; produce 1 GiB 1KiB acks1 each, 3 rounds
set -uo pipefail
JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
KAFKA_LIB=$HOME/.cache/stellflow/kafka-4.4.0/lib
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
c=$($JAVA_HOME/bin/java -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool random-uuid)
$JAVA_HOME/bin/java -cp "$KAFKA_LIB/*" $L kafka.tools.StorageTool format -t $c -c $d/server.properties > /dev/null
$JAVA_HOME/bin/java -Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 $L -cp "$KAFKA_LIB/*" kafka.Kafka $d/server.properties > $d/broker.log 2>&1 &
kp=$!; . /tmp/exp/jitcs.sh
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.3; done
sleep 2
f=/tmp/exp/payload-${SIZE:-1024}.txt
[ -f $f ] || head -c $((1024*1000)) /dev/urandom | LC_ALL=C tr '\000-\377' 'A-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-Z' | fold -w 1024 > $f
n=0
if [ -n "${TRAIN:-}" ]; then $JAVA_HOME/bin/java -Xms256m -Xmx1g $TRAIN $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.ProducerPerformance --topic tw --num-records 524288 --payload-file $f --throughput -1 --command-property bootstrap.servers=127.0.0.1:$port acks=1 batch.size=1048576 linger.ms=5 > /dev/null 2>&1; echo trained; fi
for r in $(seq 1 ${KROUNDS:-3}); do for spec in "$@"; do
  label=${spec%%=*}; opts=${spec#*=}; n=$((n+1))
  b0=$(awk '{print $14+$15}' /proc/$kp/stat); j0=$(jit_cs $kp)
  /usr/bin/time -f "cpu %U+%S wall %e" $JAVA_HOME/bin/java -Xms256m -Xmx1g $opts $L -cp "$KAFKA_LIB/*" org.apache.kafka.tools.ProducerPerformance --topic t$n --num-records ${NUMREC:-1048576} --payload-file $f --throughput -1 --command-property bootstrap.servers=127.0.0.1:$port acks=1 batch.size=1048576 linger.ms=5 send.buffer.bytes=-1 receive.buffer.bytes=-1 > $d/out 2> $d/err
  b1=$(awk '{print $14+$15}' /proc/$kp/stat); j1=$(jit_cs $kp)
  echo "$label: $(grep 'records sent' $d/out | tail -1 | grep -o '([0-9.]* MB/sec)') broker $(( b1-b0 ))cs jit $((j1-j0))cs $(tail -1 $d/err) $(grep -E 'C1 Compile Time|C2 Compile Time' $d/out | tr -s ' ' | tr '\n' ' ')"
done; done
kill $kp; wait $kp 2>/dev/null; rm -rf $d
