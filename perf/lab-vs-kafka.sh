# Sourced by perf/lab.sh for --vs-kafka: Stellflow and Apache Kafka side by side, same workloads,
# alternating case by case (the order flips every run), fresh brokers for every run.
KAFKA_LIB=$("$HOME_DIR/perf/kafka/fetch-kafka.sh")
KAFKA_VERSION=$(basename "$(dirname "$KAFKA_LIB")")
log "vs-kafka: $KAFKA_VERSION, $RUNS run(s), $DATA_MB MB per throughput case, latency case ${LATENCY_S} s"
measure_limits

MIB=1048576
both() { # kind name run topic size batch parts acks linger tput num
  local first=stellflow second=kafka
  if [ $(( $3 % 2 )) -eq 0 ]; then first=kafka second=stellflow; fi
  for system in $first $second; do
    run_case "$system" "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" "${11}" "$SF_TRANSPORT"
  done
}
create_both() { sf_topic "$1" "$2"; kafka_topic "$1" "$2"; }
SF_TRANSPORT=${SF_TRANSPORT:-auto}
# Every run starts fresh brokers; without a warm-up the first recorded case of each system would
# also measure its broker's JIT compiling the produce path (C2 compilation took about half of a
# client JVM's CPU in the first seconds on this machine). One unrecorded 1 KiB acks=1 produce of
# WARMUP_MB (default: the smaller of 2048 and twice --data-mb; 0 = none) per broker and run. 512 MB
# was the default until 2026-12-02 02:00, 1024 MB until 10:25: from an AOT cache our broker still
# compiled for 0.4 s in the first 1 GiB case after a 512 MB warm-up (0.0-0.08 s in the next ones),
# 0.13-0.15 s (15-17% of its samples) after 1024 MB (perf/results/20261202T0800Z-first-case-jit/, in
# git history at 5156c72).
# After 2048 MB the first case's broker CPU medians were 0.82 s/GB (ours) and 1.64 (Kafka's), against
# 1.21 and 2.03 after 1024 MB (perf/results/20261202T100912Z/ and 20261202T070217Z/).
WARMUP_MB=${WARMUP_MB:-$(( DATA_MB < 1024 ? 2 * DATA_MB : 2048 ))}
warm_up() { # run
  [ "$WARMUP_MB" -gt 0 ] || return 0
  local topic=warmup-$1 num=$(( WARMUP_MB * 1024 ))
  create_both "$topic" 1
  STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
    --topic "$topic" --num-records "$num" --record-size 1024 --json \
    --producer-props acks=1 batch.size="$MIB" linger.ms=5 >"$WORK/warmup.out" 2>&1 || log "stellflow warm-up failed"
  # shellcheck disable=SC2086
  kafka_tool ProducerPerformance --topic "$topic" --num-records "$num" --payload-file "$(kafka_payload_file 1024)" \
    --throughput -1 --command-property bootstrap.servers="$KAFKA_BS" acks=1 batch.size="$MIB" linger.ms=5 \
    $KAFKA_PRODUCER_SOCKET_PROPS >>"$WORK/warmup.out" 2>&1 || log "kafka warm-up failed"
  log "warm-up: $WARMUP_MB MB to each broker (not recorded)"
}

# JDK AOT caches (JEP 483 classes loaded and linked, JEP 515 method profiles; -XX:AOTCacheOutput of
# JDK 25): both brokers are trained once per lab run by the same unrecorded workload (AOT_MB per
# produce run, default 256: 1 KiB and 16 KiB records, acks 1 and -1, batch 1 MiB, linger 5 ms, then
# a fetch of the 1 KiB topic; no linger-0 run, see bin/stellflow-aot-train.sh), each with its tools;
# then every run starts both from their cache. Why: after a 512 MB warm-up each fresh broker still
# spent JIT-compiler CPU in every following 1 GiB case (0.2-0.7 s ours, 0.2-1.5 s Kafka's), its
# per-request methods reaching C2 only after thousands of requests; with the caches 0-0.14 s and
# 0.03-0.22 s. A broker that has run for a while compiled them long ago: the cases measure that one.
# The load tools get no cache (fresh JVMs, as the issue describes). --no-aot: no caches.
AOT_MB=${AOT_MB:-$(( DATA_MB < 256 ? DATA_MB : 256 ))}
AOT_NOTE="brokers started without JDK AOT caches (--no-aot)"
aot_train() {
  [ -n "$AOT" ] || return 0
  log "AOT: training both brokers' JDK AOT caches ($AOT_MB MB per produce run, not recorded)"
  STELLFLOW_OPTS="${SF_BROKER_OPTS:-}" "$HOME_DIR/bin/stellflow-aot-train.sh" --out "$WORK/stellflow-broker.aot" --mb "$AOT_MB" \
    >"$WORK/aot-train.log" 2>&1 || { log "stellflow AOT training failed"; tail -n 10 "$WORK/aot-train.log" >&2; return 1; }
  KAFKA_AOT_OPTS="-XX:AOTCacheOutput=$WORK/kafka-broker.aot"
  kafka_start
  local size acks t
  for size in 1024 16384; do
    for acks in 1 -1; do
      t=train-$size-acks$acks
      kafka_topic "$t" 1
      # shellcheck disable=SC2086
      kafka_tool ProducerPerformance --topic "$t" --num-records $(( AOT_MB * MIB / size )) \
        --payload-file "$(kafka_payload_file "$size")" --throughput -1 --command-property bootstrap.servers="$KAFKA_BS" \
        acks="$acks" batch.size="$MIB" linger.ms=5 $KAFKA_PRODUCER_SOCKET_PROPS >>"$WORK/aot-train.log" 2>&1
    done
  done
  # shellcheck disable=SC2086
  kafka_tool ConsumerPerformance --bootstrap-server "$KAFKA_BS" --topic train-1024-acks1 --num-records $(( AOT_MB * 1024 )) \
    --timeout 20000 --group "train-$RANDOM" --fetch-size "$FETCH_BYTES" $KAFKA_CONSUMER_SOCKET_ARGS >>"$WORK/aot-train.log" 2>&1
  stop_pid "$KAFKA_PID" 120; KAFKA_PID="" # the JVM writes the cache as it exits
  rm -rf "$KAFKA_DIR"
  [ -s "$WORK/kafka-broker.aot" ] || { log "kafka AOT training wrote no cache"; tail -n 10 "$WORK/kafka-broker.log" >&2; return 1; }
  # -Xlog:aot=info: each broker's log says whether its JVM opened the cache (aot_opened below).
  SF_AOT_CACHE=$WORK/stellflow-broker.aot KAFKA_AOT_OPTS="-XX:AOTCache=$WORK/kafka-broker.aot -Xlog:aot=info"
  SF_BROKER_OPTS="${SF_BROKER_OPTS:-} -Xlog:aot=info"
  AOT_NOTE="both brokers started from a JDK AOT cache trained by the same unrecorded workload ($AOT_MB MB per produce run)"
  log "AOT: caches ready ($(( $(stat -c %s "$SF_AOT_CACHE") / 1048576 )) MB Stellflow, $(( $(stat -c %s "$WORK/kafka-broker.aot") / 1048576 )) MB Kafka)"
}
aot_train
# shellcheck source=perf/lab-compression.sh
[ -z "$COMPRESSION" ] || . "$HOME_DIR/perf/lab-compression.sh"
# shellcheck source=perf/lab-transactions.sh
[ -z "$TRANSACTIONS" ] || . "$HOME_DIR/perf/lab-transactions.sh"
# aot_opened log system: a JVM that cannot use a cache (another JDK build, other jars or flags) says
# so and starts without it; the run would then compare a broker with its cache against one without.
# Required: the cache opened and its AOT-linked classes in use, and no error or refusal. Other AOT
# warnings are listed, not fatal: Kafka's JVM warns that a few method adapters saved in the cache
# ("Failed to link AdapterHandlerEntry") are generated again at start, and still uses the cache.
aot_opened() {
  [ -n "$SF_AOT_CACHE" ] || return 0
  if ! grep -q "Opened AOT cache" "$1" || ! grep -q "Using AOT-linked classes: true" "$1" \
    || grep -Eiq '\[error *\]\[(aot|cds)|\[warning *\]\[(aot|cds)[^]]*\].*(unable|mismatch|disabled|cannot|not used)' "$1"; then
    log "$2 broker did not open its AOT cache cleanly:"; grep -E '\[(aot|cds)' "$1" | grep -v '\[info' | head -n 5 >&2
    exit 1
  fi
  local warnings
  warnings=$(grep -Ec '\[warning *\]\[(aot|cds)' "$1" || true)
  [ "$warnings" -eq 0 ] || log "$2 broker uses its AOT cache ($warnings AOT warning(s), e.g. $(grep -Em1 '\[warning *\]\[(aot|cds)' "$1" | cut -c1-120))"
}

noidem_case() { # label run size num
  local topic=p-$1-acksall-noidem-$2
  create_both "$topic" 1
  CASE_IDEMPOTENCE=false both produce "produce-$1-b1MiB-acks-1-noidem" "$2" "$topic" "$3" "$MIB" 1 -1 5 -1 "$4"
}

for run in $(seq 1 "$RUNS"); do
  log "run $run of $RUNS: fresh brokers"
  fill_page_cache
  sf_start "$SF_TRANSPORT"
  kafka_start
  aot_opened "$WORK/stellflow-broker.log" stellflow
  aot_opened "$WORK/kafka-broker.log" kafka
  warm_up "$run"
  for size in 1024 16384; do
    label=$([ "$size" = 1024 ] && echo 1KiB || echo 16KiB)
    num=$(( DATA_MB * MIB / size ))
    for acks in 1 -1; do
      # Issue #20's pair: the 1 KiB acks=-1 case is idempotent on both systems (run_case); its twin
      # ...-noidem is the same workload with enable.idempotence=false, for the idempotent /
      # non-idempotent table of results.md (target: ours within 3%). The twin runs right before the
      # idempotent case in even runs and right after it in odd ones, so neither side of the pair
      # always inherits the other's dirty pages and log segments.
      pair=$([ "$size" = 1024 ] && [ "$acks" = -1 ] && echo yes || echo no)
      [ "$pair" = no ] || [ $(( run % 2 )) -ne 0 ] || noidem_case "$label" "$run" "$size" "$num"
      topic=p-$label-acks$([ "$acks" = -1 ] && echo all || echo 1)-$run
      create_both "$topic" 1
      both produce "produce-$label-b1MiB-acks$acks" "$run" "$topic" "$size" "$MIB" 1 "$acks" 5 -1 "$num"
      [ "$pair" = no ] || [ $(( run % 2 )) -eq 0 ] || noidem_case "$label" "$run" "$size" "$num"
    done
    # Consume what the acks=1 case wrote (page cache warm on both sides).
    both consume "consume-$label" "$run" "p-$label-acks1-$run" "$size" 0 1 - 0 -1 "$num"
  done
  [ -z "$COMPRESSION" ] || compression_cases "$run"
  [ -z "$TRANSACTIONS" ] || transaction_cases "$run"
  topic=lat-$run
  create_both "$topic" 1
  both latency "latency-1KiB-20k/s-acks-1" "$run" "$topic" 1024 "$MIB" 1 -1 0 20000 $(( 20000 * LATENCY_S ))
  if [ -n "$PROFILE" ] && [ "$run" = 1 ]; then
    profiler_lib || log "async-profiler not available"
    profile_case "event=cpu,interval=1ms" "$STAMP-stellflow-produce-1KiB-cpu.html" || log "profiling failed"
    profile_case "event=alloc,alloc=16k" "$STAMP-stellflow-produce-1KiB-alloc.html" || log "profiling failed"
    profile_kafka_case "event=cpu,interval=1ms" "$STAMP-kafka-produce-1KiB-cpu.html" || log "profiling failed"
  fi
  sf_stop
  kafka_stop
done

lab report --cases "$CASES" --out-dir "$OUT_DIR" --iperf3-json "$OUT_DIR/iperf3.json" --fio-json "$OUT_DIR/fio.json" \
  --note "perf/run-matrix.sh --vs-kafka${TRANSACTIONS:+ --transactions}${COMPRESSION:+ --compression}${CASES_RE:+ --cases '$CASES_RE'} --runs $RUNS --data-mb $DATA_MB --latency-s $LATENCY_S; $KAFKA_VERSION; \
$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(uname -r); Stellflow transport $SF_TRANSPORT; no fsync per produce on either side; \
socket buffers: $([ "${KAFKA_SOCKET_DEFAULTS:-0}" = 1 ] && echo "Kafka's shipped sizes" || echo 'OS default (autotuned) on both'); \
Kafka payloads pre-made (--payload-file); warm-up ${WARMUP_MB} MB per broker and run; \
$PAGE_CACHE_NOTE$([ "$TOP_UP_SKIPPED" = 0 ] || echo " ($TOP_UP_SKIPPED top-ups skipped: no disk room or dd failed)"); $AOT_NOTE.$([ -z "$COMPRESSION" ] || echo " zstd-jni bindings: \
our clients $(case "${STELLFLOW_OPTS:-}" in *enableMultiRelease=true*) echo 'its FFM classes (STELLFLOW_OPTS)' ;; \
*) echo 'its JNI classes (bin/_launch.sh)' ;; esac), our broker its FFM classes (JDK default); \
Kafka's clients and broker zstd-jni $(ls "$KAFKA_LIB" | sed -n 's/^zstd-jni-\(.*\)\.jar$/\1/p') (JNI only).")$([ -z "$TRANSACTIONS" ] || echo " Transactions: $TXN_PARTITIONS partition(s), \
producers $TXN_PRODUCER_PROPS, ctp $CTP_RATE records/s for $CTP_S s after $CTP_WARMUP_S s, ctp producers $CTP_PRODUCER_PROPS, \
Kafka consumers group.protocol=consumer.")" \
  | tee "$WORK/report.txt"
[ -z "$COMPRESSION" ] || compression_report | tee -a "$WORK/report.txt"
echo "results: $OUT_DIR"
[ "$FAILED" -eq 0 ] || { log "$FAILED case(s) failed"; exit 1; }
