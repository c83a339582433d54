#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what it needs, type-checks, lints, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/ensure-test-deps.sh
node_bin="$(bash scripts/node.sh)"
# Every `node` below (tsc, tap and the test processes tap spawns with its own execPath) is Node 24.
export PATH="$(dirname "$node_bin"):$PATH"
# npm passes a machine npmrc's `nodedir` on as npm_config_nodedir, which newer npm warns about on every
# npx; addons get the runtime's own headers from scripts/build-addon.sh instead.
unset npm_config_nodedir
npx tsc --noEmit
node scripts/lint-imports.mjs
# tap builds its plugin set (package.json "tap".plugin: no TypeScript loader, node strips types) at
# its first run after an install, but that run itself still loads the default set: every test would
# run under @tapjs/typescript's loader, slower and with its coverage lost. Build it first.
npx tap build >/dev/null
started_ms="$(node -e 'console.log(Date.now())')"
# The whole suite measures coverage and must keep the floors in package.json "tap" (lines,
# statements, branches, functions: the suite's figures when they were set); a chosen subset runs
# without coverage, as `npx tap FILE` does.
floors=()
[ $# -eq 0 ] && floors=(--no-disable-coverage --no-allow-incomplete-coverage)
# CI shows the end of the log: on a failure, the failed assertions are printed again there
npx tap "${floors[@]}" "$@" || { status=$?; node scripts/tap-failures.mjs "$started_ms"; exit "$status"; }
# the whole suite also proves the slim install (a subset, in a temp copy); a chosen subset does not
if [ $# -eq 0 ] && [ -z "${SKIP_SLIM:-}" ]; then bash scripts/test-slim.sh; fi
