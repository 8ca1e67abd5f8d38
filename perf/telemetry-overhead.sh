#!/usr/bin/env bash
# Telemetry overhead: produce throughput of one broker with metrics.exporter=none against the
# default instruments on the Prometheus exporter (metrics.exporter=prometheus, scraped every 5 s by
# this script like a Prometheus would), side by side in one run. Issue 7's target: on >= 97 % of off.
#   perf/run-matrix.sh --telemetry-overhead [--runs N] [--data-mb MB]
# Each run starts a fresh broker per mode (alternating none, prometheus), produces DATA_MB of 1 KiB
# records (acks=1, batch 1 MiB, linger 5 ms, 1 partition) with stellflow-perf, and stops it. Reports
# each run's MB/s, the medians per mode, and median(on) / median(off). Run it on a quiet machine.
# Output: perf/results/<timestamp>-telemetry/telemetry-overhead.json and a table on stdout.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$HOME_DIR"
RUNS=3 DATA_MB=512
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift ;;
    --data-mb) DATA_MB=$2; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[telemetry-overhead] %s\n' "$*" >&2; }
command -v jq >/dev/null || { log "needs jq (apt-get install -y jq)"; exit 1; }

need_build=""
for m in broker perf; do
  jar=$(ls "$m"/target/stellflow-*-SNAPSHOT.jar 2>/dev/null | grep -v -- '-tests' | head -n 1 || true)
  if [ -z "$jar" ] || [ ! -d "$m/target/lib" ] \
     || [ -n "$(find ./*/src ./*/pom.xml ./pom.xml -newer "$jar" -type f 2>/dev/null | head -n 1)" ]; then
    need_build=yes
  fi
done
if [ -n "$need_build" ]; then
  log "building the broker and the tools ..."
  ( flock 9; ./mvnw -q -B -Dmaven.test.skip=true -Dspotless.check.skip=true -pl perf -am package >&2 ) 9>"$HOME_DIR/.build.lock"
fi
export STELLFLOW_NO_BUILD=1
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

run_once() { # mode run
  local mode=$1 run=$2 dir=$WORK/$1-$2 line port mport
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
  "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "127.0.0.1:$port" --topic t \
    --num-records "$RECORDS" --record-size 1024 --json --name "produce-1KiB-$mode-$run" \
    --producer-props acks=1 batch.size=1048576 linger.ms=5 >"$dir/result.json" 2>"$dir/tool.log"
  [ -n "$SCRAPER_PID" ] && { kill "$SCRAPER_PID" 2>/dev/null || true; wait "$SCRAPER_PID" 2>/dev/null || true; SCRAPER_PID=""; }
  kill "$BROKER_PID"; wait "$BROKER_PID" 2>/dev/null || true; BROKER_PID=""
  jq -c --arg mode "$mode" --argjson run "$run" '. + {mode: $mode, run: $run}' "$dir/result.json" >>"$WORK/cases.jsonl"
  log "run $run $mode: $(jq -r '.mb_per_s // .mbPerS' "$dir/result.json") MB/s"
}

log "$RUNS run(s) x {none, prometheus}, $DATA_MB MB of 1 KiB records each; load: $(cut -d' ' -f1 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
  run_once none "$run"
  run_once prometheus "$run"
done
jq -s '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def mbs: (.mb_per_s // .mbPerS);
  { cases: ., 
    median_off_mb_s: ([.[] | select(.mode == "none") | mbs] | median),
    median_on_mb_s: ([.[] | select(.mode == "prometheus") | mbs] | median) }
  | . + { on_over_off: (.median_on_mb_s / .median_off_mb_s) }' "$WORK/cases.jsonl" >"$OUT_DIR/telemetry-overhead.json"
jq -r '"mode        run  MB/s", (.cases[] | "\(.mode | . + "           " | .[0:11]) \(.run)    \(.mb_per_s // .mbPerS)"),
  "median off (none):       \(.median_off_mb_s) MB/s",
  "median on (prometheus):  \(.median_on_mb_s) MB/s",
  "on / off:                \(.on_over_off * 1000 | round / 1000) (target >= 0.97)"' "$OUT_DIR/telemetry-overhead.json"
echo "results: $OUT_DIR/telemetry-overhead.json"
