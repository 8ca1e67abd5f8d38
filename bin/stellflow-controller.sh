#!/usr/bin/env bash
# Runs a controller-only node (io.stellflow.controller.node.ControllerNode, the controller jar): bin/stellflow-controller.sh <file>.
# The file holds the controller keys (node.id, controller.quorum.voters, controller.listener,
# metadata.log.dir, ...) and optionally the metrics keys (metrics.exporter, metrics.host, metrics.port);
# process.roles may be omitted (it must be "controller" when present). The same node as
# bin/stellflow-server.sh with process.roles=controller, which reads the file as a broker's (and so
# also validates broker keys in it); here keys a controller does not read are logged as ignored.
# Finds JDK 25 and builds the controller jar if missing.
home=$(cd "$(dirname "$0")/.." && pwd)
export STELLFLOW_OPTS="-Dlogback.configurationFile=${STELLFLOW_LOG_CONFIG:-$home/config/logback.xml} -Dstellflow.log.dir=${STELLFLOW_LOG_DIR:-$home/logs} ${STELLFLOW_OPTS:-}"
exec "$home/bin/_launch.sh" controller io.stellflow.controller.node.ControllerNode "$@"
