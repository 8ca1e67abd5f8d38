#!/usr/bin/env bash
# Runs io.stellflow.tools.LogDirsCommand (see --help): every broker's log dirs with their size per
# dir and per partition (DescribeLogDirs). Finds JDK 25 and builds the tools jar if missing.
exec "$(dirname "$0")/_launch.sh" tools io.stellflow.tools.LogDirsCommand "$@"
