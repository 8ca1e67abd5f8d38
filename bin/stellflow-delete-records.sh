#!/usr/bin/env bash
# Runs io.stellflow.tools.DeleteRecordsCommand (see --help): deletes the records below the offsets of
# an --offset-json-file (DeleteRecords). Finds JDK 25 and builds the tools jar if missing.
exec "$(dirname "$0")/_launch.sh" tools io.stellflow.tools.DeleteRecordsCommand "$@"
