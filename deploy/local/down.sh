#!/usr/bin/env bash
# Stop the local stack started by up.sh: SIGTERM (Kafka does a controlled shutdown), then
# SIGKILL after DOWN_TIMEOUT seconds (default 20), and remove the pid files.
# Only processes whose command line names $PASSK_STACK_DIR are signalled (no pid-reuse accidents).
#   --clean   also delete the Kafka data dir and the logs (the fetched binaries stay)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STACK=${PASSK_STACK_DIR:-$REPO/.local-stack}
TIMEOUT=${DOWN_TIMEOUT:-20}

ours() {  # pid -> true if alive and started from this stack dir
  kill -0 "$1" 2>/dev/null && { tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null | grep -qF "$STACK"
}

declare -A pids=()
for s in registry kafka; do
  f="$STACK/$s.pid"
  [[ -f "$f" ]] || continue
  p=$(cat "$f")
  if [[ -n "$p" ]] && ours "$p"; then
    kill -TERM "$p" 2>/dev/null && pids[$s]=$p && echo "down: SIGTERM $s (pid $p)"
  else
    echo "down: $s not running"
    rm -f "$f"
  fi
done

end=$(( $(date +%s) + TIMEOUT ))
for s in "${!pids[@]}"; do
  p=${pids[$s]}
  while ours "$p" && (( $(date +%s) < end )); do sleep 0.2; done
  if ours "$p"; then
    echo "down: $s (pid $p) still alive after ${TIMEOUT}s: SIGKILL"
    kill -KILL "$p" 2>/dev/null
    for _ in $(seq 50); do ours "$p" || break; sleep 0.1; done
  fi
  rm -f "$STACK/$s.pid"
  echo "down: $s stopped"
done
rm -f "$STACK/stack.env"

if [[ "${1:-}" == "--clean" ]]; then
  rm -rf "$STACK/kafka-data" "$STACK/logs" "$STACK/server.properties"
  echo "down: removed kafka-data and logs"
fi
exit 0
