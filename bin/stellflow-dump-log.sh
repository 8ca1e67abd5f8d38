#!/usr/bin/env bash
# Runs io.stellflow.tools.DumpLogCommand (see --help): prints segment .log batches (and records with
# --deep-iteration) and .index/.timeindex entries checked against the log, offline and read-only.
# Finds JDK 25 and builds the tools jar if missing.
exec "$(dirname "$0")/_launch.sh" tools io.stellflow.tools.DumpLogCommand "$@"
