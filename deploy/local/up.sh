#!/usr/bin/env bash
# Start the local stack without Docker: a single-node KRaft Kafka broker (OpenJDK 17) and
# Apicurio Registry with its Confluent-compatible API (Java 21+), both on 127.0.0.1.
# Idempotent: if both are already up and healthy on the requested ports, says so and exits 0.
# Otherwise stops whatever this stack left running, formats a FRESH Kafka data dir (all topics
# are lost; the registry is in-memory anyway) and starts both.
#
# Env (all optional):
#   PASSK_STACK_DIR        binaries, data, logs, pid files   (default <repo>/.local-stack)
#   KAFKA_PORT             9092    KAFKA_CONTROLLER_PORT  9093
#   REGISTRY_PORT          8080    REGISTRY_MGMT_PORT     9000  (Quarkus management: /health/*)
#   KAFKA_JAVA             java (must be 17+)
#   REGISTRY_JAVA          a Java 21+ binary (default: first JDK >= 21 under /usr/lib/jvm, e.g. Temurin 25)
#   KAFKA_HEAP_OPTS        -Xms256m -Xmx512m         KAFKA_JVM_OPTS     (extra flags)
#   REGISTRY_HEAP_OPTS     -Xms64m -Xmx384m          REGISTRY_JVM_OPTS  (extra flags, e.g. -Dapicurio.ccompat.max-subjects=5000)
#   STACK_START_TIMEOUT    seconds to wait for both (default 300; up to ~111 s seen on this 2-core box under heavy load)
#   STACK_CDS              0 (default) or 1: keep JVM class-data-sharing archives in $PASSK_STACK_DIR/cds,
#                          written when a JVM exits after SIGTERM (down.sh) and used by the next start
#                          (~30% faster start-up on 2 cores; but the dump makes each stop slower, and
#                          a JVM that is SIGKILLed writes none). Worth it only for repeated local runs.
# Prints at the end (eval-able):
#   KAFKA_BROKERS=127.0.0.1:9092
#   SCHEMA_REGISTRY_URL=http://127.0.0.1:8080/apis/ccompat/v7
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export PASSK_STACK_DIR=${PASSK_STACK_DIR:-$REPO/.local-stack}
STACK=$PASSK_STACK_DIR

KAFKA_PORT=${KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
REGISTRY_PORT=${REGISTRY_PORT:-8080}
REGISTRY_MGMT_PORT=${REGISTRY_MGMT_PORT:-9000}
KAFKA_JAVA=${KAFKA_JAVA:-java}
TIMEOUT=${STACK_START_TIMEOUT:-300}

KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT"
SCHEMA_REGISTRY_URL="http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7"
export KAFKA_BROKERS SCHEMA_REGISTRY_URL

log() { echo "up: $*" >&2; }
die() { log "$*"; exit 1; }
now_ms() { date +%s%3N; }

print_env() {
  echo "KAFKA_BROKERS=$KAFKA_BROKERS"
  echo "SCHEMA_REGISTRY_URL=$SCHEMA_REGISTRY_URL"
}

# pid from a pid file, only if that process is alive and is really ours (guards against pid reuse)
our_pid() {
  local f="$STACK/$1.pid" p
  [[ -f "$f" ]] || return 1
  p=$(cat "$f"); [[ -n "$p" ]] || return 1
  kill -0 "$p" 2>/dev/null || return 1
  { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null | grep -qF "$STACK" || return 1
  echo "$p"
}

alive() {  # pid exists and is not a zombie
  kill -0 "$1" 2>/dev/null || return 1
  local st; st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $st != Z ]]
}

java_major() { "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

registry_ready() { curl -fsS --max-time 3 "$SCHEMA_REGISTRY_URL/subjects" >/dev/null 2>&1; }
kafka_started_line() { grep -q "Kafka Server started" "$STACK/logs/kafka.log" 2>/dev/null; }
kafka_ready() { node "$HERE/kafka-ready.cjs" "$KAFKA_BROKERS" >"$STACK/logs/kafka-ready.log" 2>&1; }

command -v curl >/dev/null || die "curl is required"
command -v node >/dev/null || die "node is required (for the Kafka readiness probe)"

# ---- already up? -------------------------------------------------------------------------
if kp=$(our_pid kafka) && rp=$(our_pid registry); then
  if registry_ready && kafka_ready; then
    log "already up and healthy (kafka pid $kp, registry pid $rp)"
    print_env
    exit 0
  fi
  log "running but not healthy on the requested ports; restarting"
fi
"$HERE/down.sh" >/dev/null 2>&1 || true

# ---- binaries ----------------------------------------------------------------------------
if [[ ! -f "$STACK/kafka/.fetched" || ! -f "$STACK/apicurio/.fetched" ]]; then
  log "fetching binaries (first run)"
fi
"$HERE/fetch.sh" >&2

# ---- Java --------------------------------------------------------------------------------
command -v "$KAFKA_JAVA" >/dev/null || die "KAFKA_JAVA=$KAFKA_JAVA not found"
km=$(java_major "$KAFKA_JAVA"); [[ ${km:-0} -ge 17 ]] || die "Kafka 4.x needs Java 17+, $KAFKA_JAVA is ${km:-?}"
if [[ -z "${REGISTRY_JAVA:-}" ]]; then
  for cand in /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ${JAVA_HOME:+$JAVA_HOME/bin/java} /usr/lib/jvm/*/bin/java; do
    [[ -x "$cand" ]] || continue
    m=$(java_major "$cand"); if [[ ${m:-0} -ge 21 ]]; then REGISTRY_JAVA=$cand; break; fi
  done
fi
[[ -n "${REGISTRY_JAVA:-}" ]] || die "Apicurio 3.2+ needs Java 21+; none found under /usr/lib/jvm (set REGISTRY_JAVA)"
rm_=$(java_major "$REGISTRY_JAVA"); [[ ${rm_:-0} -ge 21 ]] || die "REGISTRY_JAVA=$REGISTRY_JAVA is Java ${rm_:-?}, need 21+"

# ---- ports -------------------------------------------------------------------------------
for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" "$REGISTRY_PORT" "$REGISTRY_MGMT_PORT"; do
  port_busy "$p" && die "port 127.0.0.1:$p is already in use by another process (see: ss -ltnp | grep :$p)"
done

mkdir -p "$STACK/logs"
: >"$STACK/logs/kafka-ready.log"

# ---- class-data-sharing archives (start-up time is CPU-bound on 2 cores) ------------------
KAFKA_CDS=(); REGISTRY_CDS=()
if [[ ${STACK_CDS:-0} == 1 ]]; then
  mkdir -p "$STACK/cds"
  kver=$("$KAFKA_JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.vm.version = //p')
  kjsa="$STACK/cds/kafka-$(sed 's/^kafka=//; s/[^A-Za-z0-9.=_-]/_/g' "$STACK/kafka/.fetched")-java-$kver.jsa"
  if (( km >= 19 )); then KAFKA_CDS=(-XX:+AutoCreateSharedArchive "-XX:SharedArchiveFile=$kjsa")
  elif [[ -s $kjsa ]]; then KAFKA_CDS=("-XX:SharedArchiveFile=$kjsa")
  else KAFKA_CDS=("-XX:ArchiveClassesAtExit=$kjsa"); fi
  KAFKA_CDS+=(-Xlog:cds=off -Xlog:cds+dynamic=off)  # JDK 17 prints a warning per skipped class
  # Java 19+: the JVM checks the archive and re-creates it when stale
  REGISTRY_CDS=(-XX:+AutoCreateSharedArchive "-XX:SharedArchiveFile=$STACK/cds/registry-$(sed 's/^apicurio=//' "$STACK/apicurio/.fetched").jsa")
fi
t0=$(now_ms)

# ---- Apicurio Registry (slowest: start it first) -----------------------------------------
# shellcheck disable=SC2086
nohup "$REGISTRY_JAVA" ${REGISTRY_HEAP_OPTS:--Xms64m -Xmx384m} -XX:+ExitOnOutOfMemoryError ${REGISTRY_CDS[@]+"${REGISTRY_CDS[@]}"} \
  -Djava.util.logging.manager=org.jboss.logmanager.LogManager \
  -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$REGISTRY_PORT" \
  -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="$REGISTRY_MGMT_PORT" \
  -Dquarkus.http.access-log.enabled=false \
  ${REGISTRY_JVM_OPTS:-} \
  -jar "$STACK/apicurio/quarkus-run.jar" >"$STACK/logs/registry.log" 2>&1 </dev/null &
REGISTRY_PID=$!
echo "$REGISTRY_PID" >"$STACK/registry.pid"

# ---- Kafka: fresh KRaft data dir, format, start ------------------------------------------
DATA="$STACK/kafka-data"
rm -rf "$DATA"; mkdir -p "$DATA"
sed -e "s#@DATA@#$DATA#" -e "s#@KAFKA_PORT@#$KAFKA_PORT#g" -e "s#@CONTROLLER_PORT@#$KAFKA_CONTROLLER_PORT#g" \
  "$HERE/server.properties" >"$STACK/server.properties"
# cluster id: 16 random bytes, base64url without padding (what StorageTool random-uuid prints). It is passed as
# --cluster-id=ID: an id that starts with "-" (1 in 32) would read as a flag after "-t" (a CI run failed on one).
CLUSTER_ID=${KAFKA_CLUSTER_ID:-$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')}
LOG4J="-Dlog4j2.configurationFile=$HERE/log4j2.properties"
if ! "$KAFKA_JAVA" "$LOG4J" -cp "$STACK/kafka/libs/*" kafka.tools.StorageTool format \
      --cluster-id="$CLUSTER_ID" -c "$STACK/server.properties" >"$STACK/logs/kafka-format.log" 2>&1; then
  cat "$STACK/logs/kafka-format.log" >&2
  "$HERE/down.sh" >/dev/null 2>&1 || true
  die "kafka storage format failed"
fi
# shellcheck disable=SC2086
nohup "$KAFKA_JAVA" ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
  -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError \
  ${KAFKA_CDS[@]+"${KAFKA_CDS[@]}"} \
  -Djava.awt.headless=true "$LOG4J" ${KAFKA_JVM_OPTS:-} \
  -cp "$STACK/kafka/libs/*" kafka.Kafka "$STACK/server.properties" >"$STACK/logs/kafka.log" 2>&1 </dev/null &
KAFKA_PID=$!
echo "$KAFKA_PID" >"$STACK/kafka.pid"

# ---- wait for both; fail fast if a JVM dies -----------------------------------------------
# (liveness by alive() on the pids just started: right after the fork, /proc/PID/cmdline is
# still the forked up.sh, so the cmdline check of our_pid() would give false "died" reports)
fail() {  # name reason
  log "$1: $2"
  log "---- last lines of $STACK/logs/$1.log ----"
  tail -n 40 "$STACK/logs/$1.log" >&2 || true
  [[ $1 == kafka && -s "$STACK/logs/kafka-ready.log" ]] && { log "---- last readiness probe ----"; cat "$STACK/logs/kafka-ready.log" >&2; }
  "$HERE/down.sh" >/dev/null 2>&1 || true
  exit 1
}
kafka_up=""; kafka_line=""; reg_up=""
deadline=$(( $(date +%s) + TIMEOUT ))
while [[ -z $kafka_up || -z $reg_up ]]; do
  if [[ -z $kafka_up ]]; then
    alive "$KAFKA_PID" || fail kafka "JVM exited during start-up"
    if [[ -z $kafka_line ]] && kafka_started_line; then kafka_line=$(( $(now_ms) - t0 )); fi
    if [[ -n $kafka_line ]] && kafka_ready; then kafka_up=$(( $(now_ms) - t0 )); log "kafka ready after ${kafka_up} ms ('started' line at ${kafka_line} ms): $(cat "$STACK/logs/kafka-ready.log")"; fi
  fi
  if [[ -z $reg_up ]]; then
    alive "$REGISTRY_PID" || fail registry "JVM exited during start-up"
    if registry_ready; then reg_up=$(( $(now_ms) - t0 )); log "registry ready after ${reg_up} ms"; fi
  fi
  if (( $(date +%s) > deadline )); then
    [[ -z $kafka_up ]] && fail kafka "not ready after ${TIMEOUT}s"
    fail registry "not ready after ${TIMEOUT}s"
  fi
  [[ -n $kafka_up && -n $reg_up ]] || sleep 0.5
done

cat >"$STACK/stack.env" <<ENV
KAFKA_BROKERS=$KAFKA_BROKERS
SCHEMA_REGISTRY_URL=$SCHEMA_REGISTRY_URL
ENV
log "stack up in $(( $(now_ms) - t0 )) ms (kafka pid $(cat "$STACK/kafka.pid"), registry pid $(cat "$STACK/registry.pid")); logs in $STACK/logs"
print_env
