#!/usr/bin/env bash
# Starts the service (config and data under ./data unless --config or CORE_CONFIGFILE say otherwise).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/ensure-deps.sh"
tsx_loader="$(cd "$here" && node --input-type=module -e "console.log(import.meta.resolve('tsx'))")"
exec node --import "$tsx_loader" "$here/core/main.ts" "$@"
