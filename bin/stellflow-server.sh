#!/usr/bin/env bash
# Runs a Stellflow node in the foreground: bin/stellflow-server.sh config/server.properties
# process.roles in the file picks a broker, a controller, or both (combined mode, the default).
# Stops cleanly on SIGTERM (bin/stellflow-server-stop.sh) or Ctrl-C (closes connections, then every log). Finds JDK 25 and builds the
# broker jar if missing. JVM flags: STELLFLOW_HEAP_OPTS, STELLFLOW_OPTS, STELLFLOW_AOT_CACHE and
# STELLFLOW_AOT=off (see bin/_launch.sh and bin/stellflow-aot-train.sh).
# Writes its pid to $STELLFLOW_PID_DIR/stellflow-<config file name without .properties>.pid (default
# <install>/run), which bin/stellflow-server-stop.sh reads; refuses to start a second server on the
# same config file while the first one runs.
if [ $# -ne 1 ]; then
  echo "usage: $0 <server.properties>" >&2
  exit 2
fi
home=$(cd "$(dirname "$0")/.." && pwd)
pid_dir=${STELLFLOW_PID_DIR:-$home/run}
pid_file="$pid_dir/stellflow-$(basename "$1" .properties).pid"
if [ -s "$pid_file" ]; then
  old=$(cat "$pid_file")
  if ps -p "$old" -o args= 2>/dev/null | grep -q 'io\.stellflow\.'; then
    echo "error: a Stellflow server is already running with $1 (pid $old, $pid_file); stop it with bin/stellflow-server-stop.sh $1" >&2
    exit 1
  fi
fi
mkdir -p "$pid_dir" && echo $$ >"$pid_file" || { echo "error: cannot write the pid file $pid_file (set STELLFLOW_PID_DIR)" >&2; exit 1; }
# Logs: console and a rolling file under STELLFLOW_LOG_DIR (default <install>/logs), see config/logback.xml.
export STELLFLOW_OPTS="-Dlogback.configurationFile=${STELLFLOW_LOG_CONFIG:-$home/config/logback.xml} -Dstellflow.log.dir=${STELLFLOW_LOG_DIR:-$home/logs} ${STELLFLOW_OPTS:-}"
# The broker's JDK AOT cache, when bin/stellflow-aot-train.sh has made one for this build.
_STELLFLOW_LAUNCH_AOT_CACHE=${STELLFLOW_AOT_CACHE:-$home/broker/target/stellflow-broker.aot} exec "$home/bin/_launch.sh" broker io.stellflow.broker.StellflowMain "$@"
