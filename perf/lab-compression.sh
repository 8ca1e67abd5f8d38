# Sourced by perf/lab-vs-kafka.sh for --vs-kafka --compression (issue #21): produce and consume of
# ~1 KiB JSON log records compressed with the same codec and level on both systems, and the
# compression ratio each broker stores. Needs lab.sh's run_case (CASE_PAYLOAD_FILE,
# CASE_PRODUCER_PROPS) and lab-vs-kafka.sh's both/create_both.
#
# Payload: one file of 10,000 records (8.5 MB: more than a batch or zstd's window, so no record is
# compressed against its own earlier copy) made by `stellflow-perf.sh payload-file` (JsonLogLines,
# seed 42: JSON arrays of about 3 log lines, at most 1024 bytes, one per line), given to both producers with
# --payload-file (Kafka's ProducerPerformance picks a random line per record, ours takes them in
# turn). MB/s on both sides count the records' uncompressed value bytes (what the application sent
# or received); broker CPU per GB divides by the same bytes.
#
# Ratio: bytes of the topic's .log segment files on each broker after its produce case, divided by
# the records' bytes (records x the file's mean record size); written to compression.jsonl and
# summarised in the report (median over runs). Below 1 is smaller on disk; the batch and record
# framing count on disk, so an uncompressed topic of these records stores about 1.03.
COMPRESSION_CODECS=${COMPRESSION_CODECS:-"lz4:9 zstd:3"}
JSON_PAYLOAD=$WORK/payload-json-logs.txt
STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" payload-file --out "$JSON_PAYLOAD" \
  --records 10000 --record-size 1024 >&2
JSON_RECORDS=$(wc -l <"$JSON_PAYLOAD")
JSON_MEAN_BYTES=$(( ($(stat -c %s "$JSON_PAYLOAD") - JSON_RECORDS) / JSON_RECORDS ))
COMPRESSION_JSONL=$OUT_DIR/compression.jsonl
: >"$COMPRESSION_JSONL"
log "compression: codecs $COMPRESSION_CODECS, payload $JSON_RECORDS JSON log records of $JSON_MEAN_BYTES bytes on average"

topic_log_bytes() { # system topic -> bytes of the topic's .log segment files on that system's broker
  local dir
  if [ "$1" = stellflow ]; then dir=$SF_DIR/data; else dir=$KAFKA_DIR/data; fi
  find "$dir" -path "*/$2-[0-9]*/*" -name '*.log' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}

# Codec warm-up: the run's warm-up (lab-vs-kafka.sh) sends uncompressed records, so each broker's
# first compressed case would also measure its JIT compiling that codec's validation path (and, for
# Kafka, its decompressing iterators). Before each codec's recorded case, both brokers take
# COMPRESSION_WARMUP_MB (default the smaller of 512 and twice --data-mb, 0 = none) of the same records with the same codec, unrecorded.
COMPRESSION_WARMUP_MB=${COMPRESSION_WARMUP_MB:-$(( DATA_MB < 256 ? 2 * DATA_MB : 512 ))}
compression_warm_up() { # codec level run
  [ "$COMPRESSION_WARMUP_MB" -gt 0 ] || return 0
  local topic=json-warmup-$1-$3 num=$(( COMPRESSION_WARMUP_MB * MIB / JSON_MEAN_BYTES ))
  create_both "$topic" 1
  STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
    --topic "$topic" --num-records "$num" --record-size 1024 --json --payload-file "$JSON_PAYLOAD" \
    --producer-props acks=1 batch.size="$MIB" linger.ms=5 compression.type="$1" "compression.$1.level=$2" \
    >"$WORK/warmup.out" 2>&1 || log "stellflow $1 warm-up failed"
  # shellcheck disable=SC2086
  kafka_tool ProducerPerformance --topic "$topic" --num-records "$num" --payload-file "$JSON_PAYLOAD" \
    --throughput -1 --command-property bootstrap.servers="$KAFKA_BS" acks=1 batch.size="$MIB" linger.ms=5 \
    compression.type="$1" "compression.$1.level=$2" $KAFKA_PRODUCER_SOCKET_PROPS >>"$WORK/warmup.out" 2>&1 \
    || log "kafka $1 warm-up failed"
}

compression_cases() { # run
  local run=$1 spec codec level num topic name system disk
  num=$(( DATA_MB * MIB / JSON_MEAN_BYTES ))
  for spec in $COMPRESSION_CODECS; do
    codec=${spec%%:*} level=${spec#*:}
    topic=json-$codec-$run
    name=produce-json-1KiB-$codec$level-b1MiB-acks1
    if [ -z "$CASES_RE" ] || [[ "$name" =~ $CASES_RE ]]; then compression_warm_up "$codec" "$level" "$run"; fi
    create_both "$topic" 1
    CASE_PAYLOAD_FILE=$JSON_PAYLOAD CASE_PRODUCER_PROPS="compression.type=$codec compression.$codec.level=$level" \
      both produce "$name" "$run" "$topic" 1024 "$MIB" 1 1 5 -1 "$num"
    for system in stellflow kafka; do
      disk=$(topic_log_bytes "$system" "$topic")
      [ "$disk" -gt 0 ] || continue # the case was filtered out by --cases
      printf '{"system":"%s","case":"%s","run":%d,"codec":"%s","level":%s,"disk_bytes":%d,"uncompressed_bytes":%d,"ratio":%s}\n' \
        "$system" "$name" "$run" "$codec" "$level" "$disk" $(( num * JSON_MEAN_BYTES )) \
        "$(awk -v d="$disk" -v u=$(( num * JSON_MEAN_BYTES )) 'BEGIN { printf "%.4f", d / u }')" >>"$COMPRESSION_JSONL"
    done
    both consume "consume-json-1KiB-$codec$level" "$run" "$topic" 1024 0 1 - 0 -1 "$num"
    if [ -n "$PROFILE" ] && [ "$run" = 1 ]; then
      # --profile: CPU flame graphs of both brokers taking this codec's produce (unrecorded), so the
      # codec's share of each broker's CPU can be compared frame by frame.
      profiler_lib || log "async-profiler not available"
      CASE_PAYLOAD_FILE=$JSON_PAYLOAD CASE_PRODUCER_PROPS="compression.type=$codec compression.$codec.level=$level" \
        profile_case "event=cpu,interval=1ms" "$STAMP-stellflow-produce-json-$codec-cpu.html" || log "profiling failed"
      CASE_PAYLOAD_FILE=$JSON_PAYLOAD CASE_PRODUCER_PROPS="compression.type=$codec compression.$codec.level=$level" \
        profile_kafka_case "event=cpu,interval=1ms" "$STAMP-kafka-produce-json-$codec-cpu.html" || log "profiling failed"
    fi
  done
}

# The ratio table: median over runs per system and case, from compression.jsonl.
compression_report() {
  echo
  echo "Compression: bytes on disk / uncompressed record bytes (median over runs; $COMPRESSION_JSONL);"
  echo "before each codec's cases both brokers took $COMPRESSION_WARMUP_MB MB of the same records with that codec (unrecorded)"
  printf '%-44s %-10s %8s %14s\n' case system ratio disk_bytes
  sed -E 's/.*"system":"([^"]*)","case":"([^"]*)".*"disk_bytes":([0-9]+).*"ratio":([0-9.]+).*/\2 \1 \4 \3/' \
    "$COMPRESSION_JSONL" | sort -k1,1 -k2,2 -k3,3n | awk '
      { key = $1 " " $2; n[key]++; r[key, n[key]] = $3; d[key, n[key]] = $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
      END { for (i = 1; i <= k; i++) { key = order[i]; m = int((n[key] + 1) / 2); split(key, f, " ");
            printf "%-44s %-10s %8s %14s\n", f[1], f[2], r[key, m], d[key, m] } }'
}
