#!/usr/bin/env bash
# Prints "Stellflow <version>" (the Maven project version in <install>/pom.xml), as the Java tools'
# --version does; used by the launchers' --version so that answering it starts no JVM and builds nothing.
# Usage: bin/_version.sh
home=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=$(sed -n 's:^  <version>\(.*\)</version>.*:\1:p' "$home/pom.xml" | head -n 1)
echo "Stellflow ${version:-unknown}"
