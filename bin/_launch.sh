#!/usr/bin/env bash
# Shared launcher for bin/*.sh: finds a JDK >= 25, builds the module's jar and its runtime
# classpath (target/lib) when they are missing or older than any source file, then runs the class.
# Usage: bin/_launch.sh <module-dir> <main-class> [args...]
# Environment: STELLFLOW_HEAP_OPTS (default -Xms256m -Xmx1g), STELLFLOW_OPTS (extra JVM flags),
# STELLFLOW_NO_BUILD=1 to never build (fails if the jar is missing), STELLFLOW_AOT=off to start
# without a JDK AOT cache. _STELLFLOW_LAUNCH_AOT_CACHE is set by bin/stellflow-server.sh only (the
# broker's cache, see bin/stellflow-aot-train.sh), so a tool never gets the broker's cache: used when
# it exists and is newer than the module's jar and runtime classpath, skipped otherwise.
set -euo pipefail
STELLFLOW_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/find-java.sh
. "$STELLFLOW_HOME/bin/find-java.sh"
module=$1 main=$2
shift 2
jar_glob() { ls "$STELLFLOW_HOME/$module"/target/stellflow-*-SNAPSHOT.jar 2>/dev/null | grep -v -- '-tests' | head -n 1 || true; }
jar=$(jar_glob)
# is_stale: the jar or its runtime classpath is missing, or a main source, resource or pom file is
# newer than the jar (test sources do not go into the jars, so changing them builds nothing).
is_stale() {
  jar=$(jar_glob)
  [ -z "$jar" ] || [ ! -d "$STELLFLOW_HOME/$module/target/lib" ] ||
    [ -n "$(find "$STELLFLOW_HOME"/*/src/main "$STELLFLOW_HOME"/*/pom.xml "$STELLFLOW_HOME/pom.xml" -newer "$jar" -type f 2>/dev/null | head -n 1)" ]
}
if [ "${STELLFLOW_NO_BUILD:-0}" != 1 ] && is_stale; then
  # flock keeps concurrent launchers (run-matrix starts several) from building at once; freshness is
  # checked again once the lock is held, so launchers that queued behind a build reuse its jar.
  (
    flock 9
    if is_stale; then
      echo "stellflow: building $module (first run, or sources changed) ..." >&2
      cd "$STELLFLOW_HOME" && ./mvnw -q -B -DskipTests -Dspotless.check.skip=true -pl "$module" -am package >&2
      # Maven leaves a module's jar untouched when its own classes did not change (a change in a
      # module it depends on only refreshes target/lib): mark it built, or every launch would build.
      touch "$(jar_glob)"
    fi
  ) 9>"$STELLFLOW_HOME/.build.lock"
  jar=$(jar_glob)
fi
if [ -z "$jar" ]; then
  echo "stellflow: no jar in $module/target; run ./mvnw -DskipTests package" >&2
  exit 1
fi
# Tools log WARN+ to stderr only (config/tools-logback.xml), so stdout carries only their output; the
# servers' launchers pass -Dlogback.configurationFile themselves (config/logback.xml).
opts=${STELLFLOW_OPTS:-}
case "$opts" in
  *logback.configurationFile*) ;;
  *) opts="-Dlogback.configurationFile=$STELLFLOW_HOME/config/tools-logback.xml $opts" ;;
esac
# Client tools (tools, perf) load zstd-jni's JNI classes, not the FFM ones its multi-release jar
# holds for JDK 22+ (the switch the library's own error message names): the FFM binding costs a
# fresh JVM 0.3-0.4 s more wall time and 0.4-1.1 s more CPU than the JNI classes, a quarter of a
# 1 GB consume run (docs/compression.md, "zstd-jni's two bindings"). No other jar on their class
# path needs its versioned classes. A later -Djdk.util.jar.enableMultiRelease=true in STELLFLOW_OPTS
# wins.
case "$module" in
  tools | perf) opts="-Djdk.util.jar.enableMultiRelease=false $opts" ;;
esac
# A JDK AOT cache belongs to the exact jars it was trained with; the JVM would refuse a stale one with
# a warning, so a cache older than any jar on the classpath is left out here instead.
aot=${_STELLFLOW_LAUNCH_AOT_CACHE:-}
if [ -n "$aot" ] && [ "${STELLFLOW_AOT:-on}" != off ] && [ -s "$aot" ] && [ "$aot" -nt "$jar" ] &&
  [ -z "$(find "$STELLFLOW_HOME/$module/target/lib" -newer "$aot" -type f 2>/dev/null | head -n 1)" ]; then
  opts="-XX:AOTCache=$aot $opts"
fi
# --sun-misc-unsafe-memory-access=allow: libraries (Netty, protobuf, Ratis' shaded Netty) still use
# sun.misc.Unsafe's memory access; JDK 24+ warns on stderr at their first use unless it is allowed
# (JEP 498). Allowing it changes nothing else.
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" ${STELLFLOW_HEAP_OPTS:--Xms256m -Xmx1g} --enable-native-access=ALL-UNNAMED \
  --sun-misc-unsafe-memory-access=allow $opts -cp "$jar:$STELLFLOW_HOME/$module/target/lib/*" "$main" "$@"
