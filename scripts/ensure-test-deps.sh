#!/usr/bin/env bash
# Programs only the tests need (not the service): Debian's `pebble` ACME test server for the
# tls.auto end-to-end test. Installed when missing and we are root; otherwise the test says why it skips.
set -uo pipefail
if ! command -v pebble >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing pebble (ACME test server) for the tests" >&2
    { apt-get install -y --no-install-recommends pebble || { apt-get update && apt-get install -y --no-install-recommends pebble; }; } >/dev/null 2>&1 \
      || echo "pebble could not be installed: the ACME test will skip" >&2
  else
    echo "pebble is missing and this is not root: the ACME test will skip" >&2
  fi
fi
exit 0
