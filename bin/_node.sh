#!/usr/bin/env bash
# Shared by bin/stellflow-server.sh and bin/stellflow-controller.sh: runs one node's JVM with a pid
# file, so that bin/stellflow-server-stop.sh can stop either kind.
# Usage: bin/_node.sh <config file> <module-dir> <main-class>
# The pid file is $STELLFLOW_PID_DIR/stellflow-<config file name without .properties>.pid (default
# <install>/run). This script writes its own pid there and then execs the JVM (bin/_launch.sh execs
# java), so the file, `$!` of whoever started the script, the perf lab's CPU readings and profilers
# all see the JVM's pid; signals reach the JVM directly (SIGTERM, Ctrl-C: a clean stop). The JVM
# removes the file when it ends, a failed start included (-Dstellflow.pid.file, PidFile); after a
# SIGKILL the file stays, and the next start writes over it once its pid is no Stellflow process.
# A second node on the same config file is refused while the first one runs.
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
mkdir -p "$pid_dir" && echo $$ >"$pid_file" || { echo "error: cannot write the pid file $pid_file (set STELLFLOW_PID_DIR)" >&2; exit 1; }
# Logs: console and a rolling file under STELLFLOW_LOG_DIR (default <install>/logs), see config/logback.xml.
export STELLFLOW_OPTS="-Dlogback.configurationFile=${STELLFLOW_LOG_CONFIG:-$home/config/logback.xml} -Dstellflow.log.dir=${STELLFLOW_LOG_DIR:-$home/logs} -Dstellflow.pid.file=$pid_file ${STELLFLOW_OPTS:-}"
exec "$home/bin/_launch.sh" "$module" "$main" "$config"
