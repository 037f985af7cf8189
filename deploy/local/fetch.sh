#!/usr/bin/env bash
# Fetch the local stack's binaries from Maven Central (through mvn) into $PASSK_STACK_DIR
# (default: <repo>/.local-stack). Idempotent: each part is skipped when it is already there
# for the versions pinned in pom.xml.
#   kafka/libs/   Kafka broker runtime classpath (+ SLF4J 1.7 -> Log4j 2 binding)
#   apicurio/     Apicurio Registry fast-jar (quarkus-run.jar), unpacked from the -all.tar.gz
# Env: PASSK_STACK_DIR, MVN (default mvn), MVN_OPTS_EXTRA (extra mvn args, e.g. -o).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STACK=${PASSK_STACK_DIR:-$REPO/.local-stack}
POM="$HERE/pom.xml"
MVN=${MVN:-mvn}

pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$POM" | head -n1; }
KAFKA_VERSION=$(pom_prop kafka.version)
LOG4J2_VERSION=$(pom_prop log4j2.version)
APICURIO_VERSION=$(pom_prop apicurio.version)

command -v "$MVN" >/dev/null || { echo "fetch.sh: '$MVN' not found (apt-get install maven)" >&2; exit 1; }
mkdir -p "$STACK"

# Maven 3.8.x prints stray ESC[0m resets even with -B -q: keep its output in a log, show it on failure.
mvn_run() {
  local log="$STACK/fetch-mvn.log"
  # shellcheck disable=SC2086
  if ! "$MVN" -B -q --strict-checksums ${MVN_OPTS_EXTRA:-} -f "$POM" "$@" >"$log" 2>&1; then
    sed $'s/\x1b\[[0-9;]*m//g' "$log" >&2
    echo "fetch.sh: mvn $* failed (log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
}

# --- Kafka broker classpath --------------------------------------------------------------
KAFKA_STAMP="kafka=$KAFKA_VERSION log4j2=$LOG4J2_VERSION"
if [[ -f "$STACK/kafka/.fetched" && "$(cat "$STACK/kafka/.fetched")" == "$KAFKA_STAMP" ]]; then
  echo "fetch: kafka $KAFKA_VERSION already in $STACK/kafka/libs"
else
  echo "fetch: kafka $KAFKA_VERSION classpath -> $STACK/kafka/libs"
  tmp="$STACK/.tmp-kafka"; rm -rf "$tmp"
  mvn_run dependency:copy-dependencies@kafka-libs -Dstack.dir="$tmp"
  ls "$tmp/kafka/libs/kafka_2.13-$KAFKA_VERSION.jar" "$tmp"/kafka/libs/log4j-slf4j-impl-*.jar >/dev/null
  echo "$KAFKA_STAMP" > "$tmp/kafka/.fetched"
  rm -rf "$STACK/kafka"; mv "$tmp/kafka" "$STACK/kafka"; rm -rf "$tmp"
fi

# --- Apicurio Registry -------------------------------------------------------------------
APICURIO_STAMP="apicurio=$APICURIO_VERSION"
if [[ -f "$STACK/apicurio/.fetched" && "$(cat "$STACK/apicurio/.fetched")" == "$APICURIO_STAMP" \
      && -f "$STACK/apicurio/quarkus-run.jar" ]]; then
  echo "fetch: apicurio $APICURIO_VERSION already in $STACK/apicurio"
else
  echo "fetch: apicurio $APICURIO_VERSION (~160 MB) -> $STACK/apicurio"
  tmp="$STACK/.tmp-apicurio"; rm -rf "$tmp"
  mvn_run dependency:copy@apicurio -Dstack.dir="$tmp"
  mkdir -p "$tmp/apicurio"
  tar -xzf "$tmp/dl/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz" -C "$tmp/apicurio"
  # 3.3.x: fast-jar at the archive root; 3.1/3.2: under quarkus-app/
  if [[ ! -f "$tmp/apicurio/quarkus-run.jar" && -d "$tmp/apicurio/quarkus-app" ]]; then
    mv "$tmp/apicurio" "$tmp/apicurio-raw"; mv "$tmp/apicurio-raw/quarkus-app" "$tmp/apicurio"
  fi
  [[ -f "$tmp/apicurio/quarkus-run.jar" ]] || { echo "fetch: no quarkus-run.jar in the archive" >&2; exit 1; }
  echo "$APICURIO_STAMP" > "$tmp/apicurio/.fetched"
  rm -rf "$STACK/apicurio"; mv "$tmp/apicurio" "$STACK/apicurio"; rm -rf "$tmp"
fi
