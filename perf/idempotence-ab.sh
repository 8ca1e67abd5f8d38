#!/usr/bin/env bash
# Idempotence cost on our broker alone (issue #20's target: idempotent produce within 3% of
# non-idempotent produce): many idempotent / non-idempotent pairs against one broker, so the ratio
# has a confidence interval instead of the one pair per run of perf/run-matrix.sh --vs-kafka.
#   perf/run-matrix.sh --idempotence-ab [--rounds N] [--data-mb MB] [--warmup-mb MB] [--keep-data]
#                                       [--no-aot] [--concurrent [--duration-s S]] [--data-dir DIR]
#   perf/run-matrix.sh --idempotence-ab --report DIR [--keep-data] [--no-aot]
#                                       recomputes DIR/results.md from DIR/runs.tsv (an interrupted run;
#                                       a --concurrent run's mode and duration are kept in DIR)
# Refuses to start when the disk of the data dir has less room than the run writes (with
# --keep-data: every round's 2 x DATA_MB plus the warm-up, and a tenth more).
# Trains a JDK AOT cache for the broker first (bin/stellflow-aot-train.sh --mb 256, as --vs-kafka
# does; --no-aot: none), so the broker compiles its produce paths early, as the lab's brokers do.
# Starts one fresh broker (data under a temporary dir), produces WARMUP_MB (default 2048) of 1 KiB
# records unmeasured (both modes in turn), then N rounds (default 12) of the pair: DATA_MB (default 1024) of 1 KiB records
# with acks=-1, batch 1 MiB, linger 5 ms, one partition, enable.idempotence=true and =false, each to
# a fresh topic, the idempotent one first in odd rounds and second in even ones. By default each
# topic is deleted after its run and the page cache synced, so no run pays an earlier run's
# writeback; --keep-data keeps them (as the --vs-kafka cases do, where about 10 GiB pile up per run).
# Reports per run MB/s, broker CPU (utime+stime of the broker process from /proc around the run, ms
# per GiB), the part of it in the JIT compiler threads, and the load tool's CPU (user+sys, ms per
# GiB); per round the ratio idempotent /
# non-idempotent MB/s; the median of the rounds' ratios with a bootstrap 95% interval (5,000
# resamples, fixed seed), and the medians per mode. Run it on a quiet machine.
# --concurrent: each round runs the two modes at the same time instead of one after the other, two
# producer JVMs started together (which one first alternates by round), each sending to its own topic
# for --duration-s (default 3), its first 100,000 records (start-up) left out of its MB/s. The
# machine's noise (other tenants) then falls on both sides of a pair alike. The broker runs two
# append agents (num.append.agents=2), one per topic, so each mode's appends run on their own thread:
# a mode that costs more CPU per byte, in the client or the broker, or stalls, gets the smaller share
# (with one agent both partitions are served in turn and a broker-side cost slows both). A round
# writes about 2.3 GB; runs.tsv records the peak Dirty of /proc/meminfo per round, to check it stays
# below where the kernel starts throttling writers (halfway between its 10% and 20% dirty limits of
# free and reclaimable memory), since throttling would share the disk out evenly and hide a
# difference. Broker CPU is then the round's; CPU per GiB divides by the measured bytes, so it
# includes start-up, the warm-up records and close. Besides the median and its bootstrap interval
# the report gives the geometric mean of the rounds' ratios with a t-interval of their logs.
# --data-dir DIR: the broker's log dir goes under DIR (default: the run's temporary dir), e.g. a
# tmpfs such as /dev/shm, which takes the disk and its writeback out of the comparison (the rounds
# then need RAM for what they write; topics are deleted after each round unless --keep-data).
# Output: perf/results/<timestamp>-idempotence/{runs.tsv,results.md} and the table on stdout.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$HOME_DIR"
ROUNDS=12 DATA_MB=1024 WARMUP_MB=2048 KEEP_DATA="" AOT=yes REPORT_DIR="" CONCURRENT="" DURATION_S=3 DATA_PARENT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir)
      [ $# -ge 2 ] && [ -d "$2" ] || { echo "--data-dir needs an existing directory" >&2; exit 2; }
      DATA_PARENT=$(realpath "$2"); shift ;;
    --rounds|--data-mb|--warmup-mb|--duration-s)
      [ $# -ge 2 ] || { echo "$1 needs a value (see --help)" >&2; exit 2; }
      case "$1" in
        --rounds) ROUNDS=$2 ;; --data-mb) DATA_MB=$2 ;; --warmup-mb) WARMUP_MB=$2 ;; --duration-s) DURATION_S=$2 ;;
      esac
      shift ;;
    --keep-data) KEEP_DATA=yes ;;
    --no-aot) AOT="" ;;
    --concurrent) CONCURRENT=yes ;;
    --report)
      [ $# -ge 2 ] && [ -f "$2/runs.tsv" ] || { echo "--report needs a results dir with runs.tsv" >&2; exit 2; }
      REPORT_DIR=$2; shift ;;
    -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[idempotence-ab] %s\n' "$*" >&2; }
for n in "$ROUNDS" "$DATA_MB" "$WARMUP_MB" "$DURATION_S"; do
  [[ "$n" =~ ^[0-9]{1,6}$ ]] || { log "not a whole number below 1000000: $n"; exit 2; }
done
# 08 is eight, not octal
ROUNDS=$(( 10#$ROUNDS )) DATA_MB=$(( 10#$DATA_MB )) WARMUP_MB=$(( 10#$WARMUP_MB )) DURATION_S=$(( 10#$DURATION_S ))
[ "$ROUNDS" -ge 1 ] && [ "$DATA_MB" -ge 1 ] && [ "$DURATION_S" -ge 1 ] \
  || { log "--rounds, --data-mb and --duration-s must be at least 1"; exit 2; }

# shellcheck source=perf/build-once.sh
. "$HOME_DIR/perf/build-once.sh"
export STELLFLOW_AOT=off

# report DIR: per round idem / noidem from DIR/runs.tsv, median and bootstrap interval of the median
# (awk, seeded) into DIR/results.md.
report() {
  awk -F'\t' -v rounds="$ROUNDS" -v keep="${KEEP_DATA:-no}" -v data_mb="$DATA_MB" -v stamp="$STAMP" -v failed="$FAILED" -v aot="${AOT:-no}" \
    -v conc="${CONCURRENT:-no}" -v duration_s="$DURATION_S" '
  function median(a, n,   i, j, t, b) {
    for (i = 1; i <= n; i++) b[i] = a[i]
    for (i = 2; i <= n; i++) { t = b[i]; for (j = i - 1; j >= 1 && b[j] > t; j--) b[j + 1] = b[j]; b[j + 1] = t }
    return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
  }
  NR > 1 && NF >= 7 { dirty_known = 1; if ($7 > dirty) dirty = $7 }
  NR > 1 { mbs[$1, $2] = $3; bro[$2, ++cnt[$2]] = $4; cli[$2, cnt[$2]] = $5; thr[$2, cnt[$2]] = $3; jit[$2, cnt[$2]] = $6 }
  END {
    n = 0
    for (r = 1; r <= rounds; r++) if (((r, "idem") in mbs) && ((r, "noidem") in mbs) && mbs[r, "noidem"] > 0) ratio[++n] = mbs[r, "idem"] / mbs[r, "noidem"]
    if (n == 0) { print "no complete round" > "/dev/stderr"; exit 1 }
    m = median(ratio, n)
    srand(20261206)
    for (s = 1; s <= 5000; s++) { for (i = 1; i <= n; i++) pick[i] = ratio[int(rand() * n) + 1]; boot[s] = median(pick, n) }
    for (i = 2; i <= 5000; i++) { t = boot[i]; for (j = i - 1; j >= 1 && boot[j] > t; j--) boot[j + 1] = boot[j]; boot[j + 1] = t }
    below = 0; line = ""
    for (i = 1; i <= n; i++) { line = line sprintf(" %.2f", ratio[i]); if (ratio[i] < 0.97) below++ }
    sl = 0; for (i = 1; i <= n; i++) sl += log(ratio[i]); ml = sl / n
    ss = 0; for (i = 1; i <= n; i++) ss += (log(ratio[i]) - ml) ^ 2
    df = n - 1; z = 1.96
    tq = df > 0 ? z + (z ^ 3 + z) / (4 * df) + (5 * z ^ 5 + 16 * z ^ 3 + 3 * z) / (96 * df ^ 2) : 0
    hw = df > 0 ? tq * sqrt(ss / df / n) : 0
    if (conc == "yes") {
      printf "# Idempotence on our broker: %d concurrent rounds of %d s, %s\n\n", n, duration_s, stamp
      printf "perf/run-matrix.sh --idempotence-ab --concurrent --rounds %d --duration-s %d%s%s (both modes at once, one producer JVM each; topics %s; broker %s)\n\n", rounds, duration_s, keep == "yes" ? " --keep-data" : "", aot == "yes" ? "" : " --no-aot", keep == "yes" ? "kept" : "deleted and synced after each round", aot == "yes" ? "started from a JDK AOT cache" : "without an AOT cache"
    } else {
      printf "# Idempotence on our broker: %d rounds of %d MB, %s\n\n", n, data_mb, stamp
      printf "perf/run-matrix.sh --idempotence-ab --rounds %d --data-mb %d%s%s (topics %s; broker %s)\n\n", rounds, data_mb, keep == "yes" ? " --keep-data" : "", aot == "yes" ? "" : " --no-aot", keep == "yes" ? "kept" : "deleted and synced after each run", aot == "yes" ? "started from a JDK AOT cache" : "without an AOT cache"
    }
    printf "| mode | MB/s (median) | broker CPU ms/GiB (median%s) | of which JIT (median) | client CPU ms/GiB (median) |\n|---|---:|---:|---:|---:|\n", conc == "yes" ? "; the round'"'"'s, both modes together; with start-up, warm-up records and close over the measured bytes" : ""
    split("idem noidem", modes, " ")
    for (k = 1; k <= 2; k++) {
      md = modes[k]; c = cnt[md]
      for (i = 1; i <= c; i++) { x1[i] = thr[md, i]; x2[i] = bro[md, i]; x3[i] = cli[md, i]; x4[i] = jit[md, i] }
      printf "| %s | %.1f | %.0f | %.0f | %.0f |\n", md == "idem" ? "idempotent" : "non-idempotent", median(x1, c), median(x2, c), median(x4, c), median(x3, c)
    }
    printf "\nidempotent / non-idempotent MB/s per round:%s\n\n", line
    printf "**median %.3f**, bootstrap 95%% interval %.3f-%.3f; %d of %d rounds below 0.97 (issue #20: within 3%%)\n", m, boot[125], boot[4876], below, n
    if (conc == "yes" && dirty_known) printf "\nhighest Dirty (/proc/meminfo) seen during a round: %d MiB\n", dirty
    printf "\ngeometric mean %.3f, 95%% t-interval of the rounds'"'"' log ratios %.3f-%.3f\n", exp(ml), exp(ml - hw), exp(ml + hw)
    if (failed > 0) printf "\n%d run(s) failed (see the log); their rounds are left out\n", failed
    printf "\nThe interval resamples the rounds as if independent; a drift over the run (the broker still\ncompiling, the page cache filling) makes it too narrow. Seeded awk rand(): the same interval needs the\nsame awk.\n"
  }' "$1/runs.tsv" >"$1/results.md"
}
FAILED=0
if [ -n "$REPORT_DIR" ]; then
  ROUNDS=$(awk -F'\t' 'NR > 1 && $1 > m {m = $1} END {print m + 0}' "$REPORT_DIR/runs.tsv")
  STAMP="$(basename "$REPORT_DIR") (recomputed with --report from runs.tsv)"
  if [ -f "$REPORT_DIR/concurrent" ]; then
    CONCURRENT=yes
    DURATION_S=$(cat "$REPORT_DIR/concurrent")
    DURATION_S=${DURATION_S:-0} # 0: not recorded (8067f1a's marker was empty)
  fi
  report "$REPORT_DIR"
  cat "$REPORT_DIR/results.md"
  exit 0
fi

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT_DIR=$HOME_DIR/perf/results/$STAMP-idempotence
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stellflow-idem-ab.XXXXXX")
DATA=$WORK/data
[ -z "$DATA_PARENT" ] || DATA=$(mktemp -d "$DATA_PARENT/stellflow-idem-ab-data.XXXXXX")
mkdir -p "$DATA" # df below needs it
mkdir -p "$OUT_DIR"
NEED_MB=$(( 2 * DATA_MB + 256 ))
[ -z "$KEEP_DATA" ] || NEED_MB=$(( (2 * ROUNDS * DATA_MB + WARMUP_MB) * 11 / 10 ))
if [ -n "$CONCURRENT" ]; then # at most 1,000 MB/s per producer here
  NEED_MB=$(( 2 * DURATION_S * 1000 + 256 ))
  [ -z "$KEEP_DATA" ] || NEED_MB=$(( (2 * ROUNDS * DURATION_S * 1000 + WARMUP_MB) * 11 / 10 ))
fi
FREE_MB=$(df -Pm "$DATA" | awk 'NR == 2 {print $4}')
if [ "$FREE_MB" -lt "$NEED_MB" ]; then
  log "the disk of $DATA has $FREE_MB MB free, this run writes up to $NEED_MB MB: fewer --rounds, a smaller --data-mb, or no --keep-data"
  rmdir "$OUT_DIR" 2>/dev/null || true
  rm -rf "$WORK" "$DATA" "$DATA-metadata"
  exit 1
fi
BROKER_PID="" watcher=""
cleanup() {
  [ -z "$watcher" ] || kill "$watcher" 2>/dev/null || true
  if [ -n "$BROKER_PID" ]; then
    kill "$BROKER_PID" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$BROKER_PID" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$BROKER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK" "$DATA" "$DATA-metadata"
}
trap cleanup EXIT

port=""
for _ in $(seq 1 100); do
  cand=$(( 20000 + RANDOM % 12000 ))
  (exec 3<>"/dev/tcp/127.0.0.1/$cand") 2>/dev/null || { port=$cand; break; }
done
[ -n "$port" ] || { log "no free port"; exit 1; }
BS=127.0.0.1:$port
cat >"$WORK/server.properties" <<PROPS
broker.id=0
listeners=PLAINTEXT://$BS
log.dirs=$DATA
PROPS
[ -z "$CONCURRENT" ] || echo "num.append.agents=2" >>"$WORK/server.properties" # one per mode
AOT_ENV=(STELLFLOW_AOT=off)
if [ -n "$AOT" ]; then
  log "training the broker's JDK AOT cache (bin/stellflow-aot-train.sh --mb 256, not recorded) ..."
  "$HOME_DIR/bin/stellflow-aot-train.sh" --out "$WORK/broker.aot" --mb 256 >"$WORK/aot-train.log" 2>&1 \
    || { log "AOT training failed:"; tail -n 10 "$WORK/aot-train.log" >&2; exit 1; }
  AOT_ENV=(STELLFLOW_AOT=on STELLFLOW_AOT_CACHE="$WORK/broker.aot")
fi
env "${AOT_ENV[@]}" STELLFLOW_PID_DIR="$WORK" "$HOME_DIR/bin/stellflow-server.sh" "$WORK/server.properties" >"$WORK/broker.log" 2>&1 &
for _ in $(seq 1 120); do
  [ -s "$WORK/stellflow-server.pid" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.5
done
BROKER_PID=$(cat "$WORK/stellflow-server.pid" 2>/dev/null || true)
[ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null || { log "broker did not start"; tail -n 20 "$WORK/broker.log" >&2; exit 1; }
log "broker pid $BROKER_PID on $BS, data under $DATA"

create_topic() { # name: retried while the fresh broker registers
  for _ in $(seq 1 60); do
    "$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-server "$BS" --create --topic "$1" --partitions 1 >"$WORK/topic.log" 2>&1 && return 0
    sleep 0.5
  done
  log "topic $1 not created: $(tail -n 2 "$WORK/topic.log")"; return 1
}
broker_ticks() { # utime + stime of the broker process (exited threads included), in clock ticks
  sed 's/.*) //' /proc/"$BROKER_PID"/stat | awk '{print $12 + $13}'
}
jit_ticks() { # utime + stime of the broker's JIT compiler threads alive now, in clock ticks (HotSpot
  # starts and stops compiler threads as needed, so a thread that exits mid-run drops out: a lower bound)
  local t n sum=0
  for t in /proc/"$BROKER_PID"/task/*; do
    n=$(cat "$t/comm" 2>/dev/null) || continue
    case "$n" in C1\ CompilerThre*|C2\ CompilerThre*)
      sum=$(( sum + $(sed 's/.*) //' "$t/stat" 2>/dev/null | awk '{print $12 + $13}' || echo 0) )) ;;
    esac
  done
  echo "$sum"
}
TICK_MS=$(( 1000 / $(getconf CLK_TCK) ))
RECORDS=$(( DATA_MB * 1024 ))
# The workload of every run, warm-up included; only enable.idempotence differs between the modes.
WORKLOAD_PROPS=(acks=-1 batch.size=1048576 linger.ms=5)
mode_name() { [ "$1" = true ] && echo idem || echo noidem; } # idempotence(true|false) -> runs.tsv mode
produce() { # topic idempotence(true|false) -> "MB/s broker_ms jit_ms client_ms"
  local t0 t1 j0 j1
  t0=$(broker_ticks) j0=$(jit_ticks)
  /usr/bin/env time -o "$WORK/time.out" -f '%U %S' "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$BS" \
    --topic "$1" --num-records "$RECORDS" --record-size 1024 --json \
    --producer-props "${WORKLOAD_PROPS[@]}" enable.idempotence="$2" >"$WORK/produce.json" 2>"$WORK/produce.err" \
    || { log "produce to $1 failed: $(tail -n 3 "$WORK/produce.err")"; return 1; }
  t1=$(broker_ticks) j1=$(jit_ticks)
  printf '%s %d %d %s\n' "$(jq -r '.mb_per_s' "$WORK/produce.json")" $(( (t1 - t0) * TICK_MS )) \
    $(( j1 > j0 ? (j1 - j0) * TICK_MS : 0 )) "$(awk '{printf "%d", ($1 + $2) * 1000}' "$WORK/time.out")"
}
forget() { # topic: deleted and synced unless --keep-data
  [ -z "$KEEP_DATA" ] || return 0
  "$HOME_DIR/bin/stellflow-topics.sh" --bootstrap-server "$BS" --delete --topic "$1" >/dev/null 2>&1 || log "delete of $1 failed"
  sleep 1; sync
}
command -v jq >/dev/null || { log "needs jq (apt-get install -y jq)"; exit 1; }
[ -x /usr/bin/time ] || { log "needs GNU time (apt-get install -y time)"; exit 1; }

# Warm-up: both modes, each on half of WARMUP_MB, taking turns in four parts, so neither mode's
# code is compiled before the other's. The JIT column of runs.tsv shows how much compiling is left
# in the measured runs: after a warm-up of idempotent records only, a profile of such runs found the
# compiler threads with 1.6 times the samples in the non-idempotent runs.
if [ "$WARMUP_MB" -gt 0 ]; then
  for part in 1 2 3 4; do
    idem=$([ $(( part % 2 )) -eq 1 ] && echo true || echo false)
    create_topic "warmup-$part"
    "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$BS" --topic "warmup-$part" \
      --num-records $(( WARMUP_MB * 1024 / 4 )) --record-size 1024 \
      --producer-props "${WORKLOAD_PROPS[@]}" enable.idempotence="$idem" >>"$WORK/warmup.out" 2>&1 \
      || log "warm-up part $part failed"
    forget "warmup-$part"
  done
  log "warm-up: $WARMUP_MB MB, both modes (not recorded)"
fi

printf 'round\tmode\tmb_per_s\tbroker_ms_per_gib\tclient_ms_per_gib\tbroker_jit_ms_per_gib%s\n' \
  "$([ -z "$CONCURRENT" ] || printf '\tdirty_peak_mib')" >"$OUT_DIR/runs.tsv"
if [ -n "$CONCURRENT" ]; then
  echo "$DURATION_S" >"$OUT_DIR/concurrent" # read back by --report
  dirty_watch() { # peak Dirty (MiB) of /proc/meminfo until killed, written to $1 after each sample
    local peak=0 d
    while :; do
      d=$(awk '/^Dirty:/ {print int($2 / 1024)}' /proc/meminfo)
      [ "$d" -le "$peak" ] || { peak=$d; echo "$peak" >"$1"; }
      sleep 0.2
    done
  }
  # One producer per mode, started together; the one started first alternates by round. Each sends
  # for DURATION_S; broker CPU is the round's, per GiB of both modes' bytes.
  start_mode() { # idempotence(true|false) topic file-prefix
    /usr/bin/env time -o "$3.time" -f '%U %S' "$HOME_DIR/bin/stellflow-perf.sh" produce --bootstrap-server "$BS" \
      --topic "$2" --duration-ms $(( DURATION_S * 1000 )) --warmup-records 100000 --record-size 1024 --json \
      --producer-props "${WORKLOAD_PROPS[@]}" enable.idempotence="$1" >"$3.json" 2>"$3.err"
  }
  for round in $(seq 1 "$ROUNDS"); do
    order="true false"
    [ $(( round % 2 )) -eq 1 ] || order="false true"
    topics=""
    for idem in $order; do
      t=ab-$round-$(mode_name "$idem")
      create_topic "$t" && topics="$topics $t"
    done
    if [ "$(echo $topics | wc -w)" -ne 2 ]; then
      FAILED=$(( FAILED + 1 )); for t in $topics; do forget "$t"; done; continue
    fi
    echo 0 >"$WORK/dirty"
    dirty_watch "$WORK/dirty" &
    watcher=$!
    t0=$(broker_ticks) j0=$(jit_ticks)
    pids=""
    for idem in $order; do
      start_mode "$idem" "ab-$round-$(mode_name "$idem")" "$WORK/$idem" &
      pids="$pids $!"
    done
    ok=yes
    for p in $pids; do wait "$p" || ok=""; done
    t1=$(broker_ticks) j1=$(jit_ticks)
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    watcher=""
    dirty=$(cat "$WORK/dirty")
    if [ -z "$ok" ]; then
      log "round $round failed: $(tail -n 3 "$WORK/true.err" "$WORK/false.err")"
      FAILED=$(( FAILED + 1 ))
    else
      gib=$(jq -s '[.[].bytes] | add / 1073741824' "$WORK/true.json" "$WORK/false.json")
      for idem in true false; do
        mib=$(jq -r '.bytes / 1048576' "$WORK/$idem.json")
        printf '%d\t%s\t%s\t%d\t%d\t%d\t%d\n' "$round" "$(mode_name "$idem")" "$(jq -r '.mb_per_s' "$WORK/$idem.json")" \
          "$(awk -v t=$(( (t1 - t0) * TICK_MS )) -v g="$gib" 'BEGIN {printf "%d", t / g}')" \
          "$(awk -v m="$mib" '{printf "%d", ($1 + $2) * 1000 * 1024 / m}' "$WORK/$idem.time")" \
          "$(awk -v t=$(( j1 > j0 ? (j1 - j0) * TICK_MS : 0 )) -v g="$gib" 'BEGIN {printf "%d", t / g}')" \
          "$dirty" >>"$OUT_DIR/runs.tsv"
      done
      log "round $round: idempotent $(jq -r '.mb_per_s' "$WORK/true.json") MB/s, non-idempotent $(jq -r '.mb_per_s' "$WORK/false.json") MB/s, peak Dirty $dirty MiB"
    fi
    for t in $topics; do forget "$t"; done
  done
  report "$OUT_DIR"
  cat "$OUT_DIR/results.md"
  log "results: $OUT_DIR"
  exit 0
fi
for round in $(seq 1 "$ROUNDS"); do
  order="true false"
  [ $(( round % 2 )) -eq 1 ] || order="false true"
  for idem in $order; do
    topic=ab-$round-$(mode_name "$idem")
    if ! create_topic "$topic" || ! result=$(produce "$topic" "$idem"); then
      # A failed run leaves its round without a pair: the statistics skip incomplete rounds.
      FAILED=$(( FAILED + 1 ))
      forget "$topic"
      continue
    fi
    read -r mbs broker_ms jit_ms client_ms <<<"$result"
    printf '%d\t%s\t%s\t%d\t%d\t%d\n' "$round" "$(mode_name "$idem")" "$mbs" \
      $(( broker_ms * 1024 / DATA_MB )) $(( client_ms * 1024 / DATA_MB )) $(( jit_ms * 1024 / DATA_MB )) >>"$OUT_DIR/runs.tsv"
    log "round $round $([ "$idem" = true ] && echo idempotent || echo non-idempotent): $mbs MB/s"
    forget "$topic"
  done
done

report "$OUT_DIR"
cat "$OUT_DIR/results.md"
log "results: $OUT_DIR"
