#!/usr/bin/env bash
# SRT (plugin srt): libsrt's -dev package, the plugin's host program (the SRT listener the service
# starts) and its native addon (an SRT caller for the tests and benchmarks). Optional: without them
# the service starts and only `srt.enable: true` fails (saying how to fix it), so this never fails.
# Run by ensure-deps.sh; safe to run alone.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! pkg-config --exists srt 2>/dev/null; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "libsrt is missing: installing the Debian package libsrt-openssl-dev (for the SRT plugin)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsrt-openssl-dev pkg-config; } >&2 \
      || echo "could not install libsrt-openssl-dev: SRT stays unavailable" >&2
  else
    echo "SRT is unavailable until the Debian package libsrt-openssl-dev is installed (sudo apt-get install libsrt-openssl-dev)" >&2
  fi
fi
addon=plugins/srt/addon
built="$addon/build/Release/srt_addon.node"
host="$addon/build/Release/srt-host"
pkg-config --exists srt 2>/dev/null || exit 0
# the host program and the addon are C++ (g++; node-gyp needs make too)
if ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "g++ or make is missing: installing the Debian packages g++ and make (for the SRT host)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ make; } >&2 || echo "could not install g++: SRT stays unavailable" >&2
  else
    echo "SRT is unavailable until the Debian packages g++ and make are installed (sudo apt-get install g++ make)" >&2
  fi
fi
# rebuild only when an output is missing or older than one of the sources (a fast skip otherwise)
stale() { [ ! -f "$1" ] || [ -n "$(find "$addon" -maxdepth 1 -type f -newer "$1" | head -1)" ]; }
if ! stale "$built" && ! stale "$host"; then exit 0; fi
# node-gyp's rebuild empties build/: the addon first, then the host
echo "building the SRT addon ($addon)" >&2
if ! out="$(bash scripts/build-addon.sh "$addon" 2>&1)"; then
  echo "the SRT addon did not build; the SRT tests stay unavailable until this is fixed:" >&2
  # the compiler's or node-gyp's first errors, not node-gyp's environment dump
  printf '%s\n' "$out" | grep -iE 'error|not found|no such' | grep -vE 'gyp ERR! (cwd|node -v|node-gyp -v|System|command|not ok)' | head -8 >&2
fi
echo "building the SRT host ($host)" >&2
mkdir -p "$(dirname "$host")"
# shellcheck disable=SC2046 # pkg-config's flags are words
if ! out="$(g++ -O2 -std=c++17 -fno-exceptions -Wall -o "$host" "$addon/host.cc" $(pkg-config --cflags --libs srt) -pthread 2>&1)"; then
  echo "the SRT host did not build; SRT stays unavailable until this is fixed:" >&2
  printf '%s\n' "$out" | grep -iE 'error|not found' | head -8 >&2
fi
exit 0
