#!/usr/bin/env bash
# Proves the dashboards and alert rules against a real Prometheus scraping a real broker:
#   1. installs Prometheus (Debian package) and jq if missing; never leaves the packaged service
#      running on its default port;
#   2. starts a broker (bin/stellflow-server.sh, temp config, ephemeral ports, diagnostic series on,
#      flushes and small segments so the storage panels have data; combined mode, so its embedded
#      controller's series are on the same endpoint), restarts it once so log load and metadata
#      snapshot load times are recorded, then starts two broker-only nodes (ids 1, 2) against its
#      embedded controller and creates a replicated topic (RF=3, min.insync.replicas=2) so the
#      replication series (follower fetches, ISR, lag) have data; resets a group's offsets (one
#      OffsetCommit) so the consumer groups series have data; runs a short produce + consume load
#      (bin/stellflow-perf.sh) on both topics whose clients export their metrics too;
#   3. starts Prometheus on 127.0.0.1 with grafana/prometheus.yml (target ports templated) and
#      grafana/alerts.yml, waits for scrapes;
#   4. evaluates every PromQL expression of every dashboard panel and alert rule through the HTTP
#      API: each must parse; each panel query must return data;
#   5. checks that no exported series carries a forbidden attribute (client id, connection id,
#      request id, group id, trace id, traffic tag) or an IP address;
#   6. stops that cluster and verifies the 3-controller/3-broker layout (config/cluster/'s shape:
#      three controller-only nodes, three broker-only nodes, an RF=3 topic) against a second
#      Prometheus with the shipped prometheus.yml's broker and controller jobs: all 6 targets up,
#      exactly 1 active controller, JVM series from both jobs, disk free/used per log dir and
#      partition/leader counts on every broker; then kills one broker and one controller and waits
#      for StellflowBrokerDown and StellflowControllerDown to go pending or firing (their `for:` is
#      cut to 10 s in this test copy of alerts.yml only) while the quorum keeps 1 active controller.
# Usage: grafana/verify.sh   (from anywhere; about 3 minutes). Exit 0 when everything holds.
# Environment (all optional; the defaults pick free ports as before):
#   VERIFY_PORT_MIN / VERIFY_PORT_MAX   range the free ports are picked from (20000 / 31999, below
#                                       the ephemeral range)
#   VERIFY_PROMETHEUS_PORT              port of the first Prometheus (default: a free one); the
#                                       3+3 layout's Prometheus takes the next port
#   VERIFY_LAYOUTS                      which layouts to verify: "combined 3x3" (default), "combined"
#                                       or "3x3"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
home=$(cd "$here/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stellflow-verify.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "verify: $*" >&2; }
fail() { echo "verify: FAILED: $*" >&2; exit 1; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }

# --- 1. tools ---------------------------------------------------------------------------------
need_apt=()
command -v prometheus >/dev/null || need_apt+=(prometheus)
command -v jq >/dev/null || need_apt+=(jq)
command -v curl >/dev/null || need_apt+=(curl)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing ${need_apt[*]} from Debian packages"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || fail "apt-get update (root or sudo needed)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null \
    || fail "apt-get install ${need_apt[*]}"
  if [[ " ${need_apt[*]} " == *" prometheus "* ]]; then
    # The package may start its own service on :9090; this script uses its own instance.
    if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
      as_root systemctl stop prometheus || true
      as_root systemctl disable prometheus >/dev/null 2>&1 || true
    elif command -v service >/dev/null; then
      as_root service prometheus stop >/dev/null 2>&1 || true
    fi
  fi
fi
command -v promtool >/dev/null || fail "promtool missing (it ships with the prometheus package)"

# --- 2. broker and load -----------------------------------------------------------------------
port_min=${VERIFY_PORT_MIN:-20000}  # below the ephemeral range (see perf/run-matrix.sh)
port_max=${VERIFY_PORT_MAX:-31999}
layouts=${VERIFY_LAYOUTS:-combined 3x3}
[ "$port_max" -gt "$port_min" ] 2>/dev/null || fail "VERIFY_PORT_MIN=$port_min, VERIFY_PORT_MAX=$port_max: not a range"
[[ " $layouts " == *" combined "* || " $layouts " == *" 3x3 "* ]] || fail "VERIFY_LAYOUTS=$layouts: want combined and/or 3x3"
taken_ports=" "
# pick_port VAR: sets VAR to a port nothing listens on, not picked before in this run (several are
# picked before any is bound). Not in a $(...) subshell, so the list and fail() work.
pick_port() {
  local _pick   # a name no caller passes as VAR (printf -v would set this local instead)
  for _ in $(seq 1 100); do
    _pick=$((port_min + RANDOM % (port_max - port_min + 1)))
    [[ "$taken_ports" == *" $_pick "* ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$_pick") 2>/dev/null; then
      taken_ports+="$_pick "
      printf -v "$1" '%s' "$_pick"
      return
    fi
  done
  fail "no free port in $port_min..$port_max"
}
# Stops every process started so far (the next layout starts from nothing).
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
# Polls a PromQL query until jq filter $2 on its result prints "true"; $3 seconds at most.
prom_until() {
  local q=$1 filter=$2 secs=$3 r
  for _ in $(seq 1 "$secs"); do
    r=$(curl -s "$api/query" --data-urlencode "query=$q")
    [ "$(jq -r "$filter" <<<"$r" 2>/dev/null)" = true ] && return 0
    sleep 1
  done
  echo "verify: after ${secs}s, $q -> $(jq -c '.data.result' <<<"$r" 2>/dev/null)" >&2
  return 1
}
start_prometheus() { # $1 config, $2 port, $3 tsdb dir
  prometheus --config.file="$1" --storage.tsdb.path="$3" \
    --web.listen-address="127.0.0.1:$2" >"$3.log" 2>&1 &
  pids+=($!)
  api="http://127.0.0.1:$2/api/v1"
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$2/-/ready" >/dev/null && break; sleep 0.3; done
  curl -sf "http://127.0.0.1:$2/-/ready" >/dev/null || { cat "$3.log" >&2; fail "prometheus did not start"; }
}
# The shipped target lists verify.sh and verify-3x3.sh rewrite: the broker job's, the controller
# job's, the clients'.
ship_brokers='\["127.0.0.1:9464"\]'
ship_controllers='\["127.0.0.1:9295", "127.0.0.1:9305", "127.0.0.1:9315"\]'
ship_clients='\["127.0.0.1:9465"\]'
for t in "$ship_brokers" "$ship_controllers" "$ship_clients"; do
  grep -q "targets: $t" "$here/prometheus.yml" || fail "grafana/prometheus.yml no longer has the target list $t"
done
if [[ " $layouts " != *" combined "* ]]; then
  log "VERIFY_LAYOUTS=$layouts: skipping the combined layout"
  source "$here/verify-3x3.sh"
  exit 0
fi
pick_port raft_port
pick_port ctl_port
cat >"$work/server.properties" <<PROPS
broker.id=0
controller.quorum.voters=0@127.0.0.1:$raft_port
controller.listener=127.0.0.1:$ctl_port
listeners=PLAINTEXT://127.0.0.1:0
log.dirs=$work/data
metrics.exporter=prometheus
metrics.port=0
metrics.diagnostic.enabled=true
metrics.topic.diagnostic.enabled=true
# Storage panels need flushes and segment rolls within the run.
log.flush.interval.messages=20000
log.segment.bytes=4194304
# Combined mode (the default): the embedded controller exports on the same endpoint. A metadata
# snapshot within the first entries, so the restart below loads one (snapshot load time panel).
metadata.snapshot.interval.entries=3
PROPS
export STELLFLOW_HEAP_OPTS="-Xms128m -Xmx512m"
export STELLFLOW_LOG_DIR="$work/logs"   # the rolling log file stays in the temp dir
start_broker() {
  "$home/bin/stellflow-server.sh" "$work/server.properties" >"$work/broker-$1.log" 2>&1 &
  broker_pid=$!
  pids+=("$broker_pid")
  for _ in $(seq 1 600); do
    if grep -q "BROKER_STARTED" "$work/broker-$1.log"; then break; fi
    kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker-$1.log" >&2; fail "broker did not start"; }
    sleep 0.2
  done
  line=$(grep "BROKER_STARTED" "$work/broker-$1.log") || fail "no BROKER_STARTED line"
  broker_port=$(sed -E 's/.*listener=PLAINTEXT:\/\/[^ ]*:([0-9]+) .*/\1/' <<<"$line")
  metrics_port=$(sed -E 's/.*metricsPort=([0-9]+).*/\1/' <<<"$line")
  [ "$metrics_port" -gt 0 ] 2>/dev/null || fail "broker has no metrics endpoint: $line"
}
stop_broker() {
  kill "$broker_pid"; wait "$broker_pid" 2>/dev/null || true
}
start_broker 1
log "broker on 127.0.0.1:$broker_port, metrics on :$metrics_port"
"$home/bin/stellflow-topics.sh" --bootstrap-server "127.0.0.1:$broker_port" --create --topic verify --partitions 2 >/dev/null
stop_broker
start_broker 2   # reloads the logs and the metadata snapshot: log recovery and snapshot load times have samples
log "restarted: broker on 127.0.0.1:$broker_port, metrics on :$metrics_port"

# Two broker-only nodes following the combined node's controller, and a replicated topic.
follower_ports=()
for id in 1 2; do
  cat >"$work/follower-$id.properties" <<PROPS
process.roles=broker
node.id=$id
controller.quorum.bootstrap.servers=127.0.0.1:$ctl_port
listeners=PLAINTEXT://127.0.0.1:0
log.dirs=$work/data-$id
metrics.exporter=prometheus
metrics.port=0
replica.lag.time.max.ms=10000
PROPS
  STELLFLOW_LOG_DIR="$work/logs-$id" "$home/bin/stellflow-server.sh" "$work/follower-$id.properties" >"$work/follower-$id.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 600); do
    grep -q "BROKER_STARTED" "$work/follower-$id.log" && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/follower-$id.log" >&2; fail "broker $id did not start"; }
    sleep 0.2
  done
  p=$(sed -nE 's/.*BROKER_STARTED.*metricsPort=([0-9]+).*/\1/p' "$work/follower-$id.log" | head -n 1)
  [ -n "$p" ] || fail "broker $id has no metrics endpoint"
  follower_ports+=("$p")
done
for _ in $(seq 1 60); do
  "$home/bin/stellflow-topics.sh" --bootstrap-controller "127.0.0.1:$ctl_port" --create --topic verify-replicated \
    --partitions 1 --replication-factor 3 --config min.insync.replicas=2 >"$work/topic-rf3.out" 2>&1 && break
  sleep 1
done
grep -qi "created" "$work/topic-rf3.out" || { cat "$work/topic-rf3.out" >&2; fail "could not create the RF=3 topic"; }
log "brokers 1 and 2 up (metrics on :${follower_ports[*]}), topic verify-replicated RF=3"
# A group commit (a reset from outside the group, OffsetCommit v1): creates __consumer_offsets, so
# its leaders load their partitions (coordinator load time) and the commit series have a sample.
"$home/bin/stellflow-consumer-groups.sh" --bootstrap-server "127.0.0.1:$broker_port" --reset-offsets \
  --group verify-group --topic verify --to-earliest --execute >"$work/reset.out" 2>&1 \
  || { cat "$work/reset.out" >&2; fail "could not commit offsets of group verify-group"; }
log "group verify-group committed (consumer groups panels)"

load_ms=100000   # outlives the checks below: the clients' endpoints close when the load ends
"$home/bin/stellflow-perf.sh" produce --bootstrap-server "127.0.0.1:$broker_port" --topic verify-replicated \
  --record-size 512 --throughput 1000 --duration-ms "$load_ms" --producer-props acks=-1 \
  >"$work/produce-rf3.out" 2>"$work/produce-rf3.err" &
pids+=($!)
"$home/bin/stellflow-perf.sh" produce --bootstrap-server "127.0.0.1:$broker_port" --topic verify \
  --record-size 512 --throughput 3000 --duration-ms "$load_ms" --metrics-port 0 \
  >"$work/produce.out" 2>"$work/produce.err" &
pids+=($!)
"$home/bin/stellflow-perf.sh" consume --bootstrap-server "127.0.0.1:$broker_port" --topic verify \
  --duration-ms "$load_ms" --timeout-ms "$load_ms" --metrics-port 0 \
  >"$work/consume.out" 2>"$work/consume.err" &
pids+=($!)
client_ports=()
for f in produce consume; do
  for _ in $(seq 1 300); do
    grep -q "client metrics on" "$work/$f.err" 2>/dev/null && break
    sleep 0.2
  done
  p=$(sed -nE 's/.*client metrics on http:\/\/127\.0\.0\.1:([0-9]+)\/metrics.*/\1/p' "$work/$f.err" | head -n 1)
  [ -n "$p" ] || { cat "$work/$f.err" >&2; fail "$f did not export client metrics"; }
  client_ports+=("$p")
done
log "client metrics on :${client_ports[*]}"

# --- 3. Prometheus ----------------------------------------------------------------------------
if [ -n "${VERIFY_PROMETHEUS_PORT:-}" ]; then prom_port=$VERIFY_PROMETHEUS_PORT; else pick_port prom_port; fi
cp "$here/alerts.yml" "$work/alerts.yml"
clients=$(printf '"127.0.0.1:%s", ' "${client_ports[@]}")
brokers=$(printf '"127.0.0.1:%s", ' "$metrics_port" "${follower_ports[@]}")
# (No controller-only node in this layout: its combined node's controller series are on the broker
# endpoint, so the controller job gets no targets.)
sed -e "s/$ship_brokers/[${brokers%, }]/" -e "s/$ship_controllers/[]/" \
    -e "s/$ship_clients/[${clients%, }]/" "$here/prometheus.yml" >"$work/prometheus.yml"
grep -q "127.0.0.1:$metrics_port" "$work/prometheus.yml" || fail "could not template prometheus.yml"
promtool check config "$work/prometheus.yml" >/dev/null || fail "promtool check config"
promtool check rules "$work/alerts.yml" >/dev/null || fail "promtool check rules"
start_prometheus "$work/prometheus.yml" "$prom_port" "$work/tsdb"
log "prometheus on 127.0.0.1:$prom_port; waiting for scrapes"
targets_up() { curl -sf "$api/query" --data-urlencode 'query=count(up == 1)' | jq -r '.data.result[0].value[1] // 0'; }
for _ in $(seq 1 60); do [ "$(targets_up)" = 5 ] && break; sleep 1; done
[ "$(targets_up)" = 5 ] || fail "not all 5 targets are up: $(curl -s "$api/targets" | jq -c '[.data.activeTargets[] | {scrapeUrl, health, lastError}]')"
# Every target scraped 3 times (was a fixed 40 s sleep): a 1m rate needs two points, with the
# loaded broker's counters moved between them.
prom_until 'min(count_over_time(up[1m]))' '(.data.result[0].value[1] // "0" | tonumber) >= 3' 60 \
  || fail "not every target scraped 3 times within 60 s"
# The raw endpoints, while the clients still run (checked in step 5).
for port in "$metrics_port" "${follower_ports[@]}" "${client_ports[@]}"; do
  curl -sf "http://127.0.0.1:$port/metrics" >"$work/raw-$port.txt" || fail "cannot scrape :$port"
done

# --- 4. every expression ----------------------------------------------------------------------
query() { curl -s "$api/query" --data-urlencode "query=$1"; }
# One pass over every panel query; its problems go to $work/panels.txt, their count to $failures.
panels_pass() {
  failures=0
  checked=0
  : >"$work/panels.txt"
  for board in "$here"/dashboards/*.json; do
    while IFS= read -r expr; do
      [ -z "$expr" ] && continue
      e=${expr//\$__rate_interval/1m}
      e=${e//\$node/.*}
      e=${e//\$client_type/.*}
      r=$(query "$e")
      checked=$((checked + 1))
      if [ "$(jq -r .status <<<"$r")" != success ]; then
        echo "verify: $(basename "$board"): does not parse: $expr -> $(jq -r .error <<<"$r")" >>"$work/panels.txt"
        failures=$((failures + 1))
      elif [ "$(jq '.data.result | length' <<<"$r")" = 0 ]; then
        echo "verify: $(basename "$board"): no data: $expr" >>"$work/panels.txt"; failures=$((failures + 1))
      fi
    done < <(jq -r '.panels[] | .targets[]? | .expr' "$board")
  done
}
# Until every panel has data (a series may show up a scrape later than the others), 60 s at most;
# then the problems of the last pass count.
panels_deadline=$((SECONDS + 60))
while panels_pass; [ "$failures" -gt 0 ] && [ "$SECONDS" -lt "$panels_deadline" ]; do
  sleep 5
done
cat "$work/panels.txt" >&2
log "$checked panel queries evaluated"
rules=0
while IFS= read -r expr; do
  r=$(query "$expr")
  rules=$((rules + 1))
  if [ "$(jq -r .status <<<"$r")" != success ]; then
    echo "verify: alert does not parse: $expr -> $(jq -r .error <<<"$r")" >&2; failures=$((failures + 1))
  fi
done < <(curl -s "$api/rules" | jq -r '.data.groups[].rules[].query')
[ "$rules" -gt 0 ] || fail "prometheus loaded no alert rules"
log "$rules alert rules evaluated"
# Template variables of the boards must resolve too.
for m in stellflow_request_count_total stellflow_client_request_count_total stellflow_controller_active stellflow_partition_count; do
  [ "$(curl -s "$api/series" --data-urlencode "match[]=$m" | jq '.data | length')" -gt 0 ] \
    || { echo "verify: template variable source $m has no series" >&2; failures=$((failures + 1)); }
done

# --- 5. forbidden attributes ------------------------------------------------------------------
forbidden='^(client_id|connection_id|request_id|group_id|trace_id|span_id|traffic_tag|trafficTag|tenant|ip|peer_address|net_peer_ip|net_sock_peer_addr)$'
series=$(curl -s "$api/series" --data-urlencode 'match[]={__name__=~"stellflow_.+"}')
[ "$(jq '.data | length' <<<"$series")" -gt 20 ] || fail "too few stellflow series in Prometheus"
bad=$(jq -r --arg re "$forbidden" '.data[] | to_entries[] | select(.key | test($re)) | .key' <<<"$series" | sort -u)
[ -z "$bad" ] || { echo "verify: forbidden labels exported: $bad" >&2; failures=$((failures + 1)); }
# Label values other than Prometheus's own target label (instance) must not be IP addresses.
ips=$(jq -r '.data[] | to_entries[] | select(.key != "instance") | .value' <<<"$series" \
  | grep -E '(^|[^0-9])[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}([^0-9]|$)' | sort -u || true)
[ -z "$ips" ] || { echo "verify: IP addresses in label values: $ips" >&2; failures=$((failures + 1)); }
for port in "$metrics_port" "${follower_ports[@]}" "${client_ports[@]}"; do
  if grep -v '^#' "$work/raw-$port.txt" | grep -Eq '(client_id|connection_id|request_id|group_id|trace_id|traffic_tag)='; then
    echo "verify: forbidden label on the raw endpoint :$port" >&2; failures=$((failures + 1))
  fi
done

if [ "$failures" -gt 0 ]; then
  echo "verify: $failures problem(s); broker log: $work/broker-2.log" >&2
  tail -n 20 "$work/broker-2.log" >&2 || true
  exit 1
fi
echo "grafana/verify.sh: combined layout: $checked panel queries returned data, $rules alert rules parse, no forbidden labels"
if [[ " $layouts " == *" 3x3 "* ]]; then
  stop_all
  source "$here/verify-3x3.sh"
fi
