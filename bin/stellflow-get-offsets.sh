#!/usr/bin/env bash
# Runs io.stellflow.tools.GetOffsetsCommand (see --help): topic:partition:offset per line for
# --time earliest|latest|<epoch ms>. Finds JDK 25 and builds the tools jar if missing.
exec "$(dirname "$0")/_launch.sh" tools io.stellflow.tools.GetOffsetsCommand "$@"
