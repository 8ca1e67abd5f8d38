#!/usr/bin/env bash
# Stellflow perf matrix.
#   perf/run-matrix.sh --quick            the short main job (below; CI runs it)
#   perf/run-matrix.sh [--small] ...      the matrix, --vs-kafka, --cluster3 and --groups: see perf/lab.sh --help
#   perf/run-matrix.sh --telemetry-overhead [--runs N] [--data-mb MB] [--warmup-mb MB] [--profile LABEL]
#                                         produce throughput with metrics.exporter=none vs prometheus,
#                                         side by side (perf/telemetry-overhead.sh)
#   perf/run-matrix.sh --idempotence-ab [--rounds N] [--data-mb MB] [--warmup-mb MB] [--keep-data]
#                                       [--no-aot] [--concurrent [--duration-s S]] [--report DIR]
#                                         idempotent / non-idempotent produce pairs on one broker,
#                                         one after the other or (--concurrent) at the same time,
#                                         median ratio with a bootstrap interval (perf/idempotence-ab.sh)
# --quick:
# 1. Builds the broker, tools and perf jars once if missing or stale (./mvnw -q -DskipTests -pl tools,perf -am package), so the launchers
#    below never build.
# 2. Starts a fresh broker on 127.0.0.1, a free port and a temporary data dir (removed on exit).
# 3. (a) Streams a real text file of several MB (JDK legal notices, licenses, docs of this machine)
#        through the console producer and back through the console consumer on a 1-partition
#        topic and compares the bytes (cmp): PASS/FAIL.
#    (b) Runs a short produce then consume load (1 KiB records, acks=1) with the perf tool, then
#        5 s of produce at a fixed 20k records/s for latency without producer-side queueing.
# 4. Prints a table and writes perf/results/<timestamp>/results.json (one object per case) and its
#    charts (bin/stellflow-lab.sh charts <dir>: throughput.png, latency-p99.png, ...).
# Exit status: 0 when everything passed, non-zero on any failure.
set -euo pipefail
# No perf mode starts a broker from a JDK AOT cache a developer trained under broker/target, unless
# it says so (perf/lab.sh --vs-kafka trains its own): figures must not change unannounced.
export STELLFLOW_AOT=off

if [ "${1:-}" = "--telemetry-overhead" ]; then
  shift
  exec "$(dirname "${BASH_SOURCE[0]}")/telemetry-overhead.sh" "$@"
fi
if [ "${1:-}" = "--idempotence-ab" ]; then
  shift
  exec "$(dirname "${BASH_SOURCE[0]}")/idempotence-ab.sh" "$@"
fi
if [ "${1:-}" != "--quick" ]; then
  exec "$(dirname "${BASH_SOURCE[0]}")/lab.sh" "$@"
fi

HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$HOME_DIR"
# shellcheck source=bin/find-java.sh
. "$HOME_DIR/bin/find-java.sh"

RECORDS=${STELLFLOW_QUICK_RECORDS:-500000}
DURATION_MS=${STELLFLOW_QUICK_DURATION_MS:-15000}
TEXT_MB=${STELLFLOW_QUICK_TEXT_MB:-8}

log() { printf '[run-matrix] %s\n' "$*" >&2; }

# --- 1. build once -----------------------------------------------------------------------------
# shellcheck source=perf/build-once.sh
. "$HOME_DIR/perf/build-once.sh"

# --- 2. fresh broker ---------------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stellflow-quick.XXXXXX")
BROKER_PID=""
cleanup() {
  status=$?
  if [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
    kill "$BROKER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$BROKER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$BROKER_PID" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -f "$WORK/broker.log" ]; then
    log "broker log tail:"; tail -n 20 "$WORK/broker.log" >&2 || true
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=""
# Below the kernel's ephemeral range (32768-60999 by default): a port picked there can be taken as
# the source port of any outgoing connection between this check and the broker's bind. The broker's
# embedded controller takes the next two ports (raft, control plane), so all three must be free.
for _ in $(seq 1 50); do
  cand=$(( 20000 + RANDOM % 12000 ))
  if ! port_in_use "$cand" && ! port_in_use $((cand + 1)) && ! port_in_use $((cand + 2)); then PORT=$cand; break; fi
done
[ -n "$PORT" ] || { log "no free port found"; exit 1; }
BS="127.0.0.1:$PORT"

cat > "$WORK/server.properties" <<PROPS
broker.id=0
listeners=PLAINTEXT://127.0.0.1:$PORT
log.dirs=$WORK/data
PROPS
log "starting broker on $BS (data in $WORK/data)"
"$HOME_DIR/bin/stellflow-server.sh" "$WORK/server.properties" >"$WORK/broker.log" 2>&1 &
BROKER_PID=$!
for i in $(seq 1 300); do
  if port_in_use "$PORT"; then break; fi
  kill -0 "$BROKER_PID" 2>/dev/null || { log "broker exited during start"; exit 1; }
  [ "$i" -lt 300 ] || { log "broker did not open $BS within 30 s"; exit 1; }
  sleep 0.1
done

TOOLS="$HOME_DIR/bin"
"$TOOLS/stellflow-topics.sh" --bootstrap-server "$BS" --create --topic quick-text --partitions 1 >&2
"$TOOLS/stellflow-topics.sh" --bootstrap-server "$BS" --create --topic quick-perf --partitions 1 >&2

# --- 3a. byte-exact text round trip ------------------------------------------------------------
TEXT="$WORK/input.txt"
sources=()
[ -d "$JAVA_HOME/legal" ] && sources+=("$JAVA_HOME/legal")
[ -d /usr/share/common-licenses ] && sources+=(/usr/share/common-licenses)
[ -d /usr/share/doc ] && sources+=(/usr/share/doc)
[ -d "$HOME_DIR/docs" ] && sources+=("$HOME_DIR/docs")
[ "${#sources[@]}" -gt 0 ] || { log "no text sources found on this machine"; exit 1; }
find "${sources[@]}" -type f \( -name '*.md' -o -name '*.txt' -o -name 'copyright' -o -name 'LICENSE*' \
  -o -name 'NOTICE*' -o -name 'ADDITIONAL*' -o -name 'ASSEMBLY*' -o -path '*/common-licenses/*' \) \
  -size -2M 2>/dev/null | LC_ALL=C sort >"$WORK/sources.lst"
[ -s "$WORK/sources.lst" ] || { log "no text files found in ${sources[*]}"; exit 1; }
: >"$TEXT"
target=$(( TEXT_MB * 1024 * 1024 ))
while [ "$(stat -c %s "$TEXT")" -lt "$target" ]; do
  xargs -d '\n' cat <"$WORK/sources.lst" 2>/dev/null >>"$TEXT" || true
done
# Cut to the target size (the newline check below completes the last line).
head -c "$target" "$TEXT" >"$TEXT.cut"
mv "$TEXT.cut" "$TEXT"
# Records are lines: the file must end with a newline to come back byte for byte.
[ "$(tail -c 1 "$TEXT" | od -An -tx1 | tr -d ' ')" = "0a" ] || printf '\n' >>"$TEXT"
LINES=$(wc -l <"$TEXT")
SIZE=$(stat -c %s "$TEXT")
log "text round trip: $SIZE bytes, $LINES lines from $(wc -l <"$WORK/sources.lst") files"
t0=$(date +%s%N)
"$TOOLS/stellflow-console-producer.sh" --bootstrap-server "$BS" --topic quick-text --acks 1 \
  --linger-ms 5 --batch-size 65536 <"$TEXT"
"$TOOLS/stellflow-console-consumer.sh" --bootstrap-server "$BS" --topic quick-text --from-beginning \
  --max-messages "$LINES" --timeout-ms 10000 >"$WORK/output.txt"
t1=$(date +%s%N)
if cmp -s "$TEXT" "$WORK/output.txt"; then
  TEXT_RESULT=PASS
else
  TEXT_RESULT=FAIL
  cmp "$TEXT" "$WORK/output.txt" >&2 || true
fi
echo "text round trip ($SIZE bytes, $LINES lines, $(( (t1 - t0) / 1000000 )) ms): $TEXT_RESULT"

# --- 3b. produce then consume load ---------------------------------------------------------------
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT_DIR="$HOME_DIR/perf/results/$STAMP"
mkdir -p "$OUT_DIR"
RESULTS="$OUT_DIR/results.json"
"$TOOLS/stellflow-perf.sh" produce --bootstrap-server "$BS" --topic quick-perf --name produce-1KiB-acks1 \
  --record-size 1024 --num-records "$RECORDS" --duration-ms "$DURATION_MS" --throughput -1 \
  --producer-props acks=1 batch.size=65536 linger.ms=5 --results-file "$RESULTS"
"$TOOLS/stellflow-perf.sh" consume --bootstrap-server "$BS" --topic quick-perf --name consume-1KiB \
  --num-records "$RECORDS" --duration-ms "$DURATION_MS" --timeout-ms 5000 --results-file "$RESULTS"
# Latency at a fixed rate (the unthrottled case above measures queueing in the producer buffer).
"$TOOLS/stellflow-perf.sh" produce --bootstrap-server "$BS" --topic quick-perf --name produce-1KiB-acks1-20k/s \
  --record-size 1024 --duration-ms 5000 --throughput 20000 \
  --producer-props acks=1 batch.size=65536 linger.ms=1 --results-file "$RESULTS"

echo
"$TOOLS/stellflow-perf.sh" report --results-file "$RESULTS"
CHARTS=PASS
"$TOOLS/stellflow-lab.sh" charts "$OUT_DIR" || CHARTS=FAIL
echo "results: $RESULTS"
[ "$CHARTS" = PASS ] || { log "charts FAILED"; exit 1; }
[ "$TEXT_RESULT" = PASS ] || { log "text round trip FAILED"; exit 1; }
