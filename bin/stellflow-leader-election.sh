#!/usr/bin/env bash
# Runs io.stellflow.controller.tools.LeaderElectionCommand (see --help). Finds JDK 25 and builds the controller jar if missing.
exec "$(dirname "$0")/_launch.sh" controller io.stellflow.controller.tools.LeaderElectionCommand "$@"
