#!/usr/bin/env bash
# Starts the service (config and data under ./data unless --config or CORE_CONFIGFILE say otherwise).
# exec: the service replaces this shell, so SIGTERM/SIGINT and a supervisor reach it directly.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/ensure-deps.sh"
node_bin="$(bash "$here/scripts/node.sh")"
# ensure-deps built the sources to plain JavaScript (scripts/build.mjs): no compiler or stripper runs
# in the service. main.js sets its V8 flags itself (core/runtime/README.md).
exec "$node_bin" "$here/app/main.js" "$@"
