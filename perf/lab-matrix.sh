# Sourced by perf/lab.sh for the matrix: a fresh Stellflow broker per transport (the case group),
# produce cases over record size x batch size x partitions x acks, then a consume case and the
# fixed-rate latency case; repeated --runs times, medians reported.
log "matrix: $RUNS run(s), $DATA_MB MB per throughput case${SMALL:+ (--small)}${CASES_RE:+, cases =~ $CASES_RE}"
measure_limits

MIB=1048576
if [ -n "$SMALL" ]; then
  SIZES="1024" BATCHES="1048576" PARTITIONS="1 8" ACKS="1"
else
  SIZES="100 1024 16384" BATCHES="262144 1048576" PARTITIONS="1 8 64" ACKS="1 -1"
fi
TRANSPORTS=${STELLFLOW_TRANSPORTS:-io_uring epoll nio}
size_label() { case "$1" in 100) echo 100B ;; 1024) echo 1KiB ;; 16384) echo 16KiB ;; *) echo "${1}B" ;; esac; }
batch_label() { case "$1" in 262144) echo 256KiB ;; 1048576) echo 1MiB ;; *) echo "${1}B" ;; esac; }

for run in $(seq 1 "$RUNS"); do
  for transport in $TRANSPORTS; do
    sf_start "$transport"
    if ! grep -qi "$transport" "$WORK/stellflow-broker.log"; then
      log "note: the broker log does not name transport $transport"
    fi
    first_topic=""
    for size in $SIZES; do
      for batch in $BATCHES; do
        for parts in $PARTITIONS; do
          for acks in $ACKS; do
            name="produce-$(size_label "$size")-b$(batch_label "$batch")-p$parts-acks$acks-$transport"
            if [ -n "$CASES_RE" ] && ! [[ "$name" =~ $CASES_RE ]]; then continue; fi
            topic=t-$size-$batch-$parts-$([ "$acks" = -1 ] && echo all || echo 1)-$run
            sf_topic "$topic" "$parts"
            run_case stellflow produce "$name" "$run" "$topic" "$size" "$batch" "$parts" "$acks" 5 -1 \
              $(( DATA_MB * MIB / size )) "$transport"
            if [ -z "$first_topic" ] && [ "$size" = 1024 ]; then first_topic=$topic first_num=$(( DATA_MB * MIB / size )) first_parts=$parts; fi
          done
        done
      done
    done
    if [ -n "$first_topic" ]; then
      run_case stellflow consume "consume-1KiB-p$first_parts-$transport" "$run" "$first_topic" 1024 0 "$first_parts" - 0 -1 \
        "$first_num" "$transport"
    fi
    topic=lat-$run
    sf_topic "$topic" 1
    run_case stellflow latency "latency-1KiB-20k/s-acks-1-$transport" "$run" "$topic" 1024 "$MIB" 1 -1 0 20000 \
      $(( 20000 * LATENCY_S )) "$transport"
    if [ -n "$PROFILE" ] && [ "$run" = 1 ] && [ -z "${PROFILED:-}" ]; then
      profiler_lib || log "async-profiler not available"
      profile_case "event=cpu,interval=1ms" "$STAMP-stellflow-produce-1KiB-$transport-cpu.html" || log "profiling failed"
      profile_case "event=alloc,alloc=16k" "$STAMP-stellflow-produce-1KiB-$transport-alloc.html" || log "profiling failed"
      PROFILED=yes
    fi
    sf_stop
  done
done

lab report --cases "$CASES" --out-dir "$OUT_DIR" --iperf3-json "$OUT_DIR/iperf3.json" --fio-json "$OUT_DIR/fio.json" \
  --note "perf/run-matrix.sh${SMALL:+ --small} --runs $RUNS --data-mb $DATA_MB${CASES_RE:+ --cases '$CASES_RE'}; \
$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(uname -r); no fsync per produce." | tee "$WORK/report.txt"
echo "results: $OUT_DIR"
[ "$FAILED" -eq 0 ] || { log "$FAILED case(s) failed"; exit 1; }
