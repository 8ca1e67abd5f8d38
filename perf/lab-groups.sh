# Sourced by perf/lab.sh for --groups: the consumer-group cases of issue #19, Stellflow and Apache
# Kafka 4.x side by side in one run, alternating case by case (the order flips every run), fresh
# brokers for every run (lab.sh's sf_start and kafka_start: one node each, Kafka KRaft combined with
# offsets.topic.num.partitions=1, so each system's groups share one coordinator).
# Both sides are driven by the same code, io.stellflow.perf.groups.GroupBench, through a Java
# source-file adapter per system launched with that system's client jars:
#   ours   perf/groups/StellflowGroupBench.java   StellflowConsumer, group.id + subscribe (key 20)
#   Kafka  perf/kafka/KafkaGroupBench.java        KafkaConsumer, group.protocol=consumer (KIP-848)
# Cases (docs/performance.md, "Consumer groups", says exactly what is timed):
#   rebalance-<M>x<P>-{join,join-one,leave-one}  M members over P partitions (GROUP_SIZES), then one
#                                                 joins, then one leaves: time to a stable assignment
#   commit-<N>                                    N members (each N of COMMITTERS, default 8) commit
#                                                 their own partitions, one synchronous commit at a
#                                                 time: commits/s, latency
#   consume-{assign,group}-1KiB-p<P>              one consumer reads DATA_MB of 1 KiB records from P
#                                                 partitions with assign or with subscribe
KAFKA_LIB=$("$HOME_DIR/perf/kafka/fetch-kafka.sh")
KAFKA_VERSION=$(basename "$(dirname "$KAFKA_LIB")")
# Sizes: the issue's 10 x 900 and 100 x 1,000; --smoke 3 x 30 and 5 x 50.
GROUP_SIZES=${GROUP_SIZES:-$([ -n "$SMOKE" ] && echo "3x30 5x50" || echo "10x900 100x1000")}
COMMITTERS=${COMMITTERS:-$([ -n "$SMOKE" ] && echo 2 || echo 8)}
COMMIT_MS=${COMMIT_MS:-$([ -n "$SMOKE" ] && echo 3000 || echo 10000)}
COMMIT_WARMUP_MS=${COMMIT_WARMUP_MS:-$([ -n "$SMOKE" ] && echo 1000 || echo 3000)}
CONSUME_PARTITIONS=${CONSUME_PARTITIONS:-8}
# Rebalance watch: members poll every GROUP_POLL_MS (their listeners run inside poll), a stable
# cover must hold GROUP_SETTLE_MS unchanged (not counted), a phase fails after GROUP_TIMEOUT_MS.
GROUP_POLL_MS=${GROUP_POLL_MS:-20} GROUP_SETTLE_MS=${GROUP_SETTLE_MS:-1000} GROUP_TIMEOUT_MS=${GROUP_TIMEOUT_MS:-180000}
log "groups: $KAFKA_VERSION, $RUNS run(s), sizes $GROUP_SIZES, committers $COMMITTERS for $COMMIT_MS ms," \
  "consume $DATA_MB MB over $CONSUME_PARTITIONS partitions"
measure_limits
MIB=1048576

# group_bench system scenario args...: one GroupBench run against that system's broker.
group_bench() {
  local system=$1; shift
  if [ "$system" = stellflow ]; then
    # shellcheck disable=SC2086
    "$JAVA_HOME/bin/java" $CLIENT_HEAP -cp "$PERF_CP" "$HOME_DIR/perf/groups/StellflowGroupBench.java" \
      "$@" --bootstrap-server "$SF_BS"
  else
    # shellcheck disable=SC2086
    "$JAVA_HOME/bin/java" $CLIENT_HEAP -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" \
      -cp "$KAFKA_LIB/*:$PERF_JAR" "$HOME_DIR/perf/kafka/KafkaGroupBench.java" "$@" --bootstrap-server "$KAFKA_BS"
  fi
}

# Each adapter is compiled once up front (lab.sh's adapter_check): one that does not compile against
# its system's client is reported once and that system's cases are counted as failed.
SKIP_SYSTEMS=""
adapter_check stellflow "$HOME_DIR/perf/groups/StellflowGroupBench.java" "$PERF_CP"
adapter_check kafka "$HOME_DIR/perf/kafka/KafkaGroupBench.java" "$KAFKA_LIB/*:$PERF_JAR"

# group_case system kind name run topic partitions scenario [bench args...]: runs one GroupBench case
# and adds each line it printed to cases.jsonl (rebalance: three lines). Broker and client CPU are
# over the whole bench run (for rebalance: all three phases, the same figure on each line).
group_case() {
  local system=$1 kind=$2 name=$3 run=$4 topic=$5 parts=$6 scenario=$7
  shift 7
  if [ -n "$CASES_RE" ] && ! [[ "$name" =~ $CASES_RE ]]; then return 0; fi
  local out=$WORK/group.out pid before after client_before client_after rc lines l size=0
  if [ "$kind" = rebalance ]; then lines="$name-join $name-join-one $name-leave-one"; else lines=$name; fi
  if [[ " $SKIP_SYSTEMS " == *" $system "* ]]; then
    FAILED=$((FAILED + $(wc -w <<<"$lines"))); return 0
  fi
  if [ "$system" = stellflow ]; then pid=$SF_PID; else pid=$KAFKA_PID; fi
  before=$(cpu_ticks "$pid"); children_cpu_ms; client_before=$CHILD_CPU_MS
  set +e
  group_bench "$system" "$scenario" --topic "$topic" --partitions "$parts" --name "$name" \
    --group "$name-$system-$run-$RANDOM" --poll-ms "$GROUP_POLL_MS" --settle-ms "$GROUP_SETTLE_MS" \
    --timeout-ms "$GROUP_TIMEOUT_MS" "$@" >"$out" 2>"$WORK/group-tool.log"
  rc=$?
  set -e
  children_cpu_ms; client_after=$CHILD_CPU_MS
  after=$(cpu_ticks "$pid")
  mkdir -p "$OUT_DIR/tool-output"
  cp "$out" "$OUT_DIR/tool-output/$system-$name-run$run.txt"
  cp "$WORK/group-tool.log" "$OUT_DIR/tool-output/$system-$name-run$run.stderr.txt"
  [ "$rc" -eq 0 ] || { log "$system $name run $run: bench exited with $rc"; tail -n 5 "$WORK/group-tool.log" >&2 || true; }
  [ "$kind" = consume ] && size=1024
  for l in $lines; do
    if ! grep -F "{\"name\":\"$l\"," "$out" >"$WORK/group-line.json"; then
      log "$system $l run $run: no result line"; FAILED=$((FAILED + 1)); continue
    fi
    lab add --cases "$CASES" --format stellflow --output "$WORK/group-line.json" --system "$system" --case "$l" \
      --run "$run" --kind "$kind" --record-size "$size" --partitions "$parts" --cpu-ticks $((after - before)) \
      --clk-tck "$CLK_TCK" --client-cpu-ms $((client_after - client_before)) || FAILED=$((FAILED + 1))
  done
}
wanted() { [ -z "$CASES_RE" ] || [[ "$1" =~ $CASES_RE ]]; } # case name: selected by --cases
both_groups() { # kind name run topic partitions scenario [args...]: both systems, order flipped per run
  local first=stellflow second=kafka system
  if [ $(( $3 % 2 )) -eq 0 ]; then first=kafka second=stellflow; fi
  for system in $first $second; do group_case "$system" "$@"; done
}
create_both() { sf_topic "$1" "$2"; kafka_topic "$1" "$2"; }
fill_both() { # topic: DATA_MB of 1 KiB records (acks=1, batch 1 MiB, linger 5 ms), not recorded
  local num=$(( DATA_MB * 1024 ))
  STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
    --topic "$1" --num-records "$num" --record-size 1024 --json \
    --producer-props acks=1 batch.size="$MIB" linger.ms=5 >"$WORK/fill.out" 2>&1 || { log "stellflow fill failed"; return 1; }
  # shellcheck disable=SC2086
  kafka_tool ProducerPerformance --topic "$1" --num-records "$num" --payload-file "$(kafka_payload_file 1024)" \
    --throughput -1 --command-property bootstrap.servers="$KAFKA_BS" acks=1 batch.size="$MIB" linger.ms=5 \
    $KAFKA_PRODUCER_SOCKET_PROPS >>"$WORK/fill.out" 2>&1 || { log "kafka fill failed"; return 1; }
}

for run in $(seq 1 "$RUNS"); do
  log "run $run of $RUNS: fresh brokers"
  sf_start "${SF_TRANSPORT:-auto}"
  kafka_start
  # Warm-up, not recorded: a small group on each system creates the offsets topic and loads the
  # coordinator's code paths, which the first recorded case would otherwise pay.
  create_both "warmup-$run" 6
  for system in stellflow kafka; do
    [[ " $SKIP_SYSTEMS " == *" $system "* ]] && continue
    group_bench "$system" rebalance --topic "warmup-$run" --partitions 6 --members 2 --name warmup \
      --settle-ms 200 --timeout-ms 60000 >"$WORK/warmup.out" 2>&1 || log "$system group warm-up failed: $(tail -n 3 "$WORK/warmup.out")"
  done
  for size in $GROUP_SIZES; do
    members=${size%x*} parts=${size#*x}
    wanted "rebalance-$size" || continue
    create_both "rb-$size-$run" "$parts"
    both_groups rebalance "rebalance-$size" "$run" "rb-$size-$run" "$parts" rebalance --members "$members"
  done
  for n in $COMMITTERS; do
    wanted "commit-$n" || continue
    create_both "commit-$n-$run" "$n"
    both_groups commit "commit-$n" "$run" "commit-$n-$run" "$n" commit --members "$n" \
      --warmup-ms "$COMMIT_WARMUP_MS" --duration-ms "$COMMIT_MS" --prop enable.auto.commit=false
  done
  if wanted "consume-assign-1KiB-p$CONSUME_PARTITIONS" || wanted "consume-group-1KiB-p$CONSUME_PARTITIONS"; then
    create_both "gdata-$run" "$CONSUME_PARTITIONS"
    fill_both "gdata-$run"
    num=$(( DATA_MB * 1024 ))
    # Warm-up, not recorded: a tenth of the data read once with assign on each system, so the first
    # recorded consume does not pay the fresh broker's fetch-path JIT and the fill's write-back.
    for system in stellflow kafka; do
      [[ " $SKIP_SYSTEMS " == *" $system "* ]] && continue
      group_bench "$system" consume --topic "gdata-$run" --partitions "$CONSUME_PARTITIONS" --name warmup \
        --group "warmup-$system-$run-$RANDOM" --mode assign --num-records $(( num / 10 )) \
        --prop max.partition.fetch.bytes="$FETCH_BYTES" >"$WORK/warmup.out" 2>&1 \
        || log "$system consume warm-up failed: $(tail -n 3 "$WORK/warmup.out")"
    done
    # The two modes alternate which goes first, run by run, like the systems.
    modes="assign group"
    [ $(( run % 2 )) -eq 0 ] && modes="group assign"
    for mode in $modes; do
      both_groups consume "consume-$mode-1KiB-p$CONSUME_PARTITIONS" "$run" "gdata-$run" "$CONSUME_PARTITIONS" consume \
        --mode "$mode" --num-records "$num" --prop max.partition.fetch.bytes="$FETCH_BYTES"
    done
  fi
  sf_stop
  kafka_stop
done

lab report --cases "$CASES" --out-dir "$OUT_DIR" --iperf3-json "$OUT_DIR/iperf3.json" --fio-json "$OUT_DIR/fio.json" \
  --note "perf/run-matrix.sh --groups --runs $RUNS --data-mb $DATA_MB; $KAFKA_VERSION (group.protocol=consumer, \
assignor uniform); $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(uname -r); Stellflow transport ${SF_TRANSPORT:-auto}; \
sizes $GROUP_SIZES; committers $COMMITTERS, $COMMIT_MS ms after $COMMIT_WARMUP_MS ms; consume over $CONSUME_PARTITIONS \
partitions; members poll every $GROUP_POLL_MS ms, stable cover held $GROUP_SETTLE_MS ms (not counted); both brokers \
and clients at their shipped group settings; no AOT caches." \
  | tee "$WORK/report.txt"
echo "results: $OUT_DIR"
[ "$FAILED" -eq 0 ] || { log "$FAILED case(s) failed"; exit 1; }
