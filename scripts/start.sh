#!/usr/bin/env bash
# Starts the service (config and data under ./data unless --config or CORE_CONFIGFILE say otherwise).
# exec: the service replaces this shell, so SIGTERM/SIGINT and a supervisor reach it directly.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/ensure-deps.sh"
node_bin="$(bash "$here/scripts/node.sh")"
# Node 24 strips the (erasable-only) TypeScript types itself: no compiler or loader process.
exec "$node_bin" "$here/core/main.ts" "$@"
