#!/usr/bin/env bash
# The perf lab behind perf/run-matrix.sh (everything but --quick). See docs/performance.md.
#   perf/run-matrix.sh [--small] [--cases REGEX] [--runs N] [--data-mb MB] [--profile] [--no-limits]
#   perf/run-matrix.sh --vs-kafka [--runs N] [--smoke] [--data-mb MB] [--latency-s S] [--profile]
#                                 [--fresh-memory] [--no-aot] [--compression] [--transactions]
#   perf/run-matrix.sh --cluster3 [--runs N] [--smoke] [--data-mb MB] [--profile]
#   perf/run-matrix.sh --groups [--runs N] [--smoke] [--data-mb MB] [--cases REGEX]
# Matrix: record size 100 B / 1 KiB / 16 KiB x batch 256 KiB / 1 MiB x partitions 1 / 8 / 64 x
#   acks 1 / -1, per transport io_uring / epoll / nio (a fresh broker per transport = case group),
#   then a consume case and a fixed-rate latency case (20,000 records/s of 1 KiB, acks=-1,
#   linger 0). --small keeps 1 KiB, batch 1 MiB, partitions 1 and 8, acks 1.
# --vs-kafka: Apache Kafka 4.x from Maven Central (perf/kafka/fetch-kafka.sh, cached outside the
#   repo), one KRaft node on 127.0.0.1, Kafka's own ProducerPerformance/ConsumerPerformance, the
#   same workloads as ours, alternating Stellflow and Kafka case by case, fresh brokers per run.
#   Produce cases set enable.idempotence on both: true with acks=-1, false with acks=1; the 1 KiB
#   acks=-1 case also runs as ...-noidem with it false (issue #20: idempotent / non-idempotent).
#   Before each run the free memory is filled with clean page cache (a file of zeros, written and
#   synced, deleted at the end), so that the brokers' new log pages recycle cached pages as on a
#   long-running server; --fresh-memory skips that (see docs/performance.md, "page cache").
#   Before run 1 both brokers get a JDK AOT cache trained by the same unrecorded workload (ours with
#   bin/stellflow-aot-train.sh, Kafka's with its own tools), and every run starts them from it, so
#   the recorded cases measure brokers past their start-up JIT, as a long-running broker is; the
#   load tools stay fresh JVMs without one. --no-aot starts both without (docs/performance.md, "JDK AOT caches").
#   --compression adds, per run, produce and consume of ~1 KiB JSON log records (the same payload
#   file on both) with lz4 and zstd at the same level on both (COMPRESSION_CODECS, default
#   "lz4:9 zstd:3", Kafka's default levels), and the ratio of log bytes on disk to the records'
#   bytes (perf/lab-compression.sh, docs/compression.md); --cases 'json' runs those alone.
#   --transactions adds, per run, issue #20's transactional cases, the same driver on both systems
#   (perf/lab-transactions.sh): txn-produce-1KiB-100ms and -1000rec (--data-mb MB of 1 KiB records,
#   a transaction every 100 ms / 1,000 records), idem-produce-1KiB (the same loop, idempotent, no
#   transactions), ctp-latency-txn and -plain (consume-transform-produce at CTP_RATE 2,000 records/s,
#   end-to-end latency with and without transactions); results.md gets a "Transactions" section;
#   --cases '^(txn|idem|ctp)-' runs those alone (docs/performance.md, "Transactions").
# --cluster3: the same side by side with THREE brokers each (Stellflow: three combined
#   broker+controller nodes; Kafka: three KRaft combined nodes), topics RF=3 with
#   min.insync.replicas=2, produce 1 KiB and 16 KiB with acks 1 and -1 (perf/lab-cluster3.sh);
#   broker CPU is the sum over the three broker processes.
# --groups: consumer groups (issue #19) side by side with Kafka 4.x (group.protocol=consumer): time to
#   a stable assignment for M members over P partitions, then one joining and one leaving
#   (GROUP_SIZES, default "10x900 100x1000"; --smoke "3x30 5x50"), commits/s and commit latency of
#   COMMITTERS members (8), group against assign consume of --data-mb MB (perf/lab-groups.sh).
# Each case records MB/s, records/s, p50/p99/p99.9, broker CPU s/GB (utime+stime of the broker
# pid from /proc before and after the case) and client CPU s/GB (the load tool's CPU, all threads). Machine limits (iperf3 loopback, fio sequential
# write) are measured in the same run. Output: perf/results/<timestamp>/{cases.jsonl,results.json,
# results.md} and a PNG chart per metric (docs/performance.md, "Charts"); --profile adds CPU and
# allocation flame graphs of the Stellflow broker (async-profiler) to profiles/.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$HOME_DIR"
# shellcheck source=bin/find-java.sh
. "$HOME_DIR/bin/find-java.sh"

MODE=matrix RUNS="" SMALL="" CASES_RE="" PROFILE="" LIMITS=yes DATA_MB="" LATENCY_S="" SMOKE="" FILL=yes AOT=yes
COMPRESSION="" TRANSACTIONS=""
PAGE_CACHE_NOTE="page cache not pre-filled"
while [ $# -gt 0 ]; do
  case "$1" in
    --vs-kafka) MODE=vs-kafka ;;
    --cluster3) MODE=cluster3 ;;
    --groups) MODE=groups ;;
    --small) SMALL=yes ;;
    --smoke) SMOKE=yes ;;
    --cases) CASES_RE=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --data-mb) DATA_MB=$2; shift ;;
    --latency-s) LATENCY_S=$2; shift ;;
    --profile) PROFILE=yes ;;
    --no-limits) LIMITS="" ;;
    --fresh-memory) FILL="" ;;
    --no-aot) AOT="" ;;
    --compression) COMPRESSION=yes ;;
    --transactions) TRANSACTIONS=yes ;;
    -h|--help) sed -n '2,46p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if { [ -n "$COMPRESSION" ] || [ -n "$TRANSACTIONS" ]; } && [ "$MODE" != vs-kafka ]; then
  echo "--compression and --transactions go with --vs-kafka (see --help)" >&2; exit 2
fi
if [ -n "$SMOKE" ]; then RUNS=${RUNS:-1}; DATA_MB=${DATA_MB:-128}; LATENCY_S=${LATENCY_S:-5}; fi
RUNS=${RUNS:-3} DATA_MB=${DATA_MB:-1024} LATENCY_S=${LATENCY_S:-10}
if [ "$MODE" = matrix ] && [ -n "$SMALL" ] && [ -z "$SMOKE" ]; then DATA_MB=${DATA_MB:-256}; fi

log() { printf '[lab] %s\n' "$*" >&2; }

# --- build once (the launchers below never build) ------------------------------------------------
# shellcheck source=perf/build-once.sh
. "$HOME_DIR/perf/build-once.sh"
# Brokers start without a JDK AOT cache unless a mode trains one for the run (SF_AOT_CACHE below): a
# cache a developer trained under broker/target must not slip into the lab's figures unannounced.
export STELLFLOW_AOT=off
SF_AOT_CACHE="" KAFKA_AOT_OPTS=""
PERF_JAR=$(ls perf/target/stellflow-perf-*-SNAPSHOT.jar | grep -v -- '-tests' | head -n 1)
PERF_CP="$PERF_JAR:$HOME_DIR/perf/target/lib/*"
lab() { "$JAVA_HOME/bin/java" -Xmx512m -Djava.awt.headless=true -cp "$PERF_CP" io.stellflow.perf.lab.LabCommand "$@"; }
CLK_TCK=$(getconf CLK_TCK)
CLIENT_HEAP="-Xms256m -Xmx1g"
# Fixed-rate latency counted from the due time (coordinated-omission-aware) in the matrix; from the
# actual send in --vs-kafka, as Kafka's ProducerPerformance counts it (override: LATENCY_FROM=due).
LATENCY_FROM=${LATENCY_FROM:-$([ "$MODE" = vs-kafka ] && echo send || echo due)}
# The fixed-rate latency case starts with LATENCY_WARMUP_S seconds of records sent the same way and
# left out of the result (--warmup-records on both tools; Kafka's ProducerPerformance has the flag and
# prints a steady-state summary). Each case starts a fresh client JVM: without it a profile of
# our load tool showed C2 compiling in about half of its CPU samples over a 10 s case, and both
# systems' p99 measured their clients' JIT.
LATENCY_WARMUP_S=${LATENCY_WARMUP_S:-5}

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT_DIR="$HOME_DIR/perf/results/$STAMP"
mkdir -p "$OUT_DIR"
CASES="$OUT_DIR/cases.jsonl"
: >"$CASES"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stellflow-lab.XXXXXX")
SF_PID="" KAFKA_PID=""
# --cluster3: the broker pids of each system (space-separated); CPU per case is summed over them.
SF_PIDS="" KAFKA_PIDS=""

free_memory_mb() { echo $(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 )); }

# fill_page_cache: fills the free memory, less PAGE_CACHE_RESERVE_MB (default 2048, for the JVMs),
# with clean page cache, kept until the next run's fill or the end of the lab run. Why: on this
# machine (a VM whose host takes freed guest memory back, virtio-balloon free page reporting) a
# page-cache page taken from free memory is a host fault: 1.4-1.8 s of kernel time per GiB written,
# against 0.3 s for pages recycled from clean cache (dd: docs/performance.md, "page cache"). A server
# that has run for a while has its memory full of page cache, so the recycling case is the real
# one; and the fault cost, paid alike by both brokers, would otherwise make every ratio of CPU per
# GB look closer to 1 than the brokers' own work is. Skipped by --fresh-memory and --smoke.
fill_page_cache() {
  PAGE_CACHE_FILLED=""
  if [ -z "$FILL" ] || [ -n "$SMOKE" ]; then
    PAGE_CACHE_NOTE="page cache not pre-filled ($([ -n "$SMOKE" ] && echo --smoke || echo --fresh-memory))"
    return 0
  fi
  local dir="$WORK/page-cache-fill" free_mb disk_mb fill_mb
  if [ "$(stat -f -c %T "$WORK")" = tmpfs ]; then
    PAGE_CACHE_NOTE="page cache not pre-filled (the lab's work dir is on tmpfs, which cannot be reclaimed)"
    log "page cache: $WORK is on tmpfs, not filling"; return 0
  fi
  rm -rf "$dir"; mkdir -p "$dir" # the previous run's fill: its pages are recycled or freed by now
  free_mb=$(free_memory_mb)
  fill_mb=$(( free_mb - ${PAGE_CACHE_RESERVE_MB:-2048} ))
  # Leave disk room for a run's data: both brokers' warm-up and four produce cases, plus 4 GB.
  disk_mb=$(( $(df -Pm "$WORK" | awk 'NR == 2 {print $4}') - 2 * (${WARMUP_MB:-2048} + 4 * DATA_MB) - 4096 ))
  if [ "$disk_mb" -lt "$fill_mb" ]; then fill_mb=$disk_mb; fi
  if [ "$fill_mb" -lt 256 ]; then
    PAGE_CACHE_NOTE="page cache not pre-filled in the last run ($free_mb MB free, disk room $disk_mb MB)"
    log "page cache: $free_mb MB free, disk room $disk_mb MB: not filling"; return 0
  fi
  dd if=/dev/zero of="$dir/fill" bs=1M count="$fill_mb" conv=fsync status=none
  PAGE_CACHE_FILLED=yes
  PAGE_CACHE_NOTE="free memory filled with clean page cache before each run and topped up before each case"
  log "page cache: filled $fill_mb MB with clean cached pages, $(free_memory_mb) MB free"
}

# top_up_page_cache: before each recorded case of a run whose memory was filled, writes the free
# memory less PAGE_CACHE_TOPUP_LEAVE_MB (default 160, and at least the kernel's high watermarks plus
# 64 MB, so kswapd does not wake and evict a case's data) into one more clean fill file. Why: within a run, memory freed since the fill (each load tool's JVM at its exit)
# is reported to the host after about 2 s and comes back as host faults in whichever process takes
# it next, usually the next case's broker copying produce data into the page cache; the brokers'
# CPU per GB then depended on who took those pages. In one lab (profiles of 20261207T123520Z) the
# copy into the page cache cost our lz4 produce 194 ms against Kafka's 38 for about the same bytes,
# and Kafka's zstd produce 193 against our 72; free memory between cases was 200-600 MB. The top-up
# takes those pages first (its own faults are not measured), so both brokers' writes recycle clean
# cached pages, as after the run's fill. Also before each profiled run (profile_case,
# profile_kafka_case) and transaction case (lab-transactions.sh). Not done when the run was not
# filled; a top-up the disk has no room for, or whose dd fails, is logged and counted in the results'
# note (TOP_UP_SKIPPED), never silent.
TOP_UP_SKIPPED=0
top_up_page_cache() {
  [ -n "${PAGE_CACHE_FILLED:-}" ] || return 0
  local free_mb top_mb disk_mb leave_mb high_mb
  high_mb=$(( $(awk '$1 == "high" {s += $2} END {print s + 0}' /proc/zoneinfo) * 4 / 1024 ))
  leave_mb=${PAGE_CACHE_TOPUP_LEAVE_MB:-160}
  if [ "$leave_mb" -lt $(( high_mb + 64 )) ]; then leave_mb=$(( high_mb + 64 )); fi
  free_mb=$(free_memory_mb)
  top_mb=$(( free_mb - leave_mb ))
  [ "$top_mb" -ge 32 ] || return 0
  disk_mb=$(( $(df -Pm "$WORK" | awk 'NR == 2 {print $4}') - 2 * DATA_MB - 4096 ))
  if [ "$disk_mb" -lt "$top_mb" ]; then
    TOP_UP_SKIPPED=$(( TOP_UP_SKIPPED + 1 ))
    log "page cache: no disk room to top up $top_mb MB ($disk_mb MB to spare): skipped"
    return 0
  fi
  TOP_UP_SEQ=$(( ${TOP_UP_SEQ:-0} + 1 ))
  if ! dd if=/dev/zero of="$WORK/page-cache-fill/top-up-$TOP_UP_SEQ" bs=1M count="$top_mb" conv=fsync status=none; then
    TOP_UP_SKIPPED=$(( TOP_UP_SKIPPED + 1 ))
    log "page cache: the top-up of $top_mb MB failed"
  fi
}

stop_pid() { # pid [grace in seconds, default 10, then SIGKILL]
  local pid=$1
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 $(( ${2:-10} * 10 ))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  status=$?
  for p in $SF_PID $KAFKA_PID $SF_PIDS $KAFKA_PIDS; do stop_pid "$p"; done
  if [ "$status" -ne 0 ]; then
    for f in "$WORK"/*.log; do [ -f "$f" ] && { log "tail of $f:"; tail -n 15 "$f" >&2; }; done
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'log "failed (exit $?): $BASH_COMMAND, line $LINENO"' ERR

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local cand
  for _ in $(seq 1 100); do
    cand=$(( 20000 + RANDOM % 12000 )) # below the ephemeral range (see run-matrix.sh)
    port_in_use "$cand" || { echo "$cand"; return 0; }
  done
  log "no free port"; return 1
}
wait_port() { # pid port what
  for i in $(seq 1 600); do
    port_in_use "$2" && return 0
    kill -0 "$1" 2>/dev/null || { log "$3 exited during start"; return 1; }
    [ "$i" -lt 600 ] || { log "$3 did not open port $2 within 60 s"; return 1; }
    sleep 0.1
  done
}
# utime + stime (fields 14 and 15; field 2 is "(java)" without spaces) in clock ticks, summed over
# the pids given.
cpu_ticks() { local p t=0; for p in "$@"; do t=$(( t + $(awk '{print $14 + $15}' "/proc/$p/stat") )); done; echo "$t"; }
# children_cpu_ms: sets CHILD_CPU_MS to the user+system CPU ms of every child this shell has reaped
# so far (the `times` builtin's second line), so a delta around a foreground tool is that tool's
# CPU, all threads. Call it directly, never as $(children_cpu_ms): a subshell has its own, empty,
# children times.
children_cpu_ms() {
  times >"$WORK/times"
  CHILD_CPU_MS=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
                 printf "%d\n", t * 1000 }' "$WORK/times")
}

# --- Stellflow broker ----------------------------------------------------------------------------
# SF_BROKER_PROPS: extra server.properties lines for the Stellflow broker (A/B runs of one setting).
sf_start() { # transport
  local port dir=$WORK/sf-$1-$RANDOM
  port=$(free_port); mkdir -p "$dir"
  cat >"$dir/server.properties" <<PROPS
broker.id=0
listeners=PLAINTEXT://127.0.0.1:$port
log.dirs=$dir/data
transport=$1
${SF_BROKER_PROPS:-}
PROPS
  STELLFLOW_AOT=$([ -n "$SF_AOT_CACHE" ] && echo on || echo off) STELLFLOW_AOT_CACHE=$SF_AOT_CACHE \
    STELLFLOW_OPTS="${SF_BROKER_OPTS:-}" "$HOME_DIR/bin/stellflow-server.sh" "$dir/server.properties" >"$WORK/stellflow-broker.log" 2>&1 &
  SF_PID=$! SF_BS=127.0.0.1:$port SF_DIR=$dir
  wait_port "$SF_PID" "$port" "stellflow broker"
  log "stellflow broker pid $SF_PID on $SF_BS, transport $1"
}
sf_stop() { stop_pid "$SF_PID"; SF_PID=""; rm -rf "$SF_DIR"; }
sf_topic() { # name partitions; retried while the fresh broker registers and is unfenced (the data
  # port opens before that, and a create in between is refused with INVALID_REPLICATION_FACTOR)
  local i
  for i in $(seq 1 60); do
    if "$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-server "$SF_BS" --create --topic "$1" --partitions "$2" \
         >"$WORK/sf-topic.log" 2>&1; then
      return 0
    fi
    # A create the controller committed but the broker had not applied within the tool's wait (a
    # topic of many partitions on a busy machine: each new partition's files are fsynced): wait for
    # every partition to have a leader instead of failing the run.
    if grep -q "committed but not applied" "$WORK/sf-topic.log"; then
      sf_wait_leaders "$1" "$2" && return 0
      break
    fi
    grep -q "INVALID_REPLICATION_FACTOR" "$WORK/sf-topic.log" || break
    sleep 0.5
  done
  log "stellflow topic $1 not created: $(tail -n 2 "$WORK/sf-topic.log")"; return 1
}
sf_wait_leaders() { # name partitions: up to 120 s until --describe shows every partition with a leader
  local i n
  for i in $(seq 1 240); do
    n=$("$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-server "$SF_BS" --describe --topic "$1" 2>/dev/null \
      | grep -c -E $'\tLeader: [0-9]+' || true)
    [ "$n" -ge "$2" ] && { log "stellflow topic $1: committed late, all $2 partitions have a leader now"; return 0; }
    sleep 0.5
  done
  return 1
}

# --- Kafka broker (KRaft, combined broker+controller, one node) -----------------------------------
# Shared with perf/lab-cluster3.sh: Kafka's log4j2 config (WARN to stdout) in a node dir, and one
# node started with the JVM flags of Kafka's kafka-server-start.sh / kafka-run-class.sh.
kafka_log4j() { # dir
  cat >"$1/log4j2.properties" <<'L4J'
rootLogger.level=WARN
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
L4J
}
kafka_node() { # heap_opts dir properties (runs in the foreground; callers background it)
  # KAFKA_AOT_OPTS: the JDK AOT cache flag of --vs-kafka (empty elsewhere).
  # shellcheck disable=SC2086
  exec "$JAVA_HOME/bin/java" $1 $KAFKA_AOT_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true -Dlog4j2.configurationFile="$2/log4j2.properties" \
    -cp "$KAFKA_LIB/*" kafka.Kafka "$3"
}
kafka_start() {
  local port cport dir=$WORK/kafka-$RANDOM cluster
  port=$(free_port); cport=$(free_port); mkdir -p "$dir"
  cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
# One partition for the group offsets topic (default 50): its creation at the first consume
# would otherwise be charged to the first consume case.
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
$KAFKA_BROKER_SOCKET_PROPS
PROPS
  kafka_log4j "$dir"
  cluster=$("$JAVA_HOME/bin/java" -cp "$KAFKA_LIB/*" -Dlog4j2.configurationFile="$dir/log4j2.properties" kafka.tools.StorageTool random-uuid)
  "$JAVA_HOME/bin/java" -cp "$KAFKA_LIB/*" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    kafka.tools.StorageTool format -t "$cluster" -c "$dir/server.properties" >"$WORK/kafka-format.log" 2>&1
  # JVM flags of Kafka's kafka-server-start.sh / kafka-run-class.sh.
  kafka_node "-Xms1g -Xmx1g" "$dir" "$dir/server.properties" >"$WORK/kafka-broker.log" 2>&1 &
  KAFKA_PID=$! KAFKA_BS=127.0.0.1:$port KAFKA_DIR=$dir
  wait_port "$KAFKA_PID" "$port" "kafka broker"
  log "kafka broker pid $KAFKA_PID on $KAFKA_BS ($(basename "$(dirname "$KAFKA_LIB")"))"
}
kafka_stop() { stop_pid "$KAFKA_PID"; KAFKA_PID=""; rm -rf "$KAFKA_DIR"; }
# Socket buffers: Stellflow's broker and clients leave SO_SNDBUF/SO_RCVBUF to the OS (Linux
# autotuning, up to several MB on loopback), while Kafka ships fixed sizes (broker 100 KiB each way,
# producer send 128 KiB, consumer receive 64 KiB; ConsumerPerformance asks for 2 MiB). A fixed
# SO_RCVBUF turns autotuning off: measured here (2026-11-29, quiet machine, 1 GiB of 1 KiB records,
# batch 1 MiB, linger 5) Kafka produced 59-62 MB/s with its defaults and 114 MB/s with -1 (the OS
# default) on both ends. So both systems get the same policy, the OS default, unless
# KAFKA_SOCKET_DEFAULTS=1 asks for Kafka's shipped sizes.
if [ "${KAFKA_SOCKET_DEFAULTS:-0}" = 1 ]; then
  KAFKA_BROKER_SOCKET_PROPS="" KAFKA_PRODUCER_SOCKET_PROPS="" KAFKA_CONSUMER_SOCKET_ARGS=""
else
  KAFKA_BROKER_SOCKET_PROPS=$'socket.send.buffer.bytes=-1\nsocket.receive.buffer.bytes=-1'
  KAFKA_PRODUCER_SOCKET_PROPS="send.buffer.bytes=-1 receive.buffer.bytes=-1"
  KAFKA_CONSUMER_SOCKET_ARGS="--socket-buffer-size -1"
fi
# Consumers: both fetch the same bytes per partition and round trip (max.partition.fetch.bytes;
# ConsumerPerformance --fetch-size): Stellflow's client default, 4 MiB (Kafka's default is 1 MiB).
FETCH_BYTES=${FETCH_BYTES:-4194304}
# Payloads: without --payload-file Kafka's ProducerPerformance draws record-size random numbers for
# EVERY record (RandomGenerator.nextInt per byte: 23% of the tool's CPU in an async-profiler profile
# here, ~4 s per GiB of 1 KiB records on these shared cores), while ours sends one pre-made random
# value. Kafka gets pre-made random values too: a file of random A-Z lines of exactly record-size
# bytes, one of which the tool picks per record (no compression on either side, so the bytes do not
# matter, only that neither tool spends CPU making them).
kafka_payload_file() { # record_size -> path
  local f=$WORK/payload-$1.txt
  if [ ! -f "$f" ]; then
    local lines=$(( 1048576 / $1 )); [ "$lines" -le 1000 ] || lines=1000; [ "$lines" -ge 16 ] || lines=16
    head -c $(( $1 * lines )) /dev/urandom | LC_ALL=C tr '\000-\377' 'A-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-ZA-Z' \
      | fold -w "$1" >"$f"
  fi
  echo "$f"
}
kafka_tool() { # class args...
  local cls=$1; shift
  "$JAVA_HOME/bin/java" $CLIENT_HEAP -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" \
    -cp "$KAFKA_LIB/*" "org.apache.kafka.tools.$cls" "$@"
}
kafka_topic() { # name partitions
  kafka_tool TopicCommand --bootstrap-server "$KAFKA_BS" --create --topic "$1" --partitions "$2" \
    --replication-factor 1 >/dev/null
}

# --- one case --------------------------------------------------------------------------------------
# run_case system kind case run topic record_size batch partitions acks linger throughput num transport
# Produce cases also read CASE_PAYLOAD_FILE (values from this file, one per line, on both systems,
# instead of random ones of record_size) and CASE_PRODUCER_PROPS (more k=v producer properties on
# both, e.g. compression.type=lz4): set them for one call (perf/lab-compression.sh).
# Produce and latency cases set enable.idempotence on both systems, so neither runs on its default:
# true with acks=-1 (both producers' default), false with acks 0 or 1 (what Kafka's producer falls back
# to then); CASE_IDEMPOTENCE=false for one call measures acks=-1 without it (issue #20's pair).
run_case() {
  local system=$1 kind=$2 name=$3 run=$4 topic=$5 size=$6 batch=$7 parts=$8 acks=$9 linger=${10} tput=${11} num=${12} transport=${13}
  local pid out=$WORK/case.out before after format client_before client_after warmup=0 idem=-
  if [ -n "$CASES_RE" ] && ! [[ "$name" =~ $CASES_RE ]]; then return 0; fi
  if [ "$kind" != consume ]; then
    idem=${CASE_IDEMPOTENCE:-$([ "$acks" = -1 ] || [ "$acks" = all ] && echo true || echo false)}
  fi
  if [ "$kind" = latency ] && [ "$tput" -gt 0 ]; then
    warmup=$(( tput * LATENCY_WARMUP_S )); num=$(( num + warmup ))
  fi
  # PRODUCE_WARMUP_MB: each produce case first sends this many MB the same way, left out of the
  # result by both tools (--warmup-records), so the throughput is the load tools' steady state
  # rather than their JVM's first seconds (default 0: the cases as the issue defines them).
  if [ "$kind" = produce ] && [ "${PRODUCE_WARMUP_MB:-0}" -gt 0 ]; then
    warmup=$(( PRODUCE_WARMUP_MB * 1048576 / size )); num=$(( num + warmup ))
  fi
  if [ "$system" = stellflow ]; then pid=${SF_PIDS:-$SF_PID}; else pid=${KAFKA_PIDS:-$KAFKA_PID}; fi
  top_up_page_cache
  # shellcheck disable=SC2086
  before=$(cpu_ticks $pid)
  children_cpu_ms; client_before=$CHILD_CPU_MS
  set +e
  if [ "$system" = stellflow ] && [ "$kind" = consume ]; then
    STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" consume --bootstrap-server "$SF_BS" \
      --topic "$topic" --num-records "$num" --timeout-ms 20000 --json --name "$name" \
      --consumer-props max.partition.fetch.bytes="$FETCH_BYTES" >"$out" 2>"$WORK/tool.log"
    format=stellflow
  elif [ "$system" = stellflow ]; then
    STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
      --topic "$topic" --num-records "$num" --record-size "$size" --throughput "$tput" --json --name "$name" \
      --latency-from "$LATENCY_FROM" --warmup-records "$warmup" ${CASE_PAYLOAD_FILE:+--payload-file "$CASE_PAYLOAD_FILE"} \
      --producer-props acks="$acks" enable.idempotence="$idem" batch.size="$batch" linger.ms="$linger" ${CASE_PRODUCER_PROPS:-} \
      >"$out" 2>"$WORK/tool.log"
    format=stellflow
  elif [ "$kind" = consume ]; then
    # shellcheck disable=SC2086
    kafka_tool ConsumerPerformance --bootstrap-server "$KAFKA_BS" --topic "$topic" --num-records "$num" \
      --timeout 20000 --group "perf-$RANDOM$RANDOM" --fetch-size "$FETCH_BYTES" $KAFKA_CONSUMER_SOCKET_ARGS \
      >"$out" 2>"$WORK/tool.log"
    format=kafka-consumer
  else
    # shellcheck disable=SC2086
    kafka_tool ProducerPerformance --topic "$topic" --num-records "$num" --payload-file "${CASE_PAYLOAD_FILE:-$(kafka_payload_file "$size")}" \
      $([ "$warmup" -gt 0 ] && echo "--warmup-records $warmup") --throughput "$tput" --command-property bootstrap.servers="$KAFKA_BS" acks="$acks" batch.size="$batch" \
      linger.ms="$linger" enable.idempotence="$idem" $KAFKA_PRODUCER_SOCKET_PROPS ${CASE_PRODUCER_PROPS:-} >"$out" 2>"$WORK/tool.log"
    format=kafka-producer
  fi
  local rc=$?
  set -e
  children_cpu_ms; client_after=$CHILD_CPU_MS
  # shellcheck disable=SC2086
  after=$(cpu_ticks $pid)
  if [ "$rc" -ne 0 ]; then
    log "$system $name run $run: tool exited with $rc"; tail -n 5 "$WORK/tool.log" "$out" >&2 || true
    FAILED=$((FAILED + 1)); return 0
  fi
  # Every tool's own output is kept beside the results (what the parser read).
  mkdir -p "$OUT_DIR/tool-output"
  cp "$out" "$OUT_DIR/tool-output/$system-${name//\//_}-run$run.txt" 2>/dev/null || true
  lab add --cases "$CASES" --format "$format" --output "$out" --system "$system" --case "$name" --run "$run" \
    --kind "$kind" --transport "$transport" --record-size "$size" --batch-size "$batch" --partitions "$parts" \
    --acks "$acks" --idempotence "$idem" --cpu-ticks $((after - before)) --clk-tck "$CLK_TCK" \
    --client-cpu-ms $((client_after - client_before)) --warmup-records "$warmup" || FAILED=$((FAILED + 1))
}
FAILED=0

# adapter_check system source classpath: each Java source-file adapter of a system-neutral bench
# (the group and transaction labs) is compiled once up front (javac into the work dir, thrown away;
# the cases still launch the source file): one that does not compile against its system's client,
# such as ours before the client's API for those cases is built, is reported once and the system is
# added to SKIP_SYSTEMS, whose cases are then counted as failed while the other system's still run.
adapter_check() {
  if ! "$JAVA_HOME/bin/javac" -nowarn -d "$WORK/adapter-$1-$(basename "$2" .java)" -cp "$3" "$2" \
       >"$WORK/adapter-$1.log" 2>&1; then
    log "$1: $2 does not compile against this build, its cases are skipped and counted as failed:"
    grep -m 3 -A 2 'error:' "$WORK/adapter-$1.log" >&2 || true
    SKIP_SYSTEMS+=" $1"
  fi
}

# --- machine limits ---------------------------------------------------------------------------------
ensure_tool() {
  command -v "$1" >/dev/null && return 0
  log "installing $1 with apt-get"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1"; } >"$WORK/apt.log" 2>&1 \
    || { log "could not install $1"; return 1; }
}
measure_limits() {
  [ -n "$LIMITS" ] || return 0
  if ensure_tool iperf3; then
    local p; p=$(free_port)
    iperf3 -s -B 127.0.0.1 -p "$p" -1 >"$WORK/iperf3-server.log" 2>&1 &
    local ipid=$!
    sleep 0.5
    iperf3 -c 127.0.0.1 -p "$p" -t 5 -J >"$OUT_DIR/iperf3.json" 2>"$WORK/iperf3.log" || log "iperf3 failed"
    stop_pid "$ipid"
  fi
  if ensure_tool fio; then
    fio --name=seqwrite --directory="$WORK" --rw=write --bs=1M --size="${FIO_SIZE:-1G}" --ioengine=psync \
      --end_fsync=1 --output-format=json >"$OUT_DIR/fio.json" 2>"$WORK/fio.log" || log "fio failed"
    rm -f "$WORK"/seqwrite*
  fi
}

# --- async-profiler (--profile) ------------------------------------------------------------------------
# Loads the async-profiler agent (Maven Central tools.profiler:async-profiler, linux-x64 jar, which
# carries libasyncProfiler.so) into the running broker through the JDK attach API.
AP_LIB=""
profiler_lib() {
  local v=${ASYNC_PROFILER_VERSION:-4.2}
  local dir=${XDG_CACHE_HOME:-$HOME/.cache}/stellflow/async-profiler-$v
  if [ ! -f "$dir/libasyncProfiler.so" ]; then
    ./mvnw -q -B dependency:get -Dartifact="tools.profiler:async-profiler:$v:jar:linux-x64" >&2
    mkdir -p "$dir"
    unzip -o -j -q "$HOME/.m2/repository/tools/profiler/async-profiler/$v/async-profiler-$v-linux-x64.jar" \
      linux-x64/libasyncProfiler.so -d "$dir"
  fi
  AP_LIB=$dir/libasyncProfiler.so
}
profiler() { # pid command
  "$JAVA_HOME/bin/java" -cp "$PERF_CP" io.stellflow.perf.lab.ProfilerAttach "$1" "$AP_LIB" "$2"
}
# profile_case start_args html_name: profiles one extra (unrecorded) run of the 1 KiB acks=1 produce
# case (values from CASE_PAYLOAD_FILE and more producer properties from CASE_PRODUCER_PROPS when set), e.g. profile_case event=cpu,interval=1ms x-cpu.html or profile_case event=alloc,alloc=16k x-alloc.html
# (PROFILE_MB of 1 KiB records, default the smaller of 1024 and --data-mb).
PROFILE_MB=${PROFILE_MB:-$(( DATA_MB < 1024 ? DATA_MB : 1024 ))}
profile_case() {
  local file=$HOME_DIR/profiles/$2 topic=prof-$RANDOM
  mkdir -p "$HOME_DIR/profiles"
  sf_topic "$topic" 1
  top_up_page_cache
  profiler "$SF_PID" "start,$1"
  STELLFLOW_HEAP_OPTS=$CLIENT_HEAP "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$SF_BS" \
    --topic "$topic" --num-records $(( PROFILE_MB * 1024 )) --record-size 1024 --throughput -1 --json \
    ${CASE_PAYLOAD_FILE:+--payload-file "$CASE_PAYLOAD_FILE"} \
    --producer-props acks=1 batch.size=1048576 linger.ms=5 ${CASE_PRODUCER_PROPS:-} >"$WORK/profile.out" 2>&1 || true
  # The collapsed stacks (beside the results) are for grepping; the HTML is the flame graph.
  profiler "$SF_PID" "dump,collapsed,file=$OUT_DIR/${2%.html}.collapsed"
  profiler "$SF_PID" "stop,file=$file"
  log "flame graph: profiles/$2 ($(cat "$WORK/profile.out" | tail -n 1))"
}

# profile_kafka_case start_args html_name: the same case against the Kafka broker (--vs-kafka), with
# Kafka's ProducerPerformance, so the two brokers' profiles can be compared frame by frame.
profile_kafka_case() {
  local file=$HOME_DIR/profiles/$2 topic=prof-$RANDOM
  mkdir -p "$HOME_DIR/profiles"
  kafka_topic "$topic" 1
  top_up_page_cache
  profiler "$KAFKA_PID" "start,$1"
  # shellcheck disable=SC2086
  kafka_tool ProducerPerformance --topic "$topic" --num-records $(( PROFILE_MB * 1024 )) \
    --payload-file "${CASE_PAYLOAD_FILE:-$(kafka_payload_file 1024)}" --throughput -1 --command-property bootstrap.servers="$KAFKA_BS" \
    acks=1 batch.size=1048576 linger.ms=5 $KAFKA_PRODUCER_SOCKET_PROPS ${CASE_PRODUCER_PROPS:-} >"$WORK/profile.out" 2>&1 || true
  profiler "$KAFKA_PID" "dump,collapsed,file=$OUT_DIR/${2%.html}.collapsed"
  profiler "$KAFKA_PID" "stop,file=$file"
  log "flame graph: profiles/$2 ($(tail -n 1 "$WORK/profile.out"))"
}

. "$HOME_DIR/perf/lab-$MODE.sh"
