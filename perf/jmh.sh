#!/usr/bin/env bash
# Runs the JMH suite (perf/src/main/java/io/stellflow/perf/jmh/**) and writes the JSON results to
# perf/results/<timestamp>/jmh.json (plus jmh.txt, the human-readable log).
#   perf/jmh.sh [regex] [--short] [JMH options, e.g. -prof gc]
# regex selects benchmarks (default: all of io.stellflow.perf.jmh). --short overrides the
# class-level settings with 1 warmup and 2 measurement iterations of 1 s (a smoke run on a busy
# machine); without it each class's @Fork/@Warmup/@Measurement apply. `-prof gc` adds the
# allocation rate per operation (gc.alloc.rate.norm, bytes/op): the hot-path goal is zero per record.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$HOME_DIR"
# shellcheck source=bin/find-java.sh
. "$HOME_DIR/bin/find-java.sh"

REGEX="io.stellflow.perf.jmh"
ARGS=()
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then REGEX=$1; shift; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --short) ARGS+=(-f 1 -wi 1 -w 1s -i 2 -r 1s) ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) ARGS+=("$1") ;;
  esac
  shift
done

jar=$(ls perf/target/stellflow-perf-*-SNAPSHOT.jar 2>/dev/null | grep -v -- '-tests' | head -n 1 || true)
if [ -z "$jar" ] || [ ! -d perf/target/lib ] \
   || [ -n "$(find ./*/src ./*/pom.xml ./pom.xml -newer "$jar" -type f 2>/dev/null | head -n 1)" ]; then
  echo "[jmh] building the perf jar ..." >&2
  # -DskipTests, not -Dmaven.test.skip=true: the latter also skips the test-jars (protocol's, which
  # storage-ffm's tests use), and Maven resolves test-scoped dependencies even when no test runs, so
  # a fresh checkout with no installed test-jars failed to build.
  ( flock 9; ./mvnw -q -B -DskipTests -Dspotless.check.skip=true -pl perf -am package >&2 ) 9>"$HOME_DIR/.build.lock"
  jar=$(ls perf/target/stellflow-perf-*-SNAPSHOT.jar | grep -v -- '-tests' | head -n 1)
fi
OUT_DIR="$HOME_DIR/perf/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT_DIR"
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar:$HOME_DIR/perf/target/lib/*" org.openjdk.jmh.Main \
  "$REGEX" -rf json -rff "$OUT_DIR/jmh.json" "${ARGS[@]}" 2>&1 | tee "$OUT_DIR/jmh.txt"
echo "results: $OUT_DIR/jmh.json"
