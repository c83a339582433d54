#!/usr/bin/env bash
# Programs only the tests need (not the service), from Debian: `pebble` (ACME test server) for the
# tls.auto end-to-end test and `nats-server` (JetStream) for the cluster plugin's tests. Installed
# when missing and we are root; otherwise the tests that need them say why they skip.
set -uo pipefail
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
exit 0
