#!/usr/bin/env bash
# Telemetry overhead: produce throughput of one broker with metrics.exporter=none against the
# default instruments on the Prometheus exporter (metrics.exporter=prometheus, scraped every 5 s by
# this script like a Prometheus would), side by side in one run. Issue 7's target: on >= 97 % of off.
#   perf/run-matrix.sh --telemetry-overhead [--runs N] [--data-mb MB] [--warmup-mb MB] [--profile LABEL]
# Each run starts a fresh broker per mode (order none, prometheus in odd runs and prometheus, none in
# even runs, so neither mode always goes first; default 5 runs), starts the scraper, produces
# WARMUP_MB (default 1024; 0 = none) of 1 KiB records to a warm-up topic unmeasured, then DATA_MB
# (default 1024, about two scrapes at 100 MB/s) to the
# measured topic (acks=1, batch 1 MiB, linger 5 ms, 1 partition) with stellflow-perf, stops the
# broker, deletes its data and syncs (so the next run does not pay this one's writeback). The
# warm-up is what makes the figure about throughput rather than start-up: a fresh broker JVM spends
# a large share of its first seconds compiling (JIT threads were half of a fresh broker's CPU in a
# 512 MiB run, still 30 % after 1 GiB) and the first scrape loads the exporter's classes;
# --warmup-mb 0 --data-mb 512 measures cold brokers as the first version of this script did.
# Reports each run's MB/s, broker CPU (utime+stime of the broker pid from /proc around the measured
# produce, in ms per GiB: less sensitive to other load than MB/s, though idle agents spin), the same
# per thread group (JIT compiler threads, the scrape's HTTP server threads, the rest), the JVM's JIT
# time and classes loaded so far (jcmd PerfCounter.print), the medians per mode, and median(on) /
# median(off). Run it on a quiet machine.
# --profile LABEL: after the measured runs, one more run per mode with async-profiler attached to the
# broker for CPU (ctimer: per-thread CPU timers, which need no perf_events and count every thread,
# JIT compiler threads included; interval PROFILE_INTERVAL, default 1ms) and one for allocations, written to
# profiles/telemetry-LABEL-{none,prometheus}-{cpu,alloc}.html; the collapsed stacks go beside the
# results, with the share of samples in telemetry frames (OpenTelemetry SDK, Prometheus exporter,
# io.stellflow.broker.telemetry, JDK HTTP server) in profile-summary.txt.
# Output: perf/results/<timestamp>-telemetry/telemetry-overhead.json and a table on stdout.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$HOME_DIR"
RUNS=5 DATA_MB=1024 WARMUP_MB=1024 PROFILE_LABEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift ;;
    --data-mb) DATA_MB=$2; shift ;;
    --warmup-mb) WARMUP_MB=$2; shift ;;
    --profile) PROFILE_LABEL=$2; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[telemetry-overhead] %s\n' "$*" >&2; }
command -v jq >/dev/null || { log "needs jq (apt-get install -y jq)"; exit 1; }

# shellcheck source=perf/build-once.sh
. "$HOME_DIR/perf/build-once.sh"
# shellcheck source=bin/find-java.sh
. "$HOME_DIR/bin/find-java.sh"
CLK_TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Per-thread CPU ticks of a process: "tid name ticks" lines (thread names without spaces).
thread_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    printf '%s %s %s\n' "${t##*/}" "$(tr ' ' '_' <"$t/comm")" "$(awk '{print $14 + $15}' "$t/stat")"
  done 2>/dev/null | sort
}
# CPU ms between two thread_ticks snapshots, by group: the JIT compilers, the scrape (the Prometheus
# HTTP server's threads), everything else; as a JSON object.
thread_groups() {
  join "$1" "$2" | awk -v hz="$CLK_TCK" '
    { d = ($5 - $3) * 1000 / hz
      if ($2 ~ /CompilerThre/) jit += d; else if ($2 ~ /^prometheus-http|^HTTP-Dispatcher/) scrape += d; else other += d }
    END { printf "{\"jit_thread_ms\": %d, \"scrape_thread_ms\": %d, \"other_thread_ms\": %d}", jit, scrape, other }'
}
# JIT compile time (ms) and classes loaded so far in a JVM, from its perf counters (jcmd): the
# one-time work a cold broker does during a run, which a short run does not amortize.
jvm_counters() {
  "$JAVA_HOME/bin/jcmd" "$1" PerfCounter.print 2>/dev/null | awk -F= '
    /^sun.os.hrt.frequency=/ { f = $2 } /^java.ci.totalTime=/ { t = $2 } /^sun.ci.totalCompiles=/ { n = $2 }
    /^java.cls.loadedClasses=/ { c = $2 }
    END { printf "{\"jit_ms\": %d, \"jit_compiles\": %d, \"classes_loaded\": %d}", (f > 0 ? t * 1000 / f : -1), n, c }'
}
export STELLFLOW_LOG_DIR="${STELLFLOW_LOG_DIR:-${TMPDIR:-/tmp}/stellflow-telemetry-logs}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/stellflow-telemetry.XXXXXX")
BROKER_PID="" SCRAPER_PID=""
cleanup() {
  for p in $SCRAPER_PID $BROKER_PID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
OUT_DIR=perf/results/$(date -u +%Y%m%d-%H%M%S)-telemetry
mkdir -p "$OUT_DIR"
RECORDS=$(( DATA_MB * 1048576 / 1024 ))
WARMUP_RECORDS=$(( WARMUP_MB * 1048576 / 1024 ))

# --- async-profiler (--profile): the agent jar from Maven Central, as perf/lab.sh loads it ---------
AP_LIB=""
if [ -n "$PROFILE_LABEL" ]; then
  v=${ASYNC_PROFILER_VERSION:-4.2}
  ap_dir=${XDG_CACHE_HOME:-$HOME/.cache}/stellflow/async-profiler-$v
  if [ ! -f "$ap_dir/libasyncProfiler.so" ]; then
    ./mvnw -q -B dependency:get -Dartifact="tools.profiler:async-profiler:$v:jar:linux-x64" >&2
    mkdir -p "$ap_dir"
    unzip -o -j -q "$HOME/.m2/repository/tools/profiler/async-profiler/$v/async-profiler-$v-linux-x64.jar" \
      linux-x64/libasyncProfiler.so -d "$ap_dir"
  fi
  AP_LIB=$ap_dir/libasyncProfiler.so
  PERF_JAR=$(ls perf/target/stellflow-perf-*-SNAPSHOT.jar | grep -v -- '-tests' | head -n 1)
  PERF_CP="$PERF_JAR:$HOME_DIR/perf/target/lib/*"
fi
profiler() { # pid command
  "$JAVA_HOME/bin/java" -cp "$PERF_CP" io.stellflow.perf.lab.ProfilerAttach "$1" "$AP_LIB" "$2"
}

# run_once mode run [profile-event]: a fresh broker, one produce; with an event (cpu or alloc) the
# run is profiled and not recorded.
run_once() {
  local mode=$1 run=$2 event=${3:-} dir=$WORK/$1-$2${3:+-$3} line port mport cpu0 cpu1 name counters groups
  mkdir -p "$dir"
  cat >"$dir/server.properties" <<PROPS
broker.id=0
listeners=PLAINTEXT://127.0.0.1:0
log.dirs=$dir/data
metrics.exporter=$mode
metrics.port=0
PROPS
  "$HOME_DIR/bin/stellflow-server.sh" "$dir/server.properties" >"$dir/broker.log" 2>&1 &
  BROKER_PID=$!
  for _ in $(seq 1 300); do grep -q BROKER_STARTED "$dir/broker.log" && break; sleep 0.2; done
  line=$(grep BROKER_STARTED "$dir/broker.log") || { cat "$dir/broker.log" >&2; exit 1; }
  port=$(sed -E 's/.*listener=PLAINTEXT:\/\/[^ ]*:([0-9]+) .*/\1/' <<<"$line")
  mport=$(sed -E 's/.*metricsPort=(-?[0-9]+).*/\1/' <<<"$line")
  "$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-server "127.0.0.1:$port" --create --topic t --partitions 1 >/dev/null
  if [ "$mport" -gt 0 ]; then
    ( while true; do curl -sf "http://127.0.0.1:$mport/metrics" >/dev/null || true; sleep 5; done ) &
    SCRAPER_PID=$!
  fi
  if [ "$WARMUP_RECORDS" -gt 0 ]; then
    "$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-server "127.0.0.1:$port" --create --topic warmup --partitions 1 >/dev/null
    "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "127.0.0.1:$port" --topic warmup \
      --num-records "$WARMUP_RECORDS" --record-size 1024 --json --name "warmup-$mode-$run" \
      --producer-props acks=1 batch.size=1048576 linger.ms=5 >"$dir/warmup.json" 2>"$dir/warmup.log"
  fi
  name="telemetry-$PROFILE_LABEL-$mode-$event"
  case "$event" in
    cpu) profiler "$BROKER_PID" "start,event=ctimer,interval=${PROFILE_INTERVAL:-1ms}" ;;
    alloc) profiler "$BROKER_PID" "start,event=alloc,alloc=16k" ;;
  esac
  cpu0=$(cpu_ticks "$BROKER_PID")
  thread_ticks "$BROKER_PID" >"$dir/threads0"
  "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "127.0.0.1:$port" --topic t \
    --num-records "$RECORDS" --record-size 1024 --json --name "produce-1KiB-$mode-$run" \
    --producer-props acks=1 batch.size=1048576 linger.ms=5 >"$dir/result.json" 2>"$dir/tool.log"
  cpu1=$(cpu_ticks "$BROKER_PID")
  thread_ticks "$BROKER_PID" >"$dir/threads1"
  counters=$(jvm_counters "$BROKER_PID")
  groups=$(thread_groups "$dir/threads0" "$dir/threads1")
  if [ -n "$event" ]; then
    profiler "$BROKER_PID" "dump,collapsed,file=$OUT_DIR/$name.collapsed"
    profiler "$BROKER_PID" "stop,file=$HOME_DIR/profiles/$name.html"
  fi
  [ -n "$SCRAPER_PID" ] && { kill "$SCRAPER_PID" 2>/dev/null || true; wait "$SCRAPER_PID" 2>/dev/null || true; SCRAPER_PID=""; }
  kill "$BROKER_PID"; wait "$BROKER_PID" 2>/dev/null || true; BROKER_PID=""
  rm -rf "$dir/data"
  sync
  if [ -n "$event" ]; then
    log "profiled $mode ($event): profiles/$name.html, $(jq -r '.mb_per_s // .mbPerS' "$dir/result.json") MB/s"
    return
  fi
  jq -c --arg mode "$mode" --argjson run "$run" --argjson cpu_ms "$(( (cpu1 - cpu0) * 1000 / CLK_TCK ))" \
    --argjson counters "$counters" --argjson groups "$groups" \
    '. + {mode: $mode, run: $run, broker_cpu_ms: $cpu_ms, broker_cpu_ms_per_gib: ($cpu_ms * 1073741824 / .bytes | round)} + $counters + $groups' \
    "$dir/result.json" >>"$WORK/cases.jsonl"
  log "run $run $mode: $(jq -r '.mb_per_s // .mbPerS' "$dir/result.json") MB/s, broker CPU $(( (cpu1 - cpu0) * 1000 / CLK_TCK )) ms $groups, JVM $counters"
}

# Share of samples whose stack holds a telemetry frame, from a collapsed file ("frame;...;frame count"):
# the scrape (JDK HTTP server thread: Prometheus exposition and the SDK's collection), the request path
# (recording on request, append and I/O threads), and for reference the JIT compiler threads.
telemetry_share() {
  awk '{ n = $NF; total += n
         if ($0 ~ /sun[\/.]net[\/.]httpserver/) scrape += n
         else if ($0 ~ /io[\/.]opentelemetry|io[\/.]prometheus|stellflow[\/.]broker[\/.]telemetry/) rec += n
         if ($0 ~ /CompileBroker/) jit += n }
       END { if (total == 0) total = 1
             printf "%d samples: telemetry %.2f %% (scrape %.2f %%, request path %.2f %%); JIT compiler threads %.1f %%",
               total, 100 * (scrape + rec) / total, 100 * scrape / total, 100 * rec / total, 100 * jit / total }' "$1"
}

log "$RUNS run(s) x {none, prometheus}, $DATA_MB MB of 1 KiB records each after $WARMUP_MB MB of warm-up; load: $(cut -d' ' -f1 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
  if [ $(( run % 2 )) -eq 1 ]; then
    run_once none "$run"
    run_once prometheus "$run"
  else
    run_once prometheus "$run"
    run_once none "$run"
  fi
done
if [ "$RUNS" -gt 0 ]; then
jq -s --argjson data_mb "$DATA_MB" --argjson warmup_mb "$WARMUP_MB" '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def mbs: (.mb_per_s // .mbPerS);
  { settings: { data_mb: $data_mb, warmup_mb: $warmup_mb, record_bytes: 1024, acks: 1, partitions: 1 },
    cases: .,
    median_off_mb_s: ([.[] | select(.mode == "none") | mbs] | median),
    median_on_mb_s: ([.[] | select(.mode == "prometheus") | mbs] | median),
    median_off_broker_cpu_ms_per_gib: ([.[] | select(.mode == "none") | .broker_cpu_ms_per_gib] | median),
    median_on_broker_cpu_ms_per_gib: ([.[] | select(.mode == "prometheus") | .broker_cpu_ms_per_gib] | median),
    median_off_jit_thread_ms: ([.[] | select(.mode == "none") | .jit_thread_ms] | median),
    median_on_jit_thread_ms: ([.[] | select(.mode == "prometheus") | .jit_thread_ms] | median),
    median_on_scrape_thread_ms: ([.[] | select(.mode == "prometheus") | .scrape_thread_ms] | median) }
  | . + { on_over_off: (.median_on_mb_s / .median_off_mb_s),
          cpu_on_over_off: (.median_on_broker_cpu_ms_per_gib / .median_off_broker_cpu_ms_per_gib) }' \
  "$WORK/cases.jsonl" >"$OUT_DIR/telemetry-overhead.json"
jq -r '"mode        run  MB/s      broker CPU ms/GiB  (JIT threads ms, scrape threads ms)",
  (.cases[] | "\(.mode | . + "           " | .[0:11]) \(.run)    \(.mb_per_s // .mbPerS | tostring | . + "          " | .[0:9]) \(.broker_cpu_ms_per_gib | tostring | . + "                  " | .[0:18]) (\(.jit_thread_ms), \(.scrape_thread_ms))"),
  "median off (none):       \(.median_off_mb_s) MB/s, broker CPU \(.median_off_broker_cpu_ms_per_gib) ms/GiB",
  "median on (prometheus):  \(.median_on_mb_s) MB/s, broker CPU \(.median_on_broker_cpu_ms_per_gib) ms/GiB",
  "on / off:                \(.on_over_off * 1000 | round / 1000) (target >= 0.97); broker CPU on / off \(.cpu_on_over_off * 1000 | round / 1000)"' \
  "$OUT_DIR/telemetry-overhead.json"
echo "results: $OUT_DIR/telemetry-overhead.json"
fi

if [ -n "$PROFILE_LABEL" ]; then
  mkdir -p "$HOME_DIR/profiles"
  for mode in none prometheus; do
    run_once "$mode" 0 cpu
    run_once "$mode" 0 alloc
  done
  for f in "$OUT_DIR"/telemetry-"$PROFILE_LABEL"-*.collapsed; do
    echo "$(basename "$f" .collapsed): $(telemetry_share "$f")"
  done | tee "$OUT_DIR/profile-summary.txt"
fi
