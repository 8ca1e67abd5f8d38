#!/usr/bin/env bash
# Runs io.stellflow.perf.PerfCommand (see --help). Finds JDK 25 and builds the perf jar if missing.
exec "$(dirname "$0")/_launch.sh" perf io.stellflow.perf.PerfCommand "$@"
