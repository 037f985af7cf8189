#!/usr/bin/env bash
# A three-node KRaft Kafka cluster and an Apicurio registry, each in its own network namespace on a
# private bridge (root only; test/faults/cluster.ts, docs/reliability.md), for trying faults by hand.
# Runs in the foreground: prints KAFKA_BROKERS / SCHEMA_REGISTRY_URL and the namespaces, and tears
# everything down (processes, namespaces, bridge, temp dir) on Ctrl-C or SIGTERM.
# Needs the binaries deploy/local/fetch.sh puts in .local-stack/. Leaves the 127.0.0.1 stack alone.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
[[ $(id -u) == 0 ]] || { echo "cluster: needs root (ip netns)" >&2; exit 1; }
cd "$REPO"
exec node --import tsx test/faults/cluster.ts
