#!/usr/bin/env bash
# The slim variant (README "Slim install"): a temp copy of this checkout installed with SLIM=1, so
# without node-media-server and the SRT addon's build dependencies, then the tests a slim deployment
# must pass. Kept small: npm ci comes from the cache the full install just filled, and only a few
# test files run. `SLIM_TESTS` overrides the list.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d "${TMPDIR:-/tmp}/core-slim-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
tar --exclude=./node_modules --exclude=./.git --exclude=./.tap --exclude=./data --exclude='./examples/*/node_modules' \
  --exclude=./examples/node_modules --exclude=./plugins/srt/addon/build --exclude=./core/process/confine/build -cf - . | tar -x -C "$tmp"
cd "$tmp"
rm -rf node_modules
SLIM=1 bash scripts/ensure-deps.sh
node_bin="$(bash scripts/node.sh)"
export PATH="$(dirname "$node_bin"):$PATH"
unset npm_config_nodedir
tests=${SLIM_TESTS:-"test/deploy/slim.test.ts test/core/config/samples.test.ts examples/http-ts-ingest/test/ingest.test.ts"}
# the fresh install's first tap run would load the default plugins (scripts/test.sh says why)
npx tap build >/dev/null
# shellcheck disable=SC2086
SLIM=1 npx tap --jobs=2 $tests
