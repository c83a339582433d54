#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what it needs, type-checks, lints, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
node_bin="$(bash scripts/node.sh)"
# Every `node` below (tsc, tap and the test processes tap spawns with its own execPath) is Node 24.
export PATH="$(dirname "$node_bin"):$PATH"
npx tsc --noEmit
node scripts/lint-imports.mjs
npx tap "$@"
