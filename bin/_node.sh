#!/usr/bin/env bash
# Shared by bin/stellflow-server.sh and bin/stellflow-controller.sh: runs one node's JVM in the
# foreground with a pid file, so that bin/stellflow-server-stop.sh can stop either kind.
# Usage: bin/_node.sh <config file> <module-dir> <main-class>
# The pid file is $STELLFLOW_PID_DIR/stellflow-<config file name without .properties>.pid (default
# <install>/run). It holds the JVM's pid and is removed when the JVM ends, however it ends: a clean
# stop, a failed start (exit 1 or 2), a crash. A second node on the same config file is refused while
# the first one runs. SIGTERM and SIGINT (Ctrl-C) to this script are passed to the JVM as SIGTERM (a
# clean stop); the script exits with the JVM's status.
set -uo pipefail
home=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
config=$1 module=$2 main=$3
pid_dir=${STELLFLOW_PID_DIR:-$home/run}
pid_file="$pid_dir/stellflow-$(basename -- "$config" .properties).pid"
if [ -s "$pid_file" ]; then
  old=$(cat "$pid_file")
  if ps -p "$old" -o args= 2>/dev/null | grep -q 'io\.stellflow\.'; then
    echo "error: a Stellflow server is already running with $config (pid $old, $pid_file); stop it with bin/stellflow-server-stop.sh $config" >&2
    exit 1
  fi
fi
mkdir -p "$pid_dir" && : >"$pid_file" || { echo "error: cannot write the pid file $pid_file (set STELLFLOW_PID_DIR)" >&2; exit 1; }
# Logs: console and a rolling file under STELLFLOW_LOG_DIR (default <install>/logs), see config/logback.xml.
export STELLFLOW_OPTS="-Dlogback.configurationFile=${STELLFLOW_LOG_CONFIG:-$home/config/logback.xml} -Dstellflow.log.dir=${STELLFLOW_LOG_DIR:-$home/logs} ${STELLFLOW_OPTS:-}"
# The JVM runs as a child (bin/_launch.sh execs it, so $! is the JVM's pid) instead of replacing this
# script, so that the pid file is removed after it ends. Without job control a background child
# ignores SIGINT, so Ctrl-C reaches the JVM through the trap below.
"$home/bin/_launch.sh" "$module" "$main" "$config" &
child=$!
echo "$child" >"$pid_file"
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
status=0
while :; do
  wait "$child"
  status=$?
  # wait returns early (status > 128) when a trapped signal arrives; the JVM is still closing.
  kill -0 "$child" 2>/dev/null || break
done
# Only our own pid file: a second launcher refused above never gets here.
[ "$(cat "$pid_file" 2>/dev/null)" = "$child" ] && rm -f "$pid_file"
exit "$status"
