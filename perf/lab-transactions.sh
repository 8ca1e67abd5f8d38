# Sourced by perf/lab-vs-kafka.sh for --vs-kafka --transactions (issue #20): transactional produce
# and consume-transform-produce latency, Stellflow and Apache Kafka 4.x side by side in the same run
# and brokers as the other --vs-kafka cases (alternating case by case, the order flipping every run).
# Needs lab.sh's adapter_check, cpu_ticks, children_cpu_ms and lab-vs-kafka.sh's create_both.
# Both sides are driven by the same code, io.stellflow.perf.txn.TxnBench, through a Java source-file
# adapter per system launched with that system's client jars:
#   ours   perf/txn/StellflowTxnBench.java   StellflowProducer (transactional.id) + StellflowConsumer
#   Kafka  perf/kafka/KafkaTxnBench.java     KafkaProducer (transactional.id) + KafkaConsumer,
#                                            group.protocol=consumer (KIP-848)
# Cases per run (docs/performance.md, "Transactions", says exactly what is timed):
#   txn-produce-1KiB-100ms     --data-mb MB of 1 KiB records, a transaction every 100 ms
#   txn-produce-1KiB-1000rec   the same, a transaction every 1,000 records
#   idem-produce-1KiB          the same loop without transactions (idempotent): the baseline
#   ctp-latency-txn            consume-transform-produce at CTP_RATE records/s of 1 KiB, one
#                              transaction per poll, read_committed: end-to-end latency
#   ctp-latency-plain          the same pipeline without transactions (read_uncommitted, async
#                              offset commits): the baseline
# Every producer: acks=all, enable.idempotence=true; the produce cases add TXN_PRODUCER_PROPS
# (batch.size 1 MiB, linger.ms 5, as the other produce cases), the ctp clients CTP_PRODUCER_PROPS.
TXN_PARTITIONS=${TXN_PARTITIONS:-1}
TXN_PRODUCER_PROPS=${TXN_PRODUCER_PROPS:-"batch.size=$MIB linger.ms=5"}
CTP_PRODUCER_PROPS=${CTP_PRODUCER_PROPS:-"linger.ms=0"}
CTP_RATE=${CTP_RATE:-2000}
CTP_S=${CTP_S:-$LATENCY_S}
CTP_WARMUP_S=${CTP_WARMUP_S:-$([ -n "$SMOKE" ] && echo 2 || echo 5)}
# Unrecorded, before the first recorded case of each run: TXN_WARMUP_MB (default the smaller of 128
# and a quarter of --data-mb) of transactional produce per system, so that the recorded cases do not
# pay the creation of __transaction_state (50 partitions on both) or the JIT of the transaction paths.
TXN_WARMUP_MB=${TXN_WARMUP_MB:-$(( DATA_MB / 4 < 128 ? DATA_MB / 4 : 128 ))}
log "transactions: $TXN_PARTITIONS partition(s), produce $DATA_MB MB per case, ctp $CTP_RATE records/s for $CTP_S s" \
  "after $CTP_WARMUP_S s"

SKIP_SYSTEMS=${SKIP_SYSTEMS:-}
adapter_check stellflow "$HOME_DIR/perf/txn/StellflowTxnBench.java" "$PERF_CP"
adapter_check kafka "$HOME_DIR/perf/kafka/KafkaTxnBench.java" "$KAFKA_LIB/*:$PERF_JAR"

props_args() { local kv out=""; for kv in $1; do out+=" $2 $kv"; done; echo "$out"; } # "k=v ..." flag

txn_bench() { # system scenario args...: one TxnBench run against that system's broker
  local system=$1; shift
  if [ "$system" = stellflow ]; then
    # shellcheck disable=SC2086
    "$JAVA_HOME/bin/java" $CLIENT_HEAP -cp "$PERF_CP" "$HOME_DIR/perf/txn/StellflowTxnBench.java" \
      "$@" --bootstrap-server "$SF_BS"
  else
    # shellcheck disable=SC2086
    "$JAVA_HOME/bin/java" $CLIENT_HEAP -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" \
      -cp "$KAFKA_LIB/*:$PERF_JAR" "$HOME_DIR/perf/kafka/KafkaTxnBench.java" "$@" --bootstrap-server "$KAFKA_BS"
  fi
}

# txn_case system kind name run [bench args...]: one TxnBench case, recorded in cases.jsonl with the
# broker's and the client JVM's CPU over the case.
txn_case() {
  local system=$1 kind=$2 name=$3 run=$4 out=$WORK/txn.out pid before after client_before client_after rc
  shift 4
  if [[ " $SKIP_SYSTEMS " == *" $system "* ]]; then FAILED=$((FAILED + 1)); return 0; fi
  if [ "$system" = stellflow ]; then pid=$SF_PID; else pid=$KAFKA_PID; fi
  top_up_page_cache
  before=$(cpu_ticks "$pid"); children_cpu_ms; client_before=$CHILD_CPU_MS
  set +e
  txn_bench "$system" "$@" --name "$name" >"$out" 2>"$WORK/txn-tool.log"
  rc=$?
  set -e
  children_cpu_ms; client_after=$CHILD_CPU_MS
  after=$(cpu_ticks "$pid")
  mkdir -p "$OUT_DIR/tool-output"
  cp "$out" "$OUT_DIR/tool-output/$system-$name-run$run.txt"
  cp "$WORK/txn-tool.log" "$OUT_DIR/tool-output/$system-$name-run$run.stderr.txt"
  if [ "$rc" -ne 0 ]; then log "$system $name run $run: bench exited with $rc"; tail -n 5 "$WORK/txn-tool.log" >&2 || true; fi
  if ! grep -F "{\"name\":\"$name\"," "$out" >"$WORK/txn-line.json"; then
    log "$system $name run $run: no result line"; FAILED=$((FAILED + 1)); return 0
  fi
  lab add --cases "$CASES" --format stellflow --output "$WORK/txn-line.json" --system "$system" --case "$name" \
    --run "$run" --kind "$kind" --transport "$SF_TRANSPORT" --record-size 1024 --partitions "$TXN_PARTITIONS" \
    --acks -1 --idempotence true --cpu-ticks $((after - before)) --clk-tck "$CLK_TCK" \
    --client-cpu-ms $((client_after - client_before)) || FAILED=$((FAILED + 1))
}
both_txn() { # kind name run [bench args...]: both systems, order flipped per run; honours --cases
  local first=stellflow second=kafka system
  if [ -n "$CASES_RE" ] && ! [[ "$2" =~ $CASES_RE ]]; then return 0; fi
  if [ $(( $3 % 2 )) -eq 0 ]; then first=kafka second=stellflow; fi
  for system in $first $second; do txn_case "$system" "$@"; done
}

TXN_CASES="txn-produce-1KiB-100ms txn-produce-1KiB-1000rec idem-produce-1KiB ctp-latency-txn ctp-latency-plain"
txn_wanted() { # whether --cases selects any transactional case
  local c
  [ -z "$CASES_RE" ] && return 0
  for c in $TXN_CASES; do [[ "$c" =~ $CASES_RE ]] && return 0; done
  return 1
}

transaction_cases() { # run
  local run=$1 num=$(( DATA_MB * 1024 )) system topic pargs cargs spec name mode
  pargs=$(props_args "$TXN_PRODUCER_PROPS" --prop)
  cargs=$(props_args "$CTP_PRODUCER_PROPS" --prop)
  if [ "$TXN_WARMUP_MB" -gt 0 ] && txn_wanted; then
    create_both "txn-warmup-$run" "$TXN_PARTITIONS"
    for system in stellflow kafka; do
      [[ " $SKIP_SYSTEMS " == *" $system "* ]] && continue
      # shellcheck disable=SC2086
      txn_bench "$system" produce --topic "txn-warmup-$run" --partitions "$TXN_PARTITIONS" --name warmup \
        --num-records $(( TXN_WARMUP_MB * 1024 )) --transaction-duration-ms 100 $pargs >"$WORK/warmup.out" 2>&1 \
        || log "$system transactional warm-up failed: $(tail -n 3 "$WORK/warmup.out")"
    done
  fi
  for spec in "txn-produce-1KiB-100ms:--transaction-duration-ms 100" \
              "txn-produce-1KiB-1000rec:--transaction-records 1000" \
              "idem-produce-1KiB:--no-transactions"; do
    name=${spec%%:*} topic=${spec%%:*}-$run
    create_both "$topic" "$TXN_PARTITIONS"
    # shellcheck disable=SC2086
    both_txn produce "$name" "$run" produce --topic "$topic" --partitions "$TXN_PARTITIONS" --num-records "$num" \
      --record-size 1024 ${spec#*:} $pargs
  done
  for mode in txn plain; do
    create_both "ctp-in-$mode-$run" "$TXN_PARTITIONS"
    create_both "ctp-out-$mode-$run" "$TXN_PARTITIONS"
    # shellcheck disable=SC2086
    both_txn latency "ctp-latency-$mode" "$run" ctp --input-topic "ctp-in-$mode-$run" --output-topic "ctp-out-$mode-$run" \
      --partitions "$TXN_PARTITIONS" --record-size 1024 --rate "$CTP_RATE" --warmup-ms $(( CTP_WARMUP_S * 1000 )) \
      --duration-ms $(( CTP_S * 1000 )) --group "ctp-$mode-$run-$RANDOM" $([ "$mode" = plain ] && echo --plain) $cargs
  done
}
