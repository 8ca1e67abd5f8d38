# Sourced by the perf scripts (run-matrix.sh --quick, lab.sh, telemetry-overhead.sh,
# idempotence-ab.sh) from $HOME_DIR with a log function defined: builds the broker, the tools and
# the load generator once when a jar or its lib/ is missing or older than any source or pom
# (./mvnw -q -DskipTests -pl tools,perf -am package, under .build.lock so two scripts never build
# at once), then exports STELLFLOW_NO_BUILD=1 so the launchers they call never build.
need_build=""
for m in broker tools perf; do
  jar=$(ls "$m"/target/stellflow-*-SNAPSHOT.jar 2>/dev/null | grep -v -- '-tests' | head -n 1 || true)
  if [ -z "$jar" ] || [ ! -d "$m/target/lib" ] \
     || [ -n "$(find ./*/src ./*/pom.xml ./pom.xml -newer "$jar" -type f 2>/dev/null | head -n 1)" ]; then
    need_build=yes
  fi
done
if [ -n "$need_build" ]; then
  log "building the broker, the tools and the load generator ..."
  ( flock 9; ./mvnw -q -B -DskipTests -Dspotless.check.skip=true -pl tools,perf -am package >&2 ) 9>"$HOME_DIR/.build.lock"
fi
export STELLFLOW_NO_BUILD=1
