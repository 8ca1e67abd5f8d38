# Step 6 of grafana/verify.sh (sourced by it, not run alone: it uses verify.sh's work dir, pick_port,
# start_prometheus, prom_until, log and fail): the 3-controller/3-broker layout of config/cluster/
# on free ports, scraped by a second Prometheus with the shipped prometheus.yml's broker and
# controller jobs.
#
# Checks: all 6 targets up; exactly 1 active controller; JVM series (heap, GC, CPU, threads, open
# files) from both jobs; disk free and used for every broker's log dir; 9 replicas and 3 leaders for
# an RF=3 topic of 3 partitions; then one broker and one controller killed: their `up` goes to 0,
# StellflowBrokerDown and StellflowControllerDown go pending or firing, and the two remaining
# voters keep exactly 1 active controller.

log "3x3 layout: 3 controller-only nodes and 3 broker-only nodes"
c3="$work/3x3"
mkdir -p "$c3"
export STELLFLOW_HEAP_OPTS="-Xms64m -Xmx256m"   # six JVMs on a CI machine
ctl_ids=(101 102 103)
ctl_raft=() ctl_rpc=() ctl_metrics=() brk_metrics=()
for i in 0 1 2; do
  pick_port p; ctl_raft+=("$p")
  pick_port p; ctl_rpc+=("$p")
  pick_port p; ctl_metrics+=("$p")
  pick_port p; brk_metrics+=("$p")
done
voters="101@127.0.0.1:${ctl_raft[0]},102@127.0.0.1:${ctl_raft[1]},103@127.0.0.1:${ctl_raft[2]}"
bootstrap="127.0.0.1:${ctl_rpc[0]},127.0.0.1:${ctl_rpc[1]},127.0.0.1:${ctl_rpc[2]}"
ctl_pids=() brk_pids=()
for i in 0 1 2; do
  id=${ctl_ids[$i]}
  cat >"$c3/controller-$id.properties" <<PROPS
process.roles=controller
node.id=$id
cluster.id=stellflow-verify-3x3
controller.quorum.voters=$voters
controller.listener=127.0.0.1:${ctl_rpc[$i]}
metadata.log.dir=$c3/controller-$id
metrics.port=${ctl_metrics[$i]}
PROPS
  STELLFLOW_LOG_DIR="$c3/logs-c$id" "$home/bin/stellflow-server.sh" "$c3/controller-$id.properties" \
    >"$c3/controller-$id.log" 2>&1 &
  pids+=($!)
  ctl_pids+=($!)
done
for id in 1 2 3; do
  cat >"$c3/broker-$id.properties" <<PROPS
process.roles=broker
node.id=$id
cluster.id=stellflow-verify-3x3
listeners=PLAINTEXT://127.0.0.1:0
log.dirs=$c3/broker-$id
controller.quorum.bootstrap.servers=$bootstrap
default.replication.factor=3
metrics.port=${brk_metrics[$((id - 1))]}
PROPS
  STELLFLOW_LOG_DIR="$c3/logs-b$id" "$home/bin/stellflow-server.sh" "$c3/broker-$id.properties" \
    >"$c3/broker-$id.log" 2>&1 &
  pids+=($!)
  brk_pids+=($!)
done
broker1_port=
for id in 1 2 3; do
  for _ in $(seq 1 900); do
    grep -q "BROKER_STARTED" "$c3/broker-$id.log" && break
    kill -0 "${brk_pids[$((id - 1))]}" 2>/dev/null || { tail -n 30 "$c3/broker-$id.log" >&2; fail "3x3: broker $id did not start"; }
    sleep 0.2
  done
  grep -q "BROKER_STARTED" "$c3/broker-$id.log" || { tail -n 30 "$c3/broker-$id.log" >&2; fail "3x3: broker $id did not start in 180 s"; }
done
broker1_port=$(sed -nE 's/.*BROKER_STARTED.*listener=PLAINTEXT:\/\/[^ ]*:([0-9]+) .*/\1/p' "$c3/broker-1.log" | head -n 1)
[ -n "$broker1_port" ] || fail "3x3: no listener port in broker 1's BROKER_STARTED line"
for _ in $(seq 1 60); do
  "$home/bin/stellflow-topics.sh" --bootstrap-server "127.0.0.1:$broker1_port" --create --topic verify-3x3 \
    --partitions 3 --replication-factor 3 >"$c3/topic.out" 2>&1 && break
  sleep 1
done
grep -qi "created" "$c3/topic.out" || { cat "$c3/topic.out" >&2; fail "3x3: could not create topic verify-3x3"; }
log "3x3: controllers metrics on :${ctl_metrics[*]}, brokers metrics on :${brk_metrics[*]}, topic verify-3x3 RF=3"

# The shipped prometheus.yml with this layout's targets; the shipped alerts.yml with the down
# alerts' `for:` cut to 10 s (this copy only), so they fire within the run.
brokers3=$(printf '"127.0.0.1:%s", ' "${brk_metrics[@]}")
controllers3=$(printf '"127.0.0.1:%s", ' "${ctl_metrics[@]}")
sed -e "s/$ship_brokers/[${brokers3%, }]/" -e "s/$ship_controllers/[${controllers3%, }]/" \
    -e "s/$ship_clients/[]/" "$here/prometheus.yml" >"$c3/prometheus.yml"
awk '/alert: Stellflow(Broker|Controller)Down$/ {down = 1}
     down && /^ *for: / {sub(/for: .*/, "for: 10s"); down = 0}
     {print}' "$here/alerts.yml" >"$c3/alerts.yml"
[ "$(grep -c 'for: 10s' "$c3/alerts.yml")" = 2 ] || fail "3x3: could not shorten the down alerts' for:"
promtool check config "$c3/prometheus.yml" >/dev/null || fail "3x3: promtool check config"
if [ -n "${VERIFY_PROMETHEUS_PORT:-}" ]; then prom3_port=$((VERIFY_PROMETHEUS_PORT + 1)); else pick_port prom3_port; fi
start_prometheus "$c3/prometheus.yml" "$prom3_port" "$c3/tsdb"
log "3x3: prometheus on 127.0.0.1:$prom3_port"

jobs_re='job=~"stellflow-broker|stellflow-controller"'
failures3=0
check() { # $1 what, then prom_until's arguments
  local what=$1; shift
  if prom_until "$@"; then log "3x3: ok: $what"; else echo "verify: 3x3: FAILED: $what" >&2; failures3=$((failures3 + 1)); fi
}
check "all 6 targets up" "count(up{$jobs_re} == 1)" '.data.result[0].value[1] == "6"' 90
check "exactly 1 active controller" 'sum(stellflow_controller_active)' '.data.result[0].value[1] == "1"' 60
check "controller JVM heap series" 'count(jvm_memory_used_bytes{job="stellflow-controller",jvm_memory_type="heap"} > 0) > 0' '.data.result | length > 0' 30
check "broker JVM heap series" 'count(jvm_memory_used_bytes{job="stellflow-broker",jvm_memory_type="heap"} > 0) > 0' '.data.result | length > 0' 30
check "open fds of all 6 processes" "count(jvm_file_descriptor_count{$jobs_re} > 0)" '.data.result[0].value[1] == "6"' 30
check "CPU and threads of all 6 processes" "count(jvm_cpu_time_seconds_total{$jobs_re}) + count(jvm_thread_count{$jobs_re} > 0) >= 12" '.data.result | length > 0' 30
check "disk free of every broker's log dir" 'count(stellflow_log_dir_free_bytes > 0)' '.data.result[0].value[1] == "3"' 30
check "disk used of every broker's log dir" 'count(stellflow_log_dir_used_bytes >= 0)' '.data.result[0].value[1] == "3"' 30
check "9 replicas over 3 brokers" 'sum(stellflow_partition_count) == 9 and count(stellflow_partition_count >= 3) == 3' '.data.result | length > 0' 60
check "3 leaders" 'sum(stellflow_partition_leader_count)' '.data.result[0].value[1] == "3"' 60

# Every panel of the on-call board has data in this layout too (rate() panels need two scrapes of
# every process within the 1m window first).
check "CPU rate of all 6 processes" "count(rate(jvm_cpu_time_seconds_total{$jobs_re}[1m]))" '.data.result[0].value[1] == "6"' 30
while IFS= read -r expr; do
  e=${expr//\$__rate_interval/1m}
  e=${e//\$node/.*}
  r=$(curl -s "$api/query" --data-urlencode "query=$e")
  if [ "$(jq -r .status <<<"$r")" != success ] || [ "$(jq '.data.result | length' <<<"$r")" = 0 ]; then
    echo "verify: 3x3: stellflow-oncall.json: no data: $expr" >&2; failures3=$((failures3 + 1))
  fi
done < <(jq -r '.panels[] | .targets[]? | .expr' "$here/dashboards/stellflow-oncall.json" | grep -v jvm_gc_)
# (GC panels: a fresh idle JVM may not have collected yet; the combined layout checks them under load.)

# A broker and a controller go down.
kill "${brk_pids[2]}" "${ctl_pids[2]}"
log "3x3: stopped broker 3 (:${brk_metrics[2]}) and controller 103 (:${ctl_metrics[2]})"
check "broker 3's up is 0" "up{job=\"stellflow-broker\",instance=\"127.0.0.1:${brk_metrics[2]}\"}" '.data.result[0].value[1] == "0"' 30
check "controller 103's up is 0" "up{job=\"stellflow-controller\",instance=\"127.0.0.1:${ctl_metrics[2]}\"}" '.data.result[0].value[1] == "0"' 30
alert_state() { # $1 alert name, $2 instance: prints its state, or nothing
  curl -s "$api/alerts" | jq -r --arg a "$1" --arg i "$2" \
    '[.data.alerts[] | select(.labels.alertname == $a and .labels.instance == $i) | .state][0] // empty'
}
for a in "StellflowBrokerDown 127.0.0.1:${brk_metrics[2]}" "StellflowControllerDown 127.0.0.1:${ctl_metrics[2]}"; do
  set -- $a
  state=
  for _ in $(seq 1 45); do
    state=$(alert_state "$1" "$2")
    [ "$state" = firing ] && break
    sleep 1
  done
  if [ "$state" = firing ] || [ "$state" = pending ]; then
    log "3x3: ok: $1 for $2 is $state"
  else
    echo "verify: 3x3: FAILED: $1 for $2 is '${state:-absent}' after 45 s" >&2; failures3=$((failures3 + 1))
  fi
done
check "still exactly 1 active controller with 2 of 3 voters" 'sum(stellflow_controller_active)' '.data.result[0].value[1] == "1"' 60

if [ "$failures3" -gt 0 ]; then
  echo "verify: 3x3: $failures3 problem(s); logs in $c3" >&2
  tail -n 20 "$c3/controller-101.log" "$c3/broker-1.log" >&2 || true
  exit 1
fi
echo "grafana/verify.sh: 3x3 layout: 6 targets up, 1 active controller, JVM/disk/partition series, broker and controller down alerts fire"
