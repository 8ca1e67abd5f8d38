#!/usr/bin/env bash
# Runs a controller-only node (io.stellflow.controller.node.ControllerNode, the controller jar) in the
# foreground: bin/stellflow-controller.sh <file>.
# The file holds the controller keys (node.id, controller.quorum.voters, controller.listener,
# metadata.log.dir, ...) and optionally the metrics keys (metrics.exporter, metrics.host, metrics.port);
# process.roles may be omitted (it must be "controller" when present). The same node as
# bin/stellflow-server.sh with process.roles=controller, which reads the file as a broker's (and so
# also validates broker keys in it); here keys a controller does not read are logged as ignored.
# Writes its pid to $STELLFLOW_PID_DIR/stellflow-<file name without .properties>.pid (default
# <install>/run) and removes it when the JVM ends, so bin/stellflow-server-stop.sh stops it too.
# Finds JDK 25 and builds the controller jar if missing.
# --version prints the release, --help this usage; both exit 0 without starting anything.
home=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: $0 <controller.properties>  (or --version, --help)"
case "${1:-}" in
  --version) exec "$home/bin/_version.sh" ;;
  -h | --help) echo "$usage"; sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
if [ $# -ne 1 ]; then
  echo "$usage" >&2
  exit 2
fi
exec "$home/bin/_node.sh" "$1" controller io.stellflow.controller.node.ControllerNode
