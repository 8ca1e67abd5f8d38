# shellcheck shell=sh
# Sourced by ./mvnw and every bin/ launcher: points JAVA_HOME at a JDK whose feature version is at
# least STELLFLOW_MIN_JAVA (25), whatever JAVA_HOME held before (unset, or a JDK 17 as on a fresh
# Debian machine). Search order: $STELLFLOW_JAVA_HOME, $JAVA_HOME, the `java` on PATH, then the
# usual install roots (/usr/lib/jvm, /opt, /usr/local, ~/.sdkman, ~/.jdks). Fails with a clear
# message and exit status 1 when no JDK >= 25 is found.

STELLFLOW_MIN_JAVA=${STELLFLOW_MIN_JAVA:-25}

stellflow_java_feature() {
  # Prints the feature version (17, 25, ...) of the JDK at $1, or nothing if $1 is not a JDK.
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  if [ -f "$1/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release")
  else
    v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
  fi
  printf '%s' "$v"
}

stellflow_find_java() {
  for cand in "${STELLFLOW_JAVA_HOME-}" "${JAVA_HOME-}"; do
    [ -n "$cand" ] || continue
    v=$(stellflow_java_feature "$cand")
    if [ -n "$v" ] && [ "$v" -ge "$STELLFLOW_MIN_JAVA" ]; then printf '%s' "$cand"; return 0; fi
  done
  if command -v java >/dev/null 2>&1; then
    cand=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    v=$(stellflow_java_feature "$cand")
    if [ -n "$v" ] && [ "$v" -ge "$STELLFLOW_MIN_JAVA" ]; then printf '%s' "$cand"; return 0; fi
  fi
  best=""; bestv=0
  case $- in *f*) sf_noglob=1; set +f ;; *) sf_noglob=0 ;; esac
  for cand in /usr/lib/jvm/* /opt/java/* /opt/jdk* /opt/* /usr/local/jdk* "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/*; do
    [ -d "$cand" ] || continue
    v=$(stellflow_java_feature "$cand")
    if [ -n "$v" ] && [ "$v" -ge "$STELLFLOW_MIN_JAVA" ] && [ "$v" -gt "$bestv" ]; then best=$cand; bestv=$v; fi
  done
  [ "$sf_noglob" = 1 ] && set -f
  [ -n "$best" ] && printf '%s' "$best"
  return 0
}

STELLFLOW_JDK=$(stellflow_find_java)
if [ -z "$STELLFLOW_JDK" ]; then
  echo "Stellflow needs a JDK >= $STELLFLOW_MIN_JAVA. None found in \$STELLFLOW_JAVA_HOME, \$JAVA_HOME," >&2
  echo "on PATH or under /usr/lib/jvm. Install one (for example Temurin 25) or set STELLFLOW_JAVA_HOME." >&2
  exit 1
fi
JAVA_HOME=$STELLFLOW_JDK
export JAVA_HOME
