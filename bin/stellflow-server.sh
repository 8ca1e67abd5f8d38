#!/usr/bin/env bash
# Runs a Stellflow node in the foreground: bin/stellflow-server.sh config/server.properties
# process.roles in the file picks a broker, a controller, or both (combined mode, the default).
# Stops cleanly on SIGTERM (bin/stellflow-server-stop.sh) or Ctrl-C (closes connections, then every log). Finds JDK 25 and builds the
# broker jar if missing. JVM flags: STELLFLOW_HEAP_OPTS, STELLFLOW_OPTS, STELLFLOW_AOT_CACHE and
# STELLFLOW_AOT=off (see bin/_launch.sh and bin/stellflow-aot-train.sh).
# Writes its pid to $STELLFLOW_PID_DIR/stellflow-<config file name without .properties>.pid (default
# <install>/run), which bin/stellflow-server-stop.sh reads, and removes it when the JVM ends (also
# after a failed start); refuses to start a second server on the same config file while the first one
# runs (bin/_node.sh).
# --version prints the release, --help this usage; both exit 0 without starting anything.
home=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: $0 <server.properties>  (or --version, --help)"
case "${1:-}" in
  --version) exec "$home/bin/_version.sh" ;;
  -h | --help) echo "$usage"; sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
if [ $# -ne 1 ]; then
  echo "$usage" >&2
  exit 2
fi
# The broker's JDK AOT cache, when bin/stellflow-aot-train.sh has made one for this build.
export _STELLFLOW_LAUNCH_AOT_CACHE=${STELLFLOW_AOT_CACHE:-$home/broker/target/stellflow-broker.aot}
exec "$home/bin/_node.sh" "$1" broker io.stellflow.broker.StellflowMain
