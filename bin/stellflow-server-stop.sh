#!/usr/bin/env bash
# Stops Stellflow nodes started by bin/stellflow-server.sh or bin/stellflow-controller.sh: sends SIGTERM (a clean stop: connections
# closed, then every log) and waits for the process to end.
# Usage: bin/stellflow-server-stop.sh [<server.properties>]
#   with a config file: stops the node started with it; without: every node with a pid file.
#   --version prints the release, --help this text (exit 0).
# Reads $STELLFLOW_PID_DIR/stellflow-<config name>.pid (default <install>/run). A pid file whose
# process is gone, or is no longer a Stellflow JVM, is removed and not signalled.
# STELLFLOW_STOP_TIMEOUT_S (default 60): how long to wait before giving up (exit 1, nothing killed).
# Exit status: 0 when every server found has stopped, 1 when none was running or one did not stop.
set -uo pipefail
home=$(cd "$(dirname "$0")/.." && pwd)
pid_dir=${STELLFLOW_PID_DIR:-$home/run}
timeout_s=${STELLFLOW_STOP_TIMEOUT_S:-60}
case "${1:-}" in
  --version) exec "$home/bin/_version.sh" ;;
  -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
if [ $# -gt 1 ]; then
  echo "usage: $0 [<server.properties>]  (or --version, --help)" >&2
  exit 2
fi
if [ $# -eq 1 ]; then
  files=("$pid_dir/stellflow-$(basename -- "$1" .properties).pid")
else
  shopt -s nullglob
  files=("$pid_dir"/stellflow-*.pid)
fi
# is_ours PID: the process exists and runs a Stellflow main class (a reused pid is left alone).
is_ours() { ps -p "$1" -o args= 2>/dev/null | grep -q 'io\.stellflow\.'; }
stopped=0 failed=0
for f in "${files[@]}"; do
  [ -s "$f" ] || continue
  pid=$(cat "$f")
  if ! is_ours "$pid"; then
    rm -f "$f"
    continue
  fi
  echo "Stopping Stellflow server (pid $pid, $f) ..."
  kill -TERM "$pid" 2>/dev/null
  waited=0
  while is_ours "$pid" && [ "$waited" -lt $((timeout_s * 10)) ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  if is_ours "$pid"; then
    echo "error: pid $pid is still running after ${timeout_s} s (still closing its logs?); wait, or kill -9 $pid (unclean: its logs are recovered at the next start)" >&2
    failed=1
  else
    rm -f "$f"
    echo "Stopped pid $pid."
    stopped=$((stopped + 1))
  fi
done
if [ "$stopped" -eq 0 ] && [ "$failed" -eq 0 ]; then
  echo "error: no Stellflow server to stop${1:+ for $1} (no live pid file in $pid_dir)" >&2
  exit 1
fi
exit "$failed"
