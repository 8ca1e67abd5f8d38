#!/usr/bin/env bash
# Runs io.stellflow.tools.TransactionsCommand (see --help): list, describe, describe-producers,
# find-hanging and abort transactions (Kafka's kafka-transactions.sh). Finds JDK 25 and builds the
# tools jar if missing.
exec "$(dirname "$0")/_launch.sh" tools io.stellflow.tools.TransactionsCommand "$@"
