#!/usr/bin/env bash
# Programs only the tests need (not the service), from Debian: `pebble` (ACME test server) for the
# tls.auto end-to-end test, `nats-server` (JetStream) for the cluster plugin's tests and `chromium`
# for the WebRTC tests. Installed
# when missing and we are root; otherwise the tests that need them say why they skip.
set -uo pipefail
cd "$(dirname "$0")/.."
ensure() { # ensure <command> <package> <what it is for>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing $2 for the tests ($3)" >&2
    { apt-get install -y --no-install-recommends "$2" || { apt-get update && apt-get install -y --no-install-recommends "$2"; }; } >/dev/null 2>&1 \
      || echo "$2 could not be installed: the $3 tests will skip" >&2
  else
    echo "$2 is missing and this is not root: the $3 tests will skip" >&2
  fi
}
ensure pebble pebble 'ACME'
ensure nats-server nats-server 'cluster'
# Debian's Chromium, driven by playwright-core (a devDependency that downloads no browser), for the
# WebRTC tests: WHEP playback and WHIP publishing in a real browser
ensure chromium chromium 'WebRTC browser'

# The S3-compatible server of the S3 filesystem tests (plugins/s3-fs/README.md says why this one),
# an npm package in a folder of its own (scripts/s3-test-server, its lock pins it): the service's
# install never carries it. Without it the S3 tests skip, unless S3_TEST_ENDPOINT names a store.
s3dir=scripts/s3-test-server
if [ ! -d "$s3dir/node_modules/@20minutes/s3rver" ] || [ "$s3dir/package-lock.json" -nt "$s3dir/node_modules/.package-lock.json" ]; then
  (cd "$s3dir" && PATH="$(dirname "$(bash ../node.sh)"):$PATH" npm ci --no-audit --no-fund >/dev/null 2>&1) \
    || echo "the S3 test server could not be installed: the S3 filesystem tests will skip" >&2
fi

# The test kit's vendor install (test/testkit/vendor-install.test.ts) runs `npm install
# --prefer-offline` outside the repository: the packages npm ci fetched are in the npm cache, but not
# the registry's package documents a fresh resolution reads. One install like the test's fills both,
# once per package-lock.json (a mark in the npm cache), so the test needs no network.
cd "$(dirname "$0")/.."
"$(bash scripts/node.sh)" scripts/testkit-vendor.ts --warm \
  || echo "the npm cache could not be filled for the test kit's vendor install: its test needs the network" >&2
exit 0
