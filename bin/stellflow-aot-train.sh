#!/usr/bin/env bash
# Trains a JDK AOT cache for the broker (JEP 483 class loading and linking, JEP 515 method profiles;
# JDK 25 -XX:AOTCacheOutput, JEP 514): starts a throwaway single-node broker on 127.0.0.1 with the
# cache being recorded, drives a produce and fetch workload through it with stellflow-perf, stops it
# (the JVM writes the cache as it exits), and keeps the cache once a second broker has opened it
# cleanly. bin/stellflow-server.sh then starts brokers from it: classes come loaded and linked, and
# the hot produce and fetch methods compile with the recorded profiles early instead of after
# thousands of requests, so a restarted broker spends less of its first minutes of traffic compiling
# (docs/operations.md, "JVM flags and the broker's AOT cache").
#
# Usage: bin/stellflow-aot-train.sh [--out FILE] [--mb MB] (--version: the release, --help: this text)
#   --out        cache file (default broker/target/stellflow-broker.aot, where the server launcher
#                looks; it belongs to the jars of this build and is ignored once they change)
#   --mb         MB sent by each of the four produce runs (default 256)
# The workload: 1 KiB and 16 KiB records with acks 1 and -1 (batch 1 MiB, linger 5 ms), then a fetch
# of the 1 KiB topic from the start. Not in it: a fixed-rate run with linger 0 (a request per record
# or few). Trained with one, the cache made later 1 KiB bulk cases compile for 0.8-1.4 s of CPU each,
# against 0.0-0.2 s without (docs/performance.md, "JDK AOT caches for both brokers"). To train on real traffic instead,
# start a broker with STELLFLOW_AOT=off STELLFLOW_OPTS=-XX:AOTCacheOutput=FILE, stop it afterwards.
# Other JVM flags in STELLFLOW_OPTS and STELLFLOW_HEAP_OPTS apply to the training and checking brokers
# too: train with the flags the brokers run with, or the JVM may refuse the cache.
# Exit status: 0 with the cache written; 1 if the broker or a run failed (the old cache is kept);
# 2 for a bad argument.
set -euo pipefail
home=$(cd "$(dirname "$0")/.." && pwd)
out=$home/broker/target/stellflow-broker.aot mb=256
while [ $# -gt 0 ]; do
  case $1 in
    --out | --mb)
      [ $# -ge 2 ] || { echo "$1 needs a value (see --help)" >&2; exit 2; }
      if [ "$1" = --out ]; then out=$2; else mb=$2; fi
      shift ;;
    -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --version) exec "$home/bin/_version.sh" ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
log() { echo "stellflow-aot-train: $*" >&2; }
case $mb in '' | *[!0-9]*) log "--mb must be a whole number of MB"; exit 2 ;; esac
broker_opts=${STELLFLOW_OPTS:-} # the brokers' extra JVM flags; the tools below run without them
unset STELLFLOW_OPTS
work=$(mktemp -d "${TMPDIR:-/tmp}/stellflow-aot.XXXXXX")
broker_pid=""
# On an interrupt: the training JVM's children too. A JDK 25 JVM with -XX:AOTCacheOutput writes the
# cache as it exits by starting a second JVM (the assembly phase, JEP 514), which would otherwise
# outlive the script and write into the removed work dir.
cleanup() {
  if [ -n "$broker_pid" ]; then
    pkill -9 -P "$broker_pid" 2>/dev/null || true
    kill -9 "$broker_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# start_broker name [env...]: a single-node broker on a free port with its data under $work/name, in
# the background; sets port and broker_pid once the port is open.
start_broker() {
  local name=$1 cand i
  shift
  port=""
  for _ in $(seq 1 100); do
    cand=$((20000 + RANDOM % 12000)) # below the ephemeral range (see perf/run-matrix.sh)
    port_in_use "$cand" && continue
    port_in_use $((cand + 1)) || port_in_use $((cand + 2)) || { port=$cand; break; }
  done
  [ -n "$port" ] || { log "no free port"; return 1; }
  printf 'broker.id=0\nlisteners=PLAINTEXT://127.0.0.1:%s\nlog.dirs=%s\n' "$port" "$work/$name/data" >"$work/$name.properties"
  env STELLFLOW_LOG_DIR="$work/$name/logs" "$@" "$home/bin/stellflow-server.sh" "$work/$name.properties" >"$work/$name.out" 2>&1 &
  broker_pid=$!
  for i in $(seq 1 1200); do
    port_in_use "$port" && return 0
    kill -0 "$broker_pid" 2>/dev/null || { log "broker exited during start:"; tail -n 20 "$work/$name.out" >&2; return 1; }
    [ "$i" -lt 1200 ] || { log "broker did not open port $port within 120 s"; return 1; }
    sleep 0.1
  done
}

# Build first if anything is missing or stale: the perf module's build (-pl perf -am) covers the
# broker and the load generator, the tools module's the topics tool; the broker's port wait below
# must not include a build.
"$home/bin/stellflow-perf.sh" --version >/dev/null
"$home/bin/stellflow-topics.sh" --version >/dev/null
export STELLFLOW_NO_BUILD=1
# The JVM writes the cache when it exits; it is moved into place only after a broker opened it.
start_broker train STELLFLOW_AOT=off STELLFLOW_OPTS="$broker_opts -XX:AOTCacheOutput=$work/broker.aot"
bs=127.0.0.1:$port
topic() { # name: retried while the fresh broker registers (INVALID_REPLICATION_FACTOR before that)
  for _ in $(seq 1 60); do
    "$home/bin/stellflow-topics.sh" --bootstrap-server "$bs" --create --topic "$1" --partitions 1 >"$work/topic.out" 2>&1 && return 0
    grep -q INVALID_REPLICATION_FACTOR "$work/topic.out" || break
    sleep 0.5
  done
  log "topic $1 not created: $(tail -n 2 "$work/topic.out")"; return 1
}
perf() { "$home/bin/stellflow-perf.sh" "$@" >>"$work/perf.out" 2>&1 || { log "failed: stellflow-perf $*"; tail -n 5 "$work/perf.out" >&2; return 1; }; }
for size in 1024 16384; do
  for acks in 1 -1; do
    t=train-$size-acks$acks
    topic "$t"
    perf produce --bootstrap-server "$bs" --topic "$t" --num-records $((mb * 1048576 / size)) --record-size "$size" \
      --throughput -1 --json --producer-props acks="$acks" batch.size=1048576 linger.ms=5
  done
done
perf consume --bootstrap-server "$bs" --topic train-1024-acks1 --num-records $((mb * 1024)) --timeout-ms 20000 --json
log "workload done; stopping the broker (the JVM writes the cache as it exits)"
kill "$broker_pid"
wait "$broker_pid" || true
broker_pid=""
if [ ! -s "$work/broker.aot" ]; then
  log "no cache written; the broker's output:"; tail -n 20 "$work/train.out" >&2; exit 1
fi
# A cache the JVM cannot use is ignored with a warning: check that a broker opens this one cleanly.
start_broker verify STELLFLOW_AOT=on STELLFLOW_AOT_CACHE="$work/broker.aot" STELLFLOW_OPTS="$broker_opts -Xlog:aot=info"
kill "$broker_pid"
wait "$broker_pid" || true
broker_pid=""
if ! grep -q "Opened AOT cache" "$work/verify.out" || grep -Eq '\[(warning|error) *\]\[(aot|cds)' "$work/verify.out"; then
  log "a broker did not open the new cache cleanly:"; grep -E '\[aot' "$work/verify.out" | grep -v '\[info' | head -n 10 >&2; exit 1
fi
mkdir -p "$(dirname "$out")"
mv "$work/broker.aot" "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
log "wrote $out ($(($(stat -c %s "$out") / 1048576)) MB); a broker started from it"
