# Sourced by perf/lab.sh for --cluster3: three Stellflow brokers and three Kafka brokers side by side
# (issue #6 "Performance"), same workloads, alternating case by case (the order flips every run),
# fresh clusters for every run. Both run three combined broker+controller nodes on 127.0.0.1 (one
# metadata quorum of three voters), topics with replication factor 3 and min.insync.replicas=2, one
# partition, produce with batch 1 MiB and linger 5 ms at acks 1 and -1. Broker CPU per GB is the sum
# over the three broker processes. Six JVM brokers and the load tool share the 2 cores: the figures
# compare the two systems under the same squeeze, they are not either system's ceiling.
KAFKA_LIB=$("$HOME_DIR/perf/kafka/fetch-kafka.sh")
KAFKA_VERSION=$(basename "$(dirname "$KAFKA_LIB")")
CLUSTER_DATA_MB=${DATA_MB}
log "cluster3: $KAFKA_VERSION, $RUNS run(s), $CLUSTER_DATA_MB MB per case, RF=3, min.insync.replicas=2"
measure_limits

MIB=1048576
# Each JVM broker gets a smaller heap than the single-broker lab: six of them share 24 GiB and 2 cores.
SF_CLUSTER_HEAP=${SF_CLUSTER_HEAP:-"-Xms512m -Xmx1g"}
KAFKA_CLUSTER_HEAP=${KAFKA_CLUSTER_HEAP:-"-Xms512m -Xmx1g"}

sf_cluster_start() {
  local i dir voters="" ctl="" data=() raft=() cp=()
  dir=$WORK/sf3-$RANDOM; mkdir -p "$dir"
  for i in 1 2 3; do data[i]=$(free_port); raft[i]=$(free_port); cp[i]=$(free_port); done
  for i in 1 2 3; do
    voters+="${voters:+,}$i@127.0.0.1:${raft[i]}"; ctl+="${ctl:+,}127.0.0.1:${cp[i]}"
  done
  SF_PIDS="" SF_BS="" SF_CTL=$ctl SF_DIR=$dir
  for i in 1 2 3; do
    cat >"$dir/node-$i.properties" <<PROPS
process.roles=broker,controller
node.id=$i
cluster.id=perf-cluster3
listeners=PLAINTEXT://127.0.0.1:${data[i]}
log.dirs=$dir/data-$i
controller.quorum.voters=$voters
controller.listener=127.0.0.1:${cp[i]}
controller.quorum.bootstrap.servers=$ctl
metadata.log.dir=$dir/metadata-$i
metrics.exporter=none
transport=${SF_TRANSPORT:-auto}
PROPS
    STELLFLOW_HEAP_OPTS=$SF_CLUSTER_HEAP STELLFLOW_LOG_DIR=$dir/logs-$i \
      "$HOME_DIR/bin/stellflow-server.sh" "$dir/node-$i.properties" >"$WORK/stellflow-node-$i.log" 2>&1 &
    SF_PIDS+="${SF_PIDS:+ }$!"
    SF_BS+="${SF_BS:+,}127.0.0.1:${data[i]}"
  done
  local pids=($SF_PIDS)
  for i in 1 2 3; do wait_port "${pids[i-1]}" "${data[i]}" "stellflow node $i"; done
  log "stellflow cluster pids $SF_PIDS on $SF_BS"
}
sf_cluster_stop() {
  local p
  for p in $SF_PIDS; do stop_pid "$p"; done
  SF_PIDS=""; rm -rf "$SF_DIR"
}
sf_topic3() { # name: RF 3, min.insync.replicas 2; retried while the brokers register
  local i
  for i in $(seq 1 60); do
    if "$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-controller "$SF_CTL" \
         --create --if-not-exists --topic "$1" --partitions 1 --replication-factor 3 --config min.insync.replicas=2 \
         >"$WORK/sf-topic.log" 2>&1; then
      return 0
    fi
    sleep 1
  done
  log "stellflow topic $1 not created: $(tail -n 2 "$WORK/sf-topic.log")"; return 1
}

kafka_cluster_start() {
  local i dir cluster voters="" data=() ctl=()
  dir=$WORK/kafka3-$RANDOM; mkdir -p "$dir"
  for i in 1 2 3; do data[i]=$(free_port); ctl[i]=$(free_port); done
  for i in 1 2 3; do voters+="${voters:+,}$i@127.0.0.1:${ctl[i]}"; done
  kafka_log4j "$dir"
  cluster=$("$JAVA_HOME/bin/java" -cp "$KAFKA_LIB/*" -Dlog4j2.configurationFile="$dir/log4j2.properties" kafka.tools.StorageTool random-uuid)
  KAFKA_PIDS="" KAFKA_BS="" KAFKA_DIR=$dir
  for i in 1 2 3; do
    cat >"$dir/node-$i.properties" <<PROPS
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:${data[i]},CONTROLLER://127.0.0.1:${ctl[i]}
advertised.listeners=PLAINTEXT://127.0.0.1:${data[i]}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data-$i
num.partitions=1
offsets.topic.replication.factor=3
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0
$KAFKA_BROKER_SOCKET_PROPS
PROPS
    "$JAVA_HOME/bin/java" -cp "$KAFKA_LIB/*" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
      kafka.tools.StorageTool format -t "$cluster" -c "$dir/node-$i.properties" >"$WORK/kafka-format-$i.log" 2>&1
  done
  for i in 1 2 3; do
    kafka_node "$KAFKA_CLUSTER_HEAP" "$dir" "$dir/node-$i.properties" >"$WORK/kafka-node-$i.log" 2>&1 &
    KAFKA_PIDS+="${KAFKA_PIDS:+ }$!"
    KAFKA_BS+="${KAFKA_BS:+,}127.0.0.1:${data[i]}"
  done
  local pids=($KAFKA_PIDS)
  for i in 1 2 3; do wait_port "${pids[i-1]}" "${data[i]}" "kafka node $i"; done
  log "kafka cluster pids $KAFKA_PIDS on $KAFKA_BS ($KAFKA_VERSION)"
}
kafka_cluster_stop() {
  local p
  for p in $KAFKA_PIDS; do stop_pid "$p"; done
  KAFKA_PIDS=""; rm -rf "$KAFKA_DIR"
}
kafka_topic3() { # name
  local i
  for i in $(seq 1 60); do
    if kafka_tool TopicCommand --bootstrap-server "$KAFKA_BS" --create --topic "$1" --partitions 1 \
         --replication-factor 3 --config min.insync.replicas=2 >"$WORK/kafka-topic.log" 2>&1; then
      return 0
    fi
    sleep 1
  done
  log "kafka topic $1 not created: $(tail -n 2 "$WORK/kafka-topic.log")"; return 1
}

both() { # kind name run topic size batch parts acks linger tput num
  local first=stellflow second=kafka
  if [ $(( $3 % 2 )) -eq 0 ]; then first=kafka second=stellflow; fi
  for system in $first $second; do
    run_case "$system" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" "${11}" "${SF_TRANSPORT:-auto}"
  done
}
create_both() { sf_topic3 "$1"; kafka_topic3 "$1"; }
# One unrecorded produce per cluster and run (JIT of the produce and replication paths). 512 MB: after
# 128 MB, C2 still took about half of each Stellflow broker's CPU in a profiled 512 MB acks=-1 run
# (--profile, 2026-12-01), so the cases measured compilation more than either broker.
WARMUP_MB=${WARMUP_MB:-$(( CLUSTER_DATA_MB < 512 ? CLUSTER_DATA_MB : 512 ))}
warm_up() { # run
  [ "$WARMUP_MB" -gt 0 ] || return 0
  local topic=warmup-$1 num=$(( WARMUP_MB * 1024 ))
  create_both "$topic"
  STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
    --topic "$topic" --num-records "$num" --record-size 1024 --json \
    --producer-props acks=-1 batch.size="$MIB" linger.ms=5 >"$WORK/warmup.out" 2>&1 || log "stellflow warm-up failed"
  # shellcheck disable=SC2086
  kafka_tool ProducerPerformance --topic "$topic" --num-records "$num" --payload-file "$(kafka_payload_file 1024)" \
    --throughput -1 --command-property bootstrap.servers="$KAFKA_BS" acks=-1 batch.size="$MIB" linger.ms=5 \
    $KAFKA_PRODUCER_SOCKET_PROPS >>"$WORK/warmup.out" 2>&1 || log "kafka warm-up failed"
  log "warm-up: $WARMUP_MB MB to each cluster (not recorded)"
}


# --profile: one extra, unrecorded acks=-1 1 KiB produce into a Stellflow cluster alone (the Kafka
# cluster is not running), with async-profiler on all three brokers at once; one CPU flame graph per
# broker (profiles/<stamp>-stellflow-rf3-acks-1-node<i>-cpu.html, the partition's leader named in the
# log line) and the collapsed stacks beside the results.
profile_cluster3() {
  local i topic=prof3-$RANDOM pids num=$(( CLUSTER_DATA_MB * 1024 ))
  profiler_lib
  mkdir -p "$HOME_DIR/profiles"
  sf_cluster_start
  sf_topic3 "$topic"
  pids=($SF_PIDS)
  # Warm-up first (as in the recorded runs), so the graphs show the steady state, not C2 at work.
  STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
    --topic "$topic" --num-records $(( WARMUP_MB * 1024 )) --record-size 1024 --json \
    --producer-props acks=-1 batch.size="$MIB" linger.ms=5 >"$WORK/profile-warmup.out" 2>&1 || true
  for i in 1 2 3; do profiler "${pids[i-1]}" "start,event=cpu,interval=1ms"; done
  vmstat 1 >"$OUT_DIR/$STAMP-stellflow-rf3-acks-1-vmstat.txt" 2>&1 &
  local vmstat_pid=$!
  STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
    --topic "$topic" --num-records "$num" --record-size 1024 --throughput -1 --json \
    --producer-props acks=-1 batch.size="$MIB" linger.ms=5 >"$WORK/profile.out" 2>&1 || true
  kill "$vmstat_pid" 2>/dev/null || true
  for i in 1 2 3; do
    profiler "${pids[i-1]}" "dump,collapsed,file=$OUT_DIR/$STAMP-stellflow-rf3-acks-1-node$i-cpu.collapsed"
    profiler "${pids[i-1]}" "stop,file=$HOME_DIR/profiles/$STAMP-stellflow-rf3-acks-1-node$i-cpu.html"
  done
  log "flame graphs: profiles/$STAMP-stellflow-rf3-acks-1-node{1,2,3}-cpu.html ($(tail -n 1 "$WORK/profile.out"))"
  log "partition leader: $("$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-server "$SF_BS" --describe --topic "$topic" 2>&1 | tr '\n' ' ')"
  sf_cluster_stop
}
if [ -n "$PROFILE" ]; then
  profile_cluster3 || log "profiling failed"
fi

for run in $(seq 1 "$RUNS"); do
  log "run $run of $RUNS: fresh clusters"
  sf_cluster_start
  kafka_cluster_start
  warm_up "$run"
  for size in 1024 16384; do
    label=$([ "$size" = 1024 ] && echo 1KiB || echo 16KiB)
    num=$(( CLUSTER_DATA_MB * MIB / size ))
    for acks in 1 -1; do
      topic=c3-$label-acks$([ "$acks" = -1 ] && echo all || echo 1)-$run
      create_both "$topic"
      both produce "rf3-produce-$label-b1MiB-acks$acks" "$run" "$topic" "$size" "$MIB" 1 "$acks" 5 -1 "$num"
    done
  done
  sf_cluster_stop
  kafka_cluster_stop
done

lab report --cases "$CASES" --out-dir "$OUT_DIR" --iperf3-json "$OUT_DIR/iperf3.json" --fio-json "$OUT_DIR/fio.json" \
  --note "perf/run-matrix.sh --cluster3 --runs $RUNS --data-mb $CLUSTER_DATA_MB; $KAFKA_VERSION; \
$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(uname -r); three combined broker+controller nodes per system on \
127.0.0.1, topics RF=3 min.insync.replicas=2, one partition; broker CPU summed over the three brokers; no fsync per \
produce on either side; socket buffers: OS default on both; warm-up ${WARMUP_MB} MB per cluster and run (acks=-1)." \
  | tee "$WORK/report.txt"
echo "results: $OUT_DIR"
[ "$FAILED" -eq 0 ] || { log "$FAILED case(s) failed"; exit 1; }
