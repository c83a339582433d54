#!/usr/bin/env bash
# The runtime's malloc_trim module (core/runtime/trim): built from one C file with the C compiler
# (ensure-confine.sh installs one when root). Never fails: without the module the service runs the
# same and keeps what glibc's arenas hold after a load. Run by ensure-deps.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
src=core/runtime/trim/malloc-trim.c
out=core/runtime/trim/build/malloc-trim.node
[ -f "$out" ] && [ "$out" -nt "$src" ] && exit 0
cc="$(command -v cc || command -v gcc || true)"
if [ -z "$cc" ]; then
  echo "memory freed after a load stays with the process: install a C compiler (sudo apt-get install gcc) and run this again" >&2
  exit 0
fi
mkdir -p "$(dirname "$out")"
"$cc" -O2 -Wall -Wextra -shared -fPIC -o "$out.tmp" "$src" >&2 && mv "$out.tmp" "$out" \
  || echo "the malloc_trim module did not build: the service runs without it" >&2
exit 0
