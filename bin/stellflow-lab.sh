#!/usr/bin/env bash
# Runs io.stellflow.perf.lab.LabCommand, the perf lab's report half (see --help); e.g.
# bin/stellflow-lab.sh charts perf/results/<dir> draws that run's charts again from its results.json.
exec "$(dirname "$0")/_launch.sh" perf io.stellflow.perf.lab.LabCommand "$@"
