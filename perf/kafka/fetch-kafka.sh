#!/usr/bin/env bash
# Fetches Apache Kafka 4.x (broker, tools and their runtime dependencies) from Maven Central into a
# cache outside the repo and prints the directory holding the jars:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/stellflow/kafka-<version>/lib
# Usage: perf/kafka/fetch-kafka.sh [version-or-range]   (default [4.0,5.0): the newest 4.x served)
# Maven resolves the range itself (throwaway pom + dependency:copy-dependencies); nothing is built.
set -euo pipefail
HOME_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/stellflow
VERSION=${1:-${STELLFLOW_KAFKA_VERSION:-[4.0,5.0)}}
mkdir -p "$CACHE"
# Reuse a complete cache: the exact version asked for, or for the default range the newest cached
# 4.x unless STELLFLOW_KAFKA_REFRESH=1 (asking Maven Central again takes a minute or two).
if [[ "$VERSION" != \[* ]] && [ -f "$CACHE/kafka-$VERSION/.complete" ]; then
  echo "$CACHE/kafka-$VERSION/lib"; exit 0
fi
if [[ "$VERSION" == \[* ]] && [ "${STELLFLOW_KAFKA_REFRESH:-0}" != 1 ]; then
  cached=$(ls -d "$CACHE"/kafka-4.*/.complete 2>/dev/null | sed 's|/.complete$||' | sort -V | tail -n 1 || true)
  if [ -n "$cached" ]; then echo "$cached/lib"; exit 0; fi
fi
WORK=$(mktemp -d "$CACHE/fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.stellflow.throwaway</groupId><artifactId>kafka-fetch</artifactId><version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-server</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-storage</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-metadata</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.25.5</version></dependency>
  </dependencies>
</project>
POM
( cd "$HOME_DIR" && ./mvnw -q -B -f "$WORK/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$WORK/lib" >&2 )
jar=$(ls "$WORK"/lib/kafka_2.13-*.jar | grep -v -- '-test' | head -n 1)
v=$(basename "$jar" .jar); v=${v#kafka_2.13-}
dest="$CACHE/kafka-$v"
if [ ! -f "$dest/.complete" ]; then
  rm -rf "$dest"; mkdir -p "$dest"
  mv "$WORK/lib" "$dest/lib"
  touch "$dest/.complete"
fi
echo "$dest/lib"
