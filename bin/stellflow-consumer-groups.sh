#!/usr/bin/env bash
# Runs io.stellflow.tools.ConsumerGroupsCommand (see --help). Finds JDK 25 and builds the tools jar if missing.
exec "$(dirname "$0")/_launch.sh" tools io.stellflow.tools.ConsumerGroupsCommand "$@"
