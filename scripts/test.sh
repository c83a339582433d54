#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what it needs, type-checks, lints, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npx tsc --noEmit
node scripts/lint-imports.mjs
npx tap "$@"
