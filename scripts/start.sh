#!/usr/bin/env bash
# Starts the service (config and data under ./data unless --config or CORE_CONFIGFILE say otherwise).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/ensure-deps.sh"
exec node --import tsx "$here/core/main.ts" "$@"
